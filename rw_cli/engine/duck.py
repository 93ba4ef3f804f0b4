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

from rw_cli.engine import duck_functions
from rw_cli.errors import ExecutionError

_counter = itertools.count()
_COLUMN_REF = re.compile(r"\b_(\d+)\b")
_POSITIONAL = re.compile(r"_\d+")
_local = threading.local()


def connection() -> duckdb.DuckDBPyConnection:
    con = getattr(_local, "con", None)
    if con is None:
        con = duckdb.connect(":memory:", config={"threads": 1})
        con.execute("SET TimeZone='UTC'")
        con.execute("SET order_by_non_integer_literal = true")  # PostgreSQL ignores ORDER BY 'x'
        # x / 0 is an error, as in PostgreSQL (DuckDB's default); int / int is rewritten to
        # `//` by rw_cli.sql.transpile (the `integer_division` setting would break interval / n).
        duck_functions.install(con)
        _local.con = con
        _local.settings = {"timezone": "UTC"}
    return con


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
          settings: dict[str, str] | None = None) -> pa.Table:
    """Run `sql` with each of `tables` visible under its key; return the result as Arrow.
    `settings` (e.g. the session's `timezone`) are applied first."""
    con = connection()
    _apply(con, settings)
    names = []
    try:
        for name, table in (tables or {}).items():
            con.register(name, table)
            names.append(name)
        try:
            return con.sql(sql).to_arrow_table() if _is_query(sql) else _run(con, sql)
        except duckdb.Error as e:
            raise ExecutionError(_clean_message(e)) from None
    finally:
        for name in names:
            con.unregister(name)


def explain(sql: str, tables: dict[str, pa.Table] | None = None) -> list[str]:
    """DuckDB's physical plan of `sql`, as text lines."""
    out = query(f"EXPLAIN {sql}", tables)
    text = out.column(out.num_columns - 1).to_pylist()
    return [line.rstrip() for chunk in text for line in str(chunk).splitlines() if line.strip()]


def _run(con, sql: str) -> pa.Table:
    con.execute(sql)
    return pa.table({})


def _is_query(sql: str) -> bool:
    head = sql.lstrip().lstrip("(").split(None, 1)[0].upper() if sql.strip() else ""
    return head in ("SELECT", "WITH", "VALUES", "FROM", "TABLE", "EXPLAIN")


def eval_exprs(data: pa.Table, exprs: list[str], where: str | None = None) -> pa.Table:
    """Evaluate SQL expressions over a table whose columns are `_0.._n`."""
    name = f"__chunk{next(_counter)}"
    # hand DuckDB only the columns the expressions read (a chunk may be wide)
    refs = {f"_{m}" for e in [*exprs, where or ""] for m in _COLUMN_REF.findall(e)}
    if refs and len(refs) < data.num_columns and refs <= set(data.column_names) \
            and all(_POSITIONAL.fullmatch(c) for c in data.column_names):
        data = data.select([c for c in data.column_names if c in refs])
    select = ", ".join(f"{e} AS _{i}" for i, e in enumerate(exprs)) if exprs else "NULL AS _dummy"
    sql = f"SELECT {select} FROM {name}"
    if where:
        sql += f" WHERE {where}"
    out = query(sql, {name: data})
    if not exprs:
        return out.drop_columns(["_dummy"])
    return out


def filter_mask(data: pa.Table, predicate: str) -> pa.Array:
    """A boolean mask: True where `predicate` is true (NULL counts as false)."""
    out = eval_exprs(data, [f"COALESCE(({predicate}), FALSE)"])
    return out.column(0).combine_chunks()


def condition_mask(rows: pa.Table, predicate: str):
    """`filter_mask` as a numpy bool array, the conjuncts that compare two columns (or a column
    and an integer) evaluated by Arrow where its comparison is DuckDB's, the rest by DuckDB
    on the rows those leave."""
    import numpy as np
    import pyarrow.compute as pc

    simple, rest = [], []
    mask = np.ones(rows.num_rows, dtype=bool)
    names = rows.column_names
    for t in _split_and(predicate):
        m = _COMPARE.fullmatch(t)
        n = _NULL_TEST.fullmatch(t)
        if n and n.group(2) in names:  # IS [NOT] NULL: the validity bitmap
            valid = rows.column(n.group(2)).is_valid().to_numpy(zero_copy_only=False).astype(bool)
            mask &= valid if (n.group(1) is not None) != (n.group(3) is not None) else ~valid
        else:
            (simple if m else rest).append(m or t)
    for m in simple:
        a_name, op, b_text = f"_{m.group(1)}", m.group(2), m.group(3)
        if a_name not in names:
            rest.append(m.group(0))
            continue
        a = rows.column(a_name)
        if b_text.startswith("_"):
            if b_text not in names or not _comparable(a.type, rows.column(b_text).type):
                rest.append(m.group(0))
                continue
            b = rows.column(b_text)
        else:
            if not pa.types.is_integer(a.type):
                rest.append(m.group(0))
                continue
            b = pa.scalar(int(b_text), pa.int64())
        try:
            r = _OPS[op](a, b)
        except (pa.ArrowNotImplementedError, pa.ArrowInvalid, pa.ArrowTypeError):
            rest.append(m.group(0))
            continue
        mask &= pc.fill_null(r, False).to_numpy(zero_copy_only=False).astype(bool)
    if rest:
        idx = np.flatnonzero(mask)
        if len(idx):
            sub = filter_mask(rows.take(pa.array(idx)), " AND ".join(f"({t})" for t in rest))
            mask[idx] = sub.to_numpy(zero_copy_only=False).astype(bool)
    return mask


