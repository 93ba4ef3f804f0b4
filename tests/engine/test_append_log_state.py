"""A join's materialized input that only ever inserts is an append log (log_table.py):
its rows go to log segments, not SSTs, and come back on recovery; other inputs stay
key-value state, and jobs recorded before append logs keep their key-value state."""
from __future__ import annotations

import os

import rw_cli
from rw_cli.engine.partition_recompute import PartitionRecomputeExecutor
from rw_cli.handler import create_mv
from rw_cli.store.log_table import LogTable
from rw_cli.store.state_table import StateTable

# t is append-only, u is not: the join keeps t as a log and u as key-value state
MV = "create materialized view m as select t.k, t.v, u.w from t join u on t.k = u.k and t.v < u.w"
QUERY = MV.split(" as ", 1)[1]


def _input_tables(s) -> list:
    job = s.runtime.jobs[s.catalog.get("m").id]
    ex = next(n.executor for n in job.nodes if isinstance(n.executor, PartitionRecomputeExecutor))
    return ex.tables


def _changes(s, lo: int) -> None:
    s.execute(f"insert into t select g % 11, g from generate_series({lo}, {lo + 199}) as g")
    s.execute(f"insert into u select g % 11, g * 3 from generate_series({lo}, {lo + 20}) as g")
    s.execute(f"delete from u where w % 7 = 0 and w >= {lo}")
    s.execute(f"update u set w = w + 1 where w % 5 = 0 and w >= {lo}")


def _check(s) -> None:
    s.execute("flush")
    got = s.execute("select * from m").fetchall()
    assert got and sorted(got) == sorted(s.execute(QUERY).fetchall())


def _logged_rows(s, table_id: int) -> int:
    return sum(t.num_rows for t in s.store.read_log(table_id))


def test_an_append_only_input_is_a_log_and_recovers(tmp_path):
    s = rw_cli.connect(str(tmp_path))
    s.execute("create table t (k int, v int) append only")
    s.execute("create table u (k int, w int)")
    s.execute(MV)
    assert s.catalog.get("m").append_logs
    left, right = _input_tables(s)
    assert isinstance(left, LogTable) and isinstance(right, StateTable)
    _changes(s, 0)
    _check(s)
    assert _logged_rows(s, left.table_id) == 200
    assert s.store.version.logs[left.table_id]  # committed segments
    s.close()
    s = rw_cli.connect(str(tmp_path))  # the join's cache comes back from the log
    assert isinstance(_input_tables(s)[0], LogTable)
    _changes(s, 1000)
    _check(s)
    assert _logged_rows(s, left.table_id) == 400
    s.close()


def test_a_job_recorded_before_append_logs_keeps_key_value_state(tmp_path, monkeypatch):
    build = create_mv.stream_builder

    def before(session, rel, table_ids=None):  # a job created before append logs were recorded
        builder = build(session, rel, table_ids)
        rel.append_logs = builder.logs = False
        return builder
    monkeypatch.setattr(create_mv, "stream_builder", before)
    s = rw_cli.connect(str(tmp_path))
    s.execute("create table t (k int, v int) append only")
    s.execute("create table u (k int, w int)")
    s.execute(MV)
    _changes(s, 0)
    _check(s)
    s.close()
    monkeypatch.undo()
    s = rw_cli.connect(str(tmp_path))
    assert not s.catalog.get("m").append_logs
    assert all(isinstance(t, StateTable) for t in _input_tables(s))
    assert not s.store.version.logs
    _changes(s, 1000)
    _check(s)
    s.close()


def test_drop_removes_the_jobs_append_logs(tmp_path):
    s = rw_cli.connect(str(tmp_path))
    s.execute("create table t (k int, v int) append only")
    s.execute("create table u (k int, w int)")
    s.execute(MV)
    _changes(s, 0)
    s.execute("flush")
    log_id = _input_tables(s)[0].table_id
    assert s.store.version.logs.get(log_id)
    s.execute("drop materialized view m")
    s.execute("flush")
    assert log_id not in s.store.version.logs
    s.store.vacuum()
    assert not os.listdir(os.path.join(str(tmp_path), "store", "log"))
    s.close()
