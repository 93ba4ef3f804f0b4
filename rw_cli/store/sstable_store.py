"""The SST store: SST ids, writing SSTs and log segments, reading them through the caches.

Everything that turns runs into objects of the object store and back goes through one
SstableStore: the writer's (its uploader thread, compaction in a thread, reads), a helper
process's (upload_process.py, compactor_process.py) and a Spark task's. They differ only in
where SST ids come from: a writer allocates them (`WriterSstIds`: the version number its open
claimed << 32 | a sequence number, kept "in flight" until a version references the object or
the id is released, so vacuum leaves the object alone), a helper or a task uses the ids the
writer reserved for it (`ReservedSstIds`).
"""
from __future__ import annotations

import threading
import zlib
from collections import Counter
from typing import Iterable, Iterator

import numpy as np
import pyarrow as pa

from rw_cli.errors import StorageError
from rw_cli.store import append_log
from rw_cli.store.append_log import LogBatch
from rw_cli.store.cache import LruCache, META_CACHE_FRACTION, parse_size
from rw_cli.store.object_store import ObjectStore
from rw_cli.store.run import Run
from rw_cli.store.sst import SstBuilder, SstMeta, SstReader
from rw_cli.store.version import LogSegment, SstInfo, log_path, sst_path

DEFAULT_SST_TARGET_SIZE = 64 << 20


class WriterSstIds:
    """The writer's SST ids: `claim << 32 | seq`, in flight until committed or released.
    Guarded by the store's state lock, so that vacuum sees the ids in flight and the
    current version's ids at one instant."""

    def __init__(self, claim: int, lock: threading.RLock):
        self.claim = claim
        self._lock = lock
        self._next_seq = 1
        self._in_flight: set[int] = set()

    def alloc(self) -> int:
        with self._lock:
            sid = (self.claim << 32) | self._next_seq
            self._next_seq += 1
            self._in_flight.add(sid)
            return sid

    def release(self, ids: Iterable[int]) -> None:
        """Ids no longer in flight: committed in a version, or never used."""
        with self._lock:
            self._in_flight.difference_update(ids)

    def in_flight(self) -> set[int]:
        with self._lock:
            return set(self._in_flight)

    def use(self, ids: list[int]) -> None:
        raise StorageError("the writer allocates its own SST ids")


class ReservedSstIds:
    """A helper's or a Spark task's SST ids: the ones the writer reserved for its next piece
    of work (the writer keeps them in flight)."""

    def __init__(self) -> None:
        self._ids: list[int] = []

    def use(self, ids: list[int]) -> None:
        """The ids the writer reserved for the SSTs of the next piece of work."""
        self._ids = list(ids)

    def alloc(self) -> int:
        if not self._ids:
            raise StorageError("a worker wrote more SSTs than the writer reserved ids for")
        return self._ids.pop(0)

    def release(self, ids: Iterable[int]) -> None:
        pass  # the writer releases what it reserved

    def in_flight(self) -> set[int]:
        return set()


