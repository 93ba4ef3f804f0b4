"""PostgreSQL's jsonb functions and operators on DuckDB's JSON (jsonb is stored as JSON text).

- `rewrite_jsonb(node)`: a scalar function or operator of the type-annotated PostgreSQL tree
  -> DuckDB's JSON functions (`rw_cli.sql.functions.rewrite_function` calls it).
- `expand_jsonb_table_functions(tree)`: the set-returning ones (jsonb_each,
  jsonb_array_elements, jsonb_object_keys, ...) -> `unnest` of a list, in the select list
  and in FROM, before binding or planning (`rw_cli.sql.expand`), so that batch queries and
  the stream planner's project-set see the same unnest.
"""
from __future__ import annotations

from collections.abc import Callable

from sqlglot import exp

from rw_cli.sql.duckdb_dialect import duckdb_dialect
from rw_cli.sql.agg_wrappers import aggregate_result

T = exp.DataType.Type
_JSON = {T.JSON, T.JSONB}


def _fn(name: str, *args: exp.Expression) -> exp.Anonymous:
    return exp.Anonymous(this=name, expressions=list(args))


def _type(node: exp.Expression):
    t = getattr(node, "type", None)
    return t.this if t is not None else None


def _json(node: exp.Expression) -> exp.Expression:
    return exp.Cast(this=node, to=exp.DataType.build("JSON"))


def _text(node: exp.Expression) -> exp.Expression:
    return exp.Cast(this=node, to=exp.DataType.build("VARCHAR"))


def _key_text(key: exp.Expression, text_of) -> exp.Expression:
    """An object key as RisingWave writes a value of its type as text (`0` for a float 0,
    `\\x00ff` for bytea, timestamptz with `+00:00`: `text_of`); a boolean as `true` / `false`."""
    if _type(key) == T.BOOLEAN or isinstance(key, exp.Boolean):
        return _text(key)
    return text_of(key)


def _pointer(path: exp.Expression) -> exp.Expression:
    """A PostgreSQL path (text[]: keys, or indexes into arrays) as a JSON pointer
    (`/a/0`): each element escaped (`~` -> `~0`, `/` -> `~1`). A pointer addresses an array
    element by its index and an object member by its key, as PostgreSQL's path does."""
    if isinstance(path, exp.Literal) and path.is_string:
        text = path.this.strip()
        if not (text.startswith("{") and text.endswith("}")):
            from rw_cli.errors import BindError

            raise BindError(f'malformed array literal: "{path.this}"')
        items = [p.strip().strip('"') for p in text[1:-1].split(",")] if text[1:-1].strip() else []
        return exp.Literal.string("".join("/" + p.replace("~", "~0").replace("/", "~1") for p in items))
    if isinstance(path, exp.Array):
        return _pointer_of_list(path)
    return _pointer_of_list(exp.Cast(this=path, to=exp.DataType.build("VARCHAR[]")))


def _pointer_of_list(lst: exp.Expression) -> exp.Expression:
    escaped = _fn("list_transform", lst, exp.Lambda(
        this=_fn("replace", _fn("replace", exp.column("__p"), exp.Literal.string("~"), exp.Literal.string("~0")),
                 exp.Literal.string("/"), exp.Literal.string("~1")),
        expressions=[exp.to_identifier("__p")]))
    joined = _fn("array_to_string", escaped, exp.Literal.string("/"))
    return exp.If(this=exp.EQ(this=_fn("len", lst.copy()), expression=exp.Literal.number(0)),
                  true=exp.Literal.string(""), false=exp.DPipe(this=exp.Literal.string("/"), expression=joined))


def _extract_path(j: exp.Expression, pointer: exp.Expression, as_text: bool) -> exp.Expression:
    """j #> path (as_text: #>>); the empty path is the whole value."""
    if isinstance(pointer, exp.Literal) and pointer.this == "":
        return _fn("pg_jsonb_text", _json(j)) if as_text else _json(j)
    member = _fn("json_extract", _json(j), pointer)
    return _fn("pg_jsonb_text", member) if as_text else member


def _is_json(node: exp.Expression) -> bool:
    return _type(node) in _JSON


