"""The state store as a Spark task sees it: a committed version to read, its own writes.

A task reads the version the driver pinned for the epoch (plus what its actors wrote in this
epoch, read-your-writes) and, at the barrier, writes its actors' state as SSTs (and append
log segments) with ids the driver reserved. It never commits a version: the driver adds the
SSTs of every task to the epoch's version once all tasks have finished, so a failed or
retried task leaves only unreferenced objects, which vacuum removes.
"""
from __future__ import annotations

from rw_cli.errors import StorageError
from rw_cli.store.hummock import merged_runs
from rw_cli.store.version import HummockVersion, LogSegment, SstInfo
from rw_cli.store.worker_store import WorkerStore


class TaskStore(WorkerStore):
    def at_version(self, version: bytes) -> None:
        """Read this (encoded) version from now on and forget writes of an earlier (failed)
        task. The driver ships the version itself: its object may be vacuumed meanwhile,
        while the SSTs it lists stay pinned by the driver until the task is done."""
        with self._lock:
            self._buffer = []
            self._logs, self._log_drops = [], []
            v = HummockVersion.decode(version)
            if self._version.id != v.id or self._version.max_committed_epoch != v.max_committed_epoch:
                self._version = v
            self._requested_epoch = self._version.max_committed_epoch
            self._failed = None

    def upload(self, epoch: int, sst_ids: list[int]) -> list[SstInfo | LogSegment]:
        """Write every buffered write at epochs <= `epoch` as SSTs and log segments named by
        `sst_ids`."""
        with self._lock:
            batches = [b for b in self._buffer if b.epoch <= epoch]
            self._buffer = [b for b in self._buffer if b.epoch > epoch]
            logs = [b for b in self._logs if b.epoch <= epoch]
            self._logs = [b for b in self._logs if b.epoch > epoch]
            if self._log_drops:
                raise StorageError("a Spark task cannot drop an append log")
        self.use_ids(sst_ids)
        return (self._write_ssts(merged_runs(batches)) if batches else []) + self._write_logs(logs)
