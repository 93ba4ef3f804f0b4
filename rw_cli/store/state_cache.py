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

from rw_cli.common.vnode import hash_array

FANOUT = 4
ENTRY_OVERHEAD = 24  # hash, offsets


class _Segment:
    __slots__ = ("hashes", "keys", "values")

    def __init__(self, hashes: np.ndarray, keys: pa.Array, values: pa.Array):
        self.hashes, self.keys, self.values = hashes, keys, values

    @staticmethod
    def build(keys: pa.Array, values: pa.Array) -> "_Segment":
        """From unique keys (in any order) and their values."""
        h = hash_array(keys)
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
        lo = np.searchsorted(self.hashes, qh, "left")
        span = np.searchsorted(self.hashes, qh, "right") - lo
        out = np.full(len(qh), -1, dtype=np.int64)
        cand = np.flatnonzero(span > 0)
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

    @property
    def nbytes(self) -> int:
        return sum(s.nbytes for s in self.segments)

    def get(self, keys: pa.Array) -> tuple[pa.Array, np.ndarray]:
        """(the cached value of each key, null where absent or unknown; whether it is known)."""
        n = len(keys)
        known = np.zeros(n, dtype=bool)
        if n == 0 or not self.segments:
            return pa.nulls(n, pa.binary()), known
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

    def put(self, keys: pa.Array, values: pa.Array) -> None:
        """The latest values of unique `keys` (null: known absent)."""
        if len(keys) == 0:
            return
        self.segments.append(_Segment.build(keys, values))
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
    """One segment holding the newest value of every key of both."""
    keys = pa.concat_arrays([newer.keys, older.keys])
    values = pa.concat_arrays([newer.values, older.values])
    hashes = np.concatenate([newer.hashes, older.hashes])
    # a key in both: keep the first (newer) occurrence
    first = pa.table({"k": keys, "p": pa.array(np.arange(len(keys)))}).group_by("k", use_threads=False) \
        .aggregate([("p", "min")]).column("p_min").to_numpy()
    first = first[np.argsort(hashes[first], kind="stable")]
    idx = pa.array(first, pa.int64())
    return _Segment(hashes[first], keys.take(idx), values.take(idx))
