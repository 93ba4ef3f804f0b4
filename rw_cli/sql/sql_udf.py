"""User functions (CREATE FUNCTION ... LANGUAGE sql | python), inlined where they are called.

A body is one expression (`SELECT expr`, `RETURN expr`, or a bare `expr`) or a query of one
column (`SELECT count(*) FROM unnest(x)`, `SELECT v FROM t`). A call becomes the expression
(or the query as a scalar subquery) with the arguments, cast to the parameter types, in
place of the parameters, and the whole cast to the return type, so batch queries and
materialized views compute it as if it were written out. As in RisingWave, a column of the
body's FROM takes precedence over a parameter of the same name, and a function may call
other SQL functions but not itself.

A Python function (LANGUAGE python, RisingWave's embedded Python UDF) is a call of the
DuckDB function `rw_cli.engine.python_udf` makes of its body.

The catalog keeps each function as {"args": [[name or None, type], ...], "returns": type,
"body": text[, "language": "python"]} under its name; functions share one namespace whatever
their schema.
"""
from __future__ import annotations

from sqlglot import exp

from rw_cli.errors import BindError, NotSupported
from rw_cli.sql.duckdb_dialect import duckdb_dialect

_MAX_DEPTH = 16

# the columns a FROM item of these functions has when no alias names them
_FUNCTION_COLUMNS = {
    "jsonb_each": ("key", "value"), "jsonb_each_text": ("key", "value"), "json_each": ("key", "value"),
    "jsonb_array_elements": ("value",), "jsonb_array_elements_text": ("value",),
}


def function_body(record: dict) -> exp.Expression:
    """What a SQL function's body computes: an expression, or a one-column query (a Select)."""
    from rw_cli.sql.dialect import RwDialect

    import sqlglot

    text = record["body"].strip().rstrip(";").strip()
    try:
        tree = sqlglot.parse_one(text, read=RwDialect)
    except sqlglot.errors.ParseError as e:
        detail = str(e).splitlines()[0] if str(e) else "syntax error"
        raise BindError(f"syntax error in the function body: {text}", hint=detail) from None
    if isinstance(tree, exp.Select):
        if len(tree.expressions) != 1:
            raise NotSupported("SQL functions that return more than one column")
        if not _is_query(tree):
            return tree.expressions[0].unalias()
        return tree
    if isinstance(tree, (exp.Union, exp.Except, exp.Intersect)):
        return tree
    if isinstance(tree, (exp.Insert, exp.Update, exp.Delete, exp.Create, exp.Drop, exp.Command)):
        raise NotSupported("SQL functions whose body is not a query")
    return tree


def _is_query(select: exp.Select) -> bool:
    return any(select.args.get(k) for k in ("from", "from_", "where", "group", "joins", "having", "order",
                                             "limit", "with", "distinct"))


def unnamed_parameters(body: exp.Expression) -> list[int]:
    """The numbers of the `$n` a body names."""
    return [int(p.this.name) for p in body.find_all(exp.Parameter, bfs=False)
            if p.this is not None and str(p.this.name).isdigit()]


def from_columns(query: exp.Expression, catalog) -> set[str]:
    """The names a query's FROM items give their columns (which shadow parameters)."""
    names: set[str] = set()
    for select in query.find_all(exp.Select):
        for table in select.find_all(exp.Table):
            alias = table.args.get("alias")
            if alias is not None:
                names.update(c.name.lower() for c in alias.columns)
            fn = table.this
            if isinstance(fn, exp.Func):
                fname = (fn.name if isinstance(fn, exp.Anonymous) else fn.sql_name()).lower()
                names.update(_FUNCTION_COLUMNS.get(fname, ()))
                if alias is not None and not alias.columns:
                    names.add(alias.name.lower())  # a one-column function named by its alias
                names.add(fname)
            elif isinstance(fn, exp.Identifier) and catalog is not None:
                rel = _relation(catalog, table)
                if rel is not None:
                    names.update(c.name.lower() for c in rel.columns)
        for unnest in select.find_all(exp.Unnest):
            alias = unnest.args.get("alias")
            if alias is not None:
                names.update(c.name.lower() for c in alias.columns)
                names.add(alias.name.lower())
            names.add("unnest")
    return names


