"""HummockStorage: shared buffer + L0 SSTs + versions over an object store.

Write path: `ingest_batch(kvs, epoch)` puts an immutable sorted batch into the shared buffer;
`commit_epoch(epoch)` merges every buffered batch with epoch' <= epoch into one (or a few) new
SSTs, uploads them, then commits a new version (the commit point). Read path: the shared
buffer (newest first) then the SSTs of the current version (L0 newest first); the newest entry
of a key with epoch' <= read epoch wins, a tombstone hides the key.
"""
from __future__ import annotations

import threading
import zlib
from bisect import bisect_left
from dataclasses import dataclass
from typing import Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rw_cli.errors import StorageError
from rw_cli.store.keys import MAX_EPOCH
from rw_cli.store.object_store import ObjectStore
from rw_cli.store.sst import FOOTER_LEN, SstBuilder, SstReader
from rw_cli.store.version import (SST_PREFIX, HummockVersion, SstInfo, VersionStore,
                                  parse_sst_id, sst_path, version_path)

__all__ = ["HummockStorage", "MAX_EPOCH"]

DEFAULT_SST_TARGET_SIZE = 64 << 20


@dataclass
class _Batch:
    epoch: int
    seq: int
    keys: list[bytes]          # sorted, unique
    values: list[bytes | None]
    d: dict[bytes, bytes | None]
    _table: pa.Table | None = None

    def table(self) -> pa.Table:
        if self._table is None:
            n = len(self.keys)
            self._table = pa.table({
                "key": pa.array(self.keys, pa.binary()),
                "epoch": pa.array(np.full(n, self.epoch, dtype=np.uint64), pa.uint64()),
                "value": pa.array(self.values, pa.binary()),
            })
        return self._table

    def range_table(self, start: bytes, end: bytes | None) -> pa.Table:
        lo = bisect_left(self.keys, start)
        hi = len(self.keys) if end is None else bisect_left(self.keys, end)
        return self.table().slice(lo, max(0, hi - lo))


def _empty_table() -> pa.Table:
    return pa.table({"key": pa.array([], pa.binary()), "epoch": pa.array([], pa.uint64()),
                     "value": pa.array([], pa.binary())})


def _first_per_key(t: pa.Table, cols: tuple[str, ...] = ("key",)) -> pa.Table:
    """Keep the first row of each run of equal `cols` in a sorted table."""
    n = t.num_rows
    if n <= 1:
        return t
    mask = None
    for c in cols:
        col = t[c]
        ne = pc.not_equal(col.slice(1), col.slice(0, n - 1))
        mask = ne if mask is None else pc.or_(mask, ne)
    mask = pa.concat_arrays([pa.array([True])] + [ch for ch in pa.chunked_array(mask).chunks])
    return t.filter(mask)


def merge_tables(tables: list[pa.Table], epoch: int) -> pa.Table:
    """Newest visible entry per key (tombstones included as null values), sorted by key.
    `tables` are ordered newest source first (the rank breaks (key, epoch) ties)."""
    tables = [t for t in tables if t.num_rows]
    if not tables:
        return _empty_table()
    ranked = [t.append_column("rank", pa.array(np.full(t.num_rows, i, dtype=np.int32)))
              for i, t in enumerate(tables)]
    t = pa.concat_tables(ranked)
    if epoch < MAX_EPOCH:
        t = t.filter(pc.less_equal(t["epoch"], pa.scalar(epoch, pa.uint64())))
    if len(tables) > 1 or epoch < MAX_EPOCH:
        t = t.sort_by([("key", "ascending"), ("epoch", "descending"), ("rank", "ascending")])
        t = _first_per_key(t)
    elif tables:
        # one source at MAX_EPOCH: already sorted by (key, epoch desc)
        t = _first_per_key(t)
    return t.drop_columns(["rank"])


