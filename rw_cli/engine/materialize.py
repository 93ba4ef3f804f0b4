"""MaterializeExecutor: writes the stream into a table's or MV's state table and forwards it.

For tables with a user-declared primary key it also resolves conflicts as the table's
`ON CONFLICT` clause says: `overwrite` (the default; the old row is replaced and the change
is forwarded as an update pair), `do nothing` (the insert is dropped), `do update if not
null` (the new row's non-NULL values replace the old ones).
"""
from __future__ import annotations

import numpy as np
import pyarrow as pa

from rw_cli.common.types import DataType
from rw_cli.engine import duck
from rw_cli.engine.chunk import DELETE, INSERT, UPDATE_DELETE, UPDATE_INSERT, StreamChunk, to_schema
from rw_cli.engine.executor import Executor
from rw_cli.common.epoch import EpochPair


CONFLICT_CACHE_BYTES = 16 << 20  # recent rows; the key filter stays past evictions


class MaterializeExecutor(Executor):
    identity = "StreamMaterialize"

    def __init__(self, types: list[DataType], pk: list[int], state_table, conflict: str | None = None):
        super().__init__(types, pk)
        self.table = state_table
        self.conflict = conflict  # None: no conflicts possible (MVs, tables with a _row_id)
        if conflict and hasattr(state_table, "enable_cache"):
            # an insert looks its key up: the cache's filter of every key written knows a new
            # key is absent without a store read (RisingWave's materialize cache)
            state_table.enable_cache(CONFLICT_CACHE_BYTES)

    def on_chunk(self, chunk: StreamChunk, side: int = 0) -> list[StreamChunk]:
        if len(chunk) == 0:
            return []
        chunk = self.conform(chunk)
        if self.conflict and chunk.is_insert().all():
            chunk = self._resolve_conflicts(chunk)
        elif self.conflict and np.isin(chunk.ops, (INSERT, DELETE)).all():
            chunk = self._resolve_upserts(chunk)
        if len(chunk):
            self.table.write_chunk(to_schema(chunk.data, self.table.schema), chunk.ops)
        return [chunk] if len(chunk) else []

    def on_barrier(self, epoch: EpochPair) -> list[StreamChunk]:
        self.table.commit(epoch.prev)
        return []

    def _last_per_key(self, data: pa.Table) -> np.ndarray:
        """The position of each key's last row in `data`, in order."""
        keys = ", ".join(f"_{k}" for k in self.stream_key)
        pos = data.append_column("__pos", pa.array(np.arange(data.num_rows)))
        last = duck.query(f"SELECT max(__pos) AS p FROM t GROUP BY {keys} ORDER BY p", {"t": pos})
        return last.column("p").to_numpy()

    def _resolve_upserts(self, chunk: StreamChunk) -> StreamChunk:
        """Inserts and deletes by key (an upsert stream, whose deletes may carry only the key):
        each key's last change wins; a delete retracts the stored row, if there is one."""
        last = self._last_per_key(chunk.data)
        data, ops = chunk.data.take(pa.array(last)), chunk.ops[last]
        dels = ops == DELETE
        out = []
        if dels.any():
            gone = data.filter(pa.array(dels))
            old, found = self.table.get_rows([gone.column(k) for k in self.stream_key])
            old = pa.Table.from_batches([old]) if isinstance(old, pa.RecordBatch) else old
            old = old.rename_columns(data.column_names).cast(data.schema).filter(pa.array(found))
            out.append(StreamChunk(old, np.full(old.num_rows, DELETE, dtype=np.int8)))
        if not dels.all():
            kept = data.filter(pa.array(~dels))
            out.append(self._resolve_conflicts(StreamChunk(kept, np.full(kept.num_rows, INSERT, dtype=np.int8))))
        if len(out) == 1:
            return out[0]
        return StreamChunk(pa.concat_tables([c.data for c in out]), np.concatenate([c.ops for c in out]))

    def _resolve_conflicts(self, chunk: StreamChunk) -> StreamChunk:
        """Keep the last insert per key; turn inserts over existing keys into update pairs."""
        data = chunk.data.take(pa.array(self._last_per_key(chunk.data)))
        old, found = self.table.get_rows([data.column(k) for k in self.stream_key])
        if not found.any():
            return StreamChunk(data, np.full(data.num_rows, INSERT, dtype=np.int8))
        old = pa.Table.from_batches([old]) if isinstance(old, pa.RecordBatch) else old
        old = old.rename_columns(data.column_names).cast(data.schema)
        if self.conflict == "do nothing":
            keep = ~found
            return StreamChunk(data.filter(pa.array(keep)), np.full(int(keep.sum()), INSERT, dtype=np.int8))
        if self.conflict == "do update if not null":
            import pyarrow.compute as pc

            data = pa.Table.from_arrays([pc.coalesce(new, prev) if np.any(found) else new
                                         for new, prev in zip(data.columns, old.columns)], schema=data.schema)
        idx_old = np.where(found)[0]
        rows = pa.concat_tables([old.take(pa.array(idx_old)), data])
        order = np.concatenate([idx_old * 2, np.arange(data.num_rows) * 2 + 1])
        ops = np.concatenate([np.full(len(idx_old), UPDATE_DELETE), np.where(found, UPDATE_INSERT, INSERT)])
        perm = np.argsort(order, kind="stable")
        return StreamChunk(rows.take(pa.array(perm)), ops[perm].astype(np.int8))
