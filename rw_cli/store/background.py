"""A store part that works in a daemon thread of its own (the uploader, the compactor),
woken through a condition on the store's state lock."""
from __future__ import annotations

import threading


class BackgroundLoop:
    """Runs `_loop` (the subclass's) in one daemon thread, started on first need; `stop`
    wakes it to see the store closing and waits for it."""

    thread_name = "hummock-background"

    def __init__(self, lock: threading.RLock):
        self._lock = lock
        self._cond = threading.Condition(lock)
        self._thread: threading.Thread | None = None

    def start_thread(self) -> None:
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._loop, name=self.thread_name, daemon=True)
                self._thread.start()

    def stop(self) -> None:
        """Wake the thread to see the store closing, and wait for it."""
        with self._lock:
            self._cond.notify_all()
        if self._thread is not None:
            self._thread.join(timeout=30)

    def _loop(self) -> None:
        raise NotImplementedError
