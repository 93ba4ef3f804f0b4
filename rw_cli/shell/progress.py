"""The progress bar on stderr: shown for work that takes more than about a second, only when
stderr is a terminal. Engine code reports through `rw_cli.common.progress` (re-exported
here: `Progress`, `current`); this module is the listener that draws.

    label  [#########...........]  45%  1,234,567/2,740,000 rows  310,020 rows/s  ETA 5s
    label  1,234,567 rows  310,020 rows/s  4.0s                  (total unknown)
    label  ⠹  4.0s                                                (nothing to count yet)
"""
from __future__ import annotations

import sys
import threading
import time
from typing import Callable, TextIO

from rw_cli.common.progress import Progress, current, install, uninstall  # noqa: F401

BAR_WIDTH = 20
SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"


def _duration(seconds: float) -> str:
    seconds = max(0, int(round(seconds)))
    if seconds < 60:
        return f"{seconds}s"
    m, s = divmod(seconds, 60)
    if m < 60:
        return f"{m}m{s:02d}s"
    h, m = divmod(m, 60)
    return f"{h}h{m:02d}m"


def render_line(p: Progress, now: float) -> str:
    """The text of one progress line (pure: depends on the progress state and `now`)."""
    elapsed = max(now - p.started, 1e-9)
    parts = [p.label]
    frac = p.fraction()
    if frac is not None:
        filled = int(frac * BAR_WIDTH)
        parts.append("[" + "#" * filled + "." * (BAR_WIDTH - filled) + "]")
        parts.append(f"{int(frac * 100):3d}%")
    if p.done or p.total:
        parts.append(f"{p.done:,}/{p.total:,} {p.unit}" if p.total else f"{p.done:,} {p.unit}")
        parts.append(f"{int(p.done / elapsed):,} {p.unit}/s")
    if frac is not None and 0 < frac < 1:
        parts.append("ETA " + _duration(elapsed * (1 - frac) / frac))
    else:
        if frac is None and not p.done:  # nothing to count: a spinner shows it is alive
            parts.append(SPINNER[int(elapsed * 10) % len(SPINNER)])
        parts.append(f"{elapsed:.1f}s")
    return "  ".join(parts)


class TerminalProgress:
    """A progress listener that redraws one line on `stream` from a background thread,
    starting `delay` seconds after the work began, and erases it when the work ends."""

    def __init__(self, stream: TextIO | None = None, *, delay: float = 1.0, interval: float = 0.1,
                 clock: Callable[[], float] = time.monotonic):
        self.stream = stream or sys.stderr
        self.delay = delay
        self.interval = interval
        self.clock = clock
        self._tasks: list[Progress] = []
        self._lock = threading.Lock()
        self._drawn = False
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None

    # -- Listener -----------------------------------------------------------------------------
    def start(self, p: Progress) -> None:
        with self._lock:
            self._tasks.append(p)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="rw-progress", daemon=True)
                self._thread.start()

    def stop(self, p: Progress) -> None:
        with self._lock:
            if p in self._tasks:
                self._tasks.remove(p)
            if not self._tasks:
                self._wake.set()
                self._erase()

    # -- drawing ------------------------------------------------------------------------------
    def draw(self) -> None:
        """Redraw the line for the newest task that is older than `delay`."""
        with self._lock:
            now = self.clock()
            due = [p for p in self._tasks if now - p.started >= self.delay]
            if not due:
                return
            line = render_line(due[-1], now)
            width = _terminal_width(self.stream)
            self.stream.write("\r\x1b[K" + line[: width - 1])
            self.stream.flush()
            self._drawn = True

    def _erase(self) -> None:
        if self._drawn:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self._drawn = False

    def _run(self) -> None:
        while True:
            self._wake.wait(self.interval)
            with self._lock:
                self._wake.clear()
                if not self._tasks:
                    self._thread = None
                    return
            try:
                self.draw()
            except (OSError, ValueError):  # the stream went away
                pass


def _terminal_width(stream) -> int:
    import os

    try:
        return os.get_terminal_size(stream.fileno()).columns
    except (OSError, ValueError, AttributeError):
        return 80


def listener_for(stream: TextIO) -> TerminalProgress | None:
    """A bar listener when `stream` is a terminal, else None (no bar in pipes and files)."""
    try:
        tty = stream.isatty()
    except (AttributeError, ValueError):
        tty = False
    return TerminalProgress(stream) if tty else None
