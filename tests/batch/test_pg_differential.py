"""Differential test: the same queries over the same data on rw and on a real PostgreSQL.

The data (`pg_diff_data.sql`) is loaded into both; every query of `pg_diff_queries.sql` runs
on both and the results are compared as text (rows as multisets unless the query orders
them). A query that fails on PostgreSQL must fail on rw too.

Known, deliberate differences in text form are normalized, nothing else:
- numeric: PostgreSQL keeps the scale (`1.50`), RisingWave prints the value (`1.5`); equal
  numbers are equal;
- timestamptz: PostgreSQL writes the offset as `+00`, RisingWave as `+00:00`;
- fractions of a second: RisingWave pads to 3 or 6 digits (`59.500`), PostgreSQL does not;
- float: RisingWave switches to exponent form at other magnitudes than PostgreSQL
  (`1000000000000000` vs `1e+15`); numbers are compared by value.
"""
from __future__ import annotations

import os
import re
from decimal import Decimal, InvalidOperation

import pytest

import rw_cli
from rw_cli.errors import RwError

from .pg_server import PgError, PgServer

HERE = os.path.dirname(__file__)
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("pg-differential")]  # one server


def _queries() -> list[str]:
    with open(os.path.join(HERE, "pg_diff_queries.sql")) as f:
        return [line.strip() for line in f if line.strip() and not line.lstrip().startswith("#")]


def _data_statements() -> list[str]:
    with open(os.path.join(HERE, "pg_diff_data.sql")) as f:
        text = f.read()
    return [s.strip() for s in text.split(";") if s.strip()]


QUERIES = _queries()


@pytest.fixture(scope="module")
def pg():
    server = PgServer()
    try:
        server.script(";\n".join(_data_statements()) + ";")
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def rw(tmp_path_factory):
    session = rw_cli.connect(str(tmp_path_factory.mktemp("rw-pgdiff")))
    for stmt in _data_statements():
        session.execute(stmt)
    session.execute("FLUSH")
    yield session
    session.close()


_TSTZ_PG = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?)([+-]\d\d)$")


_FRACTION = re.compile(r"^((?:\d{4}-\d\d-\d\d )?\d\d:\d\d:\d\d)\.(\d+)(.*)$")


def _norm(v: str | None) -> object:
    if v is None:
        return None
    m = _TSTZ_PG.match(v)
    if m:
        v = m.group(1) + m.group(2) + ":00"
    m = _FRACTION.match(v)
    if m:
        frac = m.group(2).rstrip("0")
        return m.group(1) + ("." + frac if frac else "") + m.group(3)
    if re.fullmatch(r"-?\d+(\.\d+)?(e[+-]?\d+)?", v):
        try:
            d = Decimal(v)
            return ("num", d.normalize() if d != 0 else Decimal(0))
        except InvalidOperation:
            return v
    return v


def _rows(rows: list[list[str | None]], ordered: bool) -> list:
    out = [tuple(_norm(v) for v in r) for r in rows]
    return out if ordered else sorted(out, key=repr)


def _ordered(sql: str) -> bool:
    # an ORDER BY of the outermost query (not inside a window or an aggregate call)
    tail = re.sub(r"\([^()]*\)", "", re.sub(r"\([^()]*\)", "", re.sub(r"\([^()]*\)", "", sql)))
    return " ORDER BY " in tail.upper()


@pytest.mark.parametrize("sql", QUERIES, ids=[f"q{i:03d}" for i in range(len(QUERIES))])
def test_same_result_as_postgres(pg, rw, sql):
    try:
        expected = pg.psql(sql)
        pg_error = None
    except PgError as e:
        expected, pg_error = None, str(e)
    try:
        actual = rw.execute(sql).text_rows()
        rw_error = None
    except RwError as e:
        actual, rw_error = None, str(e)
    if pg_error is not None:
        assert rw_error is not None, f"PostgreSQL fails ({pg_error}) but rw returns {actual}"
        return
    assert rw_error is None, f"rw fails: {rw_error}\nPostgreSQL returns {expected}"
    ordered = _ordered(sql)
    assert _rows(actual, ordered) == _rows(expected, ordered)


def test_enough_queries():
    assert len(QUERIES) >= 300