class SstableStore:
    """SST and log segment objects of one object store, with the block and meta caches
    every reader of the store shares."""

    def __init__(self, object_store: ObjectStore, ids: WriterSstIds | ReservedSstIds, *,
                 block_size: int = 65536, sst_target_size: int = DEFAULT_SST_TARGET_SIZE,
                 compression: str | None = None, cache_size: int | str = 256 << 20, cache_refill: bool = True,
                 stats: Counter | None = None, closing: threading.Event | None = None):
        self.object_store = object_store
        self.ids = ids
        self.block_size = block_size
        self.sst_target_size = sst_target_size
        self.compression = compression
        self.cache_refill = cache_refill
        cache_size = parse_size(cache_size)
        self.meta_cache = LruCache(int(cache_size * META_CACHE_FRACTION))
        self.block_cache = LruCache(cache_size - self.meta_cache.capacity)
        self.stats = stats if stats is not None else Counter()
        # set when the store closes: a long write gives up, a helper call is abandoned
        self.closing = closing if closing is not None else threading.Event()

    # -- ids ---------------------------------------------------------------------------------
    def alloc_id(self) -> int:
        return self.ids.alloc()

    def release_ids(self, ids: Iterable[int]) -> None:
        self.ids.release(ids)

    def in_flight_ids(self) -> set[int]:
        """Ids allocated and neither committed nor released (objects vacuum must keep)."""
        return self.ids.in_flight()

    def use_ids(self, ids: list[int]) -> None:
        """The ids the writer reserved for this helper's or task's next SSTs."""
        self.ids.use(ids)

    # -- reads -------------------------------------------------------------------------------
    def meta(self, info: SstInfo) -> SstMeta:
        return self.meta_cache.get_or_load(info.id, lambda: self._load_meta(info))

    def _load_meta(self, info: SstInfo) -> tuple[SstMeta, int]:
        m = SstReader.read_meta(self.object_store, info.path, info.meta_offset, info.meta_len, info.meta_crc)
        return m, m.nbytes

    def reader(self, info: SstInfo) -> SstReader:
        return SstReader(self.object_store, info.path, sst_id=info.id, meta=self.meta(info),
                         block_cache=self.block_cache)

    def read_log_segment(self, g: LogSegment) -> pa.Table:
        return append_log.decode(self.object_store.get(g.path), g.path)

    def evict(self, sst_id: int) -> None:
        """Forget the cached blocks of a deleted object."""
        self.block_cache.evict_prefix(lambda k: k[0] == sst_id)

    # -- writes ------------------------------------------------------------------------------
    def write_runs(self, runs: Iterator[Run], pending: list | None = None) -> list[SstInfo]:
        """Write sorted runs as SSTs of about sst_target_size (cut between runs). With
        `pending`, they may not be durable yet on return (see ObjectStore.put_new)."""
        infos: list[SstInfo] = []
        builder: SstBuilder | None = None
        for r in runs:
            while len(r):
                if builder is None:
                    builder = SstBuilder(self.block_size, self.compression)
                    builder.keep_blocks = self.cache_refill
                room = self.sst_target_size - builder.estimated_size
                if r.keys.nbytes + r.values.nbytes > room:
                    cut = cut_at_key(r, room)
                    part, r = r.slice(0, cut), r.slice(cut, len(r))
                else:
                    part, r = r, Run.empty()
                builder.add_run(part)
                if builder.estimated_size >= self.sst_target_size or len(r):
                    infos.append(self._upload(builder, pending))
                    builder = None
            if self.closing.is_set():
                raise StorageError("the state store is closing")
        if builder is not None and not builder.empty:
            infos.append(self._upload(builder, pending))
        return infos

    def _upload(self, builder: SstBuilder, pending: list | None = None) -> SstInfo:
        parts, meta, meta_off = builder.finish_parts()
        sid = self.alloc_id()
        meta_len = len(parts[-2])
        size = meta_off + meta_len + len(parts[-1])
        info = SstInfo(sid, size, meta_off, meta_len, zlib.crc32(parts[-2]),
                       meta.smallest_key, meta.largest_key, meta.min_epoch, meta.max_epoch,
                       meta.key_count, meta.table_ids)
        self.object_store.put_new(sst_path(sid), parts, pending)  # in no version yet: see put_new
        self.stats["sst_uploads"] += 1
        self.stats["bytes_uploaded"] += size
        self.meta_cache.put(sid, meta, meta.nbytes)
        if builder.keep_blocks:
            SstReader(self.object_store, info.path, sst_id=sid, meta=meta,
                      block_cache=self.block_cache).preload(builder.blocks)
        return info

    def adopt_uploaded(self, infos: list[SstInfo], metas: list[SstMeta | None]) -> None:
        """SSTs another process (the upload process) wrote for this store: counted, and their
        metas cached, as if written here."""
        for info, meta in zip(infos, metas):
            self.stats["sst_uploads"] += 1
            self.stats["bytes_uploaded"] += info.file_size
            if meta is not None:
                self.meta_cache.put(info.id, meta, meta.nbytes)

    def write_logs(self, batches: list[LogBatch], pending: list | None = None) -> list[LogSegment]:
        """A checkpoint's appended rows: one segment per table (`pending`: see write_runs)."""
        out = []
        for table_id, bs in append_log.by_table(batches).items():
            out.append(self.write_log_segment(table_id, append_log.concat([b.rows for b in bs]),
                                              bs[0].epoch, bs[-1].epoch, 0, pending=pending))
        return out

    def write_log_segment(self, table_id: int, rows: pa.Table, min_epoch: int, max_epoch: int, level: int,
                          stat: str = "bytes_uploaded", pending: list | None = None) -> LogSegment:
        data = append_log.encode(rows, self.compression)
        sid = self.alloc_id()
        self.object_store.put_new(log_path(sid), data, pending)  # in no version yet: see put_new
        self.stats["log_uploads" if level == 0 else "log_merges_written"] += 1
        self.stats[stat] += data.size
        return LogSegment(sid, table_id, min_epoch, max_epoch, rows.num_rows, data.size, level)


def cut_at_key(r: Run, room: int) -> int:
    """A position in (0, len(r)] where a user key starts, after about `room` bytes."""
    from rw_cli.common.vnode import binary_parts
    ko, _ = binary_parts(r.keys)
    vo, _ = binary_parts(r.values)
    sizes = ko[1:] + vo[1:]
    i = int(np.searchsorted(sizes, max(1, room), "left")) + 1
    i = min(max(i, 1), len(r))
    starts = np.flatnonzero(r.key_starts())
    j = int(np.searchsorted(starts, i, "left"))
    return int(starts[j]) if j < len(starts) else len(r)
