"""ProjectExecutor: evaluates expressions over each chunk, ops unchanged."""
from __future__ import annotations

import pyarrow as pa

from rw_cli.common.types import DataType
from rw_cli.engine import arrow_expr, expr
from rw_cli.engine.chunk import StreamChunk
from rw_cli.engine.executor import Executor


class ProjectExecutor(Executor):
    identity = "StreamProject"

    def __init__(self, exprs: list[expr.Expr], types: list[DataType], stream_key: list[int]):
        super().__init__(types, stream_key)
        self.exprs = exprs
        # a projection of plain columns (column pruning, reordering) needs no DuckDB query
        self.refs = [e.column for e in exprs]
        self.columns = self.refs if all(r is not None for r in self.refs) else None
        # the computed expressions are evaluated by DuckDB over only the columns they read
        self.computed = [e for e in exprs if e.column is None]
        # ... or by numpy (see arrow_expr.py), when every one of them has a form
        self.by_numpy = bool(self.computed) and all(e.form is not None for e in self.computed)

    def on_chunk(self, chunk: StreamChunk, side: int = 0) -> list[StreamChunk]:
        if len(chunk) == 0:
            return []
        data = chunk.data
        if self.columns is not None:
            out = data.select(self.columns)
        elif self.by_numpy and (out := self._by_numpy(data)) is not None:
            pass
        else:
            vals = expr.evaluate(self.computed, data)
            cols, j = [], 0
            for r in self.refs:
                if r is None:
                    cols.append(vals.column(j))
                    j += 1
                else:
                    cols.append(data.column(r))
            out = pa.Table.from_arrays(cols, names=[f"_{i}" for i in range(len(cols))])
        return [self.conform(StreamChunk(out, chunk.ops))]

    def _by_numpy(self, data: pa.Table) -> pa.Table | None:
        """Every computed expression by arrow_expr; None when a value needs DuckDB."""
        try:
            cols = [data.column(e.column) if e.column is not None else arrow_expr.evaluate(e.form, data)
                    for e in self.exprs]
        except arrow_expr.Fallback:
            return None
        return pa.Table.from_arrays(cols, names=[f"_{i}" for i in range(len(cols))])
