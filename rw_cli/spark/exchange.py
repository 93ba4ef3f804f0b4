"""SparkExchange: a partitioned fragment whose actors run in Spark tasks.

In the driver it stands where the embedded runtime's ExchangeExecutor stands. Chunks of an
epoch are routed to actors by the vnode of their distribution key (the same mapping as the
embedded exchange, so state keys are identical on both runtimes) and buffered; at the
barrier the buffered input becomes one Spark DataFrame (built from Arrow), hash-partitioned
so that each actor's rows meet in one task, and `mapInArrow` runs the actors there
(`rw_cli.spark.worker`). The tasks' outputs come back as the fragment's output chunks and
their SSTs are handed to the driver's store, committed with the epoch's version.
"""
from __future__ import annotations

import json
import uuid

import numpy as np
import pyarrow as pa

from rw_cli.common.vnode import compute_vnodes
from rw_cli.engine.chunk import StreamChunk
from rw_cli.engine.exchange import retractions_first, vnode_owners
from rw_cli.engine.executor import Executor
from rw_cli.errors import EpochFailed  # noqa: F401 - re-exported for the runtime
from rw_cli.common.epoch import EpochPair
from rw_cli.spark import worker
from rw_cli.store.version import LogSegment, SstInfo

SST_IDS_PER_ACTOR = 8


class SparkExchange(Executor):
    def __init__(self, runtime, factory, parallelism: int, dist_keys: list[list[int]] | None, fresh: bool):
        # a throwaway actor on the driver's store gives the fragment's static info
        probe = factory(runtime.store, None, fresh)
        super().__init__(probe.types, probe.stream_key)
        self.identity = probe.identity
        # what a producing task may send instead of rows: the actors' deltas per group
        # (rw_cli.engine.agg_delta), the map-side combine before Spark's shuffle
        combiner = getattr(probe, "combiner", None)
        self.combiner = combiner(dist_keys[0] if dist_keys and len(dist_keys) == 1 else None) if combiner else None
        self.runtime = runtime
        self.factory = factory
        self.parallelism = parallelism
        self.dist_keys = dist_keys
        self.fresh = fresh
        self.fragment = f"{runtime.store_url}#{uuid.uuid4().hex}"
        self.owners = vnode_owners(parallelism)
        self.pending: list[tuple[int, int, StreamChunk]] = []  # (actor, side, chunk)
        self.last_committed: int | None = None  # the last epoch whose run has committed
        self._ran: int | None = None  # epoch of a run not yet known to be committed

    def on_chunk(self, chunk: StreamChunk, side: int = 0) -> list[StreamChunk]:
        if len(chunk) == 0:
            return []
        if self.dist_keys is None:
            self.pending.append((0, side, chunk))
            return []
        vnodes = compute_vnodes([chunk.data.column(k) for k in self.dist_keys[side]], num_rows=len(chunk))
        owner = self.owners[vnodes]
        for a in np.unique(owner).tolist():
            mask = owner == a
            self.pending.append((a, side, chunk if mask.all() else chunk.filter(mask)))
        return []

    def on_barrier(self, epoch: EpochPair) -> list[StreamChunk]:
        pending, self.pending = self.pending, []
        if not pending and not self.fresh and not self.factory.temporal:
            return []  # nothing can change: the actors keep their caches for the next run
        outs, ssts = self.runtime.run_fragment(self, pending, epoch)
        self.fresh = False
        self._ran = epoch.prev
        self.runtime.stage_ssts(epoch.prev, ssts)
        return retractions_first(outs)  # a row that moved between actors: see ExchangeExecutor

    def committed(self, epoch: int) -> None:
        """The driver committed `epoch`: the run of that epoch is the actors' valid state."""
        if self._ran is not None and self._ran <= epoch:
            self.last_committed, self._ran = self._ran, None

    def task(self, epoch: EpochPair, version: bytes, sst_ids: dict[int, list[int]]) -> worker.EpochTask:
        from rw_cli.engine import python_udf

        clock = self.factory.clock(epoch) if self.factory.clock is not None else None
        return worker.EpochTask(
            fragment=self.fragment, factory=self.factory, parallelism=self.parallelism,
            partitioned=self.dist_keys is not None, store_url=self.runtime.store_url,
            endpoint=self.runtime.endpoint, version=version, curr=epoch.curr, prev=epoch.prev,
            expect_last=self.last_committed, fresh=self.fresh, clock_value=clock, sst_ids=sst_ids,
            python_udfs=python_udf.definitions())


def input_rows(pending: list[tuple[int, int, StreamChunk]], parallelism: int, part_of) -> pa.Table:
    """The epoch's input as DataFrame rows: each chunk piece, then a barrier row per actor."""
    actors, seqs, sides, payloads = [], [], [], []
    for seq, (a, side, chunk) in enumerate(pending):
        actors.append(a)
        seqs.append(seq)
        sides.append(side)
        payloads.append(worker.encode_chunk(chunk))
    for a in range(parallelism):
        actors.append(a)
        seqs.append(len(pending) + a)
        sides.append(worker.BARRIER)
        payloads.append(b"")
    return pa.table([pa.array([part_of(a) for a in actors], pa.int32()), pa.array(actors, pa.int32()),
                     pa.array(seqs, pa.int32()), pa.array(sides, pa.int8()), pa.array(payloads, pa.binary())],
                    schema=worker.INPUT_SCHEMA)


def output_of(result: pa.Table, stats: dict | None = None) -> tuple[list[StreamChunk], list[SstInfo | LogSegment]]:
    """The tasks' output rows: chunks in actor order, every SST and log segment they
    uploaded (and their counts of actors built and reused, added to `stats`)."""
    result = result.sort_by([("actor", "ascending")]) if result.num_rows else result
    chunks, ssts = [], []
    kinds = result.column("kind").to_pylist()
    payloads = result.column("payload")
    for i, kind in enumerate(kinds):
        data = payloads[i].as_py()
        if kind == worker.OUT_CHUNK:
            chunks.append(worker.decode_chunk(data))
        elif kind == worker.OUT_STATS:
            for k, v in json.loads(data).items():
                if stats is not None:
                    stats[k] = stats.get(k, 0) + v
        else:
            ssts += [LogSegment.from_json(d) if "log" in d else SstInfo.from_json(d) for d in json.loads(data)]
    return chunks, ssts
