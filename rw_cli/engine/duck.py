"""The one place that imports DuckDB: batch queries and vectorized expression evaluation.

Stream executors evaluate their expressions here too (`SELECT <exprs> FROM chunk`), so an
expression computed by an MV and by a batch SELECT goes through the same engine.
"""
from __future__ import annotations

import itertools
import re
import threading

import duckdb
import pyarrow as pa

from rw_cli.common import progress
from rw_cli.common.lazy_regex import lazy_regex
from rw_cli.common.types import JSONB_FIELD_METADATA
from rw_cli.engine import duck_functions, python_udf
from rw_cli.errors import ExecutionError, QueryCanceled

_counter = itertools.count()
_local = threading.local()


def open_connection(threads: int = 1) -> duckdb.DuckDBPyConnection:
    """A new DuckDB connection set up as the engine's: UTC, our type aliases (our macros are
    created on it as statements call them, or all at once by duck_functions.install)."""
    con = duckdb.connect(":memory:", config={"threads": threads} if threads else {})
    con.execute("SET TimeZone='UTC'")
    con.execute("SET order_by_non_integer_literal = true")  # PostgreSQL ignores ORDER BY 'x'
    con.execute("CREATE TYPE INT256 AS BIGNUM")  # rw_int256 (rw_cli.common.types)
    # x / 0 is an error, as in PostgreSQL (DuckDB's default); int / int is rewritten to
    # `//` by rw_cli.sql.transpile (the `integer_division` setting would break interval / n).
    return con


def connection() -> duckdb.DuckDBPyConnection:
    con = getattr(_local, "con", None)
    if con is None:
        con = open_connection()
        _local.con = con
        _local.installed = set()  # our macros and UDFs created on it: rw_cli.engine.duck_functions
        _local.settings = {"timezone": "UTC"}
        _local.pinned = {}  # name -> the table registered under it between queries
    return con


def installed_functions() -> frozenset[str]:
    """Our macros and UDFs created so far on this thread's connection (each on first use)."""
    return frozenset(getattr(_local, "installed", ()) if getattr(_local, "con", None) is not None else ())


def _apply(con, settings: dict[str, str] | None) -> None:
    if not settings:
        return
    current = _local.settings
    tz = settings.get("timezone")
    if tz and tz != current.get("timezone"):
        try:
            con.execute(f"SET TimeZone='{tz.replace(chr(39), chr(39) * 2)}'")
        except duckdb.Error as e:
            raise ExecutionError(f'invalid value for parameter "TimeZone": "{tz}"') from e
        current["timezone"] = tz


def query(sql: str, tables: dict[str, pa.Table] | None = None,
          settings: dict[str, str] | None = None, pinned: frozenset[str] | set[str] = frozenset()) -> pa.Table:
    """Run `sql` with each of `tables` visible under its key; return the result as Arrow.
    `settings` (e.g. the session's `timezone`) are applied first.

    The tables named in `pinned` stay registered after the query (the caller keeps them
    unchanged and will pass the same ones again): registering a table costs about as much as
    running a small query, and the next query over the same table skips it."""
    con = connection()
    _apply(con, settings)
    duck_functions.install_used(con, sql, _local.installed)
    python_udf.install_used(con, sql, _local.installed)
    names = []
    kept: dict[str, pa.Table] = _local.pinned
    try:
        for name, table in (tables or {}).items():
            if kept.get(name) is table:
                continue
            con.register(name, table)
            if name in pinned:
                kept[name] = table
            else:
                kept.pop(name, None)
                names.append(name)
        try:
            with progress.interruptible(con.interrupt):  # Ctrl-C, a CancelRequest
                return _result(con.sql(sql)) if _is_query(sql) else _run(con, sql)
        except duckdb.InterruptException:
            raise QueryCanceled() from None
        except duckdb.Error as e:
            raise ExecutionError(_clean_message(e)) from None
    except ExecutionError:
        raise  # DuckDB refused the statement; its connection is as it was
    except BaseException:
        _discard_connection()  # interrupted mid-way: whatever state that left, start clean
        raise
    finally:
        for name in names:
            try:
                con.unregister(name)
            except duckdb.Error:
                pass