def _relation(catalog, table: exp.Table):
    try:
        return catalog.get(catalog.qualified(table.name, table.text("db") or None))
    except Exception:  # noqa: BLE001 - an unknown schema: the binder reports it
        return None


def _call_name(node: exp.Expression) -> str | None:
    if isinstance(node, exp.Anonymous):
        return node.name.lower()
    return None


def _calls(tree: exp.Expression, functions: dict[str, dict]) -> list[exp.Expression]:
    """Calls of SQL functions: `f(...)`, and `s.f(...)` (the Dot around it)."""
    out = []
    for node in tree.find_all(exp.Anonymous):
        if node.name.lower() not in functions:
            continue
        parent = node.parent
        if isinstance(parent, exp.Dot) and parent.expression is node:
            out.append(parent)
        else:
            out.append(node)
    return out


def inline_sql_functions(tree: exp.Expression, functions: dict[str, dict], catalog=None) -> exp.Expression:
    """Replace each call of a SQL function by its body, with the arguments (cast to the
    parameter types) in place of the parameters, cast to the return type."""
    if not functions:
        return tree
    for _ in range(_MAX_DEPTH):  # a function may call another
        calls = _calls(tree, functions)
        if not calls:
            return tree
        for call in calls:
            fn = call.expression if isinstance(call, exp.Dot) else call
            out = inline_call(fn, functions[fn.name.lower()], catalog)
            if isinstance(call.parent, exp.Select) and call.arg_key == "expressions":
                out = exp.alias_(out, fn.name.lower())  # the select item is named after the function
            if call is tree:
                return out
            call.replace(out)
    raise BindError("SQL functions call each other too deeply")


def inline_call(call: exp.Anonymous, record: dict, catalog=None) -> exp.Expression:
    """One call of the SQL function `record`: its body over the call's arguments."""
    from rw_cli.common.types import DataType

    name = call.name.lower()
    params = record["args"]
    if len(call.expressions) != len(params):
        types = ", ".join(t for _, t in params)
        raise BindError(f"function {name}({types}) called with {len(call.expressions)} arguments")
    args = [exp.Cast(this=a.copy(), to=exp.DataType.build(DataType.from_sql(t).duckdb(), dialect=duckdb_dialect()))
            for a, (_, t) in zip(call.expressions, params)]
    ret = DataType.from_sql(record["returns"])
    if record.get("language") == "python":
        fn = exp.Anonymous(this=python_function(name, record), expressions=args)
        return exp.Cast(this=fn, to=exp.DataType.build(ret.duckdb(), dialect=duckdb_dialect()))
    body = function_body(record)
    shadowed = from_columns(body, catalog) if not _is_expression(body) else set()
    if shadowed:
        args = [_qualify_outer(a, call, shadowed, catalog) for a in args]
    names = {n.lower(): i for i, (n, _) in enumerate(params) if n and n.lower() not in shadowed}

    def subst(n: exp.Expression):
        if isinstance(n, exp.Column) and not n.table and n.name.lower() in names:
            return exp.paren(args[names[n.name.lower()]].copy())
        if isinstance(n, exp.Parameter) and n.this is not None and str(n.this.name).isdigit():
            i = int(n.this.name) - 1
            if 0 <= i < len(args):
                return exp.paren(args[i].copy())
        return n

    if not _is_expression(body):
        _private_aliases(body, name)
    body = body.transform(subst)
    if not _is_expression(body):
        body = exp.Subquery(this=body)
    return exp.Cast(this=exp.paren(body) if _is_expression(body) else body,
                    to=exp.DataType.build(ret.duckdb(), dialect=duckdb_dialect()))


def python_function(name: str, record: dict) -> str:
    """The DuckDB name of a Python function, registered with the engine (once per body)."""
    from rw_cli.common.types import DataType
    from rw_cli.engine import python_udf

    def typed(t: str) -> tuple[str, object, bool]:
        dt = DataType.from_sql(t)
        if dt.name == "jsonb":  # passed as its text (DuckDB's JSON is an Arrow extension type)
            return "VARCHAR", DataType.from_sql("varchar").arrow(), True
        return dt.duckdb(), dt.arrow(), False

    try:
        return python_udf.register(name, record["body"], [typed(t) for _, t in record["args"]],
                                   typed(record["returns"]))
    except python_udf.PythonUdfError as e:
        raise BindError(str(e)) from None


