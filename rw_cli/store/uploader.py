"""The uploader: turns the shared buffer's checkpoints into committed versions.

`request(epoch, extra)` takes the buffered writes of epochs <= epoch out of the shared buffer
into a commit task and queues it; the uploader thread runs the tasks in order: merges a
task's batches into one or a few SSTs and uploads them (here, or in the upload process when
`remote`: upload_process.py), writes its append log segments, and commits the version that
holds them (the commit point). A task that fails is its waiter's error, and the store's: no
later commit goes through (`failed`).
"""
from __future__ import annotations

import threading
import time
from typing import Callable

from rw_cli.errors import StorageError
from rw_cli.store.append_log import LogBatch, LogDrop
from rw_cli.store.object_store import wait_durable
from rw_cli.store.background import BackgroundLoop
from rw_cli.store.shared_buffer import SharedBuffer, SharedBufferBatch, merged_runs
from rw_cli.store.sstable_store import SstableStore
from rw_cli.store.version import HummockVersion, LogSegment, SstInfo
from rw_cli.store.version_manager import VersionManager


# CURRENT names the latest version at most this long after its commit
HINT_INTERVAL_S = 0.5


class CommitTask:
    """One requested commit: what it uploads, and its outcome for whoever waits on it."""

    def __init__(self, epoch: int, extra: bytes | None, batches: list[SharedBufferBatch],
                 logs: list[LogBatch] | None = None, drops: list[LogDrop] | None = None, awaited: bool = False):
        self.epoch = epoch
        # the requester waits for this commit at once (FLUSH, DDL): nothing runs beside it
        self.awaited = awaited
        self.extra = extra
        self.batches = batches
        self.logs = logs or []
        self.drops = drops or []
        # SSTs and log segments written elsewhere (Spark tasks) for these epochs
        self.adopted: list[SstInfo | LogSegment] = []
        self.done = threading.Event()
        self.error: BaseException | None = None


class Uploader(BackgroundLoop):
    """The commit queue and the uploader thread of a writer. `lock` is the store's state
    lock; `committed(v)` is told of each checkpoint's version, under that lock."""

    thread_name = "hummock-uploader"

    def __init__(self, buffer: SharedBuffer, sstables: SstableStore, versions: VersionManager,
                 lock: threading.RLock, *, remote: bool, committed: Callable[[HummockVersion], None]):
        self.buffer = buffer
        self.sstables = sstables
        self.versions = versions
        self.remote = remote  # a checkpoint's SSTs are built by the upload process
        self._committed = committed
        super().__init__(lock)
        self._queue: list[CommitTask] = []
        self.requested_epoch = versions.current.max_committed_epoch
        self.requested_extra: bytes | None = None  # of the newest requested commit, if it set one
        self.failed: BaseException | None = None

    def fail(self, error: BaseException) -> None:
        """Stop committing: `error` is every later commit's (a lost lease)."""
        with self._lock:
            if self.failed is None:
                self.failed = error

    def follow(self, v: HummockVersion) -> None:
        """Start over at `v` (a Spark task's store at the driver's next version)."""
        with self._lock:
            self.requested_epoch = v.max_committed_epoch
            self.failed = None

    def pending(self) -> int:
        with self._lock:
            return len(self._queue)

    def request(self, epoch: int, extra: bytes | None, awaited: bool = False) -> CommitTask:
        """Queue the commit of `epoch` (checked by the caller, under the state lock).
        `awaited`: the caller waits for it right away (see `write_batches`)."""
        with self._lock:
            batches, logs, drops, adopted = self.buffer.take_for_commit(epoch)
            task = CommitTask(epoch, None if extra is None else bytes(extra), batches, logs, drops, awaited)
            task.adopted = adopted
            self.requested_epoch = epoch
            if extra is not None:
                self.requested_extra = task.extra
            self._queue.append(task)
            self.ensure_thread()
            self._cond.notify_all()
            return task

    def wait(self, max_pending: int = 0) -> None:
        """Wait until at most `max_pending` requested commits are not yet durable (the
        oldest finish first); raise the error of any that failed."""
        with self._lock:
            tasks = list(self._queue)
        for t in tasks[:max(0, len(tasks) - max_pending)]:
            t.done.wait()
            if t.error is not None:
                raise t.error

    def ensure_thread(self) -> None:
        self.start_thread()

    def _loop(self) -> None:
        closing = self.sstables.closing
        hinted = 0.0  # when CURRENT was last written
        stale = False  # a version committed since
        while True:
            with self._lock:
                while not self._queue and not closing.is_set():
                    if not stale:
                        self._cond.wait()
                    elif not self._cond.wait(max(0.0, hinted + HINT_INTERVAL_S - time.monotonic())):
                        break  # no commit came meanwhile: CURRENT catches up
                if not self._queue and stale:
                    task = None
                elif not self._queue:
                    return
                else:
                    task = self._queue[0]
            if task is None:
                self.versions.write_hint()
                hinted, stale = time.monotonic(), False
                continue
            try:
                if self.failed is not None:
                    raise StorageError(f"the state store failed earlier: {self.failed}")
                self._run(task)
            except BaseException as e:  # noqa: BLE001 - handed to the waiter
                task.error = e if isinstance(e, StorageError) else StorageError(f"commit failed: {e}")
                with self._lock:
                    self.failed = task.error
            with self._lock:
                self._queue.pop(0)
                task.done.set()
                self._cond.notify_all()
            if task.error is None:
                # after the waiter is released, and at most every HINT_INTERVAL_S while
                # commits follow one another: CURRENT is only a hint (see _run), which an open
                # rolls forward from (its write replaces a file: on some file systems, a flush)
                stale = True
                if time.monotonic() - hinted >= HINT_INTERVAL_S:
                    self.versions.write_hint()
                    hinted, stale = time.monotonic(), False

    def _run(self, task: CommitTask) -> None:
        # the new SSTs' and segments' fsyncs run while the version is written: it is
        # published (linked) only once they are durable (before_publish)
        pending: list = []
        new_ssts: list[SstInfo] = []
        if task.batches:
            new_ssts = self.write_batches(task.batches, local=task.awaited, pending=pending)
        segments = [a for a in task.adopted if isinstance(a, LogSegment)] + \
            self.sstables.write_logs(task.logs, pending)
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
            self.buffer.remove([*task.batches, *task.logs, *task.drops])
            self.sstables.release_ids(s.id for s in [*new_ssts, *segments])
            self._committed(v)
        # the version object is the commit point; CURRENT, a hint, is written by _loop once
        # the waiter has been released (one file write and rename fewer on FLUSH's path)
        self.versions.commit(make, installed, hint=False, before_publish=lambda: wait_durable(pending))

    def write_batches(self, batches: list[SharedBufferBatch], local: bool = False,
                      pending: list | None = None) -> list[SstInfo]:
        """A checkpoint's batches as SSTs: by the upload process, or in this thread. The
        process lets the stream go on beside the upload; a commit its requester waits for
        (`local`: FLUSH) has no stream beside it, so it is built here, without shipping the
        batches to the process and the SSTs' metas back. `pending`: see
        SstableStore.write_runs (the upload process's SSTs are durable when it answers)."""
        if self.remote and not local:
            from rw_cli.store import upload_process
            if upload_process.ready():
                return upload_process.upload_remote(self.sstables, batches)
        return self.sstables.write_runs(merged_runs(batches), pending)
