"""PartitionRecomputeExecutor: an operator whose output is a function of its inputs'
rows per partition, maintained by recomputing only the partitions an epoch touched.

Outer, semi and anti joins (partitioned by the join key), over windows and group top-N
(partitioned by PARTITION BY), aggregates without a retractable state of their own (by group
key), set operations (by the whole row) and top-N (one partition) all have this shape: the
rows of one partition determine that partition's output and nothing else. Each input is kept
as materialized-input state (a state table keyed by the input's stream key, cached in memory
as Arrow). On a barrier, for the partitions that changed in the epoch, the output is computed
by DuckDB from the rows before and after the epoch, and the difference is emitted. The cost of
an epoch is proportional to the rows of the touched partitions, not to the whole history.
"""
from __future__ import annotations

import numpy as np
import pyarrow as pa

from rw_cli.common.types import DataType
from rw_cli.engine import duck
from rw_cli.engine.chunk import DELETE, INSERT, StreamChunk, concat_chunks, to_schema
from rw_cli.engine.executor import Executor
from rw_cli.meta.epoch import EpochPair


class PartitionRecomputeExecutor(Executor):
    def __init__(self, identity: str, input_types: list[list[DataType]], input_keys: list[list[int]],
                 partition_keys: list[list[int]], sql: str, types: list[DataType], stream_key: list[int],
                 state_tables: list, column_offsets: list[int] | None = None, fresh: bool = True,
                 vnodes=None, now_table=None, clock=None):
        """`sql` reads `in0`, `in1`, ... whose columns are named `_{offset + i}` (offsets default
        to 0 for every input) and produces positional columns `_0.._n`."""
        super().__init__(types, stream_key)
        self.identity = identity
        self.input_types = input_types
        self.input_keys = input_keys
        self.partition_keys = partition_keys
        self.sql = sql
        self.tables = state_tables
        self.offsets = column_offsets or [0] * len(input_types)
        self.vnodes = vnodes  # as an actor of a parallel fragment: the vnodes it owns (bool mask)
        # A temporal operator reads now() (`{now}` in its SQL): the time of the barrier that
        # ends the epoch, so every barrier recomputes with the new time (rows expire). The time
        # its current output was computed with is state too (`now_table`, one row).
        self.now_table = now_table
        self.temporal = now_table is not None
        self.clock = clock or (lambda epoch: f"CAST('{_epoch_time(epoch.curr)}' AS TIMESTAMPTZ)")
        self.last_now: str | None = None
        if self.temporal and not fresh:
            rows = now_table.scan()
            self.last_now = rows.column(0)[0].as_py() if rows.num_rows else None
        # A new job has emitted nothing yet: its first epoch diffs against no output at all
        # (a recovered job's output is already materialized).
        self.fresh = fresh
        self.buffers: list[list[StreamChunk]] = [[] for _ in input_types]
        self.cache: list[pa.Table | None] = [None] * len(input_types)
        self.schemas = [pa.schema([pa.field(f"_{self.offsets[s] + i}", t.arrow()) for i, t in enumerate(ts)])
                        for s, ts in enumerate(input_types)]

    def on_chunk(self, chunk: StreamChunk, side: int = 0) -> list[StreamChunk]:
        if len(chunk):
            self.buffers[side].append(chunk)
        return []

    def on_barrier(self, epoch: EpochPair) -> list[StreamChunk]:
        out: list[StreamChunk] = []
        if any(self.buffers) or self.fresh or self.temporal:
            # now(): the barrier's time, as RisingWave's NowExecutor (or a table's watermark)
            self.now = self.clock(epoch) if self.temporal else None
            out = self._recompute()
            self.fresh = False
            self.last_now = self.now
            if self.temporal:
                self.now_table.insert(pa.record_batch([pa.array([self.now])], schema=self.now_table.schema))
        for t in self.tables + ([self.now_table] if self.temporal else []):
            t.commit(epoch.prev)
        return out

    # -- state ------------------------------------------------------------------------------
    def _rows(self, side: int) -> pa.Table:
        if self.cache[side] is None:
            rows = self.tables[side].scan()
            rows = pa.Table.from_arrays(rows.columns, schema=self.schemas[side])
            if self.vnodes is not None and rows.num_rows:
                from rw_cli.common.vnode import compute_vnodes

                vn = compute_vnodes([rows.column(k) for k in self.partition_keys[side]], num_rows=rows.num_rows)
                rows = rows.filter(pa.array(self.vnodes[vn]))
            self.cache[side] = rows
        return self.cache[side]

    def _names(self, side: int) -> list[str]:
        return self.schemas[side].names

    # -- the epoch ----------------------------------------------------------------------------
    def _recompute(self) -> list[StreamChunk]:
        n = len(self.input_types)
        for side in range(n):
            self._rows(side)  # load the state as of before this epoch's writes
        deltas = []
        for side in range(n):
            chunks, self.buffers[side] = self.buffers[side], []
            delta = concat_chunks([StreamChunk(c.data.rename_columns(self._names(side)), c.ops) for c in chunks],
                                  self.schemas[side])
            deltas.append(delta)
            if len(delta):
                self.tables[side].write_chunk(to_schema(delta.data, self.tables[side].schema), delta.ops)
        keys = self._touched(deltas)
        olds, news = [], []
        for side in range(n):
            rows = self._rows(side)
            old, rest = self._split(side, rows, keys)
            new = _apply(old, deltas[side], [self._names(side)[k] for k in self.input_keys[side]])
            self.cache[side] = pa.concat_tables([rest, new.cast(rest.schema)]) if rest is not None else new
            olds.append(old)
            news.append(new)
        return self._diff(olds, news)

    def _touched(self, deltas: list[StreamChunk]) -> pa.Table | None:
        """The partition keys changed in this epoch (None: one partition, everything)."""
        if not self.partition_keys[0] or self.fresh or self.temporal:
            return None
        parts = []
        for side, d in enumerate(deltas):
            if len(d):
                cols = [d.data.column(k) for k in self.partition_keys[side]]
                parts.append(pa.Table.from_arrays(cols, names=[f"k{i}" for i in range(len(cols))]))
        keys = pa.concat_tables([p.cast(parts[0].schema) for p in parts])
        return duck.query("SELECT DISTINCT * FROM k", {"k": keys})

    def _split(self, side: int, rows: pa.Table, keys: pa.Table | None) -> tuple[pa.Table, pa.Table | None]:
        """(rows of the touched partitions, all other rows)."""
        if keys is None:
            return rows, None
        names = self._names(side)
        pk = [names[k] for k in self.partition_keys[side]]
        cond = " AND ".join(f"t.{c} IS NOT DISTINCT FROM k.k{i}" for i, c in enumerate(pk))
        marked = duck.query(f"SELECT t.*, EXISTS (SELECT 1 FROM k WHERE {cond}) AS __hit FROM t",
                            {"t": rows, "k": keys})
        hit = marked.column("__hit")
        marked = marked.drop_columns(["__hit"]).cast(rows.schema)
        import pyarrow.compute as pc

        return marked.filter(hit), marked.filter(pc.invert(hit))

    def _diff(self, olds: list[pa.Table], news: list[pa.Table]) -> list[StreamChunk]:
        """f(before) and f(after), and their difference, in one DuckDB query."""
        tables: dict[str, pa.Table] = {}
        def scope(prefix: str, rows: list[pa.Table]) -> str:
            ctes = []
            for i, t in enumerate(rows):
                tables[f"{prefix}{i}"] = t
                ctes.append(f"in{i} AS (SELECT * FROM {prefix}{i})")
            sql = self.sql
            if self.temporal:
                now = self.now if prefix == "new" else (self.last_now or self.now)
                sql = sql.replace("{now}", now)
            return f"WITH {', '.join(ctes)} {sql}"
        names = ", ".join(self.schema.names)
        after = f"SELECT * FROM ({scope('new', news)}) AS a({names})"
        if self.fresh:
            sql = f"SELECT *, TRUE AS __ins FROM ({after})"
        else:
            before = f"SELECT * FROM ({scope('old', olds)}) AS b({names})"
            sql = (f"WITH b AS ({before}), a AS ({after}) "
                   f"SELECT *, FALSE AS __ins FROM (SELECT * FROM b EXCEPT ALL SELECT * FROM a) "
                   f"UNION ALL SELECT *, TRUE AS __ins FROM (SELECT * FROM a EXCEPT ALL SELECT * FROM b)")
        out = duck.query(sql, tables)
        if out.num_rows == 0:
            return []
        ins = out.column("__ins").to_numpy(zero_copy_only=False).astype(bool)
        order = np.argsort(ins, kind="stable")  # deletes first, then inserts
        data = out.drop_columns(["__ins"]).take(pa.array(order)).cast(self.schema)
        ops = np.where(ins[order], INSERT, DELETE).astype(np.int8)
        return [StreamChunk(data, ops)]


