"""ProjectExecutor: evaluates expressions over each chunk, ops unchanged."""
from __future__ import annotations

import re

import pyarrow as pa

from rw_cli.common.types import DataType
from rw_cli.engine import duck
from rw_cli.engine.chunk import StreamChunk
from rw_cli.engine.executor import Executor


class ProjectExecutor(Executor):
    identity = "StreamProject"

    def __init__(self, exprs: list[str], types: list[DataType], stream_key: list[int]):
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

    def on_chunk(self, chunk: StreamChunk, side: int = 0) -> list[StreamChunk]:
        if len(chunk) == 0:
            return []
        data = chunk.data
        if self.columns is not None:
            out = data.select(self.columns)
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


_COLUMN_REF = re.compile(r"\b_(\d+)\b")