def _result(rel: duckdb.DuckDBPyRelation) -> pa.Table:
    """The query's rows as Arrow; its JSON columns (text in Arrow) are marked as such."""
    table = rel.to_arrow_table()
    json_columns = [i for i, t in enumerate(rel.types) if "JSON" in str(t)]
    if not json_columns:
        return table
    schema = table.schema
    for i in json_columns:
        schema = schema.set(i, _mark_json(schema.field(i), rel.types[i]))
    return pa.Table.from_arrays(table.columns, schema=schema)


def _mark_json(field: pa.Field, duck_type) -> pa.Field:
    """`field` with each JSON part of its DuckDB type marked jsonb, nested ones too (a list of
    jsonb, a struct's jsonb field): Arrow holds them as text."""
    if str(duck_type) == "JSON":
        return field.with_metadata(JSONB_FIELD_METADATA)
    if "JSON" not in str(duck_type):
        return field
    t = field.type
    children = [c for _, c in duck_type.children]
    if (pa.types.is_list(t) or pa.types.is_large_list(t)) and children:
        inner = _mark_json(t.value_field, children[0])
        return field.with_type(pa.large_list(inner) if pa.types.is_large_list(t) else pa.list_(inner))
    if pa.types.is_map(t) and len(children) == 2:
        return field.with_type(pa.map_(_mark_json(t.key_field, children[0]), _mark_json(t.item_field, children[1])))
    if pa.types.is_struct(t) and len(children) == t.num_fields:
        return field.with_type(pa.struct([_mark_json(t.field(i), c) for i, c in enumerate(children)]))
    return field


def _discard_connection() -> None:
    con = getattr(_local, "con", None)
    _local.con = None
    _local.pinned = {}
    if con is not None:
        try:
            con.close()
        except duckdb.Error:
            pass


_function_names: frozenset[str] | None = None


def function_names() -> frozenset[str]:
    """Every function and macro name DuckDB answers to here (lower case), ours included:
    a call of any other name is a user's error, worded as PostgreSQL words it."""
    global _function_names
    if _function_names is None:
        rows = connection().execute("SELECT DISTINCT lower(function_name) FROM duckdb_functions()").fetchall()
        _function_names = frozenset(r[0] for r in rows) | duck_functions.names()
    return _function_names | python_udf.names()


_scalar_only: frozenset[str] | None = None


def scalar_only_function_names() -> frozenset[str]:
    """The function names DuckDB knows as scalar functions or macros and not also as table
    functions (lower case), ours included: a call of one in FROM is one row of one value."""
    global _scalar_only
    if _scalar_only is None:
        rows = connection().execute(
            "SELECT lower(function_name), bool_or(function_type IN ('table', 'table_macro')) "
            "FROM duckdb_functions() GROUP BY 1").fetchall()
        tables = {name for name, is_table in rows if is_table}
        _scalar_only = frozenset(name for name, _ in rows if name not in tables) | (duck_functions.names() - tables)
    return _scalar_only


def explain(sql: str, tables: dict[str, pa.Table] | None = None) -> list[str]:
    """DuckDB's physical plan of `sql`, as text lines."""
    out = query(f"EXPLAIN {sql}", tables)
    text = out.column(out.num_columns - 1).to_pylist()
    return [line.rstrip() for chunk in text for line in str(chunk).splitlines() if line.strip()]


def _run(con, sql: str) -> pa.Table:
    result = con.execute(sql)
    try:
        result.fetchall()  # a statement that returns rows must not leave them unread
    except duckdb.InterruptException:
        raise
    except duckdb.Error:
        pass  # it returned none
    return pa.table({})


