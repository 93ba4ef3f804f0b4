"""PartitionRecomputeExecutor: one implementation behind several RisingWave operators, those
whose output is a function of their inputs' rows per partition, maintained by recomputing
only the partitions an epoch touched.

The rows of one partition determine that partition's output and nothing else. Each input is
kept as materialized-input state (a state table keyed by the input's stream key, cached in
memory by partition: engine/partition_cache.py). On a barrier, for the partitions that
changed in the epoch, DuckDB computes the output from the rows before and after the epoch,
and the difference is emitted. An epoch costs the rows of the touched partitions, not the
whole history.

The operators it stands for, as EXPLAIN names them (the identity it is given), and their
partitions:
- StreamHashJoin: outer joins (LeftOuter, RightOuter, FullOuter) and semi/anti joins, by the
  join key, through HashJoinExecutor (engine/hash_join.py), which runs inner equi-joins by
  the delta rule instead; StreamNestedLoopJoin for a join without an equi key (one
  partition; RisingWave refuses such a streaming join).
- StreamOverWindow: window functions, by PARTITION BY.
- StreamGroupTopN: `row_number()`/`rank()` <= N over an append-only input, and DISTINCT ON,
  by the group key; StreamTopN: ORDER BY ... LIMIT, one partition.
- StreamHashAgg [recompute] / StreamSimpleAgg [recompute]: aggregates without a retractable
  state of their own in HashAggExecutor (DISTINCT, FILTER, ORDER BY inside, string_agg,
  array_agg, stddev, ...), by the group key; GROUPING SETS, ROLLUP and CUBE (RisingWave: a
  StreamExpand under a StreamHashAgg), one partition. RisingWave runs these in its
  StreamHashAgg, so the name is kept; the property `[recompute]`, in RisingWave's own syntax
  for a variant of an operator (`StreamHashAgg [append_only]`), tells them apart from the
  StreamHashAgg / StreamSimpleAgg that HashAggExecutor (engine/hash_agg.py) runs.
- StreamExcept / StreamIntersect: EXCEPT and INTERSECT [ALL], by the whole row. RisingWave
  has no such stream operator (it plans a StreamHashAgg over a LeftAnti / LeftSemi
  StreamHashJoin, and refuses the ALL forms): here it is one operator, named for its
  logical node (LogicalExcept, LogicalIntersect).
- StreamDynamicFilter: a filter on now() (RisingWave compares with a StreamNow), recomputed
  at every barrier with the barrier's time; StreamEowcSort: EMIT ON WINDOW CLOSE, with a
  table's watermark for now(); both one partition.
"""
from __future__ import annotations

import numpy as np
import pyarrow as pa

