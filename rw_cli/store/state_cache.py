"""StateCache: an executor's in-memory cache of its state table's latest values, by key.

Lookups and updates are whole arrays at a time (numpy and Arrow kernels, no loop over keys in
Python), because an aggregation reads and writes thousands of groups per epoch. The cache is
one hash table with open addressing (linear probing) over its entries, whose keys and values
lie in two append-only byte arenas: a lookup walks all its keys' slots at once, a round per
step, and compares a key's bytes only with entries whose hash has its high half (one Arrow
take and comparison a round); an update appends the entries and points their slots at them.
A batch of lookups costs a few vectorized calls however many epochs wrote the cache (a list
of sorted segments cost a search and a gather per segment and part: 4-7 ms for 500-1600 keys
where this takes 1-1.7). A newer value leaves the old entry's bytes dead in the arena; they
are dropped (the live entries copied) once they are as many as the live ones.
A value may be null: the key is known absent. Past the byte budget the entries written longest
ago are dropped: an aggregation's groups of the last few epochs stay.
"""
from __future__ import annotations

import os
import warnings
import weakref

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rw_cli.common.memory import memory_share
from rw_cli.errors import StorageError
from rw_cli.store.cache import parse_size
from rw_cli.common.vnode import binary_parts, hash_array

ENTRY_BYTES = 26  # per entry: two offsets, the hash, the null and live flags
SLOT_BYTES = 8  # per table slot: the entry and its hash's tag
MIN_SLOTS = 16
MAX_LOAD = 0.35  # live entries per slot at most, else the table is rebuilt at 1/4 or less
TAIL_SLOTS = 64  # past the last home slot: walks do not wrap around
PLACE_ROUNDS = 32  # a rebuild's placement by rounds gives way to one by sorting past this
COMPACT_MIN_BYTES = 1 << 20  # dead entries' bytes are dropped past this and the live ones'
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

    def add(self, hashes: np.ndarray, mask: np.ndarray | None = None) -> None:
        """`mask`: the hashes' `key_bits`, when the caller has them."""
        if not len(hashes):
            return
        if not self.layers or self.layers[-1][2] + len(hashes) > self.layers[-1][1]:
            cap = max(1 << 16, 2 * len(hashes), 2 * self.layers[-1][1] if self.layers else 0)
            nwords = 1 << int(np.ceil(np.log2(cap * FILTER_BITS_PER_KEY / 64)))
            self.layers.append([np.zeros(nwords, dtype=_U64), cap, 0])
        layer = self.layers[-1]
        mask = key_bits(hashes) if mask is None else mask
        words, at = layer[0], _block_word(hashes, len(layer[0]))
        while len(at):  # keys sharing a word: one write each wins a round (np.bitwise_or.at is 4x slower)
            words[at] |= mask
            lost = (words[at] & mask) != mask
            at, mask = at[lost], mask[lost]
        layer[2] += len(hashes)

    def may_contain(self, hashes: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
        out = np.zeros(len(hashes), dtype=bool)
        if self.layers:
            mask = key_bits(hashes) if mask is None else mask
            for words, _, _ in self.layers:
                out |= (words[_block_word(hashes, len(words))] & mask) == mask
        return out


def _block_word(hashes: np.ndarray, nwords: int) -> np.ndarray:
    """A key's word: the hash's high bits (`nwords` is a power of two)."""
    bits = nwords.bit_length() - 1
    if bits == 0:
        return np.zeros(len(hashes), dtype=np.int64)
    return (hashes >> _U64(64 - bits)).astype(np.int64)


def key_bits(hashes: np.ndarray) -> np.ndarray:
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


class _Growable:
    """An append-only numpy array with spare room (doubling): appends cost the bytes
    appended. It grows in place (`ndarray.resize`: realloc, which moves a large block by
    remapping its pages): the bytes already written are neither copied nor touched again
    (on a virtual machine a page's first touch, a fault, costs more than copying it; growth
    by copy into fresh memory was two thirds of the time the cache spent storing entries).
    Should a view of the data be alive when it must grow (numpy refuses to move the memory
    under it), it grows by a copy instead."""
    __slots__ = ("data", "size")

    def __init__(self, dtype) -> None:
        self.data = np.empty(0, dtype=dtype)
        self.size = 0

    def append(self, values: np.ndarray) -> None:
        need = self.size + len(values)
        if need > len(self.data):
            room = max(need, 2 * len(self.data), 64)
            try:
                self.data.resize(room, refcheck=True)
            except ValueError:  # referenced elsewhere: a copy leaves those views valid
                grown = np.empty(room, dtype=self.data.dtype)
                grown[:self.size] = self.data[:self.size]
                self.data = grown
        self.data[self.size:need] = values
        self.size = need

    @property
    def view(self) -> np.ndarray:
        return self.data[:self.size]


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
        self.evicted = False  # some entry was dropped: an unknown key may exist in the store
        self.filter = KeyFilter()  # every key ever put
        self._entries_from([], [], np.zeros(0, dtype=bool), np.zeros(0, dtype=_U64))
        self.budget = BUDGET if budget is None else budget
        self.budget.add(self)

    # -- entries -------------------------------------------------------------------------
    def _entries_from(self, keys: list[pa.Array], values: list[pa.Array], nulls: np.ndarray,
                      hashes: np.ndarray) -> None:
        """Start the entry arrays over with the given entries (all live), and the table."""
        self._kdata, self._koffs = _Growable(np.uint8), _Growable(np.int64)
        self._vdata, self._voffs = _Growable(np.uint8), _Growable(np.int64)
        self._koffs.append(np.zeros(1, dtype=np.int64))
        self._voffs.append(np.zeros(1, dtype=np.int64))
        self._null, self._hash, self._live = _Growable(np.bool_), _Growable(_U64), _Growable(np.bool_)
        self._dead_bytes = 0
        for k, v in zip(keys, values):
            self._append_bytes(k, v)
        self._null.append(nulls)
        self._hash.append(hashes)
        self._live.append(np.ones(len(hashes), dtype=bool))
        self._count = len(hashes)
        self._rebuild()

    def _append_bytes(self, keys: pa.Array, values: pa.Array) -> None:
        for data, offs, arr in ((self._kdata, self._koffs, keys), (self._vdata, self._voffs, values)):
            o, d = binary_parts(arr)
            base = data.size
            data.append(d)
            offs.append(o[1:] + base)

    def _append(self, keys: pa.Array, values: pa.Array, hashes: np.ndarray) -> np.ndarray:
        """Add entries (live); their ids."""
        first = self._hash.size
        self._append_bytes(keys, values)
        self._null.append(values.is_null().to_numpy(zero_copy_only=False) if values.null_count
                          else np.zeros(len(values), dtype=bool))
        self._hash.append(hashes)
        self._live.append(np.ones(len(hashes), dtype=bool))
        return np.arange(first, self._hash.size, dtype=np.int64)

    def _view(self, data: _Growable, offs: _Growable) -> pa.Array:
        """Every entry's keys (values) as one Arrow array over the arena, zero-copy."""
        return pa.Array.from_buffers(pa.large_binary(), offs.size - 1,
                                     [None, pa.py_buffer(offs.view), pa.py_buffer(data.view)])

    def _entry_bytes(self, ids: np.ndarray) -> np.ndarray:
        k, v = self._koffs.view, self._voffs.view
        return (k[ids + 1] - k[ids]) + (v[ids + 1] - v[ids]) + ENTRY_BYTES

    # -- the table -----------------------------------------------------------------------
    def _rebuild(self) -> None:
        """A table of four times as many slots as live entries at least (a power of two,
        and a tail past it), every live entry placed as linear probing would: by rounds
        (`_place`, a few passes over the entries: at a quarter full most sit at their home),
        or, when the rounds run long or off the table's end, by sorting (`_place_sorted`)."""
        live = np.flatnonzero(self._live.view)
        n = len(live)
        self._cap = max(MIN_SLOTS, 1 << int(4 * n - 1).bit_length()) if n else MIN_SLOTS
        h = self._hash.view[live]
        self._slots = np.full(self._cap + TAIL_SLOTS, -1, dtype=np.int32)
        self._tags = np.zeros(self._cap + TAIL_SLOTS, dtype=np.uint32)
        if n and not self._place(self._home(h), live, h, max_rounds=PLACE_ROUNDS):
            self._place_sorted(live, h)

    def _place_sorted(self, live: np.ndarray, h: np.ndarray) -> None:
        """Every live entry placed at once: sorted by home slot, each goes to the first slot
        from its home not taken by the ones before it (linear probing's own placement, with
        no walk); the table grows past its end as far as the walks reach."""
        n = len(live)
        home = self._home(h)
        order = np.argsort(home)
        ranks = np.arange(n)
        pos = np.maximum.accumulate(home[order] - ranks) + ranks
        size = max(self._cap, int(pos[-1]) + 1 if n else 0) + TAIL_SLOTS
        self._slots = np.full(size, -1, dtype=np.int32)
        self._tags = np.zeros(size, dtype=np.uint32)
        self._slots[pos] = live[order]
        self._tags[pos] = _tag(h[order])

    def _home(self, h: np.ndarray) -> np.ndarray:
        return (h & _U64(self._cap - 1)).astype(np.int64)

    def _place(self, slot: np.ndarray, ids: np.ndarray, h: np.ndarray, max_rounds: int | None = None) -> bool:
        """Put entries of keys not in the table at the first free slot from `slot` on:
        each round every entry claims its slot if free (one write wins where several claim
        one), and the rest move on a slot. False if some walk ran past the table's end
        (then only a rebuild places it) or took more than `max_rounds` rounds."""
        end = len(self._slots)
        rounds = 0
        while len(ids):
            rounds += 1
            if int(slot.max()) >= end or (max_rounds is not None and rounds > max_rounds):
                return False
            free = np.flatnonzero(self._slots[slot] < 0)
            self._slots[slot[free]] = ids[free]
            won = free[self._slots[slot[free]] == ids[free]]
            self._tags[slot[won]] = _tag(h[won])
            rest = np.ones(len(ids), dtype=bool)
            rest[won] = False
            slot, ids, h = slot[rest] + 1, ids[rest], h[rest]
        return True

    def _probe(self, qh: np.ndarray, keys: pa.Array) -> tuple[np.ndarray, np.ndarray]:
        """(each key's entry, -1 where absent; its slot, or the free slot (or the table's
        end) its walk stopped at). A walk compares a key's bytes only with entries whose
        hash has its tag."""
        n = len(qh)
        slot = self._home(qh)
        tag = _tag(qh)
        entry = np.full(n, -1, dtype=np.int64)
        end = len(self._slots)
        walking = np.arange(n)
        kview = None
        while len(walking):
            s = slot[walking]
            e = self._slots[s]
            go_on = e >= 0
            same = np.flatnonzero(go_on & (self._tags[s] == tag[walking]))
            if len(same):
                kview = self._view(self._kdata, self._koffs) if kview is None else kview
                eq = pc.equal(kview.take(pa.array(e[same])), keys.take(pa.array(walking[same])))
                hit = same[eq.to_numpy(zero_copy_only=False)]
                entry[walking[hit]] = e[hit]
                go_on[hit] = False
            walking = walking[go_on]
            slot[walking] += 1
            walking = walking[slot[walking] < end]
        return entry, slot

    # -- the interface -------------------------------------------------------------------
    @property
    def nbytes(self) -> int:
        return (self._kdata.size + self._vdata.size + self._hash.size * ENTRY_BYTES
                + len(self._slots) * SLOT_BYTES)

    def __len__(self) -> int:
        """Live entries."""
        return self._count

    def get(self, keys: pa.Array, qh: np.ndarray | None = None) -> tuple[pa.Array, np.ndarray]:
        """(the cached value of each key, null where absent or unknown; whether it is known).
        `qh`: the keys' hashes (`hash_array`), when the caller has them."""
        n = len(keys)
        if n == 0 or not self._count:
            return pa.nulls(n, pa.binary()), np.zeros(n, dtype=bool)
        if qh is None:
            qh = hash_array(keys)
        entry, _ = self._probe(qh, _large(keys))
        known = entry >= 0
        valid = known.copy()
        valid[known] = ~self._null.data[entry[known]]
        idx = pa.array(np.where(valid, entry, 0), pa.int64(), mask=~valid)
        return self._view(self._vdata, self._voffs).take(idx).cast(pa.binary()), known

    def put(self, keys: pa.Array, values: pa.Array, hashes: np.ndarray | None = None) -> None:
        """The latest values of unique `keys` (null: known absent); `hashes`: theirs
        (`hash_array`), when the caller has them."""
        if len(keys) == 0:
            return
        h = hash_array(keys) if hashes is None else hashes
        old = np.full(len(keys), -1, dtype=np.int64)
        slot = self._home(h)
        bits = key_bits(h)
        seen = np.flatnonzero(self.filter.may_contain(h, bits)) if self._count else []
        if len(seen):  # (a key the filter never saw is new: no walk needed to find a free slot)
            sub = _large(keys) if len(seen) == len(keys) else _large(keys).take(pa.array(seen))
            old[seen], slot[seen] = self._probe(h[seen], sub)
        self.filter.add(h, bits)
        ids = self._append(keys, values, h)
        found = old >= 0
        if found.any():  # a newer value: the slot points at it, the old entry is dead
            self._slots[slot[found]] = ids[found]
            self._live.data[old[found]] = False
            self._dead_bytes += int(self._entry_bytes(old[found]).sum())
        new = np.flatnonzero(~found)
        self._count += len(new)
        if self._count > MAX_LOAD * self._cap or not self._place(slot[new], ids[new], h[new]):
            self._rebuild()
        if self._dead_bytes > max(COMPACT_MIN_BYTES, self.nbytes - self._dead_bytes):
            self._keep(np.flatnonzero(self._live.view))
        self._evict()

    def _keep(self, ids: np.ndarray) -> None:
        """Only the entries `ids` (live, ascending) stay: copied into new arrays."""
        take = pa.array(ids, pa.int64())
        keys = self._view(self._kdata, self._koffs).take(take)
        values = self._view(self._vdata, self._voffs).take(take)
        self._entries_from([keys], [values], self._null.view[ids], self._hash.view[ids])

    def _evict(self) -> None:
        if self.max_bytes is not None:
            self.shrink(self.max_bytes)
        self.budget.enforce()

    def shrink(self, limit: int) -> None:
        """Past `limit` bytes, back to 3/4 of it: dead entries go first, then the live ones
        written longest ago (an aggregation's groups of the last epochs stay)."""
        if self.nbytes <= limit:
            return
        target = limit * 3 // 4
        live = np.flatnonzero(self._live.view)
        cost = self._entry_bytes(live) + 8 * SLOT_BYTES  # (a table an eighth full at least)
        newest = np.cumsum(cost[::-1])[::-1]  # the bytes of each entry and all newer ones
        keep = live[newest + (MIN_SLOTS + 2 * TAIL_SLOTS) * SLOT_BYTES <= target]
        if len(keep) < len(live):
            self.evicted = True  # (an unknown key may be in the store now)
        self._keep(keep)


def _tag(h: np.ndarray) -> np.ndarray:
    """A hash's high half, kept in its slot: a walk compares the bytes of a key only with
    entries of its tag (the home slot comes from the low bits)."""
    return (h >> _U64(32)).astype(np.uint32)


def _large(keys: pa.Array) -> pa.Array:
    """Keys in the type of the cache's own key arrays (for comparisons)."""
    return keys if keys.type == pa.large_binary() else keys.cast(pa.large_binary())
