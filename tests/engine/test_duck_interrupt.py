"""A DuckDB query stops when another thread asks (`progress.interrupt`: the shell's Ctrl-C
watcher, the server's CancelRequest), and a thread told to stop (`request_interrupt`) runs no
further query: a Ctrl-C's KeyboardInterrupt can be lost in C code that swallows errors."""
from __future__ import annotations

import threading
import time

import numpy as np
import pyarrow as pa
import pytest

from rw_cli.common import progress
from rw_cli.engine import duck
from rw_cli.errors import QueryCanceled

# a 4-way join over random values: minutes of DuckDB work that checks for no signal
LONG = "select count(*) from big a, big b, big c, big d where a.v + b.v * c.v - d.v = -1"


def _big() -> pa.Table:
    return pa.table({"v": np.random.default_rng(1).integers(0, 1000, 2000).astype(np.int32)})


def test_interrupt_from_another_thread_stops_the_query_at_once():
    main = threading.get_ident()

    def stop_it():  # once the query runs (the connection's set-up may take a while)
        time.sleep(0.3)
        while not progress.interrupt(main):
            time.sleep(0.05)

    stopper = threading.Thread(target=stop_it, daemon=True)
    stopper.start()
    started = time.monotonic()
    with pytest.raises(QueryCanceled):
        duck.query(LONG, {"big": _big()})
    stopper.join(timeout=10)
    assert time.monotonic() - started < 20
    assert duck.query("select 42 as x").column("x").to_pylist() == [42]  # a fresh connection


def test_interrupt_of_a_thread_running_no_query_is_harmless():
    assert progress.interrupt(threading.get_ident()) is False
    assert progress.interrupt(None) is False
    assert duck.query("select 1 as x").column("x").to_pylist() == [1]


def test_a_thread_told_to_stop_runs_no_further_query():
    me = threading.get_ident()
    progress.request_interrupt(me)
    try:
        with pytest.raises(QueryCanceled):
            duck.query("select 1 as x")
        with pytest.raises(QueryCanceled):
            progress.check_cancel()  # nor passes a progress point
        other: list = []
        t = threading.Thread(target=lambda: other.append(duck.query("select 2 as x")))
        t.start()
        t.join()
        assert other[0].column("x").to_pylist() == [2]  # other threads go on
    finally:
        progress.clear_interrupt(me)
    assert duck.query("select 3 as x").column("x").to_pylist() == [3]
