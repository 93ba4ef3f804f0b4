"""Sorted String Tables.

Entries are (user key, epoch, value | tombstone), sorted by user key ascending then epoch
descending (the order of full keys `user key | (MAX_EPOCH - epoch)`; comparisons split the
full key so that user keys that are prefixes of one another still order correctly).

Object layout::

    block 0 | block 1 | ... | meta | footer

block (all little endian)::

    n u32 | key_offsets (n+1) u32 | val_offsets (n+1) u32 | epochs n u64 | tombstone flags n u8
    | key bytes | value bytes

meta::

    format u32 | n_blocks u32 | per block: offset u64, len u32, crc32 u32, first_key (u32 len + bytes)
    | smallest_user_key | largest_user_key (u32 len + bytes) | min_epoch u64 | max_epoch u64
    | key_count u64 | n_tables u32 | table ids u32... | bloom_k u32 | bloom (u32 len + bytes)

footer (28 bytes)::

    meta_offset u64 | meta_len u32 | meta_crc32 u32 | format u32 | magic 8 bytes
"""
from __future__ import annotations

import struct
import zlib
from bisect import bisect_right
from collections import OrderedDict
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rw_cli.common.vnode import binary_parts, hash_bytes_parts
from rw_cli.errors import StorageError
from rw_cli.store.keys import EPOCH_LEN, MAX_EPOCH, encode_epoch, full_key, split_full_key
from rw_cli.store.object_store import ObjectStore

MAGIC = b"RWHMSST\x01"
FORMAT = 1
FOOTER = struct.Struct("<QIII8s")
FOOTER_LEN = FOOTER.size
BLOOM_BITS_PER_KEY = 10
BLOOM_K = 6


# ---------------------------------------------------------------------------------------
# bloom filter over user keys
# ---------------------------------------------------------------------------------------

def _bloom_positions(hashes: np.ndarray, nbits: int, k: int) -> np.ndarray:
    h1 = hashes & np.uint64(0xFFFFFFFF)
    h2 = (hashes >> np.uint64(32)) | np.uint64(1)
    i = np.arange(k, dtype=np.uint64)
    with np.errstate(over="ignore"):
        return ((h1[:, None] + i[None, :] * h2[:, None]) % np.uint64(nbits)).astype(np.int64)


def _hash_keys(keys: pa.Array) -> np.ndarray:
    return hash_bytes_parts(*binary_parts(keys))


