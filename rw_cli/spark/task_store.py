"""The state store as a Spark task sees it: a committed version to read, its own writes.

A task reads the version the driver pinned for the epoch (plus what its actors wrote in this
epoch, read-your-writes) and, at the barrier, writes its actors' state as SSTs (and append
log segments) with ids the driver reserved. It never commits a version: the driver adds the
SSTs of every task to the epoch's version once all tasks have finished, so a failed or
retried task leaves only unreferenced objects, which vacuum removes.
"""
from __future__ import annotations

from rw_cli.store.hummock import HummockStorage
from rw_cli.store.version import HummockVersion, LogSegment, SstInfo
from rw_cli.store.worker_store import open_worker_store


class TaskStore:
    """A worker store (`state`, what the task's actors read and write) at the driver's versions."""

    def __init__(self, url: str, endpoint: str | None = None, cache_size: int | str = 64 << 20):
        self.state: HummockStorage = open_worker_store(url, endpoint, cache_size)

    def at_version(self, version: bytes) -> None:
        """Read this (encoded) version from now on and forget writes of an earlier (failed)
        task. The driver ships the version itself: its object may be vacuumed meanwhile,
        while the SSTs it lists stay pinned by the driver until the task is done."""
        self.state.follow_version(HummockVersion.decode(version))

    def upload(self, epoch: int, sst_ids: list[int]) -> list[SstInfo | LogSegment]:
        """Write every buffered write at epochs <= `epoch` as SSTs and log segments named by
        `sst_ids`."""
        return self.state.write_buffered(epoch, sst_ids)
