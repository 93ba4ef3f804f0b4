"""Background DDL: with BACKGROUND_DDL on, CREATE MATERIALIZED VIEW | INDEX | SINK returns once
the job is registered (status Creating) and its backfill proceeds between statements.

The job takes its upstreams' snapshots at once and is connected to their change streams at
once; the changes it receives meanwhile are held (`EmbeddedRuntime.held`) and go through only
after the whole snapshot, so the job sees the snapshot then every later change, as a
foreground CREATE does. Each barrier pushes the next part of the snapshot: as many rows as
its BACKFILL_RATE_LIMIT allows since the last barrier (rows per second per parallelism unit;
0 pauses), else up to `STEP_ROWS`. The job is Created once the held changes went through.

A restart finds the job Creating in the catalog: its partial rows and state are removed and
its backfill starts again from new snapshots (RisingWave continues it from its progress; the
result is the same). WAIT drives barriers until no job is Creating; CANCEL JOBS and DROP
remove a creating job as DROP removes any job.
"""
from __future__ import annotations

import time
import weakref
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from rw_cli.meta.catalog import INDEX, MATERIALIZED_VIEW, SINK, RelationCatalog
from rw_cli.stream.throttle import job_limit

if TYPE_CHECKING:  # imported when a job backfills, not when a session opens
    import pyarrow as pa

    from rw_cli.engine.runtime import Node, StreamJob

STEP_ROWS = 262_144  # rows pushed per barrier without a rate limit
KINDS = (MATERIALIZED_VIEW, INDEX, SINK)


@dataclass
class Creating:
    """A job's backfill in progress: the snapshot batches left per scan, what went through."""

    rel_id: int
    job: StreamJob
    parts: list[tuple[Node, list[pa.RecordBatch]]]
    total: int
    # each scan's upstream relation, its node and its snapshot's rows (the rows of
    # `parts` not gone through yet tell what it has done)
    scans: list[tuple[int, Node, int]] = field(default_factory=list)
    done: int = 0
    tokens: float = 0.0
    last: float | None = None
    started_at: float = field(default_factory=time.time)


_REGISTRY: "weakref.WeakKeyDictionary[object, dict[int, Creating]]" = weakref.WeakKeyDictionary()


def creating(ctx) -> dict[int, Creating]:
    """The jobs of this runtime still backfilling, by relation id."""
    return _REGISTRY.setdefault(ctx.runtime, {})


def wanted(ctx, rel: RelationCatalog) -> bool:
    """Whether this CREATE runs in the background: BACKGROUND_DDL on, a kind RisingWave
    creates in the background, and a runtime that can hold changes (the embedded one)."""
    settings = getattr(ctx, "settings", None)  # a bare stream context has no session settings
    on = settings is not None and str(settings.get("background_ddl")).lower() in ("true", "on", "1")
    return on and rel.kind in KINDS and rel.refresh_interval_sec is None and hasattr(ctx.runtime, "held")


def throttled(ctx, rel: RelationCatalog) -> bool:
    """Whether a foreground CREATE must backfill under its BACKFILL_RATE_LIMIT (on barriers,
    as a background job does, waiting for it)."""
    return (not wanted(ctx, rel) and rel.kind in KINDS and "backfill" in rel.rate_limits
            and rel.refresh_interval_sec is None and hasattr(ctx.runtime, "held"))


def start(ctx, rel: RelationCatalog, job: StreamJob) -> None:
    """Register the creating job, take its snapshots, connect it with its changes held."""
    rel.creating = True
    rel.background_ddl = True
    ctx.runtime.add_job(job)
    resume(ctx, rel, job)


def resume(ctx, rel: RelationCatalog, job: StreamJob) -> None:
    """Take the job's snapshots and hold its upstream changes until they went through."""
    from rw_cli.stream.builder import relation_state_table

    parts, total, scans = [], 0, []
    for upstream_id, node in job.scans:
        live = ctx.runtime.live_table(upstream_id)
        table = (live if live is not None else relation_state_table(ctx.store, ctx.catalog.relations[upstream_id])).scan()
        parts.append((node, [b for b in table.to_batches(max_chunksize=65536) if b.num_rows]))
        total += table.num_rows
        scans.append((upstream_id, node, table.num_rows))
    ctx.runtime.held[rel.id] = []
    ctx.runtime.connect(job)
    creating(ctx)[rel.id] = Creating(rel.id, job, parts, total, scans=scans)


