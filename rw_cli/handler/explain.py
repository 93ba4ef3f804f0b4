"""EXPLAIN CREATE MATERIALIZED VIEW | SINK | INDEX | TABLE: the stream plan as a tree, in
RisingWave's style (planned, never created: the name may exist already); EXPLAIN [ANALYZE]
SELECT: the batch plan (ANALYZE: run, with each operator's actual rows and time)."""
from __future__ import annotations

from sqlglot import exp

from rw_cli.errors import NotSupported
from rw_cli.handler.utility import text_result
from rw_cli.result import Result


def handle_explain(session, tree) -> Result:
    from rw_cli.handler import create_mv

    inner = tree.this
    kind = (inner.args.get("kind") or "").upper() if isinstance(inner, exp.Create) else ""
    if kind in ("VIEW", "SINK", "INDEX"):
        query = _job_query(inner, kind)
        root, _ = create_mv.plan(session, exp.Create(this=inner.this if kind != "INDEX" else inner.this.this,
                                                    kind="VIEW", expression=query))
        lines = root.explain()
        if kind == "SINK":  # the sink takes the place of the MV's materialize
            lines[0] = f"StreamSink {{ type: {_sink_type(inner)}, columns: [{', '.join(root.names)}] }}"
        return text_result("EXPLAIN", ["QUERY PLAN"], [[line] for line in lines])
    if kind == "TABLE" and isinstance(inner.this, exp.Schema) and inner.expression is None:
        return text_result("EXPLAIN", ["QUERY PLAN"], [[line] for line in _table_plan(inner.this)])
    if isinstance(inner, (exp.Select, exp.Union, exp.Except, exp.Intersect, exp.Values, exp.Subquery)):
        from rw_cli.handler.query import analyze_query, explain_query

        lines = analyze_query(session, inner) if tree.args.get("analyze") else explain_query(session, inner)
        return text_result("EXPLAIN", ["QUERY PLAN"], [[line] for line in lines])
    if tree.args.get("analyze"):  # PostgreSQL would run it: DML and DDL run only as themselves here
        raise NotSupported(f"EXPLAIN ANALYZE {type(inner).__name__.upper()}", hint="EXPLAIN ANALYZE runs queries")
    raise NotSupported(f"EXPLAIN {type(inner).__name__.upper()}")


def _job_query(create: exp.Create, kind: str) -> exp.Expression:
    """The query a CREATE MATERIALIZED VIEW, SINK or INDEX maintains (an index: its table's
    rows, ordered by the index's columns)."""
    if kind != "INDEX":
        if create.expression is None:
            raise NotSupported(f"EXPLAIN CREATE {kind} without a query")
        return create.expression
    return exp.select("*").from_(create.this.args["table"].copy())


def _sink_type(create: exp.Create) -> str:
    """A sink's `type` option (append-only unless it says upsert)."""
    props = create.args.get("properties")
    for p in props.expressions if props is not None else []:
        if isinstance(p, exp.Property) and p.name.lower() == "type":
            return p.args["value"].name
    return "append-only"


def _table_plan(schema: exp.Schema) -> list[str]:
    """A table's stream plan: DML into a materialize keyed by its primary key (or row id)."""
    names = [c.name for c in schema.expressions if isinstance(c, exp.ColumnDef)]
    pk = [c.name for c in schema.expressions if isinstance(c, exp.ColumnDef)
          and any(isinstance(k.kind, exp.PrimaryKeyColumnConstraint) for k in c.args.get("constraints") or [])]
    pk += [e.name for p in schema.expressions if isinstance(p, exp.PrimaryKey) for e in p.expressions]
    if not pk:
        names.append("_row_id")
        pk = ["_row_id"]
    cols, key = ", ".join(names), ", ".join(pk)
    lines = [f"StreamMaterialize {{ columns: [{cols}], stream_key: [{key}], pk_columns: [{key}], "
             f"pk_conflict: Overwrite }}"]
    if pk == ["_row_id"]:
        lines.append(f"└─StreamRowIdGen {{ row_id_index: {len(names) - 1} }}")
    lines.append(f"└─StreamDml {{ columns: [{cols}] }}")
    lines.append("└─StreamSource")
    return lines
