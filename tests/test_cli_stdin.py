"""A piped stdin runs statement by statement as it arrives, as psql runs a pipe (issue 20,
item 8): a result is printed before the next line is written, and the pipe stays open."""
from __future__ import annotations

import os
import selectors
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _read_until(proc: subprocess.Popen, needle: str, timeout: float = 60.0) -> str:
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    seen = ""
    deadline = time.monotonic() + timeout
    while needle not in seen:
        left = deadline - time.monotonic()
        assert left > 0, f"{needle!r} did not arrive; output so far: {seen!r}"
        if sel.select(left):
            chunk = os.read(proc.stdout.fileno(), 65536).decode()
            assert chunk, f"stdout closed before {needle!r}: {seen!r}"
            seen += chunk
    return seen


def test_each_statement_runs_as_it_arrives(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen([sys.executable, "-m", "rw_cli.cli", "--data-dir", str(tmp_path / "d")],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    try:
        proc.stdin.write(b"create table t (a int);\ninsert into t values (41);\nflush;\n")
        proc.stdin.flush()
        assert "FLUSH" in _read_until(proc, "FLUSH")
        proc.stdin.write(b"select a + 1 as answer\n  from t;\n")  # a statement over two lines
        proc.stdin.flush()
        assert "42" in _read_until(proc, "(1 row)")
        proc.stdin.write(b"select 'last one'")  # no `;`: runs at the end of input
        proc.stdin.close()
        assert "last one" in _read_until(proc, "(1 row)")
        assert proc.wait(timeout=60) == 0, proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()


def test_a_pipe_stops_at_the_first_error(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, "-m", "rw_cli.cli", "--data-dir", str(tmp_path / "d")],
                          input="select 1 as one;\nselect nosuch;\nselect 3 as three;\n", capture_output=True,
                          text=True, env=env, timeout=120)
    assert proc.returncode == 1
    assert "one" in proc.stdout and "three" not in proc.stdout
    assert 'column "nosuch" does not exist' in proc.stderr
