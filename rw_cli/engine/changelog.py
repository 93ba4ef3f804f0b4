"""ChangelogExecutor: `WITH c AS CHANGELOG FROM rel`, a relation's changes as rows.

Each change of the input (insert, delete, either half of an update) becomes an inserted row:
the input's columns, then `changelog_op` (RisingWave's codes: 1 insert, 2 delete, 3 update
insert, 4 update delete) and a fresh `_changelog_row_id`, the output's stream key. The output
is append-only: a change once seen stays in the log.
"""
from __future__ import annotations

import numpy as np
import pyarrow as pa

from rw_cli.common.epoch import physical_now
from rw_cli.common.types import DataType
from rw_cli.engine.chunk import DELETE, INSERT, UPDATE_DELETE, UPDATE_INSERT, StreamChunk
from rw_cli.engine.executor import Executor

_CODES = np.zeros(4, dtype=np.int16)
_CODES[[INSERT, DELETE, UPDATE_INSERT, UPDATE_DELETE]] = [1, 2, 3, 4]


class ChangelogExecutor(Executor):
    identity = "StreamChangeLog"

    def __init__(self, types: list[DataType], stream_key: list[int]):
        super().__init__(types, stream_key)
        self.last_id = 0

    def _ids(self, n: int) -> np.ndarray:
        """Row ids as a table's: (milliseconds << 22) + sequence, unique across restarts."""
        start = max(self.last_id + 1, physical_now() << 22)
        self.last_id = start + n - 1
        return np.arange(start, start + n, dtype=np.int64)

    def on_chunk(self, chunk: StreamChunk, side: int = 0) -> list[StreamChunk]:
        n = len(chunk)
        if not n:
            return []
        data = chunk.data
        data = data.append_column("_op", pa.array(_CODES[chunk.ops], pa.int16()))
        data = data.append_column("_id", pa.array(self._ids(n)))
        return [self.conform(StreamChunk(data, np.full(n, INSERT, dtype=np.int8)))]
