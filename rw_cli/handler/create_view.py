"""CREATE VIEW [IF NOT EXISTS] name [(aliases)] AS query: a named query, expanded where used.

A view has no state and no stream job; its columns are the query's output (learned by
running it on empty inputs), and it depends on every relation it reads.
"""
from __future__ import annotations

from sqlglot import exp

from rw_cli.errors import BindError
from rw_cli.meta.catalog import VIEW, ColumnCatalog, RelationCatalog
from rw_cli.result import Result


def view_query(definition_tree: exp.Expression) -> exp.Expression:
    return definition_tree.expression if isinstance(definition_tree, exp.Create) else definition_tree


def handle(session, tree: exp.Create, sql: str) -> Result:
    from rw_cli.handler.query import run_query
    from rw_cli.sql.batch import referenced_relations

    target = tree.this
    table = target.this if isinstance(target, exp.Schema) else target
    name = session.catalog.qualified(table.name, table.text("db"))
    aliases = [e.name for e in target.expressions] if isinstance(target, exp.Schema) else None
    existing = session.catalog.get(name)
    if existing is not None:
        if tree.args.get("exists"):
            return Result("CREATE_VIEW", notices=[f'relation "{name}" already exists, skipping'])
        if not (tree.args.get("replace") and existing.kind == VIEW):
            raise session.catalog.name_taken(name)
    query = tree.expression
    if query is None:
        raise BindError("CREATE VIEW needs AS query")
    table, types = run_query(session, query, empty=True)
    names = list(table.column_names)
    if aliases:
        if len(aliases) > len(names):
            raise BindError("CREATE VIEW specifies more column names than columns")
        names = aliases + names[len(aliases):]
    # Output names may repeat (`SELECT * FROM a JOIN b` over columns of the same names), as
    # RisingWave allows in a view: `SELECT *` from it returns every column; naming a repeated
    # one is ambiguous where it is used.
    deps = [r.id for r in referenced_relations(query, session.catalog)]
    if existing is not None:
        session.catalog.remove(existing.id)
    rel = RelationCatalog(session.catalog.alloc_id(), name, VIEW,
                          [ColumnCatalog(n, t) for n, t in zip(names, types)], [],
                          definition=sql, dependencies=deps)
    session.catalog.add(rel)
    session.barrier()  # the catalog is committed with the next version
    return Result("CREATE_VIEW")