def _epoch_time(epoch: int) -> str:
    """The wall-clock time of an epoch (its physical part), as a UTC timestamp literal."""
    import datetime

    from rw_cli.meta.epoch import EPOCH_ORIGIN_MS, EPOCH_SHIFT

    ms = (epoch >> EPOCH_SHIFT) + EPOCH_ORIGIN_MS
    return datetime.datetime.fromtimestamp(ms / 1000, datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f+00")


def _apply(rows: pa.Table, delta: StreamChunk, key: list[str]) -> pa.Table:
    """Rows after applying a chunk, rows being unique by `key`: the last op per key wins."""
    if len(delta) == 0:
        return rows
    d = delta.data.append_column("__pos", pa.array(np.arange(len(delta))))
    d = d.append_column("__ins", pa.array(delta.is_insert()))
    names = rows.column_names
    part = ", ".join(key) if key else "1"
    match = " AND ".join(f"c.{k} IS NOT DISTINCT FROM s.{k}" for k in key) or "TRUE"
    cols = ", ".join(names)
    sql = (f"WITH c AS (SELECT *, row_number() OVER (PARTITION BY {part} ORDER BY __pos DESC) AS __rn FROM d) "
           f"SELECT {', '.join('s.' + n for n in names)} FROM s WHERE NOT EXISTS (SELECT 1 FROM c WHERE {match}) "
           f"UNION ALL SELECT {cols} FROM c WHERE __rn = 1 AND __ins")
    return duck.query(sql, {"d": d, "s": rows}).cast(rows.schema)
