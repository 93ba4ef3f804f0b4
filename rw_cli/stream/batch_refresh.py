"""Batch refresh materialized views (`WITH (refresh.interval.sec = n)`): RisingWave refreshes
such an MV periodically instead of on every upstream change, so a read between two refreshes
sees the upstream as it was at the last one.

The job is connected to its upstreams' change streams as any MV is, but the changes it is sent
are held (`EmbeddedRuntime.held`, as a background backfill holds them) and go through
together at the first barrier `n` seconds after the last refresh (the first one is the
CREATE's snapshot). The held changes live in memory only: on recovery the job is filled
again from its upstreams' snapshots (`rw_cli.stream.recovery`), which is itself a refresh,
so a restart never loses a change. (A runtime that could not hold changes would keep the MV
up to date on every barrier.)
"""
from __future__ import annotations

import time
import weakref

from rw_cli.meta.catalog import MATERIALIZED_VIEW, RelationCatalog

# per runtime: the monotonic time of each batch refresh MV's last refresh, by relation id
_LAST: "weakref.WeakKeyDictionary[object, dict[int, float]]" = weakref.WeakKeyDictionary()


def periodic(ctx, rel: RelationCatalog) -> bool:
    """Whether `rel` is a batch refresh MV this runtime refreshes periodically."""
    return (rel.kind == MATERIALIZED_VIEW and rel.refresh_interval_sec is not None
            and hasattr(ctx.runtime, "held"))


def advance(ctx) -> None:
    """Before a barrier: start holding the changes of a batch refresh MV that has just been
    created (or backfilled again), and let through those of each MV whose interval has
    passed since its last refresh."""
    from rw_cli.stream import background

    last = _LAST.setdefault(ctx.runtime, {})
    held = ctx.runtime.held
    creating = background.creating(ctx)
    now = time.monotonic()
    for rel_id in list(last):
        if rel_id not in ctx.runtime.jobs:  # dropped
            last.pop(rel_id)
    for rel_id in ctx.runtime.jobs:
        rel = ctx.catalog.relations.get(rel_id)
        if rel is None or rel_id in creating or not periodic(ctx, rel):
            continue
        if rel_id not in held or rel_id not in last:  # its snapshot has just gone through
            held.setdefault(rel_id, [])
            last[rel_id] = now
            continue
        if now - last[rel_id] >= rel.refresh_interval_sec:
            job = ctx.runtime.jobs[rel_id]
            changes, held[rel_id] = held[rel_id], []
            for node, chunk in changes:
                ctx.runtime.push_to(job, node, chunk)
            last[rel_id] = now