# comments and opening parentheses before a statement's first word
_LEAD = re.compile(r"(?:\s+|\(|/\*.*?\*/|--[^\n]*(?:\n|$))*", re.S)


def _is_query(sql: str) -> bool:
    words = sql[_LEAD.match(sql).end():].split(None, 1)
    return bool(words) and words[0].upper() in ("SELECT", "WITH", "VALUES", "FROM", "TABLE", "EXPLAIN")


def eval_exprs(data: pa.Table, exprs: list[str]) -> pa.Table:
    """Evaluate DuckDB SQL expressions over a table whose columns are `_0.._n` (the caller
    hands over only the columns they read: rw_cli.engine.expr)."""
    name = f"__chunk{next(_counter)}"
    if data.num_columns == 0:  # rows of no columns (an aggregate of no keys and no calls): DuckDB takes none
        data = pa.table({"_rows": pa.nulls(data.num_rows, pa.int8())})
    select = ", ".join(f"{e} AS _{i}" for i, e in enumerate(exprs)) if exprs else "NULL AS _dummy"
    out = query(f"SELECT {select} FROM {name}", {name: data})
    if not exprs:
        return out.drop_columns(["_dummy"])
    return out


# DuckDB's wording -> PostgreSQL's, for the errors users meet most
_PG_MESSAGES = [
    # RisingWave's words (PostgreSQL writes it in lower case)
    (lazy_regex(r"^Division by zero\b.*", re.S), "Division by zero"),
    (lazy_regex(r"^Subquery returns \d+ columns - expected 1.*", re.S), "subquery must return only one column"),
    (lazy_regex(r"^Could not convert string '(.*)' to INT(?:16|32|64).*", re.S),
     r'invalid input syntax for type integer: "\1"'),
    (lazy_regex(r"^Could not convert string '(.*)' to (?:DOUBLE|FLOAT).*", re.S),
     r'invalid input syntax for type double precision: "\1"'),
    (lazy_regex(r"^Could not convert string ['\"](.*)['\"] to DECIMAL.*", re.S),
     r'invalid input syntax for type numeric: "\1"'),
    # a text's cast to a date or time type (a literal into a column, COPY's fields)
    (lazy_regex(r'^invalid (date|timestamp) field format: "(.*?)", expected format.*', re.S),
     r'invalid input syntax for type \1: "\2"'),
    (lazy_regex(r'^(date|time) field value out of range: "(.*?)".*', re.S), r'\1 field value out of range: "\2"'),
    (lazy_regex(r"^Could not convert string '(.*)' to INTERVAL.*", re.S), r'invalid input syntax for type interval: "\1"'),
    (lazy_regex(r"^Could not convert string '(.*)' to BOOL.*", re.S), r'invalid input syntax for type boolean: "\1"'),
    (lazy_regex(r"^Overflow in HUGEINT.*", re.S), "Numeric out of range"),
    (lazy_regex(r"^Overflow in (?:addition|subtraction|multiplication) of DECIMAL.*", re.S), "Numeric out of range"),
    # an interval's negation (timestamp - interval '-2147483648 days')
    (lazy_regex(r"^Overflow in negation of numeric value.*", re.S), "Numeric out of range"),
    (lazy_regex(r"^(?:Date and time not in timestamp range|ICU date overflows timestamp range).*", re.S),
     "timestamp out of range"),
    (lazy_regex(r"^Date out of range.*", re.S), "date out of range"),
    # a relation the binder let through (a WITH item named before its definition)
    (lazy_regex(r"^Table with name (\S+) does not exist!.*", re.S), r'relation "\1" does not exist'),
    # a time zone name no zone has (AT TIME ZONE, make_timestamptz, date_trunc's zone, ...)
    (lazy_regex(r"^Unknown TimeZone '(.*)'!.*", re.S), r"Invalid parameter time_zone: '\1' is not a valid timezone"),
    (lazy_regex(r"^Like pattern must not end with escape character.*", re.S),
     "LIKE pattern must not end with escape character"),
    (lazy_regex(r"^More than one row returned by a subquery.*", re.S),
     "Scalar subquery produced more than one row"),
]


