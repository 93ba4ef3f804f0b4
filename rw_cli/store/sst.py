"""Sorted String Tables (format 2).

Entries are (user key, epoch, value | tombstone), sorted by user key ascending then epoch
descending. Blocks and SSTs are cut only where a new user key starts, so every version of a
key lives in one block.

Object layout::

    block 0 | block 1 | ... | meta | footer

block (little endian; stored compressed when the SST says so)::

    n u32 | flags u32 (bit 0: has tombstones) | key bytes u32 | value bytes u32
    | epochs n u64 | key offsets (n+1) u32 | value offsets (n+1) u32 | [tombstone flags n u8]
    | key bytes | value bytes

meta::

    header (META_HEAD) | block offsets u64[nb] | stored lengths u32[nb] | raw lengths u32[nb]
    | crc32 u32[nb] | first-key offsets u32[nb+1] | first-key bytes | smallest | largest
    | table ids u32[nt] | bloom bytes

footer (28 bytes)::

    meta_offset u64 | meta_len u32 | meta_crc32 u32 | format u32 | magic 8 bytes

The block index holds the first user key of each block; the bloom filter covers the user
keys. Every block and the meta carry a CRC32; a mismatch is reported as a corrupted object.
"""
from __future__ import annotations

import struct
import zlib
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa

from rw_cli.common.vnode import binary_parts, hash_bytes_parts
from rw_cli.errors import StorageError
from rw_cli.store.cache import LruCache
from rw_cli.store.keys import MAX_EPOCH, KeyForm, sortable_keys, sortable_one, split_full_key
from rw_cli.store.object_store import ObjectStore
from rw_cli.store.run import EMPTY_BINARY, Run, as_binary
from rw_cli.common.lazy_import import lazy_import

pc = lazy_import("pyarrow.compute")  # imported on first use: see rw_cli.common.lazy_import

MAGIC = b"RWHMSST\x02"
FORMAT = 2
FOOTER = struct.Struct("<QIII8s")
FOOTER_LEN = FOOTER.size
META_HEAD = struct.Struct("<IIBBxxIIQQQQQIIIIII")
BLOCK_HEAD = struct.Struct("<IIII")
BLOOM_BITS_PER_KEY = 10
BLOOM_K = 6
COMPRESSIONS = {None: 0, "none": 0, "lz4": 1, "zstd": 2}
_CODEC_NAMES = {1: "lz4", 2: "zstd"}
READ_AHEAD = 1 << 20  # bytes fetched per ranged read when iterating

_U64 = np.uint64


# ---------------------------------------------------------------------------------------
# hashing and bloom filter over user keys
# ---------------------------------------------------------------------------------------

def key_hashes(keys: pa.Array) -> np.ndarray:
    """Stable 64-bit hash of each key (vnode.hash_bytes_parts), 65536 keys at a time to
    bound the temporaries."""
    offs, data = binary_parts(keys)
    n = len(offs) - 1
    out = np.empty(n, _U64)
    step = 65536
    for s in range(0, n, step):
        e = min(n, s + step)
        o = offs[s:e + 1]
        out[s:e] = hash_bytes_parts(o - o[0], data[o[0]:o[-1]])
    return out


def bloom_probes(hashes: np.ndarray, k: int = BLOOM_K) -> np.ndarray:
    """k probes per hash (double hashing: h1 + i * h2, 32-bit), before a filter reduces them
    to its size: a batched lookup computes them once for all the SSTs it asks, and each
    SST's filter only masks them (`bloom_check`)."""
    h1 = (hashes & _U64(0xFFFFFFFF)).astype(np.uint32)
    h2 = ((hashes >> _U64(32)).astype(np.uint32)) | np.uint32(1)
    with np.errstate(over="ignore"):
        return h1[:, None] + np.arange(k, dtype=np.uint32)[None, :] * h2[:, None]


def bloom_positions(hashes: np.ndarray, nbits: int, k: int) -> np.ndarray:
    """k bit positions per hash (double hashing); `nbits` is a power of two."""
    return bloom_probes(hashes, k) & np.uint32(nbits - 1)


def _bloom_bytes(n: int) -> int:
    want = max(64, n * BLOOM_BITS_PER_KEY)
    return 1 << max(3, (want - 1).bit_length() - 3)


