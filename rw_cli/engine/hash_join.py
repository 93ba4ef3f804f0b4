"""HashJoinExecutor: inner equi-join (with an optional extra condition) of two streams.

Each side's rows are kept in a state table keyed by the side's stream key, and cached in
memory as an Arrow table; a chunk from one side is joined in one DuckDB query with the
other side's rows and then applied to its own side.
"""
from __future__ import annotations

import numpy as np
import pyarrow as pa

from rw_cli.common.types import DataType
from rw_cli.engine import duck
from rw_cli.engine.chunk import StreamChunk, to_schema
from rw_cli.engine.executor import Executor
from rw_cli.meta.epoch import EpochPair


class HashJoinExecutor(Executor):
    identity = "StreamHashJoin"

    def __init__(self, left_types: list[DataType], right_types: list[DataType],
                 left_keys: list[int], right_keys: list[int], condition: str | None,
                 left_sk: list[int], right_sk: list[int], state_tables: tuple):
        nl = len(left_types)
        super().__init__(left_types + right_types, left_sk + [nl + k for k in right_sk])
        self.widths = (nl, len(right_types))
        self.keys = (left_keys, right_keys)
        self.sks = (left_sk, right_sk)
        self.condition = condition
        self.tables = state_tables
        self.cache: list[pa.Table | None] = [None, None]

    def _side(self, side: int) -> pa.Table:
        if self.cache[side] is None:
            rows = self.tables[side].scan()
            self.cache[side] = rows.rename_columns(self._names(side))
        return self.cache[side]

    def _names(self, side: int) -> list[str]:
        base = 0 if side == 0 else self.widths[0]
        return [f"_{base + i}" for i in range(self.widths[side])]

    def on_chunk(self, chunk: StreamChunk, side: int = 0) -> list[StreamChunk]:
        if len(chunk) == 0:
            return []
        other = 1 - side
        mine = chunk.data.rename_columns(self._names(side))
        mine = mine.append_column("__pos", pa.array(np.arange(len(chunk))))
        on = [f"c._{self._col(side, a)} = o._{self._col(other, b)}"
              for a, b in zip(self.keys[side], self.keys[other])]
        if self.condition:
            on.append(self.condition)
        cols = ", ".join(f"_{i}" for i in range(sum(self.widths)))
        sql = (f"SELECT {cols}, __pos FROM (SELECT * FROM c) c JOIN o ON {' AND '.join(on) or 'TRUE'} "
               f"ORDER BY __pos")
        joined = duck.query(sql, {"c": mine, "o": self._side(other)})
        out = []
        if joined.num_rows:
            pos = joined.column("__pos").to_numpy()
            ops = chunk.compact_ops().ops[pos]
            out.append(self.conform(StreamChunk(joined.drop_columns(["__pos"]), ops)))
        self._apply(side, chunk, mine)
        return out

    def _col(self, side: int, i: int) -> int:
        return i if side == 0 else self.widths[0] + i

    def _apply(self, side: int, chunk: StreamChunk, mine: pa.Table) -> None:
        self.tables[side].write_chunk(to_schema(chunk.data, self.tables[side].schema), chunk.ops)
        names = self._names(side)
        sk = [names[k] for k in self.sks[side]]
        mine = mine.append_column("__ins", pa.array(chunk.is_insert()))
        part = ", ".join(sk) if sk else "1"
        match = " AND ".join(f"c.{k} IS NOT DISTINCT FROM s.{k}" for k in sk) or "TRUE"
        sql = (f"WITH c AS (SELECT *, row_number() OVER (PARTITION BY {part} ORDER BY __pos DESC) AS __rn FROM m) "
               f"SELECT {', '.join('s.' + n for n in names)} FROM s WHERE NOT EXISTS (SELECT 1 FROM c WHERE {match}) "
               f"UNION ALL SELECT {', '.join(names)} FROM c WHERE __rn = 1 AND __ins")
        self.cache[side] = duck.query(sql, {"m": mine, "s": self._side(side)}).cast(self._side(side).schema)

    def on_barrier(self, epoch: EpochPair) -> list[StreamChunk]:
        for t in self.tables:
            t.commit(epoch.prev)
        return []
