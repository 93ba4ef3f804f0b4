"""ProjectSetExecutor: each row times a constant series (`generate_series(a, b)`), the way a
HOP window multiplies every event into the windows that contain it. Stateless; every output
row keeps its input row's op."""
from __future__ import annotations

import numpy as np
import pyarrow as pa

from rw_cli.common.types import DataType
from rw_cli.engine import duck
from rw_cli.engine.chunk import StreamChunk
from rw_cli.engine.executor import Executor


class ProjectSetExecutor(Executor):
    identity = "StreamProjectSet"

    def __init__(self, start: int, end: int, types: list[DataType], stream_key: list[int]):
        super().__init__(types, stream_key)
        self.start, self.end = start, end

    def on_chunk(self, chunk: StreamChunk, side: int = 0) -> list[StreamChunk]:
        if len(chunk) == 0:
            return []
        width = chunk.data.num_columns
        data = chunk.data.append_column("__pos", pa.array(np.arange(len(chunk))))
        cols = ", ".join(f"c._{i}" for i in range(width))
        out = duck.query(f"SELECT {cols}, g.k AS _{width}, c.__pos FROM c CROSS JOIN range({self.start}, "
                         f"{self.end + 1}) AS g(k) ORDER BY c.__pos, g.k", {"c": data})
        ops = chunk.ops[out.column("__pos").to_numpy()]
        return [self.conform(StreamChunk(out.drop_columns(["__pos"]), ops))]
