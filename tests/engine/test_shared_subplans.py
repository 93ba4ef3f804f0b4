"""A stream job builds an identical subplan once and sends its output to every parent."""
from __future__ import annotations

import rw_cli
from rw_cli.engine.hash_agg import HashAggExecutor
from rw_cli.stream import job as stream_job

# the same aggregate twice, joined with itself (as Nexmark q5 counts its HOP windows twice)
MV = ("create materialized view m as select a.k, a.c, a.s, b.s as s2 from "
      "(select k, count(*) as c, sum(v) as s from t group by k) a join "
      "(select k, count(*) as c, sum(v) as s from t group by k) b on a.k = b.k and a.c >= b.c")
QUERY = MV.split(" as ", 1)[1]


def _aggs(s) -> int:
    rel = s.catalog.get("m")
    return sum(isinstance(n.executor, HashAggExecutor) for n in s.runtime.jobs[rel.id].nodes)


def _check(s) -> None:
    s.execute("flush")
    assert sorted(s.execute("select * from m").fetchall()) == sorted(s.execute(QUERY).fetchall())


def _changes(s, lo: int) -> None:
    s.execute(f"insert into t select g % 7, g from generate_series({lo}, {lo + 99}) as g")
    s.execute(f"delete from t where v % 5 = 0 and v >= {lo}")
    s.execute(f"update t set v = v + 1 where v % 3 = 0 and v >= {lo}")


def test_identical_subplans_are_built_once_and_recover(tmp_path):
    s = rw_cli.connect(str(tmp_path))
    s.execute("create table t (k int, v int)")
    s.execute(MV)
    assert s.catalog.get("m").shared_subplans
    assert _aggs(s) == 1
    _changes(s, 0)
    _check(s)
    s.close()
    s = rw_cli.connect(str(tmp_path))  # recovery builds the same shared job on the same state
    assert _aggs(s) == 1
    _changes(s, 1000)
    _check(s)
    s.close()


def test_a_job_recorded_without_sharing_recovers_unshared(tmp_path, monkeypatch):
    build = stream_job.stream_builder

    def unshared(session, rel, table_ids=None):  # a job created before sharing was recorded
        builder = build(session, rel, table_ids)
        rel.shared_subplans = False
        builder._built = None
        return builder
    monkeypatch.setattr(stream_job, "stream_builder", unshared)
    s = rw_cli.connect(str(tmp_path))
    s.execute("create table t (k int, v int)")
    s.execute(MV)
    assert _aggs(s) == 2
    _changes(s, 0)
    _check(s)
    s.close()
    monkeypatch.undo()
    s = rw_cli.connect(str(tmp_path))
    assert not s.catalog.get("m").shared_subplans and _aggs(s) == 2  # its state tables, one per copy
    _changes(s, 1000)
    _check(s)
    s.close()
