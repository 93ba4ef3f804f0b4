"""A stream job's start and end: built from its plan with state table ids allocated in the
catalog, filled from its upstreams' snapshots (backfill), connected to their change streams
and committed with the catalog; dropped with its rows and its internal state.

`ctx` is what a job lives in: the session's catalog, store, runtime and barriers.
"""
from __future__ import annotations

from rw_cli.meta.catalog import RelationCatalog
from rw_cli.stream.builder import StreamBuilder, relation_state_table
from rw_cli.stream.plan import StreamMaterialize


def stream_builder(ctx, rel: RelationCatalog, table_ids=None) -> StreamBuilder:
    """A builder whose state table ids are new (recorded in `rel`) or, on recovery, the
    recorded ones again in the same order."""
    if table_ids is None:
        rel.shared_subplans = True
        rel.append_logs = True

        def alloc():
            i = ctx.catalog.alloc_id()
            rel.state_table_ids.append(i)
            return i
    else:
        it = iter(table_ids)

        def alloc():
            return next(it)
    return StreamBuilder(ctx.store, alloc, fresh=table_ids is None, parallelism=rel.parallelism,
                         watermark_of=ctx.runtime.watermark, exchange=ctx.runtime.exchange,
                         share=rel.shared_subplans, logs=rel.append_logs)


def build_job(ctx, root: StreamMaterialize, rel: RelationCatalog, table_ids=None):
    """The job of an MV or index: its plan's executors, then its materialize."""
    return stream_builder(ctx, rel, table_ids).build(root, rel)


def start_job(ctx, rel: RelationCatalog, job) -> None:
    """Register a new job, fill it from its upstreams' snapshots, connect it to their change
    streams and commit it with the catalog; a failed backfill leaves nothing behind."""
    from rw_cli.stream import background

    settings = getattr(ctx, "settings", None)
    snapshot = settings is not None and str(settings.get("streaming_use_snapshot_backfill", "false")).lower() == "true"
    rel.backfill_type = "SNAPSHOT_BACKFILL" if snapshot else "ARRANGEMENT_BACKFILL"
    ctx.catalog.add(rel)
    if _without_snapshot(rel):  # a sink WITH (snapshot = 'false'): only the changes from now on
        try:
            ctx.runtime.add_job(job)
            ctx.runtime.connect(job)
            ctx.barrier()
        except BaseException:
            if not _handed_to_store(ctx, rel):
                drop_job(ctx, rel)
            raise
        return
    if background.throttled(ctx, rel):  # a foreground backfill under BACKFILL_RATE_LIMIT
        _start_throttled(ctx, rel, job)
        return
    try:
        if background.wanted(ctx, rel):  # BACKGROUND_DDL: returns at once, status Creating
            background.start(ctx, rel, job)
        else:
            ctx.runtime.add_job(job)
            backfill(ctx, job)
            ctx.runtime.connect(job)
        ctx.barrier()
    except BaseException:
        if not _handed_to_store(ctx, rel):  # a failure before the commit: undo every step
            drop_job(ctx, rel)
        raise


def _without_snapshot(rel: RelationCatalog) -> bool:
    """A sink created WITH (snapshot = 'false'): it skips its upstreams' current rows."""
    from rw_cli.meta.catalog import SINK

    if rel.kind != SINK or not isinstance(rel.connector, dict):
        return False
    options = rel.connector.get("options") or {}
    return str(options.get("snapshot", "true")).strip().lower() == "false"


def _start_throttled(ctx, rel: RelationCatalog, job) -> None:
    """A foreground CREATE whose backfill has a rate limit: backfilled on barriers as a
    background job is, and returns once it is Created; an error or Ctrl-C while it waits
    drops it (a foreground CREATE that did not finish leaves nothing)."""
    from rw_cli.stream import background

    try:
        background.start(ctx, rel, job)
        background.wait(ctx, only=rel.id)
    except BaseException:
        if rel.id in ctx.catalog.relations:
            drop_job(ctx, rel)
            ctx.barrier()
        raise


def _handed_to_store(ctx, rel: RelationCatalog) -> bool:
    """Whether the catalog the store last received for a commit holds `rel` (then the job
    may be durable, and only a DROP removes it)."""
    from rw_cli.meta.catalog import Catalog

    return rel.id in Catalog.from_bytes(ctx.store.requested_extra).relations


def backfill(ctx, job) -> None:
    """The new job reads its upstreams' snapshots (shown as progress on a terminal; Ctrl-C
    between chunks cancels the CREATE, which then leaves nothing behind)."""
    import pyarrow as pa

    from rw_cli.common.progress import Progress
    from rw_cli.engine.chunk import StreamChunk

    snapshots = []
    for upstream_id, node in job.scans:
        upstream = ctx.catalog.relations[upstream_id]
        live = ctx.runtime.live_table(upstream_id)
        snapshots.append((node, (live if live is not None else relation_state_table(ctx.store, upstream)).scan()))
    with Progress("backfill", total=sum(t.num_rows for _, t in snapshots)) as progress:
        for node, snapshot in snapshots:
            for batch in snapshot.to_batches(max_chunksize=65536):
                if batch.num_rows:
                    ctx.runtime.push_to(job, node, StreamChunk.inserts(pa.Table.from_batches([batch])))
                    progress.advance(batch.num_rows)


def drop_job(ctx, rel: RelationCatalog) -> None:
    """Stop a relation's job; its rows and its job's internal state (append logs and keys)
    go with it at the current epoch, and the catalog forgets it."""
    from rw_cli.stream import background

    background.forget(ctx, rel.id)
    if rel.id in ctx.runtime.jobs:
        ctx.runtime.drop_job(rel.id)
    for table_id in [rel.id, *rel.state_table_ids]:
        ctx.store.drop_log(table_id, ctx.epoch.curr)
    ctx.store.truncate_tables([rel.id, *rel.state_table_ids], ctx.epoch.curr)
    if rel.id in ctx.catalog.relations:  # (a failed epoch's rollback may have removed it)
        ctx.catalog.remove(rel.id)


def replace_job(ctx, rel: RelationCatalog, root: StreamMaterialize) -> None:
    """ALTER MATERIALIZED VIEW ... AS: the MV's job runs a new plan from now on. Its rows
    stay as they are (they are not computed again) and its downstream jobs stay connected;
    the old operators' state goes, and the new operators fill theirs from the upstreams'
    snapshots without writing to the MV, so a later change is computed over everything
    upstream holds, and written by key (`rel.altered`)."""
    from rw_cli.stream import background

    runtime = ctx.runtime
    if not hasattr(runtime, "subscribers") or rel.id in background.creating(ctx):
        from rw_cli.errors import NotSupported

        raise NotSupported("ALTER MATERIALIZED VIEW ... AS of a job still being created or on this runtime")
    downstream = list(runtime.subscribers.get(rel.id, []))
    old_ids = list(rel.state_table_ids)
    runtime.drop_job(rel.id)
    for table_id in old_ids:
        ctx.store.drop_log(table_id, ctx.epoch.curr)
    ctx.store.truncate_tables(old_ids, ctx.epoch.curr)
    rel.state_table_ids = []
    rel.altered = True
    job = build_job(ctx, root, rel)
    runtime.add_job(job)
    mat = job.root.executor
    mat.muted = True  # until the barrier has flushed what the snapshots made (an aggregate's rows)
    try:
        backfill(ctx, job)
        ctx.catalog.changed()
        ctx.barrier()
    finally:
        mat.muted = False
    runtime.connect(job)
    runtime.subscribers.setdefault(rel.id, []).extend(downstream)
