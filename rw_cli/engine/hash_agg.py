"""HashAggExecutor (and simple agg when there is no group key), with retractions.

Chunks of an epoch are buffered; on the barrier the epoch's changes are aggregated per group
in one DuckDB query (each row weighted +1 or -1), merged with the groups' previous state
(one batched lookup in the state table) and the changed groups are emitted as U-/U+ pairs,
inserts or deletes, as RisingWave's agg executors do at each barrier.

Retractable min/max keep the multiset of input values per group in a "materialized input"
state table (group keys, value -> count): deleting the current extreme is answered from it.
"""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rw_cli.common import numeric
from rw_cli.common.types import DataType
from rw_cli.engine.agg_call import COUNT_STATES, SPECIAL_COUNTS, AggCall, accumulator_type, is_float_sum, state_types
from rw_cli.engine import duck
from rw_cli.engine.agg_delta import AggDelta
from rw_cli.engine.chunk import (DELETE, INSERT, UPDATE_DELETE, UPDATE_INSERT, StreamChunk, cast_to, concat_chunks,
                                 to_schema, values_equal)
from rw_cli.engine.executor import Executor
from rw_cli.common.epoch import EpochPair

# reading one group's key range of a min/max's materialized input costs about as much as
# scanning this many rows: below that many rows per group to recompute, ranges beat a scan
PREFIX_SCAN_ROWS = 4000
# rows a min/max's recompute reads at the edge of a group's range in each source (an SST,
# a buffer batch): the extreme is the edge-most live one, unless the newest writes deleted
# them all (then wider edges, then the group whole)
EDGE_ROWS = (16, 1024)


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
        for t in [result_table, *minput_tables.values()]:
            if hasattr(t, "enable_cache"):
                t.enable_cache()  # the groups' state stays in memory (bounded), as RisingWave's agg cache
        self.buffer: list[StreamChunk] = []
        self.input_schema = pa.schema([pa.field(f"_{i}", t.arrow()) for i, t in enumerate(input_types)])
        self.state_cols: list[list[str]] = []
        for i, c in enumerate(calls):
            self.state_cols.append([f"a{i}_{n}" for n, _ in state_types(c)])
        self.initialized = bool(group_keys)
        self.agg_delta = AggDelta(self.input_schema, group_keys, calls)
        self.deltas: list[pa.Table] = []  # deltas of this epoch's rows combined elsewhere

    def combiner(self, dist_key: list[int] | None) -> AggDelta | None:
        """How a producer of this agg's input may send it deltas instead of rows (`on_delta`),
        when rows routed by `dist_key` reach it: when its epoch needs nothing of the rows
        but their delta (Arrow's path, no materialized input) and a delta's group columns
        route it where its rows would have gone."""
        minput = any(c.needs_minput and i in self.minput_tables for i, c in enumerate(self.calls))
        if not self._arrow_ok or minput or dist_key is None or list(dist_key) != list(self.group_keys):
            return None
        return self.agg_delta

    def catch_up(self, since: int, vnodes: tuple[int, int] | None) -> bool:
        """Catch up with the epochs after `since` that another copy of this actor ran (on
        Spark, in another Python worker): between epochs its state is its tables' caches
        alone, which read what was written since (`StateTable.refresh_cache`). False when
        that cannot be told: the actor is then rebuilt."""
        if self.buffer or self.deltas:
            return False
        tables = [self.result_table, *self.minput_tables.values()]
        return all(hasattr(t, "refresh_cache") and t.refresh_cache(since, vnodes) for t in tables)

    def fill_caches(self, vnodes: tuple[int, int] | None) -> None:
        """An actor built where its state is stored already (on Spark, a copy in another
        worker): its tables' caches read it whole when it is small (`fill_cache`), so a group
        it has not seen is new without a store read."""
        for t in [self.result_table, *self.minput_tables.values()]:
            if hasattr(t, "fill_cache"):
                t.fill_cache(vnodes)

    # -- messages -------------------------------------------------------------------------
    def on_chunk(self, chunk: StreamChunk, side: int = 0) -> list[StreamChunk]:
        if len(chunk):
            self.buffer.append(chunk)
        return []

    def on_delta(self, delta: pa.Table) -> None:
        """A delta of some of this epoch's rows (`combiner`), in place of the rows."""
        if delta.num_rows:
            self.deltas.append(delta)

    def on_barrier(self, epoch: EpochPair) -> list[StreamChunk]:
        chunks, self.buffer = self.buffer, []
        deltas, self.deltas = self.deltas, []
        out: list[StreamChunk] = []
        if deltas:
            if chunks:
                deltas.append(self.agg_delta.of_chunks(chunks))
            out = self._apply_delta(self.agg_delta.combine(deltas), None, [])
        elif chunks or not self.initialized:
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
        minput = [i for i, call in enumerate(self.calls) if call.needs_minput and i in self.minput_tables]
        if data.num_rows == 0:
            if nk:
                return []
            delta = self._empty_delta()
        elif self._arrow_ok:
            return self._apply_arrow(data, minput)
        elif not minput and self._fusable:
            return self._apply_fused(data)
        else:
            delta = self._delta(data)
        old, found = self.result_table.get_rows(delta.slice(0, delta.num_rows).select(list(range(nk))))
        old = _rename(old, self._state_names())
        if minput:
            merged = self._merge(delta, old, found)
            for i in minput:
                merged = self._update_minput(i, self.calls[i], data, merged)
            outputs = self._outputs(merged)
        else:  # the new state and the old and new outputs in one query
            merged = self._merge(delta, old, found, with_outputs=True)
            outputs = self._split_outputs(merged)
        new_state = merged.select(self._state_names())
        alive = merged.column("_new_rc").to_numpy(zero_copy_only=False) > 0
        old_alive = found & (np.nan_to_num(merged.column("_old_rc").to_numpy(zero_copy_only=False).astype(float)) > 0)
        if nk == 0:
            alive = np.ones(merged.num_rows, dtype=bool)
            old_alive = found
        self._write_state(new_state, alive, nk == 0)
        return self._emit(outputs, old_alive, alive)

    @property
    def _fusable(self) -> bool:
        """Whether Arrow finds the same groups as DuckDB (no float, interval or nested keys),
        so that the epoch's groups can be looked up before the one query that does it all."""
        ok = getattr(self, "_fusable_cached", None)
        if ok is None:
            def plain(t: pa.DataType) -> bool:
                return (pa.types.is_integer(t) or pa.types.is_string(t) or pa.types.is_large_string(t)
                        or pa.types.is_timestamp(t) or pa.types.is_date(t) or pa.types.is_boolean(t)
                        or pa.types.is_decimal(t) or pa.types.is_time(t))
            ok = bool(self.group_keys) and all(plain(self.input_types[k].arrow()) for k in self.group_keys)
            self._fusable_cached = ok
        return ok

    @property
    def _arrow_ok(self) -> bool:
        """Whether Arrow computes the epoch exactly as the DuckDB query would: integer counts
        and sums (a sum of bigints in numeric), min/max of integers, decimals and times —
        never floats, whose summation order and NaNs DuckDB treats its own way. avg's division
        stays in DuckDB (see `_avg_outputs`)."""
        ok = getattr(self, "_arrow_ok_cached", None)
        if ok is None:
            ok = self._fusable
            for c in self.calls:
                t = c.arg_type.arrow() if c.arg_type is not None else None
                if c.kind in ("count_star", "count"):
                    continue
                if c.kind in ("sum", "avg"):
                    acc = state_types(c)[0][1].arrow()
                    ok = ok and pa.types.is_integer(t) and (pa.types.is_integer(acc) or pa.types.is_decimal(acc))
                else:
                    ok = ok and (pa.types.is_integer(t) or pa.types.is_decimal(t) or pa.types.is_timestamp(t)
                                 or pa.types.is_date(t))
            self._arrow_ok_cached = ok
        return ok

    def _apply_arrow(self, data: pa.Table, minput: list[int]) -> list[StreamChunk]:
        """The epoch without DuckDB: the delta per group by Arrow's hash aggregation, the
        groups' state read, merged and turned into old and new outputs with Arrow kernels.
        Retractable min/max (`minput`) maintain their materialized input here too; only a
        group whose extreme was deleted reads it back (`_update_minput`)."""
        return self._apply_delta(self.agg_delta.of_rows(data, minput), data, minput)

    def _apply_delta(self, g: pa.Table, data: pa.Table | None, minput: list[int]) -> list[StreamChunk]:
        """The epoch from its delta per group (`AggDelta`); `data`, the epoch's rows, only
        where a retractable min/max maintains its materialized input (`minput`)."""
        names = self.agg_delta.key_names
        key_cols = [cast_to(g.column(n), self.result_table.schema.field(j).type) for j, n in enumerate(names)]
        keys = self.result_table.pk_keys(key_cols)
        old, found = self.result_table.get_rows(key_cols, keys)
        state = self._state_names()
        old = _rename(old, state)

        def zero(x):
            return pc.fill_null(x, 0)
        d_rc = g.column("__s_sum")
        old_rc = pc.if_else(pa.array(found), old.column("_rc"), pa.scalar(None, pa.int64()))
        new_rc = pc.add_checked(zero(old_rc), d_rc)
        new_cols = list(key_cols) + [new_rc]
        for i, c in enumerate(self.calls):
            p = f"a{i}_"
            if c.kind == "count_star":
                new_cols.append(pc.add_checked(zero(old.column(p + "cnt")), d_rc))
                continue
            d_nn = g.column(f"__nn{i}_sum")
            if c.kind == "count":
                new_cols.append(pc.add_checked(zero(old.column(p + "cnt")), d_nn))
                continue
            nn = pc.add_checked(zero(old.column(p + "nn")), d_nn)
            live = pc.greater(nn, 0)
            if c.kind in ("sum", "avg"):
                acc = state_types(c)[0][1].arrow()
                total = _add(_add(zero(old.column(p + "sum").cast(acc)), zero(g.column(f"__p{i}_sum"))),
                             zero(g.column(f"__m{i}_sum")), negate=True)
                new_cols += [pc.if_else(live, total.cast(acc), pa.scalar(None, acc)), nn]
            else:
                fn = pc.min_element_wise if c.kind == "min" else pc.max_element_wise
                t = old.column(p + "val").type
                val = fn(old.column(p + "val"), g.column(f"__v{i}_{c.kind}").cast(t), skip_nulls=True)
                new_cols += [pc.if_else(live, val, pa.scalar(None, t)), nn]
        new = pa.Table.from_arrays(new_cols, names=state)
        for i in minput:
            nn = new.column(f"a{i}_nn")
            lost = pc.and_(pc.greater(g.column(f"__d{i}_sum"), 0), pc.greater(nn, 0))
            new = self._update_minput(i, self.calls[i], data, new.append_column(f"a{i}_recompute", lost))
            new = new.drop_columns([f"a{i}_recompute"])
        alive = new_rc.to_numpy(zero_copy_only=False) > 0
        old_alive = np.nan_to_num(old_rc.to_numpy(zero_copy_only=False).astype(float)) > 0
        self._write_state(new, alive, False, keys)
        old_out, new_out = self._arrow_outputs([old, new], key_cols)
        same = np.ones(len(alive), dtype=bool)
        for a, b in zip(old_out.columns, new_out.columns):
            same &= values_equal(a, b)
        return self._emit((old_out, new_out, same), old_alive, alive)

    def _arrow_outputs(self, states: list[pa.Table], key_cols: list) -> list[pa.Table]:
        """Each group's output row from its state columns, for each of `states` (Arrow; the
        averages of all of them by one DuckDB query, as `_output_exprs` computes them)."""
        nk = len(self.group_keys)
        outs, avgs = [], []
        for state in states:
            cols = [cast_to(k, self.schema.field(j).type) for j, k in enumerate(key_cols)]
            for i, c in enumerate(self.calls):
                p = f"a{i}_"
                rt = self.schema.field(nk + i).type
                if c.kind in ("count", "count_star"):
                    cols.append(pc.fill_null(state.column(p + "cnt"), 0).cast(rt))
                elif c.kind == "sum":
                    live = pc.fill_null(pc.greater(state.column(p + "nn"), 0), False)
                    total = state.column(p + "sum")
                    if numeric.is_numeric_arrow(rt) and not numeric.is_numeric_arrow(total.type):
                        cols.append(numeric.from_int128(total, pc.invert(live)))
                    else:
                        cols.append(pc.if_else(live, total.cast(rt), pa.scalar(None, rt)))
                elif c.kind == "avg":
                    avgs.append((len(outs), i))
                    cols.append(None)
                else:
                    cols.append(state.column(p + "val").cast(rt))
            outs.append(cols)
        avgs = [(s, i) for s, i in avgs if not self._exact_avg(outs, states, s, i)]
        if avgs:
            arrays, names, exprs = [], [], []
            for j, (s, i) in enumerate(avgs):
                arrays += [states[s].column(f"a{i}_sum"), states[s].column(f"a{i}_nn")]
                names += [f"x{j}_sum", f"x{j}_nn"]
                rt = self.calls[i].return_type.duckdb()
                quotient = f"pg_interval_div(x{j}_sum, CAST(x{j}_nn AS DOUBLE))" if rt == "INTERVAL" \
                    else f"CAST(x{j}_sum / x{j}_nn AS {rt})"  # an interval's as PostgreSQL divides it
                exprs.append(f"CASE WHEN x{j}_nn > 0 THEN {quotient} END")
            vals = duck.query(f"SELECT {', '.join(exprs)} FROM s", {"s": pa.Table.from_arrays(arrays, names=names)})
            for j, (s, i) in enumerate(avgs):
                outs[s][nk + i] = vals.column(j).cast(self.schema.field(nk + i).type)
        return [pa.Table.from_arrays(cols, schema=self.schema) for cols in outs]

    def _exact_avg(self, outs: list, states: list[pa.Table], s: int, i: int) -> bool:
        """avg of integers: the sum divided by the count as RisingWave's numeric divides (the
        batch avg's rw_num_avg_int); False for the other avgs, left to DuckDB."""
        out_t = self.schema.field(len(self.group_keys) + i).type
        sums, nns = states[s].column(f"a{i}_sum"), states[s].column(f"a{i}_nn")
        if not numeric.is_numeric_arrow(out_t) or not pa.types.is_decimal(sums.type):
            return False
        outs[s][len(self.group_keys) + i] = numeric.avg_int_arrays(sums, nns)  # (NULL for a count of 0)
        return True

    def _apply_fused(self, data: pa.Table) -> list[StreamChunk]:
        """The epoch in one DuckDB query: the groups the epoch touches are found by Arrow and
        their state read first; the query aggregates the delta, joins the old state, and
        computes the new state and the old and new outputs."""
        nk = len(self.group_keys)
        names = [f"_{k}" for k in self.group_keys]
        groups = data.select(names).group_by(names, use_threads=False).aggregate([]).select(names)
        key_cols = [groups.column(j).cast(self.result_table.schema.field(j).type) for j in range(nk)]
        old, found = self.result_table.get_rows(key_cols)
        state = self._state_names()
        old = _rename(old, state)
        o = pa.Table.from_arrays(key_cols + [old.column(n) for n in state[nk:]] + [pa.array(found)],
                                 names=[f"_g{j}" for j in range(nk)] + [f"o_{n}" for n in state[nk:]] + ["_found"])
        on = " AND ".join(f"d._{j} IS NOT DISTINCT FROM o._g{j}" for j in range(nk))
        ocols = ", ".join(f"o.o_{n}" for n in state[nk:])
        m = (f"SELECT d.*, {ocols}, COALESCE(o._found, FALSE) AS _found "
             f"FROM ({self._delta_sql()}) AS d LEFT JOIN o ON {on}")
        sql = self._outputs_sql(self._merge_sql(state[nk:], f"({m})"), keep=True)
        merged = duck.query(sql, {"buf": data, "o": o})
        alive = merged.column("_new_rc").to_numpy(zero_copy_only=False) > 0
        old_alive = np.nan_to_num(merged.column("_old_rc").to_numpy(zero_copy_only=False).astype(float)) > 0
        self._write_state(merged.select(state), alive, False)
        return self._emit(self._split_outputs(merged), old_alive, alive)

    def _state_names(self) -> list[str]:
        names = [f"_{i}" for i in range(len(self.group_keys))] + ["_rc"]
        for cols in self.state_cols:
            names += cols
        return names

    def _delta(self, data: pa.Table) -> pa.Table:
        keys = [f"_{k}" for k in self.group_keys]
        delta = duck.query(self._delta_sql(), {"buf": data})
        key_types = [self.input_types[k].arrow() for k in self.group_keys]
        cols = [delta.column(j).cast(key_types[j]) for j in range(len(keys))]
        return pa.Table.from_arrays(cols + delta.columns[len(keys):], names=delta.column_names)

    def _delta_sql(self) -> str:
        """The epoch's change per group, over `buf` (the rows with their `_sign`)."""
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
                if acc.name == "numeric":  # its parts summed natively (rw_cli.sql.numeric_sql)
                    sel.append(f"rw_num_sum_parts_or_null(SUM({a}.n_int * _sign), SUM({a}.n_frac * _sign), "
                               f"MAX(rw_num_scale_of({a})), MAX({a}.n_int), MIN({a}.n_int)) AS d{i}_sum")
                elif acc.name == "rw_int256":  # BIGNUM multiplies in DOUBLE: negate instead
                    sel.append(f"SUM(CASE WHEN _sign < 0 THEN -{a} ELSE {a} END) AS d{i}_sum")
                elif acc.name == "interval":  # months, days and microseconds summed apart
                    sel.append(f"pg_sum_interval({a} * _sign) AS d{i}_sum")
                elif is_float_sum(c):  # the finite values summed, the specials counted
                    sel.append(f"SUM(CASE WHEN isfinite({a}) THEN CAST({a} AS {acc.duckdb()}) * _sign END) AS d{i}_sum")
                    for n, test in zip(SPECIAL_COUNTS, (f"{a} > 0 AND isinf({a})", f"{a} < 0 AND isinf({a})",
                                                        f"isnan({a})")):
                        sel.append(f"CAST(SUM(CASE WHEN {test} THEN _sign ELSE 0 END) AS BIGINT) AS d{i}_{n}")
                else:
                    sel.append(f"SUM(CAST({a} AS {acc.duckdb()}) * _sign) AS d{i}_sum")
                sel.append(f"CAST(SUM(CASE WHEN {a} IS NOT NULL THEN _sign ELSE 0 END) AS BIGINT) AS d{i}_nn")
            else:
                sel.append(f"{_extreme(c, f'CASE WHEN _sign > 0 THEN {a} END')} AS d{i}_val")
                sel.append(f"CAST(SUM(CASE WHEN {a} IS NOT NULL THEN _sign ELSE 0 END) AS BIGINT) AS d{i}_nn")
                sel.append(f"COUNT(CASE WHEN _sign < 0 AND {a} IS NOT NULL THEN 1 END) AS d{i}_del")
        group = f" GROUP BY {', '.join(keys)}" if keys else ""
        return f"SELECT {', '.join(sel)} FROM buf{group}"

    def _empty_delta(self) -> pa.Table:
        """A zero change for the single group of a simple agg (so its first row is emitted)."""
        cols, names = [pa.array([0], pa.int64())], ["d_rc"]
        for i, c in enumerate(self.calls):
            for n, t in state_types(c):
                names.append(f"d{i}_{n}")
                counted = n in COUNT_STATES
                cols.append(pa.array([0 if counted else None], pa.int64() if counted else t.arrow()))
            if c.kind in ("min", "max"):
                names.append(f"d{i}_del")
                cols.append(pa.array([0], pa.int64()))
        return pa.Table.from_arrays(cols, names=names)

    def _merge(self, delta: pa.Table, old: pa.Table, found: np.ndarray, with_outputs: bool = False) -> pa.Table:
        """New state per group = old state (zero where absent) + delta, in one DuckDB query
        (with_outputs: also each group's old and new output row, see `_outputs`)."""
        nk = len(self.group_keys)
        both = delta
        for name in old.column_names[nk:]:
            both = both.append_column(f"o_{name}", old.column(name))
        both = both.append_column("_found", pa.array(found))
        sql = self._merge_sql(old.column_names[nk:], "m")
        if with_outputs:
            sql = self._outputs_sql(sql, keep=True)
        return duck.query(sql, {"m": both})

    def _merge_sql(self, old_names: list[str], source: str) -> str:
        """The new state per group, over `source`: the delta's columns, the old state's as
        `o_<name>` (NULL where absent) and `_found`."""
        nk = len(self.group_keys)
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
                if state_types(c)[0][1].name == "numeric":
                    total = (f"rw_num_add_or_null(COALESCE(o_{p}sum, rw_num_const('0')), "
                             f"COALESCE(d{i}_sum, rw_num_const('0')))")
                else:
                    zero = "INTERVAL 0 SECOND" if acc == "INTERVAL" else "0"  # the sum of no values
                    total = f"CAST(COALESCE(CAST(o_{p}sum AS {acc}), {zero}) + COALESCE(d{i}_sum, {zero}) AS {acc})"
                sel.append(f"CASE WHEN COALESCE(o_{p}nn, 0) + d{i}_nn > 0 THEN {total} END AS {p}sum")
                sel.append(f"COALESCE(o_{p}nn, 0) + d{i}_nn AS {p}nn")
                if is_float_sum(c):
                    sel += [f"COALESCE(o_{p}{n}, 0) + d{i}_{n} AS {p}{n}" for n in SPECIAL_COUNTS]
            else:
                sel.append(f"CASE WHEN COALESCE(o_{p}nn, 0) + d{i}_nn > 0 THEN {_pick(c, f'o_{p}val', f'd{i}_val')} "
                           f"END AS {p}val")
                sel.append(f"COALESCE(o_{p}nn, 0) + d{i}_nn AS {p}nn")
                # only a group that lost a value and still has some needs its extreme again
                sel.append(f"d{i}_del > 0 AND COALESCE(o_{p}nn, 0) + d{i}_nn > 0 AS {p}recompute")
        sel += [f"o_{name} AS {q('old_' + name)}" for name in old_names]
        return f"SELECT {', '.join(sel)} FROM {source}"

    def _update_minput(self, i: int, call: AggCall, data: pa.Table, merged: pa.Table) -> pa.Table:
        """Maintain (group, value) -> count and recompute extremes whose values were deleted."""
        nk = len(self.group_keys)
        table = self.minput_tables[i]
        counts = self._minput_deltas(call, data)
        keys, new_cnt = pa.array([], pa.binary()), np.zeros(0, dtype=np.int64)
        if counts.num_rows:
            key_cols = [counts.column(j).cast(table.schema.field(j).type) for j in range(nk + 1)]
            keys = table.pk_keys(key_cols)  # for the read and the write both
            old, found = table.get_rows(key_cols, keys)
            old_cnt = np.where(found, old.column(nk + 1).to_numpy(zero_copy_only=False), 0)
            new_cnt = old_cnt + counts.column("d").to_numpy()
            rows = pa.Table.from_arrays(key_cols + [pa.array(new_cnt, pa.int64())], names=table.schema.names)
            ops = np.where(new_cnt > 0, INSERT, DELETE).astype(np.int8)  # a count of 0: the value is gone
            table.write_chunk(to_schema(rows, table.schema), ops, keys)
        recompute = merged.column(f"a{i}_recompute").to_numpy(zero_copy_only=False).astype(bool)
        if recompute.any():
            # GREATEST/LEAST(old extreme, the epoch's inserted extreme) is still the extreme if
            # that value is still in the input (nothing beyond it can be): only groups whose
            # candidate was deleted need their materialized input read. Whether it is, the
            # epoch's own counts say: a candidate they do not hold is the old extreme,
            # untouched, so still there
            idx = np.flatnonzero(recompute)
            take = pa.array(idx)
            cand = merged.column(f"a{i}_val").take(take)
            cand_keys = table.pk_keys([merged.column(f"_{j}").take(take).cast(table.schema.field(j).type)
                                       for j in range(nk)] + [cand.cast(table.schema.field(nk).type)])
            pos = pc.index_in(cand_keys, value_set=keys)
            touched = pos.is_valid().to_numpy(zero_copy_only=False)
            there = ~touched
            there[touched] = new_cnt[pos.drop_null().to_numpy()] > 0
            recompute[idx[there & cand.is_valid().to_numpy(zero_copy_only=False)]] = False
        if not recompute.any():
            return merged
        # Recompute the extreme of the touched groups from the materialized input: the rows of
        # each group (a key range of the table), or the whole table when many groups need it.
        groups = merged.select([f"_{j}" for j in range(nk)]).append_column("_pos", pa.array(np.arange(merged.num_rows)))
        groups = groups.filter(pa.array(recompute))
        if nk and (groups.num_rows <= 64 or groups.num_rows * PREFIX_SCAN_ROWS <= table.estimated_rows()):
            # one key range per group, all read in one pass: the cost follows the groups, not
            # the table; where the input's key order is the aggregate's, only the range's edge
            all_rows = self._group_rows(table, call, [groups.column(j).combine_chunks() for j in range(nk)])
        else:
            all_rows = table.scan()
        all_rows = all_rows.rename_columns([f"_{j}" for j in range(nk)] + ["v", "c"])
        on = " AND ".join(f"g._{j} IS NOT DISTINCT FROM s._{j}" for j in range(nk)) or "TRUE"
        res = duck.query(
            f"SELECT g._pos AS pos, {_extreme(call, 's.v')} AS v FROM g LEFT JOIN s ON {on} AND s.c > 0 GROUP BY g._pos",
            {"g": groups, "s": all_rows})
        idx = merged.column_names.index(f"a{i}_val")
        where = np.full(merged.num_rows, -1, dtype=np.int64)
        where[res.column("pos").to_numpy()] = np.arange(res.num_rows)
        recomputed = res.column("v").combine_chunks().cast(merged.schema.field(idx).type)
        recomputed = recomputed.take(pa.array(where, pa.int64(), mask=where < 0))
        vals = _if_else(pa.array(where >= 0), recomputed, merged.column(idx).combine_chunks())
        return merged.set_column(idx, f"a{i}_val", vals)

    @staticmethod
    def _group_rows(table, call: AggCall, prefixes: list[pa.Array]) -> pa.Table:
        """The materialized input's rows of the given groups, enough to find each one's
        extreme: for a value type whose key order is the one min and max use, the rows at
        the range's low (min) or high (max) end (`StateTable.scan_prefix_edges`), with the
        groups the edges left unsure of read whole; else every row of the groups."""
        t = call.arg_type.arrow() if call.arg_type is not None else None
        ordered = t is not None and (pa.types.is_integer(t) or pa.types.is_date(t) or pa.types.is_timestamp(t)
                                     or pa.types.is_time(t) or pa.types.is_string(t) or pa.types.is_large_string(t))
        if not ordered:
            return table.scan_prefixes(prefixes)
        found = []
        for n in EDGE_ROWS:  # wider edges for the groups whose edge rows were all deleted
            edges = table.scan_prefix_edges(prefixes, n, call.kind == "max")
            if edges is None:
                break
            rows, unresolved = edges
            found.append(rows)
            if not unresolved.any():
                return pa.concat_tables(found) if len(found) > 1 else rows
            mask = pa.array(unresolved)
            prefixes = [p.filter(mask) for p in prefixes]
        return pa.concat_tables([*found, table.scan_prefixes(prefixes)])

    def _minput_deltas(self, call: AggCall, data: pa.Table) -> pa.Table:
        """The epoch's change of count per (group keys, non-null value): columns `_0..`,
        the value `_<nk>`, and `d` (by Arrow when it groups as DuckDB does)."""
        nk = len(self.group_keys)
        keys = [f"_{k}" for k in self.group_keys]
        a = f"_{call.arg}"
        if self._arrow_ok:
            t = data.select(keys).append_column("__v", data.column(a)).append_column("__s", data.column("_sign"))
            t = t.filter(data.column(a).is_valid())
            g = t.group_by(keys + ["__v"], use_threads=False).aggregate([("__s", "sum")])
            cols = [g.column(k) for k in keys] + [g.column("__v"), g.column("__s_sum").cast(pa.int64())]
            return pa.Table.from_arrays(cols, names=[f"_{j}" for j in range(nk + 1)] + ["d"])
        sel = ", ".join([f"{k} AS _{j}" for j, k in enumerate(keys)] + [f"{a} AS _{nk}", "CAST(SUM(_sign) AS BIGINT) AS d"])
        grp = ", ".join(keys + [a])
        return duck.query(f"SELECT {sel} FROM buf WHERE {a} IS NOT NULL GROUP BY {grp}", {"buf": data})

    def _write_state(self, state: pa.Table, alive: np.ndarray, simple: bool, keys: pa.Array | None = None) -> None:
        if state.num_rows:
            self.result_table.write_chunk(to_schema(state, self.result_table.schema),
                                          np.where(alive, INSERT, DELETE).astype(np.int8), keys)

    def _emit(self, outputs, old_alive: np.ndarray, alive: np.ndarray) -> list[StreamChunk]:
        old_out, new_out, same = outputs
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
                total = q(p + 'sum')
                if c.return_type.name == "numeric":
                    total = f"rw_num_from_hugeint({total})" if accumulator_type(c).name == "rw_int128" else total
                else:
                    total = _with_specials(c, p, f"CAST({total} AS {rt})")
                sel.append(f"CASE WHEN {q(p + 'nn')} > 0 THEN {total} END")
            elif c.kind == "avg":
                if c.return_type.name != "numeric":
                    quotient = _with_specials(c, p, f"CAST({q(p + 'sum')} / {q(p + 'nn')} AS {rt})")
                elif accumulator_type(c).name == "rw_int128":
                    quotient = f"rw_num_avg_int_or_null({q(p + 'sum')}, {q(p + 'nn')})"
                else:
                    quotient = f"rw_num_div_or_null({q(p + 'sum')}, rw_num_from_int({q(p + 'nn')}))"
                sel.append(f"CASE WHEN {q(p + 'nn')} > 0 THEN {quotient} END")
            else:
                sel.append(f"{q(p + 'val')}")
        return sel

    def _outputs_sql(self, source: str, keep: bool = False) -> str:
        old, new = self._output_exprs("old_"), self._output_exprs("")
        n = len(new)
        same = " AND ".join(f"o{j} IS NOT DISTINCT FROM n{j}" for j in range(n)) or "TRUE"
        star = "*, " if keep else ""
        return (f"SELECT *, {same} AS __same FROM (SELECT {star}{', '.join(f'{e} AS o{j}' for j, e in enumerate(old))}, "
                f"{', '.join(f'{e} AS n{j}' for j, e in enumerate(new))} FROM ({source}))")

    def _outputs(self, merged: pa.Table) -> tuple[pa.Table, pa.Table, np.ndarray]:
        """(old output rows, new output rows, whether each group's output is unchanged), in
        one DuckDB query."""
        return self._split_outputs(duck.query(self._outputs_sql("SELECT * FROM m"), {"m": merged}))

    def _split_outputs(self, out: pa.Table) -> tuple[pa.Table, pa.Table, np.ndarray]:
        n = len(self.schema)

        def part(prefix: str) -> pa.Table:
            return pa.Table.from_arrays([out.column(f"{prefix}{j}").cast(self.schema.field(j).type) for j in range(n)],
                                        schema=self.schema)
        return part("o"), part("n"), out.column("__same").to_numpy(zero_copy_only=False).astype(bool)


