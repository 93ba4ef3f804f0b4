"""The Session / Python API end to end: persistence, recovery, locking, errors that change nothing."""
import os
import subprocess
import sys

import pyarrow as pa
import pytest

import rw_cli
from rw_cli.errors import BindError, CatalogError, LockedError, RwError, SqlSyntaxError

RW = [sys.executable, "-m", "rw_cli.cli"]


@pytest.fixture
def data_dir(tmp_path):
    return str(tmp_path / "data")


def test_python_api_fetchall_and_arrow(data_dir):
    with rw_cli.connect(data_dir) as s:
        s.execute("create table t (k int, v varchar); insert into t values (1, 'a'), (2, NULL); flush")
        r = s.execute("select * from t order by k")
        assert r.fetchall() == [(1, "a"), (2, None)]
        assert isinstance(r.arrow(), pa.Table) and r.arrow().column_names == ["k", "v"]
        assert r.status == "SELECT 2"


def test_reads_see_committed_epoch_only(data_dir):
    with rw_cli.connect(data_dir) as s:
        s.execute("create table t (k int); insert into t values (1)")
        assert s.execute("select count(*) from t").fetchall() == [(0,)]
        s.execute("flush")
        assert s.execute("select count(*) from t").fetchall() == [(1,)]
        s.execute("set rw_implicit_flush to true; insert into t values (2)")
        assert s.execute("select count(*) from t").fetchall() == [(2,)]


def test_mv_maintained_across_processes(data_dir):
    with rw_cli.connect(data_dir) as s:
        s.execute("create table t (k int, v int); create materialized view m as "
                  "select k, sum(v) as s, count(*) as c from t group by k; "
                  "insert into t values (1,10),(1,5),(2,7)")
    # closing checkpointed the insert; a new session recovers the MV's executor state
    with rw_cli.connect(data_dir) as s:
        s.execute("delete from t where v = 5; flush")
        assert s.execute("select * from m order by k").fetchall() == [(1, 10, 1), (2, 7, 1)]


def test_uncommitted_work_is_discarded_on_crash(data_dir):
    code = ("import rw_cli, os\n"
            f"s = rw_cli.connect({data_dir!r})\n"
            "s.execute('create table t (k int); insert into t values (1); flush; insert into t values (2)')\n"
            "os._exit(0)\n")
    subprocess.run([sys.executable, "-c", code], check=True)
    with rw_cli.connect(data_dir) as s:
        assert s.execute("select k from t").fetchall() == [(1,)]


def test_epoch_out_of_memory_rolls_back_and_recovers(data_dir, monkeypatch):
    """An epoch whose work does not fit in memory fails as a whole: its uncommitted changes
    are discarded (as a RisingWave node that ran out of memory loses them) and the jobs go on
    from the last committed epoch."""
    from rw_cli.engine.hash_join import HashJoinExecutor
    from rw_cli.errors import EpochFailed

    with rw_cli.connect(data_dir) as s:
        s.execute("create table t (k int); create materialized view j as "
                  "select a.k from t a join t b on a.k = b.k; insert into t values (1); flush")
        real = HashJoinExecutor.on_barrier
        monkeypatch.setattr(HashJoinExecutor, "on_barrier", lambda self, epoch: (_ for _ in ()).throw(MemoryError()))
        s.execute("insert into t values (2)")
        with pytest.raises(EpochFailed, match="out of memory"):
            s.execute("flush")
        monkeypatch.setattr(HashJoinExecutor, "on_barrier", real)
        s.execute("insert into t values (3); flush")
        assert s.execute("select k from j order by k").fetchall() == [(1,), (3,)]
        assert s.execute("select k from t order by k").fetchall() == [(1,), (3,)]


def test_second_writer_is_refused_and_reads_open_read_only(data_dir):
    with rw_cli.connect(data_dir):
        p = subprocess.run(RW + ["--data-dir", data_dir, "-c", "select 1"], capture_output=True, text=True)
        assert p.returncode == 0
        assert f"data directory {data_dir} is locked by process {os.getpid()}: opened read-only" in p.stderr
        p = subprocess.run(RW + ["--data-dir", data_dir, "-c", "create table x (a int)"], capture_output=True, text=True)
        assert p.returncode == 1 and "cannot execute CREATE TABLE in a read-only session" in p.stderr
        with pytest.raises(LockedError):
            rw_cli.connect(data_dir)


