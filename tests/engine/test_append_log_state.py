"""A join's materialized input that only ever inserts is an append log (log_table.py):
its rows go to log segments, not SSTs, and come back on recovery; other inputs stay
key-value state, and jobs recorded before append logs keep their key-value state."""
from __future__ import annotations

import os

import rw_cli
from rw_cli.engine.partition_recompute import PartitionRecomputeExecutor
from rw_cli.stream import job as stream_job
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
    build = stream_job.stream_builder

    def before(session, rel, table_ids=None):  # a job created before append logs were recorded
        builder = build(session, rel, table_ids)
        rel.append_logs = builder.logs = False
        return builder
    monkeypatch.setattr(stream_job, "stream_builder", before)
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


def test_drop_deletes_the_jobs_key_value_state(tmp_path):
    """DROP deletes every key of the job's internal state tables (an aggregation's groups, a
    retracting join input); after a restart a full compaction leaves not even tombstones of
    them, and the tables the job read keep theirs."""
    from rw_cli.store.keys import next_key, table_key_prefix

    def live(s, table_id, tombstones=False):
        prefix = table_key_prefix(table_id)
        return s.store.scan_table(prefix, next_key(prefix), include_tombstones=tombstones).num_rows

    s = rw_cli.connect(str(tmp_path))
    s.execute("create table t (k int, v int)")
    s.execute("create table u (k int, w int)")
    s.execute("create materialized view m as select t.k, count(*) as c, sum(w) as s from t join u on t.k = u.k "
              "group by t.k")
    s.execute("insert into t select g % 50, g from generate_series(1, 500) g")
    s.execute("insert into u select g % 50, g from generate_series(1, 200) g")
    s.execute("delete from t where v < 100")
    s.execute("flush")
    ids = s.catalog.get("m").state_table_ids
    before = {i: live(s, i) for i in ids}
    assert sum(before.values()) > 500  # the join's inputs and the groups
    base = {name: live(s, s.catalog.get(name).id) for name in ("t", "u")}
    s.execute("drop materialized view m")
    s.execute("flush")
    assert all(live(s, i) == 0 for i in ids)
    s.close()
    s = rw_cli.connect(str(tmp_path))
    s.store.compact(full=True)
    assert all(live(s, i, tombstones=True) == 0 for i in ids)  # the space is reclaimed
    assert {name: live(s, s.catalog.get(name).id) for name in ("t", "u")} == base
    assert s.execute("select count(*) from t").fetchall() == [(401,)]
    s.close()
