"""The real `rw` shell in a pseudo-terminal: what the user sees on the screen."""
import os
import re
import subprocess
import sys
import time

import pytest

pexpect = pytest.importorskip("pexpect")
pytest.importorskip("pyte")

from pty_term import Term  # noqa: E402

RW = os.path.join(os.path.dirname(sys.executable), "rw")


def _env(tmp_path, **extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith("RW_")}
    env.update(TERM="xterm", NO_COLOR="1", HOME=str(tmp_path), XDG_CONFIG_HOME=str(tmp_path / "xdg"),
               RW_HISTFILE=str(tmp_path / "hist"), PAGER="cat", COLUMNS="100", LINES="40")
    env.update(extra)
    return env


@pytest.fixture
def rw(tmp_path):
    terms = []

    def start(*args, **env):
        t = Term([RW, "--data-dir", str(tmp_path / "data"), *args], _env(tmp_path, **env))
        terms.append(t)
        t.wait_for("rw=>")
        return t

    yield start
    for t in terms:
        t.close()


def test_multiline_statement_and_syntax_error_with_caret(rw):
    t = rw()
    t.type("select (1 +\r")
    t.wait_for("rw(>")
    t.type("2) as three,\r")
    t.wait_for("rw->")
    t.type("'a;b' as s;\r")
    screen = t.wait_for("(1 row)")
    assert "rw=> select (1 +\nrw(> 2) as three,\nrw-> 'a;b' as s;\n three |  s\n-------+-----\n     3 | a;b\n(1 row)" in screen
    t.type("select 1 +;\r")
    screen = t.wait_for("^")
    assert "ERROR:  syntax error at or near" in screen
    lines = screen.splitlines()
    line = next(i for i, s in enumerate(lines) if s.startswith("LINE 1: "))
    caret = lines[line + 1].index("^")
    assert lines[line][caret] in "+;"  # the caret points into the statement
    t.type("selec 1;\r")
    t.wait_for("LINE 1: selec 1;")
    t.type("select 2 as alive;\r")
    t.wait_for(" alive\n-------\n     2")
    t.type("\\q\r")
    t.child.expect(pexpect.EOF, timeout=5)


def test_completion_of_a_table_name_and_its_kind(rw):
    t = rw()
    t.type("create table customer_orders (amount int);\r")
    t.wait_for("CREATE_TABLE")
    t.type("create materialized view cust_mv as select * from customer_orders;\r")
    t.wait_for("CREATE_MATERIALIZED_VIEW")  # created in this session: the completer sees it
    t.type("select * from cu")
    menu = t.wait_for(r"^ +cust_mv +materialized view$", regex=True)
    assert re.search(r"^rw=> select \* from cu\n +customer_orders +table$", menu, re.M)
    t.send("\t")  # take the first entry
    t.type(" where am")
    t.wait_for(r"^ +amount +column \(customer_orders\)$", regex=True)
    t.send("\t")
    t.type(" = 1;\r")
    screen = t.wait_for("(0 rows)")
    assert "rw=> select * from customer_orders where amount = 1;" in screen


def test_describe_expanded_timing(rw):
    t = rw()
    t.type("create table t (v1 int primary key, v2 varchar);\r")
    t.wait_for("CREATE_TABLE")
    t.type("insert into t values (1, 'one');\r")
    t.wait_for("INSERT 0 1")
    t.type("flush;\r")
    t.wait_for("FLUSH")
    t.type("\\d t\r")
    screen = t.wait_for("Primary key: v1")
    assert " Column |       Type        | Collation | Nullable | Default\n" in screen
    assert " v1     | integer           |           | not null |\n v2     | character varying |           |          |" in screen
    t.type("\\x\r")
    t.wait_for("Expanded display is on.")
    t.type("select * from t;\r")
    screen = t.wait_for("v2 | one")
    assert "-[ RECORD 1 ]\nv1 | 1\nv2 | one" in screen
    t.type("\\x off\r")
    t.type("\\timing\r")
    t.wait_for("Timing is on.")
    t.type("select v1 from t;\r")
    t.wait_for(r"^Time: \d+\.\d{3} ms$", regex=True)


