"""GAP_FILL(table, ts, interval [, LOCF(col) | INTERPOLATE(col) | KEEPNULL(col) ...]
[, PARTITION_BY(col, ...)]) in a materialized view: the table's rows, and between two
consecutive rows of a partition (by ts) a row every `interval` after the earlier one, up to
the later one. A filled row has the partition's columns and its ts; its other columns are
NULL (KEEPNULL, the default), the last row's value (LOCF) or the straight line between the
rows around it (INTERPOLATE).

The planner reads the call as its table (so the query binds against the table's columns),
marked with the gap fill's arguments; the plan is a StreamPartitionRecompute per partition
(`StreamGapFill`). With EMIT ON WINDOW CLOSE only the rows the table's watermark has passed
are filled between (RisingWave's EOWC gap fill): a gap is emitted once its closing row is.
"""
from __future__ import annotations

from sqlglot import exp

from rw_cli.errors import BindError
from rw_cli.meta.catalog import RelationCatalog
from rw_cli.stream.plan import PlanNode, StreamPartitionRecompute

GAP_FILL = "gap_fill"  # the marked table's meta key
_STRATEGIES = ("locf", "interpolate", "keepnull")
_ARGS = ("partitioning_columns", "value_columns", "origin", "ignore_nulls")  # sqlglot's slots, in order


def gap_fill_sources(tree: exp.Expression) -> exp.Expression:
    """`FROM GAP_FILL(t, ...)` as `FROM t`, marked with the gap fill's arguments (a copy of
    `tree`, or `tree` itself when it has none)."""
    if tree.find(exp.GapFill) is None:
        return tree

    def rewrite(node: exp.Expression) -> exp.Expression:
        if not (isinstance(node, exp.Table) and isinstance(node.this, exp.GapFill)):
            return node
        call = node.this
        table = call.this
        if not isinstance(table, exp.Table):
            raise BindError("GAP_FILL needs a table as its first argument")
        out = table.copy()
        if node.args.get("alias") is not None:
            out.set("alias", node.args["alias"].copy())
        out.meta[GAP_FILL] = _spec(call)
        return out
    return tree.transform(rewrite)


def _spec(call: exp.GapFill) -> dict:
    ts = call.args.get("ts_column")
    width = call.args.get("bucket_width")
    if not isinstance(ts, exp.Column) or width is None:
        raise BindError("GAP_FILL(table, time column, interval, ...)")
    strategies: dict[str, str] = {}
    partition: list[str] = []
    for key in _ARGS:
        arg = call.args.get(key)
        if arg is None:
            continue
        name = arg.name.lower() if isinstance(arg, exp.Anonymous) else ""
        cols = [c.name for c in arg.expressions] if isinstance(arg, exp.Anonymous) else []
        if name == "partition_by" and cols:
            partition = cols
        elif name in _STRATEGIES and len(cols) == 1:
            strategies[cols[0]] = name
        else:
            raise BindError(f"GAP_FILL: unknown argument {arg.sql(dialect='postgres')}",
                            hint="LOCF(col), INTERPOLATE(col), KEEPNULL(col) or PARTITION_BY(col, ...)")
    return {"ts": ts.name, "width": width.sql(dialect="duckdb"), "strategies": strategies, "partition": partition}


def gap_fill_node(scan: PlanNode, rel: RelationCatalog, spec: dict, eowc: bool) -> StreamPartitionRecompute:
    """The gap fill over `scan` (all of `rel`'s columns)."""
    names = [c.name for c in rel.columns]
    for n in [spec["ts"], *spec["partition"], *spec["strategies"]]:
        if n not in names:
            raise BindError(f'column "{n}" does not exist')
    t = names.index(spec["ts"])
    if not rel.columns[t].type.name.startswith("timestamp"):
        raise BindError(f'GAP_FILL needs a timestamp column, not {rel.columns[t].type.name} "{spec["ts"]}"')
    parts = [names.index(p) for p in spec["partition"]]
    where = f"WHERE _{t} <= {{now}}" if eowc else ""
    sql = _sql(len(names), t, parts, {names.index(c): s for c, s in spec["strategies"].items()},
               spec["width"], where, [c.type.duckdb() for c in rel.columns])
    if eowc and not rel.watermark:
        raise BindError(f'EMIT ON WINDOW CLOSE needs a watermark on "{rel.name}"')
    detail = f"time_col: {spec['ts']}, interval: {spec['width']}"
    return StreamPartitionRecompute(list(scan.types), [*parts, t], [scan], name="StreamGapFill",
                                    partition_keys=parts, sql=sql, detail=detail, temporal=eowc,
                                    watermark_of=rel.id if eowc else None)


def _sql(width: int, t: int, parts: list[int], strategies: dict[int, str], step: str, where: str,
         types: list[str]) -> str:
    """DuckDB over `in0` (`_0.._n`): the rows and the filled ones, each column filled as asked
    (one statement without WITH: the executor puts its inputs in a WITH of its own)."""
    over = f"PARTITION BY {', '.join(f'_{p}' for p in parts)} " if parts else ""
    keys = "".join(f"_{p}, " for p in parts)
    fill_cols = [f"_{i}" if i == t or i in parts else f"NULL::{types[i]} AS _{i}" for i in range(width)]
    cols = [_column(i, t, strategies.get(i), over, types[i]) for i in range(width)]
    nxt = f"SELECT *, lead(_{t}) OVER ({over}ORDER BY _{t}) AS __next FROM in0 {where}"
    ranges = f"SELECT {keys}range(_{t} + {step}, __next, {step}) AS __range FROM ({nxt}) WHERE __next IS NOT NULL"
    fills = f"SELECT {keys}unnest(__range) AS _{t} FROM ({ranges})"
    rows = (f"SELECT {', '.join(f'_{i}' for i in range(width))}, true AS __real FROM in0 {where} UNION ALL "
            f"SELECT {', '.join(fill_cols)}, false FROM ({fills})")
    return f"SELECT {', '.join(f'{c} AS _{i}' for i, c in enumerate(cols))} FROM ({rows})"


def _column(i: int, t: int, strategy: str | None, over: str, duck_type: str) -> str:
    c = f"_{i}"
    if strategy == "locf":
        return (f"CASE WHEN __real THEN {c} ELSE last_value({c} IGNORE NULLS) OVER ({over}ORDER BY _{t} "
                "ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) END")
    if strategy == "interpolate":
        before = f"({over}ORDER BY _{t} ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)"
        after = f"({over}ORDER BY _{t} ROWS BETWEEN 1 FOLLOWING AND UNBOUNDED FOLLOWING)"
        at = f"CASE WHEN {c} IS NOT NULL THEN epoch(_{t}) END"
        pv, pt = f"last_value({c} IGNORE NULLS) OVER {before}", f"last_value({at} IGNORE NULLS) OVER {before}"
        nv, nt = f"first_value({c} IGNORE NULLS) OVER {after}", f"first_value({at} IGNORE NULLS) OVER {after}"
        line = f"{pv} + ({nv} - {pv}) * (epoch(_{t}) - {pt}) / ({nt} - {pt})"
        return f"CASE WHEN __real THEN {c} ELSE CAST({line} AS {duck_type}) END"
    return c
