"""Concurrent reads: a few read-only Sessions over the writer's data directory.

A query (SELECT, WITH, VALUES, TABLE) needs no writer: like any read-only open, a reader
session reads the newest version the writer has committed (it refreshes before each
statement, so a connection never reads an older epoch than it read before) and runs
without the writer's mutex, in parallel with writes, barriers, the stream's ticks and the
other readers (DuckDB and Arrow let go of the GIL while they work). Everything else — DML,
DDL, SET, SHOW, FLUSH, transaction control — goes to the writer.

A pool of `size` readers, opened on first use, each used by one statement at a time.
"""
from __future__ import annotations

import contextlib
import queue
import re
import threading
from collections.abc import Callable, Iterator

_QUERY = re.compile(r"^\s*(?:\(\s*)*(select|with|values|table)\b", re.I)
_WRITES = re.compile(r"\b(insert|update|delete|into)\b", re.I)  # WITH ... INSERT, SELECT ... INTO


def is_plain_query(sql: str) -> bool:
    """A statement a reader can run: a query that writes nothing (a conservative test of
    its text: any of INSERT/UPDATE/DELETE/INTO, even in a string, sends it to the writer)."""
    return _QUERY.match(sql) is not None and _WRITES.search(sql) is None


class ReaderPool:
    def __init__(self, open_reader: Callable[[], object], size: int = 4):
        self._open = open_reader
        self._size = size
        self._free: queue.Queue = queue.Queue()
        self._opened = 0
        self._lock = threading.Lock()
        self._all: list = []

    @contextlib.contextmanager
    def reader(self) -> Iterator[object]:
        session = self._take()
        try:
            yield session
        finally:
            self._free.put(session)

    def _take(self):
        try:
            return self._free.get_nowait()
        except queue.Empty:
            pass
        with self._lock:
            if self._opened < self._size:
                self._opened += 1
                try:
                    session = self._open()
                except BaseException:
                    self._opened -= 1
                    raise
                self._all.append(session)
                return session
        return self._free.get()

    def close(self) -> None:
        for session in self._all:
            with contextlib.suppress(Exception):
                session.close()
        self._all.clear()
