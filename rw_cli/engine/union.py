"""UnionExecutor (UNION ALL): stateless; each input's rows are projected onto the output
layout — the columns, a branch tag and every branch's stream key (NULL for other branches) —
so that the union has a stream key even when branches produce equal rows."""
from __future__ import annotations

from rw_cli.common.types import DataType
from rw_cli.engine import expr
from rw_cli.engine.chunk import StreamChunk
from rw_cli.engine.executor import Executor


class UnionExecutor(Executor):
    identity = "StreamUnion"

    def __init__(self, layouts: list[list[expr.Expr]], types: list[DataType], stream_key: list[int]):
        super().__init__(types, stream_key)
        self.layouts = layouts

    def on_chunk(self, chunk: StreamChunk, side: int = 0) -> list[StreamChunk]:
        if len(chunk) == 0:
            return []
        out = expr.evaluate(self.layouts[side], chunk.data)
        return [self.conform(StreamChunk(out, chunk.ops))]