def _integer_out_of_range() -> list:
    """An integer out of its type's range: arithmetic overflow, or a cast whose target (the
    type DuckDB names last) cannot hold the value."""
    out = []
    for duck_name, pg_name in (("INT16", "smallint"), ("INT32", "integer"), ("INT64", "bigint")):
        for pattern in (rf"^Overflow in (?:addition|subtraction|multiplication|negation|division)? ?of {duck_name}\b.*",
                        rf"^Type \w+ with value \S+ can't be cast .*destination type {duck_name}\b.*",
                        rf"^Failed to cast decimal value \S+ to type {duck_name}\b.*"):
            out.append((lazy_regex(pattern, re.S), f"Numeric out of range: {pg_name} out of range"))
    return out


_PG_MESSAGES += _integer_out_of_range()
_PG_TYPE_NAMES = {"INTEGER": "integer", "BIGINT": "bigint", "SMALLINT": "smallint", "DATE": "date",
                  "TIME": "time without time zone", "TIMESTAMP": "timestamp without time zone",
                  "VARCHAR": "character varying", "BOOLEAN": "boolean", "DOUBLE": "double precision",
                  "FLOAT": "real", "INTERVAL": "interval", "BLOB": "bytea"}


def _cast_message(m: re.Match) -> str:
    a, b = (_PG_TYPE_NAMES.get(x, x.lower()) for x in (m.group(1), m.group(2)))
    return f'cannot cast type "{a}" to "{b}" in Explicit context'


_PG_MESSAGES.append((lazy_regex(r"^Unimplemented type for cast \((\w+) -> (\w+)\).*", re.S), _cast_message))


def _pg_argument_type(duck: str) -> str:
    duck = duck.strip().strip('"')
    if duck.endswith("_LITERAL"):  # a constant: STRING_LITERAL is PostgreSQL's `unknown`
        duck = {"STRING": "unknown", "INTEGER": "INTEGER", "DECIMAL": "DECIMAL"}.get(duck[:-8], duck[:-8])
    if duck.startswith("DECIMAL"):
        return "numeric"
    if duck.endswith("[]"):
        return _pg_argument_type(duck[:-2]) + "[]"
    return _PG_TYPE_NAMES.get(duck, duck.lower())


def _no_function_message(m: re.Match) -> str:
    """DuckDB's binder names the function and the argument types it was given, then lists
    every candidate: PostgreSQL's one line, in its type names."""
    name, args = m.group(1), m.group(2)
    parts, depth, cur = [], 0, ""
    for ch in args:  # split at top-level commas (DECIMAL(2,1), STRUCT(...))
        depth += (ch == "(") - (ch == ")")
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur)
    name = name[3:] if name.startswith("pg_") else name
    return f"function {name}({', '.join(_pg_argument_type(p) for p in parts)}) does not exist"


_PG_MESSAGES.append((lazy_regex(r"^No function matches the given name and argument types '(\w+)\((.*?)\)'\..*",
                                re.S), _no_function_message))
_PG_MESSAGES.append((lazy_regex(r"^Macro (?:pg_)?(\w+)\(\) does not support the supplied arguments.*", re.S),
                     r"function \1 does not accept these arguments"))


def _clean_message(e: Exception) -> str:
    msg = str(e)
    msg = re.sub(r"^[A-Za-z ]+ Error: ", "", msg)
    msg = msg.split("\n\nLINE")[0].split("\nLINE ")[0]
    m = re.match(r"^Python exception occurred while executing the UDF: \w+: (.*)", msg, re.S)
    if m:
        msg = m.group(1)
    msg = msg.strip()
    for pattern, repl in _PG_MESSAGES:
        if pattern.match(msg):
            return pattern.sub(repl, msg, count=1)
    return msg
