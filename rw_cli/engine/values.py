"""ValuesExecutor: a constant relation (VALUES, or a SELECT without FROM) inside a stream
job. Its rows are emitted once, at the first barrier of a new job; a recovered job has them
materialized already."""
from __future__ import annotations

import numpy as np
import pyarrow as pa

from rw_cli.common.types import DataType
from rw_cli.engine.chunk import INSERT, StreamChunk
from rw_cli.engine.executor import Executor
from rw_cli.common.epoch import EpochPair


class ValuesExecutor(Executor):
    identity = "StreamValues"

    def __init__(self, rows: pa.Table, types: list[DataType], stream_key: list[int], fresh: bool = True):
        super().__init__(types, stream_key)
        self.rows = rows
        self.pending = fresh

    def on_chunk(self, chunk: StreamChunk, side: int = 0) -> list[StreamChunk]:
        return []

    def on_barrier(self, epoch: EpochPair) -> list[StreamChunk]:
        if not self.pending or self.rows.num_rows == 0:
            self.pending = False
            return []
        self.pending = False
        return [self.conform(StreamChunk(self.rows, np.full(self.rows.num_rows, INSERT, dtype=np.int8)))]
