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
their schema. Functions of one name with other argument types (overloads) are kept in the
first one's "overloads" list; a call takes the one whose parameter types its arguments'
types match best (arguments whose type is not known before binding match any).
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


def stored_type(name: str):
    """A type as the catalog names it (structs and arrays carry their inner types)."""
    from rw_cli.meta.catalog import type_from_name

    return type_from_name(name)


def function_body(record: dict) -> exp.Expression:
    """What a SQL function's body computes: an expression, or a one-column query (a Select)."""
    from rw_cli.sql.dialect import RwDialect

    import sqlglot

    text = record["body"].strip().rstrip(";").strip()
    try:
        tree = sqlglot.parse_one(text, read=RwDialect)
    except sqlglot.errors.ParseError as e:
        detail = str(e).splitlines()[0] if str(e) else "syntax error"
        if text and text[-1] in "+-*/%^<>=|&,(":  # cut short after an operator: RisingWave's words
            raise BindError(f"syntax error in the function body: {text}: expected an expression, found: EOF",
                            hint=detail) from None
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


def _as_written_call(node: exp.Func, functions: dict[str, dict]) -> exp.Expression:
    """A call the parser read as a function it knows (`median(x)`) that names a user's
    function: the user's, as an anonymous call of its written name (a user's function is
    found before a built-in one, as RisingWave's binder finds it)."""
    from rw_cli.sql.dialect import WRITTEN_NAME

    name = node.meta.get(WRITTEN_NAME)
    if not name or name not in functions or isinstance(node, (exp.Anonymous, exp.Window)):
        return node
    args: list[exp.Expression] = []
    for key in node.arg_types:
        value = node.args.get(key)
        for v in value if isinstance(value, list) else [value]:
            if isinstance(v, exp.Expression):
                args.append(v)
    call = exp.Anonymous(this=name, expressions=args)
    node.replace(call)
    return call


def _calls(tree: exp.Expression, functions: dict[str, dict]) -> list[exp.Expression]:
    """Calls of SQL functions: `f(...)`, and `s.f(...)` (the Dot around it)."""
    out = []
    for node in list(tree.find_all(exp.Func)):
        if not isinstance(node, exp.Anonymous) and node.meta.get("written_name") in functions:
            _as_written_call(node, functions)
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
            if isinstance(call.parent, exp.Table) and call.arg_key == "this":
                call.parent.replace(table_function_source(call.parent, fn, functions[fn.name.lower()], catalog))
                continue
            out = inline_call(fn, functions[fn.name.lower()], catalog)
            if isinstance(call.parent, exp.Select) and call.arg_key == "expressions":
                out = exp.Alias(this=out, alias=exp.to_identifier(fn.name.lower()))  # named after the function
            if call is tree:
                return out
            call.replace(out)
    raise BindError("SQL functions call each other too deeply")


def overloads(record: dict) -> list[dict]:
    """The functions of one name: the catalog's record and its overloads."""
    first = {k: v for k, v in record.items() if k != "overloads"}
    return [first, *record.get("overloads", [])]


def arg_types(record: dict) -> tuple[str, ...]:
    return tuple(t for _, t in record["args"])


def choose_overload(call: exp.Anonymous, record: dict, catalog=None) -> dict:
    """The overload a call means: of those taking as many arguments, the one whose parameter
    types match the most of the arguments' known types (the first made on a tie)."""
    candidates = [r for r in overloads(record) if len(r["args"]) == len(call.expressions)] or overloads(record)
    if len(candidates) == 1:
        return candidates[0]
    known = [_known_type(a, call, catalog) for a in call.expressions]

    def score(r: dict) -> tuple[int, int]:
        exact = sum(1 for k, t in zip(known, arg_types(r)) if k == t)
        family = sum(1 for k, t in zip(known, arg_types(r)) if k is not None and _same_family(k, t))
        return exact, family

    return max(candidates, key=score)


