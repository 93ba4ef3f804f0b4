"""Calls answered from the catalog when a query is bound: privilege checks
(rw_cli.sql.privileges), definitions and comments (rw_cli.sql.catalog_functions) and sizes
(rw_cli.sql.size_functions). A SELECT and a materialized view answer them alike: an MV's
answer is the catalog's at its creation."""
from __future__ import annotations

from sqlglot import exp

from rw_cli.meta.catalog import SYSTEM_SCHEMA_NAMES, Catalog
from rw_cli.sql.catalog_functions import CATALOG_FUNCTIONS, answer_catalog_calls
from rw_cli.sql.output_name import replace_call
from rw_cli.sql.privileges import PRIVILEGE_FUNCTIONS, answer_privilege_calls, name_argument
from rw_cli.sql.size_functions import SIZE_FUNCTIONS, answer_size_calls


def name_object_arguments(call: exp.Anonymous) -> None:
    """`has_table_privilege(u, 't'::regclass, p)`, `pg_get_viewdef('v'::regclass)`: the
    object's name, by which the call is answered (not the cast's oid lookup)."""
    name = call.name.lower()
    if name in PRIVILEGE_FUNCTIONS:
        call.set("expressions", [name_argument(a) for a in call.expressions])
    elif name in CATALOG_FUNCTIONS | SIZE_FUNCTIONS and call.expressions:
        call.set("expressions", [name_argument(call.expressions[0]), *call.expressions[1:]])


def answer_calls(calls: list[exp.Anonymous], catalog: Catalog, store=None, settings=None) -> None:
    """Each answerable call among `calls` replaced by its answer, in place."""
    answer_privilege_calls(calls, catalog)
    answer_catalog_calls(calls, catalog)
    if any(c.name.lower() in SIZE_FUNCTIONS for c in calls):
        answer_size_calls(calls, catalog, store)
    if settings is not None:
        for call in calls:
            if call.name.lower() == "current_setting" and call.expressions \
                    and not isinstance(call.expressions[0], exp.Literal):
                replace_call(call, _setting_of(call.expressions[0], settings))


def answer_current_schemas(node: exp.CurrentSchemas, catalog: Catalog, settings) -> None:
    """current_schemas(true | false) replaced by its answer, in place (a select item keeps
    its name)."""
    if isinstance(node.this, exp.Boolean) and settings is not None:
        value = _current_schemas(node.this.this, catalog, settings)
        if isinstance(node.parent, exp.Select) and node.arg_key == "expressions":
            value = exp.Alias(this=value, alias=exp.to_identifier("current_schemas"))
        node.replace(value)


def _current_schemas(implicit: bool, catalog: Catalog, settings) -> exp.Expression:
    """current_schemas(b): the schemas of search_path that exist, in its order (`"$user"` the
    acting user's schema if there is one), after pg_catalog when `b` asks for the implicit
    ones, as PostgreSQL lists them (JDBC and BI tools resolve type and table names so)."""
    user = catalog.access.acting_user(settings.get("session_authorization"))
    existing = {"public", *catalog.schemas, *SYSTEM_SCHEMA_NAMES}
    names = []
    for item in str(settings.get("search_path") or "").split(","):
        name = item.strip()
        name = user if name == '"$user"' else name.strip('"')
        if name in existing and name not in names:
            names.append(name)
    if implicit and "pg_catalog" not in names:
        names.insert(0, "pg_catalog")
    return exp.cast(exp.Array(expressions=[exp.Literal.string(n) for n in names]), "VARCHAR[]")


def _setting_of(name: exp.Expression, settings) -> exp.Expression:
    """current_setting over a column of names (psql's \\dconfig: `current_setting(s.name)` of
    pg_settings): each of the session's parameters by its name, NULL for another name."""
    key = exp.Lower(this=name.copy())
    ifs = [exp.If(this=exp.EQ(this=key.copy(), expression=exp.Literal.string(k)), true=exp.Literal.string(v))
           for k, v in settings.items()]
    return exp.cast(exp.Case(ifs=ifs) if ifs else exp.Null(), "VARCHAR")
