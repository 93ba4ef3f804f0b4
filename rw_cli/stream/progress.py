"""What each running stream job has done in this process: rows read from its source splits
(offsets, backlog, bad records) or delivered by its sink. SHOW JOBS and `rw run`'s status
line read it."""
from __future__ import annotations


def job_progress(ctx) -> list[dict]:
    """One entry per stream job: id, name, kind, and what it has done in this process."""
    from rw_cli.engine.sink import SinkExecutor
    from rw_cli.engine.source import SourceExecutor
    from rw_cli.stream import background

    out = []
    runtime = ctx.runtime
    for rel_id in sorted(runtime.jobs):
        rel = ctx.catalog.relations.get(rel_id)
        if rel is None:
            continue
        job = runtime.jobs[rel_id]
        first, last = job.nodes[0].executor, job.nodes[-1].executor
        entry = {"id": rel.id, "name": rel.name, "kind": rel.kind, "progress": "running"}
        backfilled = background.progress(ctx, rel_id)
        if backfilled is not None:  # created in the background, still backfilling
            done, total = backfilled
            entry.update(progress=f"creating: {done} of {total} snapshot rows backfilled", rows=done)
            out.append(entry)
            continue
        if isinstance(first, SourceExecutor):
            first.load_offsets()
            offsets = sum(first.offsets.values())
            parts = [f"{first.rows_read} rows read", f"offsets {offsets} over {len(first.offsets)} splits"]
            if first.bad_records:
                parts.append(f"{first.bad_records} bad records skipped")
            backlog = first.backlog()
            if first.exhausted:
                parts.append("exhausted")
            elif backlog is not None:
                parts.append(f"backlog {backlog}")
            lags = first.split_lags()
            if lags:
                parts.append("lag " + format_lags(lags))
            entry.update(progress=", ".join(parts), rows=first.rows_read, exhausted=first.exhausted,
                         bounded=first.reader.bounded, backlog=backlog, lags=lags)
        elif isinstance(last, SinkExecutor):
            entry.update(progress=f"{last.rows_out} rows delivered, {last.epochs_out} epochs", rows=last.rows_out)
        out.append(entry)
    return out


def format_lags(lags: dict[str, int]) -> str:
    """`p0:12 p1:0`: each split's (partition's) lag, in split order."""
    return " ".join(f"p{s}:{n:,}" for s, n in sorted(lags.items(), key=lambda kv: (len(kv[0]), kv[0])))
