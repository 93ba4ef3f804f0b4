"""has_table_privilege, has_schema_privilege, has_database_privilege, has_function_privilege,
has_any_column_privilege: answered from the access catalog when a query is bound.

Their arguments are names and privilege strings, literals in every use we know of (psql,
tools, tests); a call with literal arguments becomes a boolean literal. A call over columns
keeps PostgreSQL's two-argument macro (rw_cli.engine.duck_functions), which answers true: the
session user is a superuser.
"""
from __future__ import annotations

from sqlglot import exp

from rw_cli.errors import CatalogError
from rw_cli.meta.access import DEFAULT_USER
from rw_cli.meta.catalog import SYSTEM_SCHEMA_NAMES, Catalog

SYSTEM_RELATION = "system"  # the access key of every system catalog relation
_KINDS = {"has_table_privilege": "relation", "has_any_column_privilege": "relation",
          "has_schema_privilege": "schema", "has_database_privilege": "database",
          "has_function_privilege": "function"}


def answer_privilege_calls(calls: list[exp.Anonymous], catalog: Catalog) -> None:
    """Replace each has_*_privilege(...) call of literal arguments among `calls` (a query's
    anonymous function calls) by its answer, in place."""
    for call in calls:
        kind = _KINDS.get(call.name.lower())
        args = call.expressions
        if kind is None or len(args) not in (2, 3) or not all(isinstance(a, exp.Literal) for a in args):
            continue
        values = [a.this for a in args]
        user, obj, privilege = ([DEFAULT_USER] if len(values) == 2 else []) + values
        call.replace(exp.Boolean(this=has_privilege(catalog, str(user), kind, str(obj), str(privilege))))


def has_privilege(catalog: Catalog, user: str, kind: str, name: str, privilege: str) -> bool:
    """Whether `user` holds any of the comma-separated privileges (each maybe `WITH GRANT
    OPTION`) on the object."""
    access = catalog.access
    key, owner = _object(catalog, kind, name)
    for item in privilege.split(","):
        words = item.strip().upper().split()
        if not words:
            continue
        grant_option = words[1:] == ["WITH", "GRANT", "OPTION"]
        if key == SYSTEM_RELATION and words[0] == "SELECT" and not grant_option:
            access.must_user(user)
            return True  # every user reads the system catalogs
        if access.has_privilege(user, key, words[0], owner, grant_option):
            return True
    return False


def _object(catalog: Catalog, kind: str, name: str) -> tuple[str, str]:
    """The access key and owner of the object a privilege function names."""
    access = catalog.access
    if kind == "database":
        return f"database:{name}", access.must_database(name)["owner"]
    if kind == "schema":
        if name != "public" and name not in catalog.schemas:
            raise CatalogError(f"schema not found: {name}")
        return f"schema:{name}", access.schema_owners.get(name, DEFAULT_USER)
    if kind == "function":
        fname = name.split("(")[0].strip().rpartition(".")[2]  # functions are one namespace
        if fname not in catalog.functions:
            raise CatalogError(f'function "{name}" does not exist')
        return f"function:{fname}", access.object_owners.get(f"function:{fname}", DEFAULT_USER)
    schema, _, bare = name.rpartition(".")
    rel = catalog.get(catalog.qualified(bare, schema or None)) if schema not in SYSTEM_SCHEMA_NAMES else None
    if rel is None:
        from rw_cli.sql.pg_catalog import system_table

        if system_table(schema or None, bare, catalog) is not None:
            return SYSTEM_RELATION, DEFAULT_USER
        raise CatalogError(f'relation "{name}" does not exist')
    return f"relation:{rel.id}", rel.owner
