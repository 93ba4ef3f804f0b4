"""HummockStorage: shared buffer + leveled SSTs + versions over an object store.

Write path: `ingest_batch`/`ingest_arrays(keys, values, epoch)` put an immutable sorted batch
(Arrow arrays) into the shared buffer; `commit_epoch(epoch)` hands every buffered batch with
epoch' <= epoch to the uploader thread, which merges them into one or a few SSTs, uploads
them and commits a new version (the commit point); `wait=False` returns at once. With
`uploader="process"` the merging and uploading run in the upload process
(`rw_cli.store.upload_process`) and the thread only commits.

Append logs (`append_rows`, `read_log`): tables whose rows are only ever inserted are kept as
columnar segments listed in the version, committed with the same checkpoints (append_log.py).

Read path: shared buffer batches (newest first), then L0 SSTs (newest first), then levels
1.. (non-overlapping); the newest entry of a key at or below the read epoch wins and a
tombstone hides it. Point lookups are batched (`multi_get_array`), scans stream Runs.

Writers: a writable open takes the store's writer lease (`rw_cli.store.lease`), so a second
live writer is refused at open, wherever it runs; read-only opens take none. Opening also
claims the next version number (put-if-absent), so an older writer still running (one that
lost its lease) is fenced off: its next commit fails. SST ids start with the claim's number. Pinned
snapshots keep their version's SSTs from vacuum and their epoch above the compaction low
watermark.
"""
from __future__ import annotations

import bisect
import sys
import threading
import time
import zlib
from collections import Counter
from typing import Callable, Iterator

import numpy as np
import pyarrow as pa

from rw_cli.errors import StorageError
from rw_cli.store import append_log
from rw_cli.store.append_log import LogBatch, LogDrop
from rw_cli.store.cache import DEFAULT_CACHE_SIZE, META_CACHE_FRACTION, LruCache, parse_size
from rw_cli.store.keys import MAX_EPOCH, KeyForm, argsort_sortable, next_key, sortable_keys, table_key_prefix
from rw_cli.store.lease import DEFAULT_HEARTBEAT_SECS, WriterLease
from rw_cli.store.merge import dedup_same_epoch, merge_runs
from rw_cli.store.object_store import ObjectStore
from rw_cli.store.run import EMPTY_BINARY, Run, as_binary, key_lengths
from rw_cli.store.sst import FOOTER_LEN, SstBuilder, SstMeta, SstReader, key_hashes
from rw_cli.store.version import (LOG_PREFIX, SST_PREFIX, HummockVersion, LogSegment, SstInfo, VersionStore,
                                  log_path, parse_sst_id, sst_path, version_path)

__all__ = ["HummockStorage", "Snapshot", "MAX_EPOCH"]

DEFAULT_SST_TARGET_SIZE = 64 << 20
SCAN_BATCH_BYTES = 1 << 20
COMPACTION_IDLE_SECS = 0.2


class _Batch:
    """An immutable batch of the shared buffer (one per ingest), sorted by key (the last
    write of a key wins) at its first read — usually by the uploader thread building its
    SSTs, so the sort runs beside the stream instead of in it."""

    __slots__ = ("epoch", "seq", "_raw", "_run", "_lock", "form", "uploading")

    def __init__(self, epoch: int, seq: int, keys: pa.Array, values: pa.Array):
        self.epoch = epoch
        self.seq = seq
        self._raw: tuple[pa.Array, pa.Array] | None = (keys, values)
        self._run: Run | None = None
        self._lock = threading.Lock()
        self.form = KeyForm.of_lengths(key_lengths(keys))
        self.uploading = False

    @property
    def run(self) -> Run:
        if self._run is None:
            with self._lock:
                if self._run is None:
                    keys, values = sort_unique(*self._raw)
                    self._run = Run(keys, np.full(len(keys), self.epoch, dtype=np.uint64), values, unique=True)
                    self._raw = None
        return self._run

    def arrays(self) -> tuple[pa.Array, pa.Array]:
        """The keys and values (sorted if a read sorted them already)."""
        with self._lock:
            if self._raw is not None:
                return self._raw
            return self._run.keys, self._run.values

    def range_run(self, start: bytes, end: bytes | None) -> Run:
        sk = self.run.skeys(self.form)
        r = self.run
        lo = _search(r, sk, self.form, start)
        hi = len(r) if end is None else _search(r, sk, self.form, end)
        return r.slice(lo, max(lo, hi))


def _search(run: Run, sk: np.ndarray, form: KeyForm, key: bytes) -> int:
    """Number of entries of `run` whose key < `key`."""
    from rw_cli.store.keys import sortable_one
    one = sortable_one(key, form)
    if one is not None:
        return int(np.searchsorted(sk, np.array(one, sk.dtype), "left"))
    import pyarrow.compute as pc
    return int(pc.sum(pc.less(run.keys, pa.scalar(key, pa.binary()))).as_py() or 0)


def sort_unique(keys: pa.Array, values: pa.Array) -> tuple[pa.Array, pa.Array]:
    """Sort a batch by key; of equal keys the last one wins."""
    n = len(keys)
    if n <= 1:
        return keys, values
    form = KeyForm.of_lengths(key_lengths(keys))
    sk, _ = sortable_keys(keys, form)
    order = argsort_sortable(sk)
    s = sk[order]
    last = np.ones(n, dtype=bool)
    last[:-1] = s[1:] != s[:-1]
    if last.all() and bool((order[1:] > order[:-1]).all()):
        return keys, values
    idx = pa.array(order[last], pa.int64())
    return keys.take(idx), values.take(idx)


