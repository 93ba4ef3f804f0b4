"""Time travel retention in compaction: the versions of relations (tables, MVs, indexes)
newer than `time_travel_retention_ms` stay readable, so that `FOR SYSTEM_TIME AS OF` reads
them; every other state table keeps only what the low watermark needs (operators' state is
never read in the past, and keeping its versions would slow every read of it)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from rw_cli.common.lazy_import import lazy_import
from rw_cli.store.keys import TABLE_PREFIX_LEN

pc = lazy_import("pyarrow.compute")  # imported on first use: see rw_cli.common.lazy_import


@dataclass(frozen=True)
class Retention:
    """Compaction's watermark per entry: `retained` for the entries of `tables`, `watermark`
    (the store's low watermark) for the others."""

    watermark: int
    tables: frozenset[int]
    retained: int

    def per_entry(self, keys: pa.Array) -> np.ndarray:
        """The watermark of each entry, by the table id its key starts with."""
        prefixes = pc.binary_slice(keys, 0, TABLE_PREFIX_LEN).cast(pa.binary(TABLE_PREFIX_LEN))
        ids = np.frombuffer(prefixes.buffers()[1], dtype=">u4", count=len(prefixes),
                            offset=prefixes.offset * TABLE_PREFIX_LEN)
        out = np.full(len(keys), self.watermark, dtype=np.uint64)
        out[np.isin(ids, np.fromiter(self.tables, dtype=np.int64, count=len(self.tables)))] = self.retained
        return out


def compaction_watermark(low: int, tables: frozenset[int], retained_from: int) -> int | Retention:
    """The watermark compaction runs with: `low`, or a Retention when some tables keep
    versions from `retained_from` (an epoch below `low`) on."""
    if not tables or retained_from >= low:
        return low
    return Retention(low, tables, retained_from)
