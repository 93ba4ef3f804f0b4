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

from rw_cli.errors import ExecutionError

_counter = itertools.count()
_local = threading.local()


def connection() -> duckdb.DuckDBPyConnection:
    con = getattr(_local, "con", None)
    if con is None:
        con = duckdb.connect(":memory:", config={"threads": 1})
        con.execute("SET TimeZone='UTC'")
        # x / 0 is an error, as in PostgreSQL (DuckDB's default); int / int is rewritten to
        # `//` by rw_cli.sql.transpile (the `integer_division` setting would break interval / n).
        from rw_cli.sql.functions import MACROS, UDFS

        for macro in MACROS:
            con.execute(macro)
        for name, (fn, params, ret) in UDFS.items():
            con.create_function(name, fn, [duckdb.sqltype(p) for p in params], duckdb.sqltype(ret),
                                type="arrow", null_handling="special", side_effects=False)
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


def result_types(sql: str, tables: dict[str, pa.Table]) -> pa.Schema:
    """The Arrow schema a query would produce (it runs on empty inputs)."""
    empty = {k: v.schema.empty_table() for k, v in tables.items()}
    return query(f"SELECT * FROM ({sql}) LIMIT 0", empty).schema


def _clean_message(e: Exception) -> str:
    msg = str(e)
    msg = re.sub(r"^[A-Za-z ]+ Error: ", "", msg)
    msg = msg.split("\n\nLINE")[0].split("\nLINE ")[0]
    return msg.strip()