def _qualify_outer(arg: exp.Expression, call: exp.Expression, shadowed: set[str], catalog) -> exp.Expression:
    """`arg` with its bare columns that the body's FROM would capture (a column of the same
    name) qualified by the caller's FROM item that has them, so that they keep meaning the
    caller's columns inside the body's subquery."""
    select = call.find_ancestor(exp.Select)
    if select is None or catalog is None:
        return arg
    owners: dict[str, list[str]] = {}
    for table in [select.args.get("from") or select.args.get("from_"), *(select.args.get("joins") or [])]:
        source = table.this if table is not None else None
        if not isinstance(source, exp.Table) or not isinstance(source.this, exp.Identifier):
            continue
        rel = _relation(catalog, source)
        if rel is not None:
            for c in rel.columns:
                owners.setdefault(c.name.lower(), []).append(source.alias_or_name)
    for col in list(arg.find_all(exp.Column)):
        if not col.table and col.name.lower() in shadowed and len(owners.get(col.name.lower(), [])) == 1:
            col.set("table", exp.to_identifier(owners[col.name.lower()][0]))
    return arg


def _private_aliases(body: exp.Expression, name: str) -> None:
    """The body's tables under names of their own (`t` -> `t AS __f_t`), so that a caller's
    column qualified by the same table name is not captured by the body."""
    renamed: dict[str, str] = {}
    for table in body.find_all(exp.Table):
        if not isinstance(table.this, exp.Identifier):
            continue
        old = table.alias_or_name
        new = f"__{name}_{old}"
        renamed[old.lower()] = new
        alias = table.args.get("alias")
        if alias is not None:
            alias.set("this", exp.to_identifier(new))  # its column list stays
        else:
            table.set("alias", exp.TableAlias(this=exp.to_identifier(new)))
    for col in body.find_all(exp.Column):
        if col.table and col.table.lower() in renamed:
            col.set("table", exp.to_identifier(renamed[col.table.lower()]))


def _is_expression(body: exp.Expression) -> bool:
    return not isinstance(body, (exp.Select, exp.Union, exp.Except, exp.Intersect, exp.Subquery))


def probe_query(name: str, record: dict, catalog=None) -> exp.Select:
    """`SELECT <body over NULL::t1, ...>`: the query whose binding checks a new function's
    body (its parameters and the functions it calls exist) and whose type is its result's.
    The function is not in the catalog yet, so a body that calls itself calls a function
    that does not exist, as RisingWave reports it."""
    from rw_cli.common.types import DataType

    nulls = [exp.Cast(this=exp.null(), to=exp.DataType.build(DataType.from_sql(t).duckdb(), dialect=duckdb_dialect()))
             for _, t in record["args"]]
    body = inline_call(exp.Anonymous(this=name, expressions=nulls), record, catalog)
    return exp.select(exp.alias_(body.this if isinstance(body, exp.Cast) else body, name))


def functions_called(definition: str, functions: dict[str, dict]) -> set[str]:
    """The SQL functions a relation's definition calls (directly)."""
    if not definition or not functions:
        return set()
    import sqlglot

    from rw_cli.sql.dialect import RwDialect

    try:
        trees = sqlglot.parse(definition, read=RwDialect)
    except sqlglot.errors.ParseError:
        return set()
    return {n.name.lower() for t in trees if t is not None for n in t.find_all(exp.Anonymous)
            if n.name.lower() in functions}


def signature(name: str, record: dict) -> str:
    """`add(integer,integer)`, as RisingWave names a function in its messages."""
    return f"{name}({','.join(t for _, t in record['args'])})"


def create_sql(name: str, record: dict) -> str:
    """The CREATE FUNCTION that SHOW CREATE FUNCTION shows."""
    args = ", ".join(f"{n} {t}" if n else t for n, t in record["args"])
    body = record["body"]
    language = record.get("language", "sql")
    return f"CREATE FUNCTION {name}({args}) RETURNS {record['returns']} LANGUAGE {language} AS $${body}$$"
