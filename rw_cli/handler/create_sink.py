"""CREATE SINK name FROM relation | AS SELECT ... WITH (connector = 'blackhole' | 'file', ...)
[FORMAT PLAIN ENCODE JSON | CSV | PARQUET].

A sink's job is the query's stream plan ending in a SinkExecutor instead of a materialize.
Like RisingWave, a sink over a table or MV first delivers the relation's current rows
(backfill), then its changes; over a source it starts at the source's current offsets.
Options: `type = 'append-only' | 'upsert'`, `force_append_only`; for `file`: `path` (also
`fs.path`), a directory that receives one file per committed epoch; for `s3`:
`s3.bucket_name`, `s3.path` (a prefix), `s3.endpoint_url`, `s3.region_name`, credentials.
"""
from __future__ import annotations

from sqlglot import exp

from rw_cli.errors import BindError, CatalogError
from rw_cli.meta.catalog import SINK, ColumnCatalog, RelationCatalog
from rw_cli.result import Result


def plan(session, tree: exp.Create, existing: bool = False):
    """`existing`: a relation the catalog has (recovery) plans as it was accepted, whatever
    this session's settings say."""
    from rw_cli.sql.planner import StreamPlanner

    query = tree.expression
    if query is None:
        raise BindError("CREATE SINK needs FROM relation or AS SELECT ...")
    return StreamPlanner(session.catalog, existing or session.settings.allow_cross_join).plan_mv(query, tree.this.name)


_NOT_APPEND_ONLY = ("The sink cannot be append-only. Please add \"force_append_only='true'\" in WITH options to "
                    "force the sink to be append-only. Notice that this will cause the sink executor to drop DELETE "
                    "messages and convert UPDATE messages to INSERT.")


def sink_type(spec: dict, root) -> dict:
    """The sink's `type`, as RisingWave decides it: `append-only` over a query whose changes
    may retract only with `force_append_only = 'true'` (which drops the retractions);
    without a type, append-only when the query only ever inserts, else `upsert` (every change
    delivered with its op) — never retractions dropped silently."""
    from rw_cli.stream.plan import append_only

    opts = dict(spec["options"])
    given = opts.get("type", "").lower()
    fmt = (spec.get("format") or "").lower()
    if opts["connector"] == "kafka":  # the format says it: PLAIN appends, UPSERT and DEBEZIUM change
        want = "upsert" if fmt in ("upsert", "debezium") else "append-only"
        if given and given != want:
            raise BindError(f"sink type '{given}' does not match FORMAT {(fmt or 'plain').upper()}",
                            hint="FORMAT PLAIN is append-only; use FORMAT UPSERT for updates and deletes")
        given = want
        opts["type"] = want
    if given not in ("", "append-only", "upsert"):
        raise BindError(f"sink type must be 'append-only' or 'upsert', not '{opts['type']}'")
    inserts_only = append_only(root.inputs[0])
    force = opts.get("force_append_only", "false").lower() == "true"
    if given == "append-only" and not inserts_only and not force:
        raise BindError(_NOT_APPEND_ONLY)
    if not given:
        opts["type"] = "append-only" if inserts_only or force else "upsert"
    return dict(spec, options=opts)


def handle(session, tree: exp.Create, sql: str) -> Result:
    from rw_cli.connector import connector_spec
    from rw_cli.handler.create_mv import streaming_parallelism
    from rw_cli.stream.job import start_job
    from rw_cli.stream.sink_job import build_sink_job

    name = tree.this.name
    if session.catalog.get(name) is not None:
        if tree.args.get("exists"):
            return Result("CREATE_SINK", notices=[f'relation "{name}" already exists, skipping'])
        raise CatalogError(f'relation "{name}" already exists')
    spec = connector_spec(tree)
    if not spec:
        raise BindError("a sink needs WITH (connector = '...')")
    root, upstreams = plan(session, tree)
    spec = sink_type(spec, root)
    if spec["options"]["connector"] == "kafka":
        from rw_cli.connector.kafka import check_topic, client_config

        check_topic(client_config(spec["options"]), spec["options"]["topic"])
    if session.dirty:
        session.barrier()
    columns = [ColumnCatalog(n, t, h) for n, t, h in zip(root.names, root.types, root.hidden)]
    rel = RelationCatalog(session.catalog.alloc_id(), name, SINK, columns, list(root.stream_key),
                          definition=sql, dependencies=[u.id for u in upstreams],
                          parallelism=streaming_parallelism(session, SINK), connector=spec,
                          parallelism_config=session.settings.job_parallelism(SINK))
    start_job(session, rel, build_sink_job(session, root, rel))
    return Result("CREATE_SINK")
