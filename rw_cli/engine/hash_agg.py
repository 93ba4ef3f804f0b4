"""HashAggExecutor (and simple agg when there is no group key), with retractions.

Chunks of an epoch are buffered; on the barrier the epoch's changes are aggregated per group
in one DuckDB query (each row weighted +1 or -1), merged with the groups' previous state
(one batched lookup in the state table) and the changed groups are emitted as U-/U+ pairs,
inserts or deletes, as RisingWave's agg executors do at each barrier.

Retractable min/max keep the multiset of input values per group in a "materialized input"
state table (group keys, value -> count): deleting the current extreme is answered from it.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from rw_cli.common.types import BIGINT, DOUBLE, DataType
from rw_cli.engine import duck
from rw_cli.engine.chunk import DELETE, INSERT, UPDATE_DELETE, UPDATE_INSERT, StreamChunk, concat_chunks, to_schema
from rw_cli.engine.executor import Executor
from rw_cli.meta.epoch import EpochPair

AGG_KINDS = ("count_star", "count", "sum", "avg", "min", "max")


@dataclass
class AggCall:
    kind: str
    arg: int | None  # input column, None for count(*)
    arg_type: DataType | None
    return_type: DataType

    @property
    def needs_minput(self) -> bool:
        return self.kind in ("min", "max")


def agg_return_type(kind: str, arg_type: DataType | None) -> DataType:
    """PostgreSQL's result types."""
    if kind in ("count", "count_star"):
        return BIGINT
    assert arg_type is not None
    if kind == "sum":
        if arg_type.name in ("smallint", "integer"):
            return BIGINT
        if arg_type.name == "bigint":
            return DataType("numeric", 0)
        return arg_type
    if kind == "avg":
        if arg_type.name in ("real", "double precision"):
            return DOUBLE
        if arg_type.name == "interval":
            return arg_type
        return DataType("numeric")
    return arg_type


def state_types(call: AggCall) -> list[tuple[str, DataType]]:
    """The state columns one agg call keeps per group."""
    if call.kind in ("count", "count_star"):
        return [("cnt", BIGINT)]
    if call.kind == "sum":
        return [("sum", call.return_type), ("nn", BIGINT)]
    if call.kind == "avg":
        acc = DOUBLE if call.return_type == DOUBLE else DataType("numeric")
        return [("sum", acc), ("nn", BIGINT)]
    return [("val", call.arg_type), ("nn", BIGINT)]


def q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


