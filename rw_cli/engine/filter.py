"""FilterExecutor: keeps rows whose predicate is true.

An update pair whose halves fall on different sides of the predicate becomes a plain delete
or insert, so every update pair that leaves the filter is whole.
"""
from __future__ import annotations

from rw_cli.common.types import DataType
from rw_cli.engine import expr
from rw_cli.engine.chunk import StreamChunk
from rw_cli.engine.executor import Executor


class FilterExecutor(Executor):
    identity = "StreamFilter"

    def __init__(self, condition: expr.Condition, types: list[DataType], stream_key: list[int]):
        super().__init__(types, stream_key)
        self.condition = condition

    def on_chunk(self, chunk: StreamChunk, side: int = 0) -> list[StreamChunk]:
        if len(chunk) == 0:
            return []
        mask = expr.condition_mask(self.condition, chunk.data)
        if not mask.any():
            return []
        return [chunk.filter(mask).compact_ops()] if not mask.all() else [chunk]