def _with_specials(call: AggCall, prefix: str, finite: str) -> str:
    """A float sum's (or avg's) value from its finite part and its counts of specials: NaN
    with a NaN or both infinities, else the infinity there is, else the finite value."""
    if not is_float_sum(call):
        return finite
    rt = call.return_type.duckdb()
    pinf, ninf, nan = (q(prefix + n) for n in SPECIAL_COUNTS)
    return (f"(CASE WHEN {nan} > 0 OR ({pinf} > 0 AND {ninf} > 0) THEN CAST('NaN' AS {rt}) "
            f"WHEN {pinf} > 0 THEN CAST('Infinity' AS {rt}) WHEN {ninf} > 0 THEN CAST('-Infinity' AS {rt}) "
            f"ELSE {finite} END)")


def _extreme(call: AggCall, value: str) -> str:
    """SQL of the aggregate min or max of `value`; a numeric's through its parts, whose scale
    DuckDB's min and max keep (rw_cli.sql.numeric_sql.parts)."""
    fn = "MIN" if call.kind == "min" else "MAX"
    if call.arg_type is None or call.arg_type.name != "numeric":
        return f"{fn}({value})"
    v = f"({value})"
    parts = f"CASE WHEN {v} IS NULL THEN NULL ELSE struct_pack(i := {v}.n_int, f := {v}.n_frac, s := rw_num_scale_of({v})) END"
    return f"rw_num_from_parts({fn}({parts}))"


