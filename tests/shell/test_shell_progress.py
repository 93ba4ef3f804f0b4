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


def test_spinner_when_nothing_can_be_counted():
    p = Progress("select count(*) from big")
    p.started = 0.0
    line = render_line(p, 3.25)
    assert line.startswith("select count(*) from big  ") and line.endswith("  3.2s")
    spinner = line.split("  ")[1]
    assert len(spinner) == 1 and spinner != render_line(p, 3.35).split("  ")[1]  # it turns


class _Recorder:
    def __init__(self):
        self.started, self.stopped = [], []

    def start(self, p):
        self.started.append(p)

    def stop(self, p):
        self.stopped.append(p)


def test_a_select_reports_the_rows_of_its_snapshots(tmp_path):
    """A batch SELECT streams the snapshots it reads from the store, counting rows against
    the total estimated from the relations' sizes; then DuckDB runs (the statement's line)."""
    import rw_cli

    listener = _Recorder()
    with rw_cli.connect(str(tmp_path / "data")) as s:
        s.execute("create table a (k int); insert into a select * from generate_series(1, 50000);"
                  "create table b (k int); insert into b select * from generate_series(1, 20000); flush")
        token = hook.install(listener)
        try:
            assert s.execute("select count(*) from a join b using (k)").fetchall() == [(20000,)]
        finally:
            hook.uninstall(token)
        scans = [p for p in listener.started if p.label.startswith("scan ")]
        assert [p.label for p in scans] == ["scan a, b"]
        scan = scans[0]
        assert scan.done == 70000
        assert scan.total is not None and 0.5 * 70000 <= scan.total <= 1.5 * 70000  # an estimate
        assert scan in listener.stopped  # closed before DuckDB runs the query
        # nobody listening: no progress is made (nor any estimate read)
        listener.started.clear()
        assert s.execute("select count(*) from a").fetchall() == [(50000,)]
        assert listener.started == []


def test_estimate_rows_of_an_empty_and_a_filled_table(tmp_path):
    import rw_cli
    from rw_cli.handler.query import estimate_rows

    with rw_cli.connect(str(tmp_path / "data")) as s:
        s.execute("create table e (k int); create table f (k int primary key);"
                  "insert into f select * from generate_series(1, 1000); flush")
        ids = {r.name: r.id for r in s.catalog.relations.values()}
        assert estimate_rows(s.store, ids["e"]) == 0
        assert 900 <= estimate_rows(s.store, ids["f"]) <= 1100
