"""The state store as a process that writes SSTs for the writer sees it.

Spark tasks and compactor processes read SSTs from the shared object store and write new
ones, but never commit a version: the writer reserves the ids of the SSTs they may write
(so vacuum leaves them alone) and puts what they return into its next version. An SST left
by a worker that failed carries a reserved id no version references, and vacuum removes it
once the writer releases the id.
"""
from __future__ import annotations

import os

from rw_cli.errors import StorageError
from rw_cli.store.hummock import HummockStorage
from rw_cli.store.object_store import open_object_store


class WorkerStore(HummockStorage):
    def __init__(self, url: str, endpoint: str | None = None, cache_size: int | str = 64 << 20, **options):
        super().__init__(open_object_store(url, endpoint=endpoint), read_only=True,
                         background_compaction=False, cache_size=cache_size, **options)
        self.read_only = False  # writes are uploaded, never committed here
        self._ids: list[int] = []

    def use_ids(self, sst_ids: list[int]) -> None:
        """The ids the writer reserved for the SSTs of the next piece of work."""
        self._ids = list(sst_ids)

    def _alloc_sst_id(self) -> int:
        if not self._ids:
            raise StorageError("a worker wrote more SSTs than the writer reserved ids for")
        return self._ids.pop(0)

    def commit_epoch(self, epoch: int, extra: bytes | None = None, wait: bool = True) -> None:
        raise StorageError("a worker never commits a version; the writer does")


_open: dict = {}


def client_env() -> dict[str, str]:
    """The writer's settings an object store client reads from the environment (AWS
    credentials, profile, region): sent with every call, since a helper process started
    earlier may have started with others."""
    return {k: v for k, v in os.environ.items() if k.startswith("AWS_")}


def shared_worker_store(url: str, endpoint: str | None, options: dict, env: dict[str, str]) -> WorkerStore:
    """This (helper) process's store for the writer's object store, SST options and client
    settings, opened once."""
    for k in [k for k in os.environ if k.startswith("AWS_") and k not in env]:
        del os.environ[k]
    os.environ.update(env)
    key = (url, endpoint, tuple(sorted(options.items())), tuple(sorted(env.items())))
    store = _open.get(key)
    if store is None:
        store = _open[key] = WorkerStore(url, endpoint, cache_size=32 << 20, cache_refill=False, **options)
    return store