def _pick(call: AggCall, old: str, new: str) -> str:
    """SQL of the lesser (min) or greater (max) of two values, NULL ignored; the old one on a
    tie, as itself (LEAST and GREATEST would lose a numeric's scale)."""
    if call.arg_type is None or call.arg_type.name != "numeric":
        return f"{'LEAST' if call.kind == 'min' else 'GREATEST'}({old}, {new})"
    op = "<" if call.kind == "min" else ">"
    return f"(CASE WHEN {new} IS NULL THEN {old} WHEN {old} IS NULL OR {new} {op} {old} THEN {new} ELSE {old} END)"


def _add(a, b, negate: bool = False):
    """a + b (or a - b), checked; decimals through decimal256 (Arrow widens their precision)."""
    fn = pc.subtract_checked if negate else pc.add_checked
    t = a.type
    if pa.types.is_decimal(t):
        wide = pa.decimal256(t.precision, t.scale)
        return fn(a.cast(wide), b.cast(wide)).cast(pa.decimal256(76, t.scale)).cast(t)
    return fn(a, b)


def _rename(t: pa.RecordBatch | pa.Table, names: list[str]) -> pa.Table:
    if isinstance(t, pa.RecordBatch):
        t = pa.Table.from_batches([t])
    return t.rename_columns(names)


def _if_else(mask: pa.Array, a: pa.Array, b: pa.Array) -> pa.Array:
    """pc.if_else, also for an extension type (rw_int256), which Arrow's kernels do not
    take: chosen on the storage, the result of the same extension type."""
    if isinstance(a.type, pa.BaseExtensionType):
        return pa.ExtensionArray.from_storage(a.type, pc.if_else(mask, a.storage, b.storage))
    return pc.if_else(mask, a, b)
