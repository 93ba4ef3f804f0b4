"""The session's search_path applied to a statement's unqualified relation names.

The catalog names a relation of schema s `s.name` and one of public `name`, and every binder
reads an unqualified name as public's. So that they all follow the search path, a statement's
unqualified references are qualified with the schema they resolve to before it is handled:
a reference with the first schema of the path that holds a relation of that name, the name
a CREATE makes with the first schema of the path that exists (as PostgreSQL does)."""
from __future__ import annotations

from sqlglot import exp

from rw_cli.meta.catalog import DEFAULT_SCHEMA, Catalog

# what CREATE makes a relation of (a CREATE INDEX is in its table's schema)
_CREATED_RELATIONS = frozenset({"TABLE", "VIEW", "SINK", "SOURCE"})
# what DROP and CREATE name that is no relation
_NOT_RELATIONS = frozenset({"SCHEMA", "DATABASE", "USER", "ROLE", "FUNCTION", "AGGREGATE", "CONNECTION",
                            "SECRET"})


def apply_search_path(tree: exp.Expression, catalog: Catalog, schemas: list[str]) -> exp.Expression:
    """`tree` with each unqualified relation name qualified by the search path `schemas`
    (those of the path that exist, in order); unchanged for the default path (public only)."""
    if schemas == [DEFAULT_SCHEMA] or not schemas:
        return tree
    if isinstance(tree, (exp.Drop, exp.Create)) and (tree.args.get("kind") or "").upper() in _NOT_RELATIONS:
        return tree
    created = {id(t) for t in _created_names(tree)}
    ctes = {c.alias for c in tree.find_all(exp.CTE)}
    for t in list(tree.find_all(exp.Table)):
        if t.args.get("db") or not isinstance(t.this, exp.Identifier) or t.name in ctes:
            continue
        schema = schemas[0] if id(t) in created else resolve(catalog, t.name, schemas)
        if schema is not None and schema != DEFAULT_SCHEMA:
            t.set("db", exp.to_identifier(schema))
    return tree


def resolve(catalog: Catalog, name: str, schemas: list[str]) -> str | None:
    """The first schema of `schemas` that holds a relation called `name` (None: none does,
    and the name stays as written: a system catalog's, or an error of the binder's)."""
    for schema in schemas:
        if catalog.get(name if schema == DEFAULT_SCHEMA else f"{schema}.{name}") is not None:
            return schema
    return None


def _created_names(tree: exp.Expression) -> list[exp.Table]:
    """The names of the relations `tree` creates (also under EXPLAIN)."""
    out = []
    for create in tree.find_all(exp.Create):
        if (create.args.get("kind") or "").upper() not in _CREATED_RELATIONS:
            continue
        target = create.this.this if isinstance(create.this, exp.Schema) else create.this
        if isinstance(target, exp.Table):
            out.append(target)
    return out
