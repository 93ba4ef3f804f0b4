"""A hash agg's change per group over some of an epoch's rows, computed by Arrow.

This is the first step of the hash agg's Arrow path (`HashAggExecutor._apply_arrow`), apart
so that it can also run where the rows are produced: a Spark task aggregates its share of an
epoch's rows into one delta row per group and shuffles those instead of the rows (the
map-side combine Spark's own aggregations do before an exchange); the agg's actor combines
the deltas it receives and goes on as if it had seen the rows.

A delta table holds the group key columns first (named as the agg's input columns, `_k`),
then its partials: `__s_sum` (the rows' signs: the change of the group's row count), and per
call `__nn{i}_sum` (signs of non-null arguments), `__p{i}_sum` / `__m{i}_sum` (the sum of the
inserted / deleted arguments), `__v{i}_min|max` (the extreme of the inserted arguments) and,
for a min/max that keeps its materialized input, `__d{i}_sum` (deleted non-null arguments).
Each partial is a sum, a min or a max, so the deltas of any split of the rows combine into
the delta of all of them.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rw_cli.engine.agg_call import AggCall, state_types
from rw_cli.engine.chunk import StreamChunk, concat_chunks


@dataclass
class AggDelta:
    """How one hash agg's rows become deltas (picklable: it travels in Spark's tasks)."""
    input_schema: pa.Schema  # the agg's input columns, `_0.._n`
    group_keys: list[int]
    calls: list[AggCall]

    @property
    def key_names(self) -> list[str]:
        return [f"_{k}" for k in self.group_keys]

    def of_rows(self, data: pa.Table, minput: list[int] | tuple = ()) -> pa.Table:
        """The delta of `data` (the agg's input columns and `_sign`, +1 or -1 per row);
        `minput`: the calls whose deleted values are counted (`__d{i}_sum`). Rows that are
        all inserts (an append-only input's) need fewer columns aggregated: a partial that
        only deletes feed is empty, and a non-null count of a column without nulls is the
        row count."""
        names = self.key_names
        sign = data.column("_sign").combine_chunks()
        inserts_only = sign.null_count == 0 and (len(sign) == 0 or pc.min(sign).as_py() > 0)
        ins = None if inserts_only else pc.greater(sign, 0)
        cols = {n: data.column(n) for n in names}
        cols["__s"] = sign
        aggs = [("__s", "sum")]
        out: list[tuple[str, str | None]] = [("__s_sum", None)]  # (column, what fills it if not aggregated)
        for i, c in enumerate(self.calls):
            if c.kind == "count_star":
                continue
            a = data.column(f"_{c.arg}").combine_chunks()
            if inserts_only and a.null_count == 0:
                out.append((f"__nn{i}_sum", "__s_sum"))
            else:
                cols[f"__nn{i}"] = pc.if_else(a.is_valid(), sign, 0)
                aggs.append((f"__nn{i}", "sum"))
                out.append((f"__nn{i}_sum", None))
            if c.kind in ("sum", "avg"):
                acc = state_types(c)[0][1].arrow()
                v = a.cast(acc)
                if inserts_only:
                    cols[f"__p{i}"] = v
                    aggs.append((f"__p{i}", "sum"))
                    out += [(f"__p{i}_sum", None), (f"__m{i}_sum", "null")]
                else:
                    cols[f"__p{i}"] = pc.if_else(ins, v, pa.scalar(None, acc))
                    cols[f"__m{i}"] = pc.if_else(ins, pa.scalar(None, acc), v)
                    aggs += [(f"__p{i}", "sum"), (f"__m{i}", "sum")]
                    out += [(f"__p{i}_sum", None), (f"__m{i}_sum", None)]
            elif c.kind in ("min", "max"):
                cols[f"__v{i}"] = a if inserts_only else pc.if_else(ins, a, pa.scalar(None, a.type))
                aggs.append((f"__v{i}", c.kind))
                out.append((f"__v{i}_{c.kind}", None))
                if i in minput:  # deleted non-null values: the extreme may have gone
                    if inserts_only:
                        out.append((f"__d{i}_sum", "zero"))
                    else:
                        cols[f"__d{i}"] = pc.if_else(pc.and_(pc.invert(ins), a.is_valid()), 1, 0)
                        aggs.append((f"__d{i}", "sum"))
                        out.append((f"__d{i}_sum", None))
        g = pa.table(cols).group_by(names, use_threads=False).aggregate(aggs)
        arrays = [g.column(n) for n in names]
        for name, fill in out:
            if fill is None:
                arrays.append(g.column(name))
            elif fill == "null":  # (deletes' sum: the type of the inserts' one)
                arrays.append(pa.nulls(g.num_rows, g.column(name.replace("__m", "__p", 1)).type))
            elif fill == "zero":
                arrays.append(pa.array(np.zeros(g.num_rows, dtype=np.int64)))
            else:
                arrays.append(g.column(fill))
        return pa.Table.from_arrays(arrays, names=names + [name for name, _ in out])

    def of_chunks(self, chunks: list[StreamChunk]) -> pa.Table:
        """The delta of the rows of `chunks` (the agg's input)."""
        buf = concat_chunks(chunks, self.input_schema)
        return self.of_rows(buf.data.append_column("_sign", pa.array(buf.signs())))

    def combine(self, deltas: list[pa.Table]) -> pa.Table:
        """One delta of the rows that `deltas` were computed over (any split of them)."""
        if len(deltas) == 1:
            return deltas[0]
        names = self.key_names
        t = pa.concat_tables(deltas)
        parts = t.column_names[len(names):]
        aggs = [(p, p.rsplit("_", 1)[1]) for p in parts]  # __p0_sum: a sum of sums
        g = t.group_by(names, use_threads=False).aggregate(aggs)
        return pa.Table.from_arrays([g.column(n) for n in names] + [g.column(f"{p}_{fn}") for p, fn in aggs],
                                    names=names + parts)

    @staticmethod
    def as_chunk(delta: pa.Table) -> StreamChunk:
        """A delta as a chunk of inserts (how it travels: keys first, so that the vnode of
        its first columns is the vnode of the rows it stands for)."""
        return StreamChunk(delta, np.zeros(delta.num_rows, dtype=np.int8))
