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
from rw_cli.common.vnode import compute_vnodes, hash_columns
from rw_cli.engine import duck
from rw_cli.engine.chunk import DELETE, INSERT, StreamChunk, concat_chunks, to_schema
from rw_cli.engine.executor import Executor
from rw_cli.meta.epoch import EpochPair


class PartitionRecomputeExecutor(Executor):
    def __init__(self, identity: str, input_types: list[list[DataType]], input_keys: list[list[int]],
                 partition_keys: list[list[int]], sql: str, types: list[DataType], stream_key: list[int],
                 state_tables: list, column_offsets: list[int] | None = None, fresh: bool = True,
                 vnodes=None, now_table=None, clock=None, prune_to_output: bool = False):
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
        # A top-N over an append-only input: an input row that is not in the output can never
        # come back, so the materialized input keeps only the rows the output holds.
        self.prune = prune_to_output
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
        self.hashes: list[np.ndarray | None] = [None] * len(input_types)
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
    # A partitioned input's cached rows are kept sorted by the 64-bit hash of their partition
    # key (`self.hashes`), so the rows of the touched partitions are found by binary search and
    # the cache is rebuilt by merging, both vectorized. Hash collisions only add rows of
    # another partition to both sides of the diff, where they cancel out.
    def _rows(self, side: int) -> pa.Table:
        if self.cache[side] is None:
            rows = self.tables[side].scan()
            rows = pa.Table.from_arrays(rows.columns, schema=self.schemas[side])
            if self.vnodes is not None and rows.num_rows:
                vn = compute_vnodes([rows.column(k) for k in self.partition_keys[side]], num_rows=rows.num_rows)
                rows = rows.filter(pa.array(self.vnodes[vn]))
            self._set_cache(side, rows, self._hash(side, rows))
        return self.cache[side]

    def _hash(self, side: int, rows: pa.Table) -> np.ndarray | None:
        if not self.partition_keys[side]:
            return None
        if rows.num_rows == 0:
            return np.zeros(0, dtype=np.uint64)
        return hash_columns([rows.column(k) for k in self.partition_keys[side]])

    def _set_cache(self, side: int, rows: pa.Table, hashes: np.ndarray | None) -> None:
        if hashes is not None and len(hashes) > 1:
            order = np.argsort(hashes, kind="stable")
            rows, hashes = rows.take(pa.array(order)), hashes[order]
        self.cache[side], self.hashes[side] = rows, hashes

    def _names(self, side: int) -> list[str]:
        return self.schemas[side].names

    # -- the epoch ----------------------------------------------------------------------------
    def _recompute(self) -> list[StreamChunk]:
        deltas = self._take_deltas()
        touched = self._touched(deltas)
        if self.prune and len(self.input_types) == 1:
            return self._recompute_pruned(deltas[0], touched)
        olds, news = [], []
        for side in range(len(self.input_types)):
            old, new = self._update_cache(side, deltas[side], touched)
            olds.append(old)
            news.append(new)
        return self._diff(olds, news)

    def _recompute_pruned(self, delta: StreamChunk, touched) -> list[StreamChunk]:
        old, rest, rest_hashes = self._split(0, touched)
        new = _apply(old, delta, [self._names(0)[k] for k in self.input_keys[0]])
        out = self._diff([old], [new])
        after = duck.query(self.sql, {"in0": new})
        names = self._names(0)
        key = [names[k] for k in self.input_keys[0]]
        on = " AND ".join(f"n.{k} IS NOT DISTINCT FROM a.{k}" for k in key) or "TRUE"
        cols = ", ".join(f"n.{c}" for c in names)
        kept = duck.query(f"SELECT {cols}, EXISTS (SELECT 1 FROM a WHERE {on}) AS __keep FROM n",
                          {"n": new, "a": after.select(list(range(len(names)))).rename_columns(names)})
        keep = kept.column("__keep").to_numpy(zero_copy_only=False).astype(bool)
        kept = kept.drop_columns(["__keep"]).cast(new.schema)
        dropped = kept.filter(pa.array(~keep))
        if dropped.num_rows:
            self.tables[0].write_chunk(to_schema(dropped, self.tables[0].schema),
                                       np.full(dropped.num_rows, DELETE, dtype=np.int8))
        kept = kept.filter(pa.array(keep))
        if rest is None:
            self._set_cache(0, kept, self._hash(0, kept))
        else:
            self._set_cache(0, pa.concat_tables([rest, kept]), np.concatenate([rest_hashes, self._hash(0, kept)]))
        return out

    def _take_deltas(self) -> list[StreamChunk]:
        """The epoch's changes per input (positional names), written to the inputs' state."""
        for side in range(len(self.input_types)):
            self._rows(side)  # load the state as of before this epoch's writes
        deltas = []
        for side in range(len(self.input_types)):
            chunks, self.buffers[side] = self.buffers[side], []
            delta = concat_chunks([StreamChunk(c.data.rename_columns(self._names(side)), c.ops) for c in chunks],
                                  self.schemas[side])
            deltas.append(delta)
            if len(delta):
                self.tables[side].write_chunk(to_schema(delta.data, self.tables[side].schema), delta.ops)
        return deltas

    def _update_cache(self, side: int, delta: StreamChunk, touched) -> tuple[pa.Table, pa.Table]:
        """Apply an input's delta to its cache; returns the touched partitions' rows before and
        after (everything when unpartitioned)."""
        old, rest, rest_hashes = self._split(side, touched)
        new = _apply(old, delta, [self._names(side)[k] for k in self.input_keys[side]])
        if rest is None:
            self._set_cache(side, new, self._hash(side, new))
        else:
            merged = pa.concat_tables([rest, new.cast(rest.schema)])
            self._set_cache(side, merged, np.concatenate([rest_hashes, self._hash(side, new)]))
        return old, new

    def _append(self, side: int, delta: StreamChunk) -> None:
        """An insert-only delta: its rows join the cache without looking at the old ones."""
        rows = delta.data.cast(self.cache[side].schema)
        hashes = self._hash(side, rows)
        merged = pa.concat_tables([self.cache[side], rows])
        self._set_cache(side, merged, None if hashes is None else np.concatenate([self.hashes[side], hashes]))

    def _touched(self, deltas: list[StreamChunk]) -> np.ndarray | None:
        """Hashes of the partition keys changed in this epoch (None: one partition, everything)."""
        if not self.partition_keys[0] or self.fresh or self.temporal:
            return None
        parts = [self._hash(side, d.data) for side, d in enumerate(deltas) if len(d)]
        return np.unique(np.concatenate(parts)) if parts else np.zeros(0, dtype=np.uint64)

    def _matching(self, side: int, hashes: np.ndarray) -> pa.Table:
        """The cached rows of `side` whose partition-key hash is among `hashes`."""
        return self._split(side, hashes)[0]

    def _split(self, side: int, touched: np.ndarray | None):
        """(rows of the touched partitions, all other rows, their hashes)."""
        rows = self.cache[side]
        if touched is None:
            return rows, None, None
        hashes = self.hashes[side]
        touched = np.unique(touched)
        lo = np.searchsorted(hashes, touched, side="left")
        hi = np.searchsorted(hashes, touched, side="right")
        lengths = hi - lo
        total = int(lengths.sum())
        if total == 0:
            return rows.schema.empty_table(), rows, hashes
        starts = np.repeat(lo - np.concatenate([[0], np.cumsum(lengths)[:-1]]), lengths)
        idx = starts + np.arange(total)
        keep = np.ones(rows.num_rows, dtype=bool)
        keep[idx] = False
        return rows.take(pa.array(idx)), rows.filter(pa.array(keep)), hashes[keep]

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
