"""Object stores: where SSTs and versions live. Every write is atomic (whole or absent)."""
from __future__ import annotations

import os
import threading
import uuid
from abc import ABC, abstractmethod
from typing import Callable

from rw_cli.errors import StorageError

_TMP_PREFIX = ".tmp-"


class ObjectStore(ABC):
    """A flat namespace of immutable-ish byte objects addressed by '/'-separated paths."""

    @abstractmethod
    def put(self, path: str, data: bytes, *, durable: bool = True) -> None:
        """Write `data` at `path` atomically (replacing any existing object). With
        durable=False a local store may skip fsync (for hints such as CURRENT)."""

    def put_new(self, path: str, data: bytes | list[bytes], pending: list | None = None) -> None:
        """Write a new object that nothing references yet (an SST before the version that
        lists it is committed): durable on return. Unlike `put`, a crash before it returns
        may leave the object partly written under its name — harmless, since no version
        reads it and vacuum deletes objects no version references — so a store may skip
        what makes a write atomic (a temporary file and a rename). With `pending` (a list)
        it may return before the object is durable, having appended what to wait for: the
        caller passes the list to `wait_durable` before it writes what references it.
        `data` may come in parts (an SST's blocks): a store that can write them one after
        another needs no copy of the whole object."""
        self.put(path, b"".join(data) if isinstance(data, list) else data)

    @abstractmethod
    def get(self, path: str) -> bytes:
        """The whole object; StorageError if missing."""

    @abstractmethod
    def get_range(self, path: str, start: int, length: int) -> bytes:
        """`length` bytes from `start`; StorageError if missing or shorter than asked."""

    @abstractmethod
    def exists(self, path: str) -> bool: ...

    @abstractmethod
    def list(self, prefix: str) -> list[str]:
        """Sorted paths starting with `prefix`."""

    @abstractmethod
    def delete(self, path: str) -> None:
        """Remove an object; a missing object is fine."""

    @abstractmethod
    def put_if_absent(self, path: str, data: bytes, before_publish: Callable[[], None] | None = None) -> bool:
        """Write atomically unless an object exists at `path`; True when written.
        `before_publish()` runs before the object can be seen (it may raise: then nothing
        is written): a store may prepare the write while, say, the objects it references
        become durable."""

    def close(self) -> None:
        pass

    def location(self) -> tuple[str, str | None] | None:
        """(url, endpoint) that `open_object_store` opens this same store from in another
        process; None when no other process can see it."""
        return None


def check_path(path: str) -> str:
    if not path or path.startswith("/") or any(p in ("", ".", "..") for p in path.split("/")):
        raise StorageError(f"invalid object path {path!r}")
    return path


class MemoryObjectStore(ObjectStore):
    def __init__(self) -> None:
        self._objects: dict[str, bytes] = {}
        self._lock = threading.Lock()

    def put(self, path: str, data: bytes, *, durable: bool = True) -> None:
        check_path(path)
        with self._lock:
            self._objects[path] = bytes(data)

    def get(self, path: str) -> bytes:
        try:
            return self._objects[path]
        except KeyError:
            raise StorageError(f"object not found: {path}") from None

    def get_range(self, path: str, start: int, length: int) -> bytes:
        data = self.get(path)
        if start < 0 or length < 0 or start + length > len(data):
            raise StorageError(_truncated(path, start, start + length))
        return data[start:start + length]

    def exists(self, path: str) -> bool:
        return path in self._objects

    def list(self, prefix: str) -> list[str]:
        with self._lock:
            return sorted(p for p in self._objects if p.startswith(prefix))

    def delete(self, path: str) -> None:
        with self._lock:
            self._objects.pop(path, None)

    def put_if_absent(self, path: str, data: bytes, before_publish: Callable[[], None] | None = None) -> bool:
        check_path(path)
        if before_publish is not None:
            before_publish()
        with self._lock:
            if path in self._objects:
                return False
            self._objects[path] = bytes(data)
            return True


_pool = None
_pool_lock = threading.Lock()


def _fsync_pool():
    """Threads that run the fsyncs of new objects while the writer goes on (fsync releases
    the interpreter lock; a disk serves several at once, often in one journal commit)."""
    global _pool
    if _pool is None:
        with _pool_lock:
            if _pool is None:
                from concurrent.futures import ThreadPoolExecutor
                _pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="object-store-fsync")
    return _pool


def _in_background(fn, *args):
    """`fn(*args)` in the fsync threads; a future of it. At interpreter exit (a session
    closed by atexit) no thread takes work any more: it runs here, then."""
    from concurrent.futures import Future

    try:
        return _fsync_pool().submit(fn, *args)
    except RuntimeError:  # cannot schedule new futures after interpreter shutdown
        done: Future = Future()
        try:
            done.set_result(fn(*args))
        except BaseException as e:  # noqa: BLE001 - raised by the waiter, as from a thread
            done.set_exception(e)
        return done


def wait_durable(pending: list) -> None:
    """Wait until every object `put_new` left in `pending` is durable (raises StorageError
    if one could not be made so)."""
    for wait in pending:
        wait()


def _unlink_quietly(full: str) -> None:
    try:
        os.unlink(full)
    except OSError:
        pass


def _truncated(path: str, start: int, end: int) -> str:
    return (f"object {path} of the state store is truncated or damaged: bytes {start}..{end} "
            f"that its index points to are past its end")


def _write_all(fd: int, parts: list[bytes]) -> None:
    """Every part, in order (`writev` a batch of parts at a time; a short write goes on
    where it stopped)."""
    views = [memoryview(p) for p in parts if len(p)]
    i = 0
    while i < len(views):
        done = os.writev(fd, views[i:i + _IOV_MAX])
        while done:  # skip what was written
            if done >= len(views[i]):
                done -= len(views[i])
                i += 1
            else:
                views[i], done = views[i][done:], 0


