"""StateCache: an executor's in-memory cache of its state table's latest values, by key.

Lookups and updates are whole arrays at a time (numpy and Arrow kernels, no loop over keys in
Python), because an aggregation reads and writes thousands of groups per epoch. The cache is a
short list of segments, newest last, each sorted by the 64-bit hash of its keys: a lookup finds
a key's hash in each segment (newest first) and compares the candidate keys; an update adds a
segment. Segments are merged (keeping the newest value of a key) only when there are more than
MAX_SEGMENTS, the adjacent pair of the smallest size first; a merge moves the hashes and
positions, not the keys and values (see _Segment).
A value may be null: the key is known absent. Past the byte budget the oldest segments are
dropped whole — an aggregation's groups of the last few epochs stay, and nothing is copied; an
oldest segment holding most of the budget is trimmed instead (a random subset of its entries:
sorted by hash, the segment's order says nothing about the keys).
"""
from __future__ import annotations

import os
import warnings
import weakref

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rw_cli.common.chunked_take import part_starts, take_parts
from rw_cli.common.hash_index import HashIndex
from rw_cli.common.memory import memory_share
from rw_cli.errors import StorageError
from rw_cli.store.cache import parse_size
from rw_cli.common.vnode import hash_array

MAX_SEGMENTS = 8
MAX_PARTS = 8  # a merged segment of more parts than this is concatenated
ENTRY_OVERHEAD = 24  # hash, offsets
FILTER_BITS_PER_KEY = 24  # blocks of 64 bits, 8 bits a key: about 0.06% false positives
FILTER_K = 8
_U64 = np.uint64


class KeyFilter:
    """A Bloom filter of every key the cache was given, grown by adding layers (a scalable
    Bloom filter): three bytes per key, kept when entries are evicted. For a table only this
    handle writes that was empty when its cache began, a key the filter has not seen is
    absent from the store too, so a new group costs no store read. Blocked: a key's bits lie
    in one 64-bit word, so adding and testing touch one word per key, not one per bit."""

    def __init__(self) -> None:
        self.layers: list[list] = []  # [words (uint64), capacity, count]

    def add(self, hashes: np.ndarray) -> None:
        if not len(hashes):
            return
        if not self.layers or self.layers[-1][2] + len(hashes) > self.layers[-1][1]:
            cap = max(1 << 16, 2 * len(hashes), 2 * self.layers[-1][1] if self.layers else 0)
            nwords = 1 << int(np.ceil(np.log2(cap * FILTER_BITS_PER_KEY / 64)))
            self.layers.append([np.zeros(nwords, dtype=_U64), cap, 0])
        layer = self.layers[-1]
        np.bitwise_or.at(layer[0], _block_word(hashes, len(layer[0])), _block_mask(hashes))
        layer[2] += len(hashes)

    def may_contain(self, hashes: np.ndarray) -> np.ndarray:
        out = np.zeros(len(hashes), dtype=bool)
        if self.layers:
            mask = _block_mask(hashes)
            for words, _, _ in self.layers:
                out |= (words[_block_word(hashes, len(words))] & mask) == mask
        return out


def _block_word(hashes: np.ndarray, nwords: int) -> np.ndarray:
    """A key's word: the hash's high bits (`nwords` is a power of two)."""
    bits = nwords.bit_length() - 1
    if bits == 0:
        return np.zeros(len(hashes), dtype=np.int64)
    return (hashes >> _U64(64 - bits)).astype(np.int64)


def _block_mask(hashes: np.ndarray) -> np.ndarray:
    """A key's FILTER_K bits in its word: the low 6 bits of each byte of a remix of the hash
    (independent of the high bits that chose the word). One shift and OR per bit over all
    keys (a gather of n x K bits reduced along its short axis was 3x slower)."""
    with np.errstate(over="ignore"):
        r = (hashes ^ _U64(0x9E3779B97F4A7C15)) * _U64(0xBF58476D1CE4E5B9)
        r ^= r >> _U64(31)
    out = np.zeros(len(r), dtype=_U64)
    for i in range(FILTER_K):
        out |= _U64(1) << ((r >> _U64(8 * i)) & _U64(63))
    return out