_NUMBER_FAMILY = {"smallint", "integer", "bigint", "numeric", "real", "double precision"}


def _same_family(a: str, b: str) -> bool:
    return a == b or (a in _NUMBER_FAMILY and b in _NUMBER_FAMILY)


def _known_type(arg: exp.Expression, call: exp.Expression, catalog) -> str | None:
    """An argument's type where it shows before binding: a cast, a literal, a table's column."""
    from rw_cli.common.types import DataType

    while isinstance(arg, exp.Paren):
        arg = arg.this
    if isinstance(arg, exp.Cast):
        try:
            return DataType.from_sql(arg.to.sql(dialect="postgres")).name
        except Exception:  # noqa: BLE001 - a type the catalog does not name: unknown
            return None
    if isinstance(arg, exp.Literal):
        if arg.is_string:  # of unknown type: PostgreSQL prefers the string category for it
            return "character varying"
        return "integer" if arg.this.lstrip("-").isdigit() else "numeric"
    if isinstance(arg, exp.Neg):
        return _known_type(arg.this, call, catalog)
    if isinstance(arg, exp.Column) and catalog is not None:
        select = call.find_ancestor(exp.Select)
        for source in _from_tables(select):
            if arg.table and arg.table.lower() != source.alias_or_name.lower():
                continue
            rel = _relation(catalog, source)
            for c in (rel.columns if rel is not None else []):
                if c.name.lower() == arg.name.lower():
                    return c.type.name
    return None


def _from_tables(select: exp.Select | None) -> list[exp.Table]:
    if select is None:
        return []
    items = [select.args.get("from") or select.args.get("from_"), *(select.args.get("joins") or [])]
    return [i.this for i in items if i is not None and isinstance(i.this, exp.Table)
            and isinstance(i.this.this, exp.Identifier)]


def table_function_source(table: exp.Table, call: exp.Anonymous, record: dict, catalog=None) -> exp.Expression:
    """`FROM f(args) [AS a [(cols)]]` of a function: its body's rows as a subquery, its
    columns named as the function's RETURNS TABLE (or after the function) unless the alias
    names them. A scalar function's one value is one row."""
    record = choose_overload(call, record, catalog)
    name = call.name.lower()
    value = inline_call(call, record, catalog, as_rows=True)
    declared = record.get("table") or [[name, record["returns"]]]
    columns = [c for c, _ in declared]
    alias = table.args.get("alias")
    if alias is not None and alias.columns:
        columns = [c.name for c in alias.columns] + columns[len(alias.columns):]
    if not isinstance(value, exp.Subquery):  # an expression: one row
        value = exp.Subquery(this=exp.select(value))
    query = value.this
    if len(declared) > 1 and len(query.expressions) == 1:  # one struct of the columns
        inner = exp.Subquery(this=query, alias=exp.TableAlias(this=exp.to_identifier("__row"),
                                                             columns=[exp.to_identifier("__s")]))
        fields = [exp.alias_(exp.Dot(this=exp.paren(exp.column("__s", "__row")), expression=exp.to_identifier(f)), c)
                  for (f, _), c in zip(declared, columns)]
        query = exp.select(*fields).from_(inner)
    else:
        types = [t for _, t in declared]
        inner = exp.Subquery(this=query, alias=exp.TableAlias(
            this=exp.to_identifier("__row"), columns=[exp.to_identifier(f"__c{i}") for i in range(len(types))]))
        query = exp.select(*[exp.alias_(exp.Cast(this=exp.column(f"__c{i}", "__row"), to=exp.DataType.build(
            stored_type(t).duckdb(), dialect=duckdb_dialect())), c)
            for i, (t, c) in enumerate(zip(types, columns))]).from_(inner)
    table_alias = exp.TableAlias(this=exp.to_identifier(alias.name if alias is not None and alias.name else name))
    return exp.Subquery(this=query, alias=table_alias)


