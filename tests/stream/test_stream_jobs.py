"""The stream layer on its own: jobs built from hand-made stream plans, without the SQL
frontend or a Session — started (backfill, connect, first barrier), fed, dropped and
recovered from the catalog with plans supplied by the caller."""
from __future__ import annotations

import pyarrow as pa
import pytest

from rw_cli.common.epoch import EpochPair, next_epoch
from rw_cli.common.types import BIGINT, INTEGER as INT
from rw_cli.engine.chunk import StreamChunk
from rw_cli.engine.runtime import EmbeddedRuntime
from rw_cli.errors import ExecutionError
from rw_cli.meta.catalog import MATERIALIZED_VIEW, TABLE, Catalog, ColumnCatalog, RelationCatalog
from rw_cli.store.hummock import HummockStorage
from rw_cli.store.object_store import MemoryObjectStore
from rw_cli.stream.builder import relation_state_table, table_job
from rw_cli.stream.job import build_job, drop_job, start_job
from rw_cli.stream.plan import (JobPlan, StreamHashJoin, StreamMaterialize, StreamTableScan, StreamValues,
                                append_only)
from rw_cli.stream.recovery import recover


class Ctx:
    """What a job lives in: a catalog, a store, a runtime and barriers (a Session's part)."""

    def __init__(self, object_store):
        self.store = HummockStorage(object_store, background_compaction=False)
        self.catalog = Catalog.from_bytes(self.store.extra)
        self.runtime = EmbeddedRuntime()
        committed = self.store.committed_epoch
        self.epoch = EpochPair(next_epoch(committed), committed)
        self.fail_barrier = False

    def barrier(self) -> None:
        pair = EpochPair(next_epoch(self.epoch.curr), self.epoch.curr)
        if self.fail_barrier:
            raise ExecutionError("the barrier failed")
        self.runtime.barrier(pair)
        self.store.commit_epoch(pair.prev, self.catalog.to_bytes())
        self.runtime.committed(pair.prev)
        self.epoch = pair

    def rows(self, rel: RelationCatalog) -> list[tuple]:
        t = relation_state_table(self.store, rel).scan()
        return sorted(zip(*[c.to_pylist() for c in t.columns]))


def _table(ctx: Ctx, name: str = "t", append_only: bool = False) -> RelationCatalog:
    rel = RelationCatalog(ctx.catalog.alloc_id(), name, TABLE,
                          [ColumnCatalog("a", INT), ColumnCatalog("_row_id", BIGINT, hidden=True)], [1],
                          append_only=append_only)
    ctx.catalog.add(rel)
    ctx.runtime.add_job(table_job(ctx.store, rel))
    return rel


def _insert(ctx: Ctx, rel: RelationCatalog, values: list[int], first_id: int) -> None:
    data = pa.table({"a": pa.array(values, pa.int32()),
                     "_row_id": pa.array(range(first_id, first_id + len(values)), pa.int64())})
    ctx.runtime.push(rel.id, StreamChunk.inserts(data))


def _copy_of(ctx: Ctx, table: RelationCatalog, name: str) -> tuple[RelationCatalog, StreamMaterialize]:
    """An MV that copies a table: scan -> materialize, with the table's columns and key."""
    types = [c.type for c in table.columns]
    scan = StreamTableScan(types, list(table.pk), relation=table)
    root = StreamMaterialize(types, list(table.pk), [scan], names=[c.name for c in table.columns],
                             hidden=[c.hidden for c in table.columns], name=name)
    rel = RelationCatalog(ctx.catalog.alloc_id(), name, MATERIALIZED_VIEW,
                          [ColumnCatalog(c.name, c.type, c.hidden) for c in table.columns], list(table.pk),
                          dependencies=[table.id], parallelism=1)
    return rel, root


def test_a_job_backfills_follows_its_upstream_and_recovers():
    objects = MemoryObjectStore()
    ctx = Ctx(objects)
    t = _table(ctx)
    _insert(ctx, t, [1, 2], 1)
    ctx.barrier()
    m, root = _copy_of(ctx, t, "m")
    start_job(ctx, m, build_job(ctx, root, m))
    assert ctx.rows(m) == [(1, 1), (2, 2)]  # the snapshot, backfilled
    _insert(ctx, t, [3], 3)
    ctx.barrier()
    assert ctx.rows(m) == [(1, 1), (2, 2), (3, 3)]  # then the change stream
    ctx.store.close()

    again = Ctx(objects)  # a new process: jobs come back from the catalog
    plans = {m.id: JobPlan(root=_copy_of(again, again.catalog.get("t"), "m")[1])}
    recover(again, lambda rel: plans.get(rel.id, JobPlan()))
    assert sorted(again.runtime.jobs) == [t.id, m.id]
    _insert(again, again.catalog.get("t"), [4], 4)
    again.barrier()
    assert again.rows(again.catalog.get("m")) == [(1, 1), (2, 2), (3, 3), (4, 4)]
    again.store.close()


def test_a_start_that_fails_leaves_no_job_no_entry_no_rows():
    ctx = Ctx(MemoryObjectStore())
    t = _table(ctx)
    _insert(ctx, t, [1, 2], 1)
    ctx.barrier()
    m, root = _copy_of(ctx, t, "m")
    ctx.fail_barrier = True
    with pytest.raises(ExecutionError):
        start_job(ctx, m, build_job(ctx, root, m))
    ctx.fail_barrier = False
    assert ctx.catalog.get("m") is None and list(ctx.runtime.jobs) == [t.id]
    ctx.barrier()
    assert ctx.rows(m) == []
    ctx.store.close()


def test_drop_removes_the_job_and_its_rows():
    ctx = Ctx(MemoryObjectStore())
    t = _table(ctx)
    _insert(ctx, t, [5], 1)
    ctx.barrier()
    m, root = _copy_of(ctx, t, "m")
    start_job(ctx, m, build_job(ctx, root, m))
    drop_job(ctx, m)
    ctx.barrier()
    assert ctx.catalog.get("m") is None and ctx.rows(m) == [] and ctx.rows(t) == [(5, 1)]
    _insert(ctx, t, [6], 2)  # the table's changes no longer reach the dropped job
    ctx.barrier()
    ctx.store.close()


def test_append_only_follows_the_plan():
    ctx = Ctx(MemoryObjectStore())
    log, keyed = _table(ctx, "log", append_only=True), _table(ctx, "keyed")
    types = [INT, BIGINT]
    scan_log = StreamTableScan(types, [1], relation=log)
    scan_keyed = StreamTableScan(types, [1], relation=keyed)
    assert append_only(scan_log) and not append_only(scan_keyed)
    assert append_only(StreamValues(types, [1]))
    inner = StreamHashJoin(types + types, [1, 3], [scan_log, StreamValues(types, [1])], left_keys=[0], right_keys=[0])
    outer = StreamHashJoin(types + types, [1, 3], [scan_log, scan_log], left_keys=[0], right_keys=[0], kind="left")
    assert append_only(inner) and not append_only(outer)
    ctx.store.close()