_SCALAR_FUNCTIONS = {"jsonb_strip_nulls", "jsonb_set", "jsonb_array_length", "to_jsonb", "to_json", "jsonb_build_object", "json_build_object", "jsonb_build_array",
                     "json_build_array", "jsonb_extract_path", "jsonb_extract_path_text", "json_extract_path",
                     "json_extract_path_text", "jsonb_exists", "jsonb_exists_any", "jsonb_exists_all",
                     "jsonb_concat", "jsonb_contains", "jsonb_contained", "jsonb_path_exists", "jsonb_path_match",
                     "jsonb_path_query_array", "jsonb_path_query_first", "jsonb_pretty"}


_INTS = {T.TINYINT, T.SMALLINT, T.INT, T.BIGINT}
_BYTES = {T.VARBINARY, T.BINARY, T.BLOB}


def _member_path(key: exp.Expression) -> exp.Expression:
    """The path of `j -> key`: a key of an object (text), or an index into an array
    (integer; from the end if negative)."""
    if isinstance(key, exp.JSONPath):
        return exp.Literal.string(key.sql(dialect=duckdb_dialect()).strip("'"))
    if isinstance(key, exp.Neg) and isinstance(key.this, exp.Literal) and not key.this.is_string:
        return exp.Literal.string(f"$[#-{key.this.this}]")
    if _type(key) in _INTS:
        index = _text(key)
        return exp.If(this=exp.LT(this=key.copy(), expression=exp.Literal.number(0)),
                      true=exp.DPipe(this=exp.Literal.string("$[#"), expression=exp.DPipe(
                          this=index, expression=exp.Literal.string("]"))),
                      false=exp.DPipe(this=exp.Literal.string("$["), expression=exp.DPipe(
                          this=index.copy(), expression=exp.Literal.string("]"))))
    return _pointer_of_list(exp.Array(expressions=[_text(key)]))


def _contains(a: exp.Expression, b: exp.Expression) -> exp.Expression:
    return _fn("pg_jsonb_contains", _text(_json(a)), _text(_json(b)))


_IS_JSON_KINDS = {"SCALAR": "NOT IN", "OBJECT": "OBJECT", "ARRAY": "ARRAY"}


def _is_json_predicate(node: exp.Is) -> exp.Expression:
    """`x IS JSON [VALUE | SCALAR | OBJECT | ARRAY]`: whether the text parses as JSON (of
    that kind)."""
    text = _text(node.this)
    kind = str(node.expression.this or "VALUE").upper()
    valid = _fn("json_valid", text)
    if kind not in _IS_JSON_KINDS:
        return valid
    json_type = _fn("json_type", _json(text.copy()))
    if kind == "SCALAR":
        test = exp.Not(this=exp.In(this=json_type, expressions=[exp.Literal.string("OBJECT"),
                                                               exp.Literal.string("ARRAY")]))
    else:
        test = exp.EQ(this=json_type, expression=exp.Literal.string(kind))
    return exp.Case(ifs=[exp.If(this=exp.Is(this=text.copy(), expression=exp.Null()), true=exp.Null()),
                         exp.If(this=valid, true=test)], default=exp.false())


def _ordered_value(arg: exp.Expression) -> exp.Expression:
    """An aggregate's argument as jsonb embeds it, its ORDER BY kept."""
    if isinstance(arg, exp.Order):
        out = arg.copy()
        out.set("this", _value(arg.this))
        return out
    return _value(arg)


def _jsonb_aggregate(node: exp.Expression) -> exp.Expression | None:
    """jsonb_agg: the list of values as a JSON array (NULL inputs are JSON nulls);
    jsonb_object_agg: the object of the keys' and values' lists, built by a UDF."""
    from rw_cli.sql.dialect import JSONBAgg

    if isinstance(node, JSONBAgg):
        return aggregate_result(_json(_fn("to_json", exp.ArrayAgg(this=_ordered_value(node.this)))))
    if isinstance(node, exp.JSONBObjectAgg):
        value, order = node.expression, None
        if isinstance(value, exp.Order):  # `jsonb_object_agg(k, v ORDER BY x)`: both lists in that order
            value, order = value.this, value.expressions

        def ordered(e: exp.Expression) -> exp.Expression:
            return exp.Order(this=e, expressions=[o.copy() for o in order]) if order else e

        keys = exp.ArrayAgg(this=ordered(_text(node.this)))
        values = exp.ArrayAgg(this=ordered(_text(_fn("to_json", _value(value)))))
        return aggregate_result(_json(_fn("pg_jsonb_object_agg", keys, values)))
    return None


