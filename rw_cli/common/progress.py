"""Progress and cancellation hooks for long work: backfill, long batch queries.

Engine code reports progress without knowing who listens:

    from rw_cli.common.progress import Progress

    with Progress("backfill mv1", total=snapshot_rows) as p:   # total may be None
        for chunk in snapshot:
            ...                      # process the chunk
            p.advance(len(chunk))    # or p.update(done_so_far)

Work done inside C code (a DuckDB query) can pass `poll=`, a function the display thread
calls to read the fraction done (0..1) or None, e.g. `Progress("query", poll=con.query_progress)`.

When nobody listens (a script, the Python API, a non-terminal stderr) a Progress costs one
context-variable read. The shell installs a listener (`rw_cli.shell.progress.TerminalProgress`)
that draws a bar on stderr after about a second.

Every `update` / `advance` is also a cancellation point: after the user pressed Ctrl-C
during a statement that must not be interrupted at an arbitrary bytecode (DML, DDL, FLUSH),
the next call raises `QueryCanceled`. Call them only where raising is safe.

Work inside C code that no Python signal handler reaches until it returns (a DuckDB query)
runs under `interruptible(stop)`: another thread (the shell's Ctrl-C watcher, the server's
CancelRequest) ends it at once with `interrupt(thread)`. A thread whose statement may stop
anywhere (a read-only one) can also be told so with `request_interrupt`: its next
interruptible work or progress update raises `QueryCanceled` — the KeyboardInterrupt of a
Ctrl-C can be lost, swallowed by C code that was importing a module when it came (pyarrow
imports pandas lazily and takes any error for its absence).
"""
from __future__ import annotations

import threading
import time
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Callable, Protocol

from rw_cli.errors import QueryCanceled


class Listener(Protocol):
    def start(self, progress: "Progress") -> None: ...
    def stop(self, progress: "Progress") -> None: ...


_listener: ContextVar[Listener | None] = ContextVar("rw_progress_listener", default=None)
_cancel_requested = False


def current() -> Listener | None:
    """The listener progress goes to, or None when nobody shows progress."""
    return _listener.get()


def install(listener: Listener | None):
    """Make `listener` receive progress (returns a token for `uninstall`)."""
    return _listener.set(listener)


def uninstall(token) -> None:
    _listener.reset(token)


def request_cancel() -> None:
    global _cancel_requested
    _cancel_requested = True


def clear_cancel() -> None:
    global _cancel_requested
    _cancel_requested = False


def cancel_requested() -> bool:
    return _cancel_requested


def check_cancel() -> None:
    """Raise QueryCanceled when the user asked to cancel the running statement."""
    if _cancel_requested:
        clear_cancel()
        raise QueryCanceled()
    if _interrupted and threading.get_ident() in _interrupted:
        raise QueryCanceled()


_interrupted: set[int] = set()  # threads whose statement stops at its next interruptible work


def request_interrupt(thread_ident: int) -> None:
    """The statement thread `thread_ident` runs stops at its next interruptible work or
    progress update (until `clear_interrupt`)."""
    _interrupted.add(thread_ident)


def clear_interrupt(thread_ident: int) -> None:
    _interrupted.discard(thread_ident)


_stoppers: dict[int, Callable[[], None]] = {}  # thread ident -> stops the C work it runs now
_stoppers_lock = threading.Lock()


@contextmanager
def interruptible(stop: Callable[[], None]):
    """The calling thread runs C work that `stop` (called from another thread) ends with an
    error of its own; `stop` must be harmless once that work is over."""
    ident = threading.get_ident()
    if ident in _interrupted:
        raise QueryCanceled()
    with _stoppers_lock:
        outer = _stoppers.get(ident)
        _stoppers[ident] = stop
    try:
        yield
    finally:
        with _stoppers_lock:
            if outer is None:
                _stoppers.pop(ident, None)
            else:
                _stoppers[ident] = outer


def interrupt(thread_ident: int | None) -> bool:
    """Stop the interruptible C work thread `thread_ident` runs now; False when it runs none."""
    with _stoppers_lock:
        stop = _stoppers.get(thread_ident) if thread_ident is not None else None
    if stop is None:
        return False
    stop()
    return True


class Progress:
    """One piece of long work: `label`, rows `done` of `total` (None when unknown)."""

    def __init__(self, label: str, total: int | None = None, *, unit: str = "rows",
                 poll: Callable[[], float | None] | None = None):
        self.label = label
        self.total = total
        self.unit = unit
        self.poll = poll
        self.done = 0
        self.started = time.monotonic()
        self._listener = _listener.get()
        if self._listener is not None:
            self._listener.start(self)

    def update(self, done: int, total: int | None = None) -> None:
        self.done = done
        if total is not None:
            self.total = total
        if _cancel_requested:
            check_cancel()

    def advance(self, n: int = 1) -> None:
        self.update(self.done + n)

    def fraction(self) -> float | None:
        """Done / total, or what `poll` says, or None when unknown."""
        if self.total:
            return min(1.0, self.done / self.total)
        if self.poll is not None:
            try:
                f = self.poll()
            except Exception:  # noqa: BLE001 - a progress read must never fail the work
                return None
            if f is not None and 0 <= f <= 1:
                return float(f)
        return None

    def close(self) -> None:
        if self._listener is not None:
            self._listener.stop(self)
            self._listener = None

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
