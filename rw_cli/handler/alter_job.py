"""ALTER TABLE | MATERIALIZED VIEW | INDEX | SINK | SOURCE name SET PARALLELISM | SET
RESOURCE_GROUP | RESET RESOURCE_GROUP [DEFERRED]: settings of a streaming job.

rw runs every job in this one process: the parallelism a job is configured with is recorded
and shown (rw_streaming_parallelism, rw_table_fragments) and checked against its max
parallelism as RisingWave checks it; the job keeps the actors it was built with (its state is
laid out for them). A resource group (which compute nodes run the job in RisingWave)
is recorded and shown in rw_streaming_jobs.
"""
from __future__ import annotations

from rw_cli.common import parallelism
from rw_cli.errors import CatalogError, NotSupported
from rw_cli.meta.catalog import INDEX, MATERIALIZED_VIEW, SINK, SOURCE, TABLE
from rw_cli.meta.system_params import check_resource_group_license
from rw_cli.result import Result

KINDS = {"table": TABLE, "materialized view": MATERIALIZED_VIEW, "index": INDEX, "sink": SINK,
          "source": SOURCE}


def handle(session, spec: dict) -> Result:
    from rw_cli.handler.access import find_relation

    kind = KINDS.get(spec["kind"])
    if kind is None:
        raise NotSupported(f"ALTER {spec['kind'].upper()} ... SET {spec['key'].upper()}")
    tag = "ALTER_" + spec["kind"].upper().replace(" ", "_")
    try:
        rel = find_relation(session.catalog, spec["name"], kind)
    except CatalogError:
        if spec["exists"]:
            return Result(tag)
        raise
    key, value = spec["key"], spec["value"]
    if key == "parallelism":
        config = parallelism.check("parallelism", "default" if value is None else str(value))
        if config == parallelism.DEFAULT:
            config = "adaptive"
        parallelism.check_max(config, rel.max_parallelism)
        rel.parallelism_config = config
    elif key == "resource_group":
        check_resource_group_license(session.catalog.system_params)
        rel.resource_group = "" if value is None or str(value).lower() == "default" else str(value)
    else:
        raise NotSupported(f"ALTER {spec['kind'].upper()} ... SET {key.upper()}")
    session.barrier()  # the catalog is durable when the statement returns
    return Result(tag)
