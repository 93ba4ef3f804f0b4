"""Errors speak PostgreSQL's and RisingWave's language about the user's SQL and data, never
DuckDB's or sqlglot's (issue 20, item 9)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import rw_cli
from rw_cli.errors import RwError

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def session(tmp_path_factory):
    s = rw_cli.connect(str(tmp_path_factory.mktemp("messages")))
    s.execute("create table t (a int, s varchar, n smallint); insert into t values (1, 'x', 1); flush")
    yield s
    s.close()


@pytest.mark.parametrize("sql,message,hint", [
    ("insert into t (a) values (2147483648)", "integer out of range", None),
    ("insert into t (n) values (40000)", "smallint out of range", None),
    ("update t set a = 'x'", 'invalid input syntax for type integer: "x"', None),
    ("select 1e20::bigint", "bigint out of range", None),
    ("select 1e20::numeric::int", "integer out of range", None),
    ("select make_timestamptz(1910, 12, 24, 0, 0, 0, 'Nehwon/Lankhmar')",
     "Invalid parameter time_zone: 'Nehwon/Lankhmar' is not a valid timezone", None),
    ("select '2020-01-01'::timestamp at time zone 'Foo/Bar'", "'Foo/Bar' is not a valid timezone", None),
    ("with a as (select * from b), b as (select 1 as x) select * from a", 'relation "b" does not exist', None),
    ("select nosuchfn(1)", "function nosuchfn(integer) does not exist", "explicit type casts"),
    ("select nosuchfn(a, s, null, 2.5::float8) from t",
     "function nosuchfn(integer, character varying, unknown, double precision) does not exist", None),
    ("create materialized view bad as select nosuchfn(a) from t", "function nosuchfn(integer) does not exist", None),
    ("select 'abc", """unterminated quoted string at or near "'abc\"""", None),
    ('select "abc', 'unterminated quoted identifier at or near ""abc"', None),
    ("select $$abc", 'unterminated dollar-quoted string at or near "$$abc"', None),
    ("select 1 /* x", 'unterminated /* comment at or near "/* x"', None),
    ("lock table t", "not supported: LOCK", None),
    # a known function given types it has no form for: one line in PostgreSQL's type names,
    # not DuckDB's candidate list
    ("select to_char(a, '999') from t", "function to_char(integer, unknown) does not exist", None),
    ("select strftime(1.5, 'x')", "function strftime(numeric, unknown) does not exist", None),
    ("listen ch", 'syntax error at or near "listen"', None),
    ("  x", 'syntax error at or near "x"', None),
])
def test_error_message(session, sql, message, hint):
    with pytest.raises(RwError) as info:
        session.execute(sql)
    err = info.value
    assert message in err.message, err.message
    for leaked in ("INT32", "INT64", "INT128", "Scalar Function", "Did you mean", "Error tokenizing", "cannot insert"):
        assert leaked not in err.message
    if hint:
        assert hint in (err.hint or "")
    assert session.execute("select count(*) from t").fetchall() == [(1,)]  # nothing changed


def test_no_sqlglot_warnings_on_stderr(tmp_path):
    proc = _rw(tmp_path, "lock table t; select 1 for update")
    assert "contains unsupported syntax" not in proc.stderr and "not supported" in proc.stderr
    assert "Locking reads" not in proc.stderr


def _rw(tmp_path, sql: str, data_dir: str | None = None, **kw) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "rw_cli.cli", "--data-dir", data_dir or str(tmp_path / "d"), "-c", sql],
                          capture_output=True, text=True, env=env, timeout=120, **kw)


def test_data_dir_that_is_a_file(tmp_path):
    path = tmp_path / "afile"
    path.write_text("x")
    proc = _rw(tmp_path, "select 1", data_dir=str(path))
    assert proc.returncode == 1
    assert f'could not open data directory "{path}": it is not a directory' in proc.stderr
    assert "internal error" not in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
def test_stdout_on_a_full_device(tmp_path):
    with open("/dev/full", "w") as full:
        proc = subprocess.run([sys.executable, "-m", "rw_cli.cli", "--data-dir", str(tmp_path / "d"), "-c", "select 1"],
                              stdout=full, stderr=subprocess.PIPE, text=True, timeout=120,
                              env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert proc.returncode == 1
    assert "could not write to standard output: No space left on device" in proc.stderr
    assert "Traceback" not in proc.stderr and "Exception ignored" not in proc.stderr


def test_unknown_parameter_is_refused_and_risingwave_ones_kept(session):
    with pytest.raises(RwError, match='unrecognized configuration parameter "nosuch"'):
        session.execute("set nosuch = 1")
    with pytest.raises(RwError, match='unrecognized configuration parameter "nosuch"'):
        session.execute("show nosuch")
    session.execute("set streaming_enable_delta_join = true")
    assert session.execute("show streaming_enable_delta_join").fetchall() == [("true",)]


def test_session_functions_answer_as_risingwave(session):
    """Not the values of the DuckDB connection that runs the query (issue 20, item 10)."""
    result = session.execute("select current_database(), current_user, session_user, current_schema(), version()")
    assert result.columns == ["current_database", "current_user", "session_user", "current_schema", "version"]
    db, user, session_user, schema, version = result.fetchall()[0]
    assert (db, user, session_user, schema) == ("dev", "root", "root", "public")
    assert version.startswith("PostgreSQL 13.14.0-RisingWave-")
