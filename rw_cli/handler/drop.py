"""DROP TABLE | MATERIALIZED VIEW [IF EXISTS] name: refused while a dependent MV exists."""
from __future__ import annotations

from sqlglot import exp

from rw_cli.errors import CatalogError, NotSupported
from rw_cli.meta.catalog import MATERIALIZED_VIEW, TABLE, VIEW
from rw_cli.result import Result


def handle(session, tree: exp.Drop) -> Result:
    kind = (tree.args.get("kind") or "").upper()
    if kind == "TABLE":
        want, tag = TABLE, "DROP_TABLE"
    elif kind == "VIEW" and tree.args.get("materialized"):
        want, tag = MATERIALIZED_VIEW, "DROP_MATERIALIZED_VIEW"
    elif kind == "VIEW":
        want, tag = VIEW, "DROP_VIEW"
    else:
        raise NotSupported(f"DROP {kind}")
    if tree.args.get("cascade"):
        raise NotSupported("DROP ... CASCADE")
    for table in tree.args.get("tables") or [tree.this]:
        name = table.name
        rel = session.catalog.get(name)
        if rel is None or rel.kind != want:
            if tree.args.get("exists"):
                continue
            if rel is not None:
                raise CatalogError(f'"{name}" is a {rel.kind}, not a {want}',
                                   hint=f"use DROP {rel.kind.upper()}")
            raise CatalogError(f'{want} "{name}" does not exist')
        deps = session.catalog.dependents(rel.id)
        if deps:
            raise CatalogError(f'cannot drop {want} "{name}" because other objects depend on it',
                               hint=f'{deps[0].kind} "{deps[0].name}" depends on it')
        drop_relation(session, rel)
    session.barrier()
    return Result(tag)


def drop_relation(session, rel) -> None:
    from rw_cli.sql.stream_builder import relation_state_table

    if rel.kind == VIEW:
        session.catalog.remove(rel.id)
        return
    session.runtime.drop_job(rel.id)
    table = relation_state_table(session.store, rel)
    table.truncate_all()
    table.commit(session.epoch.curr)
    session.catalog.remove(rel.id)
