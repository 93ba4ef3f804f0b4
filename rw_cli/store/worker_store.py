"""The state store as a Spark task sees it: the writer's versions to read, writes of its own.

A worker store reads the version it is told to follow (`HummockStorage.follow_version`) plus
its own buffered writes, and writes them as SSTs under ids the writer reserved
(`HummockStorage.write_buffered`), but never commits a version: the writer reserves the ids
(so vacuum leaves them alone) and puts what the worker returns into its next version. An SST
left by a worker that failed carries a reserved id no version references, and vacuum
removes it once the writer releases the id.
"""
from __future__ import annotations

from rw_cli.store.hummock import HummockStorage
from rw_cli.store.object_store_url import open_object_store


def open_worker_store(url: str, endpoint: str | None = None, cache_size: int | str = 64 << 20,
                      **options) -> HummockStorage:
    """A worker's store over the writer's object store (`url`, `endpoint`)."""
    return HummockStorage(open_object_store(url, endpoint=endpoint), worker=True, background_compaction=False,
                          cache_size=cache_size, **options)
