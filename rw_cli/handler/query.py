"""SELECT (and VALUES, set operations): a batch query on DuckDB over committed snapshots.

The query is qualified against the catalog (so errors name the missing table or column and
`*` expands to visible columns), each relation it reads is registered as the Arrow snapshot
of the last committed epoch, and the SQL is transpiled to DuckDB with PostgreSQL's semantics.
"""
from __future__ import annotations

import pyarrow as pa
from sqlglot import exp

from rw_cli.common.types import DataType
from rw_cli.engine import duck
from rw_cli.meta.catalog import RelationCatalog
from rw_cli.result import Result
from rw_cli.sql.planner import output_name, qualify_query, schema_of
from rw_cli.sql.transpile import to_duckdb


def snapshot(session, rel: RelationCatalog, committed: bool = True) -> pa.Table:
    """A relation's rows (all columns, named) at the committed epoch, or with own writes."""
    from rw_cli.sql.stream_builder import relation_state_table

    table = relation_state_table(session.store, rel)
    return table.scan(epoch=session.store.committed_epoch if committed else None)


def run_query(session, tree: exp.Expression, committed: bool = True, hidden: bool = False) -> tuple[pa.Table, list[DataType]]:
    """Run a query; `committed=False` reads the session's own uncommitted writes (DML)."""
    q, rels = qualify_query(tree, session.catalog) if not hidden else _qualify_all(session, tree)
    tables = {}
    for rel in rels:
        reg = f"__rel_{rel.id}"
        data = snapshot(session, rel, committed)
        if not hidden:
            data = data.select([c.name for c in rel.visible_columns])
        tables[reg] = data
    for t in q.find_all(exp.Table):
        rel = session.catalog.get(t.name)
        if rel is not None:
            alias = t.alias_or_name
            t.set("this", exp.to_identifier(f"__rel_{rel.id}"))
            t.set("alias", exp.TableAlias(this=exp.to_identifier(alias)))
    schema = {f"__rel_{r.id}": s for r, s in zip(rels, schema_of(rels, visible_only=not hidden).values())}
    sql = to_duckdb(q, schema)
    result = duck.query(sql, tables)
    names = _output_names(q, result)
    result = result.rename_columns(names)
    types = [DataType.from_arrow(f.type) for f in result.schema]
    return _normalize(result, types), types


def _qualify_all(session, tree):
    from sqlglot.optimizer.qualify import qualify

    from rw_cli.sql.dialect import RwDialect
    from rw_cli.sql.planner import check_relations

    rels = check_relations(tree, session.catalog)
    q = qualify(tree.copy(), schema=schema_of(rels, visible_only=False), dialect=RwDialect,
                quote_identifiers=False, identify=False)
    return q, rels


def _output_names(q: exp.Expression, result: pa.Table) -> list[str]:
    s = q
    while isinstance(s, (exp.Union, exp.Except, exp.Intersect)):
        s = s.this
    if isinstance(s, exp.Select) and len(s.expressions) == result.num_columns:
        return [output_name(e) for e in s.expressions]
    return list(result.column_names)


def _normalize(t: pa.Table, types: list[DataType]) -> pa.Table:
    """Cast DuckDB's result types to our Arrow mapping (e.g. string_view -> string)."""
    cols = [c.cast(dt.arrow()) if c.type != dt.arrow() and dt.name != "numeric" else c
            for c, dt in zip(t.columns, types)]
    return pa.Table.from_arrays(cols, names=t.column_names)


def handle_query(session, tree: exp.Expression) -> Result:
    table, types = run_query(session, tree)
    return Result(f"SELECT {table.num_rows}", table, types)