def test_ctrl_c_cancels_a_long_statement_and_keeps_the_shell(rw, tmp_path):
    _fill_random(tmp_path, 2000, "big")
    t = rw()
    # a statement that runs for minutes whatever the machine (no shortcut for the filter)
    t.type("select count(*) from big a, big b, big c, big d where a.v + b.v * c.v - d.v = -1;\r")
    # after a second the statement's progress line appears on stderr
    t.wait_for(r"^select count\(\*\) from big a.*  \d+\.\ds$", regex=True)
    assert "(1 row)" not in t.text()
    started = time.monotonic()
    t.send("\x03")
    t.wait_for("ERROR:  canceling statement due to user request", timeout=10)
    assert time.monotonic() - started < 8  # generous: CI machines are busy
    t.wait_for("rw=>")
    t.type("select 42 as still_here;\r")
    t.wait_for(" 42")


def test_sigint_stops_a_one_shot_query_inside_duckdb(tmp_path):
    """SIGINT while `rw -c` waits on DuckDB: Python runs no handler until that C code returns,
    so without the wakeup thread the query below ran on for minutes."""
    import signal

    _fill_random(tmp_path, 2000, "big")
    proc = subprocess.Popen([RW, "--no-config", "--data-dir", str(tmp_path / "data"), "-c",
                             "select count(*) from big a, big b, big c, big d where a.v + b.v * c.v - d.v = -1"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env(tmp_path))
    time.sleep(3)  # started, and inside the query
    assert proc.poll() is None
    proc.send_signal(signal.SIGINT)
    try:
        out, err = proc.communicate(timeout=20)
    finally:
        proc.kill()
    assert proc.returncode == 1
    assert "ERROR:  canceling statement due to user request" in err
    assert "(1 row)" not in out


def test_ctrl_d_exits_and_history_is_private(rw, tmp_path):
    t = rw()
    t.type("select 1;\r")
    t.wait_for("(1 row)")
    t.wait_prompt()
    t.send("\x04")
    t.child.expect(pexpect.EOF, timeout=5)
    assert oct(os.stat(tmp_path / "hist").st_mode & 0o777) == "0o600"
    assert "select 1;" in (tmp_path / "hist").read_text()


def test_progress_bar_on_a_terminal(tmp_path):
    script = (
        "import time\n"
        "from rw_cli.common.progress import Progress\n"
        "from rw_cli.config import Config\n"
        "from rw_cli.shell.execute import StatementRunner\n"
        "from rw_cli.result import Result\n"
        "class Slow:\n"
        "    def execute_iter(self, sql):\n"
        "        with Progress('backfill mv', total=1000) as p:\n"
        "            for i in range(20):\n"
        "                time.sleep(0.1); p.advance(10)\n"
        "            time.sleep(0.5)\n"
        "        yield Result('CREATE_MATERIALIZED_VIEW')\n"
        "StatementRunner(Slow(), Config()).run('create materialized view mv as select 1')\n"
        "time.sleep(5)\n"
    )
    t = Term([sys.executable, "-c", script], _env(tmp_path))
    try:
        screen = t.wait_for(r"backfill mv  \[#+\.+\] +\d+%  \d+/1,000 rows  \d+ rows/s  ETA \d+s", regex=True)
        assert "CREATE_MATERIALIZED_VIEW" not in screen
        screen = t.wait_for("CREATE_MATERIALIZED_VIEW")
        assert "backfill" not in screen  # the bar is erased before the result
    finally:
        t.close()


def test_progress_of_a_long_select(tmp_path):
    """A SELECT first streams its snapshots from the store (a bar: rows of the estimated
    total, rate, ETA), then DuckDB runs it (the statement's line: a spinner, elapsed time)."""
    _fill(tmp_path, 20000, "big")
    script = (
        "import time, sys\n"
        "import rw_cli\n"
        "from rw_cli.config import Config\n"
        "from rw_cli.engine import duck\n"
        "from rw_cli.shell.execute import StatementRunner\n"
        "from rw_cli.store.state_table import StateTable\n"
        "real_iter, real_query = StateTable.iter_batches, duck.query\n"
        "def slow_iter(self, epoch=None):\n"  # a slow disk: 1,000 rows per 0.1 s
        "    for b in real_iter(self, epoch):\n"
        "        for i in range(0, b.num_rows, 1000):\n"
        "            time.sleep(0.1); yield b.slice(i, 1000)\n"
        "def slow_query(sql, tables=None, settings=None, **kw):\n"
        "    if tables and any(getattr(t, 'num_rows', 0) == 20000 for t in tables.values()):\n"
        "        time.sleep(4)\n"
        "    return real_query(sql, tables, settings, **kw)\n"
        "StateTable.iter_batches, duck.query = slow_iter, slow_query\n"
        f"s = rw_cli.connect({str(tmp_path / 'data')!r})\n"
        "StatementRunner(s, Config()).run('select count(*) as n from big')\n"
        "time.sleep(5)\n"
    )
    t = Term([sys.executable, "-c", script], _env(tmp_path))
    try:
        screen = t.wait_for(r"^scan big  \[#*\.+\] +\d+%  [\d,]+/[\d,]+ rows  [\d,]+ rows/s  ETA \d+s$",
                            regex=True, timeout=20)
        assert "(1 row)" not in screen
        screen = t.wait_for("(1 row)", timeout=40)
        # the query's line was drawn after the scan's bar (seen in the raw output: on a
        # loaded machine the screen may only be looked at once the result is there)
        raw = t.raw
        spinners = list(re.finditer(r"select count\(\*\) as n from big  \S  \d+\.\ds", raw))
        assert spinners and raw.rfind("scan big", 0, spinners[-1].start()) >= 0
        assert "select count(*) as n from big  " not in screen  # erased before the result
        assert "scan big" not in screen
        assert "20000" in screen
    finally:
        t.close()


def _fill(tmp_path, n, name="nums"):
    """Create and fill a table in this process (quicker than another `rw` start)."""
    from rw_cli.session import Session

    values = ",".join(f"({i})" for i in range(n))
    with Session(str(tmp_path / "data")) as s:
        s.execute(f"create table {name} (v int); insert into {name} values {values}; flush;")


def _fill_random(tmp_path, n, name):
    """A table of `n` random values below 1000: over them the 4-way join of the Ctrl-C tests
    runs in DuckDB for minutes without once checking for a signal (over 0..n-1 it does)."""
    from rw_cli.session import Session

    with Session(str(tmp_path / "data")) as s:
        s.execute(f"create table {name} (v int); insert into {name} select (random() * 1000)::int "
                  f"from generate_series(1, {n}); flush;")


def test_pager_for_tall_results_only(rw, tmp_path):
    _fill(tmp_path, 60)
    t = rw(PAGER="sed s/^/PAGED:/")
    t.type("select count(*) as n from nums;\r")
    screen = t.wait_for("(1 row)")
    assert "PAGED:" not in screen  # fits on the screen
    t.type("select v from nums order by v;\r")
    screen = t.wait_for("PAGED:(60 rows)")
    assert "PAGED: 59" in screen


def test_one_shot_output_is_the_same_on_a_terminal_and_in_a_pipe(tmp_path):
    _fill(tmp_path, 3)
    for fmt in ("table",):  # the layout a terminal could tempt to change (width, pager)
        args = [RW, "--no-config", "--data-dir", str(tmp_path / "data"), "--format", fmt,
                "-c", "select v, v * 2 as w from nums order by v"]
        piped = subprocess.run(args, capture_output=True, text=True, env=_env(tmp_path)).stdout
        # stdout on the terminal; stderr away from it (on a loaded machine a query past a second
        # draws the progress bar there, which a pipe never shows)
        t = Term(["sh", "-c", 'exec "$0" "$@" 2>/dev/null', *args], _env(tmp_path))
        try:
            t.child.expect(pexpect.EOF, timeout=10)
            on_tty = (t.raw + t.child.before).replace("\r\n", "\n")
        finally:
            t.close()
        assert on_tty == piped and piped


def test_colour_and_no_color(rw):
    t = rw(NO_COLOR="")  # colour on: the input is highlighted, ERROR: is red
    t.type("select 'text' from nowhere;\r")
    t.wait_for("ERROR:")
    assert "\x1b[01;31mERROR:\x1b[0m" in t.raw
    assert any(code in t.raw for code in ("\x1b[38;", "\x1b[0;38", "\x1b[0;3", "\x1b[3")), "no highlighting"
    t.close()
    plain = rw()  # NO_COLOR=1
    plain.type("select 'text' from nowhere;\r")
    plain.wait_for("ERROR:")
    assert "\x1b[01;31m" not in plain.raw and "\x1b[38;" not in plain.raw


def test_history_search_with_ctrl_r(rw):
    t = rw()
    t.type("select 'first' as a;\r")
    t.wait_for("first")
    t.type("select 'second' as b;\r")
    t.wait_for(" second\n(1 row)")
    t.wait_prompt()
    t.send("\x12")  # Ctrl-R
    t.type("fir")
    t.wait_for("second\n(1 row)\n\nrw=> select 'first' as a;")  # the match is in the input
    t.send("\r")  # accept the match
    time.sleep(0.2)
    t.send("\r")  # and run it
    screen = t.wait_for("second\n(1 row)\n\nrw=> select 'first' as a;\n   a\n-------\n first\n(1 row)")
    assert screen.count(" first\n(1 row)") == 2


def test_barriers_while_idle_keep_mvs_fresh(rw):
    t = rw()
    screen = t.wait_for("Type \\? for help.")
    assert screen.startswith("rw 0.1.0 (embedded, data directory ")
    t.type("create table t (v int);\r")
    t.wait_for("CREATE_TABLE")
    t.type("create materialized view c as select count(*) as n from t;\r")
    t.wait_for("CREATE_MATERIALIZED_VIEW")
    t.type("insert into t values (1), (2);\r")
    t.wait_for("INSERT 0 2")
    time.sleep(1.5)  # no FLUSH: the shell passes a barrier while it waits
    t.type("select n from c;\r")
    t.wait_for(" 2\n(1 row)")


def test_ctrl_c_stops_insert_select_and_leaves_no_trace(rw, tmp_path):
    """Issue 20, item 6: Ctrl-C during a long INSERT ... SELECT cancels it (one press asks;
    the statement stops at its next safe point) and none of its rows are kept."""
    t = rw()
    t.type("create table big (a int, b int); create materialized view bm as select count(*) as n from big;\r")
    t.wait_for("CREATE_MATERIALIZED_VIEW")
    t.type("insert into big select generate_series(1, 20000000), 1;\r")
    t.wait_for(r"^insert into big select generate_series.*  \d+\.\ds$", regex=True)
    t.send("\x03")
    t.wait_for("ERROR:  canceling statement due to user request", timeout=120)
    assert "INSERT 0 20000000" not in t.text()
    t.wait_for("rw=>")
    t.type("flush; select n from bm;\r")
    t.wait_for("(1 row)", timeout=60)
    assert re.search(r"^\s+0$", t.text(), re.MULTILINE), t.text()


def test_ctrl_c_ends_watch_without_leaving_caret_c(rw):
    """Issue 20, item 10: Ctrl-C in `\\watch` ends it and the next prompt starts a clean line
    (the terminal does not echo `^C` in front of it)."""
    t = rw()
    t.type("select 7 as seven \\watch 0.2\r")
    t.wait_for("(every 0.2s)")
    t.wait_for(" 7")
    time.sleep(0.5)
    t.send("\x03")
    screen = t.wait_prompt()
    assert "^C" not in t.raw
    t.type("select 8 as eight;\r")
    t.wait_for(" 8")
    assert "^C" not in screen
