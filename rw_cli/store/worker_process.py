"""A helper process of the state store's writer, and the pipe protocol to talk to it.

The writer's background work that is mostly CPU — merging SSTs (compactor_process.py),
sorting a checkpoint's writes and building its SSTs (upload_process.py) — runs in processes
of its own: beside the stream on another core, instead of taking turns with it for the
interpreter lock. A helper is `python -m <module>`; it only reads and writes objects of the
shared object store (never a version: the writer commits). A pickled call goes in, a pickled
result comes out; it exits when its stdin closes, so it never outlives the writer.
"""
from __future__ import annotations

import os
import pickle
import select
import struct
import subprocess
import sys
import threading
from typing import Callable

from rw_cli.errors import StorageError
from rw_cli.store.object_store import ObjectStore
from rw_cli.store.object_store_url import open_object_store
from rw_cli.store.sstable_store import ReservedSstIds, SstableStore

POLL_SECS = 0.2
_HEADER = struct.Struct("<Q")
_READY = b"R"  # the helper's first byte: started


def available(object_store: ObjectStore) -> bool:
    """Whether a helper process can open this object store (not memory://)."""
    return object_store.location() is not None


class WorkerProcess:
    """One helper process and its pipes."""

    def __init__(self, module: str, what: str) -> None:
        self.what = what  # errors read "<what> failed: ..."
        root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p))
        self.proc = subprocess.Popen([sys.executable, "-m", module], bufsize=0,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     env=env, close_fds=True)
        self._in, self._out = self.proc.stdin.fileno(), self.proc.stdout.fileno()
        self._ready = False

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None

    def ready(self, wait: bool = False) -> bool:
        """Whether the helper has finished starting (its imports): it says so on its pipe."""
        if not self._ready and (wait or select.select([self._out], [], [], 0)[0]):
            self._ready = read_exact(self._out, 1) == _READY
        return self._ready

    def call(self, args: tuple, stop: Callable[[], bool]) -> object:
        """Send a call and wait for its result (`stop()`: give up, the store is closing)."""
        self.ready(wait=True)
        data = pickle.dumps(args, protocol=pickle.HIGHEST_PROTOCOL)
        write_all(self._in, _HEADER.pack(len(data)))
        write_all(self._in, data)
        while not select.select([self._out], [], [], POLL_SECS)[0]:
            if stop():
                raise StorageError("the state store is closing")
        status, value = pickle.loads(read_exact(self._out, _HEADER.unpack(read_exact(self._out, _HEADER.size))[0]))
        if status != "ok":
            raise StorageError(f"{self.what} failed: {value}")
        return value

    def kill(self) -> None:
        self.proc.kill()
        self.proc.wait()


class Helper:
    """The helper process of one kind, shared by every store of this process: one call at a
    time, started again when it died."""

    def __init__(self, module: str, what: str) -> None:
        self.module, self.what = module, what
        self.process: WorkerProcess | None = None
        self.lock = threading.Lock()

    @property
    def proc(self) -> subprocess.Popen | None:
        return self.process.proc if self.process is not None else None

    def _running(self) -> WorkerProcess:
        if self.process is None or not self.process.alive:
            self.process = WorkerProcess(self.module, self.what)
        return self.process

    def start(self) -> None:
        with self.lock:
            self._running()

    def ready(self) -> bool:
        with self.lock:
            return self._running().ready()

    def kill(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process = None

    def call(self, sstables: SstableStore, args: tuple, attempts: int = 1) -> object:
        """`run(url, endpoint, env, options, *args)` in the helper for the writer's SST store.
        A helper that dies is replaced; the call is sent again up to `attempts` times in all."""
        url, endpoint = sstables.object_store.location()
        options = dict(block_size=sstables.block_size, compression=sstables.compression,
                       sst_target_size=sstables.sst_target_size)
        for attempt in range(1, attempts + 1):
            with self.lock:
                try:
                    return self._running().call((url, endpoint, client_env(), options, *args),
                                                  sstables.closing.is_set)
                except StorageError as e:
                    if f"{self.what} failed" not in str(e):  # closing: the call is abandoned
                        self.kill()
                    raise
                except (OSError, EOFError, pickle.PickleError) as e:
                    self.kill()
                    if attempt == attempts:
                        raise StorageError(f"the {self.what} process failed: {e}") from e
        raise AssertionError("unreachable")


def read_exact(fd: int, n: int) -> bytes:
    """n bytes from a pipe (the interpreter lock is released while it waits)."""
    buf = bytearray()
    while len(buf) < n:
        chunk = os.read(fd, min(n - len(buf), 1 << 24))
        if not chunk:
            raise EOFError("the helper process exited")
        buf += chunk
    return bytes(buf)


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def serve(run: Callable[..., object], nice: int = 0, setup: Callable[[], None] | None = None) -> None:
    """The helper's loop: `setup()`, then calls of `run(*args)` until the writer closes the
    pipe. Whatever the helper's code prints goes to stderr, never into the pipe."""
    inp, out = sys.stdin.fileno(), os.dup(sys.stdout.fileno())
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    if nice:
        try:
            os.nice(nice)
        except OSError:
            pass
    from rw_cli.common.memory import tune_allocator

    tune_allocator()
    if setup is not None:
        setup()
    write_all(out, _READY)
    while True:
        try:
            args = pickle.loads(read_exact(inp, _HEADER.unpack(read_exact(inp, _HEADER.size))[0]))
        except EOFError:
            return  # the writer is gone
        try:
            reply = ("ok", run(*args))
        except Exception as e:  # noqa: BLE001 - reported to the writer
            reply = ("error", f"{type(e).__name__}: {e}")
        data = pickle.dumps(reply, protocol=pickle.HIGHEST_PROTOCOL)
        write_all(out, _HEADER.pack(len(data)))
        write_all(out, data)


def client_env() -> dict[str, str]:
    """The writer's settings an object store client reads from the environment (AWS
    credentials, profile, region): sent with every call, since a helper process started
    earlier may have started with others."""
    return {k: v for k, v in os.environ.items() if k.startswith("AWS_")}


_open: dict = {}


def shared_sstable_store(url: str, endpoint: str | None, options: dict, env: dict[str, str]) -> SstableStore:
    """This helper process's SST store for the writer's object store, SST options and client
    settings, opened once. It reads SSTs and writes new ones under the ids the writer
    reserved (`use_ids`); it never commits a version."""
    for k in [k for k in os.environ if k.startswith("AWS_") and k not in env]:
        del os.environ[k]
    os.environ.update(env)
    key = (url, endpoint, tuple(sorted(options.items())), tuple(sorted(env.items())))
    sstables = _open.get(key)
    if sstables is None:
        sstables = _open[key] = SstableStore(open_object_store(url, endpoint=endpoint), ReservedSstIds(),
                                             cache_size=32 << 20, cache_refill=False, **options)
    return sstables