def build_bloom_from_hashes(hashes: np.ndarray, k: int = BLOOM_K) -> bytes:
    """The filter of `bloom_positions`, one probe at a time: (n, k) temporaries of the
    probes cost more than the filter's writes (an SST of 250,000 keys: 17 ms against 8)."""
    nbytes = _bloom_bytes(len(hashes))
    bits = np.zeros(nbytes * 8, dtype=bool)
    if len(hashes):
        mask = np.uint32(nbytes * 8 - 1)
        h1 = (hashes & _U64(0xFFFFFFFF)).astype(np.uint32)
        h2 = (hashes >> _U64(32)).astype(np.uint32) | np.uint32(1)
        for _ in range(k):  # probe i: h1 + i * h2 (mod 2^32), as bloom_probes
            bits[h1 & mask] = True
            h1 += h2
    return np.packbits(bits, bitorder="little").tobytes()


def bloom_check(bloom: np.ndarray, k: int, hashes: np.ndarray, probes: np.ndarray | None = None) -> np.ndarray:
    """Whether each hash may be in the filter; `probes`: the hashes' `bloom_probes`, when
    the caller has them (for this k)."""
    if len(bloom) == 0:
        return np.ones(len(hashes), dtype=bool)
    if probes is None or probes.shape[1] != k:
        probes = bloom_probes(hashes, k)
    pos = probes & np.uint32(len(bloom) * 8 - 1)
    return ((bloom[pos >> 3] >> (pos & 7).astype(np.uint8)) & 1).astype(bool).all(axis=1)


def bloom_may_contain(bloom: bytes, k: int, user_keys: pa.Array) -> np.ndarray:
    return bloom_check(np.frombuffer(bloom, np.uint8), k, key_hashes(as_binary(user_keys)))


# ---------------------------------------------------------------------------------------
# meta
# ---------------------------------------------------------------------------------------

@dataclass(eq=False)
class SstMeta:
    offsets: np.ndarray      # u64 per block
    lengths: np.ndarray      # stored bytes per block
    raw_lengths: np.ndarray  # decoded bytes per block
    crcs: np.ndarray
    first_keys: pa.Array     # first user key of each block
    smallest_key: bytes
    largest_key: bytes
    min_epoch: int
    max_epoch: int
    key_count: int
    distinct_keys: int
    tombstones: int
    table_ids: list[int]
    form: KeyForm
    compression: int = 0
    bloom_k: int = BLOOM_K
    bloom: bytes = b""
    _first_sk: np.ndarray | None = field(default=None, repr=False)
    _first_list: list | None = field(default=None, repr=False)
    _bloom_np: np.ndarray | None = field(default=None, repr=False)

    @property
    def n_blocks(self) -> int:
        return len(self.offsets)

    @property
    def nbytes(self) -> int:
        return len(self.bloom) + self.first_keys.nbytes * 3 + 32 * self.n_blocks + 256

    def first_sk(self) -> np.ndarray:
        if self._first_sk is None:
            self._first_sk = sortable_keys(self.first_keys, self.form)[0]
        return self._first_sk

    def first_list(self) -> list[bytes]:
        if self._first_list is None:
            self._first_list = self.first_keys.to_pylist()
        return self._first_list

    def bloom_np(self) -> np.ndarray:
        if self._bloom_np is None:
            self._bloom_np = np.frombuffer(self.bloom, np.uint8)
        return self._bloom_np

    def encode(self) -> bytes:
        nb = self.n_blocks
        fo, fd = binary_parts(self.first_keys)
        head = META_HEAD.pack(FORMAT, nb, self.compression, int(self.form.fixed), self.form.width, self.bloom_k,
                              self.min_epoch, self.max_epoch, self.key_count, self.distinct_keys, self.tombstones,
                              len(self.table_ids), len(fd), len(self.smallest_key), len(self.largest_key),
                              len(self.bloom), 0)
        return b"".join([
            head, self.offsets.astype("<u8").tobytes(), self.lengths.astype("<u4").tobytes(),
            self.raw_lengths.astype("<u4").tobytes(), self.crcs.astype("<u4").tobytes(),
            fo.astype("<u4").tobytes(), fd.tobytes(), self.smallest_key, self.largest_key,
            np.asarray(self.table_ids, "<u4").tobytes(), self.bloom,
        ])

    @staticmethod
    def decode(data: bytes, path: str = "sst") -> "SstMeta":
        try:
            (fmt, nb, comp, fixed, width, bk, min_e, max_e, kc, dk, tombs, nt, fklen, sl, ll, bl,
             _) = META_HEAD.unpack_from(data, 0)
            if fmt != FORMAT:
                raise StorageError(f"corrupted object {path}: unknown sst format {fmt}")
            p = META_HEAD.size

            def arr(dt, count):
                nonlocal p
                a = np.frombuffer(data, dtype=dt, count=count, offset=p)
                p += a.nbytes
                return a

            offsets = arr("<u8", nb).astype(np.int64)
            lengths = arr("<u4", nb).astype(np.int64)
            raw_lengths = arr("<u4", nb).astype(np.int64)
            crcs = arr("<u4", nb)
            fo = arr("<u4", nb + 1).astype(np.int32)
            fd = bytes(data[p:p + fklen])
            p += fklen
            smallest = bytes(data[p:p + sl])
            p += sl
            largest = bytes(data[p:p + ll])
            p += ll
            tids = arr("<u4", nt).tolist()
            bloom = bytes(data[p:p + bl])
            p += bl
            if p != len(data) or len(fd) != fklen:
                raise StorageError(f"corrupted object {path}: sst meta length mismatch")
            first = pa.Array.from_buffers(pa.binary(), nb, [None, pa.py_buffer(fo), pa.py_buffer(fd)])
        except (struct.error, ValueError) as e:
            raise StorageError(f"corrupted object {path}: bad sst meta ({e})") from e
        return SstMeta(offsets, lengths, raw_lengths, crcs, first, smallest, largest, min_e, max_e, kc, dk, tombs,
                       tids, KeyForm(bool(fixed), width), comp, bk, bloom)


