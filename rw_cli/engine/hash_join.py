"""HashJoinExecutor: joins of every kind (inner, left/right/full outer, semi, anti), with
equi keys (partitioned by them) or without (one partition: a nested-loop join).

Each side is materialized-input state keyed by its stream key. On a barrier, for the join
keys touched in the epoch, the join of those keys' rows is computed before and after the
epoch and the difference is emitted (see partition_recompute.py) — which also handles what a
degree table handles in RisingWave: a left row losing its last match becomes NULL-padded.

A temporal join (`JOIN t FOR SYSTEM_TIME AS OF PROCTIME()`, `lookup`) is a lookup instead:
each left change joins the right side as it is at that epoch's barrier (its changes of the
epoch applied first) and is emitted once; a right change only updates what later left rows
see, never the output already emitted. A left side that retracts has a memo (a third state
table, RisingWave's memo table of a non-append-only temporal join): the rows each left row
was joined to, keyed by the left row's stream key. A left delete retracts what was emitted
for that row, as it was emitted, not what a lookup would find now.
"""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rw_cli.common.types import DataType
from rw_cli.common.vnode import compute_vnodes, hash_columns, unique_hashes
from rw_cli.engine import arrow_expr, duck, expr
from rw_cli.engine.chunk import DELETE, INSERT, StreamChunk, to_schema, values_equal
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
                 fresh: bool = True, vnodes=None, lookup: bool = False):
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
        # a temporal join over a left side that retracts: the memo (rw_cli.stream.builder
        # gives it a third state table), its rows the output rows, keyed by the left stream key
        self.left_sk = list(left_sk)
        self.memo_table = state_tables[2] if lookup and len(state_tables) > 2 else None
        self.memo: PartitionCache | None = None

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
        if self.memo_table is not None:
            return self._lookup_memo(left, hashes)
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

    def _memo_rows(self) -> PartitionCache:
        """The memo, loaded from its state table at the first epoch (a parallel actor keeps
        the rows of its own vnodes: those of their left row's join key)."""
        if self.memo is None:
            names = [f"_{i}" for i in range(sum(self.widths))]
            schema = pa.schema([pa.field(n, f.type) for n, f in zip(names, self.schema)])
            rows = self.memo_table.scan()
            rows = pa.Table.from_arrays(rows.columns, schema=schema)
            if self.vnodes is not None and rows.num_rows and self.keys[0]:
                vn = compute_vnodes([rows.column(k) for k in self.keys[0]], num_rows=rows.num_rows)
                rows = rows.filter(pa.array(self.vnodes[vn]))
            self.memo = PartitionCache.for_key(schema, self.left_sk)
            self.memo.add(rows, self._sk_hash(rows), level=99)
        return self.memo

    def _sk_hash(self, rows: pa.Table) -> np.ndarray | None:
        """The hash of each row's left stream key (None: no key, one partition)."""
        if not self.left_sk:
            return None
        if rows.num_rows == 0:
            return np.zeros(0, dtype=np.uint64)
        return hash_columns([rows.column(k) for k in self.left_sk])

    def _lookup_memo(self, left: StreamChunk, hashes) -> list[StreamChunk]:
        """A left side that retracts: for each left row the epoch touched (by stream key), what
        was emitted for it is retracted (the memo's rows), and its row as of the barrier, if it
        is there, is looked up, emitted and memoized."""
        memo = self._memo_rows()
        data = left.data
        keys = self._sk_hash(data)
        n = data.num_rows
        if keys is None:
            touched = None
            last = np.array([n - 1])
        else:
            touched = unique_hashes(keys)
            _, first_rev = np.unique(keys[::-1], return_index=True)
            last = np.sort(n - 1 - first_rev)
        signs = left.signs()
        present = last[signs[last] > 0]  # each key's last change: a row that is there now
        gone = memo.take(touched, remove=True)
        names = [f"_{i}" for i in range(sum(self.widths))]
        parts, ops = [], []
        if gone.num_rows:
            parts.append(gone)
            ops.append(np.full(gone.num_rows, DELETE, dtype=np.int8))
            self.memo_table.write_chunk(to_schema(gone.rename_columns(self.memo_table.schema.names),
                                                  self.memo_table.schema), ops[-1])
        if len(present):
            now = data.take(pa.array(present))
            hs = hashes[present] if hashes is not None else None
            matches = self._matching(1, unique_hashes(hs) if hs is not None else None)
            lcols = ", ".join(f"l._{i}" for i in range(self.widths[0]))
            rcols = ", ".join(f"r._{self.widths[0] + i}" for i in range(self.widths[1]))
            join = "LEFT JOIN" if self.kind == "left" else "JOIN"
            out = duck.query(f"SELECT {lcols}, {rcols} FROM dl l {join} ro r ON {self.on or 'TRUE'}",
                             {"dl": now, "ro": matches})
            if out.num_rows:
                out = pa.Table.from_arrays([c.cast(f.type) for c, f in zip(out.columns, self.schema)], names=names)
                memo.add(out, self._sk_hash(out))
                self.memo_table.write_chunk(to_schema(out.rename_columns(self.memo_table.schema.names),
                                                      self.memo_table.schema),
                                            np.full(out.num_rows, INSERT, dtype=np.int8))
                parts.append(out)
                ops.append(np.full(out.num_rows, INSERT, dtype=np.int8))
        if not parts:
            return []
        rows = pa.concat_tables([p.rename_columns(names).cast(pa.schema([pa.field(nm, f.type) for nm, f in
                                                                          zip(names, self.schema)]))
                                 for p in parts])
        return [StreamChunk(rows.rename_columns(self.schema.names).cast(self.schema), np.concatenate(ops))]

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
