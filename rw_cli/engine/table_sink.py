"""TableSinkExecutor: the last node of a `CREATE SINK ... INTO table` job.

Its output enters the target table's job as the table's own DML does (the runtime routes it,
`StreamJob.into`), so the table's materialize resolves primary-key conflicts for sinks and
DML alike. An append-only sink passes inserts only (with `force_append_only`, retractions
are dropped and an update's new row is an insert); an upsert sink into a table with a
primary key turns an update's halves into a delete and an insert by key, as RisingWave's
upsert sinks do. The rows themselves (column order, defaults, row ids, casts) are made by
`rows`, which the SQL layer supplies for the target table.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pyarrow as pa

from rw_cli.common.types import DataType
from rw_cli.engine.chunk import DELETE, INSERT, StreamChunk
from rw_cli.engine.executor import Executor


class TableSinkExecutor(Executor):
    identity = "StreamSink"

    def __init__(self, types: list[DataType], pk: list[int], visible: int,
                 rows: Callable[[pa.Table], pa.Table], append_only: bool, not_null: tuple[int, ...] = ()):
        """`types`, `pk`: the target table's; `visible`: the sink's leading visible columns;
        `not_null`: the target's NOT NULL columns (a row with NULL in one is dropped, as
        RisingWave's streaming inputs drop it: a stream cannot refuse a row)."""
        super().__init__(types, pk)
        self.not_null = not_null
        self.visible = visible
        self.rows = rows  # the sink's visible columns -> the target table's rows (positional)
        self.append_only = append_only
        self.rows_out = 0
        self.dropped_retractions = 0

    def on_chunk(self, chunk: StreamChunk, side: int = 0) -> list[StreamChunk]:
        if not len(chunk):
            return []
        adds = chunk.is_insert()
        if self.append_only:
            self.dropped_retractions += int((~adds).sum())
            chunk = chunk.filter(adds) if not adds.all() else chunk
            ops = np.full(len(chunk), INSERT, dtype=np.int8)
        else:
            ops = np.where(adds, INSERT, DELETE).astype(np.int8)
        if not len(chunk):
            return []
        data = chunk.data.select(list(range(self.visible)))
        rows = self.rows(data)
        keep = self._complete(rows)
        if keep is not None:
            rows, ops = rows.filter(keep), ops[keep]
        self.rows_out += len(rows)
        return [StreamChunk(rows, ops)] if len(rows) else []

    def _complete(self, rows: pa.Table) -> np.ndarray | None:
        """Which rows have a value in every NOT NULL column (None: all of them)."""
        nulls = [i for i in self.not_null if rows.column(i).null_count]
        if not nulls:
            return None
        keep = np.ones(len(rows), dtype=bool)
        for i in nulls:
            keep &= rows.column(i).is_valid().to_numpy(zero_copy_only=False)
        return keep
