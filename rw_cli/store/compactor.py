"""Compaction running: the compactor of a writer, in a background thread or on demand.

It takes the tasks the picker (compaction_picker.py) finds due, runs their merge in this
process (compaction_merge.py) or in the compactor process (compactor_process.py), and
commits the version their outputs make through the version manager. A task whose inputs
left the version meanwhile commits nothing; its outputs are vacuumed. Background compaction
gives way to a stream of checkpoints unless L0 grows past the stall limit: in a thread it
shares the interpreter lock with the stream; in the compactor process, the cores and their
caches.
"""
from __future__ import annotations

import sys
import threading
import time
from typing import Callable

from rw_cli.store import append_log
from rw_cli.store.background import BackgroundLoop
from rw_cli.store.compaction_merge import merge_task
from rw_cli.store.compaction_picker import CompactionPicker, CompactTask
from rw_cli.store.sstable_store import SstableStore
from rw_cli.store.version import HummockVersion, LogSegment
from rw_cli.store.version_manager import VersionManager

COMPACTION_IDLE_SECS = 0.2


class Compactor(BackgroundLoop):
    """A writer's compaction state: the picker, the task lock, the background thread and
    the last error. `lock` is the store's state lock."""

    thread_name = "hummock-compactor"

    def __init__(self, sstables: SstableStore, versions: VersionManager, picker: CompactionPicker,
                 lock: threading.RLock, *, background: bool, remote: bool, vacuum: Callable[[], int]):
        self.sstables = sstables
        self.versions = versions
        self.picker = picker
        self.background = background
        self.remote = remote  # background merges run in the compactor process
        self.stats = sstables.stats
        self._vacuum = vacuum
        super().__init__(lock)
        self._task_lock = threading.Lock()  # one task at a time
        self.wanted = False
        self.last_commit = 0.0  # when the last checkpoint committed (time.monotonic)
        self.streaming = 0  # the stream's work running now (ticks, barriers)
        self.last_streamed = 0.0  # when such work last began or ended
        self.error: BaseException | None = None

    # -- background --------------------------------------------------------------------------
    def kick(self) -> None:
        """Wake the background compactor if some level or log is over its limit."""
        with self._lock:
            if self.picker.due(self.versions.current):
                self.wanted = True
                self.ensure_thread()
                self._cond.notify_all()

    def on_commit(self, v: HummockVersion) -> None:
        """A checkpoint installed `v` (called under the state lock)."""
        self.last_commit = time.monotonic()
        if self.picker.due_after_commit(v):
            self.wanted = True
            self._cond.notify_all()

    def stream_work(self, begins: bool) -> None:
        """The stream's work (a tick, a barrier) begins or ends: while it runs, and for
        COMPACTION_IDLE_SECS after, only pressing compaction starts. Epochs that follow one
        another with no pause are never idle, however long each one takes (a Spark epoch can
        take longer than COMPACTION_IDLE_SECS between two commits)."""
        with self._lock:
            self.streaming += 1 if begins else -1
            self.last_streamed = time.monotonic()

    def _idle(self) -> bool:
        return not self.streaming and \
            time.monotonic() - max(self.last_commit, self.last_streamed) >= COMPACTION_IDLE_SECS

    def ensure_thread(self) -> None:
        if self.background:
            self.start_thread()

    def _loop(self) -> None:
        closing = self.sstables.closing
        while True:
            with self._lock:
                while not self.wanted and not closing.is_set():
                    self._cond.wait()
                if closing.is_set():
                    return
                self.wanted = False
            try:
                did = False
                while not closing.is_set():
                    if not self.picker.pressing(self.versions.current) and not self._idle():
                        time.sleep(COMPACTION_IDLE_SECS / 4)
                        continue
                    if not (self.merge_logs_once() or self.compact_once(self.remote)):
                        break
                    did = True
                if did and not closing.is_set():
                    self._vacuum()
            except BaseException as e:  # noqa: BLE001 - reported through compaction_error
                if not closing.is_set():  # not "the state store is closing"
                    self.report_error(e)

    def report_error(self, e: BaseException) -> None:
        """Keep the error (`compaction_error`, which `rw compact` reports) and warn on stderr
        the first time; compaction is tried again at its next trigger."""
        first = self.error is None
        self.error = e
        self.stats["compaction_errors"] += 1
        if first:
            try:
                sys.stderr.write(f"WARNING:  background compaction of the state store failed: {e}\n")
                sys.stderr.flush()
            except Exception:  # noqa: BLE001 - no stderr: the error stays in compaction_error
                pass

    def wait(self, timeout: float = 600.0) -> None:
        """Block until no background compaction is due."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._task_lock:
                with self._lock:
                    v = self.versions.current
                    due = self.picker.pick(v) is not None or self.wanted or self.picker.log_merge_due(v)
            if not due:
                return
            time.sleep(0.02)

    # -- tasks -------------------------------------------------------------------------------
    def run_until_done(self, full: bool = False) -> int:
        """Run compaction tasks until none is due (full: merge everything into the bottom
        level). Returns the number of tasks run."""
        n = 0
        while self.merge_logs_once(full):
            n += 1
        if full:
            n += self.compact_full()
        while self.compact_once():
            n += 1
        return n

    def compact_once(self, remote: bool = False) -> bool:
        """Run the next due task, if any."""
        with self._task_lock:
            with self._lock:
                task = self.picker.pick(self.versions.current)
            if task is None:
                return False
            self.run_task(task, remote)
            return True

    def compact_full(self) -> int:
        """Merge every SST into the bottom level (tombstones and old versions below the low
        watermark dropped)."""
        with self._task_lock:
            with self._lock:
                task = self.picker.pick_full(self.versions.current)
            if task is None:
                return 0
            return 1 if self.run_task(task) else 0

    def run_task(self, task: CompactTask, remote: bool = False) -> bool:
        """Run one task and commit its version. False when the version changed under it.
        `remote`: the merge runs in a compactor process (see compactor_process.py)."""
        dropped = 0
        if task.trivial_move:
            outputs = [s for _, ssts in task.inputs for s in ssts]
        elif remote:
            from rw_cli.store.compactor_process import merge_remote
            outputs, dropped = merge_remote(self.sstables, task, self.versions.compaction_watermark())
        else:
            outputs, dropped = merge_task(self.sstables, task, self.versions.compaction_watermark())

        def make(v: HummockVersion) -> HummockVersion | None:
            if not task.input_ids <= v.sst_ids():
                return None
            nv = v.copy(id=v.id + 1)
            nv.tombstones_dropped_through = max(nv.tombstones_dropped_through, dropped)
            while len(nv.levels) <= task.target_level:
                nv.levels.append([])
            ids = task.input_ids
            if task.target_level == 0:
                # L0 is newest first and its inputs are adjacent: the merge takes their place
                # (files committed meanwhile are newer and stay before it)
                at = next(i for i, s in enumerate(v.levels[0]) if s.id in ids)
                nv.levels = [[s for s in lv if s.id not in ids] for lv in nv.levels]
                nv.levels[0] = nv.levels[0][:at] + outputs + nv.levels[0][at:]
                return nv
            nv.levels = [[s for s in lv if s.id not in ids] for lv in nv.levels]
            nv.levels[task.target_level] = sorted(nv.levels[task.target_level] + outputs, key=lambda s: s.smallest_key)
            return nv

        def installed(_nv: HummockVersion) -> None:
            self.sstables.release_ids(s.id for s in outputs)
            self.stats["compactions"] += 1
            self.stats["compaction_input_bytes"] += task.input_bytes

        if self.versions.commit(make, installed) is None:
            self.sstables.release_ids(s.id for s in outputs)
            return False
        return True

    def merge_logs_once(self, full: bool = False) -> bool:
        """Merge the next run of log segments that is due (see append_log.merge_candidate)
        into one; False when none is."""
        with self._task_lock:
            with self._lock:
                picked = self.picker.pick_log_merge(self.versions.current, full)
            if picked is None:
                return False
            self._merge_log(*picked)
            return True

    def _merge_log(self, table_id: int, old: list[LogSegment]) -> None:
        rows = append_log.concat([self.sstables.read_log_segment(g) for g in old])
        new = self.sstables.write_log_segment(table_id, rows, old[0].min_epoch, old[-1].max_epoch,
                                              max(g.level for g in old) + 1, stat="log_merge_bytes")

        def make(cur: HummockVersion) -> HummockVersion | None:
            segs = append_log.replace(cur.logs.get(table_id, []), old, new)
            if segs is None:
                return None
            v = cur.copy(id=cur.id + 1)
            v.logs[table_id] = segs
            return v
        try:
            committed = self.versions.commit(make)
        finally:
            self.sstables.release_ids([new.id])
        if committed is None:
            self.sstables.object_store.delete(new.path)
        self.stats["log_merges"] += 1
