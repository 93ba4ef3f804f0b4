"""A second process opens a data directory that another process writes read-only: SELECT,
SHOW, EXPLAIN and \\d on the writer's latest commit; writes are refused; only writers are
exclusive (issue 20, item 8)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import rw_cli
from rw_cli.errors import ReadOnlyError, StorageError

ROOT = Path(__file__).resolve().parents[1]


def _rw(data_dir: str, sql: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "rw_cli.cli", "--data-dir", data_dir, "-c", sql],
                          capture_output=True, text=True, env=env, timeout=120)


@pytest.fixture
def writer(tmp_path):
    path = str(tmp_path / "d")
    s = rw_cli.connect(path)
    s.execute("create table t (a int primary key, b varchar); insert into t values (1, 'x'), (2, 'y');"
              "create materialized view m as select count(*) as n from t; flush")
    yield path, s
    s.close()


def test_cli_reads_while_another_process_writes(writer):
    path, s = writer
    proc = _rw(path, "select * from m; select b from t order by a; show tables; explain select * from t; \\d")
    assert proc.returncode == 0, proc.stderr
    assert "opened read-only" in proc.stderr and "locked" in proc.stderr
    assert " 2\n" in proc.stdout and " x\n y\n" in proc.stdout and "materialized view" in proc.stdout

    proc = _rw(path, "insert into t values (3, 'z')")
    assert proc.returncode == 1
    assert "cannot execute INSERT in a read-only session" in proc.stderr
    s.execute("flush")
    assert s.execute("select count(*) from t").fetchall() == [(2,)]  # the write went nowhere


def test_read_only_session_follows_the_writers_commits(writer):
    path, s = writer
    with rw_cli.connect(path, read_only=True) as r:
        assert r.execute("select n from m").fetchall() == [(2,)]
        s.execute("insert into t values (3, 'z'); create table u (c int); flush")
        assert r.execute("select n from m").fetchall() == [(3,)]  # the newest commit
        assert r.execute("select count(*) from u").fetchall() == [(0,)]  # and its catalog
        for sql in ("insert into t values (9, 'w')", "create table v (x int)", "drop table u",
                    "delete from t", "truncate t", "create materialized view m2 as select 1"):
            with pytest.raises(ReadOnlyError):
                r.execute(sql)
        r.execute("flush")  # nothing of its own to flush
        r.execute("set timezone = 'Europe/Paris'")
    s.execute("flush")
    assert s.execute("select count(*) from t").fetchall() == [(3,)]


def test_read_only_reads_through_the_writers_compaction(writer, monkeypatch):
    """The writer compacts and vacuums the SSTs the reader's version names between the
    reader's refresh and its read: the reader reads again, on the version that replaced them."""
    path, s = writer
    with rw_cli.connect(path, read_only=True) as r:
        for i in range(3):
            s.execute(f"insert into t select generate_series({10 + i * 100}, {109 + i * 100}), 'v'; flush")
        assert r.execute("select count(*) from t").fetchall() == [(302,)]
        s.execute("delete from t where a < 100; flush")
        s.store.compact(full=True)
        assert s.store.vacuum() > 0
        refresh = r.store.refresh
        calls = []

        def late_refresh():  # the race: the first refresh comes before the writer's commit
            calls.append(1)
            return False if len(calls) == 1 else refresh()

        monkeypatch.setattr(r.store, "refresh", late_refresh)
        for cache in (r.store.meta_cache, r.store.block_cache):  # nothing of the old SSTs in memory
            cache.evict_prefix(lambda key: True)
        from rw_cli.handler.snapshots import cache_for

        monkeypatch.setattr(cache_for(r.store), "get", lambda key: None)  # nor of the old snapshot
        assert r.execute("select count(*) from t").fetchall() == [(210,)]
        assert len(calls) == 2


def test_read_only_open_of_a_missing_directory(tmp_path):
    with pytest.raises(StorageError, match="does not exist"):
        rw_cli.connect(str(tmp_path / "nothing"), read_only=True)
