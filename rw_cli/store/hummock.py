"""HummockStorage: the state store's facade over the shared buffer, the SST store, the
version manager and the compactor.

Write path: `ingest_batch`/`ingest_arrays(keys, values, epoch)` put an immutable sorted batch
(Arrow arrays) into the shared buffer (shared_buffer.py); `commit_epoch(epoch)` hands every
buffered batch with epoch' <= epoch to the uploader thread (uploader.py), which merges them
into one or a few SSTs, uploads them and commits a new version (the commit point);
`wait=False` returns at once. With `uploader="process"` the merging and uploading run in the
upload process (`rw_cli.store.upload_process`) and the thread only commits.

Append logs (`append_rows`, `read_log`): tables whose rows are only ever inserted are kept as
columnar segments listed in the version, committed with the same checkpoints (append_log.py).

Read path: shared buffer batches (newest first), then L0 SSTs (newest first), then levels
1.. (non-overlapping); the newest entry of a key at or below the read epoch wins and a
tombstone hides it (version_reader.py). Point lookups are batched (`multi_get_array`), scans
stream Runs.

Writers: a writable open takes the store's writer lease (`rw_cli.store.lease`), so a second
live writer is refused at open, wherever it runs; read-only opens take none. Opening also
claims the next version number (version_manager.py), so an older writer still running (one
that lost its lease) is fenced off: its next commit fails. Pinned snapshots keep their
version's SSTs from vacuum and their epoch above the compaction low watermark. Compaction
(compaction_picker.py picks, compactor.py runs) runs in the background.

A worker store (`worker=True`: a Spark task's, see worker_store.py) reads the version it is
told to follow and buffers its own writes, which it writes as SSTs under ids the writer
reserved; it takes no lease and never commits.

Locks: one state lock, shared by the parts (a reader pins a version and copies the buffer at
one instant; vacuum sees the SST ids in flight and the current version at one instant); the
version manager's commit lock (version writers take turns); the compactor's task lock.
"""
from __future__ import annotations

import threading
from collections import Counter
from contextlib import contextmanager
from typing import Iterator

import pyarrow as pa

from rw_cli.errors import StorageError
from rw_cli.store.cache import DEFAULT_CACHE_SIZE
from rw_cli.store.compaction_picker import CompactionPicker
from rw_cli.store.compactor import Compactor
from rw_cli.store.keys import MAX_EPOCH, next_key, table_key_prefix
from rw_cli.store.lease import DEFAULT_HEARTBEAT_SECS, WriterLease
from rw_cli.store.object_store import ObjectStore
from rw_cli.store.run import EMPTY_BINARY, Run, as_binary
from rw_cli.store.shared_buffer import SharedBuffer, SharedBufferBatch, merged_runs
from rw_cli.store.sstable_store import DEFAULT_SST_TARGET_SIZE, ReservedSstIds, SstableStore, WriterSstIds
from rw_cli.store.uploader import Uploader
from rw_cli.store.version import HummockVersion, LogSegment, SstInfo
from rw_cli.store.version_manager import VersionManager
from rw_cli.store.version_reader import VersionReader
from rw_cli.store.worker_process import available

__all__ = ["HummockStorage", "Snapshot", "MAX_EPOCH"]


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


