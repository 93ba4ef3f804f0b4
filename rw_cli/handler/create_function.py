"""CREATE FUNCTION name(args) RETURNS type LANGUAGE SQL AS 'body' (or `RETURN expr`) or
LANGUAGE python AS $$ def name(...): ... $$, DROP FUNCTION and SHOW CREATE FUNCTION. A call
is inlined where it is used (`rw_cli.sql.sql_udf`), in batch queries and MVs alike.

The body is checked when the function is created, as RisingWave checks it: its parameters
and the functions it calls must exist, and its type must be the declared return type. A
relation whose definition calls a function keeps it from being dropped, unless CASCADE drops
the relation too."""
from __future__ import annotations

import re

from sqlglot import exp

from rw_cli.errors import BindError, CatalogError, NotSupported
from rw_cli.result import Result


def handle_create(session, tree: exp.Create) -> Result:
    udf = tree.this
    if not isinstance(udf, exp.UserDefinedFunction):
        raise BindError("CREATE FUNCTION needs a name and an argument list")
    name = (udf.this.name if isinstance(udf.this, (exp.Table, exp.Identifier)) else udf.name).lower()
    listed = (tree.args.get("properties") or exp.Properties()).expressions
    props = {type(p).__name__: p for p in listed}
    lang = props.get("LanguageProperty")
    language = lang.name.lower() if lang is not None else "sql"
    if language not in ("sql", "python"):
        raise NotSupported(f"CREATE FUNCTION ... LANGUAGE {lang.name}")
    if any(type(p) is exp.Property for p in listed) and language == "sql":  # WITH (option = value)
        raise BindError("Invalid Parameter Value: SQL UDF does not support WITH options yet")
    returns = props.get("ReturnsProperty")
    if returns is None:
        raise BindError("Invalid Parameter Value: return type must be specified")
    record = {"args": _arguments(udf), **_returns(returns, language), "body": _body_text(tree)}
    if language == "python":
        record["language"] = "python"
    if tree.meta.get("aggregate"):  # CREATE AGGREGATE: create_state / accumulate / finish
        if language != "python" or record.get("table"):
            raise NotSupported("CREATE AGGREGATE other than LANGUAGE python RETURNS type")
        record["kind"] = "aggregate"
    existing = session.catalog.functions.get(name)
    same = _overload(existing, record["args"]) if existing is not None else None
    if same is not None:
        from rw_cli.sql.sql_udf import signature

        if tree.args.get("exists"):
            return Result(_tag(tree, "CREATE"), notices=[f'function "{name}" already exists, skipping'])
        if not tree.args.get("replace") or function_users(session.catalog, name):
            raise CatalogError(f"function named {signature(name, same)} already exists")
    _check_body(session, name, record)
    schema = udf.this.text("db") if isinstance(udf.this, exp.Table) else ""
    if schema and schema != "public":
        session.catalog.qualified(name, schema)  # the schema must exist
        record["schema"] = schema  # where default privileges of a schema apply to it
    if existing is None or same is existing:
        if existing is not None and existing.get("overloads"):
            record["overloads"] = existing["overloads"]
        session.catalog.functions[name] = record
    elif same is not None:  # OR REPLACE of an overload
        existing["overloads"] = [record if o is same else o for o in existing["overloads"]]
    else:  # another function of the same name, of other argument types
        existing.setdefault("overloads", []).append(record)
    session.barrier()  # the catalog is committed with the next version
    return Result(_tag(tree, "CREATE"))


def _tag(tree: exp.Expression, verb: str) -> str:
    return f"{verb}_AGGREGATE" if tree.meta.get("aggregate") else f"{verb}_FUNCTION"


def _overload(record: dict, args: list) -> dict | None:
    """The function among `record` and its overloads whose argument types are `args`'."""
    want = tuple(t for _, t in args)
    for r in [record, *record.get("overloads", [])]:
        if tuple(t for _, t in r["args"]) == want:
            return r
    return None


def _returns(returns: exp.ReturnsProperty, language: str) -> dict:
    """{"returns": type} of a scalar function; of a table function (RETURNS TABLE (cols)) also
    {"table": [[column, type], ...]}, its type that of one column or a struct of them."""
    if isinstance(returns.this, exp.DataType) and not returns.args.get("is_table"):
        return {"returns": _type_name(returns.this)}
    cols = [c for c in (returns.this.expressions if isinstance(returns.this, exp.Schema) else [])
            if isinstance(c, exp.ColumnDef)]
    if not cols:
        raise NotSupported("this RETURNS clause")
    table = [[c.name, _type_name(c.args["kind"])] for c in cols]
    if len(table) == 1:
        return {"returns": table[0][1], "table": table}
    from rw_cli.common.types import struct_type_name
    from rw_cli.handler.create_table import column_type

    inner = [column_type(c.args["kind"]) for c in cols]
    return {"returns": struct_type_name([n for n, _ in table], inner), "table": table}