@pytest.mark.parametrize("bad,err", [
    ("insert into t values (1, 2, 3)", BindError),
    ("insert into nope values (1)", CatalogError),
    ("select nope from t", BindError),
    ("create table t (k int)", CatalogError),  # the name is taken
    ("insert into t values ('x', 1)", RwError),
    ("selec 1", SqlSyntaxError),
    ("create materialized view m2 as select k from nope", CatalogError),
    ("drop table t", CatalogError),
])
def test_bad_input_changes_nothing(data_dir, bad, err):
    with rw_cli.connect(data_dir) as s:
        s.execute("create table t (k int, v int); create materialized view m as select k from t; "
                  "insert into t values (1, 1); flush")
        before = (s.catalog.to_bytes(), s.execute("select * from t").fetchall())
        with pytest.raises(err):
            s.execute(bad)
        s.execute("flush")
        assert (s.catalog.to_bytes(), s.execute("select * from t").fetchall()) == before


def test_statements_before_an_error_take_effect(data_dir):
    with rw_cli.connect(data_dir) as s:
        with pytest.raises(RwError):
            s.execute("create table a (x int); create table a (x int)")
        assert s.execute("show tables").fetchall() == [("public.a",)]


def test_cli_exit_codes_and_output(data_dir):
    ok = subprocess.run(RW + ["--data-dir", data_dir, "-c", "select 1 as one"], capture_output=True, text=True)
    assert ok.returncode == 0 and "(1 row)" in ok.stdout and " one " in ok.stdout
    bad = subprocess.run(RW + ["--data-dir", data_dir, "-c", "select 1;\nselect * fro t"],
                         capture_output=True, text=True)
    assert bad.returncode == 1
    assert 'ERROR:  syntax error at or near "t"' in bad.stderr
    assert "LINE 2: select * fro t" in bad.stderr
    caret = bad.stderr.splitlines()[[i for i, l in enumerate(bad.stderr.splitlines()) if l.startswith("LINE 2")][0] + 1]
    assert caret.index("^") == len("LINE 2: select * fro ")
    usage = subprocess.run(RW + ["--no-such-option"], capture_output=True, text=True)
    assert usage.returncode == 2


def test_cli_stdin_and_file(data_dir, tmp_path):
    f = tmp_path / "q.sql"
    f.write_text("create table t (k int);\ninsert into t values (7);\nflush;\nselect * from t;\n")
    p = subprocess.run(RW + ["--data-dir", data_dir, "-f", str(f)], capture_output=True, text=True)
    assert p.returncode == 0 and " 7" in p.stdout
    p = subprocess.run(RW + ["--data-dir", data_dir], input="select k + 1 as k1 from t;", capture_output=True,
                       text=True)
    assert p.returncode == 0 and " 8" in p.stdout


def test_embedded_engine_never_imports_pyspark(data_dir):
    code = ("import sys, rw_cli\n"
            f"s = rw_cli.connect({data_dir!r}); s.execute('create table t (k int); select * from t'); s.close()\n"
            "assert 'pyspark' not in sys.modules\n")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_temporal_filter_rows_leave_as_time_passes(data_dir):
    import time

    with rw_cli.connect(data_dir) as s:
        s.execute("set rw_implicit_flush to true; create table t (ts timestamptz, v int); "
                  "create materialized view recent as select v from t where ts > now() - interval '1 second'")
        s.execute("insert into t values (now(), 1), (now() - interval '1 hour', 2)")
        assert s.execute("select v from recent").fetchall() == [(1,)]
        time.sleep(1.3)
        s.execute("flush")
        assert s.execute("select v from recent").fetchall() == []


def test_temporal_filter_expires_rows_while_stopped(data_dir):
    import time

    with rw_cli.connect(data_dir) as s:
        s.execute("set rw_implicit_flush to true; create table t (ts timestamptz, v int); "
                  "create materialized view recent as select v from t where ts > now() - interval '1 second'; "
                  "create materialized view n as select count(*) as c from recent")
        s.execute("insert into t values (now(), 1), (now() + interval '1 hour', 2)")
        assert s.execute("select c from n").fetchall() == [(2,)]
    time.sleep(1.3)
    with rw_cli.connect(data_dir) as s:
        s.execute("flush")
        assert s.execute("select v from recent").fetchall() == [(2,)]
        assert s.execute("select c from n").fetchall() == [(1,)]


def test_backfill_reports_progress_and_can_be_canceled(data_dir):
    from rw_cli.common import progress
    from rw_cli.errors import QueryCanceled

    seen = []

    class Listener:
        def start(self, p):
            seen.append(p)

        def stop(self, p):
            pass

    token = progress.install(Listener())
    try:
        with rw_cli.connect(data_dir) as s:
            s.execute("create table t (k int); insert into t select * from generate_series(1, 70000); flush")
            s.execute("create materialized view m as select count(*) as c from t")
            backfill = [p for p in seen if p.label == "backfill"]
            assert backfill and backfill[-1].total == 70000 and backfill[-1].done == 70000
            progress.request_cancel()
            with pytest.raises(QueryCanceled):
                s.execute("create materialized view m2 as select k from t")
            assert [r[0] for r in s.execute("show materialized views").fetchall()] == ["public.m"]
    finally:
        progress.clear_cancel()
        progress.uninstall(token)


