"""A full disk (a real 4 MiB tmpfs, mounted when the test may mount) (issue 20, item 7):
reads of committed data go on while the disk is full, the failed commit is an error, and the
session goes on by itself once space is freed — no restart; a new process on the full disk
opens the data directory read-only."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import rw_cli
from rw_cli.errors import StorageError

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def small_disk(tmp_path):
    mount = tmp_path / "disk"
    mount.mkdir()
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a tmpfs needs root")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(mount)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True)


def _fill(path: Path) -> Path:
    filler = path / "filler"
    with open(filler, "wb") as f:
        try:
            while True:
                f.write(b"x" * 65536)
                f.flush()
        except OSError:
            pass
    return filler


def test_full_disk_then_space_freed(small_disk):
    data = str(small_disk / "d")
    s = rw_cli.connect(data)
    try:
        s.execute("create table t (a int, b varchar); create materialized view m as select count(*) as c from t;"
                  "insert into t values (1, 'x'); flush")
        filler = _fill(small_disk)
        s.execute("insert into t select generate_series(1, 100000), repeat('y', 20)")
        with pytest.raises(StorageError, match="No space left on device"):
            s.execute("flush")
        assert s.execute("select * from m").fetchall() == [(1,)]  # committed data reads on
        with pytest.raises(StorageError, match="No space left on device") as info:
            s.execute("insert into t values (2, 'z')")
        assert "run the statement again" in info.value.hint
        assert s.execute("select count(*) from t").fetchall() == [(1,)]

        # a new process while the disk is full: read-only, with a notice
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        s.close()
        proc = subprocess.run([sys.executable, "-m", "rw_cli.cli", "--data-dir", data, "-c", "select c from m"],
                              capture_output=True, text=True, env=env, timeout=120)
        assert proc.returncode == 0, proc.stderr
        assert "opened read-only" in proc.stderr and " 1\n" in proc.stdout
        s = rw_cli.connect(data, read_only=True)
        s.close()

        filler.unlink()  # space again
        s = rw_cli.connect(data)
        s.execute("insert into t values (3, 'w'); flush")
        assert s.execute("select * from m").fetchall() == [(2,)]
    finally:
        s.close()


def test_session_goes_on_once_space_is_freed_without_restart(small_disk):
    data = str(small_disk / "d")
    with rw_cli.connect(data) as s:
        s.execute("create table t (a int); create materialized view m as select count(*) as c from t;"
                  "insert into t values (1); flush")
        filler = _fill(small_disk)
        s.execute("insert into t select generate_series(1, 200000)")
        with pytest.raises(StorageError):
            s.execute("flush")
        with pytest.raises(StorageError):
            s.execute("insert into t values (2)")
        filler.unlink()
        result = s.execute("insert into t values (3)")
        assert any("were not committed" in n for n in result.notices), result.notices
        s.execute("flush")
        assert s.execute("select * from m").fetchall() == [(2,)]  # the lost epoch is gone, the new row is in
