"""Row ids of tables without a primary key (RisingWave's `_row_id`)."""
from __future__ import annotations

import numpy as np

from rw_cli.common.epoch import physical_now


class RowIdGenerator:
    """Row ids: (milliseconds << 22) + sequence; unique across restarts as time moves on."""

    def __init__(self) -> None:
        self.last = 0

    def take(self, n: int) -> np.ndarray:
        start = max(self.last + 1, physical_now() << 22)
        self.last = start + n - 1
        return np.arange(start, start + n, dtype=np.int64)