def inline_call(call: exp.Anonymous, record: dict, catalog=None, as_rows: bool = False) -> exp.Expression:
    """One call of the SQL function `record` (or of the overload the call means): its body
    over the call's arguments."""
    name = call.name.lower()
    record = choose_overload(call, record, catalog)
    params = record["args"]
    if len(call.expressions) != len(params):
        types = ", ".join(t for _, t in params)
        raise BindError(f"function {name}({types}) called with {len(call.expressions)} arguments")
    args = [_cast_to(a.copy(), t) for a, (_, t) in zip(call.expressions, params)]
    ret = stored_type(record["returns"])
    if record.get("language") == "python":
        return _python_call(call, name, record, args, ret, as_rows)
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
        if as_rows:  # a table function's rows, typed by the caller
            return body
    elif as_rows and record.get("table"):
        return body
    return exp.Cast(this=exp.paren(body) if _is_expression(body) else body,
                    to=exp.DataType.build(ret.duckdb(), dialect=duckdb_dialect()))


def _python_call(call: exp.Expression, name: str, record: dict, args: list[exp.Expression], ret,
                 as_rows: bool) -> exp.Expression:
    """A call of a Python function: of its DuckDB function; a table function's list of rows
    unnested (in FROM, its rows; in a select list, a set-returning call); an aggregate's of
    the group's argument rows gathered by array_agg (under OVER, the window's)."""
    fn_name = python_function(name, record)
    to = exp.DataType.build(ret.duckdb(), dialect=duckdb_dialect())
    if record.get("kind") == "aggregate":
        row = args[0] if len(args) == 1 else exp.Cast(
            this=exp.Anonymous(this="ROW", expressions=args),
            to=exp.DataType.build(_row_type(record), dialect=duckdb_dialect()))
        gathered: exp.Expression = exp.ArrayAgg(this=row)
        window = call.parent if isinstance(call.parent, exp.Window) and call.arg_key == "this" else None
        if window is not None:  # `f(x) OVER (...)`: the window gathers, the function finishes
            gathered = window.copy()
            gathered.set("this", exp.ArrayAgg(this=row))
            window.replace(call)  # the caller replaces the call: the whole window goes
        return exp.Cast(this=exp.Anonymous(this=fn_name, expressions=[gathered]), to=to)
    out = exp.Anonymous(this=fn_name, expressions=args)
    if record.get("table"):
        rows = exp.Unnest(expressions=[out])
        return exp.Subquery(this=exp.select(rows)) if as_rows else rows
    return exp.Cast(this=out, to=to)


def _json_as_text(duck_type: str) -> str:
    """A DuckDB type with its (nested) JSON as VARCHAR: what a Python function exchanges (the
    call's cast turns the text back into JSON)."""
    import re

    return re.sub(r'(?<!")\bJSON\b(?!")', "VARCHAR", duck_type)


def _marked_arrow(dt):
    """`dt`'s Arrow type with each nested jsonb field marked (the engine writes those fields'
    Python values as JSON text)."""
    import pyarrow as pa

    from rw_cli.common.types import JSONB_FIELD_METADATA

    if dt.is_list:  # (first: a list of structs is named `struct<...>[]`)
        inner = dt.inner[0]
        return pa.list_(pa.field("item", _marked_arrow(inner),
                                 metadata=JSONB_FIELD_METADATA if inner.name == "jsonb" else None))
    if dt.is_struct:
        return pa.struct([pa.field(n, _marked_arrow(t), metadata=JSONB_FIELD_METADATA if t.name == "jsonb" else None)
                          for n, t in zip(dt.field_names, dt.inner)])
    return dt.arrow()


def _row_type(record: dict) -> str:
    """The DuckDB struct of an aggregate's argument row (fields v1, v2, ...: what the engine's
    function of the gathered rows is declared to take)."""
    return "STRUCT(" + ", ".join(f"v{i + 1} {stored_type(t).duckdb()}" for i, (_, t) in enumerate(record["args"])) + ")"