from rw_cli.common.types import DataType
from rw_cli.common.vnode import compute_vnodes, hash_columns, unique_hashes
from rw_cli.engine import duck
from rw_cli.engine.chunk import DELETE, INSERT, StreamChunk, concat_chunks, to_schema
from rw_cli.engine.executor import Executor
from rw_cli.engine.partition_cache import PartitionCache, apply_chunk
from rw_cli.common.epoch import EpochPair


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
        self.cache: list[PartitionCache | None] = [None] * len(input_types)
        self._unwritten = False  # a pruned top-N's delta is written once its output is known
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
    # Each input's rows are cached by the 64-bit hash of their partition key (a
    # PartitionCache), loaded from its state table at the first epoch (a parallel actor keeps
    # the rows of its own vnodes).
    def _rows(self, side: int) -> PartitionCache:
        if self.cache[side] is None:
            rows = self.tables[side].scan()
            rows = pa.Table.from_arrays(rows.columns, schema=self.schemas[side])
            if self.vnodes is not None and rows.num_rows:
                vn = compute_vnodes([rows.column(k) for k in self.partition_keys[side]], num_rows=rows.num_rows)
                rows = rows.filter(pa.array(self.vnodes[vn]))
            cache = PartitionCache.for_key(self.schemas[side], self.partition_keys[side])
            cache.add(rows, self._hash(side, rows), level=99)  # the recovered rows: not merged again
            self.cache[side] = cache
        return self.cache[side]

    def _hash(self, side: int, rows: pa.Table) -> np.ndarray | None:
        if not self.partition_keys[side]:
            return None
        if rows.num_rows == 0:
            return np.zeros(0, dtype=np.uint64)
        return hash_columns([rows.column(k) for k in self.partition_keys[side]])

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
        """Top-N over an append-only input: the input rows kept are those in the output."""
        cache = self.cache[0]
        old = cache.take(touched, remove=True)
        names = self._names(0)
        key = [names[k] for k in self.input_keys[0]]
        new = apply_chunk(old, delta, key)
        out, after = self._diff([old], [new], with_after=True)
        width = len(names)
        if after.num_columns >= width and after.num_rows <= new.num_rows:
            kept = pa.Table.from_arrays([after.column(i).cast(new.schema.field(i).type) for i in range(width)],
                                        schema=new.schema)
            # the new rows whose stream key is not among the kept ones' (by hash: a collision
            # only leaves a row in the state, where it is harmless, never drops one)
            kh = hash_columns([kept.column(k) for k in self.input_keys[0]]) if kept.num_rows else \
                np.zeros(0, dtype=np.uint64)
            nh = hash_columns([new.column(k) for k in self.input_keys[0]]) if new.num_rows else \
                np.zeros(0, dtype=np.uint64)
            keep = np.isin(nh, kh)
        else:
            on = " AND ".join(f"n.{k} IS NOT DISTINCT FROM a.{k}" for k in key) or "TRUE"
            flags = duck.query(f"SELECT EXISTS (SELECT 1 FROM a WHERE {on}) AS __keep FROM n",
                               {"n": new, "a": after.select(list(range(width))).rename_columns(names)})
            keep = flags.column("__keep").to_numpy(zero_copy_only=False).astype(bool)
            kept = new.filter(pa.array(keep))
        if self._unwritten:
            # the delta was not written: delete the old rows that left the output, insert the
            # new rows that entered it (`new` is the old rows followed by the delta's)
            n_old = old.num_rows
            gone = ~keep[:n_old]
            came = keep[n_old:]
            rows = pa.concat_tables([old.filter(pa.array(gone)), new.slice(n_old).filter(pa.array(came))])
            if rows.num_rows:
                ops = np.concatenate([np.full(int(gone.sum()), DELETE), np.full(int(came.sum()), INSERT)])
                self.tables[0].write_chunk(to_schema(rows, self.tables[0].schema), ops.astype(np.int8))
        elif not keep.all():
            dropped = new.filter(pa.array(~keep))
            self.tables[0].write_chunk(to_schema(dropped, self.tables[0].schema),
                                       np.full(dropped.num_rows, DELETE, dtype=np.int8))
        cache.add(kept, self._hash(0, kept))
        return out

    def _take_deltas(self) -> list[StreamChunk]:
        """The epoch's changes per input (positional names), written to the inputs' state."""
        for side in range(len(self.input_types)):
            self._rows(side)  # load the state as of before this epoch's writes
        deltas = []
        self._unwritten = False
        for side in range(len(self.input_types)):
            chunks, self.buffers[side] = self.buffers[side], []
            delta = concat_chunks([StreamChunk(c.data.rename_columns(self._names(side)), c.ops) for c in chunks],
                                  self.schemas[side])
            deltas.append(delta)
            if self.prune and len(self.input_types) == 1 and delta.is_insert().all():
                self._unwritten = True  # only the rows that enter the output will be written
            elif len(delta):
                self.tables[side].write_chunk(to_schema(delta.data, self.tables[side].schema), delta.ops)
        return deltas

    def _update_cache(self, side: int, delta: StreamChunk, touched) -> tuple[pa.Table, pa.Table]:
        """Apply an input's delta to its cache; returns the touched partitions' rows before and
        after (everything when unpartitioned)."""
        cache = self.cache[side]
        old = cache.take(touched, remove=True)
        new = apply_chunk(old, delta, [self._names(side)[k] for k in self.input_keys[side]])
        cache.add(new, self._hash(side, new))
        return old, new

    def _append(self, side: int, delta: StreamChunk, hashes: np.ndarray | None = None) -> None:
        """An insert-only delta: its rows join the cache without looking at the old ones."""
        self.cache[side].add(delta.data, self._hash(side, delta.data) if hashes is None else hashes)

    def _touched(self, deltas: list[StreamChunk]) -> np.ndarray | None:
        """Hashes of the partition keys changed in this epoch (None: one partition, everything)."""
        if not self.partition_keys[0] or self.fresh or self.temporal:
            return None
        parts = [self._hash(side, d.data) for side, d in enumerate(deltas) if len(d)]
        return unique_hashes(np.concatenate(parts)) if parts else np.zeros(0, dtype=np.uint64)

    def _matching(self, side: int, hashes: np.ndarray) -> pa.Table:
        """The cached rows of `side` whose partition-key hash is among `hashes`."""
        return self.cache[side].take(hashes)

    def _diff(self, olds: list[pa.Table], news: list[pa.Table], with_after: bool = False):
        """f(before) and f(after), and their difference, in one DuckDB query (with_after: also
        f(after) itself, returned second)."""
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
        # __k: 0 a row to delete, 1 a row to insert, 2 a row of f(after)
        if self.fresh:
            sql = f"WITH a AS ({after}) SELECT *, 1 AS __k FROM a"
            if with_after:
                sql += " UNION ALL SELECT *, 2 AS __k FROM a"
        else:
            before = f"SELECT * FROM ({scope('old', olds)}) AS b({names})"
            sql = (f"WITH b AS ({before}), a AS ({after}) "
                   f"SELECT *, 0 AS __k FROM (SELECT * FROM b EXCEPT ALL SELECT * FROM a) "
                   f"UNION ALL SELECT *, 1 AS __k FROM (SELECT * FROM a EXCEPT ALL SELECT * FROM b)")
            if with_after:
                sql += " UNION ALL SELECT *, 2 AS __k FROM a"
        out = duck.query(sql, tables)
        k = out.column("__k").to_numpy(zero_copy_only=False)
        out = out.drop_columns(["__k"])
        after_rows = None
        if with_after:
            after_rows = out.filter(pa.array(k == 2))
            out, k = out.filter(pa.array(k != 2)), k[k != 2]
        chunks: list[StreamChunk] = []
        if out.num_rows:
            order = self._change_order(out, k)
            data = out.take(pa.array(order)).cast(self.schema)
            ops = np.where(k[order] == 1, INSERT, DELETE).astype(np.int8)
            chunks = [StreamChunk(data, ops)]
        return (chunks, after_rows) if with_after else chunks

    def _change_order(self, out: pa.Table, k: np.ndarray) -> np.ndarray:
        """Deletes first, then inserts, each in stream key order: the diff's own order is
        arbitrary, and rows of one key (an append-only input's rows, keyed by a row id that
        grows as they arrive) must leave in the order they came, as an operator that passes
        rows through keeps it (a table downstream applies them in turn)."""
        import pyarrow.compute as pc

        keys = [i for i in self.stream_key if i < out.num_columns]
        if not keys or len(k) < 2:
            return np.argsort(k, kind="stable")
        columns = [pa.array(k), *(out.column(i) for i in keys)]
        names = [f"c{i}" for i in range(len(columns))]
        try:
            return pc.sort_indices(pa.table(columns, names=names),
                                   sort_keys=[(n, "ascending") for n in names]).to_numpy()
        except (pa.ArrowNotImplementedError, pa.ArrowTypeError):  # a key Arrow cannot sort
            return np.argsort(k, kind="stable")


def _epoch_time(epoch: int) -> str:
    """The wall-clock time of an epoch (its physical part), as a UTC timestamp literal."""
    import datetime

    from rw_cli.common.epoch import EPOCH_ORIGIN_MS, EPOCH_SHIFT

    ms = (epoch >> EPOCH_SHIFT) + EPOCH_ORIGIN_MS
    return datetime.datetime.fromtimestamp(ms / 1000, datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f+00")

