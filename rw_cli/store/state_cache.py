"""StateCache: an executor's in-memory cache of its state table's latest values, by key.

Lookups and updates are whole arrays at a time (numpy and Arrow kernels, no loop over keys in
Python), because an aggregation reads and writes thousands of groups per epoch. The cache is a
short list of segments, newest last, each sorted by the 64-bit hash of its keys: a lookup binary
searches each segment (newest first) and compares the candidate keys; an update adds a segment,
and segments of similar size are merged (keeping the newest value of a key), so a key is copied
O(log n) times and there are O(log n) segments. A value may be null: the key is known absent.
Past the byte budget, entries of the oldest segment are dropped (a random subset of the oldest
writes: sorted by hash, the segment's order says nothing about the keys).
"""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rw_cli.common.hash_index import HashIndex
from rw_cli.common.vnode import hash_array
from rw_cli.store.sst import bloom_positions

FANOUT = 4
ENTRY_OVERHEAD = 24  # hash, offsets
FILTER_BITS_PER_KEY = 16  # with k = 8: about 0.05% false positives a layer
FILTER_K = 8


class KeyFilter:
    """A Bloom filter of every key the cache was given, grown by adding layers (a scalable
    Bloom filter): about two bytes per key, kept when entries are evicted. For a table only this
    handle writes that was empty when its cache began, a key the filter has not seen is
    absent from the store too, so a new group costs no store read."""

    def __init__(self) -> None:
        self.layers: list[list] = []  # [bits (uint8), capacity, count]

    def add(self, hashes: np.ndarray) -> None:
        if not len(hashes):
            return
        if not self.layers or self.layers[-1][2] + len(hashes) > self.layers[-1][1]:
            cap = max(1 << 16, 2 * len(hashes), 2 * self.layers[-1][1] if self.layers else 0)
            nbits = 1 << int(np.ceil(np.log2(cap * FILTER_BITS_PER_KEY)))
            self.layers.append([np.zeros(nbits // 8, dtype=np.uint8), cap, 0])
        layer = self.layers[-1]
        pos = bloom_positions(hashes, len(layer[0]) * 8, FILTER_K).astype(np.int64)
        np.bitwise_or.at(layer[0], pos >> 3, (1 << (pos & 7)).astype(np.uint8))
        layer[2] += len(hashes)

    def may_contain(self, hashes: np.ndarray) -> np.ndarray:
        out = np.zeros(len(hashes), dtype=bool)
        for bits, _, _ in self.layers:
            pos = bloom_positions(hashes, len(bits) * 8, FILTER_K).astype(np.int64)
            out |= ((bits[pos >> 3] >> (pos & 7).astype(np.uint8)) & 1).astype(bool).all(axis=1)
        return out

    @property
    def nbytes(self) -> int:
        return sum(len(layer[0]) for layer in self.layers)


class _Segment:
    __slots__ = ("hashes", "keys", "values", "_index")

    def __init__(self, hashes: np.ndarray, keys: pa.Array, values: pa.Array):
        self.hashes, self.keys, self.values = hashes, keys, values
        self._index: HashIndex | None = None  # built at the first lookup

    @staticmethod
    def build(keys: pa.Array, values: pa.Array, hashes: np.ndarray | None = None) -> "_Segment":
        """From unique keys (in any order), their values and (if known) their hashes."""
        h = hash_array(keys) if hashes is None else hashes
        order = np.argsort(h, kind="stable")
        idx = pa.array(order, pa.int64())
        return _Segment(h[order], keys.take(idx), values.take(idx))

    def __len__(self) -> int:
        return len(self.hashes)

    @property
    def nbytes(self) -> int:
        return self.keys.nbytes + self.values.nbytes + len(self.hashes) * ENTRY_OVERHEAD

    def find(self, qh: np.ndarray, qkeys: pa.Array) -> np.ndarray:
        """The position of each query key here, -1 where absent (equal hashes are rare, so
        each further round looks at fewer queries)."""
        if self._index is None:
            self._index = HashIndex(self.hashes)
        cand, first, end = self._index.lookup(qh)
        lo = np.zeros(len(qh), dtype=np.int64)
        span = np.zeros(len(qh), dtype=np.int64)
        lo[cand], span[cand] = first, end - first
        out = np.full(len(qh), -1, dtype=np.int64)
        k = 0
        while len(cand):
            pos = lo[cand] + k
            eq = pc.equal(self.keys.take(pa.array(pos, pa.int64())),
                          qkeys.take(pa.array(cand, pa.int64()))).to_numpy(zero_copy_only=False)
            out[cand[eq]] = pos[eq]
            k += 1
            cand = cand[~eq & (span[cand] > k)]
        return out


class StateCache:
    def __init__(self, max_bytes: int):
        self.max_bytes = max_bytes
        self.segments: list[_Segment] = []
        self.evicted = False  # some entry was dropped: an unknown key may exist in the store
        self.filter = KeyFilter()  # every key ever put

    @property
    def nbytes(self) -> int:
        return sum(s.nbytes for s in self.segments)

    def get(self, keys: pa.Array, qh: np.ndarray | None = None) -> tuple[pa.Array, np.ndarray]:
        """(the cached value of each key, null where absent or unknown; whether it is known).
        `qh`: the keys' hashes (`hash_array`), when the caller has them."""
        n = len(keys)
        known = np.zeros(n, dtype=bool)
        if n == 0 or not self.segments:
            return pa.nulls(n, pa.binary()), known
        if qh is None:
            qh = hash_array(keys)
        todo = np.arange(n)
        positions, values = [], []
        for seg in reversed(self.segments):
            if not len(todo):
                break
            sub = keys if len(todo) == n else keys.take(pa.array(todo, pa.int64()))
            idx = seg.find(qh[todo], sub)
            hit = idx >= 0
            if hit.any():
                positions.append(todo[hit])
                values.append(seg.values.take(pa.array(idx[hit], pa.int64())))
                todo = todo[~hit]
        if not positions:
            return pa.nulls(n, pa.binary()), known
        pos = np.concatenate(positions)
        known[pos] = True
        where = np.full(n, -1, dtype=np.int64)
        where[pos] = np.arange(len(pos))
        vals = pa.concat_arrays(values) if len(values) > 1 else values[0]
        return vals.take(pa.array(where, pa.int64(), mask=where < 0)), known

    def put(self, keys: pa.Array, values: pa.Array, hashes: np.ndarray | None = None) -> None:
        """The latest values of unique `keys` (null: known absent); `hashes`: theirs
        (`hash_array`), when the caller has them."""
        if len(keys) == 0:
            return
        seg = _Segment.build(keys, values, hashes)
        self.filter.add(seg.hashes)
        self.segments.append(seg)
        while len(self.segments) > 1 and len(self.segments[-1]) * FANOUT >= len(self.segments[-2]):
            newer = self.segments.pop()
            self.segments[-1] = _merge(self.segments[-1], newer)
        self._evict()

    def _evict(self) -> None:
        size = self.nbytes
        if size <= self.max_bytes:
            return
        self.evicted = True
        target = self.max_bytes * 3 // 4
        while self.segments and size > target:
            seg = self.segments[0]
            if size - seg.nbytes >= target or len(seg) < 2:
                size -= seg.nbytes
                self.segments.pop(0)
                continue
            # drop a share of the oldest segment's entries, enough to get under the target
            keep = int(len(seg) * (1 - (size - target) / seg.nbytes))
            keep = max(0, min(len(seg) - 1, keep))
            idx = pa.array(np.arange(len(seg) - keep, len(seg)), pa.int64())
            trimmed = _Segment(seg.hashes[len(seg) - keep:].copy(), seg.keys.take(idx), seg.values.take(idx))
            size -= seg.nbytes - trimmed.nbytes
            self.segments[0] = trimmed


def _merge(older: _Segment, newer: _Segment) -> _Segment:
    """One segment holding the newest value of every key of both: a stable merge by hash
    (the newer entry first), then an entry whose neighbour before it has the same hash and
    key is dropped. (Two different keys with one hash may leave an old entry of one of them
    behind the other; a lookup finds the newer one first, so it is never read.)"""
    keys = pa.concat_arrays([newer.keys, older.keys])
    values = pa.concat_arrays([newer.values, older.values])
    hashes = np.concatenate([newer.hashes, older.hashes])
    order = np.argsort(hashes, kind="stable")  # two sorted runs: a merge
    h = hashes[order]
    dup = np.flatnonzero(h[1:] == h[:-1]) + 1
    keep = np.ones(len(h), dtype=bool)
    if len(dup):
        same = pc.equal(keys.take(pa.array(order[dup], pa.int64())),
                        keys.take(pa.array(order[dup - 1], pa.int64()))).to_numpy(zero_copy_only=False)
        keep[dup[same]] = False
    idx = order[keep]
    ia = pa.array(idx, pa.int64())
    return _Segment(hashes[idx], keys.take(ia), values.take(ia))
