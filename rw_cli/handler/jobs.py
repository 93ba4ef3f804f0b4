"""WAIT and CANCEL JOBS: the statements that operate jobs created in the background
(rw_cli.stream.background), and ALTER <job> SET ..._RATE_LIMIT | SET CONFIG | RESET CONFIG."""
from __future__ import annotations

from rw_cli.errors import CatalogError
from rw_cli.result import Result


def handle_wait(session) -> Result:
    """Blocks until every job created in the background has finished its backfill."""
    from rw_cli.stream import background

    background.wait(session)
    return Result("WAIT")


def handle_cancel(session, ids: list[int]) -> Result:
    """Stops the named creating jobs and removes them with their rows and state, as DROP
    does; an id that names no creating job is an error and nothing is cancelled."""
    from rw_cli.handler.authz import require_owner
    from rw_cli.handler.drop import drop_relation
    from rw_cli.stream import background

    jobs = background.creating(session)
    rels = []
    for i in ids:
        rel = session.catalog.relations.get(i)
        if rel is None or i not in jobs:
            raise CatalogError(f"job {i} is not a creating job", hint="SHOW JOBS lists them")
        require_owner(session, rel)
        rels.append(rel)
    for rel in rels:
        drop_relation(session, rel)
    session.barrier()
    from rw_cli.handler.utility import text_result

    return text_result("CANCEL_JOBS", ["Id"], [[str(r.id)] for r in rels])


def handle_alter(session, spec: dict) -> Result:
    """ALTER <job> SET ..._RATE_LIMIT = n | DEFAULT, SET CONFIG (k = v, ...), RESET CONFIG (k, ...)
    on a running or creating job; kept in the catalog (durable when it returns)."""
    from rw_cli.handler import rate_limit
    from rw_cli.handler.access import find_relation
    from rw_cli.handler.alter_job import KINDS

    tag = "ALTER_" + spec["kind"].upper().replace(" ", "_")
    try:
        rel = find_relation(session.catalog, spec["name"], KINDS[spec["kind"]])
    except (CatalogError, KeyError):
        if spec["exists"]:
            return Result(tag)
        raise
    if "entries" in spec:
        config = dict(rel.job_config)
        for key, value in spec["entries"].items():
            if value is None or value == "default":
                config.pop(key, None)
            else:
                config[key] = value
        rel.job_config = config
    else:
        from rw_cli.stream import throttle

        rate_limit.alter(rel, spec["key"], spec["value"])
        throttle.apply(session, rel)
    session.barrier()
    return Result(tag)
