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


_PARSED_AT_START = """
import json, sys
import sqlglot
from rw_cli.sql.duckdb_dialect import duckdb_dialect
from rw_cli.sql import dialect
from rw_cli.sql.dialect import parse_statement
from rw_cli.sql.transpile import to_duckdb
duckdb_dialect()
from sqlglot.generators.duckdb import DuckDBGenerator
deferred = type(DuckDBGenerator.__dict__["ZIPF_TEMPLATE"]).__name__
parse_statement("select 1")
compiled = sorted(n for n, v in vars(dialect).items() if type(v).__name__ == "LazyRegex" and "match" in vars(v))
zipf = sqlglot.transpile("select zipf(1, 2, random())", read="snowflake", write=duckdb_dialect())[0]
print(json.dumps({"deferred": deferred, "compiled": compiled, "zipf": zipf}))
"""


def test_start_up_parses_no_sql_template_and_compiles_only_the_patterns_a_statement_needs():
    """sqlglot's DuckDB generator parses ~20 templates of other dialects' functions when
    built, and the statement parser has ~30 patterns for RisingWave's own statements: a
    `select 1` needs none of them (rw_cli.sql.duckdb_dialect, rw_cli.common.lazy_regex). A
    template still works when a statement needs it."""
    out = subprocess.run([sys.executable, "-c", _PARSED_AT_START], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert seen["deferred"] == "_DeferredTemplate"
    assert seen["compiled"] == []
    assert "POWER" in seen["zipf"].upper() and "RANDOM()" in seen["zipf"].upper()


def test_the_collector_is_paused_until_the_first_statement_ends(tmp_path):
    """rw_cli.common.startup_gc: `rw` starts with the cyclic collector off; the first
    statement to finish turns it back on, with start-up's objects frozen out of its passes."""
    code = ("import gc, sys\n"
            "from rw_cli.common import startup_gc\n"
            "import rw_cli.session\n"
            "startup_gc.pause()\n"
            "paused = not gc.isenabled()\n"
            "s = rw_cli.session.Session(sys.argv[1])\n"
            "still_paused = not gc.isenabled()\n"
            "s.execute('select 1')\n"
            "print(paused, still_paused, gc.isenabled(), gc.get_freeze_count() > 0)\n"
            "s.close()\n")
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path / "d")], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["True", "True", "True", "True"]


def test_rw_c_leaves_the_collector_on(tmp_path):
    """The CLI pauses the collector at start and resumes it when its command ends, even one
    that runs no statement (a CliRunner in a long-lived process must not leave it off)."""
    import gc

    from click.testing import CliRunner

    from rw_cli.cli import main

    for args in (["-c", "select 1"], ["-c", ""], ["config", "path"]):
        CliRunner().invoke(main, ["--data-dir", str(tmp_path / "d"), *args])
        assert gc.isenabled(), args
