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


def _other_database(target: exp.Expression) -> str | None:
    """The database a `database.schema` name names, when it is not the open one."""
    from rw_cli.meta.access import DEFAULT_DATABASE

    db = target.text("catalog") if isinstance(target, exp.Table) else ""
    return db if db and db != DEFAULT_DATABASE else None


def handle_create(session, tree: exp.Create) -> Result:
    result = create_schema(session, _schema_name(tree.this), bool(tree.args.get("exists")))
    session.barrier()
    return result


def create_schema(session, name: str, if_not_exists: bool) -> Result:
    """Add schema `name` to the catalog (a notice, nothing changed, if it exists and
    `if_not_exists`)."""
    if name in session.catalog.schemas or name == DEFAULT_SCHEMA or name in SYSTEM_SCHEMA_NAMES:
        if if_not_exists:
            return Result("CREATE_SCHEMA", notices=[f'schema "{name}" already exists, skipping'])
        raise CatalogError(f'schema "{name}" already exists')
    session.catalog.schemas.append(name)
    return Result("CREATE_SCHEMA")


def rename_schema(session, name: str, new: str) -> None:
    """ALTER SCHEMA name RENAME TO new: its relations move with it, and every definition that
    names them says the new schema."""
    catalog = session.catalog
    if name == DEFAULT_SCHEMA or name in SYSTEM_SCHEMA_NAMES:
        raise CatalogError(f'cannot rename schema "{name}"')
    if new in catalog.schemas or new == DEFAULT_SCHEMA or new in SYSTEM_SCHEMA_NAMES:
        raise CatalogError(f'schema "{new}" already exists')
    _move_schemas(session, {name: new})


def swap_schemas(session, name: str, other: str) -> None:
    """ALTER SCHEMA a SWAP WITH b: the two schemas trade names (with their relations)."""
    if other not in session.catalog.schemas:
        raise CatalogError(f"schema not found: {other}")
    _move_schemas(session, {name: other, other: name})


def _move_schemas(session, renames: dict[str, str]) -> None:
    from rw_cli.sql.rename import rename_schemas

    catalog = session.catalog
    for rel in catalog.relations.values():
        if rel.definition and any(old in rel.definition for old in renames):
            rel.definition = rename_schemas(rel.definition, renames)
        schema, _, bare = rel.name.rpartition(".")
        if schema in renames:
            rel.name = f"{renames[schema]}.{bare}"
    catalog.schemas = [renames.get(s, s) for s in catalog.schemas]
    owners = catalog.access.schema_owners
    moved = {renames[s]: owners[s] for s in renames if s in owners}
    for s in renames:
        owners.pop(s, None)
    owners.update(moved)
    for old, new in renames.items():
        if len(renames) == 1:
            catalog.access.rename_schema(old, new)


def handle_drop(session, tree: exp.Drop) -> Result:
    from rw_cli.handler.drop import check_cascade_allowed, check_sinks_into_kept_tables, drop_relation, with_dependents

    check_cascade_allowed(session, bool(tree.args.get("cascade")), "SCHEMA")
    for target in tree.args.get("tables") or [tree.this]:
        name = _schema_name(target)
        database = _other_database(target)
        if database is not None:
            session.catalog.access.drop_foreign_schema(database, name, bool(tree.args.get("exists")))
            continue
        if name not in session.catalog.schemas:
            if tree.args.get("exists"):
                continue
            raise CatalogError(f"schema not found: {name}")
        members = session.catalog.in_schema(name)
        from rw_cli.handler.create_function import functions_in_schema, remove_function

        functions = functions_in_schema(session.catalog, name)
        if (members or functions) and not tree.args.get("cascade"):
            what = f'{members[0].kind} "{members[0].name}"' if members else f'function "{functions[0][0]}"'
            raise CatalogError(f'cannot drop schema "{name}" because other objects depend on it',
                               hint=f"{what} is in it; use DROP ... CASCADE to drop them too")
        check_sinks_into_kept_tables([v for rel in members for v in with_dependents(session.catalog, rel)])
        for f, record in functions:
            remove_function(session, f, record)
        for rel in sorted(members, key=lambda r: -r.id):
            if session.catalog.relations.get(rel.id) is None:
                continue  # dropped with a relation it depended on
            for victim in with_dependents(session.catalog, rel):
                drop_relation(session, victim)
        session.catalog.schemas.remove(name)
        session.catalog.access.drop_schema(name)
    session.barrier()
    return Result("DROP_SCHEMA")