def rewrite_jsonb(node: exp.Expression, text_of: Callable[[exp.Expression], exp.Expression] | None = None
                  ) -> exp.Expression | None:
    """`node` rewritten for DuckDB, or None. `text_of`: a value as varchar in its type's text
    form (rw_cli.sql.functions.output_text; jsonb_build_object's keys), else a cast."""
    agg = _jsonb_aggregate(node)
    if agg is not None:
        return agg
    if isinstance(node, exp.Is) and isinstance(node.expression, exp.JSON):
        return _is_json_predicate(node)
    if isinstance(node, (exp.JSONExtract, exp.JSONExtractScalar)):
        member = _fn("json_extract", _json(node.this), _member_path(node.expression))
        return _fn("pg_jsonb_text", member) if isinstance(node, exp.JSONExtractScalar) else member
    if isinstance(node, exp.JSONBContains) or (isinstance(node, exp.ArrayContainsAll)
                                              and (_is_json(node.this) or _is_json(node.expression))):
        return _contains(node.this, node.expression)
    if isinstance(node, exp.JSONBPathExists):  # j @? path: errors are NULL
        return _path_call("jsonb_path_exists", [node.this, node.expression], silent=True)
    if isinstance(node, exp.MatchAgainst) and len(node.expressions) == 1 and _is_json(node.expressions[0]):
        return _path_call("jsonb_path_match", [node.expressions[0], node.this], silent=True)  # j @@ path
    if isinstance(node, exp.JSONBContainsTopKey):
        return _fn("pg_jsonb_exists", _json(node.this), _text(node.expression))
    if isinstance(node, (exp.JSONBContainsAnyTopKeys, exp.JSONBContainsAllTopKeys)):
        name = "pg_jsonb_exists_any" if isinstance(node, exp.JSONBContainsAnyTopKeys) else "pg_jsonb_exists_all"
        return _fn(name, _json(node.this), exp.Cast(this=node.expression, to=exp.DataType.build("VARCHAR[]")))
    if isinstance(node, exp.JSONBDeleteAtPath):
        return _fn("json_remove", _json(node.this), _pointer(node.expression))
    if isinstance(node, (exp.JSONBExtract, exp.JSONBExtractScalar)):
        return _extract_path(node.this, _pointer(node.expression), isinstance(node, exp.JSONBExtractScalar))
    if isinstance(node, exp.ArrayContainedBy) and (_is_json(node.this) or _is_json(node.expression)):
        return _contains(node.expression, node.this)
    if isinstance(node, exp.DPipe) and _is_json(node.this) and _is_json(node.expression):
        return _json(_fn("pg_jsonb_concat", _json(node.this), _json(node.expression)))
    if isinstance(node, exp.Sub) and _is_json(node.this):
        if _type(node.expression) in {T.TINYINT, T.SMALLINT, T.INT, T.BIGINT}:
            return _json(_fn("pg_jsonb_delete_index", _json(node.this), node.expression))
        return _json(_fn("pg_jsonb_delete_key", _json(node.this), _text(node.expression)))
    if isinstance(node, exp.Anonymous) and node.name.lower() in _SCALAR_FUNCTIONS:
        return _scalar(node.name.lower(), node.expressions, text_of or _text)
    return None


def _value(arg: exp.Expression) -> exp.Expression:
    """An argument embedded in a built object or array (or to_jsonb's) as RisingWave's
    jsonb holds it: jsonb as JSON (a column of jsonb is text to DuckDB, which would embed it
    as a string); numeric as a double (NaN and the infinities as strings), real widened to
    double; timestamps in ISO 8601 (`T`), timestamptz in UTC with `+00:00`."""
    if isinstance(arg, exp.Anonymous) and arg.name.lower() == "row":
        # a row's fields are f1, f2, ... (RisingWave's names for an anonymous row)
        return _fn("struct_pack", *(exp.PropertyEQ(this=exp.to_identifier(f"f{i + 1}"), expression=_value(a))
                                    for i, a in enumerate(arg.expressions)))
    t = _type(arg)
    if t in _JSON:
        return _json(arg)
    if t in _BYTES:
        return exp.DPipe(this=exp.Literal.string("\\x"), expression=_fn("lower", _fn("hex", arg)))
    if t == T.DECIMAL:
        return _fn("json", _fn("rw_num_jsonb", arg))
    if t == T.FLOAT:
        return exp.Cast(this=arg, to=exp.DataType.build("DOUBLE"))
    if t == T.INT256:  # a string: JSON numbers stop short of 256 bits
        return _text(arg)
    if t == T.ARRAY:
        element = arg.type.expressions[0] if arg.type.expressions else None
        if element is not None and element.this in (T.TIMESTAMP, T.TIMESTAMPTZ, T.DECIMAL, T.FLOAT, T.INT256):
            # each element as it is embedded alone (timestamps in ISO 8601, ...)
            x = exp.to_identifier("__x")
            ref = exp.column(x)
            ref.type = element.copy()
            return _fn("list_transform", arg, exp.Lambda(this=_value(ref), expressions=[x]))
        return arg
    if t == T.TIMESTAMP:
        return _fn("replace", _text(arg), exp.Literal.string(" "), exp.Literal.string("T"))
    if t == T.TIMESTAMPTZ:
        utc = _text(_fn("timezone", exp.Literal.string("UTC"), arg))
        return exp.DPipe(this=_fn("replace", utc, exp.Literal.string(" "), exp.Literal.string("T")),
                         expression=exp.Literal.string("+00:00"))
    return arg


