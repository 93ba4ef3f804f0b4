"""WatermarkExecutor: tracks a table's watermark (`WATERMARK FOR col AS expr`): the largest
value of `expr` over the rows seen so far. Operators that emit on window close read the
watermark through `literal()` at each barrier.

Rows pass through unchanged. With `WITH TTL` (RisingWave's TTL tables) a row whose column is
below the watermark has expired: the table's materialize, next in its job, asks `expired()`
to treat a stored expired row as absent (a write of its key is a new row) and to drop the
changes of expired rows (late inserts, deletes and updates of expired rows) from the stream
it forwards downstream."""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rw_cli.common.types import DataType
from rw_cli.engine import duck
from rw_cli.engine.chunk import StreamChunk
from rw_cli.engine.executor import Executor


class WatermarkExecutor(Executor):
    identity = "StreamWatermarkFilter"

    def __init__(self, expr: str, expr_type: DataType, types: list[DataType], stream_key: list[int], state_table,
                 ttl_column: int | None = None):
        super().__init__(types, stream_key)
        self.expr = expr  # DuckDB SQL over the positional columns
        self.expr_type = expr_type
        self.table = state_table  # the table's own rows: the watermark is recomputed from them on recovery
        self.ttl_column = ttl_column  # WITH TTL: the watermark's column, whose rows below it expire
        self.current = None
        self.before = None  # the watermark before the chunk being processed
        self.loaded = False

    def on_chunk(self, chunk: StreamChunk, side: int = 0) -> list[StreamChunk]:
        if not len(chunk):
            return []
        self._load()
        self.before = self.current
        self._advance(chunk.data)
        return [chunk]

    def expired(self, rows: pa.Table) -> np.ndarray:
        """Per row: is its TTL column below the watermark as it was before the chunk being
        processed (RisingWave's watermark filter judges a chunk by the earlier watermark)?
        NULL never reaches the watermark: expired."""
        self._load()
        column = rows.column(self.ttl_column)
        if self.before is None:
            return np.zeros(len(column), dtype=bool)
        below = pc.less(column, pa.scalar(self.before, type=column.type))
        return pc.fill_null(below, True).to_numpy(zero_copy_only=False)

    def _advance(self, data) -> None:
        value = duck.query(f"SELECT max({self.expr}) FROM t", {"t": data}).column(0)[0].as_py()
        if value is not None and (self.current is None or value > self.current):
            self.current = value

    def _load(self) -> None:
        if not self.loaded:
            self.loaded = True
            rows = self.table.scan()
            if rows.num_rows:
                self._advance(rows.rename_columns([f"_{i}" for i in range(rows.num_columns)]))

    def literal(self) -> str:
        """The watermark as a SQL literal (the earliest time there is before any row arrived)."""
        self._load()
        value = self.current if self.current is not None else "0001-01-01 00:00:00"
        return f"CAST('{value}' AS {self.expr_type.duckdb()})"
