"""ALTER TABLE | MATERIALIZED VIEW | VIEW | INDEX | SINK | SOURCE | SUBSCRIPTION name RENAME TO new, and
ALTER ... a SWAP WITH b (two relations of one kind trade names).

A relation keeps its id, its state and its running job; only names change. Every stored
definition that names a renamed relation is edited to the new name (rw_cli.sql.rename), so
that views expand, SHOW CREATE shows and recovery replans what the catalog now holds. A
relation stays in its schema."""
from __future__ import annotations

from sqlglot import exp

from rw_cli.errors import CatalogError
from rw_cli.meta.catalog import INDEX, MATERIALIZED_VIEW, SINK, SOURCE, SUBSCRIPTION, TABLE, VIEW, RelationCatalog
from rw_cli.result import Result
from rw_cli.sql.dialect import RenameRelation

_KINDS = {"TABLE": TABLE, "MATERIALIZED VIEW": MATERIALIZED_VIEW, "VIEW": VIEW, "INDEX": INDEX,
          "SINK": SINK, "SOURCE": SOURCE, "SUBSCRIPTION": SUBSCRIPTION}


def handle(session, tree: RenameRelation) -> Result:
    catalog = session.catalog
    word = tree.args["kind"]
    want = _KINDS[word]
    target: exp.Table = tree.this
    old = catalog.qualified(target.name, target.text("db"))
    rel = catalog.get(old)
    if rel is not None and want == SOURCE and rel.kind == TABLE and rel.connector:
        raise CatalogError(f'"{old}" is a table with a connector: use ALTER TABLE to alter it')
    if rel is None or rel.kind != want:
        if tree.args.get("exists"):
            return Result(_tag(word))
        raise CatalogError(f'{want} "{old}" does not exist' if not tree.args.get("swap") else
                           f'{want} "{old}" not found')
    to: exp.Table = tree.args["to"]
    if tree.args.get("swap"):
        other = catalog.get(catalog.qualified(to.name, to.text("db")))
        if other is None or other.kind != want:
            raise CatalogError(f'{want} "{to.sql()}" not found' if other is None else
                               f'Permission denied: "{other.name}" is a {other.kind}, not a {want}: '
                               "only relations of one kind swap names")
        _rename(session, {rel.id: other.name, other.id: rel.name})
        return Result(_tag(word))
    schema = old.rpartition(".")[0]
    if to.text("db") and to.text("db") != (schema or "public"):
        raise CatalogError("a relation keeps its schema when renamed", hint="use ALTER ... SET SCHEMA to move it")
    new = catalog.qualified(to.name, schema)
    taken = catalog.get(new)
    if taken is not None:
        raise CatalogError(f'{taken.kind} "{new}" already exists')
    _rename(session, {rel.id: new})
    return Result(_tag(word))


def set_schema(session, spec: dict) -> Result:
    """ALTER TABLE | MATERIALIZED VIEW | VIEW | SINK | SOURCE name SET SCHEMA s: the relation
    (and its indexes) move to schema s, keeping id, state and job; every definition that names
    them says where they are now."""
    from rw_cli.handler.access import find_relation

    catalog = session.catalog
    word = spec["kind"].upper()
    want = _KINDS.get(word)
    if want is None or want == INDEX:
        raise CatalogError(f"ALTER {word} ... SET SCHEMA is not supported", hint="an index stays with its relation")
    if want == SUBSCRIPTION:  # RisingWave refuses it, whichever the schema
        raise CatalogError("ALTER SUBSCRIPTION SET SCHEMA is not supported", hint="drop the subscription and create it again")
    try:
        rel = find_relation(catalog, spec["name"], want)
    except CatalogError:
        if spec["exists"]:
            return Result(_tag(word))
        raise
    target = spec["schema"]
    moving = [rel] + [r for r in catalog.in_creation_order() if r.kind == INDEX and rel.id in r.dependencies
                      and rel.kind in (TABLE, MATERIALIZED_VIEW)]
    moves = {r.name: catalog.qualified(r.name.rpartition(".")[2], target) for r in moving}
    for old, new in moves.items():
        taken = catalog.get(new)
        if taken is not None and old != new:
            raise CatalogError(f'{taken.kind} "{new}" already exists in schema "{target}"')
    _move(session, {r.id: moves[r.name] for r in moving})
    return Result(_tag(word))


def _move(session, new_names: dict[int, str]) -> None:
    """Give each relation (by id) its catalog name in another schema, definitions edited."""
    from rw_cli.sql.rename import move_created, move_references

    catalog = session.catalog
    moves = {catalog.relations[i].name: new for i, new in new_names.items()}

    def resolve(table: exp.Table) -> str | None:
        try:
            return catalog.qualified(table.name, table.text("db"))
        except CatalogError:
            return None

    for other in catalog.relations.values():
        if other.definition and other.id not in new_names \
                and any(old.rpartition(".")[2] in other.definition for old in moves):
            other.definition = move_references(other.definition, moves, resolve)
    for rel_id, new in new_names.items():
        rel = catalog.relations[rel_id]
        if rel.definition:
            rel.definition = move_created(move_references(rel.definition, moves, resolve), new)
    for rel_id, new in new_names.items():
        catalog.relations[rel_id].name = new
    session.barrier()  # the catalog is durable when the statement returns


def _rename(session, new_names: dict[int, str]) -> None:
    """Give each relation (by id) its new catalog name, with every definition edited."""
    from rw_cli.sql.rename import rename_created, rename_references

    catalog = session.catalog
    renamed: list[RelationCatalog] = [catalog.relations[i] for i in new_names]
    bare = {r.name: new_names[r.id].rpartition(".")[2] for r in renamed}

    def resolve(table: exp.Table) -> str | None:
        try:
            return catalog.qualified(table.name, table.text("db"))
        except CatalogError:
            return None

    for other in catalog.relations.values():
        if other.definition and any(old.rpartition(".")[2] in other.definition for old in bare):
            other.definition = rename_references(other.definition, bare, resolve)
    for rel in renamed:
        if rel.definition:
            rel.definition = rename_created(rel.definition, bare[rel.name])
    for rel in renamed:
        rel.name = new_names[rel.id]
    session.barrier()  # the catalog is durable when the statement returns


def _tag(word: str) -> str:
    return "ALTER_" + word.replace(" ", "_")