def _type_name(t: exp.DataType) -> str:
    from rw_cli.handler.create_table import column_type

    return column_type(t).name


def _arguments(udf: exp.UserDefinedFunction) -> list[list]:
    args = []
    for a in udf.expressions:
        if isinstance(a, exp.ColumnDef):
            args.append([a.name, _type_name(a.args["kind"])])
        elif isinstance(a, exp.DataType):
            args.append([None, _type_name(a)])
        else:  # a bare type name the parser took for an identifier: f(int)
            args.append([None, _type_name(exp.DataType.build(a.name, dialect="postgres"))])
    return args


def _body_text(tree: exp.Create) -> str:
    body = tree.expression
    if isinstance(body, exp.Return):
        return body.this.sql(dialect="postgres")
    if isinstance(body, (exp.Heredoc, exp.Literal)):
        return str(body.this)
    raise NotSupported("this CREATE FUNCTION body")


def _check_body(session, name: str, record: dict) -> None:
    """RisingWave's semantic check of a new body: bound with typed NULLs for its arguments."""
    from rw_cli.handler.query import run_query
    from rw_cli.sql.sql_udf import function_body, probe_query, unnamed_parameters

    if record.get("language") == "python":
        from rw_cli.sql.sql_udf import python_function

        python_function(name, record)  # it compiles and defines the function it names
        return
    body = function_body(record)  # a body that is not one expression or query is refused now
    for n in unnamed_parameters(body):
        if not 1 <= n <= len(record["args"]):
            raise BindError(f"Bind error: failed to find unnamed parameter ${n}",
                            hint=f"In SQL UDF definition: `{record['body']}`")
    try:
        _, types = run_query(session, probe_query(name, record, session.catalog), empty=True)
    except BindError as e:
        missing = re.match(r'column "([^"]+)" does not exist', e.message or "")
        if missing:
            raise BindError(f"Bind error: failed to find named parameter {missing.group(1)}",
                            hint=f"In SQL UDF definition: `{record['body']}`") from None
        raise
    actual = types[0].name if types else None
    if actual is not None and not record.get("table") and _family(actual) != _family(record["returns"]):
        raise BindError(f"return type mismatch detected\nexpected: [{record['returns']}]\nactual: [{actual}]\n"
                        "please adjust your function definition accordingly")


# types whose values one assignment cast turns into another without a text round trip: a
# body of one of them may return another of the family (our typing of a body is not always
# RisingWave's to the bit width, so only a different family is refused)
_FAMILIES = (
    {"smallint", "integer", "bigint", "numeric", "real", "double precision", "rw_int256"},
    {"character varying", "text", "varchar"},
    {"timestamp without time zone", "timestamp with time zone", "date"},
)


def _family(type_name: str) -> str:
    for i, family in enumerate(_FAMILIES):
        if type_name in family:
            return f"family{i}"
    return type_name


def handle_drop(session, tree: exp.Drop) -> Result:
    from rw_cli.handler.drop import check_cascade_allowed, drop_relation, with_dependents

    cascade = bool(tree.args.get("cascade"))
    check_cascade_allowed(session, cascade, "FUNCTION")
    for t in tree.args.get("tables") or []:
        name = t.name.lower()
        if name not in session.catalog.functions:
            if tree.args.get("exists"):
                return Result(_tag(tree, "DROP"), notices=[f'function "{name}" does not exist, skipping'])
            raise CatalogError(f"function not found: {name}")
        record = session.catalog.functions[name]
        target = _target_overload(name, record, tree.expressions,
                                  by_types=tree.args.get("expressions") is not None)  # `f()` too
        is_aggregate = target.get("kind") == "aggregate"
        if is_aggregate and not tree.meta.get("aggregate"):  # each kind has its own DROP
            raise CatalogError(f'"{name}" is an aggregate function',
                               hint="Use DROP AGGREGATE to drop aggregate functions.")
        if tree.meta.get("aggregate") and not is_aggregate:
            raise CatalogError(f'"{name}" is not an aggregate')
        users = function_users(session.catalog, name)
        if users and not cascade:
            raise CatalogError(f"Permission denied: function used by {len(users)} other objects",
                               hint=f'{users[0].kind} "{users[0].name}" calls it; '
                                    "use DROP FUNCTION ... CASCADE to drop the dependent objects too")
        dropped: set[int] = set()
        for rel in users:
            for victim in with_dependents(session.catalog, rel):
                if victim.id not in dropped and session.catalog.relations.get(victim.id) is not None:
                    drop_relation(session, victim)
                    dropped.add(victim.id)
        remove_function(session, name, target)  # the name's other functions stay
    session.barrier()
    return Result(_tag(tree, "DROP"))


