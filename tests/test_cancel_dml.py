"""Cancelling a statement that changes data leaves no trace of it (issue 20, item 6): a
Ctrl-C during INSERT ... SELECT (or UPDATE, DELETE, TRUNCATE) stops it before its changes
reach the stream, or rolls its epoch back when they were on their way; earlier writes stay."""
from __future__ import annotations

import pytest

import rw_cli
from rw_cli.common import progress
from rw_cli.errors import QueryCanceled
from rw_cli.handler import dml


@pytest.fixture
def session(tmp_path):
    s = rw_cli.connect(str(tmp_path / "d"))
    s.execute("create table t (a int, b int); create materialized view m as select count(*) as n, sum(a) as s from t;"
              "insert into t values (1, 1), (2, 2); flush")
    yield s
    progress.clear_cancel()
    s.close()


def _state(s):
    s.execute("flush")
    return s.execute("select * from m").fetchall(), s.execute("select count(*) from t").fetchall()


def test_cancel_during_the_query_changes_nothing(session, monkeypatch):
    """Ctrl-C while DuckDB computes the rows: the cancel point before the push stops it."""
    real = dml.cast_to

    def cast_then_ctrl_c(*args):
        out = real(*args)
        progress.request_cancel()
        return out

    monkeypatch.setattr(dml, "cast_to", cast_then_ctrl_c)
    with pytest.raises(QueryCanceled):
        session.execute("insert into t select generate_series(1, 1000), 0")
    monkeypatch.setattr(dml, "cast_to", real)
    assert _state(session) == ([(2, 3)], [(2,)])


@pytest.mark.parametrize("statement", [
    "insert into t select generate_series(10, 600009), 0",
    "update t set b = b + 1",
    "delete from t",
    "truncate t",
])
def test_cancel_mid_push_rolls_the_statement_back(session, monkeypatch, statement):
    """Ctrl-C between the pieces of a large write: its epoch is rolled back; a write made
    before it in the same session (not yet flushed) is kept."""
    session.execute("insert into t select generate_series(3, 300002), 0; flush")
    session.execute("insert into t values (-1, -1)")  # not flushed: earlier in the statement's epoch
    before = _state(session)
    session.execute("insert into t values (-2, -2)")
    monkeypatch.setattr(dml, "PUSH_ROWS", 1000)
    real_push = session.runtime.push
    pushes = []

    def push_then_ctrl_c(table_id, chunk):
        real_push(table_id, chunk)
        pushes.append(len(chunk))
        if len(pushes) == 3:
            progress.request_cancel()

    monkeypatch.setattr(session.runtime, "push", push_then_ctrl_c)
    with pytest.raises(QueryCanceled):
        session.execute(statement)
    assert len(pushes) == 3
    after = _state(session)
    n_before, s_before = before[0][0]
    assert after == ([(n_before + 1, s_before - 2)], [(before[1][0][0] + 1,)])  # only (-2, -2) came since
    session.execute("insert into t values (-7, 7); flush")  # and the session goes on
    assert session.execute("select count(*) from t where a = -7").fetchall() == [(1,)]
