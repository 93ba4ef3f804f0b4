"""ProjectExecutor: evaluates expressions over each chunk, ops unchanged."""
from __future__ import annotations

import re

import pyarrow as pa

from rw_cli.common.types import DataType
from rw_cli.engine import arrow_expr, duck
from rw_cli.engine.chunk import StreamChunk
from rw_cli.engine.executor import Executor


class ProjectExecutor(Executor):
    identity = "StreamProject"

    def __init__(self, exprs: list[str], types: list[DataType], stream_key: list[int],
                 forms: list[tuple | None] | None = None):
        """`forms`: the expressions numpy evaluates without DuckDB (see arrow_expr.py), None
        where DuckDB must."""
        super().__init__(types, stream_key)
        self.exprs = exprs
        # a projection of plain columns (column pruning, reordering) needs no DuckDB query
        refs = [int(e[1:]) if e.startswith("_") and e[1:].isdigit() else None for e in exprs]
        self.columns = refs if all(r is not None for r in refs) else None
        self.refs = refs
        # the computed expressions are evaluated by DuckDB over only the columns they read
        self.computed = [i for i, r in enumerate(refs) if r is None]
        used = set()
        for i in self.computed:
            used |= {int(m) for m in _COLUMN_REF.findall(exprs[i])}
        self.used = sorted(used)
        self.forms = forms if forms is not None and all(forms[i] is not None for i in self.computed) else None

    def on_chunk(self, chunk: StreamChunk, side: int = 0) -> list[StreamChunk]:
        if len(chunk) == 0:
            return []
        data = chunk.data
        if self.columns is not None:
            out = data.select(self.columns)
        elif self.forms is not None and (out := self._by_numpy(data)) is not None:
            pass
        elif not self.used or data.num_columns == 0 or self.used[-1] >= data.num_columns:
            out = duck.eval_exprs(data, self.exprs)
        else:
            vals = duck.eval_exprs(data.select(self.used), [self.exprs[i] for i in self.computed])
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
            cols = [data.column(r) if r is not None else arrow_expr.evaluate(self.forms[i], data)
                    for i, r in enumerate(self.refs)]
        except arrow_expr.Fallback:
            return None
        return pa.Table.from_arrays(cols, names=[f"_{i}" for i in range(len(cols))])


_COLUMN_REF = re.compile(r"\b_(\d+)\b")