def python_function(name: str, record: dict) -> str:
    """The DuckDB name of a Python function, registered with the engine (once per body)."""
    from rw_cli.common.types import DataType
    from rw_cli.engine import python_udf

    def typed(t: str) -> tuple[str, object, bool]:
        dt = stored_type(t)
        if dt.name == "jsonb":  # passed as its text (DuckDB's JSON is an Arrow extension type)
            return "VARCHAR", DataType.from_sql("varchar").arrow(), True
        return _json_as_text(dt.duckdb()), _marked_arrow(dt), False

    kind = record.get("kind") or ("table" if record.get("table") else "scalar")
    ret = typed(record["returns"])
    if kind == "table":  # the list of the rows it yields
        element = stored_type(record["returns"])
        listed = DataType(element.name + "[]", inner=(element,))
        ret = (_json_as_text(listed.duckdb()), _marked_arrow(listed), False)
    try:
        return python_udf.register(name, record["body"], [typed(t) for _, t in record["args"]], ret, kind)
    except python_udf.PythonUdfError as e:
        raise BindError(str(e)) from None


def _qualify_outer(arg: exp.Expression, call: exp.Expression, shadowed: set[str], catalog) -> exp.Expression:
    """`arg` with its bare columns that the body's FROM would capture (a column of the same
    name) qualified by the caller's FROM item that has them, so that they keep meaning the
    caller's columns inside the body's subquery."""
    if catalog is None:
        return arg
    owners: dict[str, list[str]] = {}
    for source in _from_tables(call.find_ancestor(exp.Select)):
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


def _cast_to(value: exp.Expression, type_name: str) -> exp.Expression:
    """`value::t` for a parameter of SQL type `t`, written as a query would write it, so that
    the body is typed as the query around it is (a numeric stays ours, not its DuckDB form:
    `$1 + $2` over a double and a numeric is a double); DuckDB's form where the name does not
    parse as one."""
    import sqlglot

    from rw_cli.sql.dialect import RwDialect

    try:
        cast = sqlglot.parse_one(f"CAST(NULL AS {type_name})", read=RwDialect)
    except sqlglot.errors.ParseError:
        cast = None
    if isinstance(cast, exp.Cast):
        cast.set("this", value)
        return cast
    return exp.Cast(this=value, to=exp.DataType.build(stored_type(type_name).duckdb(), dialect=duckdb_dialect()))


def probe_query(name: str, record: dict, catalog=None) -> exp.Select:
    """`SELECT <body over NULL::t1, ...>`: the query whose binding checks a new function's
    body (its parameters and the functions it calls exist) and whose type is its result's.
    The function is not in the catalog yet, so a body that calls itself calls a function
    that does not exist, as RisingWave reports it. A table function's: `SELECT * FROM f(...)`."""
    nulls = [_cast_to(exp.null(), t) for _, t in record["args"]]
    call = exp.Anonymous(this=name, expressions=nulls)
    if record.get("table"):
        source = table_function_source(exp.Table(this=call), call, record, catalog)
        return exp.select(exp.Star()).from_(source)
    body = inline_call(call, record, catalog)
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
    return f"{name}({','.join(arg_types(record))})"


def create_sql(name: str, record: dict) -> str:
    """The CREATE FUNCTION that SHOW CREATE FUNCTION shows (a one-column table function's
    column named `column`, as RisingWave shows it)."""
    args = ", ".join(f"{n} {t}" if n else t for n, t in record["args"])
    table = record.get("table")
    if table:
        cols = [["column", table[0][1]]] if len(table) == 1 else table
        returns = "TABLE (" + ", ".join(f"{c} {t}" for c, t in cols) + ")"
    else:
        returns = record["returns"]
    language = record.get("language", "sql")
    return f"CREATE FUNCTION {name}({args}) RETURNS {returns} LANGUAGE {language} AS $${record['body']}$$"
