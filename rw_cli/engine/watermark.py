"""WatermarkExecutor: tracks a table's watermark (`WATERMARK FOR col AS expr`): the largest
value of `expr` over the rows seen so far. Rows pass through unchanged; operators that emit on
window close read the watermark through `literal()` at each barrier."""
from __future__ import annotations

from rw_cli.common.types import DataType
from rw_cli.engine import duck
from rw_cli.engine.chunk import StreamChunk
from rw_cli.engine.executor import Executor


class WatermarkExecutor(Executor):
    identity = "StreamWatermarkFilter"

    def __init__(self, expr: str, expr_type: DataType, types: list[DataType], stream_key: list[int], state_table):
        super().__init__(types, stream_key)
        self.expr = expr  # DuckDB SQL over the positional columns
        self.expr_type = expr_type
        self.table = state_table  # the table's own rows: the watermark is recomputed from them on recovery
        self.current = None
        self.loaded = False

    def on_chunk(self, chunk: StreamChunk, side: int = 0) -> list[StreamChunk]:
        if len(chunk):
            self._load()
            self._advance(chunk.data)
        return [chunk] if len(chunk) else []

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
