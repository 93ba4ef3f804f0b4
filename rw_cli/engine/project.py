"""ProjectExecutor: evaluates expressions over each chunk, ops unchanged."""
from __future__ import annotations

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

    def on_chunk(self, chunk: StreamChunk, side: int = 0) -> list[StreamChunk]:
        if len(chunk) == 0:
            return []
        if self.columns is not None:
            out = chunk.data.select(self.columns)
        else:
            out = duck.eval_exprs(chunk.data, self.exprs)
        return [self.conform(StreamChunk(out, chunk.ops))]