class Snapshot:
    """A pinned (version, epoch): readable until unpinned, whatever compaction does."""

    def __init__(self, store: "HummockStorage", version: HummockVersion, epoch: int):
        self.store = store
        self.version = version
        self.epoch = epoch
        self.pinned = True

    def get(self, key: bytes) -> bytes | None:
        return self.store.get(key, self.epoch, snapshot=self)

    def multi_get(self, keys: list[bytes]) -> list[bytes | None]:
        return self.store.multi_get(keys, self.epoch, snapshot=self)

    def iter(self, start: bytes = b"", end: bytes | None = None):
        return self.store.iter(start, end, self.epoch, snapshot=self)

    def scan_table(self, start: bytes = b"", end: bytes | None = None) -> pa.Table:
        return self.store.scan_table(start, end, self.epoch, snapshot=self)

    def close(self) -> None:
        self.store.unpin(self)

    def __enter__(self) -> "Snapshot":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class _CommitTask:
    def __init__(self, epoch: int, extra: bytes | None, batches: list[_Batch],
                 logs: list[LogBatch] | None = None, drops: list[LogDrop] | None = None):
        self.epoch = epoch
        self.extra = extra
        self.batches = batches
        self.logs = logs or []
        self.drops = drops or []
        # SSTs and log segments written elsewhere (Spark tasks) for these epochs
        self.adopted: list[SstInfo | LogSegment] = []
        self.done = threading.Event()
        self.error: BaseException | None = None


