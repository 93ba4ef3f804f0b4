"""The Spark runtime on local[2]: same results as the embedded runtime, state through the
store, actor caches across epochs, failed epochs rolled back."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

import rw_cli
from rw_cli.errors import EpochFailed, RwError
from rw_cli.session import Session

pytestmark = pytest.mark.slow

MVS = {
    "agg": "select k, count(*) as c, sum(v) as s, min(v) as lo, max(v) as hi from t group by k",
    "total": "select count(*) as c, sum(v) as s from t",
    "joined": "select t.k, t.v, d.name from t join d on t.k = d.k",
    "lefty": "select d.k, d.name, count(t.v) as n from d left join t on t.k = d.k group by d.k, d.name",
    "top2": "select k, v from (select k, v, row_number() over (partition by k order by v desc, id) as r "
            "from t) where r <= 2",
    "distinct_v": "select distinct v % 5 as m from t",
}


def rows(session, sql: str) -> list[tuple]:
    return sorted(session.execute(sql).fetchall(), key=repr)


def workload(session) -> None:
    session.execute("create table t (id int primary key, k int, v int); create table d (k int primary key, name varchar)")
    session.execute("insert into d values (1, 'one'), (2, 'two'), (3, 'three'), (4, 'four')")
    session.execute("insert into t select g, g % 4, g * 7 % 31 from generate_series(1, 200) g")
    session.execute("flush")
    for name, q in MVS.items():
        session.execute(f"create materialized view {name} as {q}")
    for step in range(4):
        session.execute(f"insert into t select g, g % 5, g % 13 from generate_series({300 + step * 50}, {349 + step * 50}) g")
        session.execute(f"update t set v = v + 1 where id % 7 = {step}")
        session.execute(f"delete from t where id % 11 = {step}")
        session.execute("flush")


def check_mvs(session) -> None:
    for name, q in MVS.items():
        assert rows(session, f"select * from {name}") == rows(session, q), name


def test_same_results_as_embedded(tmp_path):
    results = {}
    for engine in ("embedded", "spark"):
        with rw_cli.connect(str(tmp_path / engine), engine) as s:
            workload(s)
            check_mvs(s)
            results[engine] = {name: rows(s, f"select * from {name}") for name in MVS}
            if engine == "spark":
                stats = s.runtime.stats
                assert stats["spark_jobs"] > 0 and stats["built"] > 0
    assert results["spark"] == results["embedded"]


def test_state_survives_restart_and_caches_are_reused(tmp_path):
    d = str(tmp_path / "d")
    with rw_cli.connect(d, "spark") as s:
        workload(s)
        # later epochs reuse actors cached in the Spark Python workers
        for i in range(6):
            s.execute(f"insert into t values ({1000 + i}, {i % 4}, {i})")
            s.execute("flush")
        assert s.runtime.stats["reused"] > 0, s.runtime.stats
    with rw_cli.connect(d, "spark") as s:  # a new driver: actors rebuilt from the store
        s.execute("insert into t values (2000, 1, 1000)")
        s.execute("flush")
        assert s.runtime.stats["built"] > 0
        check_mvs(s)


def test_failed_epoch_rolls_back_and_pipeline_continues(tmp_path):
    with rw_cli.connect(str(tmp_path / "d"), "spark") as s:
        workload(s)
        before = {name: rows(s, f"select * from {name}") for name in MVS}
        s.execute("insert into t values (5000, 1, 5)")
        runtime = s.runtime
        runtime.epoch_timeout = 0.001  # no Spark job finishes in time: the epoch fails
        with pytest.raises(EpochFailed, match="did not finish on Spark"):
            s.execute("flush")
        assert s._runtime is None  # rebuilt from the last committed epoch on next use
        assert {name: rows(s, f"select * from {name}") for name in MVS} == before
        assert rows(s, "select * from t where id = 5000") == []  # the epoch's DML was rolled back
        s.execute("insert into t values (5000, 1, 5)")
        s.execute("flush")
        check_mvs(s)
        assert rows(s, "select count(*) from t where id = 5000") == [(1,)]


def test_local_state_store_needs_a_local_master(tmp_path):
    with pytest.raises(RwError, match="needs a shared state store"):
        Session(str(tmp_path / "d"), "spark", spark_master="spark://127.0.0.1:7077")
    with pytest.raises(RwError, match="invalid Spark master"):
        Session(str(tmp_path / "d"), "spark", spark_master="yarn")
    assert not os.path.exists(tmp_path / "d")  # refused before anything was created


def test_slt_specs_pass_on_spark():
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    p = subprocess.run([sys.executable, "-m", "rw_cli.cli", "--engine", "spark", "slt", os.path.join(root, "slt")],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    assert ", 0 failed" in p.stdout


def test_jvm_class_names_are_looked_up_once():
    """PySpark names JVM classes through Py4J's view (`sc._jvm.PythonRDD`) for every RDD it
    builds, and Py4J asks the JVM each time; the session's view keeps a class once found."""
    from rw_cli.spark import context

    sc = context.spark_session("local[2]").sparkContext
    view, client = sc._jvm, sc._jvm._gateway_client
    first = view.PythonRDD
    sent: list[str] = []
    real = client.send_command
    client.send_command = lambda command, *a, **k: sent.append(command) or real(command, *a, **k)
    try:
        assert view.PythonRDD is first and view.PythonUtils is view.PythonUtils
        assert sc.parallelize(range(6), 2).map(lambda x: x * 2).sum() == 30  # RDDs still build
    finally:
        del client.send_command
    assert not [c for c in sent if "\nPythonRDD\n" in c]
    view.no_such_package  # noqa: B018 - what is not a class (a package, say) is not kept
    assert "no_such_package" not in vars(view) and "PythonRDD" in vars(view)
    # ... and a kept class's static methods: Py4J asks about a member on every use
    utils = view.PythonUtils
    method = utils.getBroadcastThreshold
    client.send_command = lambda command, *a, **k: sent.append(command) or real(command, *a, **k)
    try:
        sent.clear()
        assert utils.getBroadcastThreshold is method and utils.getBroadcastThreshold(sc._jsc) > 0
    finally:
        del client.send_command
    assert [c.split("\n")[0] for c in sent] == ["c"], sent  # the call itself, no lookup