# ---------------------------------------------------------------------------------------
# blocks
# ---------------------------------------------------------------------------------------

def encode_block(keys: pa.Array, epochs: np.ndarray, values: pa.Array) -> bytes:
    n = len(keys)
    ko, kd = binary_parts(keys)
    vo, vd = binary_parts(values)
    tomb = values.null_count > 0
    parts = [BLOCK_HEAD.pack(n, 1 if tomb else 0, len(kd), len(vd)), np.asarray(epochs, "<u8").tobytes(),
             ko.astype("<u4").tobytes(), vo.astype("<u4").tobytes()]
    if tomb:
        parts.append(values.is_null().to_numpy(zero_copy_only=False).astype(np.uint8).tobytes())
    parts.append(kd.tobytes())
    parts.append(vd.tobytes())
    return b"".join(parts)


def decode_block(data, unique: bool = False, form: KeyForm | None = None) -> Run:
    n, flags, klen, vlen = BLOCK_HEAD.unpack_from(data, 0)
    p = BLOCK_HEAD.size
    epochs = np.frombuffer(data, dtype="<u8", count=n, offset=p)
    p += 8 * n
    ko = np.frombuffer(data, dtype="<i4", count=n + 1, offset=p)
    p += 4 * (n + 1)
    vo = np.frombuffer(data, dtype="<i4", count=n + 1, offset=p)
    p += 4 * (n + 1)
    validity = None
    tomb = None
    if flags & 1:
        tomb = np.frombuffer(data, dtype=np.uint8, count=n, offset=p)
        p += n
        validity = pa.py_buffer(np.packbits(tomb == 0, bitorder="little").tobytes())
    if p + klen + vlen != len(data) or int(ko[-1]) != klen or int(vo[-1]) != vlen:
        raise ValueError("block length mismatch")
    buf = pa.py_buffer(data)
    keys = pa.Array.from_buffers(pa.binary(), n, [None, pa.py_buffer(ko), buf.slice(p, klen)])
    values = pa.Array.from_buffers(pa.binary(), n, [validity, pa.py_buffer(vo), buf.slice(p + klen, vlen)])
    run = Run(keys, epochs, values, unique)
    if isinstance(data, bytes):
        run.raw = (data, p + klen, vo, tomb)
    if form is not None and form.fixed and klen == n * form.width:
        # fixed-width keys are their own sortable form: a zero-copy view
        run.set_skeys(form, np.frombuffer(data, dtype=f"S{form.width}", count=n, offset=p))
    return run