def _path_call(name: str, args: list[exp.Expression], silent: bool = False) -> exp.Expression | None:
    """jsonb_path_*(target, path [, vars [, silent]]) as its UDF, the defaults filled in
    (rw_cli.engine.jsonpath_udfs)."""
    if not 2 <= len(args) <= 4:
        return None
    target, path = _json(args[0]), exp.Cast(this=args[1], to=exp.DataType.build("VARCHAR"))
    variables = _json(args[2]) if len(args) > 2 else exp.Literal.string("{}")
    quiet = args[3] if len(args) > 3 else exp.Boolean(this=silent)
    call = _fn(f"pg_{name}", target, path, exp.Cast(this=variables, to=exp.DataType.build("VARCHAR")), quiet)
    if name == "jsonb_path_query":
        return exp.Cast(this=call, to=exp.DataType.build("JSON[]"))
    return _json(call) if name in ("jsonb_path_query_array", "jsonb_path_query_first") else call


def _scalar(name: str, args: list[exp.Expression], text_of=None) -> exp.Expression | None:
    if name.startswith("jsonb_path_"):
        return _path_call(name, args)
    if name == "jsonb_pretty" and len(args) == 1:
        return _fn("pg_jsonb_pretty", _text(_json(args[0])))
    if name in ("to_jsonb", "to_json") and len(args) == 1:
        # RisingWave's to_jsonb(NULL) is the jsonb null, not SQL NULL
        value = _json(args[0]) if _is_json(args[0]) else _fn("to_json", _value(args[0]))
        return _fn("coalesce", value, exp.Cast(this=exp.Literal.string("null"), to=exp.DataType.build("JSON")))
    if name in ("jsonb_build_object", "json_build_object"):
        if len(args) % 2:
            from rw_cli.errors import BindError

            raise BindError("Bind error: argument list must have even number of elements",  # RisingWave's words
                            hint="The arguments of jsonb_build_object() must consist of alternating keys and values.")
        for key in args[::2]:
            if _type(key) in _JSON or _type(key) == T.ARRAY or _type(key) == T.STRUCT \
                    or isinstance(key, exp.Array) or (isinstance(key, exp.Anonymous) and key.name.lower() == "row"):
                from rw_cli.errors import BindError

                raise BindError("key value must be scalar, not array, composite, or json")
        pairs = [a for i in range(0, len(args), 2) for a in (_key_text(args[i], text_of or _text), _value(args[i + 1]))]
        return _fn("json_object", *pairs)
    if name in ("jsonb_build_array", "json_build_array"):
        return _fn("json_array", *(_value(a) for a in args))
    if name in ("jsonb_extract_path", "json_extract_path", "jsonb_extract_path_text", "json_extract_path_text") \
            and args:
        path = exp.Array(expressions=[_text(a) for a in args[1:]])
        pointer = _pointer(path) if len(args) > 1 else exp.Literal.string("")
        return _extract_path(args[0], pointer, name.endswith("_text"))
    if name == "jsonb_exists" and len(args) == 2:
        return _fn("pg_jsonb_exists", _json(args[0]), _text(args[1]))
    if name in ("jsonb_exists_any", "jsonb_exists_all") and len(args) == 2:
        return _fn(f"pg_{name}", _json(args[0]), exp.Cast(this=args[1], to=exp.DataType.build("VARCHAR[]")))
    if name == "jsonb_strip_nulls" and len(args) == 1:
        return _fn("json_strip_nulls", _json(args[0]))
    if name == "jsonb_strip_nulls" and len(args) == 2:  # (j, strip_in_arrays): PostgreSQL 18's
        everywhere = _json(_fn("pg_jsonb_strip_all_nulls", _text(_json(args[0]))))
        return exp.Case(ifs=[exp.If(this=exp.Cast(this=args[1], to=exp.DataType.build("BOOLEAN")), true=everywhere)],
                        default=_fn("json_strip_nulls", _json(args[0].copy())))
    if name == "jsonb_set" and len(args) in (3, 4):
        create = args[3] if len(args) == 4 else exp.true()
        fn = "json_replace" if isinstance(create, exp.Boolean) and not create.this else "json_set"
        return _fn(fn, _json(args[0]), _pointer(args[1]), _json(args[2]))
    if name == "jsonb_array_length" and len(args) == 1:
        return _fn("pg_jsonb_array_length", _json(args[0]))
    if name == "jsonb_concat" and len(args) == 2:
        return _json(_fn("pg_jsonb_concat", _json(args[0]), _json(args[1])))
    if name == "jsonb_contains" and len(args) == 2:
        return _contains(args[0], args[1])
    if name == "jsonb_contained" and len(args) == 2:
        return _contains(args[1], args[0])
    return None


