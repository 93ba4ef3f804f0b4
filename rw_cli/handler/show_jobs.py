"""SHOW JOBS | SHOW SOURCES | SHOW SINKS: the running stream jobs and their progress."""
from __future__ import annotations

from rw_cli.handler.utility import text_result
from rw_cli.meta.catalog import SINK, SOURCE
from rw_cli.result import Result


def job_progress(session) -> list[dict]:
    """One entry per stream job: id, name, kind, and what it has done in this process."""
    from rw_cli.engine.sink import SinkExecutor
    from rw_cli.engine.source import SourceExecutor

    out = []
    runtime = session.runtime
    for rel_id in sorted(runtime.jobs):
        rel = session.catalog.relations.get(rel_id)
        if rel is None:
            continue
        job = runtime.jobs[rel_id]
        first, last = job.nodes[0].executor, job.nodes[-1].executor
        entry = {"id": rel.id, "name": rel.name, "kind": rel.kind, "progress": "running"}
        if isinstance(first, SourceExecutor):
            first._load()
            offsets = sum(first.offsets.values())
            parts = [f"{first.rows_read} rows read", f"offsets {offsets} over {len(first.offsets)} splits"]
            if first.bad_records:
                parts.append(f"{first.bad_records} bad records skipped")
            backlog = first.backlog()
            if first.exhausted:
                parts.append("exhausted")
            elif backlog is not None:
                parts.append(f"backlog {backlog}")
            entry.update(progress=", ".join(parts), rows=first.rows_read, exhausted=first.exhausted,
                         bounded=first.reader.bounded, backlog=backlog)
        elif isinstance(last, SinkExecutor):
            entry.update(progress=f"{last.rows_out} rows delivered, {last.epochs_out} epochs", rows=last.rows_out)
        out.append(entry)
    return out


def handle(session, what: str) -> Result:
    jobs = job_progress(session)
    if what == "SOURCES":
        names = sorted(r.name for r in session.catalog.relations.values() if r.kind == SOURCE)
        return text_result(f"SHOW {len(names)}", ["Name"], [[n] for n in names])
    if what == "SINKS":
        names = sorted(r.name for r in session.catalog.relations.values() if r.kind == SINK)
        return text_result(f"SHOW {len(names)}", ["Name"], [[n] for n in names])
    rows = [[str(j["id"]), j["name"], j["kind"], j["progress"]] for j in jobs]
    return text_result(f"SHOW {len(rows)}", ["Id", "Name", "Kind", "Progress"], rows)
