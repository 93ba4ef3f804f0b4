"""Statement handlers, one module per kind of statement; `dispatch` routes a parsed tree."""
from __future__ import annotations

from sqlglot import exp

from rw_cli.errors import NotSupported
from rw_cli.result import Result
from rw_cli.sql.dialect import Explain, Flush, Show


def dispatch(session, tree: exp.Expression, sql: str) -> Result:
    from rw_cli.handler import create_mv, create_table, dml, drop, explain, query, utility

    if isinstance(tree, Explain):
        return explain.handle_explain(session, tree)
    if isinstance(tree, Flush):
        session.flush()  # returns once the epoch is durable
        return Result("FLUSH")
    if isinstance(tree, (exp.Select, exp.Union, exp.Except, exp.Intersect, exp.Values)) or \
            (isinstance(tree, exp.Subquery)):
        return query.handle_query(session, tree)
    if isinstance(tree, (exp.Create, exp.Drop, exp.Insert, exp.Delete, exp.Update)):
        utility.check_not_in_transaction(session, type(tree).__name__.upper())
    if isinstance(tree, exp.Create):
        kind = (tree.args.get("kind") or "").upper()
        if kind in ("SOURCE", "SINK") or (kind == "TABLE" and _has_connector(tree)):
            from rw_cli.handler import create_sink, create_source

            if kind == "SINK":
                return create_sink.handle(session, tree, sql)
            if kind == "SOURCE":
                return create_source.handle_source(session, tree, sql)
            return create_source.handle_table(session, tree)
        if kind == "TABLE":
            return create_table.handle(session, tree)
        if kind == "SCHEMA":
            from rw_cli.handler import schema

            return schema.handle_create(session, tree)
        if kind == "INDEX":
            from rw_cli.handler import create_index

            return create_index.handle(session, tree, sql)
        if kind == "VIEW" and _is_materialized(tree):
            return create_mv.handle(session, tree, sql)
        if kind == "VIEW":
            from rw_cli.handler import create_view

            return create_view.handle(session, tree, sql)
        if kind == "FUNCTION":
            from rw_cli.handler import create_function

            return create_function.handle_create(session, tree)
        raise NotSupported(f"CREATE {kind}")
    if isinstance(tree, exp.Drop) and (tree.args.get("kind") or "").upper() == "FUNCTION":
        from rw_cli.handler import create_function

        return create_function.handle_drop(session, tree)
    if isinstance(tree, exp.Drop) and (tree.args.get("kind") or "").upper() == "SCHEMA":
        from rw_cli.handler import schema

        return schema.handle_drop(session, tree)
    if isinstance(tree, exp.Drop):
        return drop.handle(session, tree)
    if isinstance(tree, (exp.Insert, exp.Delete, exp.Update)):
        session.catch_up()
    if isinstance(tree, exp.Insert):
        return dml.handle_insert(session, tree)
    if isinstance(tree, exp.Delete):
        return dml.handle_delete(session, tree)
    if isinstance(tree, exp.Update):
        return dml.handle_update(session, tree)
    if isinstance(tree, exp.Set):
        return utility.handle_set(session, tree)
    if isinstance(tree, Show) and tree.this in ("JOBS", "SOURCES", "SINKS"):
        from rw_cli.handler import show_jobs

        return show_jobs.handle(session, tree.this)
    if isinstance(tree, Show):
        return utility.handle_show(session, tree)
    if isinstance(tree, exp.Describe):
        return utility.handle_describe(session, tree)
    if isinstance(tree, (exp.Transaction, exp.Commit, exp.Rollback)):
        return utility.handle_transaction(session, tree)
    raise NotSupported(f"statement {type(tree).__name__.upper()}")


def _is_materialized(tree: exp.Create) -> bool:
    props = tree.args.get("properties")
    if props is None:
        return False
    return any(isinstance(p, exp.MaterializedProperty) for p in props.expressions)


def _has_connector(tree: exp.Create) -> bool:
    from rw_cli.connector import connector_spec

    return bool(connector_spec(tree))
