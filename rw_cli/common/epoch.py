"""Epochs: (milliseconds since 2021-04-01 UTC) << 16 | sequence, monotonic, never reused."""
from __future__ import annotations

import time
from dataclasses import dataclass

EPOCH_ORIGIN_MS = 1617235200000  # 2021-04-01T00:00:00Z
EPOCH_SHIFT = 16


def epoch_unix_ms(epochs):
    """Wall-clock milliseconds since 1970 at which epochs began (scalar or numpy array)."""
    return (epochs >> EPOCH_SHIFT) + EPOCH_ORIGIN_MS


def physical_now() -> int:
    return int(time.time() * 1000) - EPOCH_ORIGIN_MS


def next_epoch(previous: int) -> int:
    """The smallest epoch after `previous` whose physical part is not behind the clock."""
    candidate = physical_now() << EPOCH_SHIFT
    return max(candidate, previous + 1)


@dataclass(frozen=True)
class EpochPair:
    """A barrier's epochs: `prev` ends with this barrier, `curr` starts."""

    curr: int
    prev: int