def handle_alter(session, tree) -> Result:
    """ALTER FUNCTION name [(types)] SET SCHEMA s | RENAME TO n."""
    name = tree.this.name
    record = session.catalog.functions.get(name)
    if record is None:
        raise CatalogError(f"function not found: {name}")
    target = _target_overload(name, record, tree.expressions, by_types=bool(tree.args.get("args")))
    if tree.args.get("schema"):
        schema = tree.args["schema"]
        if schema != "public":
            session.catalog.qualified(name, schema)  # the schema must exist
        _update(session, name, target, {**target, "schema": schema})
    else:
        to = tree.args["to"]
        users = function_users(session.catalog, name)
        if users:  # their definitions call it by name
            raise CatalogError(f"Permission denied: function used by {len(users)} other objects")
        existing = session.catalog.functions.get(to)
        if existing is not None and _overload(existing, target["args"]) is not None:
            from rw_cli.sql.sql_udf import signature

            raise CatalogError(f"function named {signature(to, target)} already exists")
        _update(session, name, target, None)
        if existing is None:
            session.catalog.functions[to] = dict(target)
        else:
            existing.setdefault("overloads", []).append(dict(target))
        if name not in session.catalog.functions:  # the name's last function: its grants follow it
            session.catalog.access.move_object(f"function:{name}", f"function:{to}")
    session.barrier()
    return Result("ALTER_AGGREGATE" if target.get("kind") == "aggregate" else "ALTER_FUNCTION")


def functions_in_schema(catalog, schema: str) -> list[tuple[str, dict]]:
    """(name, function) of each function (overloads apart) made in `schema`."""
    from rw_cli.sql.sql_udf import overloads

    return [(n, r) for n, rec in catalog.functions.items() for r in overloads(rec) if r.get("schema") == schema]


def remove_function(session, name: str, target: dict) -> None:
    """One function of a name gone; the name's grants go with its last one."""
    _update(session, name, target, None)
    if name not in session.catalog.functions:
        session.catalog.access.drop_object(f"function:{name}")


def _update(session, name: str, target: dict, new: dict | None) -> None:
    """Replace (or, with None, remove) one function of the name `name`."""
    from rw_cli.sql.sql_udf import overloads

    rest = [new if r["args"] == target["args"] else r for r in overloads(session.catalog.functions[name])]
    rest = [r for r in rest if r is not None]
    if not rest:
        del session.catalog.functions[name]
        return
    session.catalog.functions[name] = {**rest[0], **({"overloads": rest[1:]} if rest[1:] else {})}


def _target_overload(name: str, record: dict, types: list, by_types: bool | None = None) -> dict:
    """The function a DROP or ALTER names: by its argument types (`name()` names the one of
    none), or by its name alone when the name has one function."""
    from rw_cli.handler.create_table import column_type
    from rw_cli.sql.sql_udf import overloads

    if not types and not by_types:
        if record.get("overloads"):
            raise CatalogError(f"function name {name} is not unique",
                               hint="Specify the argument list to select the function unambiguously.")
        return overloads(record)[0]
    wanted = [column_type(t).name for t in types]
    for r in overloads(record):
        if [t for _, t in r["args"]] == wanted:
            return r
    raise CatalogError(f"function not found: {name}({', '.join(wanted)})")


def function_users(catalog, name: str) -> list:
    """The relations whose definition calls the SQL function `name`, oldest first."""
    from rw_cli.sql.sql_udf import functions_called

    return [rel for rel in catalog.in_creation_order()
            if name in functions_called(rel.definition, catalog.functions)]


def show_create_rows(session, name: str) -> list[list[str]]:
    """SHOW CREATE FUNCTION's rows, one per function of the name: the qualified name and the
    CREATE FUNCTION."""
    from rw_cli.sql.sql_udf import create_sql, overloads

    bare = name.rpartition(".")[2]
    record = session.catalog.functions.get(bare)
    if record is None:
        raise CatalogError(f"function not found: {name}")
    rows = [[f"{r.get('schema', 'public')}.{bare}", create_sql(bare, r)] for r in overloads(record)]
    return sorted(rows, key=lambda row: row[1])