# set-returning jsonb functions -> (the lists they unnest, by output column)
def _elements(j: exp.Expression, as_text: bool) -> exp.Expression:
    elements = _fn("pg_jsonb_elements", _json(j))
    return _fn("pg_jsonb_texts", elements) if as_text else elements


def _srf_columns(name: str, j: exp.Expression) -> list[tuple[str, exp.Expression]] | None:
    if name in ("jsonb_array_elements", "json_array_elements"):
        return [("value", _elements(j, False))]
    if name in ("jsonb_array_elements_text", "json_array_elements_text"):
        return [("value", _elements(j, True))]
    if name in ("jsonb_object_keys", "json_object_keys"):
        return [(name, _fn("pg_jsonb_keys", _json(j)))]
    if name in ("jsonb_each", "json_each", "jsonb_each_text", "json_each_text"):
        values = _fn("pg_jsonb_members", _json(j))
        if name.endswith("_text"):
            values = _fn("pg_jsonb_texts", values)
        return [("key", _fn("pg_jsonb_each_keys", _json(j.copy()))), ("value", values)]
    return None


def _srf(node: exp.Expression) -> list[tuple[str, exp.Expression]] | None:
    if isinstance(node, exp.Anonymous) and node.name.lower() == "jsonb_path_query":
        call = _path_call("jsonb_path_query", list(node.expressions))
        return None if call is None else [("jsonb_path_query", call)]
    if isinstance(node, exp.Anonymous) and len(node.expressions) == 1:
        return _srf_columns(node.name.lower(), node.expressions[0])
    return None


def is_table_function(node: exp.Expression) -> bool:
    """Whether `node` is one of the set-returning jsonb functions (jsonb_each, ...): in FROM,
    a relation of its own columns (key and value; jsonb_to_recordset's declared ones), not
    one column named after it."""
    return _srf(node) is not None or (isinstance(node, exp.Anonymous) and node.name.lower() in _TO_RECORD)


def expand_jsonb_table_functions(tree: exp.Expression) -> exp.Expression:
    """jsonb_array_elements(j) and its kin as `unnest` of a list: in the select list (one
    column; jsonb_each's a record of key and value), and in FROM as a subquery of one unnest per output column (`jsonb_each`: key
    and value, unnested side by side)."""
    for table in list(tree.find_all(exp.Table)):
        if isinstance(table.this, exp.Anonymous) and table.this.name.lower() in _TO_RECORD:
            table.replace(_to_record(table))
            continue
        columns = _srf(table.this)
        if columns is not None:
            alias = table.args.get("alias")
            table.replace(_from_item(table, columns))
            if len(columns) == 1 and alias is not None and alias.name and not alias.columns:
                _whole_row_is_value(tree, alias.name, columns[0][0])
    for node in list(tree.find_all(exp.Anonymous)):
        columns = _srf(node)
        if columns is None or isinstance(node.parent, exp.Table):
            continue
        records = "pg_jsonb_each_text_records" if node.name.lower().endswith("_text") else "pg_jsonb_each_records"
        lst = columns[0][1] if len(columns) == 1 else _fn(records, _json(node.expressions[0]))
        unnest = exp.Unnest(expressions=[lst])
        if isinstance(node.parent, exp.Select) and node.arg_key == "expressions":
            node.replace(exp.Alias(this=unnest, alias=exp.to_identifier(node.name.lower())))
        else:
            node.replace(unnest)
    return tree


