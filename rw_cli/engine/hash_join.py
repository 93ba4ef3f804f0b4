"""HashJoinExecutor: joins of every kind (inner, left/right/full outer, semi, anti), with
equi keys (partitioned by them) or without (one partition: a nested-loop join).

Each side is materialized-input state keyed by its stream key. On a barrier, for the join
keys touched in the epoch, the join of those keys' rows is computed before and after the
epoch and the difference is emitted (see partition_recompute.py) — which also handles what a
degree table handles in RisingWave: a left row losing its last match becomes NULL-padded.

A temporal join (`JOIN t FOR SYSTEM_TIME AS OF PROCTIME()`, `lookup`) is a lookup instead:
each left change joins the right side as it is at that epoch's barrier (its changes of the
epoch applied first) and is emitted once; a right change only updates what later left rows
see, never the output already emitted. Over a left side that retracts (`memo`), the rows a
left row produced are remembered (RisingWave's memo table: the left side's state holds the
joined rows, keyed by the left stream key), and its delete retracts exactly them, whatever
the right side holds by then. An event-time temporal join (`FOR SYSTEM_TIME AS OF l.ts`,
`event_time`) keeps its left rows pending (changes fold into them) until the lower of both
sides' watermarks (`clock`) passes their time; then each joins the version of its key whose
time is the latest not after its own (DuckDB's ASOF join) and is emitted once, for good: a
later change of a released row is ignored.
"""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rw_cli.common.types import DataType
from rw_cli.common.vnode import compute_vnodes, hash_columns, unique_hashes
from rw_cli.engine import arrow_expr, duck, expr
from rw_cli.engine.chunk import DELETE, INSERT, StreamChunk, concat_chunks, to_schema, values_equal
from rw_cli.engine.partition_cache import PartitionCache
from rw_cli.engine.partition_recompute import PartitionRecomputeExecutor

_SQL_KIND = {"inner": "JOIN", "left": "LEFT JOIN", "right": "RIGHT JOIN", "full": "FULL JOIN"}


def join_sql(kind: str, nl: int, nr: int, left_keys: list[int], right_keys: list[int],
             null_safe: list[bool], condition: str | None) -> str:
    """`condition`: the non-equi part's DuckDB SQL over the joined columns, if any."""
    """DuckDB SQL over `in0` (columns `_0.._{nl-1}`) and `in1` (`_{nl}..`)."""
    conds = [f"in0._{a} {'IS NOT DISTINCT FROM' if ns else '='} in1._{nl + b}"
             for a, b, ns in zip(left_keys, right_keys, null_safe)]
    if condition:
        conds.append(f"({condition})")
    on = " AND ".join(conds) or "TRUE"
    if kind in ("semi", "anti"):
        neg = "NOT " if kind == "anti" else ""
        return f"SELECT in0.* FROM in0 WHERE {neg}EXISTS (SELECT 1 FROM in1 WHERE {on})"
    cols = ", ".join([f"in0._{i}" for i in range(nl)] + [f"in1._{nl + i}" for i in range(nr)])
    return f"SELECT {cols} FROM in0 {_SQL_KIND[kind]} in1 ON {on}"


