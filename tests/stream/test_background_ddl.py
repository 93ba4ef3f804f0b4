"""Background DDL and rate limits through a Session: CREATE returns with the job Creating,
the backfill proceeds on barriers under its rate limit, WAIT finishes it, CANCEL JOBS and
DROP remove it, and a restart backfills a creating job again to the same result."""
from __future__ import annotations

import pytest

import rw_cli
from rw_cli.errors import RwError


def rows(s, sql):
    return s.execute(sql).fetchall()


@pytest.fixture
def data_dir(tmp_path):
    return str(tmp_path / "data")


def _setup(s, n=1000):
    s.execute("create table t(v int)")
    s.execute(f"insert into t select * from generate_series(1, {n})")
    s.execute("flush")
    s.execute("set background_ddl = true")


def test_create_returns_creating_and_wait_finishes(data_dir):
    with rw_cli.connect(data_dir) as s:
        _setup(s)
        s.execute("create materialized view m with (backfill_rate_limit = 100) as select v from t")
        assert rows(s, "select status from rw_materialized_views where name = 'm'") == [("Creating",)]
        assert rows(s, "select count(*) from rw_ddl_progress") == [(1,)]
        assert rows(s, "select node_name, rate_limit from rw_rate_limit") == [("STREAM_SCAN", 100)]
        s.execute("alter materialized view m set backfill_rate_limit = default")
        s.execute("wait")
        assert rows(s, "select status from rw_materialized_views where name = 'm'") == [("Created",)]
        assert rows(s, "select count(*) from rw_ddl_progress") == [(0,)]
        assert rows(s, "select count(*), sum(v) from m") == [(1000, 500500)]


def test_changes_during_backfill_follow_the_snapshot(data_dir):
    with rw_cli.connect(data_dir) as s:
        _setup(s)
        s.execute("create materialized view m with (backfill_rate_limit = 0) as select v from t")
        s.execute("insert into t values (5000)")
        s.execute("delete from t where v = 1")
        s.execute("flush")
        assert rows(s, "select progress from rw_ddl_progress") == [("0.00%",)]  # 0 pauses
        s.execute("alter materialized view m set backfill_rate_limit = 1000000")
        s.execute("wait")
        assert rows(s, "select count(*), sum(v) from m") == [(1000, 500500 - 1 + 5000)]


def test_restart_backfills_a_creating_job_again(data_dir):
    with rw_cli.connect(data_dir) as s:
        _setup(s)
        s.execute("create materialized view m with (backfill_rate_limit = 10) as select v from t")
        s.execute("insert into t values (5000)")
    with rw_cli.connect(data_dir) as s:
        assert rows(s, "select status from rw_materialized_views") == [("Creating",)]
        assert rows(s, "select rate_limit from rw_rate_limit") == [(10,)]  # the limit is durable
        s.execute("alter materialized view m set backfill_rate_limit = default")
        s.execute("wait")
        assert rows(s, "select count(*), sum(v) from m") == [(1001, 505500)]
    with rw_cli.connect(data_dir) as s:
        assert rows(s, "select status from rw_materialized_views") == [("Created",)]
        assert rows(s, "select count(*) from m") == [(1001,)]


def test_cancel_and_drop_leave_nothing(data_dir):
    with rw_cli.connect(data_dir) as s:
        _setup(s)
        s.execute("set backfill_rate_limit = 0")
        s.execute("create materialized view m as select v from t")
        s.execute("create index i on t(v)")
        ids = [r[0] for r in rows(s, "select ddl_id from rw_ddl_progress order by ddl_id")]
        assert len(ids) == 2
        with pytest.raises(RwError):
            s.execute("cancel jobs 12345")
        assert len(rows(s, "select * from rw_ddl_progress")) == 2  # nothing was cancelled
        s.execute(f"cancel jobs {ids[0]}")
        s.execute("drop index i")
        assert rows(s, "select count(*) from rw_ddl_progress") == [(0,)]
        assert rows(s, "select count(*) from rw_materialized_views") == [(0,)]
        s.execute("wait")  # nothing left to wait for
    with rw_cli.connect(data_dir) as s:
        assert rows(s, "select count(*) from pg_class where relname in ('m', 'i')") == [(0,)]


def test_alter_rate_limits_are_checked_and_kept(data_dir):
    with rw_cli.connect(data_dir) as s:
        s.execute("create table t(v int primary key)")
        s.execute("set sink_decouple = true")
        s.execute("create sink s1 as select * from t with (connector = 'blackhole')")
        s.execute("alter sink s1 set sink_rate_limit = 1000")
        s.execute("create table t2(v int primary key)")
        s.execute("create sink s2 into t2 as select v from t")
        with pytest.raises(RwError):
            s.execute("alter sink s2 set sink_rate_limit = 0")  # a sink into a table
        s.execute("set sink_decouple = false")
        s.execute("create sink s3 as select * from t with (connector = 'blackhole')")
        with pytest.raises(RwError):
            s.execute("alter sink s3 set sink_rate_limit = 10")  # no log store
        with pytest.raises(RwError):
            s.execute("alter materialized view nosuch set backfill_rate_limit = 1")
        with pytest.raises(RwError):
            s.execute("alter sink s1 set sink_rate_limit = 'x'")
        s.execute("alter table t set dml_rate_limit = 5")
        assert sorted(rows(s, "select node_name, rate_limit from rw_rate_limit")) == [("DML", 5), ("SINK", 1000)]
        s.execute("alter sink s1 set sink_rate_limit = default")
        assert rows(s, "select node_name from rw_rate_limit") == [("DML",)]


def test_job_config_set_and_reset(data_dir):
    with rw_cli.connect(data_dir) as s:
        s.execute("create table t(v int)")
        s.execute("create materialized view m as select * from t")
        s.execute("alter materialized view m set config (streaming.developer.chunk_size = 511)")
        assert rows(s, "select name, key, value from rw_streaming_job_config") == [
            ("m", "streaming.developer.chunk_size", "511")]
    with rw_cli.connect(data_dir) as s:
        assert rows(s, "select count(*) from rw_streaming_job_config") == [(1,)]
        s.execute("alter materialized view m reset config (streaming.developer.chunk_size)")
        assert rows(s, "select count(*) from rw_streaming_job_config") == [(0,)]