_TO_RECORD = ("jsonb_to_recordset", "json_to_recordset", "jsonb_to_record", "json_to_record")


def _to_record(table: exp.Table) -> exp.Expression:
    """`jsonb_to_recordset(j) AS r(a int, b text)`: a row per element of j's array (one row of
    j itself for jsonb_to_record), each column the element's member of its name as its type
    (NULL when missing): a subquery over jsonb_array_elements."""
    from rw_cli.errors import BindError
    from rw_cli.sql.dialect import parse_statement

    call = table.this
    alias = table.args.get("alias")
    if len(call.expressions) != 1:
        raise BindError(f"function {call.name.lower()} takes one argument")
    defs = list(alias.columns) if alias is not None else []
    if not defs:
        raise BindError("a column definition list is required for functions returning \"record\"")
    items = []
    for d in defs:
        if not isinstance(d, exp.ColumnDef) or d.args.get("kind") is None:
            raise BindError(f'table alias column "{d.name}" is missing a type')
        name, kind = d.name, d.args["kind"]
        key = "'" + name.replace("'", "''") + "'"
        op = "->" if kind.this in _JSON else "->>"
        items.append(f'CAST(__r.__e {op} {key} AS {kind.sql(dialect="postgres")}) AS "{name.replace(chr(34), chr(34) * 2)}"')
    if call.name.lower().endswith("recordset"):
        source = "jsonb_array_elements(__rw_record_arg()) AS __r(__e)"
    else:
        source = "(SELECT CAST(__rw_record_arg() AS JSONB) AS __e) AS __r"
    query = parse_statement(f"SELECT {', '.join(items)} FROM {source}")
    for node in list(query.find_all(exp.Anonymous)):
        if node.name.lower() == "__rw_record_arg":
            node.replace(call.expressions[0].copy())
    query = expand_jsonb_table_functions(query)
    name = alias.name if alias is not None and alias.name else call.name.lower()
    return exp.Subquery(this=query, alias=exp.TableAlias(this=exp.to_identifier(name),
                                                         columns=[exp.to_identifier(d.name) for d in defs]))


def _whole_row_is_value(tree: exp.Expression, alias: str, column: str) -> None:
    """`SELECT e->>'k' FROM jsonb_array_elements(j) e`: a function of one result column, so
    its alias used as a value is that column (PostgreSQL's whole-row reference of a function
    returning a base type), not a one-field record."""
    for c in list(tree.find_all(exp.Column)):
        if not c.table and c.name == alias and not isinstance(c.parent, exp.Dot):
            value = exp.column(column, table=alias)
            in_list = isinstance(c.parent, exp.Select) and c.arg_key == "expressions"
            c.replace(exp.alias_(value, alias) if in_list else value)


def _from_item(table: exp.Table, columns: list[tuple[str, exp.Expression]]) -> exp.Expression:
    alias = table.args.get("alias")
    name = alias.name if alias is not None and alias.name else table.this.name.lower()
    names = [c.name for c in alias.columns] if alias is not None and alias.columns else []
    names += [n for n, _ in columns[len(names):]]
    if len(columns) == 1 and len(names) == 1 and not (alias is not None and alias.columns):
        names = [columns[0][0] if columns[0][0] != table.this.name.lower() else name]
    select = exp.select(*(exp.Alias(this=exp.Unnest(expressions=[lst]), alias=exp.to_identifier(n))
                          for (_, lst), n in zip(columns, names)))
    alias = exp.TableAlias(this=exp.to_identifier(name), columns=[exp.to_identifier(n) for n in names])
    if isinstance(table.parent, exp.Join) and table.this.find(exp.Column):
        # `FROM t, jsonb_each(t.doc)`: a function in FROM reads the items left of it (it is
        # LATERAL implicitly in PostgreSQL); the subquery it becomes must say so
        return exp.Lateral(this=exp.Subquery(this=select), alias=alias)
    return exp.Subquery(this=select, alias=alias)
