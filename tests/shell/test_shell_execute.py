import io
import os
import signal
import time

import pytest

from rw_cli.common.progress import Progress
from rw_cli.config import Config
from rw_cli.errors import RwError
from rw_cli.result import Result
from rw_cli.shell.execute import StatementRunner, _Interrupts, format_timing, is_read_only


def test_format_timing():
    assert format_timing(0.0012345) == "Time: 1.234 ms" or format_timing(0.0012345) == "Time: 1.235 ms"
    assert format_timing(1.5) == "Time: 1500.000 ms (00:01.500)"
    assert format_timing(3725.25) == "Time: 3725250.000 ms (01:02:05.250)"


def test_read_only():
    assert is_read_only("  SELECT 1") and is_read_only("show tables") and is_read_only("explain select 1")
    assert not is_read_only("insert into t values (1)") and not is_read_only("create materialized view")


def test_interrupt_handler():
    err = io.StringIO()
    h = _Interrupts(err)
    with pytest.raises(KeyboardInterrupt):
        h(signal.SIGINT, None)
    assert not h.forced
    h = _Interrupts(err)
    h.read_only = False
    h(signal.SIGINT, None)  # the first press asks the statement to stop at a safe point
    assert err.getvalue() == "Cancel request sent\n"
    with pytest.raises(KeyboardInterrupt):
        h(signal.SIGINT, None)  # the second stops it now
    assert h.forced


class Backfill:
    """A statement that changes data and reports progress: Ctrl-C stops it at an update."""

    def __init__(self):
        self.steps = 0

    def execute_iter(self, sql):
        if sql.startswith("create"):
            with Progress("backfill", total=100) as p:
                for _ in range(100):
                    if self.steps == 3:
                        os.kill(os.getpid(), signal.SIGINT)
                    time.sleep(0.001)
                    self.steps += 1
                    p.advance(1)
            yield Result("CREATE_MATERIALIZED_VIEW")
        else:
            yield Result("SELECT 0")


def test_ctrl_c_cancels_at_the_next_progress_update():
    # the process's handler before: another test in this process (a SparkContext) may have set its own
    before = signal.getsignal(signal.SIGINT)
    session = Backfill()
    out, err = io.StringIO(), io.StringIO()
    ex = StatementRunner(session, Config(), out, err)
    assert ex.run("create materialized view mv as select 1") is False
    assert err.getvalue() == "Cancel request sent\nERROR:  canceling statement due to user request\n"
    assert session.steps == 4  # stopped at the update right after the signal
    assert out.getvalue() == ""
    assert ex.run("select 1") is True  # the shell goes on; the handler is restored afterwards
    assert signal.getsignal(signal.SIGINT) is before


def test_internal_errors_and_notices():
    class S:
        def execute_iter(self, sql):
            yield Result("FLUSH", notices=["a notice"])
            raise ValueError("boom")

    out, err = io.StringIO(), io.StringIO()
    assert StatementRunner(S(), Config(), out, err).run("flush; select 1") is False
    assert out.getvalue() == "FLUSH\n"
    assert err.getvalue() == ("NOTICE:  a notice\nERROR:  internal error: ValueError: boom\n"
                              "HINT:  this is a bug in rw: please report it with the statement that caused it\n")


def test_rw_error_without_position_is_located():
    class S:
        catalog = None

        def execute_iter(self, sql):
            yield Result("SELECT 0")
            raise RwError('column "zz" does not exist')

    out, err = io.StringIO(), io.StringIO()
    StatementRunner(S(), Config(), out, err).run("select 1;\nselect zz from t;")
    assert err.getvalue() == 'ERROR:  column "zz" does not exist\nLINE 2: select zz from t;\n               ^\n'


def test_ctrl_c_ends_a_script():
    from rw_cli.shell.repl import Shell

    class S:
        def execute_iter(self, sql):
            if "slow" in sql:
                raise KeyboardInterrupt  # as the SIGINT handler does for a read-only statement
            yield Result("SELECT 0")

    out, err = io.StringIO(), io.StringIO()
    sh = Shell(S(), Config(), out, err)
    assert sh.run_script("select 1;\nselect slow;\nselect 2;\n") is False
    assert out.getvalue() == "SELECT 0\n" and err.getvalue() == "ERROR:  canceling statement due to user request\n"
    assert sh.failed and sh.runner.canceled
