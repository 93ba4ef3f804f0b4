"""A reused Spark worker's garbage collection (rw_cli.spark.worker.after_task): PySpark's
daemon collects after every task; what a task leaves alive is frozen out of that, and a
full collection still runs every FULL_GC_EVERY tasks, so cycles dropped meanwhile are freed."""
from __future__ import annotations

import gc
import weakref

import pytest

from rw_cli.spark import worker


class _Node:
    pass


@pytest.fixture
def tasks(monkeypatch):
    monkeypatch.setattr(worker, "_tasks_done", 0)
    yield
    gc.unfreeze()


def test_a_task_freezes_what_it_leaves_and_every_nth_task_unfreezes(tasks):
    n = worker.FULL_GC_EVERY
    for i in range(1, 2 * n + 1):
        worker.after_task()
        assert (gc.get_freeze_count() > 0) == (i % n != 0), i


def test_a_cycle_dropped_after_a_freeze_is_freed_by_the_next_full_collection(tasks):
    a, b = _Node(), _Node()
    a.other, b.other = b, a  # a cycle: only the cyclic collector frees it
    alive = weakref.ref(a)
    worker.after_task()  # frozen with the task's other survivors
    del a, b
    gc.collect()  # the daemon's collection after the next task
    assert alive() is not None
    while worker._tasks_done % worker.FULL_GC_EVERY:
        worker.after_task()
    gc.collect()
    assert alive() is None
