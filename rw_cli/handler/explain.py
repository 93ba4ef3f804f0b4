"""EXPLAIN CREATE MATERIALIZED VIEW: the stream plan as a tree, in RisingWave's style."""
from __future__ import annotations

from sqlglot import exp

from rw_cli.errors import NotSupported
from rw_cli.handler.utility import text_result
from rw_cli.result import Result


def handle_explain(session, tree) -> Result:
    from rw_cli.handler import create_mv

    inner = tree.this
    if isinstance(inner, exp.Create) and (inner.args.get("kind") or "").upper() == "VIEW":
        root, _ = create_mv.plan(session, inner)
        lines = root.explain()
        return text_result("EXPLAIN", ["QUERY PLAN"], [[line] for line in lines])
    if isinstance(inner, (exp.Select, exp.Union, exp.Except, exp.Intersect, exp.Values, exp.Subquery)):
        from rw_cli.handler.query import explain_query

        return text_result("EXPLAIN", ["QUERY PLAN"], [[line] for line in explain_query(session, inner)])
    raise NotSupported(f"EXPLAIN {type(inner).__name__.upper()}")
