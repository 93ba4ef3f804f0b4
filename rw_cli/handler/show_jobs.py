"""SHOW JOBS | SHOW SOURCES | SHOW SINKS: the running stream jobs and their progress."""
from __future__ import annotations

from rw_cli.handler.utility import text_result
from rw_cli.meta.catalog import SINK, SOURCE
from rw_cli.result import Result


def handle(session, what: str) -> Result:
    from rw_cli.stream.progress import job_progress

    jobs = job_progress(session)
    if what == "SOURCES":
        names = sorted(r.name for r in session.catalog.relations.values() if r.kind == SOURCE)
        return text_result(f"SHOW {len(names)}", ["Name"], [[n] for n in names])
    if what == "SINKS":
        names = sorted(r.name for r in session.catalog.relations.values() if r.kind == SINK)
        return text_result(f"SHOW {len(names)}", ["Name"], [[n] for n in names])
    rows = [[str(j["id"]), j["name"], j["kind"], j["progress"]] for j in jobs]
    return text_result(f"SHOW {len(rows)}", ["Id", "Name", "Kind", "Progress"], rows)
