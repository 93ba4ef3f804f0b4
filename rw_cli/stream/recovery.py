"""Rebuild every stream job from the committed catalog when a session opens (or after an
epoch failed as a whole). The jobs are built again from plans that `plan_of` makes from each
relation's stored definition, with the state table ids the catalog recorded, so every
executor finds its state."""
from __future__ import annotations

from collections.abc import Callable

from rw_cli.meta.catalog import INDEX, SINK, SOURCE, SUBSCRIPTION, TABLE, VIEW, RelationCatalog
from rw_cli.stream import background, batch_refresh
from rw_cli.stream.builder import table_job
from rw_cli.stream.job import build_job
from rw_cli.stream.plan import JobPlan
from rw_cli.stream.sink_job import build_sink_job
from rw_cli.stream.source_job import connector_table_job, source_job


def recover(ctx, plan_of: Callable[[RelationCatalog], JobPlan]) -> None:
    for rel in ctx.catalog.in_creation_order():
        if rel.kind == VIEW:
            continue
        plan = plan_of(rel)
        if rel.kind == SOURCE:
            ctx.runtime.add_job(source_job(ctx.store, rel, plan.generated))
            continue
        if rel.kind == TABLE:
            job = connector_table_job(ctx.store, rel, plan.watermark, plan.generated) if rel.connector \
                else table_job(ctx.store, rel, plan.watermark)
            ctx.runtime.add_job(job)
            continue
        # a batch refresh MV is filled again too: the changes it held are gone
        resumed = (rel.creating or batch_refresh.periodic(ctx, rel)) and not getattr(ctx, "read_only", False)
        table_ids = rel.state_table_ids
        if resumed:
            background.restart(ctx, rel)
            # ... and build it as a new job, on new state tables: actors that run elsewhere
            # (Spark tasks) read the committed version, where the partial state still is
            rel.state_table_ids, table_ids = [], None
            ctx.catalog.changed()
        if rel.kind == SINK:
            job = build_sink_job(ctx, plan.root, rel, table_ids=table_ids, into_rows=plan.into_rows)
        else:
            assert rel.kind in (INDEX, "materialized view", SUBSCRIPTION), rel.kind
            job = build_job(ctx, plan.root, rel, table_ids=table_ids)
        ctx.runtime.add_job(job)
        if resumed:
            background.resume(ctx, rel, job)  # a job created in the background backfills again
        else:
            ctx.runtime.connect(job)
