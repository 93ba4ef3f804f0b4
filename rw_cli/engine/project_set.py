"""ProjectSetExecutor: set-returning functions (`generate_series`, `unnest`) in a stream, and
the constant series a HOP window multiplies every event by. Stateless; every output row keeps
its input row's op."""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rw_cli.common.types import DataType
from rw_cli.engine import duck, expr
from rw_cli.engine.chunk import StreamChunk
from rw_cli.engine.executor import Executor


class ProjectSetExecutor(Executor):
    """Each row times the elements of a list computed from it: `lists` (over the positional
    columns; compiled non-strict, so a list that fails to compute is NULL and yields no rows,
    as RisingWave answers a set-returning function that errors). Output: the input columns,
    the element, and its 1-based ordinal (part of the stream key). `constant`: the list is a
    series of literals (a HOP window's), the same for every row."""

    identity = "StreamProjectSet"

    def __init__(self, lists: expr.Expr, types: list[DataType], stream_key: list[int], constant: bool = False):
        super().__init__(types, stream_key)
        self.lists = lists
        self.constant = constant
        self._elements: pa.Array | None = None

    def on_chunk(self, chunk: StreamChunk, side: int = 0) -> list[StreamChunk]:
        if len(chunk) == 0:
            return []
        if self.constant:
            return self._on_chunk_constant(chunk)
        width = chunk.data.num_columns
        # DuckDB computes each row's list; Arrow repeats the rows (in order, elements in order)
        lists = expr.evaluate([self.lists], chunk.data).column(0).combine_chunks()
        if not pa.types.is_list(lists.type) and not pa.types.is_large_list(lists.type):
            return self._on_chunk_sql(chunk)
        lengths = pc.fill_null(pc.list_value_length(lists), 0).to_numpy(zero_copy_only=False).astype(np.int64)
        parents = np.repeat(np.arange(len(lists), dtype=np.int64), lengths)
        elems = pc.list_flatten(lists)
        starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]) if len(lengths) else np.zeros(0, dtype=np.int64)
        ordinals = np.arange(len(parents), dtype=np.int64) - np.repeat(starts, lengths) + 1
        rows = chunk.data.take(pa.array(parents))
        out = pa.Table.from_arrays(list(rows.columns) + [elems, pa.array(ordinals, pa.int64())],
                                   names=[f"_{i}" for i in range(width + 2)])
        return [self.conform(StreamChunk(out, chunk.ops[parents]))] if len(parents) else []

    def _on_chunk_constant(self, chunk: StreamChunk) -> list[StreamChunk]:
        """Every row times one list, computed once."""
        if self._elements is None:
            lists = duck.query(f"SELECT {self.lists.sql} AS l").column(0).combine_chunks()
            self._elements = pc.list_flatten(lists)
        n, k = len(chunk), len(self._elements)
        if k == 0:
            return []
        width = chunk.data.num_columns
        parents = np.repeat(np.arange(n, dtype=np.int64), k)
        elems = self._elements.take(pa.array(np.tile(np.arange(k, dtype=np.int64), n)))
        ordinals = pa.array(np.tile(np.arange(1, k + 1, dtype=np.int64), n))
        rows = chunk.data.take(pa.array(parents))
        out = pa.Table.from_arrays(list(rows.columns) + [elems, ordinals], names=[f"_{i}" for i in range(width + 2)])
        return [self.conform(StreamChunk(out, chunk.ops[parents]))]

    def _on_chunk_sql(self, chunk: StreamChunk) -> list[StreamChunk]:
        width = chunk.data.num_columns
        data = chunk.data.append_column("__pos", pa.array(np.arange(len(chunk))))
        cols = ", ".join(f"_{i}" for i in range(width))
        out = duck.query(f"SELECT {cols}, unnest(__l) AS _{width}, "
                         f"CAST(unnest(range(1, len(__l) + 1)) AS BIGINT) AS _{width + 1}, __pos "
                         f"FROM (SELECT *, {self.lists.sql} AS __l FROM c) ORDER BY __pos", {"c": data})
        ops = chunk.ops[out.column("__pos").to_numpy()]
        return [self.conform(StreamChunk(out.drop_columns(["__pos"]), ops))]
