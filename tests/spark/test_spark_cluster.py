"""The Spark runtime on a real standalone cluster (master + worker on 127.0.0.1) with its
state in S3 (SeaweedFS), a worker killed during an epoch, and Spark Connect."""
from __future__ import annotations

import threading
import time
import uuid

import pytest

from rw_cli.errors import EpochFailed
from rw_cli.session import Session

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("spark-cluster")]

N_ROWS = 3000  # datagen rows per source


def s3_session(tmp_path, name: str, master: str, endpoint: str, prefix: str) -> Session:
    return Session(str(tmp_path / name), "spark", state_store=f"s3://rw-test/{prefix}", s3_endpoint=endpoint,
                   spark_master=master)


def rows(session, sql: str) -> list[tuple]:
    return sorted(session.execute(sql).fetchall(), key=repr)


def test_standalone_cluster_with_state_in_s3(tmp_path, cluster, seaweedfs):
    prefix = f"cluster-{uuid.uuid4().hex}"
    with s3_session(tmp_path, "a", cluster.url, seaweedfs, prefix) as s:
        s.execute("create table t (id int primary key, k int, v int)")
        s.execute("create materialized view agg as select k, count(*) as c, sum(v) as s from t group by k")
        s.execute("create materialized view self_join as "
                  "select a.k, count(*) as n from t a join t b on a.k = b.k group by a.k")
        for step in range(3):
            s.execute(f"insert into t select g, g % 7, g + {step} from generate_series({step * 100}, {step * 100 + 99}) g")
            s.execute(f"update t set v = v * 2 where id % 5 = {step}")
            s.execute("flush")
        want = rows(s, "select k, count(*), sum(v) from t group by k")
        assert rows(s, "select * from agg") == want
        assert rows(s, "select * from self_join") == rows(s, "select a.k, count(*) from t a join t b on a.k = b.k group by a.k")
        assert s.runtime.stats["spark_jobs"] > 0
    # another data directory, same S3 state store: everything is there (the store is the truth)
    with s3_session(tmp_path, "b", cluster.url, seaweedfs, prefix) as s:
        s.execute("delete from t where k = 3")
        s.execute("flush")
        assert rows(s, "select * from agg") == rows(s, "select k, count(*), sum(v) from t group by k")


def _kill_during_job(session, cluster, worker) -> threading.Thread:
    """Kill `worker` as soon as a Spark job of the session is running (or after 5 s)."""
    sc = session.runtime.spark.sparkContext

    def watch() -> None:
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and not sc.statusTracker().getActiveJobsIds():
            time.sleep(0.005)
        cluster.kill_worker(worker)

    t = threading.Thread(target=watch, daemon=True)
    t.start()
    return t


def test_worker_killed_during_an_epoch(tmp_path, cluster, seaweedfs, monkeypatch):
    monkeypatch.setenv("RW_SPARK_EPOCH_TIMEOUT", "20")
    prefix = f"fault-{uuid.uuid4().hex}"
    with s3_session(tmp_path, "f", cluster.url, seaweedfs, prefix) as s:
        s.execute(f"create table seq (v int) with (connector = 'datagen', fields.v.kind = 'sequence', "
                  f"fields.v.start = '1', fields.v.end = '{N_ROWS}', datagen.rows.per.second = '1000000')")
        s.execute("create materialized view totals as select count(*) as c, count(distinct v) as d, sum(v) as s from seq")
        s.execute("create materialized view buckets as select v % 10 as b, count(*) as c from seq group by v % 10")
        failures, killed = [], False
        from rw_cli.stream.driver import sources_idle

        for _ in range(400):
            s.tick(200)
            if not killed and s.store.committed_epoch and rows(s, "select c from totals") >= [(1000,)]:
                watcher = _kill_during_job(s, cluster, cluster.workers[-1])
                killed = True
                try:
                    s.barrier()
                except EpochFailed as e:
                    failures.append(str(e))
                watcher.join()
                cluster.add_worker()  # a new worker joins; the pipeline goes on from the committed epoch
                continue
            try:
                s.barrier()
            except EpochFailed as e:
                failures.append(str(e))  # the worker's death noticed one epoch later
            if killed and sources_idle(s):
                break
        assert killed and failures, "the killed worker should fail an epoch"
        assert all("epoch" in f for f in failures)
        s.execute("flush")
        n = N_ROWS
        assert rows(s, "select * from totals") == [(n, n, n * (n + 1) // 2)]  # nothing lost, nothing twice
        assert rows(s, "select * from buckets") == [(b, n // 10) for b in range(10)]


def test_spark_connect(tmp_path, connect_server, seaweedfs):
    prefix = f"connect-{uuid.uuid4().hex}"
    with s3_session(tmp_path, "c", connect_server, seaweedfs, prefix) as s:
        s.execute("create table t (k int, v int)")
        s.execute("create materialized view m as select k, sum(v) as s, max(v) as hi from t group by k")
        s.execute("insert into t select g % 3, g from generate_series(1, 100) g")
        s.execute("flush")
        s.execute("delete from t where v > 90")
        s.execute("flush")
        assert rows(s, "select * from m") == rows(s, "select k, sum(v), max(v) from t group by k")
        assert s.runtime.stats["spark_jobs"] > 0
    from rw_cli.spark.context import stop_all

    stop_all()  # before the server goes away