def build_bloom(user_keys: pa.Array, k: int = BLOOM_K) -> bytes:
    n = len(user_keys)
    nbits = max(64, ((n * BLOOM_BITS_PER_KEY + 7) // 8) * 8)
    bits = np.zeros(nbits, dtype=bool)
    if n:
        bits[_bloom_positions(_hash_keys(user_keys), nbits, k).ravel()] = True
    return np.packbits(bits, bitorder="little").tobytes()


def bloom_may_contain(bloom: bytes, k: int, user_keys: pa.Array) -> np.ndarray:
    if not bloom:
        return np.ones(len(user_keys), dtype=bool)
    bits = np.unpackbits(np.frombuffer(bloom, dtype=np.uint8), bitorder="little")
    pos = _bloom_positions(_hash_keys(user_keys), len(bits), k)
    return bits[pos].all(axis=1)


# ---------------------------------------------------------------------------------------
# meta
# ---------------------------------------------------------------------------------------

@dataclass
class BlockMeta:
    offset: int
    length: int
    crc: int
    first_key: bytes  # full key


@dataclass
class SstMeta:
    blocks: list[BlockMeta]
    smallest_key: bytes  # user key
    largest_key: bytes   # user key
    min_epoch: int
    max_epoch: int
    key_count: int
    table_ids: list[int]
    bloom_k: int = BLOOM_K
    bloom: bytes = b""
    _first: list = field(default_factory=list, repr=False)

    def encode(self) -> bytes:
        out = [struct.pack("<II", FORMAT, len(self.blocks))]
        for b in self.blocks:
            out.append(struct.pack("<QIII", b.offset, b.length, b.crc, len(b.first_key)))
            out.append(b.first_key)
        for k in (self.smallest_key, self.largest_key):
            out.append(struct.pack("<I", len(k)))
            out.append(k)
        out.append(struct.pack("<QQQI", self.min_epoch, self.max_epoch, self.key_count, len(self.table_ids)))
        out.append(struct.pack(f"<{len(self.table_ids)}I", *self.table_ids))
        out.append(struct.pack("<II", self.bloom_k, len(self.bloom)))
        out.append(self.bloom)
        return b"".join(out)

    @staticmethod
    def decode(data: bytes) -> "SstMeta":
        try:
            fmt, nb = struct.unpack_from("<II", data, 0)
            if fmt != FORMAT:
                raise StorageError(f"unknown sst format {fmt}")
            p = 8
            blocks = []
            for _ in range(nb):
                off, ln, crc, kl = struct.unpack_from("<QIII", data, p)
                p += 20
                blocks.append(BlockMeta(off, ln, crc, bytes(data[p:p + kl])))
                p += kl
            keys = []
            for _ in range(2):
                (kl,) = struct.unpack_from("<I", data, p)
                p += 4
                keys.append(bytes(data[p:p + kl]))
                p += kl
            min_e, max_e, kc, nt = struct.unpack_from("<QQQI", data, p)
            p += 28
            tids = list(struct.unpack_from(f"<{nt}I", data, p))
            p += 4 * nt
            bk, bl = struct.unpack_from("<II", data, p)
            p += 8
            bloom = bytes(data[p:p + bl])
            if len(bloom) != bl:
                raise StorageError("truncated sst meta")
        except struct.error as e:
            raise StorageError(f"corrupted sst meta: {e}") from e
        return SstMeta(blocks, keys[0], keys[1], min_e, max_e, kc, tids, bk, bloom)

    @property
    def first_keys(self) -> list[tuple[bytes, bytes]]:
        """(user key, inverted epoch bytes) of each block's first entry, for bisecting."""
        if not self._first:
            self._first = [(b.first_key[:-EPOCH_LEN], b.first_key[-EPOCH_LEN:]) for b in self.blocks]
        return self._first


# ---------------------------------------------------------------------------------------
# builder
# ---------------------------------------------------------------------------------------

class SstBuilder:
    """Collects sorted entries and produces one SST object.

    `add(full_key, value)` takes entries one by one (in order); `add_arrays` takes a sorted
    run at once (user keys, epochs, values with nulls for tombstones)."""

    def __init__(self, block_size: int = 65536):
        self.block_size = max(1, block_size)
        self._keys: list[bytes] = []
        self._epochs: list[int] = []
        self._vals: list[bytes | None] = []
        self._runs: list[tuple[pa.Array, np.ndarray, pa.Array]] = []

    def add(self, full_key_: bytes, value: bytes | None) -> None:
        uk, epoch = split_full_key(full_key_)
        self._keys.append(uk)
        self._epochs.append(epoch)
        self._vals.append(value)

    def add_arrays(self, user_keys: pa.Array, epochs: np.ndarray, values: pa.Array) -> None:
        self._flush_list()
        self._runs.append((user_keys, np.asarray(epochs, dtype=np.uint64), values))

    def _flush_list(self) -> None:
        if self._keys:
            self._runs.append((pa.array(self._keys, pa.large_binary()), np.array(self._epochs, dtype=np.uint64),
                               pa.array(self._vals, pa.large_binary())))
            self._keys, self._epochs, self._vals = [], [], []

    @property
    def empty(self) -> bool:
        return not self._keys and not any(len(r[0]) for r in self._runs)

    def finish(self) -> bytes:
        return self.finish_with_meta()[0]

    def finish_with_meta(self) -> tuple[bytes, SstMeta, int]:
        """(object bytes, meta, meta offset)."""
        self._flush_list()
        if self._runs:
            keys = pa.concat_arrays([r[0].cast(pa.large_binary()) for r in self._runs])
            epochs = np.concatenate([r[1] for r in self._runs])
            vals = pa.concat_arrays([r[2].cast(pa.large_binary()) for r in self._runs])
        else:
            keys, epochs, vals = pa.array([], pa.large_binary()), np.zeros(0, np.uint64), pa.array([], pa.large_binary())
        n = len(keys)
        koffs, kdata = binary_parts(keys)
        tomb = null_mask_np(vals)
        voffs, vdata = binary_parts(vals)
        # cut into blocks of ~block_size bytes
        sizes = np.diff(koffs) + np.diff(voffs) + 17
        csum = np.cumsum(sizes) - sizes
        block_of = csum // self.block_size
        starts = np.flatnonzero(np.concatenate([[True], block_of[1:] != block_of[:-1]])) if n else np.zeros(0, np.int64)
        bounds = list(starts) + [n]
        parts: list[bytes] = []
        blocks: list[BlockMeta] = []
        offset = 0
        for bi in range(len(starts)):
            s, e = int(bounds[bi]), int(bounds[bi + 1])
            m = e - s
            ko = (koffs[s:e + 1] - koffs[s]).astype("<u4")
            vo = (voffs[s:e + 1] - voffs[s]).astype("<u4")
            blk = b"".join([
                struct.pack("<I", m), ko.tobytes(), vo.tobytes(),
                epochs[s:e].astype("<u8").tobytes(), tomb[s:e].astype(np.uint8).tobytes(),
                kdata[koffs[s]:koffs[e]].tobytes(), vdata[voffs[s]:voffs[e]].tobytes(),
            ])
            first_uk = kdata[koffs[s]:koffs[s + 1]].tobytes()
            blocks.append(BlockMeta(offset, len(blk), zlib.crc32(blk), full_key(first_uk, int(epochs[s]))))
            parts.append(blk)
            offset += len(blk)
        if n:
            tk = pc.unique(pc.binary_slice(pc.filter(keys, pc.greater_equal(pc.binary_length(keys), 4)), 0, 4))
            table_ids = sorted(struct.unpack(">I", t)[0] for t in tk.to_pylist())
            ukeys = pc.unique(keys)
            meta = SstMeta(blocks, keys[0].as_py(), keys[n - 1].as_py(), int(epochs.min()), int(epochs.max()), n,
                           table_ids, BLOOM_K, build_bloom(ukeys))
        else:
            meta = SstMeta([], b"", b"", 0, 0, 0, [], BLOOM_K, b"")
        meta_bytes = meta.encode()
        meta_offset = offset
        footer = FOOTER.pack(meta_offset, len(meta_bytes), zlib.crc32(meta_bytes), FORMAT, MAGIC)
        parts.append(meta_bytes)
        parts.append(footer)
        return b"".join(parts), meta, meta_offset


def null_mask_np(arr: pa.Array) -> np.ndarray:
    if arr.null_count == 0:
        return np.zeros(len(arr), dtype=bool)
    return arr.is_null().to_numpy(zero_copy_only=False)


# ---------------------------------------------------------------------------------------
# reader
# ---------------------------------------------------------------------------------------

class Block:
    """A decoded data block; arrays are zero-copy views of the block bytes."""

    __slots__ = ("n", "keys", "epochs", "values", "_klist")

    def __init__(self, data: bytes):
        (n,) = struct.unpack_from("<I", data, 0)
        p = 4
        ko = np.frombuffer(data, dtype="<i4", count=n + 1, offset=p)
        p += 4 * (n + 1)
        vo = np.frombuffer(data, dtype="<i4", count=n + 1, offset=p)
        p += 4 * (n + 1)
        self.epochs = np.frombuffer(data, dtype="<u8", count=n, offset=p)
        p += 8 * n
        tomb = np.frombuffer(data, dtype=np.uint8, count=n, offset=p)
        p += n
        klen, vlen = int(ko[-1]), int(vo[-1])
        if p + klen + vlen != len(data):
            raise ValueError("block length mismatch")
        buf = pa.py_buffer(data)
        self.n = n
        self.keys = pa.Array.from_buffers(pa.binary(), n, [None, pa.py_buffer(ko), buf.slice(p, klen)])
        validity = pa.py_buffer(np.packbits(tomb == 0, bitorder="little").tobytes()) if tomb.any() else None
        self.values = pa.Array.from_buffers(pa.binary(), n, [validity, pa.py_buffer(vo), buf.slice(p + klen, vlen)])
        self._klist = None

    def key_list(self) -> list[bytes]:
        if self._klist is None:
            self._klist = self.keys.to_pylist()
        return self._klist

    def seek(self, uk: bytes, inv_epoch: bytes) -> int:
        """Index of the first entry >= (uk, inv_epoch)."""
        keys = self.key_list()
        lo, hi = 0, self.n
        epochs = self.epochs
        target_e = MAX_EPOCH - int.from_bytes(inv_epoch, "big")
        while lo < hi:
            mid = (lo + hi) // 2
            k = keys[mid]
            if k < uk or (k == uk and int(epochs[mid]) > target_e):
                lo = mid + 1
            else:
                hi = mid
        return lo


class SstReader:
    """Reads one SST object. With `meta_offset`/`meta_len` known (from the version), opening
    costs one ranged read of the meta; otherwise the footer is located by reading the object."""

    def __init__(self, object_store: ObjectStore, path: str, *, file_size: int | None = None,
                 meta: SstMeta | None = None, block_cache_blocks: int = 64):
        self.store = object_store
        self.path = path
        self._cache: OrderedDict[int, Block] = OrderedDict()
        self._cache_cap = block_cache_blocks
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
        return SstMeta.decode(raw)

    @staticmethod
    def read_meta(object_store: ObjectStore, path: str, meta_offset: int, meta_len: int,
                  meta_crc: int | None = None) -> SstMeta:
        raw = object_store.get_range(path, meta_offset, meta_len)
        if meta_crc is not None and zlib.crc32(raw) != meta_crc:
            raise StorageError(f"corrupted object {path}: meta checksum mismatch")
        return SstMeta.decode(raw)

    # -- blocks --------------------------------------------------------------------------
    def _decode_block(self, idx: int, data: bytes) -> Block:
        bm = self.meta.blocks[idx]
        if len(data) != bm.length or zlib.crc32(data) != bm.crc:
            raise StorageError(f"corrupted object {self.path}: block {idx} checksum mismatch")
        try:
            return Block(data)
        except (ValueError, struct.error) as e:
            raise StorageError(f"corrupted object {self.path}: block {idx}: {e}") from e

    def _put_cache(self, idx: int, blk: Block) -> None:
        self._cache[idx] = blk
        if len(self._cache) > self._cache_cap:
            self._cache.popitem(last=False)

    def block(self, idx: int) -> Block:
        blk = self._cache.get(idx)
        if blk is not None:
            self._cache.move_to_end(idx)
            return blk
        bm = self.meta.blocks[idx]
        blk = self._decode_block(idx, self.store.get_range(self.path, bm.offset, bm.length))
        self._put_cache(idx, blk)
        return blk

    def blocks(self, lo: int, hi: int) -> list[Block]:
        """Blocks lo..hi-1, fetched with one ranged read for the ones not cached."""
        if lo >= hi:
            return []
        missing = [i for i in range(lo, hi) if i not in self._cache]
        if missing:
            a, b = missing[0], missing[-1]
            start = self.meta.blocks[a].offset
            end = self.meta.blocks[b].offset + self.meta.blocks[b].length
            data = self.store.get_range(self.path, start, end - start)
            for i in range(a, b + 1):
                if i in self._cache:
                    continue
                bm = self.meta.blocks[i]
                self._put_cache(i, self._decode_block(i, data[bm.offset - start:bm.offset - start + bm.length]))
        return [self._cache[i] if i in self._cache else self.block(i) for i in range(lo, hi)]

    def _block_for(self, uk: bytes, inv: bytes) -> int:
        """Index of the last block whose first key <= (uk, inv)."""
        return max(0, bisect_right(self.meta.first_keys, (uk, inv)) - 1)

    # -- reads ---------------------------------------------------------------------------
    def may_contain(self, user_keys: pa.Array) -> np.ndarray:
        return bloom_may_contain(self.meta.bloom, self.meta.bloom_k, user_keys)

    def get(self, user_key: bytes, epoch: int = MAX_EPOCH) -> tuple[bool, bytes | None]:
        """(found, value) of the newest entry of `user_key` with epoch <= `epoch`;
        value None is a tombstone."""
        m = self.meta
        if not m.blocks or user_key < m.smallest_key or user_key > m.largest_key or epoch < m.min_epoch:
            return False, None
        inv = encode_epoch(epoch)
        bi = self._block_for(user_key, inv)
        while bi < len(m.blocks):
            blk = self.block(bi)
            i = blk.seek(user_key, inv)
            if i < blk.n:
                if blk.key_list()[i] != user_key:
                    return False, None
                v = blk.values[i]
                return True, (v.as_py() if v.is_valid else None)
            bi += 1
        return False, None

    def read_range(self, start: bytes, end: bytes | None) -> pa.Table:
        """Every entry (all epochs, tombstones as null values) with start <= user key < end,
        as a table (key, epoch, value), in SST order."""
        m = self.meta
        empty = pa.table({"key": pa.array([], pa.binary()), "epoch": pa.array([], pa.uint64()),
                          "value": pa.array([], pa.binary())})
        if not m.blocks or m.largest_key < start or (end is not None and m.smallest_key >= end):
            return empty
        lo = self._block_for(start, encode_epoch(MAX_EPOCH))
        if end is None:
            hi = len(m.blocks)
        else:
            hi = max(lo + 1, bisect_right(m.first_keys, (end, encode_epoch(MAX_EPOCH))))
            # blocks whose first key < (end, newest) may hold keys < end
            hi = min(hi, len(m.blocks))
        blks = self.blocks(lo, hi)
        if not blks:
            return empty
        t = pa.table({
            "key": pa.chunked_array([b.keys for b in blks], pa.binary()),
            "epoch": pa.chunked_array([pa.array(b.epochs, pa.uint64()) for b in blks], pa.uint64()),
            "value": pa.chunked_array([b.values for b in blks], pa.binary()),
        })
        mask = pc.greater_equal(t["key"], pa.scalar(start, pa.binary()))
        if end is not None:
            mask = pc.and_(mask, pc.less(t["key"], pa.scalar(end, pa.binary())))
        return t.filter(mask)

    def iter(self, start: bytes = b"", end: bytes | None = None, epoch: int = MAX_EPOCH):
        """(user key, value) of live entries visible at `epoch` with start <= key < end."""
        t = self.read_range(start, end)
        keys = t["key"].to_pylist()
        epochs = t["epoch"].to_numpy()
        vals = t["value"].to_pylist()
        last = None
        for k, e, v in zip(keys, epochs, vals):
            if e > epoch or k == last:
                continue
            last = k
            if v is not None:
                yield k, v