class HashAggExecutor(Executor):
    identity = "StreamHashAgg"

    def __init__(self, input_types: list[DataType], group_keys: list[int], calls: list[AggCall],
                 result_table, minput_tables: dict[int, object]):
        types = [input_types[k] for k in group_keys] + [c.return_type for c in calls]
        super().__init__(types, list(range(len(group_keys))))
        if not group_keys:
            self.identity = "StreamSimpleAgg"
        self.input_types = input_types
        self.group_keys = group_keys
        self.calls = calls
        self.result_table = result_table  # StateTable: group keys + _rc + state columns
        self.minput_tables = minput_tables  # call index -> StateTable(group keys, value | cnt)
        self.buffer: list[StreamChunk] = []
        self.input_schema = pa.schema([pa.field(f"_{i}", t.arrow()) for i, t in enumerate(input_types)])
        self.state_cols: list[list[str]] = []
        for i, c in enumerate(calls):
            self.state_cols.append([f"a{i}_{n}" for n, _ in state_types(c)])
        self.initialized = bool(group_keys)

    # -- messages -------------------------------------------------------------------------
    def on_chunk(self, chunk: StreamChunk, side: int = 0) -> list[StreamChunk]:
        if len(chunk):
            self.buffer.append(chunk)
        return []

    def on_barrier(self, epoch: EpochPair) -> list[StreamChunk]:
        chunks, self.buffer = self.buffer, []
        out: list[StreamChunk] = []
        if chunks or not self.initialized:
            out = self._apply(concat_chunks(chunks, self.input_schema))
            self.initialized = True
        self.result_table.commit(epoch.prev)
        for t in self.minput_tables.values():
            t.commit(epoch.prev)
        return out

    # -- the epoch's delta ------------------------------------------------------------------
    def _apply(self, buf: StreamChunk) -> list[StreamChunk]:
        data = buf.data.append_column("_sign", pa.array(buf.signs()))
        nk = len(self.group_keys)
        if data.num_rows == 0:
            if nk:
                return []
            delta = self._empty_delta()
        else:
            delta = self._delta(data)
        old, found = self.result_table.get_rows(delta.slice(0, delta.num_rows).select(list(range(nk))))
        old = _rename(old, self._state_names())
        merged = self._merge(delta, old, found)
        for i, call in enumerate(self.calls):
            if call.needs_minput and i in self.minput_tables:
                merged = self._update_minput(i, call, data, merged)
        new_state = merged.select(self._state_names())
        alive = merged.column("_new_rc").to_numpy(zero_copy_only=False) > 0
        old_alive = found & (np.nan_to_num(merged.column("_old_rc").to_numpy(zero_copy_only=False).astype(float)) > 0)
        if nk == 0:
            alive = np.ones(merged.num_rows, dtype=bool)
            old_alive = found
        self._write_state(new_state, alive, nk == 0)
        return self._emit(merged, old_alive, alive)

    def _state_names(self) -> list[str]:
        names = [f"_{i}" for i in range(len(self.group_keys))] + ["_rc"]
        for cols in self.state_cols:
            names += cols
        return names

    def _delta(self, data: pa.Table) -> pa.Table:
        keys = [f"_{k}" for k in self.group_keys]
        sel = [f"{q(k)} AS _{j}" for j, k in enumerate(keys)] + ["CAST(SUM(_sign) AS BIGINT) AS d_rc"]
        for i, c in enumerate(self.calls):
            a = f"_{c.arg}" if c.arg is not None else None
            if c.kind == "count_star":
                sel.append(f"CAST(SUM(_sign) AS BIGINT) AS d{i}_cnt")
            elif c.kind == "count":
                sel.append(f"CAST(SUM(CASE WHEN {a} IS NOT NULL THEN _sign ELSE 0 END) AS BIGINT) AS d{i}_cnt")
            elif c.kind in ("sum", "avg"):
                acc = state_types(c)[0][1]
                sel.append(f"SUM(CAST({a} AS {acc.duckdb()}) * _sign) AS d{i}_sum")
                sel.append(f"CAST(SUM(CASE WHEN {a} IS NOT NULL THEN _sign ELSE 0 END) AS BIGINT) AS d{i}_nn")
            else:
                fn = "MIN" if c.kind == "min" else "MAX"
                sel.append(f"{fn}(CASE WHEN _sign > 0 THEN {a} END) AS d{i}_val")
                sel.append(f"CAST(SUM(CASE WHEN {a} IS NOT NULL THEN _sign ELSE 0 END) AS BIGINT) AS d{i}_nn")
                sel.append(f"COUNT(CASE WHEN _sign < 0 AND {a} IS NOT NULL THEN 1 END) AS d{i}_del")
        group = f" GROUP BY {', '.join(keys)}" if keys else ""
        delta = duck.query(f"SELECT {', '.join(sel)} FROM buf{group}", {"buf": data})
        key_types = [self.input_types[k].arrow() for k in self.group_keys]
        cols = [delta.column(j).cast(key_types[j]) for j in range(len(keys))]
        return pa.Table.from_arrays(cols + delta.columns[len(keys):], names=delta.column_names)

    def _empty_delta(self) -> pa.Table:
        """A zero change for the single group of a simple agg (so its first row is emitted)."""
        cols, names = [pa.array([0], pa.int64())], ["d_rc"]
        for i, c in enumerate(self.calls):
            for n, t in state_types(c):
                names.append(f"d{i}_{n}")
                cols.append(pa.array([0 if n in ("cnt", "nn") else None], t.arrow() if n not in ("cnt", "nn") else pa.int64()))
            if c.kind in ("min", "max"):
                names.append(f"d{i}_del")
                cols.append(pa.array([0], pa.int64()))
        return pa.Table.from_arrays(cols, names=names)

    def _merge(self, delta: pa.Table, old: pa.Table, found: np.ndarray) -> pa.Table:
        """New state per group = old state (zero where absent) + delta, in one DuckDB query."""
        nk = len(self.group_keys)
        both = delta
        for name in old.column_names[nk:]:
            both = both.append_column(f"o_{name}", old.column(name))
        both = both.append_column("_found", pa.array(found))
        sel = [f"_{j}" for j in range(nk)]
        sel.append("CASE WHEN _found THEN o__rc END AS _old_rc")
        sel.append("COALESCE(o__rc, 0) + d_rc AS _new_rc")
        sel.append("COALESCE(o__rc, 0) + d_rc AS _rc")
        for i, c in enumerate(self.calls):
            p = f"a{i}_"
            if c.kind in ("count", "count_star"):
                sel.append(f"COALESCE(o_{p}cnt, 0) + d{i}_cnt AS {p}cnt")
            elif c.kind in ("sum", "avg"):
                acc = state_types(c)[0][1].duckdb()
                sel.append(f"CASE WHEN COALESCE(o_{p}nn, 0) + d{i}_nn > 0 THEN "
                           f"CAST(COALESCE(CAST(o_{p}sum AS {acc}), 0) + COALESCE(d{i}_sum, 0) AS {acc}) END AS {p}sum")
                sel.append(f"COALESCE(o_{p}nn, 0) + d{i}_nn AS {p}nn")
            else:
                fn = "LEAST" if c.kind == "min" else "GREATEST"
                sel.append(f"CASE WHEN COALESCE(o_{p}nn, 0) + d{i}_nn > 0 THEN {fn}(o_{p}val, d{i}_val) END AS {p}val")
                sel.append(f"COALESCE(o_{p}nn, 0) + d{i}_nn AS {p}nn")
                sel.append(f"d{i}_del > 0 AS {p}recompute")
        sel += [f"o_{name} AS {q('old_' + name)}" for name in old.column_names[nk:]]
        return duck.query(f"SELECT {', '.join(sel)} FROM m", {"m": both})

    def _update_minput(self, i: int, call: AggCall, data: pa.Table, merged: pa.Table) -> pa.Table:
        """Maintain (group, value) -> count and recompute extremes whose values were deleted."""
        nk = len(self.group_keys)
        table = self.minput_tables[i]
        keys = [f"_{k}" for k in self.group_keys]
        a = f"_{call.arg}"
        sel = ", ".join([f"{k} AS _{j}" for j, k in enumerate(keys)] + [f"{a} AS _{nk}", "CAST(SUM(_sign) AS BIGINT) AS d"])
        grp = ", ".join(keys + [a])
        counts = duck.query(f"SELECT {sel} FROM buf WHERE {a} IS NOT NULL GROUP BY {grp}", {"buf": data})
        if counts.num_rows:
            key_cols = [counts.column(j).cast(table.schema.field(j).type) for j in range(nk + 1)]
            old, found = table.get_rows(key_cols)
            old_cnt = np.where(found, old.column(nk + 1).to_numpy(zero_copy_only=False), 0)
            new_cnt = old_cnt + counts.column("d").to_numpy()
            rows = pa.Table.from_arrays(key_cols + [pa.array(new_cnt, pa.int64())], names=table.schema.names)
            live = new_cnt > 0
            if live.any():
                table.insert(to_schema(rows.filter(pa.array(live)), table.schema))
            if (~live).any():
                table.delete(to_schema(rows.filter(pa.array(~live)), table.schema))
        recompute = merged.column(f"a{i}_recompute").to_numpy(zero_copy_only=False).astype(bool)
        if not recompute.any():
            return merged
        # Recompute the extreme of the touched groups from the materialized input.
        all_rows = table.scan().rename_columns([f"_{j}" for j in range(nk)] + ["v", "c"])
        groups = merged.select([f"_{j}" for j in range(nk)]).append_column("_pos", pa.array(np.arange(merged.num_rows)))
        groups = groups.filter(pa.array(recompute))
        fn = "MIN" if call.kind == "min" else "MAX"
        on = " AND ".join(f"g._{j} IS NOT DISTINCT FROM s._{j}" for j in range(nk)) or "TRUE"
        res = duck.query(
            f"SELECT g._pos AS pos, {fn}(s.v) AS v FROM g LEFT JOIN s ON {on} AND s.c > 0 GROUP BY g._pos",
            {"g": groups, "s": all_rows})
        vals = merged.column(f"a{i}_val").combine_chunks().to_pylist()
        for pos, v in zip(res.column("pos").to_pylist(), res.column("v").to_pylist()):
            vals[pos] = v
        idx = merged.column_names.index(f"a{i}_val")
        return merged.set_column(idx, f"a{i}_val", pa.array(vals, merged.schema.field(idx).type))

    def _write_state(self, state: pa.Table, alive: np.ndarray, simple: bool) -> None:
        keep = state.filter(pa.array(alive))
        drop = state.filter(pa.array(~alive))
        if keep.num_rows:
            self.result_table.insert(to_schema(keep, self.result_table.schema))
        if drop.num_rows:
            self.result_table.delete(to_schema(drop, self.result_table.schema))

    def _emit(self, merged: pa.Table, old_alive: np.ndarray, alive: np.ndarray) -> list[StreamChunk]:
        old_out, new_out, same = self._outputs(merged)
        changed = ~same | (old_alive != alive)
        both = old_alive & alive & changed
        ins = alive & ~old_alive
        dels = old_alive & ~alive
        # Interleave U-/U+ pairs: position 2*i for the old row, 2*i+1 for the new one.
        order_old = np.where(both | dels)[0]
        order_new = np.where(both | ins)[0]
        rows = pa.concat_tables([old_out.take(pa.array(order_old)), new_out.take(pa.array(order_new))])
        keys = np.concatenate([order_old * 2, order_new * 2 + 1])
        op = np.concatenate([np.where(both[order_old], UPDATE_DELETE, DELETE),
                             np.where(both[order_new], UPDATE_INSERT, INSERT)]).astype(np.int8)
        if rows.num_rows == 0:
            return []
        perm = np.argsort(keys, kind="stable")
        return [self.conform(StreamChunk(rows.take(pa.array(perm)), op[perm]))]

    def _output_exprs(self, prefix: str) -> list[str]:
        """Group keys + the value of every agg call, from the (old_ or new) state columns."""
        sel = [f"_{j}" for j in range(len(self.group_keys))]
        for i, c in enumerate(self.calls):
            p = f"{prefix}a{i}_"
            rt = c.return_type.duckdb()
            if c.kind in ("count", "count_star"):
                sel.append(f"COALESCE({q(p + 'cnt')}, 0)")
            elif c.kind == "sum":
                sel.append(f"CASE WHEN {q(p + 'nn')} > 0 THEN CAST({q(p + 'sum')} AS {rt}) END")
            elif c.kind == "avg":
                sel.append(f"CASE WHEN {q(p + 'nn')} > 0 THEN CAST({q(p + 'sum')} / {q(p + 'nn')} AS {rt}) END")
            else:
                sel.append(f"{q(p + 'val')}")
        return sel

    def _outputs(self, merged: pa.Table) -> tuple[pa.Table, pa.Table, np.ndarray]:
        """(old output rows, new output rows, whether each group's output is unchanged), in
        one DuckDB query."""
        old, new = self._output_exprs("old_"), self._output_exprs("")
        n = len(new)
        same = " AND ".join(f"o{j} IS NOT DISTINCT FROM n{j}" for j in range(n)) or "TRUE"
        sql = (f"SELECT *, {same} AS __same FROM (SELECT {', '.join(f'{e} AS o{j}' for j, e in enumerate(old))}, "
               f"{', '.join(f'{e} AS n{j}' for j, e in enumerate(new))} FROM m)")
        out = duck.query(sql, {"m": merged})

        def part(prefix: str) -> pa.Table:
            return pa.Table.from_arrays([out.column(f"{prefix}{j}").cast(self.schema.field(j).type) for j in range(n)],
                                        schema=self.schema)
        return part("o"), part("n"), out.column("__same").to_numpy(zero_copy_only=False).astype(bool)


def _rename(t: pa.RecordBatch | pa.Table, names: list[str]) -> pa.Table:
    if isinstance(t, pa.RecordBatch):
        t = pa.Table.from_batches([t])
    return t.rename_columns(names)