# NOT _i IS NULL / _i IS NOT NULL / _i IS NULL (group 1: NOT before, group 3: NOT after)
_NULL_TEST = re.compile(r"\(?\s*(NOT\s+)?\(?\s*(_\d+)\s+IS\s+(NOT\s+)?NULL\s*\)?\s*\)?", re.IGNORECASE)
_COMPARE = re.compile(r"\(?\s*_(\d+)\s*(<=|>=|<>|!=|=|<|>)\s*(_\d+|-?\d{1,18})\s*\)?")


def _op(name: str):
    import pyarrow.compute as pc

    return getattr(pc, name)


_OPS = {"<=": lambda a, b: _op("less_equal")(a, b), ">=": lambda a, b: _op("greater_equal")(a, b),
        "<": lambda a, b: _op("less")(a, b), ">": lambda a, b: _op("greater")(a, b),
        "=": lambda a, b: _op("equal")(a, b), "<>": lambda a, b: _op("not_equal")(a, b),
        "!=": lambda a, b: _op("not_equal")(a, b)}


def _comparable(a: pa.DataType, b: pa.DataType) -> bool:
    """Types Arrow compares as DuckDB does (no floats: NaN; no mixed kinds)."""
    if pa.types.is_integer(a) and pa.types.is_integer(b):
        return True
    if a != b:
        return False
    return pa.types.is_timestamp(a) or pa.types.is_date(a) or pa.types.is_string(a) or pa.types.is_large_string(a)


def _split_and(sql: str) -> list[str]:
    """The conjuncts of `a AND b AND ...` at the top level (parentheses and quotes respected);
    one term when the text is not such a conjunction (or has a BETWEEN or CASE, whose own
    ANDs are no conjunctions)."""
    text = sql.strip()
    if re.search(r"\b(BETWEEN|CASE)\b", text, re.IGNORECASE):
        return [text]
    while text.startswith("(") and _closing(text, 0) == len(text) - 1:
        text = text[1:-1].strip()
    terms, start = [], 0
    upper = text.upper()
    for i, depth in _unquoted(text):
        if i >= start and depth == 0 and upper.startswith(" AND ", i):
            terms.append(text[start:i].strip())
            start = i + 5
    terms.append(text[start:].strip())
    return terms


def _unquoted(text: str, pos: int = 0):
    """(index, bracket depth after it) of every character outside '...' literals."""
    depth, quote = 0, False
    for i in range(pos, len(text)):
        ch = text[i]
        if ch == "'":
            quote = not quote
            continue
        if quote:
            continue
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        yield i, depth


def _closing(text: str, pos: int) -> int:
    """The index of the parenthesis closing the one at `pos` (-1 if none)."""
    for i, depth in _unquoted(text, pos):
        if depth == 0 and text[i] == ")":
            return i
    return -1


# DuckDB's wording -> PostgreSQL's, for the errors users meet most
_PG_MESSAGES = [
    (re.compile(r"^Division by zero\b.*", re.S), "division by zero"),
    (re.compile(r"^Overflow in (?:addition|subtraction|multiplication|negation|division)? ?of INT16.*", re.S),
     "Numeric out of range: smallint out of range"),
    (re.compile(r"^Overflow in (?:addition|subtraction|multiplication|negation|division)? ?of INT32.*", re.S),
     "Numeric out of range: integer out of range"),
    (re.compile(r"^Overflow in (?:addition|subtraction|multiplication|negation|division)? ?of INT64.*", re.S),
     "Numeric out of range: bigint out of range"),
    (re.compile(r"^Could not convert string '(.*)' to INT(?:16|32|64).*", re.S),
     r'invalid input syntax for type integer: "\1"'),
    (re.compile(r"^Could not convert string '(.*)' to (?:DOUBLE|FLOAT).*", re.S),
     r'invalid input syntax for type double precision: "\1"'),
    (re.compile(r"^Could not convert string '(.*)' to DECIMAL.*", re.S),
     r'invalid input syntax for type numeric: "\1"'),
    (re.compile(r"^Type INT32 with value (\S+) can't be cast.*", re.S), "Numeric out of range: integer out of range"),
    (re.compile(r"^Type INT64 with value (\S+) can't be cast.*", re.S), "Numeric out of range: bigint out of range"),
    (re.compile(r"^Overflow in HUGEINT.*", re.S), "Numeric out of range"),
    (re.compile(r"^Overflow in (?:addition|subtraction|multiplication) of DECIMAL.*", re.S), "Numeric out of range"),
    (re.compile(r"^More than one row returned by a subquery.*", re.S),
     "Scalar subquery produced more than one row"),
]
_PG_TYPE_NAMES = {"INTEGER": "integer", "BIGINT": "bigint", "SMALLINT": "smallint", "DATE": "date",
                  "TIME": "time without time zone", "TIMESTAMP": "timestamp without time zone",
                  "VARCHAR": "character varying", "BOOLEAN": "boolean", "DOUBLE": "double precision",
                  "FLOAT": "real", "INTERVAL": "interval", "BLOB": "bytea"}


def _cast_message(m: re.Match) -> str:
    a, b = (_PG_TYPE_NAMES.get(x, x.lower()) for x in (m.group(1), m.group(2)))
    return f'cannot cast type "{a}" to "{b}" in Explicit context'


_PG_MESSAGES.append((re.compile(r"^Unimplemented type for cast \((\w+) -> (\w+)\).*", re.S), _cast_message))


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