class HashJoinExecutor(PartitionRecomputeExecutor):
    def __init__(self, kind: str, left_types: list[DataType], right_types: list[DataType],
                 left_keys: list[int], right_keys: list[int], null_safe: list[bool],
                 condition: expr.Condition | None, left_sk: list[int], right_sk: list[int], state_tables: tuple,
                 fresh: bool = True, vnodes=None, lookup: bool = False, memo: bool = False,
                 event_time: list[int] | None = None, clock=None):
        """`condition`: the non-equi part, over the joined columns; its numpy form (if it
        has one) joins inserts, its DuckDB SQL is the reference either way."""
        nl, nr = len(left_types), len(right_types)
        cond_sql = condition.sql if condition is not None else None
        sql = join_sql(kind, nl, nr, left_keys, right_keys, null_safe, cond_sql)
        if kind in ("semi", "anti"):
            types, sk = left_types, left_sk
        else:
            types, sk = left_types + right_types, left_sk + [nl + k for k in right_sk]
        identity = "StreamHashJoin" if left_keys else "StreamNestedLoopJoin"
        super().__init__(identity, [left_types, right_types], [left_sk, right_sk],
                         [list(left_keys), list(right_keys)], sql, types, sk, list(state_tables),
                         column_offsets=[0, nl], fresh=fresh, vnodes=vnodes)
        self.kind = kind
        self.on = " AND ".join([f"l._{a} {'IS NOT DISTINCT FROM' if ns else '='} r._{nl + b}"
                                for a, b, ns in zip(left_keys, right_keys, null_safe)]
                               + ([f"({cond_sql})"] if cond_sql else []))
        self.widths = (nl, len(right_types))
        self.keys = (list(left_keys), list(right_keys))
        self.null_safe = list(null_safe)
        self.condition = condition
        self.lookup = lookup
        # a lookup over a retracting left side: state table 0 holds the joined rows (the memo)
        self.memo = lookup and memo
        self.left_sk = list(left_sk)
        self._memo: PartitionCache | None = None
        self._memo_schema = pa.schema([pa.field(f"_{i}", t.arrow()) for i, t in enumerate(left_types + right_types)])
        self.event_time = event_time if lookup else None
        self.event_clock = clock
        self._released: str | None = None  # what the last barrier released up to (a SQL literal)

    def _index_join_ok(self) -> bool:
        """Keys compared with `=` on types whose equality (Arrow's `equal`, which checks the
        index's pairs) is DuckDB's, and whose equal values hash equally."""
        if not self.keys[0] or any(self.null_safe):
            return False
        for a, b in zip(*self.keys):
            lt = self.schemas[0].field(a).type
            rt = self.schemas[1].field(b).type
            if lt != rt or not (pa.types.is_integer(lt) or pa.types.is_string(lt) or pa.types.is_timestamp(lt)
                                or pa.types.is_date(lt) or pa.types.is_large_string(lt)):
                return False
        return True

    def _recompute(self) -> list[StreamChunk]:
        """An inner equi-join changes by the delta rule: ΔL ⋈ R + L ⋈ ΔR + ΔL ⋈ ΔR (with the
        deltas' signs), looking only at the other side's rows with the delta's join keys — the
        cost follows the changes and their matches, not the size of a hot key's history."""
        if self.memo:
            return self._memo_lookup()
        if self.lookup:
            return self._lookup()
        if self.kind != "inner" or not self.partition_keys[0] or self.fresh:
            return super()._recompute()
        deltas = self._take_deltas()
        hashes = [self._hash(side, d.data) if len(d) else None for side, d in enumerate(deltas)]
        if all(d.is_insert().all() for d in deltas) and self._index_join_ok():
            return self._insert_only(deltas, hashes)
        signed = []
        for side, d in enumerate(deltas):
            signed.append(d.data.append_column("__s", pa.array(d.signs())) if len(d) else None)
        lo = self._matching(0, hashes[1]) if signed[1] is not None else None
        ro = self._matching(1, hashes[0]) if signed[0] is not None else None
        parts, tables = [], {}
        lcols = ", ".join(f"l._{i}" for i in range(self.widths[0]))
        rcols = ", ".join(f"r._{self.widths[0] + i}" for i in range(self.widths[1]))
        if signed[0] is not None and ro is not None and ro.num_rows:
            tables.update(dl=signed[0], ro=ro)
            parts.append(f"SELECT {lcols}, {rcols}, l.__s AS __s FROM dl l JOIN ro r ON {self.on}")
        if signed[1] is not None and lo is not None and lo.num_rows:
            tables.update(lo=lo, dr=signed[1])
            parts.append(f"SELECT {lcols}, {rcols}, r.__s AS __s FROM lo l JOIN dr r ON {self.on}")
        if signed[0] is not None and signed[1] is not None:
            tables.update(dl=signed[0], dr=signed[1])
            parts.append(f"SELECT {lcols}, {rcols}, l.__s * r.__s AS __s FROM dl l JOIN dr r ON {self.on}")
        for side, d in enumerate(deltas):
            if len(d):
                if d.is_insert().all():
                    self._append(side, d, hashes[side])
                else:
                    self._update_cache(side, d, hashes[side])
        if not parts:
            return []
        cols = ", ".join(f"_{i}" for i in range(sum(self.widths)))
        if all(d.is_insert().all() for d in deltas):
            # inserts only: every joined pair is new and counts once, nothing cancels out
            out = duck.query(f"SELECT {cols} FROM ({' UNION ALL '.join(parts)})", tables)
            if out.num_rows == 0:
                return []
            rows = out.rename_columns(self.schema.names).cast(self.schema)
            return [StreamChunk(rows, np.full(out.num_rows, INSERT, dtype=np.int8))]
        out = duck.query(f"SELECT {cols}, CAST(SUM(__s) AS BIGINT) AS __n FROM ({' UNION ALL '.join(parts)}) "
                         f"GROUP BY ALL HAVING SUM(__s) <> 0", tables)
        return _signed_rows(out, self.schema)

    def _apply(self, side: int, delta: StreamChunk) -> np.ndarray | None:
        """Bring a side's cache up to date with its delta; the delta's partition hashes."""
        hashes = self._hash(side, delta.data)
        if delta.is_insert().all():
            self._append(side, delta, hashes)
        else:
            self._update_cache(side, delta, None if hashes is None else unique_hashes(hashes))
        return hashes

    def _lookup(self) -> list[StreamChunk]:
        """A temporal join's epoch: the right side's changes applied, then each left change
        joined with the right rows of its keys (NULL-padded when none, for a left join)."""
        left, right = self._take_deltas()
        if len(right):
            self._apply(1, right)
        if not len(left):
            return []
        hashes = self._apply(0, left)
        matches = self._matching(1, unique_hashes(hashes) if hashes is not None else None)
        lcols = ", ".join(f"l._{i}" for i in range(self.widths[0]))
        rcols = ", ".join(f"r._{self.widths[0] + i}" for i in range(self.widths[1]))
        join = "LEFT JOIN" if self.kind == "left" else "JOIN"
        signed = left.data.append_column("__s", pa.array(left.signs()))
        out = duck.query(f"SELECT {lcols}, {rcols}, l.__s AS __s FROM dl l {join} ro r ON {self.on or 'TRUE'}",
                         {"dl": signed, "ro": matches})
        if out.num_rows == 0:
            return []
        ops = np.where(out.column("__s").to_numpy() > 0, INSERT, DELETE).astype(np.int8)
        rows = out.drop_columns(["__s"]).rename_columns(self.schema.names).cast(self.schema)
        return [StreamChunk(rows, ops)]

    @property
    def clock(self):
        return self._clock

    @clock.setter
    def clock(self, fn) -> None:
        """A Spark task sets the watermarks' value it was given for the epoch here (as it does
        for every clocked executor); an event-time join releases its rows by it."""
        self._clock = fn
        if getattr(self, "event_time", None) is not None:
            self.event_clock = fn

    def on_barrier(self, epoch) -> list[StreamChunk]:
        if self.event_time is None:
            return super().on_barrier(epoch)
        close = self.event_clock(epoch) if self.event_clock is not None else None
        out = self._event_time_lookup(close)
        self.fresh = False
        self._released = close
        for t in self.tables:
            t.commit(epoch.prev)
        return out

    def _event_time_lookup(self, close: str | None) -> list[StreamChunk]:
        """The epoch of an event-time temporal join: the right side's changes applied, the
        left side's folded into the pending rows (those at or below what was released
        already are ignored), and the pending rows below `close` joined and released."""
        lt, rt = self.event_time[0], self.widths[0] + self.event_time[1]
        self._rows(0)
        self._rows(1)
        deltas = []
        for side in (0, 1):
            chunks, self.buffers[side] = self.buffers[side], []
            deltas.append(concat_chunks([StreamChunk(c.data.rename_columns(self._names(side)), c.ops)
                                         for c in chunks], self.schemas[side]))
        right, left = deltas[1], deltas[0]
        if len(right):
            self.tables[1].write_chunk(to_schema(right.data, self.tables[1].schema), right.ops)
            self._apply(1, right)
        if len(left) and self._released is not None:
            late = duck.query(f"SELECT _{lt} < {self._released} AS late FROM d", {"d": left.data}).column(0)
            keep = pc.invert(pc.fill_null(late, False))
            left = StreamChunk(left.data.filter(keep), left.ops[keep.to_numpy(zero_copy_only=False)])
        if len(left):
            self.tables[0].write_chunk(to_schema(left.data, self.tables[0].schema), left.ops)
            self._apply(0, left)
        if close is None:
            return []
        pending = self.cache[0].take(None, remove=True)
        if pending.num_rows == 0:
            return []
        due = duck.query(f"SELECT _{lt} < {close} AS due FROM p", {"p": pending}).column(0)
        due = pc.fill_null(due, False)
        ready, rest = pending.filter(due), pending.filter(pc.invert(due))
        self.cache[0].add(rest, self._hash(0, rest))
        if ready.num_rows == 0:
            return []
        self.tables[0].write_chunk(to_schema(ready, self.tables[0].schema),
                                   np.full(ready.num_rows, DELETE, dtype=np.int8))
        hashes = self._hash(0, ready)
        matches = self._matching(1, unique_hashes(hashes) if hashes is not None else None)
        keys = [f"l._{a} = r._{self.widths[0] + b}" for a, b in zip(*self.keys)]
        lcols = ", ".join(f"l._{i}" for i in range(self.widths[0]))
        rcols = ", ".join(f"r._{self.widths[0] + i}" for i in range(self.widths[1]))
        join = "ASOF LEFT JOIN" if self.kind == "left" else "ASOF JOIN"
        out = duck.query(f"SELECT {lcols}, {rcols} FROM ready l {join} ro r "
                         f"ON {' AND '.join(keys)} AND l._{lt} >= r._{rt}", {"ready": ready, "ro": matches})
        if out.num_rows == 0:
            return []
        rows = out.rename_columns(self.schema.names).cast(self.schema)
        return [StreamChunk(rows, np.full(out.num_rows, INSERT, dtype=np.int8))]

    def _memo_rows(self) -> PartitionCache:
        """The memo, cached by the hash of the left stream key (loaded at the first epoch; a
        parallel actor keeps the rows of its vnodes, which the left join key decides)."""
        if self._memo is None:
            rows = self.tables[0].scan()
            rows = pa.Table.from_arrays(rows.columns, schema=self._memo_schema)
            if self.vnodes is not None and rows.num_rows and self.keys[0]:
                vn = compute_vnodes([rows.column(k) for k in self.keys[0]], num_rows=rows.num_rows)
                rows = rows.filter(pa.array(self.vnodes[vn]))
            self._memo = PartitionCache.for_key(self._memo_schema, self.left_sk)
            self._memo.add(rows, self._left_key_hash(rows), level=99)
        return self._memo

    def _left_key_hash(self, rows: pa.Table) -> np.ndarray:
        """The hash of each row's left stream key (a singleton left side has one key: none)."""
        if rows.num_rows == 0 or not self.left_sk:
            return np.zeros(rows.num_rows, dtype=np.uint64)
        return hash_columns([rows.column(k) for k in self.left_sk])

    def _memo_lookup(self) -> list[StreamChunk]:
        """A temporal join's epoch over a retracting left side. The right side is fixed for the
        epoch, so what a left row inserted and deleted within it produced cancels out: per left
        stream key, a first change that deletes retracts the memo of the key, and a last change
        that inserts joins that row and remembers what it produced."""
        memo = self._memo_rows()
        self._rows(1)
        chunks, self.buffers[1] = self.buffers[1], []
        right = concat_chunks([StreamChunk(c.data.rename_columns(self._names(1)), c.ops) for c in chunks],
                              self.schemas[1])
        if len(right):
            self.tables[1].write_chunk(to_schema(right.data, self.tables[1].schema), right.ops)
            self._apply(1, right)
        chunks, self.buffers[0] = self.buffers[0], []
        left = concat_chunks([StreamChunk(c.data.rename_columns(self._names(0)), c.ops) for c in chunks],
                             self.schemas[0])
        if not len(left):
            return []
        keys = self._left_key_hash(left.data)
        signs = left.signs()
        n = len(left)
        uniq, first = np.unique(keys, return_index=True)
        last = n - 1 - np.unique(keys[::-1], return_index=True)[1]
        retract = uniq[signs[first] < 0]
        gone = memo.take(retract, remove=True) if len(retract) else self._memo_schema.empty_table()
        rows = left.data.take(pa.array(np.sort(last[signs[last] > 0])))
        made = self._memo_schema.empty_table()
        if rows.num_rows:
            hashes = self._hash(0, rows)
            matches = self._matching(1, unique_hashes(hashes) if hashes is not None else None)
            lcols = ", ".join(f"l._{i}" for i in range(self.widths[0]))
            rcols = ", ".join(f"r._{self.widths[0] + i}" for i in range(self.widths[1]))
            join = "LEFT JOIN" if self.kind == "left" else "JOIN"
            made = duck.query(f"SELECT {lcols}, {rcols} FROM dl l {join} ro r ON {self.on or 'TRUE'}",
                              {"dl": rows, "ro": matches})
            made = pa.Table.from_batches([to_schema(made, self._memo_schema)])
            memo.add(made, self._left_key_hash(made))
        out = []
        for part, op in ((gone, DELETE), (made, INSERT)):
            if part.num_rows:
                ops = np.full(part.num_rows, op, dtype=np.int8)
                self.tables[0].write_chunk(to_schema(part, self.tables[0].schema), ops)
                out.append(StreamChunk(part.rename_columns(self.schema.names).cast(self.schema), ops))
        return out

    def _insert_only(self, deltas: list[StreamChunk], hashes: list) -> list[StreamChunk]:
        """Inserts only, plain equi-join keys: every pair is new. ΔL ⋈ R comes from the right
        side's cache index; then ΔL joins the left cache, and (L + ΔL) ⋈ ΔR — which is
        L ⋈ ΔR + ΔL ⋈ ΔR — comes from the left side's index. Each delta row gets the rows of
        its partition; keys are compared to drop hash collisions; then the condition."""
        names = [f"_{i}" for i in range(sum(self.widths))]
        joined = []
        for side in (0, 1):
            if not len(deltas[side]):
                continue
            keys = deltas[side].data.column(self.keys[side][0]) if len(self.keys[side]) == 1 else None
            probe, rows = self.cache[1 - side].pairs(hashes[side], keys)
            self._append(side, deltas[side], hashes[side])
            mine = deltas[side].data.select(list(range(self.widths[side]))).take(pa.array(probe))
            left, right = (mine, rows) if side == 0 else (rows, mine)
            same = np.ones(len(probe), dtype=bool)
            for a, b in zip(*self.keys):
                same &= values_equal(left.column(a), right.column(b)) & left.column(a).is_valid().to_numpy(
                    zero_copy_only=False)
            if not same.all():
                left, right = left.filter(pa.array(same)), right.filter(pa.array(same))
            joined.append(pa.Table.from_arrays(left.columns + right.columns, names=names))
        out = pa.concat_tables(joined) if len(joined) > 1 else joined[0] if joined else None
        if out is None or out.num_rows == 0:
            return []
        if self.condition is not None:
            out = out.filter(pa.array(self._condition_mask(out)))
            if out.num_rows == 0:
                return []
        rows = out.rename_columns(self.schema.names).cast(self.schema)
        return [StreamChunk(rows, np.full(out.num_rows, INSERT, dtype=np.int8))]

    def _condition_mask(self, rows: pa.Table) -> np.ndarray:
        """The joined pairs the condition keeps: by numpy when it compiled, else by DuckDB."""
        if self.condition.form is not None:
            try:
                return arrow_expr.condition_mask(self.condition.form, rows)
            except arrow_expr.Fallback:
                pass
        return expr.condition_mask(self.condition, rows)


def _signed_rows(out: pa.Table, schema: pa.Schema) -> list[StreamChunk]:
    """Rows with a net multiplicity (`__n`): |n| deletes first, then inserts."""
    if out.num_rows == 0:
        return []
    n = out.column("__n").to_numpy()
    idx = np.repeat(np.arange(len(n)), np.abs(n))
    neg = n[idx] < 0
    order = np.concatenate([np.where(neg)[0], np.where(~neg)[0]])
    rows = out.drop_columns(["__n"]).take(pa.array(idx[order])).rename_columns(schema.names).cast(schema)
    ops = np.where(neg[order], DELETE, INSERT).astype(np.int8)
    return [StreamChunk(rows, ops)]
