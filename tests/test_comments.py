"""Comments are harmless anywhere: the same statements with `/* ... */` and `-- ...` comments
put between any two of their tokens give the same results, through the Python API (a
randomized test), `rw -c`, a script on stdin and the interactive shell — and a statement that
starts with a comment never leaves the session unusable."""
from __future__ import annotations

import os
import random
import re
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rw_cli

RW = os.path.join(os.path.dirname(sys.executable), "rw")

STATEMENTS = [
    "create table t (a int, b varchar)",
    "insert into t values (1, 'x -- not a comment'), (2, '/* nor this */'), (3, null)",
    "flush",
    "select a, b from t order by a",
    "select count(*) as n, max(a) from t where a > 0 and b is not null",
    "create materialized view m as select a % 2 as k, count(*) as c from t group by a % 2",
    "flush",
    "select * from m order by k",
    "set timezone = 'UTC'",
    "show timezone",
    "update t set a = a + 10 where a = 1",
    "delete from t where a = 2",
    "flush",
    "with x as (select a from t) select a from x order by a",
    "select 5",
    "explain select a from t",
]
_TOKENS = re.compile(r"'(?:[^']|'')*'|[^\s']+")
_COMMENTS = [" /* c */ ", " /* a /* nested */ comment */ ", " -- line comment\n", "\n-- c\n", "/**/"]


def commented(statement: str, draw) -> str:
    tokens = _TOKENS.findall(statement)
    out = [draw(_COMMENTS) if draw is not None else ""]
    for tok in tokens:
        out.append(tok)
        out.append(draw(_COMMENTS) if draw is not None else " ")
    return "".join(out)


def _results(session, statements):
    out = []
    for sql in statements:
        r = session.execute(sql)
        out.append((r.status, r.fetchall() if r.table is not None else None))
    return out


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.randoms(use_true_random=False))
def test_the_python_api_ignores_comments_anywhere(tmp_path_factory, rnd):
    plain, noisy = tmp_path_factory.mktemp("plain"), tmp_path_factory.mktemp("noisy")
    with rw_cli.connect(str(plain)) as a, rw_cli.connect(str(noisy)) as b:
        want = _results(a, STATEMENTS)
        got = _results(b, [commented(s, rnd.choice) for s in STATEMENTS])
    assert got == want


def _script(rnd) -> str:
    return "".join(commented(s, rnd.choice) + ";\n" for s in STATEMENTS)


def _plain_script() -> str:
    return "".join(s + ";\n" for s in STATEMENTS)


@pytest.mark.parametrize("seed", [1, 2])
def test_rw_c_and_stdin_ignore_comments_anywhere(tmp_path, seed):
    env = {k: v for k, v in os.environ.items() if not k.startswith("RW_")}

    def run(name, args, stdin=None):
        p = subprocess.run([RW, "--data-dir", str(tmp_path / name), *args], input=stdin, capture_output=True,
                           text=True, env=env, timeout=300)
        assert p.returncode == 0 and "ERROR" not in p.stderr, p.stderr
        return p.stdout

    want = run("plain", ["-c", _plain_script()])
    assert run("c", ["-c", _script(random.Random(seed))]) == want
    assert run("stdin", [], stdin=_script(random.Random(seed + 10))) == want


def test_a_leading_comment_returns_the_rows_and_the_session_goes_on(tmp_path):
    with rw_cli.connect(str(tmp_path)) as s:
        assert s.execute("select /* x */ 5").fetchall() == [(5,)]
        assert s.execute("/* a */ select 6 -- b").fetchall() == [(6,)]
        assert s.execute("select -- x\n7").fetchall() == [(7,)]
        assert s.execute("with /* c */ x as (select 1 as a) select a from x").fetchall() == [(1,)]
        assert s.execute("select 3").fetchall() == [(3,)]


def test_the_interactive_shell_ignores_comments(tmp_path):
    pytest.importorskip("pexpect")
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "shell"))
    from pty_term import Term

    env = {k: v for k, v in os.environ.items() if not k.startswith("RW_")}
    env.update(TERM="xterm", NO_COLOR="1", HOME=str(tmp_path), XDG_CONFIG_HOME=str(tmp_path / "xdg"),
               RW_HISTFILE=str(tmp_path / "hist"), PAGER="cat", COLUMNS="100", LINES="40")
    t = Term([RW, "--data-dir", str(tmp_path / "data")], env)
    try:
        t.wait_for("rw=>")
        t.type("select /* x */ 41 + 1 as answer; -- the end\r")
        t.wait_for(" answer\n--------\n     42")
        t.type("/* lead */ select 'still' as here;\r")
        t.wait_for(" still")
    finally:
        t.close()