class _Segment:
    """Entries sorted by the hash of their key: `hashes` (sorted) and `perm`, each entry's
    position in `keys` and `values` — parts taken as one (`starts`: where each part begins),
    which stay as they were given: a merge joins the parts' lists and merges hashes and
    positions only (copying the variable-width arrays at every merge cost more than the rest
    of the cache's work: a key's bytes were copied O(log n) times). Merged segments keep the
    entries a newer write replaced in their parts, unreferenced, until they are half of them
    (`_merge`); past MAX_PARTS parts, the parts are concatenated."""
    __slots__ = ("hashes", "perm", "keys", "values", "starts", "_index", "nbytes")

    def __init__(self, hashes: np.ndarray, perm: np.ndarray, keys: list[pa.Array], values: list[pa.Array],
                 starts: np.ndarray | None = None):
        self.hashes, self.perm, self.keys, self.values = hashes, perm, keys, values
        self.starts = part_starts(keys) if starts is None else starts
        self._index: HashIndex | None = None  # built at the first lookup
        # (Arrow sums a taken array's buffers on every ask: the budget checks ask often)
        self.nbytes = sum(k.nbytes + v.nbytes for k, v in zip(keys, values)) + self.stored * ENTRY_OVERHEAD

    @staticmethod
    def build(keys: pa.Array, values: pa.Array, hashes: np.ndarray | None = None) -> "_Segment":
        """From unique keys (in any order), their values and (if known) their hashes."""
        h = hash_array(keys) if hashes is None else hashes
        order = np.argsort(h, kind="stable")
        return _Segment(h[order], order, [keys], [values])

    @staticmethod
    def packed(hashes: np.ndarray, keys: pa.Array, values: pa.Array) -> "_Segment":
        """From entries already in hash order."""
        return _Segment(hashes, np.arange(len(hashes), dtype=np.int64), [keys], [values])

    def __len__(self) -> int:
        return len(self.hashes)

    @property
    def stored(self) -> int:
        """Entries the parts hold, live or replaced."""
        return int(self.starts[-1])

    @property
    def replaced(self) -> int:
        """How many entries the parts hold that a newer write replaced."""
        return self.stored - len(self.hashes)

    def repacked(self) -> "_Segment":
        """This segment's live entries in hash order, in one part."""
        every = np.arange(len(self))
        return _Segment.packed(self.hashes, self.take_keys(every), self.take_values(every))

    def concatenated(self) -> "_Segment":
        """This segment with its parts in one (the entries where they are)."""
        return _Segment(self.hashes, self.perm, [pa.concat_arrays(self.keys)], [pa.concat_arrays(self.values)])

    def take_keys(self, idx: np.ndarray) -> pa.Array:
        """The keys of the entries at hash-order positions `idx`."""
        return take_parts(self.keys, self.starts, self.perm[idx])

    def take_values(self, idx: np.ndarray) -> pa.Array:
        """The values of the entries at hash-order positions `idx`."""
        return take_parts(self.values, self.starts, self.perm[idx])

    def find(self, qh: np.ndarray, qkeys: pa.Array) -> np.ndarray:
        """The (hash-order) position of each query key here, -1 where absent (equal hashes
        are rare, so each further round looks at fewer queries)."""
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
            eq = pc.equal(self.take_keys(pos), qkeys.take(pa.array(cand, pa.int64()))).to_numpy(zero_copy_only=False)
            out[cand[eq]] = pos[eq]
            k += 1
            cand = cand[~eq & (span[cand] > k)]
        return out


class CacheBudget:
    """The bytes all the state caches of a process hold together. RisingWave's memory manager
    evicts its executors' caches when the process nears its memory limit, not each cache at a
    size of its own: a table's or an aggregation's state that fits in memory stays there
    whole (a DELETE of old rows, a max whose value was deleted, read no SSTs), however the
    state is spread over executors. Past the budget the largest caches shrink first."""

    def __init__(self, max_bytes: int):
        self.max_bytes = max_bytes
        self.caches: "weakref.WeakSet[StateCache]" = weakref.WeakSet()

    def add(self, cache: "StateCache") -> None:
        self.caches.add(cache)

    @property
    def nbytes(self) -> int:
        return sum(c.nbytes for c in list(self.caches))

    def enforce(self) -> None:
        """Shrink the largest caches until all of them are back at 3/4 of the budget."""
        caches = list(self.caches)
        total = sum(c.nbytes for c in caches)
        if total <= self.max_bytes:
            return
        target = self.max_bytes * 3 // 4
        for c in sorted(caches, key=lambda c: -c.nbytes):
            if total <= target:
                break
            before = c.nbytes
            c.shrink(max(0, before - (total - target)))
            total -= before - c.nbytes


# every executor's state cache of this process: a share of the memory the process may use
# (RisingWave's compute node likewise gives its executors' caches most of what its storage
# and reserved memory leave); `RW_STATE_CACHE_SIZE` (bytes, or with a unit: 512MiB, 2GiB)
# sets it
MEMORY_SHARE = 4  # a quarter of the machine's (or the container's) memory
MIN_BUDGET_BYTES = 256 << 20
FALLBACK_BUDGET_BYTES = 1 << 30  # where the machine's memory cannot be read


def default_budget_bytes() -> int:
    return memory_share(MEMORY_SHARE, MIN_BUDGET_BYTES, FALLBACK_BUDGET_BYTES)