_IOV_MAX = 512


class LocalObjectStore(ObjectStore):
    """Objects are files under `root`; writes go to a temp file, fsync, then rename/link."""

    def __init__(self, root: str) -> None:
        self.root = os.path.abspath(root)
        try:
            os.makedirs(self.root, exist_ok=True)
        except OSError as e:
            raise StorageError(f"cannot create object store directory {self.root}: {e}") from e

    def location(self) -> tuple[str, str | None]:
        return self.root, None

    def _full(self, path: str) -> str:
        return os.path.join(self.root, *check_path(path).split("/"))

    def _write_tmp(self, full: str, data: bytes, durable: bool = True) -> str:
        d = os.path.dirname(full)
        os.makedirs(d, exist_ok=True)
        tmp = os.path.join(d, f"{_TMP_PREFIX}{uuid.uuid4().hex}")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
                if durable:
                    f.flush()
                    os.fsync(f.fileno())
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
        return tmp

    @staticmethod
    def _fsync_dir(d: str) -> None:
        try:
            fd = os.open(d, os.O_RDONLY)
        except OSError:
            return
        try:
            os.fsync(fd)
        except OSError:
            pass
        finally:
            os.close(fd)

    def put(self, path: str, data: bytes, *, durable: bool = True) -> None:
        full = self._full(path)
        try:
            tmp = self._write_tmp(full, data, durable)
            os.replace(tmp, full)
            if durable:
                self._fsync_dir(os.path.dirname(full))
        except OSError as e:
            raise StorageError(f"cannot write object {path}: {e}") from e

    def put_new(self, path: str, data: bytes | list[bytes], pending: list | None = None) -> None:
        """Written in place (parts by `writev`, no copy of the whole), and its data and its
        directory entry made durable by two fsyncs issued at once (each costs a disk round
        trip: a checkpoint waits for one instead of two in a row, and for no rename); with
        `pending`, they run while the caller goes on (to the version's own write)."""
        full = self._full(path)
        d = os.path.dirname(full)
        try:
            os.makedirs(d, exist_ok=True)
            fd = os.open(full, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            try:
                _write_all(fd, data if isinstance(data, list) else [data])
            except BaseException:
                os.close(fd)
                raise
        except OSError as e:
            _unlink_quietly(full)
            raise StorageError(f"cannot write object {path}: {e}") from e

        def sync_file() -> None:
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        synced = [_in_background(self._fsync_dir, d), _in_background(sync_file)]

        def wait() -> None:
            try:
                for f in synced:
                    f.result()
            except OSError as e:
                _unlink_quietly(full)
                raise StorageError(f"cannot write object {path}: {e}") from e
        if pending is None:
            wait()
        else:
            pending.append(wait)

    def put_if_absent(self, path: str, data: bytes, before_publish: Callable[[], None] | None = None) -> bool:
        full = self._full(path)
        try:
            tmp = self._write_tmp(full, data)
            try:
                if before_publish is not None:
                    before_publish()
                os.link(tmp, full)
                linked = True
            except FileExistsError:
                linked = False
            finally:
                os.unlink(tmp)
            if linked:
                self._fsync_dir(os.path.dirname(full))
            return linked
        except OSError as e:
            raise StorageError(f"cannot write object {path}: {e}") from e

    def get(self, path: str) -> bytes:
        full = self._full(path)
        try:
            with open(full, "rb") as f:
                return f.read()
        except FileNotFoundError:
            raise StorageError(f"object not found: {path}") from None
        except OSError as e:
            raise StorageError(f"cannot read object {path}: {e}") from e

    def get_range(self, path: str, start: int, length: int) -> bytes:
        full = self._full(path)
        if start < 0 or length < 0:
            raise StorageError(f"invalid range {start}+{length} for object {path}")
        try:
            fd = os.open(full, os.O_RDONLY)
            try:
                if length < (1 << 20) and hasattr(os, "posix_fadvise"):
                    # a block or a meta: no read-ahead beyond what is asked for
                    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_RANDOM)
                data = os.pread(fd, length, start)
            finally:
                os.close(fd)
        except FileNotFoundError:
            raise StorageError(f"object not found: {path}") from None
        except OSError as e:
            raise StorageError(f"cannot read object {path}: {e}") from e
        if len(data) != length:
            raise StorageError(_truncated(path, start, start + length))
        return data

    def exists(self, path: str) -> bool:
        return os.path.isfile(self._full(path))

    def list(self, prefix: str) -> list[str]:
        out: list[str] = []
        # walk only the deepest directory that the prefix names completely
        base_rel = prefix.rsplit("/", 1)[0] if "/" in prefix else ""
        base = os.path.join(self.root, *base_rel.split("/")) if base_rel else self.root
        if not os.path.isdir(base):
            return []
        for dirpath, _dirnames, filenames in os.walk(base):
            rel_dir = os.path.relpath(dirpath, self.root)
            rel_dir = "" if rel_dir == "." else rel_dir.replace(os.sep, "/") + "/"
            for name in filenames:
                if name.startswith(_TMP_PREFIX):
                    continue
                p = rel_dir + name
                if p.startswith(prefix):
                    out.append(p)
        out.sort()
        return out

    def delete(self, path: str) -> None:
        try:
            os.unlink(self._full(path))
        except FileNotFoundError:
            pass
        except OSError as e:
            raise StorageError(f"cannot delete object {path}: {e}") from e
