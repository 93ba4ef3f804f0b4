"""Expression failures in streaming jobs, told to the user.

Streaming is non-strict, as in RisingWave: an expression that fails on a row's values
(division by zero, overflow, a bad cast) gives NULL for that row and the pipeline goes on.
RisingWave reports each such failure in its logs; rw has no log a user reads, so the failures
are collected here, per message, and the session reports them as notices after the statement
whose epochs met them (the shell's background epochs: on stderr). A chunk is first evaluated
strictly, so the message is the one the expression raises.
"""
from __future__ import annotations

import threading
from collections import Counter

_lock = threading.Lock()
_failures: Counter[str] = Counter()


def record(message: str) -> None:
    """A chunk of a streaming job in which an expression failed with `message`."""
    with _lock:
        _failures[message] += 1


def take_messages() -> list[str]:
    """The messages recorded since the last call (a Spark task hands them to the driver)."""
    with _lock:
        found = list(_failures)
        _failures.clear()
    return found


def take() -> list[str]:
    """The failures recorded since the last call, worded for the user; forgets them."""
    return [f"an expression of a streaming job failed ({message}); its value is NULL for the failing rows"
            for message in take_messages()]