# ---------------------------------------------------------------------------------------
# builder
# ---------------------------------------------------------------------------------------

MAX_TABLE_IDS = 256  # beyond this an SST records no table ids (raw keys, not table keys)


def _table_ids(offs: np.ndarray, data: np.ndarray, rows: np.ndarray) -> set[int]:
    """Distinct 4-byte table-id prefixes of the (sorted) keys at `rows`."""
    rows = rows[np.diff(offs)[rows] >= 4]
    if not len(rows):
        return set()
    st = offs[:-1][rows]
    first = bytes(data[st[0]:st[0] + 4])
    if first == bytes(data[st[-1]:st[-1] + 4]):
        return {int.from_bytes(first, "big")}
    b = data[st[:, None] + np.arange(4)[None, :]].astype(np.uint32)
    ids = (b[:, 0] << 24) | (b[:, 1] << 16) | (b[:, 2] << 8) | b[:, 3]
    change = np.flatnonzero(ids[1:] != ids[:-1])
    if len(change) > MAX_TABLE_IDS:
        return set(range(MAX_TABLE_IDS + 1))  # too many: marks the SST as "any table"
    return {int(ids[0])} | set(ids[change + 1].tolist())


class SstBuilder:
    """Builds one SST from sorted runs appended in order (`add_run`/`add_arrays`), or entry
    by entry (`add`, for tests). Blocks are cut at user-key boundaries."""

    def __init__(self, block_size: int = 65536, compression: str | None = None):
        self.block_size = max(1, block_size)
        self.compression = COMPRESSIONS.get(compression)
        if self.compression is None:
            raise StorageError(f"unknown compression {compression!r}")
        self._codec = pa.Codec(_CODEC_NAMES[self.compression]) if self.compression else None
        self._pending: list[Run] = []
        self._pending_bytes = 0
        self._one: list[tuple[bytes, int, bytes | None]] = []
        self._parts: list[bytes] = []
        self._offset = 0
        self._offsets: list[int] = []
        self._lengths: list[int] = []
        self._raw: list[int] = []
        self._crcs: list[int] = []
        self._first: list[bytes] = []
        self._hashes: list[np.ndarray] = []
        self._tables: set[int] = set()
        self._count = self._distinct = self._tombs = 0
        self._min_e, self._max_e = MAX_EPOCH, 0
        self._minlen, self._maxlen = 1 << 30, 0
        self._smallest = self._largest = None
        self.blocks: list[Run] = []  # decoded blocks (kept only when keep_blocks)
        self.keep_blocks = False

    # -- input ---------------------------------------------------------------------------
    def add(self, full_key_: bytes, value: bytes | None) -> None:
        uk, epoch = split_full_key(full_key_)
        self._one.append((uk, epoch, value))

    def add_arrays(self, user_keys: pa.Array, epochs: np.ndarray, values: pa.Array) -> None:
        self.add_run(Run(as_binary(user_keys), np.asarray(epochs, dtype=np.uint64), as_binary(values)))

    def add_run(self, run: Run) -> None:
        self._flush_one()
        if not len(run):
            return
        self._pending.append(run)
        self._pending_bytes += run.keys.nbytes + run.values.nbytes
        if self._pending_bytes >= 16 * self.block_size:
            self._emit(final=False)

    def _flush_one(self) -> None:
        if self._one:
            ks, es, vs = zip(*self._one)
            self._one = []
            self.add_run(Run(pa.array(ks, pa.binary()), np.array(es, np.uint64), pa.array(vs, pa.binary())))

    @property
    def empty(self) -> bool:
        return not self._one and not self._pending and not self._offsets

    @property
    def estimated_size(self) -> int:
        return self._offset + self._pending_bytes

    # -- blocks --------------------------------------------------------------------------
    def _emit(self, final: bool) -> None:
        run = Run.concat(self._pending)
        self._pending, self._pending_bytes = [], 0
        n = len(run)
        if not n:
            return
        ko, kd = binary_parts(run.keys)
        vo, _ = binary_parts(run.values)
        starts = np.flatnonzero(run.key_starts())
        if not final:
            # keep the last user key (it may continue in the next run)
            cut = int(starts[-1])
            if cut == 0:
                self._pending, self._pending_bytes = [run], run.keys.nbytes + run.values.nbytes
                return
            self._pending = [run.slice(cut, n)]
            self._pending_bytes = self._pending[0].keys.nbytes + self._pending[0].values.nbytes
            run = run.slice(0, cut)
            n = cut
            starts = starts[starts < cut]
            ko, vo = ko[:n + 1], vo[:n + 1]
        sizes = np.diff(ko) + np.diff(vo) + 17
        before = np.cumsum(sizes) - sizes
        bid = before[starts] // self.block_size
        first_groups = np.flatnonzero(np.concatenate([[True], bid[1:] != bid[:-1]]))
        bstarts = starts[first_groups].tolist() + [n]
        lens = np.diff(ko)
        self._minlen = min(self._minlen, int(lens.min()))
        self._maxlen = max(self._maxlen, int(lens.max()))
        if len(self._tables) <= MAX_TABLE_IDS:
            self._tables |= _table_ids(ko, kd, starts)
        self._hashes.append(key_hashes(run.keys.take(pa.array(starts))) if len(starts) < n else key_hashes(run.keys))
        self._count += n
        self._distinct += len(starts)
        self._tombs += run.values.null_count
        self._min_e = min(self._min_e, int(run.epochs.min()))
        self._max_e = max(self._max_e, int(run.epochs.max()))
        if self._smallest is None:
            self._smallest = run.keys[0].as_py()
        self._largest = run.keys[n - 1].as_py()
        for s, e in zip(bstarts[:-1], bstarts[1:]):
            blk = run.slice(s, e)
            raw = encode_block(blk.keys, blk.epochs, blk.values)
            stored = raw if self._codec is None else self._codec.compress(raw, asbytes=True)
            self._offsets.append(self._offset)
            self._lengths.append(len(stored))
            self._raw.append(len(raw))
            self._crcs.append(zlib.crc32(stored))
            self._first.append(kd[ko[s]:ko[s + 1]].tobytes())
            self._parts.append(stored)
            self._offset += len(stored)
            if self.keep_blocks:
                self.blocks.append(raw)

    def finish(self) -> bytes:
        return self.finish_with_meta()[0]

    def finish_with_meta(self) -> tuple[bytes, SstMeta, int]:
        """(object bytes, meta, meta offset)."""
        parts, meta, meta_offset = self.finish_parts()
        return b"".join(parts), meta, meta_offset

    def finish_parts(self) -> tuple[list[bytes], SstMeta, int]:
        """(the object's bytes in parts: its blocks, then its meta, then its footer; meta,
        meta offset). The parts go to the object store as they are: joining them would copy
        the whole SST once more."""
        self._flush_one()
        self._emit(final=True)
        hashes = np.concatenate(self._hashes) if self._hashes else np.zeros(0, _U64)
        if self._count:
            form = KeyForm(self._minlen == self._maxlen, self._maxlen)
        else:
            form = KeyForm(False, 0)
            self._min_e = 0
        meta = SstMeta(np.array(self._offsets, np.int64), np.array(self._lengths, np.int64),
                       np.array(self._raw, np.int64), np.array(self._crcs, np.uint32),
                       pa.array(self._first, pa.binary()), self._smallest or b"", self._largest or b"",
                       self._min_e, self._max_e, self._count, self._distinct, self._tombs,
                       sorted(self._tables) if len(self._tables) <= MAX_TABLE_IDS else [],
                       form, self.compression, BLOOM_K, build_bloom_from_hashes(hashes))
        if self.keep_blocks:
            uniq = meta.distinct_keys == meta.key_count
            self.blocks = [decode_block(raw, unique=uniq, form=form) for raw in self.blocks]
        meta_bytes = meta.encode()
        meta_offset = self._offset
        footer = FOOTER.pack(meta_offset, len(meta_bytes), zlib.crc32(meta_bytes), FORMAT, MAGIC)
        parts, self._parts = self._parts + [meta_bytes, footer], []
        return parts, meta, meta_offset


