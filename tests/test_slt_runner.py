import io
import textwrap

import pytest

from _fake_session import FakeSession, factory
from rw_cli.slt.runner import compare, expand_paths, run_files


def write(tmp_path, name, text):
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"))
    return str(path)


def run(paths, keep_going=False, data_dir=None):
    out = io.StringIO()
    FakeSession.instances.clear()
    rc = run_files(paths if isinstance(paths, list) else [paths], keep_going=keep_going,
                   data_dir=data_dir, engine="embedded", out=out, session_factory=factory)
    return rc, out.getvalue()


GOOD = """
    statement ok
    create table t (v int, s varchar);

    statement ok
    insert into t values (2, 'b'), (1, NULL), (3, '');

    query IT rowsort
    select v, s from t;
    ----
    1 NULL
    2 b
    3 (empty)

    query I
    select v from t order by v desc;
    ----
    3
    2
    1

    query I valuesort
    select v from t;
    ----
    1 2 3

    statement error does not exist
    select * from nope;

    query error
    select * from nope;

    statement error
    select * from nope2;
    ----
    db error: ERROR: Failed to run the query

    Caused by:
      whatever


    query T
    select 'a   b';
    ----
    a b

    statement ok
    flush;
"""


def test_passing_file(tmp_path):
    path = write(tmp_path, "good.slt", GOOD)
    rc, out = run(path)
    assert rc == 0, out
    assert out == f"ok {path}\n10 passed, 0 failed\n"
    (s,) = FakeSession.instances
    assert s.closed and s.data_dir.startswith("/")


BAD = """
    statement ok
    create table t (v int);

    statement ok
    insert into t values (1);

    query I
    select v from t;
    ----
    2

    statement error
    select 1;

    statement ok
    select * from missing;

    statement error some other message
    select * from missing;

    query I
    select 5;
    ----
    5
"""


def test_failures_stop_file_without_keep_going(tmp_path):
    path = write(tmp_path, "bad.slt", BAD)
    rc, out = run(path)
    assert rc == 1
    assert f"{path}:7: query result mismatch\n[SQL]\nselect v from t;\n[Expected]\n2\n[Actual]\n1\n" in out
    assert out.endswith(f"FAIL {path} (2 passed, 1 failed)\n2 passed, 1 failed\n")


def test_keep_going_counts_everything(tmp_path):
    path = write(tmp_path, "bad.slt", BAD)
    rc, out = run(path, keep_going=True)
    assert rc == 1
    assert f"{path}:12: statement succeeded, but an error was expected" in out
    assert f"{path}:15: statement failed\n[SQL]\nselect * from missing;\nERROR:  " in out
    assert f"{path}:18: error did not match" in out
    assert out.endswith("3 passed, 4 failed\n")


def test_include_relative_glob_and_absolute(tmp_path):
    write(tmp_path, "parts/a.slt.part", """
        statement ok
        create table a (v int);
    """)
    write(tmp_path, "parts/b.slt.part", """
        statement ok
        insert into a values (1);
    """)
    main = write(tmp_path, "main.slt", f"""
        include ./parts/*.slt.part

        query I
        select count(*) from a;
        ----
        1

        include {tmp_path}/parts/b.slt.part

        query I
        select count(*) from a;
        ----
        2
    """)
    rc, out = run(main)
    assert rc == 0, out
    assert out.endswith("5 passed, 0 failed\n")


def test_missing_include_fails(tmp_path):
    main = write(tmp_path, "main.slt", "include ./nothing.slt\n")
    rc, out = run(main)
    assert rc == 1 and "include matched no file" in out


def test_skipif_onlyif_halt_and_control(tmp_path):
    path = write(tmp_path, "x.slt", """
        skipif risingwave
        statement ok
        this is not sql;

        onlyif postgres
        statement ok
        neither is this;

        onlyif risingwave
        statement ok
        create table t (v int);

        statement ok
        insert into t values (2), (1);

        control sortmode rowsort

        query I
        select v from t;
        ----
        1
        2

        sleep 10ms
        hash-threshold 8

        halt

        statement ok
        this would fail;
    """)
    rc, out = run(path)
    assert rc == 0, out
    assert out.endswith("3 passed, 0 failed\n")


def test_each_file_gets_its_own_session(tmp_path):
    a = write(tmp_path, "d/a.slt", "statement ok\ncreate table t (v int);\n")
    b = write(tmp_path, "d/sub/b.slt", "statement ok\ncreate table t (v int);\n")
    write(tmp_path, "d/c.slt.part", "statement ok\nbroken;\n")
    rc, out = run(str(tmp_path / "d"))
    assert rc == 0, out
    assert out == f"ok {a}\nok {b}\n2 passed, 0 failed\n"
    assert len(FakeSession.instances) == 2
    assert all(s.closed for s in FakeSession.instances)
    assert FakeSession.instances[0].data_dir != FakeSession.instances[1].data_dir


def test_explicit_data_dir(tmp_path):
    a = write(tmp_path, "a.slt", "statement ok\nselect 1;\n")
    rc, out = run(a, data_dir=str(tmp_path / "dd"))
    assert rc == 0 and FakeSession.instances[0].data_dir == str(tmp_path / "dd")