def _budget_bytes() -> int:
    text = os.environ.get("RW_STATE_CACHE_SIZE")
    if not text:
        return default_budget_bytes()
    try:
        return parse_size(text)
    except StorageError as e:
        default = default_budget_bytes()
        warnings.warn(f"RW_STATE_CACHE_SIZE: {e.message}; the state caches keep {default >> 20} MiB",
                      stacklevel=2)
        return default


BUDGET = CacheBudget(_budget_bytes())


class StateCache:
    def __init__(self, max_bytes: int | None = None, budget: CacheBudget | None = None):
        """`max_bytes`: this cache's own limit (None: only the budget's)."""
        self.max_bytes = max_bytes
        self.segments: list[_Segment] = []
        self.evicted = False  # some entry was dropped: an unknown key may exist in the store
        self.filter = KeyFilter()  # every key ever put
        self.budget = BUDGET if budget is None else budget
        self.budget.add(self)

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
                values.append(seg.take_values(idx[hit]))
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
        while len(self.segments) > MAX_SEGMENTS:
            sizes = np.array([len(x) for x in self.segments])
            i = int(np.argmin(sizes[:-1] + sizes[1:]))
            self.segments[i:i + 2] = [_merge(self.segments[i], self.segments[i + 1])]
        self._evict()

    def _evict(self) -> None:
        if self.max_bytes is not None:
            self.shrink(self.max_bytes)
        self.budget.enforce()

    def shrink(self, limit: int) -> None:
        """Past `limit` bytes, back to 3/4 of it: replaced entries first, then the oldest
        segments (or a share of the oldest one)."""
        size = self.nbytes
        if size <= limit:
            return
        size = self._repack(size, limit)  # replaced entries go before live ones do
        if size <= limit:
            return
        self.evicted = True  # (before any entry goes: a lookup that misses one then reads the store)
        target = limit * 3 // 4
        while self.segments and size > target:
            seg = self.segments[0]
            if size - seg.nbytes >= target // 2 or len(seg) < 2:
                size -= seg.nbytes
                self.segments.pop(0)
                continue
            # most of the budget in one segment: drop a share of its entries, enough to get
            # under the target
            keep = int(len(seg) * (1 - (size - target) / seg.nbytes))
            keep = max(0, min(len(seg) - 1, keep))
            idx = np.arange(len(seg) - keep, len(seg))
            trimmed = _Segment.packed(seg.hashes[len(seg) - keep:].copy(), seg.take_keys(idx), seg.take_values(idx))
            size -= seg.nbytes - trimmed.nbytes
            self.segments[0] = trimmed

    def _repack(self, size: int, limit: int) -> int:
        """Drop the replaced entries merged segments still hold, from the segments where
        they are the largest share (a quarter at least: a repack copies the live entries,
        so it must free a good part of them), until the cache is back at 3/4 of `limit`;
        the new size."""
        target = limit * 3 // 4
        order = sorted(range(len(self.segments)), key=lambda i: -self.segments[i].replaced / self.segments[i].stored)
        for i in order:
            seg = self.segments[i]
            if size <= target or 4 * seg.replaced < seg.stored:
                break
            new = seg.repacked()
            size -= seg.nbytes - new.nbytes
            self.segments[i] = new
        return size


def _merge(older: _Segment, newer: _Segment) -> _Segment:
    """One segment holding the newest value of every key of both: the parts' lists joined
    (newer first), the hashes and positions merged by a stable sort (the newer entry
    first), then an entry whose neighbour before it has the same hash and key is dropped
    from the hash order (its bytes stay until the parts are repacked, once half of them
    are such). (Two different keys with one hash may leave an old entry of one of them
    behind the other; a lookup finds the newer one first, so it is never read.)"""
    keys, values = newer.keys + older.keys, newer.values + older.values
    starts = np.concatenate([newer.starts, older.starts[1:] + newer.stored])
    hashes = np.concatenate([newer.hashes, older.hashes])
    perm = np.concatenate([newer.perm, older.perm + newer.stored])
    order = np.argsort(hashes, kind="stable")  # two sorted runs: a merge
    h, p = hashes[order], perm[order]
    dup = np.flatnonzero(h[1:] == h[:-1]) + 1
    if len(dup):
        same = pc.equal(take_parts(keys, starts, p[dup]),
                        take_parts(keys, starts, p[dup - 1])).to_numpy(zero_copy_only=False)
        keep = np.ones(len(h), dtype=bool)
        keep[dup[same]] = False
        h, p = h[keep], p[keep]
    merged = _Segment(h, p, keys, values, starts)
    if 2 * len(p) < merged.stored:
        return merged.repacked()  # mostly replaced entries (a cache over its budget repacks first: _repack)
    return merged.concatenated() if len(keys) > MAX_PARTS else merged
