"""MaterializeExecutor: writes the stream into a table's or MV's state table and forwards it.

For tables with a user-declared primary key it also resolves conflicts as the table's
`ON CONFLICT` clause says: `overwrite` (the default; the old row is replaced and the change
is forwarded as an update pair), `do nothing` (the insert is dropped), `do update if not
null` (the new row's non-NULL values replace the old ones). With `WITH VERSION COLUMN (a, b)`
a write over an existing key wins only when its versions, compared in order (NULL lowest), are
greater than or equal to the stored row's; several writes of one key in a chunk then apply in
order, one round per occurrence (round k holds each key's k-th write, so a round is one
vectorized lookup and each key's writes still see their predecessors).
"""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rw_cli.common.types import DataType
from rw_cli.engine import duck
from rw_cli.engine.chunk import DELETE, INSERT, UPDATE_DELETE, UPDATE_INSERT, StreamChunk, to_schema, values_equal
from rw_cli.engine.executor import Executor
from rw_cli.common.epoch import EpochPair


class MaterializeExecutor(Executor):
    identity = "StreamMaterialize"

    def __init__(self, types: list[DataType], pk: list[int], state_table, conflict: str | None = None,
                 version_columns: list[int] | None = None, by_key: bool = False):
        super().__init__(types, pk)
        self.table = state_table
        self.conflict = conflict  # None: no conflicts possible (MVs, tables with a _row_id)
        # the changes need not match the stored rows (an altered MV): an update is applied as
        # a delete and an insert of its key, so one of a row not stored is not forwarded
        self.by_key = by_key
        # writes nothing and forwards nothing (an altered MV's new operators filling their
        # state from the upstream snapshots)
        self.muted = False
        self.version_columns = list(version_columns or [])
        # a TTL table's watermark tracker (rw_cli.engine.watermark), set by its job: a stored
        # row it says has expired counts as absent, a change of an expired row is not
        # forwarded, and a write moving a row's TTL column is a delete and an insert (that
        # column is in the stream key downstream)
        self.ttl = None
        if conflict and hasattr(state_table, "enable_cache"):
            # an insert looks its key up: the cache's filter of every key written knows a new
            # key is absent without a store read (RisingWave's materialize cache)
            state_table.enable_cache()

    def on_chunk(self, chunk: StreamChunk, side: int = 0) -> list[StreamChunk]:
        if self.muted:
            return []
        if self.by_key and np.isin(chunk.ops, (UPDATE_DELETE, UPDATE_INSERT)).any():
            ops = np.where(chunk.ops == UPDATE_DELETE, DELETE, np.where(chunk.ops == UPDATE_INSERT, INSERT, chunk.ops))
            chunk = StreamChunk(chunk.data, ops.astype(np.int8))
        out = self._apply(chunk)
        if self.ttl is not None:  # a TTL table forwards no change of an expired row
            out = [c for c in (c.filter(~self.ttl.expired(c.data)) for c in out) if len(c)]
        return out

    def _apply(self, chunk: StreamChunk) -> list[StreamChunk]:
        """Write the chunk (conflicts resolved); the changes it made."""
        if len(chunk) == 0:
            return []
        chunk = self.conform(chunk)
        if self.conflict and chunk.is_insert().all():
            out = [self._write(*self._resolve_conflicts_keyed(part)) for part in self._rounds(chunk)]
            out = [c for c in out if len(c)]
            if len(out) > 1:
                return [StreamChunk(pa.concat_tables([c.data for c in out]), np.concatenate([c.ops for c in out]))]
            return out
        if self.conflict and chunk.stored and (chunk.ops == DELETE).all():
            pass  # the stored rows, each key once: nothing to resolve
        elif self.conflict and np.isin(chunk.ops, (INSERT, DELETE)).all():
            chunk = self._resolve_upserts(chunk)
        chunk = self._write(chunk)
        return [chunk] if len(chunk) else []

    def _write(self, chunk: StreamChunk, keys: pa.Array | None = None) -> StreamChunk:
        """`keys`: the rows' store keys, when known (the conflict check's lookup made them)."""
        if len(chunk):
            self.table.write_chunk(to_schema(chunk.data, self.table.schema), chunk.ops, keys)
        return chunk

    def _rounds(self, chunk: StreamChunk) -> list[StreamChunk]:
        """The chunk's inserts in rounds of one write per key, in order, where a later write of
        a key depends on the earlier (versions, or NULLs keeping old values); otherwise the
        whole chunk (its last write per key wins)."""
        if not self.version_columns and self.conflict != "do update if not null":
            return [chunk]
        keys = ", ".join(f"_{k}" for k in self.stream_key)
        pos = chunk.data.append_column("__pos", pa.array(np.arange(len(chunk))))
        nth = duck.query(f"SELECT row_number() OVER (PARTITION BY {keys} ORDER BY __pos) - 1 AS r FROM t "
                         "ORDER BY __pos", {"t": pos}).column("r").to_numpy()
        if nth.max() == 0:
            return [chunk]
        return [chunk.filter(nth == r) for r in range(int(nth.max()) + 1)]

    def on_barrier(self, epoch: EpochPair) -> list[StreamChunk]:
        self.table.commit(epoch.prev)
        return []

    def _last_per_key(self, data: pa.Table, first: bool = False) -> np.ndarray:
        """The position of each key's last row (`first`: first row) in `data`, in order: every
        position when the keys are unique (a load of new rows), else by Arrow's hash
        aggregation where it groups as DuckDB does (keys of plain types), else by DuckDB."""
        agg = "min" if first else "max"
        n = data.num_rows
        names = [data.column_names[k] for k in self.stream_key]
        plain = all(_plain_key(data.schema.field(k).type) for k in self.stream_key)
        if plain and len(names) == 1 and _all_distinct(data.column(self.stream_key[0])):
            return np.arange(n)
        if plain:
            t = pa.Table.from_arrays([data.column(k) for k in self.stream_key] + [pa.array(np.arange(n))],
                                     names=[f"k{j}" for j in range(len(names))] + ["__pos"])
            g = t.group_by([f"k{j}" for j in range(len(names))], use_threads=False).aggregate([("__pos", agg)])
            return np.sort(g.column(f"__pos_{agg}").to_numpy())
        keys = ", ".join(f"_{k}" for k in self.stream_key)
        pos = data.append_column("__pos", pa.array(np.arange(n)))
        last = duck.query(f"SELECT {agg}(__pos) AS p FROM t GROUP BY {keys} ORDER BY p", {"t": pos})
        return last.column("p").to_numpy()

    def _resolve_upserts(self, chunk: StreamChunk) -> StreamChunk:
        """Inserts and deletes by key (an upsert stream, whose deletes may carry only the key):
        each key's last change wins; a delete retracts the stored row, if there is one."""
        last = self._last_per_key(chunk.data)
        if len(last) == len(chunk):  # every key once
            data, ops = chunk.data, chunk.ops
        else:
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
        return self._resolve_conflicts_keyed(chunk)[0]

    def _resolve_conflicts_keyed(self, chunk: StreamChunk) -> tuple[StreamChunk, pa.Array | None]:
        """`_resolve_conflicts`, and the resulting rows' store keys when they are the rows
        looked up (all new: the keys made for the lookup serve the write too)."""
        # DO NOTHING keeps a key's first insert (a later one conflicts with it), the others its last
        last = self._last_per_key(chunk.data, first=self.conflict == "do nothing")
        data = chunk.data if len(last) == chunk.data.num_rows else chunk.data.take(pa.array(last))
        pk = [data.column(k) for k in self.stream_key]
        keys = self.table.pk_keys(pk) if hasattr(self.table, "pk_keys") else None
        old, found = self.table.get_rows(pk, keys)
        if not found.any():
            return StreamChunk(data, np.full(data.num_rows, INSERT, dtype=np.int8)), keys
        return self._conflicting(data, old, found), None

    def _conflicting(self, data: pa.Table, old, found: np.ndarray) -> StreamChunk:
        """The inserts `data`, some over stored rows (`old` where `found`), as the table's
        ON CONFLICT resolves them."""
        old = pa.Table.from_batches([old]) if isinstance(old, pa.RecordBatch) else old
        old = old.rename_columns(data.column_names).cast(data.schema)
        if self.ttl is not None:
            found = found & ~self.ttl.expired(old)
        if self.version_columns:
            wins = ~found | self._newer_or_equal(old, data)
            if not wins.all():
                keep = pa.array(wins)
                data, old, found = data.filter(keep), old.filter(keep), found[wins]
        if self.conflict == "do nothing":
            keep = ~found
            return StreamChunk(data.filter(pa.array(keep)), np.full(int(keep.sum()), INSERT, dtype=np.int8))
        if self.conflict == "do update if not null":
            data = pa.Table.from_arrays([pc.coalesce(new, prev) if np.any(found) else new
                                         for new, prev in zip(data.columns, old.columns)], schema=data.schema)
        idx_old = np.where(found)[0]
        rows = pa.concat_tables([old.take(pa.array(idx_old)), data])
        order = np.concatenate([idx_old * 2, np.arange(data.num_rows) * 2 + 1])
        moved = self._ttl_moved(old, data) & found
        ops = np.concatenate([np.where(moved[idx_old], DELETE, UPDATE_DELETE),
                              np.where(found & ~moved, UPDATE_INSERT, INSERT)])
        perm = np.argsort(order, kind="stable")
        return StreamChunk(rows.take(pa.array(perm)), ops[perm].astype(np.int8))

    def _ttl_moved(self, old: pa.Table, new: pa.Table) -> np.ndarray:
        """Per row: does the write change a TTL table's watermark column?"""
        if self.ttl is None:
            return np.zeros(new.num_rows, dtype=bool)
        o, w = old.column(self.ttl.ttl_column), new.column(self.ttl.ttl_column)
        return ~values_equal(o, w)

    def _newer_or_equal(self, old: pa.Table, new: pa.Table) -> np.ndarray:
        """Per row: are the new row's version columns, compared in order with NULL lowest,
        greater than or equal to the old row's? (Equal versions: the later write wins.)"""
        n = new.num_rows
        result = np.ones(n, dtype=bool)
        decided = np.zeros(n, dtype=bool)
        for i in self.version_columns:
            o, w = old.column(i), new.column(i)
            o_null = o.is_null().to_numpy(zero_copy_only=False)
            w_null = w.is_null().to_numpy(zero_copy_only=False)
            gt = pc.fill_null(pc.greater(w, o), False).to_numpy(zero_copy_only=False) | (o_null & ~w_null)
            lt = pc.fill_null(pc.less(w, o), False).to_numpy(zero_copy_only=False) | (w_null & ~o_null)
            result[~decided & lt] = False
            result[~decided & gt] = True
            decided |= gt | lt
        return result


def _all_distinct(col) -> bool:
    """Whether a key column holds no value twice: integers by numpy (ascending keys, as a
    load by key writes them, without a sort), others by Arrow's hash count."""
    if pa.types.is_integer(col.type) and col.null_count == 0:
        a = col.to_numpy() if isinstance(col, pa.Array) else col.combine_chunks().to_numpy()
        return bool((a[1:] > a[:-1]).all()) or len(np.unique(a)) == len(a)
    return pc.count_distinct(col, mode="all").as_py() == len(col)


def _plain_key(t: pa.DataType) -> bool:
    """Whether Arrow's hash grouping finds the same keys as DuckDB's for this type (no
    floats, whose NaNs and zeros the two treat their own ways, nor nested types)."""
    return (pa.types.is_integer(t) or pa.types.is_string(t) or pa.types.is_large_string(t)
            or pa.types.is_timestamp(t) or pa.types.is_date(t) or pa.types.is_boolean(t)
            or pa.types.is_decimal(t) or pa.types.is_time(t) or pa.types.is_binary(t))
