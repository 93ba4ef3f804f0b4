"""CREATE SCHEMA [IF NOT EXISTS] s | DROP SCHEMA [IF EXISTS] s [CASCADE].

A schema is a namespace of relations besides `public`: its relations are named `s.name` in
the catalog (`Catalog.qualified`). Dropping one that holds relations needs CASCADE, which
drops them (and what depends on them) too."""
from __future__ import annotations

from sqlglot import exp

from rw_cli.errors import CatalogError
from rw_cli.meta.catalog import DEFAULT_SCHEMA, SYSTEM_SCHEMA_NAMES
from rw_cli.result import Result


def _schema_name(target: exp.Expression) -> str:
    return target.text("db") or target.name


def handle_create(session, tree: exp.Create) -> Result:
    name = _schema_name(tree.this)
    if name in session.catalog.schemas or name == DEFAULT_SCHEMA or name in SYSTEM_SCHEMA_NAMES:
        if tree.args.get("exists"):
            return Result("CREATE_SCHEMA", notices=[f'schema "{name}" already exists, skipping'])
        raise CatalogError(f'schema "{name}" already exists')
    session.catalog.schemas.append(name)
    session.barrier()
    return Result("CREATE_SCHEMA")


def handle_drop(session, tree: exp.Drop) -> Result:
    from rw_cli.handler.drop import drop_relation, with_dependents

    for target in tree.args.get("tables") or [tree.this]:
        name = _schema_name(target)
        if name not in session.catalog.schemas:
            if tree.args.get("exists"):
                continue
            raise CatalogError(f'schema "{name}" does not exist')
        members = session.catalog.in_schema(name)
        if members and not tree.args.get("cascade"):
            raise CatalogError(f'cannot drop schema "{name}" because other objects depend on it',
                               hint=f'{members[0].kind} "{members[0].name}" is in it; '
                                    "use DROP ... CASCADE to drop them too")
        for rel in sorted(members, key=lambda r: -r.id):
            if session.catalog.relations.get(rel.id) is None:
                continue  # dropped with a relation it depended on
            for victim in with_dependents(session.catalog, rel):
                drop_relation(session, victim)
        session.catalog.schemas.remove(name)
    session.barrier()
    return Result("DROP_SCHEMA")