# -- asynchronous checkpoints ------------------------------------------------------------------
class _GatedUploads:
    """Holds every checkpoint's SST upload of a store (in its upload process or thread)
    until `open()` (and then, with `fail`, makes them fail)."""

    def __init__(self, store, fail: bool = False):
        import threading

        self.gate = threading.Event()
        self.fail = fail
        self._write = store.uploader.write_batches
        store.uploader.write_batches = self.write

    def write(self, batches, **options):
        self.gate.wait(30)
        if self.fail:
            from rw_cli.errors import StorageError

            raise StorageError("cannot write object sst/1.sst: disk on fire")
        return self._write(batches, **options)

    def open(self):
        self.gate.set()


def test_barrier_hands_the_epoch_over_flush_waits(data_dir, tmp_path):
    import glob
    import threading
    import time

    out = str(tmp_path / "out")
    s = rw_cli.connect(data_dir)
    s.execute("create table t (k int primary key, v int)")
    s.execute(f"create sink f as select k, v from t with (connector = 'file', path = '{out}') "
              "format plain encode json")
    gated = _GatedUploads(s.store)
    s.execute("insert into t values (1, 10)")
    s.barrier()  # returns while the epoch's upload is held
    assert s.store.committed_epoch < s.epoch.prev and s.store.pending_commits() == 1
    assert not glob.glob(os.path.join(out, "*.jsonl"))  # not durable: not delivered
    # the queue is bounded: a third epoch in flight makes the barrier wait
    done = threading.Event()

    def more():
        for _ in range(2):  # what the pipeline driver does: no statement in between
            s.dirty = True
            s.barrier()
        done.set()

    t = threading.Thread(target=more)
    t.start()
    time.sleep(0.5)
    assert not done.is_set() and s.store.pending_commits() == 3
    gated.open()
    t.join(30)
    assert done.is_set()
    # a statement reads what the stream committed: it waits for the epochs in flight
    assert s.execute("select k, v from t").fetchall() == [(1, 10)]
    assert s.store.committed_epoch == s.epoch.prev
    assert len(glob.glob(os.path.join(out, "*.jsonl"))) == 1  # delivered once durable
    gated.gate.clear()
    s.execute("insert into t values (3, 30)")
    flushed = threading.Event()
    t = threading.Thread(target=lambda: (s.execute("flush"), flushed.set()))
    t.start()
    time.sleep(0.3)
    assert not flushed.is_set()  # FLUSH returns only once its epoch is durable
    gated.open()
    t.join(30)
    assert flushed.is_set() and s.store.committed_epoch == s.epoch.prev
    assert len(glob.glob(os.path.join(out, "*.jsonl"))) == 2
    s.close()


def test_failed_upload_is_the_next_statements_error(data_dir):
    from rw_cli.errors import StorageError

    with rw_cli.connect(data_dir) as s:
        s.execute("create table t (k int); insert into t values (1); flush")
    s = rw_cli.connect(data_dir)
    gated = _GatedUploads(s.store, fail=True)
    s.execute("insert into t values (2)")
    s.barrier()  # the upload fails in the background, after the barrier returned
    gated.open()
    with pytest.raises(StorageError, match="disk on fire"):  # said once, by the next statement
        s.execute("select count(*) from t")
    assert s.execute("select k from t").fetchall() == [(1,)]  # committed data reads on
    # a write goes on from the last committed epoch, without a restart (issue 20, item 7)
    result = s.execute("insert into t values (3)")
    assert any("were not committed" in n and "disk on fire" in n for n in result.notices), result.notices
    s.close()
    assert s.closed
    with rw_cli.connect(data_dir) as s:  # the last committed epoch, then the write after it
        assert s.execute("select k from t order by k").fetchall() == [(1,), (3,)]


def test_an_unexpected_exception_is_an_internal_error_and_the_session_goes_on(tmp_path, monkeypatch):
    """No traceback reaches a user: a bug surfaces as an error with a hint to report it."""
    from rw_cli.errors import InternalError
    from rw_cli.handler import query

    monkeypatch.delenv("RW_DEBUG", raising=False)
    with rw_cli.connect(str(tmp_path)) as s:
        with monkeypatch.context() as m:
            m.setattr(query, "handle_query", lambda *a: 1 / 0)
            with pytest.raises(InternalError) as info:
                s.execute("select 1")
        assert "ZeroDivisionError" in info.value.message and "report" in info.value.hint
        assert s.execute("select 2").fetchall() == [(2,)]


