"""ExchangeExecutor: a fragment run as N actors behind a hash exchange.

Each actor is its own executor instance with its own state (disjoint vnodes of the same
state tables). A chunk is split by the vnode of its distribution key — vnode =
hash(key) mod 256, actor = the owner of that vnode — and each part goes to its actor; the
actors' outputs are merged. Only the vnode -> actor mapping depends on N: storage keys do not
(consistent hashing, as in the seeds), so results are the same for any N.
"""
from __future__ import annotations

import numpy as np

from rw_cli.common.vnode import VNODE_COUNT, compute_vnodes
from rw_cli.engine.chunk import StreamChunk
from rw_cli.engine.executor import Executor
from rw_cli.common.epoch import EpochPair


def vnode_owners(parallelism: int) -> np.ndarray:
    """Actor index of every vnode: contiguous ranges of vnodes per actor."""
    return (np.arange(VNODE_COUNT) * parallelism // VNODE_COUNT).astype(np.int64)


def owned_vnodes(actor: int, parallelism: int) -> np.ndarray:
    """A boolean mask over vnodes: those this actor owns."""
    return vnode_owners(parallelism) == actor


class ExchangeExecutor(Executor):
    def __init__(self, actors: list[Executor], dist_keys: list[list[int]]):
        """`dist_keys[side]`: the input columns whose vnode routes a row of that input."""
        first = actors[0]
        super().__init__(first.types, first.stream_key)
        self.identity = first.identity
        self.actors = actors
        self.dist_keys = dist_keys
        self.owners = vnode_owners(len(actors))

    def on_chunk(self, chunk: StreamChunk, side: int = 0) -> list[StreamChunk]:
        if len(chunk) == 0:
            return []
        vnodes = compute_vnodes([chunk.data.column(k) for k in self.dist_keys[side]], num_rows=len(chunk))
        owner = self.owners[vnodes]
        out: list[StreamChunk] = []
        for i, actor in enumerate(self.actors):
            mask = owner == i
            if mask.any():
                out += actor.on_chunk(chunk.filter(mask) if not mask.all() else chunk, side)
        return out

    def on_barrier(self, epoch: EpochPair) -> list[StreamChunk]:
        """The actors' outputs, merged with every retraction before every insertion: a row
        that moved between actors (its partition key changed) must not be inserted by one
        and then deleted by the other under the same stream key."""
        out: list[StreamChunk] = []
        for actor in self.actors:
            out += actor.on_barrier(epoch)
        return retractions_first(out)


def retractions_first(out: list[StreamChunk]) -> list[StreamChunk]:
    """Actors' outputs merged with every retraction before every insertion."""
    if len(out) < 2:
        return out
    retract = [c.filter(~c.is_insert()).compact_ops() for c in out]
    insert = [c.filter(c.is_insert()).compact_ops() for c in out]
    return [c for c in retract + insert if len(c)]
