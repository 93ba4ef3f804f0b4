"""ALTER TABLE t ALTER WATERMARK FOR col AS expr [WITH TTL]: a table's watermark expression
replaced while it runs.

The table's data, its downstream jobs and their state are kept; the watermark tracker
computes the new expression from the next rows on and never moves back (a watermark only
advances), as in RisingWave. The column stays the same, the expression keeps its type, and
whether the watermark cleans state (WITH TTL) cannot be toggled this way.
"""
from __future__ import annotations

import sqlglot

from rw_cli.errors import BindError, CatalogError
from rw_cli.meta.catalog import TABLE
from rw_cli.result import Result


def handle(session, spec: dict) -> Result:
    from rw_cli.handler.access import find_relation
    from rw_cli.sql.stored_exprs import check_watermark_type, watermark_expr

    rel = find_relation(session.catalog, spec["table"], TABLE)
    column = spec["column"]
    if not rel.watermark or rel.watermark[0] != column:
        raise CatalogError(f'no watermark defined on column "{column}" of table "{spec["table"]}"')
    had_ttl = len(rel.watermark) > 2 and bool(rel.watermark[2])
    if had_ttl != spec["ttl"]:
        raise BindError("ALTER WATERMARK does not support toggling WITH TTL",
                        hint="the watermark keeps whether it cleans state; recreate the table to change that")
    try:
        sqlglot.parse_one(spec["expr"], read="postgres")
        text = spec["expr"]  # kept as written, as CREATE TABLE keeps it
    except sqlglot.errors.ParseError:
        raise BindError(f'syntax error in the watermark expression "{spec["expr"]}"') from None
    new = [column, text, *rel.watermark[2:]]
    old = rel.watermark
    rel.watermark = new
    try:
        compiled = watermark_expr(rel)
        check_watermark_type(rel, *compiled)
    except BaseException:
        rel.watermark = old
        raise
    tracker = getattr(session.runtime, "watermark", lambda _id: None)(rel.id)
    if tracker is not None:
        tracker.expr, tracker.expr_type = compiled
    session.barrier()  # the catalog is durable when the statement returns
    return Result("ALTER_TABLE")
