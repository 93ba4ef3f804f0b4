"""ALTER MATERIALIZED VIEW m AS query: the view is maintained by a new query from now on, as
RisingWave's alter does. Its rows are not computed again: a row the old query put there
stays until a change of its key replaces or deletes it, and the new query's changes are
written by key (`RelationCatalog.altered`). The new query must give the view the same
columns, types, key and ORDER BY; its WITH options, column names and EMIT mode are the original ones.
"""
from __future__ import annotations

import re

from rw_cli.errors import BindError, CatalogError, NotSupported
from rw_cli.meta.catalog import MATERIALIZED_VIEW
from rw_cli.result import Result

# where a statement's query starts: after the `AS` that a query follows
_QUERY_AFTER_AS = re.compile(r"\bAS\s+(?=\(*\s*(?:SELECT|WITH|VALUES|TABLE)\b)", re.I | re.S)


def handle(session, tree, sql: str) -> Result:
    from rw_cli.handler.create_mv import dependencies, order_key, plan
    from rw_cli.sql.dialect import changelog_display, parse_statement
    from rw_cli.stream.job import replace_job

    target = tree.this
    rel = session.catalog.get(session.catalog.qualified(target.name, target.text("db")))
    if rel is None:
        raise CatalogError(f'materialized view "{target.sql()}" does not exist')
    if rel.kind != MATERIALIZED_VIEW:  # RisingWave's words
        raise BindError(f'"{target.sql()}" is not a materialized view or cannot be altered')
    if rel.refresh_interval_sec is not None:
        raise BindError("ALTER MATERIALIZED VIEW is not supported for batch refresh materialized views")
    definition = _new_definition(rel.definition, sql)
    new_tree = parse_statement(definition)
    root, upstreams = plan(session, new_tree)
    if rel.id in {u.id for u in upstreams}:
        raise BindError(f'materialized view "{rel.name}" cannot read itself')
    old = [(c.name, c.type, c.hidden) for c in rel.columns]
    new = list(zip(root.names, root.types, root.hidden))
    # (the ORDER BY leads RisingWave's storage key: another one is another key)
    if old != new or list(root.stream_key) != list(rel.pk) or order_key(new_tree.expression, root) != rel.order_key:
        raise NotSupported("incompatible altering on the target materialized view",
                           hint="the new query must give the same columns, types and key")
    if session.dirty:
        session.barrier()  # the snapshots the new operators read are what upstream has emitted
    rel.definition = changelog_display(definition)
    rel.dependencies = dependencies(session, new_tree, upstreams)
    replace_job(session, rel, root)
    return Result("ALTER_MATERIALIZED_VIEW")


def _new_definition(original: str, alter_sql: str) -> str:
    """The original CREATE with its query replaced by the ALTER's (its name, column names,
    WITH options and a leading EMIT ON WINDOW CLOSE kept; a trailing one too)."""
    head = _QUERY_AFTER_AS.search(original)
    query = _QUERY_AFTER_AS.search(alter_sql)
    if head is None or query is None:
        raise NotSupported("ALTER MATERIALIZED VIEW ... AS of this definition")
    text = alter_sql[query.end():].strip().rstrip(";").strip()
    tail = re.search(r"\bEMIT\s+ON\s+WINDOW\s+CLOSE\s*;?\s*$", original[head.end():], re.I)
    if tail and not re.search(r"\bEMIT\s+ON\s+WINDOW\s+CLOSE\s*$", text, re.I):
        text += " EMIT ON WINDOW CLOSE"
    return original[:head.end()] + text
