"""Compaction in a separate process, as RisingWave runs it on dedicated compactor nodes.

The writer keeps the version: it picks a task, reserves the ids of the task's output SSTs,
and commits the version those outputs make. The compactor process only reads the input
SSTs from the object store and writes the outputs under the reserved ids. The merge is most
of the store's CPU under a stream of checkpoints; in a process of its own it runs beside the
stream (on another core) instead of taking turns with it for the interpreter lock.
A store no other process can open (memory://) compacts in a thread instead.
"""
from __future__ import annotations

import math
import os
import pickle
import select
import struct
import subprocess
import sys
import threading

from rw_cli.errors import StorageError
from rw_cli.store.version import SstInfo

POLL_SECS = 0.2
_HEADER = struct.Struct("<Q")


def available(store) -> bool:
    """Whether a compactor process can open this store's object store."""
    return store.object_store.location() is not None


class _Compactor:
    """One compactor process (`python -m rw_cli.store.compactor_process`) and its pipes:
    a pickled call goes in, a pickled result comes out. It exits when its stdin closes,
    so it never outlives the writer."""

    def __init__(self) -> None:
        root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p))
        self.proc = subprocess.Popen([sys.executable, "-m", "rw_cli.store.compactor_process"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     env=env, close_fds=True)

    def call(self, args: tuple, stop) -> object:
        data = pickle.dumps(args, protocol=pickle.HIGHEST_PROTOCOL)
        self.proc.stdin.write(_HEADER.pack(len(data)) + data)
        self.proc.stdin.flush()
        out = self.proc.stdout
        while not select.select([out], [], [], POLL_SECS)[0]:
            if stop():
                raise StorageError("the state store is closing")
        status, value = pickle.loads(_read(out, _HEADER.unpack(_read(out, _HEADER.size))[0]))
        if status != "ok":
            raise StorageError(f"compaction failed: {value}")
        return value

    def kill(self) -> None:
        self.proc.kill()
        self.proc.wait()


_compactor: _Compactor | None = None
_lock = threading.Lock()  # one call at a time (every store of this process shares the compactor)


def _read(f, n: int) -> bytes:
    buf = f.read(n)
    if buf is None or len(buf) < n:
        raise EOFError("the compactor process exited")
    return buf


def reserve(store, task) -> list[int]:
    """Ids enough for the task's outputs: outputs are cut at the target size, so there are
    at most (input bytes / target) + 1 of them, with room for compressed inputs growing."""
    total = sum(s.file_size for _, ssts in task.inputs for s in ssts)
    grow = 8 if store.compression else 2
    n = len(task.input_ids) + math.ceil(total * grow / max(1, store.sst_target_size)) + 2
    return [store._alloc_sst_id() for _ in range(n)]


def merge_remote(store, task, watermark: int) -> list[SstInfo]:
    """`merge_task` run by the compactor process; the unused ids are released."""
    global _compactor
    url, endpoint = store.object_store.location()
    ids = reserve(store, task)
    outputs: list[SstInfo] = []
    options = dict(block_size=store.block_size, compression=store.compression, sst_target_size=store.sst_target_size)
    try:
        with _lock:
            if _compactor is None or _compactor.proc.poll() is not None:
                _compactor = _Compactor()
            try:
                outputs = _compactor.call((url, endpoint, task, watermark, ids, options), lambda: store._stop)
            except StorageError as e:
                if "compaction failed" not in str(e):  # closing: the task is abandoned
                    _compactor.kill()
                    _compactor = None
                raise
            except (OSError, EOFError, pickle.PickleError) as e:
                _compactor.kill()
                _compactor = None
                raise StorageError(f"the compactor process failed: {e}") from e
        return outputs
    finally:
        store.release_sst_ids(set(ids) - {s.id for s in outputs})


# -- in the compactor process -----------------------------------------------------------------
_stores: dict = {}


def _run(url: str, endpoint: str | None, task, watermark: int, ids: list[int], options: dict) -> list[SstInfo]:
    from rw_cli.store.compactor import merge_task
    from rw_cli.store.worker_store import WorkerStore

    key = (url, endpoint, tuple(sorted(options.items())))
    store = _stores.get(key)
    if store is None:
        store = _stores[key] = WorkerStore(url, endpoint, cache_size=32 << 20, cache_refill=False, **options)
    store.use_ids(ids)
    return merge_task(store, task, watermark)


def _serve() -> None:
    # compaction takes the CPU the stream leaves: it can fall behind for a while (L0 grows,
    # reads look at more files) but it never slows the checkpoints down
    try:
        os.nice(19)
    except OSError:
        pass
    inp, out = sys.stdin.buffer, sys.stdout.buffer
    while True:
        try:
            args = pickle.loads(_read(inp, _HEADER.unpack(_read(inp, _HEADER.size))[0]))
        except EOFError:
            return  # the writer is gone
        try:
            reply = ("ok", _run(*args))
        except Exception as e:  # noqa: BLE001 - reported to the writer
            reply = ("error", f"{type(e).__name__}: {e}")
        data = pickle.dumps(reply, protocol=pickle.HIGHEST_PROTOCOL)
        out.write(_HEADER.pack(len(data)) + data)
        out.flush()


if __name__ == "__main__":
    _serve()
