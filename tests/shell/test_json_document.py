"""`--format json` writes one JSON document per script, whatever its number of statements
(issue 20, item 10): `-c`, `-f` and a pipe alike."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SQL = "select 1 as a; create table j (x int); insert into j values (5); flush; select x, 'y' as t from j; select 2 as b where false"


def _rw(tmp_path, *args, stdin=None):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "rw_cli.cli", "--data-dir", str(tmp_path / "d"), "--format", "json",
                           *args], input=stdin, capture_output=True, text=True, env=env, timeout=120)


def test_one_document_from_c_f_and_a_pipe(tmp_path):
    want = [{"a": 1}, {"x": 5, "t": "y"}]
    proc = _rw(tmp_path, "-c", SQL)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == want
    script = tmp_path / "s.sql"
    script.write_text(SQL.replace("create table j (x int); insert into j values (5); flush; ", ""))
    proc = _rw(tmp_path, "-f", str(script))
    assert json.loads(proc.stdout) == want
    proc = _rw(tmp_path, stdin="select 3 as c;\nselect 4 as d;\n")
    assert json.loads(proc.stdout) == [{"c": 3}, {"d": 4}]
    proc = _rw(tmp_path, "-c", "select 1 as a where false")
    assert json.loads(proc.stdout) == []


def test_arrays_and_jsonb_are_json(tmp_path):
    """Arrays come out as JSON arrays (nested, NULL as null, numbers and booleans typed) and
    jsonb as JSON, not as their PostgreSQL text (issue 20, item 10)."""
    proc = _rw(tmp_path, "-c", "select array[1, null] as a, array['x', 'y \"z'] as b, array[[1, 2], [3, 4]] as c, "
                               "array[true, false] as d, '{\"k\": [1, 2]}'::jsonb as j, array['NULL', null] as n")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == [{"a": [1, None], "b": ["x", 'y "z'], "c": [[1, 2], [3, 4]], "d": [True, False],
                                        "j": {"k": [1, 2]}, "n": ["NULL", None]}]