def test_spark_actions_run_in_one_thread(tmp_path):
    """Py4J serves each Python thread on a connection of its own: a new thread per epoch
    would open (and authenticate) one every epoch."""
    import threading

    from rw_cli.common.epoch import EpochPair

    with rw_cli.connect(str(tmp_path / "d"), "spark") as s:
        runtime, epoch = s.runtime, EpochPair(2 << 16, 1 << 16)
        threads = [runtime._run(threading.current_thread, epoch) for _ in range(3)]
        assert threads[0] is threads[1] is threads[2] is not threading.current_thread()
        with pytest.raises(ZeroDivisionError):  # an action's error reaches the caller
            runtime._run(lambda: 1 // 0, epoch)
        assert runtime._run(threading.current_thread, epoch) is threads[0]


def test_epoch_shuffles_are_java_serialized_and_keyed_by_partition():
    """An epoch job's shuffle moves a few large pickled batches: Java serialization, not the
    Kryo Spark picks for them and builds anew in every task; each record lands in the
    partition its key names."""
    from rw_cli.spark import context, epoch_rdd

    sc = context.spark_session("local[2]").sparkContext
    out = epoch_rdd.shuffle_to(sc.parallelize([(1, b"a"), (0, b"b"), (1, b"c")], 2), 2)
    dependency = out._jrdd.rdd().dependencies().head().rdd().dependencies().head()
    assert dependency.serializer().getClass().getSimpleName() == "JavaSerializer"
    assert [sorted(p) for p in out.glom().collect()] == [[(0, b"b")], [(1, b"a"), (1, b"c")]]


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs /proc")
def test_python_workers_talk_to_their_executor_over_a_unix_socket():
    """Over loopback TCP a task's input often waited 40 ms for its last small segment (Nagle
    on the executor's side, delayed ACKs on the worker's); a Unix socket has neither."""
    from rw_cli.spark import context

    def socket_families(_records):  # (defined here: pickled by value, not by module name)
        import socket

        families = set()
        for fd in os.listdir("/proc/self/fd"):
            try:
                s = socket.socket(fileno=os.dup(int(fd)))
            except OSError:  # not a socket
                continue
            families.add(s.family.name)
            s.close()
        yield sorted(families)

    sc = context.spark_session("local[2]").sparkContext
    for families in sc.parallelize(range(4), 4).mapPartitions(socket_families).collect():
        # (a worker may hold TCP sockets of its own: a cached Kafka consumer, say)
        assert "AF_UNIX" in families, families
