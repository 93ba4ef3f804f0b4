import io
import time

import pytest

from rw_cli.common import progress as hook
from rw_cli.errors import QueryCanceled
from rw_cli.shell.progress import Progress, TerminalProgress, listener_for, render_line


def test_no_listener_is_a_no_op():
    assert hook.current() is None
    with Progress("x", total=10) as p:
        p.advance(3)
        p.update(5)
    assert p.done == 5 and p.fraction() == 0.5


def test_render_line():
    p = Progress("backfill mv1", total=1000)
    p.started = 100.0
    p.update(250)
    assert render_line(p, 102.0) == "backfill mv1  [#####...............]   25%  250/1,000 rows  125 rows/s  ETA 6s"
    q = Progress("query")
    q.started = 0.0
    q.update(5000)
    assert render_line(q, 2.0) == "query  5,000 rows  2,500 rows/s  2.0s"
    r = Progress("scan", poll=lambda: 0.5)
    r.started = 0.0
    assert render_line(r, 10.0) == "scan  [##########..........]   50%  ETA 10s"


class Tty(io.StringIO):
    def isatty(self):
        return True


def test_listener_only_for_terminals():
    assert listener_for(io.StringIO()) is None
    assert isinstance(listener_for(Tty()), TerminalProgress)


def test_bar_appears_after_delay_and_is_erased():
    out = Tty()
    listener = TerminalProgress(out, delay=0.2, interval=0.02)
    token = hook.install(listener)
    try:
        with Progress("quick", total=10) as p:
            p.update(1)
        assert out.getvalue() == ""  # finished before the delay: nothing drawn
        with Progress("slow", total=10) as p:
            p.update(4)
            time.sleep(0.4)
            assert "slow  [########" in out.getvalue() and "40%" in out.getvalue()
        assert out.getvalue().endswith("\r\x1b[K")
    finally:
        hook.uninstall(token)
    assert hook.current() is None


def test_cancel_is_raised_at_the_next_update():
    p = Progress("x")
    hook.request_cancel()
    with pytest.raises(QueryCanceled, match="canceling statement due to user request"):
        p.advance(1)
    assert not hook.cancel_requested()
    p.advance(1)