class HummockStorage:
    """The state store. Options: the SST format (`block_size`, `sst_target_size`,
    `compression`), the block and meta caches (`cache_size`, `cache_refill`: blocks of new
    SSTs go into the cache), leveled compaction (`l0_trigger`, `l0_stall`, `level_base_size`,
    `level_multiplier`, `max_levels`; `background_compaction`, `compactor`: "thread" or
    "auto", a compactor process when one can open the object store), where a checkpoint's
    SSTs are built (`uploader`: "thread", or "process"/"auto"), and what this open may do:
    write and commit (the default), only read (`read_only`), or write SSTs for the writer
    (`worker`)."""

    def __init__(self, object_store: ObjectStore, *, block_size: int = 65536,
                 sst_target_size: int = DEFAULT_SST_TARGET_SIZE, cache_size: int | str = DEFAULT_CACHE_SIZE,
                 compression: str | None = None, l0_trigger: int = 4, l0_stall: int | None = None, level_base_size: int = 256 << 20,
                 level_multiplier: int = 10, max_levels: int = 7, background_compaction: bool = True,
                 cache_refill: bool = True, read_only: bool = False,
                 lease_heartbeat_secs: float = DEFAULT_HEARTBEAT_SECS, compactor: str = "auto",
                 uploader: str = "thread", worker: bool = False):
        self.object_store = object_store
        self.read_only = read_only
        self.worker = worker
        self.writer = not read_only and not worker  # holds the lease, commits versions
        self.stats = Counter()
        self._lock = threading.RLock()
        self._closing = threading.Event()
        self._closed = False
        self._lease_error: StorageError | None = None  # the lease was lost before the uploader existed
        self._lease: WriterLease | None = None
        if self.writer:
            # refused here while another live writer holds the store
            self._lease = WriterLease(object_store, lease_heartbeat_secs, on_lost=self._lease_lost)
            self._lease.acquire()
        try:
            self.version_manager = VersionManager(object_store, self._lock, claim=self.writer)
            ids = ReservedSstIds() if worker else WriterSstIds(self.version_manager.claim, self._lock)
            self.sstables = SstableStore(object_store, ids, block_size=block_size, sst_target_size=sst_target_size,
                                         compression=compression, cache_size=cache_size, cache_refill=cache_refill,
                                         stats=self.stats, closing=self._closing)
            self.meta_cache = self.sstables.meta_cache
            self.block_cache = self.sstables.block_cache
            self.buffer = SharedBuffer(self._lock)
            self.reader = VersionReader(self.sstables)
            # background compaction in a compactor process (the default when one can open
            # the object store), or in a thread of this one
            background = background_compaction and self.writer
            picker = CompactionPicker(l0_trigger, l0_stall, level_base_size, level_multiplier, max_levels)
            self.compactor = Compactor(self.sstables, self.version_manager, picker, self._lock,
                                       background=background,
                                       remote=background and compactor != "thread" and available(object_store),
                                       vacuum=self._vacuum_objects)
            # a checkpoint's SSTs built by the upload process ("process", or "auto" when one
            # can open the object store), or by the uploader thread; the process starts at the
            # first checkpoint that has writes (a read-only run never starts it)
            remote_upload = self.writer and uploader != "thread" and available(object_store)
            self.uploader = Uploader(self.buffer, self.sstables, self.version_manager, self._lock,
                                     remote=remote_upload, committed=self.compactor.on_commit)
            if self._lease_error is not None:
                self.uploader.fail(self._lease_error)
            if self.writer:
                self._vacuum_objects()
                self.compactor.kick()
        except BaseException:
            if self._lease is not None:
                self._lease.release()
            raise

    def _lease_lost(self, error: StorageError) -> None:
        with self._lock:
            uploader = getattr(self, "uploader", None)
            if uploader is None:
                self._lease_error = error
            else:
                uploader.fail(error)

    # -- state ---------------------------------------------------------------------------
    @property
    def committed_epoch(self) -> int:
        return self.version_manager.current.max_committed_epoch

    @property
    def requested_extra(self) -> bytes:
        """The `extra` of the newest requested commit (the committed one if none is pending)."""
        with self._lock:
            extra = self.uploader.requested_extra
            return self.version_manager.current.extra if extra is None else extra

    @property
    def failed(self) -> BaseException | None:
        """The error that stopped this store from committing (an upload failure, a lost lease)."""
        return self.uploader.failed

    @property
    def compaction_error(self) -> BaseException | None:
        """The last background compaction's error, if one failed."""
        return self.compactor.error

    def check(self) -> None:
        """Raise the error of a failed background commit, if any."""
        if self.failed is not None:
            raise StorageError(f"the state store failed: {self.failed}",
                               hint="restart to recover from the last committed epoch")

    def pending_commits(self) -> int:
        """Commits requested and not yet durable."""
        return self.uploader.pending()

    @property
    def extra(self) -> bytes:
        return self.version_manager.current.extra

    @property
    def version(self) -> HummockVersion:
        return self.version_manager.current

    # -- SST ids of other writers (Spark tasks) ------------------------------------------------
    def alloc_sst_id(self) -> int:
        """An SST id for a Spark task to write an SST (or log segment) under: in flight, so
        vacuum leaves the object alone, until `adopt_ssts` commits it or `release_sst_ids`."""
        return self.sstables.alloc_id()

    def adopt_ssts(self, epoch: int, ssts: list[SstInfo | LogSegment]) -> None:
        """SSTs (and log segments) that others (Spark tasks) wrote for `epoch` with ids from
        `alloc_sst_id`: they become part of the version that commits `epoch`."""
        with self._lock:
            self._check_writable(epoch)
            self.buffer.adopt(epoch, ssts)

    def release_sst_ids(self, ids) -> None:
        """Reserved SST ids that were not used (vacuum may delete such objects again)."""
        self.sstables.release_ids(ids)

    # -- pins ----------------------------------------------------------------------------
    def pin_snapshot(self, epoch: int | None = None) -> Snapshot:
        """Pin the current version at `epoch` (default: the committed epoch)."""
        with self._lock:
            e = self.committed_epoch if epoch is None else epoch
            return Snapshot(self, self.version_manager.pin_epoch(e), e)

    def unpin(self, snap: Snapshot) -> None:
        with self._lock:
            if not snap.pinned:
                return
            snap.pinned = False
            self.version_manager.unpin_epoch(snap.epoch, snap.version)

    def retain_versions(self, table_ids: frozenset[int], retention_ms: int) -> None:
        """Time travel: compaction keeps the versions of these tables for `retention_ms`."""
        self.version_manager.retention = (frozenset(table_ids), int(retention_ms))

    def low_watermark(self) -> int:
        """The lowest epoch compaction must keep readable; what it returns stays readable
        (later pins at older epochs are refused)."""
        return self.version_manager.low_watermark()

    # -- writes --------------------------------------------------------------------------
    def _check_writable(self, epoch: int) -> None:
        if self.read_only:
            raise StorageError("the state store was opened read-only")
        if self.failed is not None:
            raise StorageError(f"the state store failed earlier: {self.failed}")
        if epoch <= self.uploader.requested_epoch:
            raise StorageError(f"cannot write at epoch {epoch}: epoch {self.uploader.requested_epoch} is already committed")

    def ingest_batch(self, kvs, epoch: int) -> None:
        """Write (key, value | None) pairs at `epoch`; of equal keys the last one wins."""
        if isinstance(kvs, dict):
            kvs = list(kvs.items())
        self._check_writable(epoch)
        if not kvs:
            return
        keys, values = zip(*kvs)
        self.ingest_arrays(pa.array(keys, pa.binary()), pa.array(values, pa.binary()), epoch)

    def ingest_arrays(self, keys: pa.Array, values: pa.Array, epoch: int, sorted_unique: bool = False) -> None:
        """Vectorized write: `values` nulls are deletes. `sorted_unique`: the keys are sorted
        and distinct already (no sort needed, here or in the upload process)."""
        self._check_writable(epoch)
        keys, values = as_binary(keys), as_binary(values)
        if len(keys) != len(values):
            raise ValueError("keys and values differ in length")
        if not len(keys):
            return
        self.buffer.add(keys, values, epoch, sorted_unique)

    def commit_epoch(self, epoch: int, extra: bytes | None = None, wait: bool = True,
                     awaited: bool = False) -> None:
        """Make everything written at epochs <= `epoch` durable, with `extra` (e.g. the
        catalog) stored in the same version. With wait=False the upload runs in the
        background; `sync()` waits for it. `awaited`: the caller waits for this commit right
        away with nothing running beside it (FLUSH), so its SSTs are built in the uploader
        thread rather than shipped to the upload process (uploader.py)."""
        if self.worker:
            raise StorageError("a worker never commits a version; the writer does")
        with self._lock:
            if self.read_only:
                raise StorageError("the state store was opened read-only")
            if self.failed is not None:
                raise StorageError(f"the state store failed earlier: {self.failed}")
            if epoch < self.uploader.requested_epoch:
                raise StorageError(f"cannot commit epoch {epoch}: epoch {self.uploader.requested_epoch} "
                                   f"is already committed")
            task = self.uploader.request(epoch, extra, awaited)
            self.compactor.ensure_thread()
        if wait:
            task.done.wait()
            if task.error is not None:
                raise task.error

    @contextmanager
    def streaming(self) -> Iterator[None]:
        """The stream's work runs (a tick, a barrier): background compaction that is not
        pressing waits for a pause (`Compactor.stream_work`)."""
        self.compactor.stream_work(True)
        try:
            yield
        finally:
            self.compactor.stream_work(False)

    def discard_uncommitted(self) -> None:
        """Forget every write not yet handed to a commit (an epoch that failed as a whole)."""
        self.sync()
        with self._lock:
            self.sstables.release_ids(self.buffer.discard_unsent())

    def sync(self) -> None:
        """Wait until every requested commit is durable."""
        self.wait_for_commits(0)

    def wait_for_commits(self, max_pending: int = 0) -> None:
        """Wait until at most `max_pending` requested commits are not yet durable (the
        oldest finish first); raise the error of any that failed."""
        self.uploader.wait(max_pending)
        if self.failed is not None:
            self.check()

    # -- a read-only open --------------------------------------------------------------------
    def refresh(self) -> bool:
        """Read-only: move to the newest committed version (another process writes the
        store). True when it changed."""
        if self.writer:
            raise StorageError("refresh is for read-only opens: a writer's own commits are current")
        latest = self.version_manager.latest()
        with self._lock:
            current = self.version_manager.current
            if latest.id == current.id and latest.max_committed_epoch == current.max_committed_epoch:
                return False
            self.version_manager.follow(latest)
            self.uploader.follow(latest)
            return True

    # -- a worker's store (worker=True) --------------------------------------------------------
    def follow_version(self, v: HummockVersion) -> None:
        """Read `v` from now on and forget every buffered write (a Spark task's store at the
        version its driver pinned for the epoch; writes of an earlier, failed task go)."""
        with self._lock:
            self.buffer.clear()
            self.version_manager.follow(v)
            self.uploader.follow(self.version_manager.current)

    def write_buffered(self, epoch: int, sst_ids: list[int]) -> list[SstInfo | LogSegment]:
        """Write every buffered write at epochs <= `epoch` as SSTs and log segments named by
        `sst_ids` (a worker's: it never commits them; the writer does)."""
        batches, logs, drops = self.buffer.take_upto(epoch)
        if drops:
            raise StorageError("a Spark task cannot drop an append log")
        self.sstables.use_ids(sst_ids)
        return (self.sstables.write_runs(merged_runs(batches)) if batches else []) + self.sstables.write_logs(logs)

    # -- append logs --------------------------------------------------------------------------
    def append_rows(self, table_id: int, rows: pa.Table, epoch: int) -> None:
        """Append rows to a table's append log at `epoch` (read back by `read_log`, in order)."""
        self._check_writable(epoch)
        if rows.num_rows == 0:
            return
        self.buffer.append_rows(table_id, rows, epoch)

    def drop_log(self, table_id: int, epoch: int) -> None:
        """Empty a table's append log at `epoch`: its rows so far go when `epoch` commits."""
        self._check_writable(epoch)
        self.buffer.drop_log(table_id, epoch)

    def truncate_table(self, table_id: int, epoch: int) -> None:
        """Delete every key of a table at `epoch` (tombstones, which the bottom level's
        compaction drops): the key-value state of a dropped job."""
        self.truncate_tables([table_id], epoch)

    def truncate_tables(self, table_ids: list[int], epoch: int) -> None:
        """`truncate_table` of each; tables of consecutive ids (a job's, as they were
        allocated) are read in one scan."""
        ids = sorted(set(table_ids))
        ranges: list[list[int]] = []
        for i in ids:
            if ranges and ranges[-1][1] == i - 1:
                ranges[-1][1] = i
            else:
                ranges.append([i, i])
        for first, last in ranges:
            keys = self.scan_table(table_key_prefix(first), next_key(table_key_prefix(last))).column("key")
            if len(keys):
                self.ingest_arrays(keys.combine_chunks(), pa.nulls(len(keys), pa.binary()), epoch)

    def read_log(self, table_id: int, epoch: int = MAX_EPOCH) -> list[pa.Table]:
        """A table's appended rows at `epoch`, in append order: its committed segments, then
        the rows not yet committed (a log is read whole: nothing looks its rows up by key)."""
        with self._lock:
            v = self.version_manager.pin()
            dropped, buffered = self.buffer.log_rows(table_id, epoch)
        try:
            segments = [] if dropped else [g for g in v.logs.get(table_id, []) if g.min_epoch <= epoch]
            return [self.sstables.read_log_segment(g) for g in segments] + buffered
        finally:
            self.version_manager.unpin(v)

    def merge_logs_once(self, full: bool = False) -> bool:
        """Merge the next run of log segments that is due (see append_log.merge_candidate)
        into one; False when none is."""
        return self.compactor.merge_logs_once(full)

    # -- reads ---------------------------------------------------------------------------
    def estimate_rows(self, table_id: int, epoch: int = MAX_EPOCH) -> int:
        """About how many entries a table holds, from metadata without reading it: the
        entries of the SSTs holding it (shared equally among the tables an SST holds; old
        versions and tombstones count too) plus its entries in the shared buffer up to
        `epoch`. For choosing between reading by key and scanning."""
        total = 0.0
        for level in self.version.levels:
            for info in level:
                if table_id in info.table_ids:
                    total += info.key_count / max(1, len(info.table_ids))
        start = table_key_prefix(table_id)
        end = next_key(start)
        with self._lock:
            batches = self.buffer.view()
        for b in batches:
            if b.epoch <= epoch:
                total += len(b.range_run(start, end))
        return int(total)

    def holds_table(self, table_id: int) -> bool:
        """Whether anything of the table is stored, live or a tombstone, from metadata alone:
        an SST that lists it (one that lists no tables: whose key range meets the table's)
        or a batch of the shared buffer with its keys."""
        start = table_key_prefix(table_id)
        end = next_key(start)
        version = self.version
        for level in version.levels:
            for info in level:
                if table_id in info.table_ids or (
                        not info.table_ids and not (info.largest_key < start or info.smallest_key >= end)):
                    return True
        with self._lock:
            batches = self.buffer.view()
        return any(len(b.range_run(start, end)) for b in batches)

    def estimate_size(self, table_id: int) -> int:
        """About how many bytes a table takes, from metadata without reading it: its share of
        the SSTs holding it (an SST's size shared equally among its tables), its append-log
        segments, and its entries still in the shared buffer. What pg_relation_size says."""
        version = self.version
        total = 0.0
        for level in version.levels:
            for info in level:
                if table_id in info.table_ids:
                    total += info.file_size / max(1, len(info.table_ids))
        total += sum(seg.file_size for seg in version.logs.get(table_id, ()))
        start = table_key_prefix(table_id)
        end = next_key(start)
        with self._lock:
            batches = self.buffer.view()
        total += sum(r.keys.nbytes + r.values.nbytes for r in (b.range_run(start, end) for b in batches))
        return int(total)

    def _view(self, snapshot: Snapshot | None) -> tuple[HummockVersion, list[SharedBufferBatch]]:
        with self._lock:
            if snapshot is not None:
                if not snapshot.pinned:
                    raise StorageError("the snapshot was unpinned")
                return self.version_manager.pin(snapshot.version), []
            return self.version_manager.pin(), self.buffer.view()

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
        if len(keys) == 0:
            return EMPTY_BINARY
        version, buffer = self._view(snapshot)
        try:
            return self.reader.multi_get(version, buffer, keys, epoch)
        finally:
            self.version_manager.unpin(version)

    def iter_runs(self, start: bytes = b"", end: bytes | None = None, epoch: int = MAX_EPOCH,
                  include_tombstones: bool = False, snapshot: Snapshot | None = None) -> Iterator[Run]:
        """Stream the visible entries of [start, end) at `epoch` as Runs (one entry per key)."""
        version, buffer = self._view(snapshot)
        try:
            yield from self.reader.iter_runs(version, buffer, start, end, epoch, include_tombstones)
        finally:
            self.version_manager.unpin(version)

    def writes_since(self, start: bytes, end: bytes | None, since: int) -> Run | None:
        """The newest entry (tombstones too) of each key of [start, end) written after epoch
        `since`, as the version read holds them: what changed there since then, read from
        the L0 SSTs written since (not the whole range). None when that cannot be told: a
        compaction dropped a tombstone written after `since` (the key left no trace), some
        of those writes were merged below L0 (read from there, they would cost a scan of
        the range), or writes are still buffered."""
        version, buffer = self._view(None)
        try:
            if buffer or version.tombstones_dropped_through > since:
                return None

            def since_and_in(info: SstInfo) -> bool:
                return info.max_epoch > since and not (
                    info.largest_key < start or (end is not None and info.smallest_key >= end))

            if any(since_and_in(i) for level in version.levels[1:] for i in level):
                return None
            delta = version.copy(levels=[[i for i in version.levels[0] if since_and_in(i)]])
            r = Run.concat(list(self.reader.iter_runs(delta, [], start, end, MAX_EPOCH, include_tombstones=True)))
            return r.filter(r.epochs > since)  # (an L0 merge may hold older entries beside them)
        finally:
            self.version_manager.unpin(version)

    def scan_ranges(self, starts: list[bytes], ends: list[bytes | None], epoch: int = MAX_EPOCH) -> Run:
        """The visible live entries of sorted, disjoint key ranges [starts[i], ends[i]) at
        `epoch`, read in one pass (VersionReader.scan_ranges)."""
        version, buffer = self._view(None)
        try:
            return self.reader.scan_ranges(version, buffer, starts, ends, epoch)
        finally:
            self.version_manager.unpin(version)

    def scan_range_edges(self, starts: list[bytes], ends: list[bytes | None], n: int, last: bool,
                         epoch: int = MAX_EPOCH) -> tuple[Run, pa.Array]:
        """The live entries at the low (`last`: high) end of sorted, disjoint key ranges, read
        from their edge blocks only, and per range the key beyond which nothing was read
        (VersionReader.scan_range_edges)."""
        version, buffer = self._view(None)
        try:
            return self.reader.scan_range_edges(version, buffer, starts, ends, epoch, n, last)
        finally:
            self.version_manager.unpin(version)

    def content_token(self, start: bytes, end: bytes | None, epoch: int) -> tuple[int, ...] | None:
        """What the entries of [start, end) at `epoch` are read from, when that alone
        determines them (`VersionReader.content_token`): a reader of a range the last epochs
        left as it was reuses what it read. None when it cannot say."""
        version, buffer = self._view(None)
        try:
            return self.reader.content_token(version, buffer, start, end, epoch)
        finally:
            self.version_manager.unpin(version)

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
    def compact(self, full: bool = False) -> int:
        """Run compaction tasks until none is due (full: merge everything into the bottom
        level). Returns the number of tasks run."""
        self.sync()
        return self.compactor.run_until_done(full)

    def wait_for_compaction(self, timeout: float = 600.0) -> None:
        """Block until no background compaction is due (for benchmarks and tests)."""
        self.compactor.wait(timeout)

    def vacuum(self) -> int:
        """Delete SST objects no version references (current or pinned) and old version
        objects. Returns the number of objects deleted."""
        self.sync()
        return self._vacuum_objects()

    def _vacuum_objects(self) -> int:
        if not self.writer:
            return 0
        return self.version_manager.vacuum(self.sstables.in_flight_ids, self.sstables.evict)

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
            self._closing.set()
        self.uploader.stop()
        self.compactor.stop()
        self.buffer.clear()
        if self._lease is not None:
            self._lease.release()
