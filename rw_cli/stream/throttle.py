"""A job's rate limits as its executors apply them: RisingWave's limits are rows per second per
parallelism unit, so a job's whole limit is the unit limit times its configured fixed
parallelism (else its actor count). The background backfill reads the backfill limit; a
source's (or connector table's) executor reads the source limit, set when the job is built
and again on ALTER ... SET SOURCE_RATE_LIMIT."""
from __future__ import annotations

from rw_cli.meta.catalog import RelationCatalog


def job_limit(rel: RelationCatalog, kind: str) -> int | None:
    """The job's `kind` limit in rows per second for the whole job, or None (no limit)."""
    n = rel.rate_limits.get(kind)
    if n is None:
        return None
    config = rel.parallelism_config
    return n * max(1, int(config) if config.isdigit() else rel.parallelism)


def apply(ctx, rel: RelationCatalog) -> None:
    """Hand the job's current source limit to its running source executor, if it has one."""
    job = ctx.runtime.jobs.get(rel.id)
    for node in (job.nodes if job is not None else []):
        if hasattr(node.executor, "rate_limit"):
            node.executor.rate_limit = job_limit(rel, "source")