def restart(ctx, rel: RelationCatalog) -> None:
    """On recovery, before the job is built: forget a creating job's partial rows and state
    (key-value state and append logs, as a DROP does)."""
    for table_id in [rel.id, *rel.state_table_ids]:
        ctx.store.drop_log(table_id, ctx.epoch.curr)
    ctx.store.truncate_tables([rel.id, *rel.state_table_ids], ctx.epoch.curr)


def _budget(c: Creating, limit: int | None) -> int:
    """Rows this step may push: a token bucket of `limit` rows per second holding at most
    one second's rows (the first second's rows at once)."""
    if limit is None:
        return STEP_ROWS
    now = time.monotonic()
    if c.last is None:
        c.tokens = float(limit)
    else:
        c.tokens = min(c.tokens + (now - c.last) * limit, float(max(limit, 1)))
    c.last = now
    n = int(min(c.tokens, STEP_ROWS))
    c.tokens -= n
    return n


def advance(ctx) -> None:
    """Before a barrier: push each creating job's next rows; a job whose snapshot has gone
    through gets its held changes and is Created."""
    jobs = creating(ctx)
    if not jobs:
        return
    import pyarrow as pa

    from rw_cli.engine.chunk import StreamChunk

    for rel_id in list(jobs):
        c = jobs[rel_id]
        rel = ctx.catalog.relations.get(rel_id)
        if rel is None or rel_id not in ctx.runtime.jobs:
            jobs.pop(rel_id)
            continue
        budget = _budget(c, job_limit(rel, "backfill"))
        while budget > 0 and c.parts:
            node, batches = c.parts[0]
            if not batches:
                c.parts.pop(0)
                continue
            batch = batches[0]
            take = batch if batch.num_rows <= budget else batch.slice(0, budget)
            if take.num_rows == batch.num_rows:
                batches.pop(0)
            else:
                batches[0] = batch.slice(budget)
            ctx.runtime.push_to(c.job, node, StreamChunk.inserts(pa.Table.from_batches([take])))
            budget -= take.num_rows
            c.done += take.num_rows
        while c.parts and not c.parts[0][1]:
            c.parts.pop(0)
        if not c.parts:
            _finish(ctx, rel, c)


def _finish(ctx, rel: RelationCatalog, c: Creating) -> None:
    for node, chunk in ctx.runtime.held.pop(rel.id, []):
        ctx.runtime.push_to(c.job, node, chunk)
    rel.creating = False
    creating(ctx).pop(rel.id, None)


def forget(ctx, rel_id: int) -> None:
    """The job is dropped (DROP or CANCEL JOBS): nothing of its backfill stays."""
    creating(ctx).pop(rel_id, None)
    held = getattr(ctx.runtime, "held", None)
    if held is not None:
        held.pop(rel_id, None)


def progress(ctx, rel_id: int) -> tuple[int, int] | None:
    """(rows backfilled, snapshot rows) of a creating job, or None."""
    c = creating(ctx).get(rel_id)
    return None if c is None else (c.done, c.total)


def scan_progress(ctx, rel_id: int) -> list[tuple[int, int, int]]:
    """(upstream relation id, rows backfilled, snapshot rows) of each scan of a creating
    job (rw_fragment_backfill_progress); empty for a job not creating."""
    c = creating(ctx).get(rel_id)
    if c is None:
        return []
    left = {id(node): sum(b.num_rows for b in batches) for node, batches in c.parts}
    return [(upstream, total - left.get(id(node), 0), total) for upstream, node, total in c.scans]


def wait(ctx, poll_s: float = 0.05, only: int | None = None) -> None:
    """Drive barriers until no job (or job `only`) is creating (Ctrl-C stops waiting; the
    jobs go on)."""
    def pending() -> bool:
        jobs = creating(ctx)
        return bool(jobs) if only is None else only in jobs

    ctx.barrier()  # the catalog with the creating job is durable before any wait
    while pending():
        time.sleep(poll_s)
        ctx.barrier()