class HummockStorage:
    def __init__(self, object_store: ObjectStore, *, block_size: int = 65536,
                 sst_target_size: int = DEFAULT_SST_TARGET_SIZE):
        self.object_store = object_store
        self.block_size = block_size
        self.sst_target_size = sst_target_size
        self._versions = VersionStore(object_store)
        self._lock = threading.RLock()
        self._version: HummockVersion = self._versions.load_current()
        self._readers: dict[int, SstReader] = {}
        self._buffer: list[_Batch] = []  # sorted by (epoch, seq)
        self._seq = 0
        ids = [i for p in object_store.list(SST_PREFIX) if (i := parse_sst_id(p)) is not None]
        ids += [s.id for s in self._version.ssts()]
        self._next_sst_id = max(ids, default=0) + 1
        self._closed = False

    # -- state ---------------------------------------------------------------------------
    @property
    def committed_epoch(self) -> int:
        return self._version.max_committed_epoch

    @property
    def extra(self) -> bytes:
        return self._version.extra

    @property
    def version(self) -> HummockVersion:
        return self._version

    def _reader(self, info: SstInfo) -> SstReader:
        r = self._readers.get(info.id)
        if r is None:
            meta = SstReader.read_meta(self.object_store, info.path, info.meta_offset, info.meta_len, info.meta_crc)
            r = SstReader(self.object_store, info.path, meta=meta)
            self._readers[info.id] = r
        return r

    # -- writes --------------------------------------------------------------------------
    def ingest_batch(self, kvs: list[tuple[bytes, bytes | None]], epoch: int) -> None:
        if epoch <= self.committed_epoch:
            raise StorageError(f"cannot write at epoch {epoch}: epoch {self.committed_epoch} is already committed")
        if not kvs:
            return
        d = dict(kvs)
        keys = sorted(d)
        values = [d[k] for k in keys]
        with self._lock:
            self._seq += 1
            b = _Batch(epoch, self._seq, keys, values, d)
            pos = len(self._buffer)
            while pos > 0 and self._buffer[pos - 1].epoch > epoch:
                pos -= 1
            self._buffer.insert(pos, b)

    def commit_epoch(self, epoch: int, extra: bytes | None = None) -> None:
        with self._lock:
            if epoch < self.committed_epoch:
                raise StorageError(f"cannot commit epoch {epoch}: epoch {self.committed_epoch} is already committed")
            batches = [b for b in self._buffer if b.epoch <= epoch]
            new_ssts: list[SstInfo] = []
            if batches:
                new_ssts = self._build_ssts(batches)
            old = self._version
            v = HummockVersion(
                id=old.id + 1, max_committed_epoch=epoch,
                levels=[new_ssts + list(old.levels[0])] + [list(lv) for lv in old.levels[1:]],
                extra=old.extra if extra is None else bytes(extra),
            )
            self._versions.commit(v)
            self._version = v
            done = {id(b) for b in batches}
            self._buffer = [b for b in self._buffer if id(b) not in done]

    def _build_ssts(self, batches: list[_Batch]) -> list[SstInfo]:
        # newest batch first so that the rank breaks (key, epoch) ties in favour of later writes
        tables = [b.table() for b in sorted(batches, key=lambda b: (b.epoch, b.seq), reverse=True)]
        ranked = [t.append_column("rank", pa.array(np.full(t.num_rows, i, dtype=np.int32)))
                  for i, t in enumerate(tables)]
        t = pa.concat_tables(ranked).sort_by([("key", "ascending"), ("epoch", "descending"), ("rank", "ascending")])
        t = _first_per_key(t, ("key", "epoch")).combine_chunks()
        keys = t["key"].chunk(0) if t["key"].num_chunks else pa.array([], pa.binary())
        epochs = t["epoch"].to_numpy()
        values = t["value"].chunk(0) if t["value"].num_chunks else pa.array([], pa.binary())
        n = len(keys)
        if n == 0:
            return []
        # split into SSTs of ~sst_target_size at user-key boundaries
        sizes = pc.add(pc.binary_length(keys), pc.fill_null(pc.binary_length(values), 0)).to_numpy().astype(np.int64) + 17
        csum = np.cumsum(sizes) - sizes
        part = csum // max(1, self.sst_target_size)
        key_start = np.ones(n, dtype=bool)
        if n > 1:
            key_start[1:] = pc.not_equal(keys.slice(1), keys.slice(0, n - 1)).to_numpy(zero_copy_only=False)
        # a cut is allowed only where a new user key starts
        cut = np.zeros(n, dtype=bool)
        cut[0] = True
        if n > 1:
            cut[1:] = (part[1:] != part[:-1])
        starts: list[int] = []
        for i in np.flatnonzero(cut).tolist():
            j = i
            while j < n and not key_start[j]:
                j += 1
            if j < n and (not starts or j > starts[-1]):
                starts.append(j)
        bounds = starts + [n]
        infos = []
        for s, e in zip(bounds[:-1], bounds[1:]):
            b = SstBuilder(self.block_size)
            b.add_arrays(keys.slice(s, e - s), epochs[s:e], values.slice(s, e - s))
            data, meta, meta_off = b.finish_with_meta()
            sid = self._next_sst_id
            self._next_sst_id += 1
            meta_len = len(data) - meta_off - FOOTER_LEN
            info = SstInfo(sid, len(data), meta_off, meta_len, zlib.crc32(data[meta_off:meta_off + meta_len]),
                           meta.smallest_key, meta.largest_key, meta.min_epoch, meta.max_epoch,
                           meta.key_count, meta.table_ids)
            self.object_store.put(sst_path(sid), data)
            self._readers[sid] = SstReader(self.object_store, info.path, meta=meta)
            infos.append(info)
        return infos

    # -- reads ---------------------------------------------------------------------------
    def get(self, key: bytes, epoch: int = MAX_EPOCH) -> bytes | None:
        return self.multi_get([key], epoch)[0]

    def multi_get(self, keys: list[bytes], epoch: int = MAX_EPOCH) -> list[bytes | None]:
        n = len(keys)
        out: list[bytes | None] = [None] * n
        if n == 0:
            return out
        buffer = list(self._buffer)
        version = self._version
        remaining = list(range(n))
        for b in reversed(buffer):
            if b.epoch > epoch or not remaining:
                continue
            d = b.d
            still = []
            for i in remaining:
                k = keys[i]
                if k in d:
                    out[i] = d[k]
                else:
                    still.append(i)
            remaining = still
        for info in version.ssts():
            if not remaining:
                break
            if info.min_epoch > epoch:
                continue
            cand = [i for i in remaining if info.smallest_key <= keys[i] <= info.largest_key]
            if not cand:
                continue
            r = self._reader(info)
            maybe = r.may_contain(pa.array([keys[i] for i in cand], pa.binary()))
            found = set()
            for i, m in zip(cand, maybe.tolist()):
                if not m:
                    continue
                ok, v = r.get(keys[i], epoch)
                if ok:
                    out[i] = v
                    found.add(i)
            if found:
                remaining = [i for i in remaining if i not in found]
        return out

    def scan_table(self, start: bytes, end: bytes | None, epoch: int = MAX_EPOCH,
                   include_tombstones: bool = False) -> pa.Table:
        """(key, epoch, value) of the newest visible entry of each key in [start, end), sorted;
        tombstones dropped unless asked for (then their value is null)."""
        buffer = list(self._buffer)
        version = self._version
        tables = []
        for b in reversed(buffer):
            if b.epoch <= epoch:
                tables.append(b.range_table(start, end))
        for info in version.ssts():
            if info.min_epoch > epoch or info.largest_key < start or (end is not None and info.smallest_key >= end):
                continue
            tables.append(self._reader(info).read_range(start, end))
        t = merge_tables(tables, epoch)
        if not include_tombstones and t["value"].null_count:
            t = t.filter(pc.is_valid(t["value"]))
        return t

    def iter(self, start: bytes, end: bytes | None, epoch: int = MAX_EPOCH) -> Iterator[tuple[bytes, bytes]]:
        t = self.scan_table(start, end, epoch)
        for batch in t.to_batches(max_chunksize=4096):
            yield from zip(batch.column(0).to_pylist(), batch.column(2).to_pylist())

    # -- maintenance ---------------------------------------------------------------------
    def vacuum(self) -> int:
        """Delete SST objects the current version does not reference and older versions.
        Returns the number of objects deleted."""
        with self._lock:
            referenced = {s.id for s in self._version.ssts()}
            n = 0
            for p in self.object_store.list(SST_PREFIX):
                sid = parse_sst_id(p)
                if sid is not None and sid not in referenced:
                    self.object_store.delete(p)
                    self._readers.pop(sid, None)
                    n += 1
            for vid in self._versions.version_ids():
                if vid < self._version.id:
                    self.object_store.delete(version_path(vid))
                    n += 1
            return n

    def close(self) -> None:
        with self._lock:
            self._buffer = []
            self._readers = {}
            self._closed = True
