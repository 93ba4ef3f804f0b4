"""What start-up imports and creates (issue 22): each step pays only for what it uses.

Not timed (bench/startup.py measures the CPU): these check the causes, which a change can
bring back without a timing test noticing on a fast machine.
"""
from __future__ import annotations

import json
import subprocess
import sys

_PROBE = """
import io, json, sys
import rw_cli.session
from rw_cli.cli import run_sql
session = rw_cli.session.Session(sys.argv[1])
opened = sorted(m for m in {MODULES} if m in sys.modules)
run_sql(session, sys.argv[2], out=io.StringIO())
ran = sorted(m for m in {MODULES} if m in sys.modules)
from rw_cli.engine import duck
installed = sorted(duck.installed_functions())
session.close()
print(json.dumps({{"opened": opened, "ran": ran, "installed": installed}}))
"""
_MODULES = ("duckdb", "sqlglot", "prompt_toolkit", "pyarrow.compute", "rw_cli.handler", "rw_cli.engine.runtime")


def _probe(tmp_path, sql: str) -> dict:
    code = _PROBE.format(MODULES=repr(_MODULES))
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path / "data"), sql],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_opening_a_data_directory_imports_no_sql_engine(tmp_path):
    """The shell draws its prompt after opening the session: that must not wait for DuckDB,
    sqlglot or the statement handlers."""
    assert _probe(tmp_path, "select 1")["opened"] == []


def test_select_1_imports_no_compute_kernels_and_creates_none_of_our_functions(tmp_path):
    seen = _probe(tmp_path, "select 1")
    assert "pyarrow.compute" not in seen["ran"]
    assert "rw_cli.engine.runtime" not in seen["ran"]  # no stream job to rebuild for a SELECT
    assert seen["installed"] == []


def test_a_statement_creates_the_functions_it_calls_and_theirs(tmp_path):
    """`'on'::boolean` is rewritten to our macro pg_text_to_bool: it is created, on demand."""
    seen = _probe(tmp_path, "select 'on'::boolean, 7 % 2")
    assert "pg_text_to_bool" in seen["installed"]
    assert len(seen["installed"]) < 10
