"""`Session.execute(sql, params)`: `$1`, `$2`, ... bound to Python values as typed literals."""
import datetime as dt
import re
import decimal

import pytest

import rw_cli
from rw_cli.errors import RwError
from rw_cli.sql.literals import python_literal


@pytest.fixture()
def session(tmp_path):
    with rw_cli.connect(str(tmp_path / "data")) as s:
        yield s


def test_values_of_every_kind_round_trip(session):
    session.execute("create table t (id int, name varchar, ts timestamptz, d numeric, tags varchar[], "
                    "j jsonb, b bytea, x float8, day date)")
    row = [1, "O'Brien'); drop table t; --", dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=dt.timezone.utc),
           decimal.Decimal("1.50"), ["a", "b"], {"k": [1, 2]}, b"\x00\xff", 2.5, dt.date(2024, 5, 6)]
    session.execute("insert into t values ($1, $2, $3, $4, $5, $6, $7, $8, $9)", row)
    session.execute("insert into t (id, name) values ($1, $2)", (2, None))
    session.execute("flush")
    got = session.execute("select * from t order by id").fetchall()
    assert got[0][:5] == tuple(row[:5]) and got[0][6:] == tuple(row[6:])
    assert got[0][5] == '{"k": [1, 2]}'
    assert got[1] == (2,) + (None,) * 8
    # a parameter is a value wherever it stands, never SQL: the table is still there
    assert session.execute("select count(*) from t where name = $1", [row[1]]).fetchall() == [(1,)]


def test_placeholders_inside_quotes_stay_text(session):
    assert session.execute("select '$1', $1::int + 1", [41]).fetchall() == [("$1", 42)]


@pytest.mark.parametrize("sql,params,message", [
    ("select $2", [1], "there is no parameter $2"),
    ("select $1", "abc", "params must be a list or tuple"),
    ("select $1", [object()], "cannot pass a object as a parameter"),
    ("select $1", [[]], "cannot tell the type of an empty list parameter"),
])
def test_bad_params_are_clear_errors(session, sql, params, message):
    with pytest.raises(RwError, match=re.escape(message)):
        session.execute(sql, params)


def test_float_specials_and_intervals():
    assert python_literal(float("inf")) == "CAST('Infinity' AS DOUBLE PRECISION)"
    assert python_literal(dt.timedelta(days=1, seconds=2)) == \
        "CAST('1 days 2 seconds 0 microseconds' AS INTERVAL)"
    assert python_literal(True) == "TRUE" and python_literal(None) == "NULL"
