"""Subscriptions and cursors end to end: FETCH order and ops, SINCE, and the change log
surviving a restart (a cursor does not: it is the session's)."""
import time

import pytest

import rw_cli
from rw_cli.errors import CatalogError


@pytest.fixture
def data_dir(tmp_path):
    return str(tmp_path / "data")


def _rows(result):
    return [r[:-1] for r in result.fetchall()]  # without rw_timestamp (the wall clock)


def test_cursor_returns_snapshot_then_changes_in_order(data_dir):
    with rw_cli.connect(data_dir) as s:
        s.execute("set rw_implicit_flush to true; create table t (k int primary key, v varchar)")
        s.execute("insert into t values (1, 'a'), (2, 'b')")
        s.execute("create subscription sub from t with (retention = '1 day')")
        s.execute("declare cur subscription cursor for sub")
        s.execute("declare late subscription cursor for sub since now()")
        s.execute("update t set v = 'bb' where k = 2")
        s.execute("delete from t where k = 1")
        assert sorted(_rows(s.execute("fetch 2 from cur"))) == [(1, "a", "Insert"), (2, "b", "Insert")]
        assert _rows(s.execute("fetch next from cur")) == [(2, "b", "UpdateDelete")]
        rest = s.execute("fetch 10 from cur")
        assert _rows(rest) == [(2, "bb", "UpdateInsert"), (1, "a", "Delete")]
        assert rest.arrow().column_names == ["k", "v", "op", "rw_timestamp"]
        now_ms = time.time() * 1000
        assert all(abs(r[-1] - now_ms) < 60_000 for r in rest.fetchall())
        assert _rows(s.execute("fetch 10 from cur")) == []
        assert _rows(s.execute("fetch 10 from late")) == [(2, "b", "UpdateDelete"), (2, "bb", "UpdateInsert"),
                                                           (1, "a", "Delete")]


def test_log_survives_restart_cursor_does_not(data_dir):
    with rw_cli.connect(data_dir) as s:
        s.execute("set rw_implicit_flush to true; create table t (k int)")
        s.execute("create subscription sub from t with (retention = '1 hour')")
        s.execute("insert into t values (7)")
        s.execute("declare c subscription cursor for sub since begin()")
    with rw_cli.connect(data_dir) as s:
        with pytest.raises(CatalogError):
            s.execute("fetch next from c")
        s.execute("set rw_implicit_flush to true; insert into t values (8)")
        s.execute("declare c subscription cursor for sub since begin()")
        assert _rows(s.execute("fetch 10 from c")) == [(7, "Insert"), (8, "Insert")]


def test_source_renamed_then_restart(data_dir):
    """A rename of the subscribed table edits the subscription's definition; its log keeps
    going after a restart."""
    with rw_cli.connect(data_dir) as s:
        s.execute("set rw_implicit_flush to true; create table t (k int)")
        s.execute("create subscription sub from t with (retention = '1D')")
        s.execute("alter table t rename to t2")
        s.execute("insert into t2 values (1)")
    with rw_cli.connect(data_dir) as s:
        s.execute("set rw_implicit_flush to true; insert into t2 values (2)")
        s.execute("declare c subscription cursor for sub since begin()")
        assert _rows(s.execute("fetch 10 from c")) == [(1, "Insert"), (2, "Insert")]
        assert s.catalog.get("sub").definition == "CREATE SUBSCRIPTION sub FROM t2 WITH (retention = '1D')"