def test_a_create_that_fails_at_its_first_barrier_leaves_nothing_behind(tmp_path, monkeypatch):
    from rw_cli.engine.materialize import MaterializeExecutor
    from rw_cli.errors import ExecutionError

    with rw_cli.connect(str(tmp_path)) as s:
        s.execute("create table t (a int); insert into t values (1), (2); flush")
        real = MaterializeExecutor.on_barrier

        def failing(self, epoch):
            if self.table.table_id != s.catalog.get("t").id:
                raise ExecutionError("no room for it")
            return real(self, epoch)
        with monkeypatch.context() as m:
            m.setattr(MaterializeExecutor, "on_barrier", failing)
            with pytest.raises(ExecutionError):
                s.execute("create materialized view m as select a + 1 as b from t")
        assert s.catalog.get("m") is None and list(s.runtime.jobs) == [s.catalog.get("t").id]
        s.execute("insert into t values (3); flush")
        s.execute("create materialized view m as select a + 1 as b from t")  # the name is free
        assert sorted(s.execute("select b from m").fetchall()) == [(2,), (3,), (4,)]
    with rw_cli.connect(str(tmp_path)) as s:
        assert sorted(s.execute("select b from m").fetchall()) == [(2,), (3,), (4,)]


def test_a_create_whose_query_fails_leaves_nothing_behind(tmp_path):
    with rw_cli.connect(str(tmp_path)) as s:
        try:
            s.execute("create materialized view m as select 5 / avg(76) / cast(null as integer) + 1 as x")
        except RwError:
            assert s.catalog.get("m") is None and not s.runtime.jobs
        else:
            assert s.execute("select * from m").fetchall() == [(None,)]


def test_a_script_that_never_closes_its_session_keeps_its_writes(tmp_path):
    script = ("import rw_cli\n"
              f"s = rw_cli.connect({str(tmp_path)!r})\n"
              "s.execute('create table t (a int)')\n"
              "s.execute('insert into t values (1), (2), (3)')\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and "Traceback" not in out.stderr
    with rw_cli.connect(str(tmp_path)) as s:
        assert s.execute("select count(*) from t").fetchall() == [(3,)]


def test_a_closed_session_says_so(tmp_path):
    with rw_cli.connect(str(tmp_path)) as s:
        s.execute("create table t (a int)")
    assert s.closed
    for sql in ("select 1", "flush", "insert into t values (1)"):
        with pytest.raises(RwError, match="the session is closed"):
            s.execute(sql)


def test_writes_in_a_read_only_transaction_are_refused_never_ignored(tmp_path):
    """rw supports read-only transactions (as RisingWave); a ROLLBACK must never leave a
    write behind, so writes inside START TRANSACTION READ ONLY are refused and change nothing.
    A BEGIN without READ ONLY starts no transaction at all (RisingWave's notice says so): the
    writes after it are each their own transaction."""
    from rw_cli.errors import ReadOnlyError
    from rw_cli.handler.utility import READ_WRITE_NOTICE

    with rw_cli.connect(str(tmp_path)) as s:
        s.execute("create table t (a int); insert into t values (1); flush")
        for begin in ("start transaction read only", "BEGIN READ ONLY", "begin transaction isolation level "
                      "repeatable read, read only"):
            assert s.execute(begin).status == "BEGIN"
            for write in ("insert into t values (100)", "update t set a = 2", "delete from t",
                          "create table u (b int)", "drop table t"):
                with pytest.raises(ReadOnlyError, match="in a read-only transaction"):
                    s.execute(write)
            assert s.execute("create table if not exists t (a int)").status  # exists: writes nothing
            assert s.execute("select a from t").fetchall() == [(1,)]
            assert s.execute("rollback").status == "ROLLBACK"
        assert s.execute("commit").notices == ["there is no transaction in progress"]
        for begin in ("begin", "BEGIN WORK", "begin transaction read write"):
            assert s.execute(begin).notices == [READ_WRITE_NOTICE]
        s.execute("insert into t values (2)")  # no transaction: writes go on
        assert s.execute("rollback").notices == ["there is no transaction in progress"]
        s.execute("flush")
        assert sorted(s.execute("select a from t").fetchall()) == [(1,), (2,)]


def test_a_temporary_table_is_refused_not_made_permanent(tmp_path):
    from rw_cli.errors import NotSupported

    with rw_cli.connect(str(tmp_path)) as s:
        for sql in ("create temp table t (a int)", "create temporary table t as select 1 as a"):
            with pytest.raises(NotSupported, match="TEMPORARY"):
                s.execute(sql)
        assert s.catalog.get("t") is None