class HummockStorage:
    def __init__(self, object_store: ObjectStore, *, block_size: int = 65536,
                 sst_target_size: int = DEFAULT_SST_TARGET_SIZE, cache_size: int | str = DEFAULT_CACHE_SIZE,
                 compression: str | None = None, l0_trigger: int = 4, l0_stall: int | None = None, level_base_size: int = 256 << 20,
                 level_multiplier: int = 10, max_levels: int = 7, background_compaction: bool = True,
                 cache_refill: bool = True, read_only: bool = False,
                 lease_heartbeat_secs: float = DEFAULT_HEARTBEAT_SECS, compactor: str = "auto",
                 uploader: str = "thread"):
        self.object_store = object_store
        self.block_size = block_size
        self.sst_target_size = sst_target_size
        self.compression = compression
        self.l0_trigger = l0_trigger
        # under a stream of checkpoints L0 grows to this many files before compaction runs:
        # fewer, larger L0 -> L1 merges (each rewrites L1), as RisingWave lets L0 grow into
        # many sub-levels before it compacts them
        self.l0_stall = l0_stall if l0_stall is not None else max(3 * l0_trigger, 24)
        self._last_commit = 0.0
        self.level_base_size = level_base_size
        self.level_multiplier = level_multiplier
        self.max_levels = max(2, max_levels)
        self.cache_refill = cache_refill
        self.read_only = read_only
        cache_size = parse_size(cache_size)
        self.meta_cache = LruCache(int(cache_size * META_CACHE_FRACTION))
        self.block_cache = LruCache(cache_size - self.meta_cache.capacity)
        self._versions = VersionStore(object_store)
        self._lock = threading.RLock()
        self._cond = threading.Condition(self._lock)
        self._compact_lock = threading.Lock()
        self._version_lock = threading.Lock()  # version writers take turns (see _commit_version)
        self._buffer: list[_Batch] = []  # sorted by (epoch, seq)
        self._logs: list[LogBatch] = []  # append logs' rows not yet committed, in append order
        self._log_drops: list[LogDrop] = []
        self._seq = 0
        self._pinned_versions: Counter[int] = Counter()
        self._pinned_version_objs: dict[int, HummockVersion] = {}
        self._pinned_epochs: Counter[int] = Counter()
        self._inflight: set[int] = set()
        self._queue: list[_CommitTask] = []
        self._requested_epoch = 0
        self._failed: BaseException | None = None
        self._closed = False
        self._stop = False
        self._threads: list[threading.Thread] = []
        self._compact_wanted = False
        self.compaction_error: BaseException | None = None
        self.stats = Counter()
        self._lease: WriterLease | None = None
        if not read_only:
            # refused here while another live writer holds the store
            self._lease = WriterLease(object_store, lease_heartbeat_secs, on_lost=self._lease_lost)
            self._lease.acquire()
        try:
            version = self._versions.load_current()
            if read_only:
                self._claim = version.id
                self._version = version
            else:
                # second line of defence: an older writer still running is fenced on its next commit
                claim = version.copy(id=version.id + 1)
                self._versions.commit(claim)
                self._version = claim
                self._claim = claim.id
            self._requested_epoch = self._version.max_committed_epoch
            self._requested_extra: bytes | None = None
            # versions below this epoch may have been collapsed by an earlier compaction
            self._watermark_floor = self._version.max_committed_epoch
            self._next_seq = 1
            self._background = background_compaction and not read_only
            # background compaction in a compactor process (the default when one can open
            # the object store), or in a thread of this one
            from rw_cli.store.worker_process import available
            self._remote_compaction = self._background and compactor != "thread" and available(self)
            # a checkpoint's SSTs built by the upload process ("process", or "auto" when one
            # can open the object store), or by the uploader thread
            self._remote_upload = not read_only and uploader != "thread" and available(self)
            if self._remote_upload:
                from rw_cli.store import upload_process
                upload_process.start()
            if not read_only:
                self._vacuum_objects()
                self._kick_compaction()
        except BaseException:
            if self._lease is not None:
                self._lease.release()
            raise

    def _lease_lost(self, error: StorageError) -> None:
        with self._lock:
            if self._failed is None:
                self._failed = error

    # -- state ---------------------------------------------------------------------------
    @property
    def committed_epoch(self) -> int:
        return self._version.max_committed_epoch

    @property
    def requested_extra(self) -> bytes:
        """The `extra` of the newest requested commit (the committed one if none is pending)."""
        with self._lock:
            return self._version.extra if self._requested_extra is None else self._requested_extra

    @property
    def failed(self) -> BaseException | None:
        """The error that stopped this store from committing (an upload failure, a lost lease)."""
        return self._failed

    def check(self) -> None:
        """Raise the error of a failed background commit, if any."""
        if self._failed is not None:
            raise StorageError(f"the state store failed: {self._failed}",
                               hint="restart to recover from the last committed epoch")

    def pending_commits(self) -> int:
        """Commits requested and not yet durable."""
        with self._lock:
            return len(self._queue)

    @property
    def extra(self) -> bytes:
        return self._version.extra

    @property
    def version(self) -> HummockVersion:
        return self._version

    def _alloc_sst_id(self) -> int:
        with self._lock:
            sid = (self._claim << 32) | self._next_seq
            self._next_seq += 1
            self._inflight.add(sid)
            return sid

    def _meta(self, info: SstInfo) -> SstMeta:
        return self.meta_cache.get_or_load(info.id, lambda: self._load_meta(info))

    def _load_meta(self, info: SstInfo) -> tuple[SstMeta, int]:
        m = SstReader.read_meta(self.object_store, info.path, info.meta_offset, info.meta_len, info.meta_crc)
        return m, m.nbytes

    def _reader(self, info: SstInfo) -> SstReader:
        return SstReader(self.object_store, info.path, sst_id=info.id, meta=self._meta(info),
                         block_cache=self.block_cache)

    # -- pins ----------------------------------------------------------------------------
    def _pin_version(self) -> HummockVersion:
        with self._lock:
            v = self._version
            self._pinned_versions[v.id] += 1
            self._pinned_version_objs[v.id] = v
            return v

    def _unpin_version(self, v: HummockVersion) -> None:
        with self._lock:
            self._pinned_versions[v.id] -= 1
            if self._pinned_versions[v.id] <= 0:
                del self._pinned_versions[v.id]
                if v.id != self._version.id:
                    self._pinned_version_objs.pop(v.id, None)

    def pin_snapshot(self, epoch: int | None = None) -> Snapshot:
        """Pin the current version at `epoch` (default: the committed epoch)."""
        with self._lock:
            e = self.committed_epoch if epoch is None else epoch
            if e < self._watermark_floor:
                raise StorageError(f"epoch {e} is no longer readable: compaction has collapsed versions up to "
                                   f"epoch {self._watermark_floor}")
            v = self._pin_version()
            self._pinned_epochs[e] += 1
            return Snapshot(self, v, e)

    def unpin(self, snap: Snapshot) -> None:
        with self._lock:
            if not snap.pinned:
                return
            snap.pinned = False
            self._pinned_epochs[snap.epoch] -= 1
            if self._pinned_epochs[snap.epoch] <= 0:
                del self._pinned_epochs[snap.epoch]
            self._unpin_version(snap.version)

    def low_watermark(self) -> int:
        """The lowest epoch compaction must keep readable; what it returns stays readable
        (later pins at older epochs are refused)."""
        with self._lock:
            wm = min([self.committed_epoch, *self._pinned_epochs])
            self._watermark_floor = max(self._watermark_floor, wm)
            return wm

    # -- writes --------------------------------------------------------------------------
    def _check_writable(self, epoch: int) -> None:
        if self.read_only:
            raise StorageError("the state store was opened read-only")
        if self._failed is not None:
            raise StorageError(f"the state store failed earlier: {self._failed}")
        if epoch <= self._requested_epoch:
            raise StorageError(f"cannot write at epoch {epoch}: epoch {self._requested_epoch} is already committed")

    def ingest_batch(self, kvs, epoch: int) -> None:
        """Write (key, value | None) pairs at `epoch`; of equal keys the last one wins."""
        if isinstance(kvs, dict):
            kvs = list(kvs.items())
        self._check_writable(epoch)
        if not kvs:
            return
        keys, values = zip(*kvs)
        self.ingest_arrays(pa.array(keys, pa.binary()), pa.array(values, pa.binary()), epoch)

    def ingest_arrays(self, keys: pa.Array, values: pa.Array, epoch: int) -> None:
        """Vectorized write: `values` nulls are deletes."""
        self._check_writable(epoch)
        keys, values = as_binary(keys), as_binary(values)
        if len(keys) != len(values):
            raise ValueError("keys and values differ in length")
        if not len(keys):
            return
        with self._lock:
            self._seq += 1
            b = _Batch(epoch, self._seq, keys, values)  # sorted at its first read
            pos = len(self._buffer)
            while pos > 0 and self._buffer[pos - 1].epoch > epoch:
                pos -= 1
            self._buffer.insert(pos, b)

    def commit_epoch(self, epoch: int, extra: bytes | None = None, wait: bool = True) -> None:
        """Make everything written at epochs <= `epoch` durable, with `extra` (e.g. the
        catalog) stored in the same version. With wait=False the upload runs in the
        background; `sync()` waits for it."""
        with self._lock:
            if self.read_only:
                raise StorageError("the state store was opened read-only")
            if self._failed is not None:
                raise StorageError(f"the state store failed earlier: {self._failed}")
            if epoch < self._requested_epoch:
                raise StorageError(f"cannot commit epoch {epoch}: epoch {self._requested_epoch} is already committed")
            batches = [b for b in self._buffer if b.epoch <= epoch and not b.uploading]
            logs = [b for b in self._logs if b.epoch <= epoch and not b.uploading]
            drops = [d for d in self._log_drops if d.epoch <= epoch and not d.uploading]
            for b in [*batches, *logs, *drops]:
                b.uploading = True
            task = _CommitTask(epoch, None if extra is None else bytes(extra), batches, logs, drops)
            adopted = getattr(self, "_adopted", [])
            task.adopted = [s for e, ss in adopted if e <= epoch for s in ss]
            self._adopted = [(e, ss) for e, ss in adopted if e > epoch]
            self._requested_epoch = epoch
            if extra is not None:
                self._requested_extra = task.extra
            self._queue.append(task)
            self._ensure_threads()
            self._cond.notify_all()
        if wait:
            task.done.wait()
            if task.error is not None:
                raise task.error

    def adopt_ssts(self, epoch: int, ssts: list[SstInfo | LogSegment]) -> None:
        """SSTs (and log segments) that others (Spark tasks) wrote for `epoch` with ids from
        `_alloc_sst_id`: they become part of the version that commits `epoch`."""
        with self._lock:
            self._check_writable(epoch)
            self._adopted = [*getattr(self, "_adopted", []), (epoch, list(ssts))]

    def release_sst_ids(self, ids) -> None:
        """Reserved SST ids that were not used (vacuum may delete such objects again)."""
        with self._lock:
            self._inflight.difference_update(ids)

    def discard_uncommitted(self) -> None:
        """Forget every write not yet handed to a commit (an epoch that failed as a whole)."""
        self.sync()
        with self._lock:
            for _, ss in getattr(self, "_adopted", []):
                self._inflight.difference_update(s.id for s in ss)
            self._adopted = []
            self._buffer = [b for b in self._buffer if b.uploading]
            self._logs = [b for b in self._logs if b.uploading]
            self._log_drops = [d for d in self._log_drops if d.uploading]

    def sync(self) -> None:
        """Wait until every requested commit is durable."""
        self.wait_for_commits(0)

    def wait_for_commits(self, max_pending: int = 0) -> None:
        """Wait until at most `max_pending` requested commits are not yet durable (the
        oldest finish first); raise the error of any that failed."""
        with self._lock:
            tasks = list(self._queue)
        for t in tasks[:max(0, len(tasks) - max_pending)]:
            t.done.wait()
            if t.error is not None:
                raise t.error
        if self._failed is not None:
            self.check()

    def _ensure_threads(self) -> None:
        if self._threads:
            return
        t = threading.Thread(target=self._uploader_loop, name="hummock-uploader", daemon=True)
        t.start()
        self._threads.append(t)
        if self._background:
            c = threading.Thread(target=self._compactor_loop, name="hummock-compactor", daemon=True)
            c.start()
            self._threads.append(c)

    def _uploader_loop(self) -> None:
        while True:
            with self._lock:
                while not self._queue and not self._stop:
                    self._cond.wait()
                if not self._queue:
                    return
                task = self._queue[0]
            try:
                if self._failed is not None:
                    raise StorageError(f"the state store failed earlier: {self._failed}")
                self._run_commit(task)
            except BaseException as e:  # noqa: BLE001 - handed to the waiter
                task.error = e if isinstance(e, StorageError) else StorageError(f"commit failed: {e}")
                with self._lock:
                    self._failed = task.error
            with self._lock:
                self._queue.pop(0)
                task.done.set()
                self._cond.notify_all()

    def _run_commit(self, task: _CommitTask) -> None:
        new_ssts: list[SstInfo] = []
        if task.batches:
            new_ssts = self._write_batches(task.batches)
        segments = [a for a in task.adopted if isinstance(a, LogSegment)] + self._write_logs(task.logs)
        new_ssts = [a for a in task.adopted if isinstance(a, SstInfo)] + new_ssts

        def make(old: HummockVersion) -> HummockVersion:
            v = old.copy(id=old.id + 1, max_committed_epoch=task.epoch,
                         extra=old.extra if task.extra is None else task.extra)
            v.levels[0] = new_ssts + v.levels[0]
            for d in task.drops:
                v.logs.pop(d.table_id, None)
            for g in sorted(segments, key=lambda g: g.min_epoch):
                v.logs.setdefault(g.table_id, []).append(g)
            return v

        def installed(v: HummockVersion) -> None:
            self._last_commit = time.monotonic()
            done = {id(b) for b in [*task.batches, *task.logs, *task.drops]}
            self._buffer = [b for b in self._buffer if id(b) not in done]
            self._logs = [b for b in self._logs if id(b) not in done]
            self._log_drops = [d for d in self._log_drops if id(d) not in done]
            self._inflight.difference_update(s.id for s in [*new_ssts, *segments])
            if len(v.levels[0]) > self.l0_trigger or self._log_merge_due(v):
                self._compact_wanted = True
                self._cond.notify_all()
        self._commit_version(make, installed)

    # -- append logs --------------------------------------------------------------------------
    def append_rows(self, table_id: int, rows: pa.Table, epoch: int) -> None:
        """Append rows to a table's append log at `epoch` (read back by `read_log`, in order)."""
        self._check_writable(epoch)
        if rows.num_rows == 0:
            return
        with self._lock:
            self._logs.append(LogBatch(epoch, table_id, rows))

    def drop_log(self, table_id: int, epoch: int) -> None:
        """Empty a table's append log at `epoch`: its rows so far go when `epoch` commits."""
        self._check_writable(epoch)
        with self._lock:
            self._logs = [b for b in self._logs
                          if b.table_id != table_id or b.uploading or b.epoch > epoch]
            self._log_drops.append(LogDrop(epoch, table_id))

    def truncate_table(self, table_id: int, epoch: int) -> None:
        """Delete every key of a table at `epoch` (tombstones, which the bottom level's
        compaction drops): the key-value state of a dropped job."""
        prefix = table_key_prefix(table_id)
        keys = self.scan_table(prefix, next_key(prefix)).column("key")
        if len(keys):
            self.ingest_arrays(keys.combine_chunks(), pa.nulls(len(keys), pa.binary()), epoch)

    def read_log(self, table_id: int, epoch: int = MAX_EPOCH) -> list[pa.Table]:
        """A table's appended rows at `epoch`, in append order: its committed segments, then
        the rows not yet committed (a log is read whole: nothing looks its rows up by key)."""
        with self._lock:
            v = self._pin_version()
            dropped = [d.epoch for d in self._log_drops if d.table_id == table_id and d.epoch <= epoch]
            floor = max(dropped, default=-1)
            buffered = [b.rows for b in self._logs if b.table_id == table_id and floor <= b.epoch <= epoch]
        try:
            segments = [] if dropped else [g for g in v.logs.get(table_id, []) if g.min_epoch <= epoch]
            return [self._read_segment(g) for g in segments] + buffered
        finally:
            self._unpin_version(v)

    def _read_segment(self, g: LogSegment) -> pa.Table:
        return append_log.decode(self.object_store.get(g.path), g.path)

    def _write_logs(self, batches: list[LogBatch]) -> list[LogSegment]:
        """A checkpoint's appended rows: one segment per table."""
        out = []
        for table_id, bs in append_log.by_table(batches).items():
            out.append(self._put_segment(table_id, append_log.concat([b.rows for b in bs]),
                                         bs[0].epoch, bs[-1].epoch, 0))
        return out

    def _put_segment(self, table_id: int, rows: pa.Table, min_epoch: int, max_epoch: int, level: int,
                     stat: str = "bytes_uploaded") -> LogSegment:
        data = append_log.encode(rows, self.compression)
        sid = self._alloc_sst_id()
        self.object_store.put(log_path(sid), data)
        self.stats["log_uploads" if level == 0 else "log_merges_written"] += 1
        self.stats[stat] += data.size
        return LogSegment(sid, table_id, min_epoch, max_epoch, rows.num_rows, data.size, level)

    def _log_merge_due(self, v: HummockVersion) -> bool:
        return any(append_log.merge_candidate(segs) for segs in v.logs.values())

    def merge_logs_once(self, full: bool = False) -> bool:
        """Merge the next run of log segments that is due (see append_log.merge_candidate)
        into one; False when none is."""
        with self._compact_lock:
            with self._lock:
                picked = next(((t, c) for t, segs in self._version.logs.items()
                               if (c := append_log.merge_candidate(segs, full))), None)
            if picked is None:
                return False
            self._merge_log(*picked)
            return True

    def _merge_log(self, table_id: int, old: list[LogSegment]) -> None:
        rows = append_log.concat([self._read_segment(g) for g in old])
        new = self._put_segment(table_id, rows, old[0].min_epoch, old[-1].max_epoch,
                                max(g.level for g in old) + 1, stat="log_merge_bytes")

        def make(cur: HummockVersion) -> HummockVersion | None:
            segs = append_log.replace(cur.logs.get(table_id, []), old, new)
            if segs is None:
                return None
            v = cur.copy(id=cur.id + 1)
            v.logs[table_id] = segs
            return v
        try:
            committed = self._commit_version(make)
        finally:
            with self._lock:
                self._inflight.discard(new.id)
        if committed is None:
            self.object_store.delete(new.path)
        self.stats["log_merges"] += 1

    def _write_batches(self, batches: list[_Batch]) -> list[SstInfo]:
        """A checkpoint's batches as SSTs: by the upload process, or in this thread."""
        if self._remote_upload:
            from rw_cli.store import upload_process
            if upload_process.ready():
                return upload_process.upload_remote(self, batches)
        return self._write_ssts(merged_runs(batches))

    def _commit_version(self, make: Callable[[HummockVersion], HummockVersion | None],
                        installed: Callable[[HummockVersion], None] | None = None) -> HummockVersion | None:
        """Write the version `make` derives from the current one (None: nothing to commit)
        and make it current, then `installed(v)` under the same lock. Version writers
        (checkpoints, compaction) take turns; the write itself — the commit point, an fsync
        — runs outside the state lock, so the stream's writes and reads never wait for it."""
        with self._version_lock:
            with self._lock:
                v = make(self._version)
            if v is None:
                return None
            self._versions.commit(v)
            with self._lock:
                old = self._version
                self._version = v
                if old.id not in self._pinned_versions:
                    self._pinned_version_objs.pop(old.id, None)
                if installed is not None:
                    installed(v)
        return v

    def _write_ssts(self, runs: Iterator[Run]) -> list[SstInfo]:
        """Write sorted runs as SSTs of about sst_target_size (cut between runs)."""
        infos: list[SstInfo] = []
        builder: SstBuilder | None = None
        for r in runs:
            while len(r):
                if builder is None:
                    builder = SstBuilder(self.block_size, self.compression)
                    builder.keep_blocks = self.cache_refill
                room = self.sst_target_size - builder.estimated_size
                if r.keys.nbytes + r.values.nbytes > room:
                    cut = _cut_at_key(r, room)
                    part, r = r.slice(0, cut), r.slice(cut, len(r))
                else:
                    part, r = r, Run.empty()
                builder.add_run(part)
                if builder.estimated_size >= self.sst_target_size or len(r):
                    infos.append(self._upload(builder))
                    builder = None
            if self._stop:
                raise StorageError("the state store is closing")
        if builder is not None and not builder.empty:
            infos.append(self._upload(builder))
        return infos

    def _upload(self, builder: SstBuilder) -> SstInfo:
        data, meta, meta_off = builder.finish_with_meta()
        sid = self._alloc_sst_id()
        meta_len = len(data) - meta_off - FOOTER_LEN
        info = SstInfo(sid, len(data), meta_off, meta_len, zlib.crc32(data[meta_off:meta_off + meta_len]),
                       meta.smallest_key, meta.largest_key, meta.min_epoch, meta.max_epoch,
                       meta.key_count, meta.table_ids)
        self.object_store.put(sst_path(sid), data)
        self.stats["sst_uploads"] += 1
        self.stats["bytes_uploaded"] += len(data)
        self.meta_cache.put(sid, meta, meta.nbytes)
        if builder.keep_blocks:
            SstReader(self.object_store, info.path, sst_id=sid, meta=meta,
                      block_cache=self.block_cache).preload(builder.blocks)
        return info

    # -- reads ---------------------------------------------------------------------------
    def _view(self, snapshot: Snapshot | None) -> tuple[HummockVersion, list[_Batch]]:
        with self._lock:
            if snapshot is not None:
                if not snapshot.pinned:
                    raise StorageError("the snapshot was unpinned")
                v = snapshot.version
                self._pinned_versions[v.id] += 1
                return v, []
            return self._pin_version(), list(self._buffer)

    def get(self, key: bytes, epoch: int = MAX_EPOCH, snapshot: Snapshot | None = None) -> bytes | None:
        return self.multi_get([key], epoch, snapshot=snapshot)[0]

    def multi_get(self, keys: list[bytes], epoch: int = MAX_EPOCH,
                  snapshot: Snapshot | None = None) -> list[bytes | None]:
        if not keys:
            return []
        return self.multi_get_array(pa.array(keys, pa.binary()), epoch, snapshot=snapshot).to_pylist()

    def multi_get_array(self, keys: pa.Array, epoch: int = MAX_EPOCH,
                        snapshot: Snapshot | None = None) -> pa.Array:
        """The value of each key at `epoch` as a binary array (null: absent or deleted)."""
        keys = as_binary(keys)
        n = len(keys)
        if n == 0:
            return EMPTY_BINARY
        qform = KeyForm.of_lengths(key_lengths(keys))
        qsk, _ = sortable_keys(keys, qform)
        order = argsort_sortable(qsk)
        s = qsk[order]
        first = np.ones(n, dtype=bool)
        first[1:] = s[1:] != s[:-1]
        uniq_of_sorted = np.cumsum(first) - 1
        inv = np.empty(n, dtype=np.int64)
        inv[order] = uniq_of_sorted
        q = keys.take(pa.array(order[first], pa.int64()))
        nq = len(q)
        hashes = key_hashes(q)
        forms: dict = {qform.key(): (s[first], None)}
        found = np.zeros(nq, dtype=bool)
        hit_idx: list[np.ndarray] = []
        hit_vals: list[pa.Array] = []
        version, buffer = self._view(snapshot)
        try:
            for b in reversed(buffer):
                if b.epoch > epoch:
                    continue
                self._lookup_source(lambda qq, hh, ff: _lookup_batch(b, qq, ff), q, hashes, forms,
                                    found, hit_idx, hit_vals, epoch)
                if found.all():
                    break
            # only the SSTs whose key range holds a query key are opened (their metas loaded)
            qlo, qhi = q[0].as_py(), q[nq - 1].as_py()
            for level_no, level in enumerate(version.levels):
                if found.all():
                    break
                if level_no == 0:
                    infos = [i for i in level if not (i.largest_key < qlo or i.smallest_key > qhi)]
                else:  # non-overlapping and sorted: bisect to the first SST that may hold qlo
                    j = bisect.bisect_left(version.level_largest_keys(level_no), qlo)
                    infos = []
                    while j < len(level) and level[j].smallest_key <= qhi:
                        infos.append(level[j])
                        j += 1
                for info in infos:
                    if found.all():
                        break
                    if info.min_epoch > epoch:
                        continue
                    rd = self._reader(info)
                    self._lookup_source(lambda qq, hh, ff, rd=rd: rd.lookup(qq, hh, epoch, ff),
                                        q, hashes, forms, found, hit_idx, hit_vals, epoch)
        finally:
            self._unpin_version(version)
        if not hit_idx:
            return pa.nulls(n, pa.binary())
        idx = np.concatenate(hit_idx)
        vals = pa.concat_arrays(hit_vals)
        where = np.full(nq, -1, dtype=np.int64)
        where[idx] = np.arange(len(idx))
        per_key = where[inv]
        return vals.take(pa.array(per_key, pa.int64(), mask=per_key < 0))

    @staticmethod
    def _lookup_source(fn, q, hashes, forms, found, hit_idx, hit_vals, epoch) -> None:
        if found.any():
            rem = np.flatnonzero(~found)
            ia = pa.array(rem, pa.int64())
            qq = q.take(ia)
            hh = hashes[rem]
            ff = {k: (sk[rem], None if ok is None else ok[rem]) for k, (sk, ok) in forms.items()}
        else:
            rem, qq, hh, ff = None, q, hashes, forms
        idx, vals = fn(qq, hh, ff)
        if rem is None:
            # share the forms computed for the full query array
            forms.update(ff)
        if len(idx):
            gi = idx if rem is None else rem[idx]
            found[gi] = True
            hit_idx.append(gi)
            hit_vals.append(vals)

    def _sources(self, version: HummockVersion, buffer: list[_Batch], start: bytes, end: bytes | None,
                 epoch: int) -> tuple[list, KeyForm]:
        sources: list = []
        forms: list[KeyForm] = []
        for b in reversed(buffer):
            if b.epoch <= epoch:
                r = b.range_run(start, end)
                if len(r):
                    sources.append([r])
                    forms.append(b.form)

        def overlaps(info: SstInfo) -> bool:
            return not (info.largest_key < start or (end is not None and info.smallest_key >= end)
                        or info.min_epoch > epoch)

        for info in version.levels[0]:
            if overlaps(info):
                rd = self._reader(info)
                sources.append(rd.runs(start, end))
                forms.append(rd.meta.form)
        for level in version.levels[1:]:
            infos = [i for i in level if overlaps(i)]
            if infos:
                readers = [self._reader(i) for i in infos]
                forms.extend(r.meta.form for r in readers)
                sources.append(_concat_level(readers, start, end))
        if len(sources) > 1:
            # merge steps of about a megabyte per source rather than one block
            sources = [_coalesce(src) for src in sources]
        return sources, KeyForm.common(forms)

    def iter_runs(self, start: bytes = b"", end: bytes | None = None, epoch: int = MAX_EPOCH,
                  include_tombstones: bool = False, snapshot: Snapshot | None = None) -> Iterator[Run]:
        """Stream the visible entries of [start, end) at `epoch` as Runs (one entry per key)."""
        version, buffer = self._view(snapshot)
        try:
            sources, form = self._sources(version, buffer, start, end, epoch)
            pending: list[Run] = []
            size = 0
            for r in merge_runs(sources, form):
                v = r.visible(epoch, include_tombstones)
                if not len(v):
                    continue
                pending.append(v)
                size += v.keys.nbytes + v.values.nbytes
                if size >= SCAN_BATCH_BYTES:
                    yield Run.concat(pending) if len(pending) > 1 else pending[0]
                    pending, size = [], 0
            if pending:
                yield Run.concat(pending) if len(pending) > 1 else pending[0]
        finally:
            self._unpin_version(version)

    def iter_batches(self, start: bytes = b"", end: bytes | None = None, epoch: int = MAX_EPOCH,
                     snapshot: Snapshot | None = None) -> Iterator[pa.RecordBatch]:
        """Record batches (key, value) of the live entries of [start, end) at `epoch`."""
        for r in self.iter_runs(start, end, epoch, snapshot=snapshot):
            yield pa.RecordBatch.from_arrays([r.keys, r.values], ["key", "value"])

    def scan_table(self, start: bytes, end: bytes | None, epoch: int = MAX_EPOCH,
                   include_tombstones: bool = False, snapshot: Snapshot | None = None) -> pa.Table:
        """(key, epoch, value) of the newest visible entry of each key in [start, end), sorted;
        tombstones dropped unless asked for (then their value is null)."""
        runs = list(self.iter_runs(start, end, epoch, include_tombstones, snapshot))
        r = Run.concat(runs)
        return pa.table({"key": r.keys, "epoch": pa.array(r.epochs, pa.uint64()), "value": r.values})

    def iter(self, start: bytes, end: bytes | None, epoch: int = MAX_EPOCH,
             snapshot: Snapshot | None = None) -> Iterator[tuple[bytes, bytes]]:
        for r in self.iter_runs(start, end, epoch, snapshot=snapshot):
            yield from zip(r.keys.to_pylist(), r.values.to_pylist())

    # -- compaction and vacuum -------------------------------------------------------------
    def _kick_compaction(self) -> None:
        with self._lock:
            if len(self._version.levels[0]) > self.l0_trigger or self._log_merge_due(self._version) or any(
                    self._version.level_size(i) > self._level_target(i) for i in range(1, len(self._version.levels))):
                self._compact_wanted = True
                self._ensure_threads()
                self._cond.notify_all()

    def _level_target(self, i: int) -> int:
        return self.level_base_size * self.level_multiplier ** max(0, i - 1)

    def _compactor_loop(self) -> None:
        while True:
            with self._lock:
                while not self._compact_wanted and not self._stop:
                    self._cond.wait()
                if self._stop:
                    return
                self._compact_wanted = False
            try:
                from rw_cli.store.compactor import compact_once
                did = False
                while not self._stop:
                    # compaction gives way to a stream of checkpoints unless L0 grows past
                    # the stall limit (in a thread it shares the GIL with the stream; in the
                    # compactor process, the cores and their caches)
                    if not self._compaction_pressing() and \
                            time.monotonic() - self._last_commit < COMPACTION_IDLE_SECS:
                        time.sleep(COMPACTION_IDLE_SECS / 4)
                        continue
                    if not (self.merge_logs_once() or compact_once(self, self._remote_compaction)):
                        break
                    did = True
                if did and not self._stop:
                    self._vacuum_objects()
            except BaseException as e:  # noqa: BLE001 - reported through compaction_error
                if not self._stop:  # not "the state store is closing"
                    self._report_compaction_error(e)

    def _compaction_pressing(self) -> bool:
        """L0 or a log grew so long that compaction runs even under a stream of checkpoints."""
        v = self._version
        return len(v.levels[0]) >= self.l0_stall or any(len(s) >= append_log.LOG_STALL for s in v.logs.values())

    def _report_compaction_error(self, e: BaseException) -> None:
        """Keep the error (`compaction_error`, which `rw compact` reports) and warn on stderr
        the first time; compaction is tried again at its next trigger."""
        first = self.compaction_error is None
        self.compaction_error = e
        self.stats["compaction_errors"] += 1
        if first:
            try:
                sys.stderr.write(f"WARNING:  background compaction of the state store failed: {e}\n")
                sys.stderr.flush()
            except Exception:  # noqa: BLE001 - no stderr: the error stays in compaction_error
                pass

    def compact(self, full: bool = False) -> int:
        """Run compaction tasks until none is due (full: merge everything into the bottom
        level). Returns the number of tasks run."""
        from rw_cli.store.compactor import compact_full, compact_once
        self.sync()
        n = 0
        while self.merge_logs_once(full):
            n += 1
        if full:
            n += compact_full(self)
        while compact_once(self):
            n += 1
        return n

    def wait_for_compaction(self, timeout: float = 600.0) -> None:
        """Block until no background compaction is due (for benchmarks and tests)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._compact_lock:
                from rw_cli.store.compactor import pick_task
                with self._lock:
                    due = pick_task(self, self._version) is not None or self._compact_wanted \
                        or self._log_merge_due(self._version)
            if not due:
                return
            time.sleep(0.02)

    def vacuum(self) -> int:
        """Delete SST objects no version references (current or pinned) and old version
        objects. Returns the number of objects deleted."""
        self.sync()
        return self._vacuum_objects()

    def _vacuum_objects(self) -> int:
        if self.read_only:
            return 0
        listed = self.object_store.list(SST_PREFIX) + self.object_store.list(LOG_PREFIX)
        versions = self._versions.version_ids()
        with self._lock:
            referenced = set(self._inflight)
            referenced |= self._version.sst_ids()
            for v in self._pinned_version_objs.values():
                referenced |= v.sst_ids()
            current = self._version.id
        n = 0
        for p in listed:
            sid = parse_sst_id(p)
            if sid is not None and sid not in referenced:
                self.object_store.delete(p)
                self.block_cache.evict_prefix(lambda k, sid=sid: k[0] == sid)
                n += 1
        for vid in versions:
            if vid < current:
                self.object_store.delete(version_path(vid))
                n += 1
        return n

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
        try:
            self.sync()
        except StorageError:
            pass
        with self._lock:
            self._closed = True
            self._stop = True
            self._cond.notify_all()
        for t in self._threads:
            t.join(timeout=30)
        with self._lock:
            self._buffer = []
        if self._lease is not None:
            self._lease.release()


def merged_runs(batches: list[_Batch]) -> Iterator[Run]:
    """Buffered batches as one sorted stream of runs: the newest version of a key first,
    one entry per key and epoch."""
    bs = sorted(batches, key=lambda b: (b.epoch, b.seq), reverse=True)
    form = KeyForm.common([b.form for b in bs])
    return (dedup_same_epoch(r, form) for r in merge_runs([[b.run] for b in bs], form))


def _lookup_batch(b: _Batch, q: pa.Array, forms: dict) -> tuple[np.ndarray, pa.Array]:
    got = forms.get(b.form.key())
    if got is None:
        got = forms[b.form.key()] = sortable_keys(q, b.form)
    qsk, ok = got
    bsk = b.run.skeys(b.form)
    pos = np.searchsorted(bsk, qsk, "left")
    inb = pos < len(bsk)
    match = inb.copy()
    match[inb] = bsk[pos[inb]] == qsk[inb]
    if ok is not None:
        match &= ok
    idx = np.flatnonzero(match)
    if not len(idx):
        return idx, EMPTY_BINARY
    return idx, b.run.values.take(pa.array(pos[idx], pa.int64()))


def _cut_at_key(r: Run, room: int) -> int:
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


def _coalesce(runs, target: int = SCAN_BATCH_BYTES) -> Iterator[Run]:
    pending: list[Run] = []
    size = 0
    for r in runs:
        pending.append(r)
        size += r.keys.nbytes + r.values.nbytes
        if size >= target:
            yield Run.concat(pending)
            pending, size = [], 0
    if pending:
        yield Run.concat(pending)


def _concat_level(readers: list[SstReader], start: bytes, end: bytes | None) -> Iterator[Run]:
    for r in readers:
        yield from r.runs(start, end)