def test_missing_path(tmp_path):
    rc, out = run(str(tmp_path / "nope.slt"))
    assert rc == 1 and "no such file" in out and out.endswith("0 passed, 1 failed\n")


def test_glob_paths(tmp_path):
    a = write(tmp_path, "a.slt", "statement ok\nselect 1;\n")
    b = write(tmp_path, "b.slt", "statement ok\nselect 1;\n")
    files, missing = expand_paths([str(tmp_path / "*.slt")])
    assert files == [a, b] and missing == []


def test_session_open_failure(tmp_path):
    from rw_cli.errors import LockedError

    def locked(data_dir, engine):
        raise LockedError(f"data directory {data_dir} is locked by process 1")

    a = write(tmp_path, "a.slt", "statement ok\nselect 1;\n")
    out = io.StringIO()
    rc = run_files([a], keep_going=True, data_dir="/d", engine="embedded", out=out, session_factory=locked)
    assert rc == 1 and "ERROR:  data directory /d is locked by process 1" in out.getvalue()


def test_retry(tmp_path):
    calls = []

    class Flaky(FakeSession):
        def execute(self, sql):
            calls.append(sql)
            if len(calls) < 3:
                from rw_cli.errors import RwError
                raise RwError("not yet")
            return super().execute(sql)

    a = write(tmp_path, "a.slt", "query I retry 5 backoff 1ms\nselect 1;\n----\n1\n")
    out = io.StringIO()
    rc = run_files([a], data_dir=str(tmp_path), engine="embedded", out=out,
                   session_factory=lambda d, e: Flaky(d, e))
    assert rc == 0 and len(calls) == 3


@pytest.mark.parametrize("actual,expected,mode,ok", [
    (["1 a", "2 b"], ["2 b", "1 a"], "rowsort", True),
    (["1 a", "2 b"], ["2 b", "1 a"], "nosort", False),
    (["1  a"], [" 1 a "], "nosort", True),
    (["1 2", "3 4"], ["4 3", "2 1"], "valuesort", True),
    ([], [], "nosort", True),
    (["1"], [], "nosort", False),
])
def test_compare(actual, expected, mode, ok):
    assert compare(actual, expected, mode) is ok


def test_jobs_run_files_in_worker_processes_with_the_same_output(tmp_path):
    """rw slt -j N: the files run in N forked processes (largest first), their output in the
    order given, the same as one process gives."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    good = """
        statement ok
        set rw_implicit_flush = true;

        statement ok
        create table t (v int);

        statement ok
        insert into t values (1), (2);

        query I rowsort
        select v from t;
        ----
        1
        2
        """
    paths = [write(tmp_path, "a.slt", good), write(tmp_path, "b.slt", good.replace("1\n        2\n", "1\n        3\n")),
             write(tmp_path, "c.slt", good)]
    root = str(Path(__file__).resolve().parents[1])
    env = dict(os.environ, PYTHONPATH=root)
    runs = [subprocess.run([sys.executable, "-m", "rw_cli.cli", "slt", "--keep-going", "-j", jobs, *paths],
                           capture_output=True, text=True, timeout=300, env=env, cwd=str(tmp_path))
            for jobs in ("1", "3")]
    assert [r.returncode for r in runs] == [1, 1]
    assert runs[0].stdout == runs[1].stdout, (runs[0].stdout, runs[1].stdout)
    text = runs[1].stdout
    assert text.index("ok " + paths[0]) < text.index("FAIL " + paths[1]) < text.index("ok " + paths[2]), text


def test_jobs_with_a_data_dir_run_one_after_another_and_say_so(tmp_path):
    """rw --data-dir D slt -j N: the files share D (one writer at a time), so they run in
    turn, and a notice says that -j was not applied rather than ignoring it silently."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    first = """
        statement ok
        create table t (v int);
        """
    second = """
        statement ok
        insert into t values (1);

        statement ok
        flush;

        query I
        select count(*) from t;
        ----
        1
        """
    paths = [write(tmp_path, "a.slt", first), write(tmp_path, "b.slt", second)]
    root = str(Path(__file__).resolve().parents[1])
    run = subprocess.run([sys.executable, "-m", "rw_cli.cli", "--data-dir", str(tmp_path / "d"), "slt", "-j", "2",
                          *paths], capture_output=True, text=True, timeout=300,
                         env=dict(os.environ, PYTHONPATH=root), cwd=str(tmp_path))
    assert run.returncode == 0, run.stdout + run.stderr
    assert "-j 2 ignored" in run.stderr
    assert "4 passed, 0 failed" in run.stdout


@pytest.mark.parametrize("expected,matches", [
    ("(42710)", True),                     # the SQLSTATE alone
    ("(42710) already exists", True),      # the SQLSTATE and a regex over the message
    ("(42710) does not exist", False),     # the right code, another message
    ("(42P01)", False),                    # another code (the text holds no "42P01")
    ("(42P01) already exists", False),
    ("already exists", True),              # a plain regex as before
])
def test_error_sqlstate(expected, matches):
    from rw_cli.errors import CatalogError
    from rw_cli.slt.runner import error_matches

    assert error_matches(expected, CatalogError('relation "t" already exists')) is matches
