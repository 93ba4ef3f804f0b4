"""has_table_privilege, has_schema_privilege, has_database_privilege, has_function_privilege,
has_any_column_privilege: answered from the access catalog when a query is bound.

Their arguments are names and privilege strings, literals in every use we know of (psql,
tools, tests); a call with literal arguments (a name may be cast: `'t'::regclass`) becomes a
boolean literal. A call over columns keeps PostgreSQL's two-argument macro
(rw_cli.engine.duck_functions), which answers true: the session user is a superuser.

The privilege string is a comma-separated list, each item one privilege the object kind has,
maybe followed by WITH GRANT OPTION (any case, any spacing); the answer is whether the user
holds any of them. Errors are RisingWave's: `Invalid parameter <what>: ...`.
"""
from __future__ import annotations

from sqlglot import exp

from rw_cli.errors import BindError, CatalogError
from rw_cli.meta.access import DEFAULT_USER
from rw_cli.meta.catalog import SYSTEM_SCHEMA_NAMES, Catalog
from rw_cli.sql.output_name import replace_call

SYSTEM_RELATION = "system"  # the access key of every system catalog relation
_KINDS = {"has_table_privilege": "relation", "has_any_column_privilege": "relation",
          "has_schema_privilege": "schema", "has_database_privilege": "database",
          "has_function_privilege": "function"}
# the privileges each function names (RisingWave's actions for the object kind)
_ALLOWED = {"has_table_privilege": {"SELECT", "INSERT", "UPDATE", "DELETE", "CREATE", "CONNECT", "USAGE", "EXECUTE"},
            "has_any_column_privilege": {"SELECT", "INSERT", "UPDATE"},
            "has_schema_privilege": {"CREATE", "USAGE"}, "has_database_privilege": {"CREATE", "CONNECT"},
            "has_function_privilege": {"EXECUTE"}}
_NAME_CASTS = ("regclass", "regproc", "regprocedure", "text", "varchar", "name", "oid")


PRIVILEGE_FUNCTIONS = frozenset(_KINDS)


def name_argument(arg: exp.Expression) -> exp.Expression:
    """An argument as the name it gives: a string cast to a name type (`'t'::regclass`) is
    the string."""
    if isinstance(arg, exp.Cast) and isinstance(arg.this, exp.Literal) and arg.this.is_string \
            and arg.to.sql(dialect="postgres").lower().removeprefix("pg_catalog.") in _NAME_CASTS:
        return arg.this
    return arg


def _literal(arg: exp.Expression):
    """A literal argument's value, else None."""
    return arg.this if isinstance(arg, exp.Literal) else None


def answer_privilege_calls(calls: list[exp.Anonymous], catalog: Catalog) -> None:
    """Replace each has_*_privilege(...) call of literal arguments among `calls` (a query's
    anonymous function calls) by its answer, in place."""
    for call in calls:
        kind = _KINDS.get(call.name.lower())
        args = call.expressions
        values = [_literal(a) for a in args]
        if kind is None or len(args) not in (2, 3) or any(v is None for v in values):
            continue
        user, obj, privilege = ([DEFAULT_USER] if len(values) == 2 else []) + values
        replace_call(call, exp.Boolean(this=has_privilege(catalog, str(user), kind, str(obj), str(privilege),
                                                    _ALLOWED[call.name.lower()])))


def parse_privileges(privilege: str, allowed: set[str]) -> list[tuple[str, bool]]:
    """The (privilege, with grant option) items of a privilege string, each one of `allowed`."""
    items = []
    for item in privilege.split(","):
        words = item.upper().split()
        grant_option = len(words) > 3 and words[-3:] == ["WITH", "GRANT", "OPTION"]
        if grant_option:
            words = words[:-3]
        if len(words) != 1 or words[0] not in allowed:
            raise BindError(f'Invalid parameter privilege: unrecognized privilege type: "{item.strip()}"')
        items.append((words[0], grant_option))
    return items


def has_privilege(catalog: Catalog, user: str, kind: str, name: str, privilege: str,
                  allowed: set[str] | None = None) -> bool:
    """Whether `user` holds any of the comma-separated privileges (each maybe `WITH GRANT
    OPTION`) on the object."""
    access = catalog.access
    items = parse_privileges(privilege, allowed or _ALLOWED["has_table_privilege"])
    if user not in access.users:
        raise BindError(f"Invalid parameter user: User {user} not found")
    key, owner = _object(catalog, kind, name)
    for action, grant_option in items:
        if key == SYSTEM_RELATION and action == "SELECT" and not grant_option:
            return True  # every user reads the system catalogs
        if access.has_privilege(user, key, action, owner, grant_option):
            return True
    return False


def _object(catalog: Catalog, kind: str, name: str) -> tuple[str, str]:
    """The access key and owner of the object a privilege function names."""
    access = catalog.access
    if kind == "database":
        if name not in access.databases:
            raise CatalogError(f"Invalid parameter database: database not found: {name}")
        return f"database:{name}", access.must_database(name)["owner"]
    if kind == "schema":
        if name != "public" and name not in catalog.schemas and name not in SYSTEM_SCHEMA_NAMES:
            raise CatalogError(f"Invalid parameter schema: schema not found: {name}")
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
        raise CatalogError(f"Invalid parameter name: class not found: {name}")
    return f"relation:{rel.id}", rel.owner
