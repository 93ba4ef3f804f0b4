"""ALTER TABLE | MATERIALIZED VIEW | VIEW | INDEX | SINK | SOURCE name RENAME TO new.

The relation keeps its id, its state and its running job; only names change. Every stored
definition that names it is edited to the new name (rw_cli.sql.rename), so that views
expand, SHOW CREATE shows and recovery replans what the catalog now holds. A relation stays
in its schema."""
from __future__ import annotations

from sqlglot import exp

from rw_cli.errors import CatalogError
from rw_cli.meta.catalog import INDEX, MATERIALIZED_VIEW, SINK, SOURCE, TABLE, VIEW
from rw_cli.result import Result
from rw_cli.sql.dialect import RenameRelation

_KINDS = {"TABLE": TABLE, "MATERIALIZED VIEW": MATERIALIZED_VIEW, "VIEW": VIEW, "INDEX": INDEX,
          "SINK": SINK, "SOURCE": SOURCE}


def handle(session, tree: RenameRelation) -> Result:
    from rw_cli.sql.rename import rename_created, rename_references

    catalog = session.catalog
    word = tree.args["kind"]
    want = _KINDS[word]
    target: exp.Table = tree.this
    old = catalog.qualified(target.name, target.text("db"))
    rel = catalog.get(old)
    if rel is None or rel.kind != want:
        if tree.args.get("exists"):
            return Result(_tag(word))
        raise CatalogError(f'{want} "{old}" does not exist')
    to: exp.Table = tree.args["to"]
    schema = old.rpartition(".")[0]
    if to.text("db") and to.text("db") != (schema or "public"):
        raise CatalogError("a relation keeps its schema when renamed", hint="use ALTER ... SET SCHEMA to move it")
    new = catalog.qualified(to.name, schema)
    if catalog.get(new) is not None:
        raise CatalogError(f'relation "{new}" already exists')

    def resolve(table: exp.Table) -> str | None:
        try:
            return catalog.qualified(table.name, table.text("db"))
        except CatalogError:
            return None

    for other in catalog.relations.values():
        if other is not rel and other.definition and old.rpartition(".")[2] in other.definition:
            other.definition = rename_references(other.definition, old, to.name, resolve)
    if rel.definition:
        rel.definition = rename_created(rel.definition, to.name)
    rel.name = new
    session.barrier()  # the catalog is durable when the statement returns
    return Result(_tag(word))


def _tag(word: str) -> str:
    return "ALTER_" + word.replace(" ", "_")