# ---------------------------------------------------------------------------------------
# reader
# ---------------------------------------------------------------------------------------

class SstReader:
    """Reads one SST object through a shared block cache. With the meta given (from the
    version and the meta cache) opening costs nothing; otherwise the footer is read."""

    def __init__(self, object_store: ObjectStore, path: str, *, sst_id: int | None = None,
                 file_size: int | None = None, meta: SstMeta | None = None,
                 block_cache: LruCache | None = None, block_cache_blocks: int | None = None):
        self.store = object_store
        self.path = path
        self.cache_key = sst_id if sst_id is not None else path
        self.cache = block_cache if block_cache is not None else LruCache(64 << 20)
        if meta is not None:
            self.meta = meta
            return
        if file_size is not None:
            footer = self.store.get_range(path, file_size - FOOTER_LEN, FOOTER_LEN)
            self.meta = self._meta_from_footer(footer, None)
        else:
            data = self.store.get(path)
            if len(data) < FOOTER_LEN:
                raise StorageError(f"corrupted object {path}: too short for an sst")
            self.meta = self._meta_from_footer(data[-FOOTER_LEN:], data)

    def _meta_from_footer(self, footer: bytes, whole: bytes | None) -> SstMeta:
        try:
            meta_off, meta_len, meta_crc, fmt, magic = FOOTER.unpack(footer)
        except struct.error:
            raise StorageError(f"corrupted object {self.path}: bad footer") from None
        if magic != MAGIC or fmt != FORMAT:
            raise StorageError(f"corrupted object {self.path}: bad magic/format")
        raw = whole[meta_off:meta_off + meta_len] if whole is not None else \
            self.store.get_range(self.path, meta_off, meta_len)
        if len(raw) != meta_len or zlib.crc32(raw) != meta_crc:
            raise StorageError(f"corrupted object {self.path}: meta checksum mismatch")
        return SstMeta.decode(raw, self.path)

    @staticmethod
    def read_meta(object_store: ObjectStore, path: str, meta_offset: int, meta_len: int,
                  meta_crc: int | None = None) -> SstMeta:
        raw = object_store.get_range(path, meta_offset, meta_len)
        if meta_crc is not None and zlib.crc32(raw) != meta_crc:
            raise StorageError(f"corrupted object {path}: meta checksum mismatch")
        return SstMeta.decode(raw, path)

    # -- blocks --------------------------------------------------------------------------
    def _decode(self, idx: int, data) -> Run:
        m = self.meta
        if len(data) != m.lengths[idx] or zlib.crc32(data) != int(m.crcs[idx]):
            raise StorageError(f"corrupted object {self.path}: block {idx} checksum mismatch")
        try:
            if m.compression:
                data = pa.Codec(_CODEC_NAMES[m.compression]).decompress(
                    data, decompressed_size=int(m.raw_lengths[idx]), asbytes=True)
            return decode_block(data, unique=m.distinct_keys == m.key_count, form=m.form)
        except (ValueError, struct.error, OSError, pa.ArrowException) as e:
            raise StorageError(f"corrupted object {self.path}: block {idx}: {e}") from e

    def _charge(self, idx: int) -> int:
        return int(self.meta.raw_lengths[idx]) + 256

    def preload(self, blocks: list[Run]) -> None:
        """Put freshly built blocks into the cache (cache refill on write)."""
        for i, b in enumerate(blocks):
            self.cache.put((self.cache_key, i), b, self._charge(i))

    def block(self, idx: int) -> Run:
        return self.blocks_at([idx])[0]

    def should_fill(self, nblocks: int) -> bool:
        """Whether a read of `nblocks` blocks should fill the cache: a read larger than an
        eighth of the cache reads through, so that it cannot flush the cache (LRU flooding)."""
        m = self.meta
        avg = int(m.raw_lengths.mean()) if m.n_blocks else 0
        return nblocks * avg <= self.cache.capacity // 8

    def blocks_at(self, idxs: list[int], fill: bool = True) -> list[Run]:
        """The given blocks (ascending indexes), each read at most once; missing neighbours
        are fetched with one ranged read. `fill=False` leaves the cache as it is."""
        out: list[Run | None] = [self.cache.get((self.cache_key, i)) for i in idxs]
        missing = [j for j, b in enumerate(out) if b is None]
        m = self.meta
        k = 0
        while k < len(missing):
            # coalesce blocks whose gap is small
            a = k
            while k + 1 < len(missing) and idxs[missing[k + 1]] - idxs[missing[k]] <= 2 and \
                    m.offsets[idxs[missing[k + 1]]] + m.lengths[idxs[missing[k + 1]]] - m.offsets[idxs[missing[a]]] <= 4 * READ_AHEAD:
                k += 1
            first, last = idxs[missing[a]], idxs[missing[k]]
            start = int(m.offsets[first])
            end = int(m.offsets[last] + m.lengths[last])
            data = self.store.get_range(self.path, start, end - start)
            for j in missing[a:k + 1]:
                i = idxs[j]
                o = int(m.offsets[i]) - start
                blk = self._decode(i, data[o:o + int(m.lengths[i])])
                if fill:
                    self.cache.put((self.cache_key, i), blk, self._charge(i))
                out[j] = blk
            k += 1
        return out  # type: ignore[return-value]

    # -- reads ---------------------------------------------------------------------------
    def may_contain(self, user_keys: pa.Array) -> np.ndarray:
        return bloom_may_contain(self.meta.bloom, self.meta.bloom_k, user_keys)

    def lookup(self, qkeys: pa.Array, hashes: np.ndarray, epoch: int,
               forms: dict, probes: np.ndarray | None = None) -> tuple[np.ndarray, pa.Array]:
        """Batched point lookup of sorted, distinct `qkeys`. Returns (indexes into qkeys of
        the keys found here, their values: null = tombstone). `probes`: the keys'
        `bloom_probes`, when the caller has them."""
        m = self.meta
        if not m.n_blocks or m.min_epoch > epoch or not len(qkeys):
            return np.zeros(0, np.int64), EMPTY_BINARY
        form = m.form
        got = forms.get(form.key())
        if got is None:
            got = forms[form.key()] = sortable_keys(qkeys, form)
        qsk, ok = got
        lo_b, hi_b = sortable_one(m.smallest_key, form), sortable_one(m.largest_key, form)
        lo = int(np.searchsorted(qsk, np.array(lo_b, qsk.dtype), "left")) if ok is None else 0
        hi = int(np.searchsorted(qsk, np.array(hi_b, qsk.dtype), "right")) if ok is None else len(qsk)
        cand = np.arange(lo, hi)
        if ok is not None:
            cand = cand[ok[lo:hi]]
            if len(cand):
                cs = qsk[cand]
                cand = cand[(cs >= np.array(lo_b, qsk.dtype)) & (cs <= np.array(hi_b, qsk.dtype))]
        if not len(cand):
            return np.zeros(0, np.int64), EMPTY_BINARY
        cand = cand[bloom_check(m.bloom_np(), m.bloom_k, hashes[cand], None if probes is None else probes[cand])]
        if not len(cand):
            return np.zeros(0, np.int64), EMPTY_BINARY
        csk = qsk[cand]
        bidx = np.searchsorted(m.first_sk(), csk, "right") - 1
        valid = bidx >= 0
        cand, csk, bidx = cand[valid], csk[valid], bidx[valid]
        if not len(cand):
            return np.zeros(0, np.int64), EMPTY_BINARY
        bounds = np.flatnonzero(np.concatenate([[True], bidx[1:] != bidx[:-1], [True]]))
        ublocks = bidx[bounds[:-1]].tolist()
        blocks = self.blocks_at(ublocks, fill=self.should_fill(len(ublocks)))
        # one search over the needed blocks' keys laid end to end (they are in key order)
        sks = [blk.skeys(form) for blk in blocks]
        sizes = np.fromiter(map(len, sks), dtype=np.int64, count=len(sks))
        bstart = np.zeros(len(sks) + 1, dtype=np.int64)
        np.cumsum(sizes, out=bstart[1:])
        allsk = np.concatenate(sks) if len(sks) > 1 else sks[0]
        total = len(allsk)
        pos = np.searchsorted(allsk, csk, "left")
        inb = pos < total
        match = inb.copy()
        match[inb] = allsk[pos[inb]] == csk[inb]
        if not match.any():
            return np.zeros(0, np.int64), EMPTY_BINARY
        pos, q, qi = pos[match], csk[match], cand[match]
        if not all(b.unique for b in blocks) or epoch < m.max_epoch:
            # skip versions newer than the read epoch (all versions of a key share a block)
            eps = np.concatenate([b.epochs for b in blocks]) if len(blocks) > 1 else blocks[0].epochs
            e64 = np.uint64(epoch)
            while True:
                newer = eps[pos] > e64
                if not newer.any():
                    break
                nxt = pos + 1
                same = newer & (nxt < total)
                same[same] = allsk[nxt[same]] == q[same]
                gone = newer & ~same
                pos = np.where(same, nxt, pos)
                if gone.any():
                    keep = ~gone
                    pos, q, qi = pos[keep], q[keep], qi[keep]
            if not len(pos):
                return np.zeros(0, np.int64), EMPTY_BINARY
        bi = np.searchsorted(bstart, pos, "right") - 1
        local = pos - bstart[bi]
        cuts = np.flatnonzero(np.concatenate([[True], bi[1:] != bi[:-1], [True]]))
        if all(b.raw is not None for b in blocks):
            # gather the values as bytes straight from the block buffers
            out: list = []
            for a, b in zip(cuts[:-1].tolist(), cuts[1:].tolist()):
                data, vbase, vo, tomb = blocks[bi[a]].raw
                loc = local[a:b]
                st = (vo[loc] + vbase).tolist()
                en = (vo[loc + 1] + vbase).tolist()
                if tomb is None:
                    out.extend([data[x:y] for x, y in zip(st, en)])
                else:
                    dead = tomb[loc].tolist()
                    out.extend([None if d else data[x:y] for x, y, d in zip(st, en, dead)])
            return qi, pa.array(out, pa.binary())
        vals: list[pa.Array] = []
        for a, b in zip(cuts[:-1].tolist(), cuts[1:].tolist()):
            vals.append(blocks[bi[a]].values.take(pa.array(local[a:b], pa.int64())))
        return qi, (pa.concat_arrays(vals) if len(vals) > 1 else vals[0])

    def get(self, user_key: bytes, epoch: int = MAX_EPOCH) -> tuple[bool, bytes | None]:
        """(found, value) of the newest entry of `user_key` with epoch <= `epoch`;
        value None is a tombstone."""
        q = pa.array([user_key], pa.binary())
        idx, vals = self.lookup(q, key_hashes(q), epoch, {})
        if not len(idx):
            return False, None
        return True, vals[0].as_py()

    def block_range(self, start: bytes, end: bytes | None) -> tuple[int, int]:
        m = self.meta
        if not m.n_blocks or m.largest_key < start or (end is not None and m.smallest_key >= end):
            return 0, 0
        fl = m.first_list()
        lo = max(0, bisect_right(fl, start) - 1)
        hi = m.n_blocks if end is None else bisect_left(fl, end)
        return lo, max(lo, hi)

    def runs(self, start: bytes = b"", end: bytes | None = None, target: int = READ_AHEAD):
        """Runs of entries (every epoch, tombstones included) with start <= key < end, in
        order, one per block; blocks are fetched about `target` bytes at a time."""
        lo, hi = self.block_range(start, end)
        m = self.meta
        fill = self.should_fill(hi - lo)
        unique = m.distinct_keys == m.key_count
        i = lo
        while i < hi:
            j = i + 1
            size = int(m.raw_lengths[i])
            while j < hi and size < target:
                size += int(m.raw_lengths[j])
                j += 1
            blks = self.blocks_at(list(range(i, j)), fill=fill)
            if i == lo and start > m.first_list()[lo]:
                b0 = blks[0]
                cut = int(pc.sum(pc.less(b0.keys, pa.scalar(start, pa.binary()))).as_py() or 0)
                blks[0] = b0.slice(cut, len(b0))
            if j == hi and end is not None and m.largest_key >= end:
                bl = blks[-1]
                cut = int(pc.sum(pc.less(bl.keys, pa.scalar(end, pa.binary()))).as_py() or 0)
                blks[-1] = bl.slice(0, cut)
            for b in blks:
                if len(b):
                    b.unique = unique
                    yield b
            i = j

    def iter(self, start: bytes = b"", end: bytes | None = None, epoch: int = MAX_EPOCH):
        """(user key, value) of live entries visible at `epoch` with start <= key < end."""
        for r in self.runs(start, end):
            v = r.visible(epoch)
            yield from zip(v.keys.to_pylist(), v.values.to_pylist())
