"""Tests that run the same statements on rw and on DuckDB and compare what each holds."""
from __future__ import annotations

import duckdb

import rw_cli


def twins(path: str, statements: list[str]):
    """An rw session on data directory `path` and an in-memory DuckDB connection, each
    having run `statements`."""
    s = rw_cli.connect(path)
    con = duckdb.connect()
    for sql in statements:
        s.execute(sql)
        con.execute(sql)
    return s, con


def sorted_rows(con_or_session, sql: str) -> list[tuple]:
    """`sql`'s rows from a DuckDB connection or an rw session, in one order, decimals as
    floats (rw's numeric and DuckDB's DECIMAL compare as the same numbers)."""
    out = con_or_session.execute(sql).fetchall()
    return sorted((tuple(float(x) if hasattr(x, "as_tuple") else x for x in r) for r in out), key=repr)
