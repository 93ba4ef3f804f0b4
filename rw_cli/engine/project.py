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

    def on_chunk(self, chunk: StreamChunk, side: int = 0) -> list[StreamChunk]:
        if len(chunk) == 0:
            return []
        out = duck.eval_exprs(chunk.data, self.exprs)
        return [self.conform(StreamChunk(out, chunk.ops))]
