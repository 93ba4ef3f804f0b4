"""CREATE SINK name FROM relation | AS SELECT ... WITH (connector = 'blackhole' | 'file', ...)
[FORMAT PLAIN ENCODE JSON | CSV | PARQUET], and CREATE SINK name INTO table [(columns)]
FROM relation | AS SELECT ... [WITH (type = ..., force_append_only = ...)].

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
from rw_cli.handler.create_mv import check_not_on_batch_refresh
from rw_cli.meta.catalog import SINK, TABLE, ColumnCatalog, RelationCatalog
from rw_cli.result import Result


def plan(session, tree: exp.Create, existing: bool = False):
    """`existing`: a relation the catalog has (recovery) plans as it was accepted, whatever
    this session's settings say."""
    from rw_cli.sql.planner import StreamPlanner

    query = tree.expression
    if query is None:
        raise BindError("CREATE SINK needs FROM relation or AS SELECT ...")
    return StreamPlanner(session.catalog, existing or session.settings.allow_cross_join).plan_mv(
        query, tree.this.name, unique_names=tree.args.get("into") is None)


_NOT_APPEND_ONLY = ("The sink cannot be append-only. Please add \"force_append_only='true'\" in WITH options to "
                    "force the sink to be append-only. Notice that this will cause the sink executor to drop DELETE "
                    "messages and convert UPDATE messages to INSERT.")


# the sink connectors RisingWave knows (others are `unsupported sink type x`; of these, the ones
# rw_cli.stream.sink_job does not write to are refused as not supported here)
RW_SINK_CONNECTORS = frozenset((
    "blackhole", "kafka", "kinesis", "pulsar", "redis", "mqtt", "nats", "jdbc", "postgres", "mysql", "iceberg",
    "deltalake", "clickhouse", "doris", "starrocks", "cassandra", "scylladb", "elasticsearch", "opensearch",
    "bigquery", "snowflake", "snowflake_v2", "dynamodb", "mongodb", "sqlserver", "google_pubsub", "s3", "gcs",
    "azblob", "webhdfs", "fs", "file", "posix_fs", "http", "redshift", "lancedb", "qdrant", "rabbitmq",
    "elasticsearch_v2", "opensearch_v2", "snowflake_v2", "big_query"))


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
    forced = opts.get("force_append_only")
    if forced is not None and forced.lower() not in ("true", "false"):
        raise BindError("`force_append_only` must be true or false")
    if forced is not None and forced.lower() == "true" and given not in ("", "append-only"):
        raise BindError("The force_append_only can be only used for type = 'append-only'")
    inserts_only = append_only(root.inputs[0])
    # `ignore_delete = 'true'` (RisingWave's newer name) drops the retractions too
    force = any(opts.get(k, "false").lower() == "true" for k in ("force_append_only", "ignore_delete"))
    if given == "append-only" and not inserts_only and not force:
        raise BindError(_NOT_APPEND_ONLY)
    if not given:
        opts["type"] = "append-only" if inserts_only or force else "upsert"
    return dict(spec, options=opts)


def handle(session, tree: exp.Create, sql: str) -> Result:
    from rw_cli.connector import connector_spec
    from rw_cli.handler.rate_limit import limits_at_create
    from rw_cli.handler.create_mv import streaming_parallelism
    from rw_cli.stream.job import start_job
    from rw_cli.stream.sink_job import build_sink_job

    name = tree.this.name
    if session.catalog.get(name) is not None:
        if tree.args.get("exists"):
            return Result("CREATE_SINK", notices=[f'relation "{name}" already exists, skipping'])
        raise session.catalog.name_taken(name)
    if tree.args.get("into") is not None:
        return handle_into(session, tree, sql)
    spec = connector_spec(tree)
    if not spec:
        raise BindError("sink properties not provided: a sink needs WITH (connector = '...')")
    if spec["options"]["connector"] == "table":
        raise BindError("unsupported sink type table", hint="a sink into a table is CREATE SINK name INTO table ...")
    if spec["options"]["connector"] not in RW_SINK_CONNECTORS:
        raise BindError(f"unsupported sink type {spec['options']['connector']}",
                        hint="sink connectors: blackhole, file, http, kafka, s3")
    root, upstreams = plan(session, tree)
    check_not_on_batch_refresh(upstreams)
    if "backfill_order" in spec["options"]:
        from rw_cli.handler import backfill_order

        backfill_order.check(session.catalog, sql, upstreams)
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
                          parallelism_config=session.settings.job_parallelism(SINK),
                          sink_decouple=str(session.settings.get("sink_decouple")).lower() == "true",
                          rate_limits=limits_at_create(session.settings, SINK))
    start_job(session, rel, build_sink_job(session, root, rel))
    return Result("CREATE_SINK")


# A sink INTO a table: its changes enter the table as the table's own DML does (the table's
# primary key resolves conflicts between sinks and DML); RisingWave's rules for which sinks a
# table accepts are kept.
_NPK_APPEND_ONLY = "Only append-only sinks can sink to a table without primary keys."
_CYCLE = "Creating such a sink will result in circular dependency"


def handle_into(session, tree: exp.Create, sql: str) -> Result:
    from rw_cli.connector import connector_spec
    from rw_cli.handler.rate_limit import limits_at_create
    from rw_cli.handler.create_mv import streaming_parallelism
    from rw_cli.stream.job import start_job
    from rw_cli.stream.sink_job import build_sink_job

    name = tree.this.name
    target = into_table(session, tree.args["into"])
    spec = connector_spec(tree, default="table")
    if spec["options"]["connector"] != "table":
        raise BindError(f"a sink INTO a table takes no connector (got '{spec['options']['connector']}')")
    if spec["format"] or spec["encode"]:
        raise BindError("connector table is not supported by FORMAT ... ENCODE ... syntax")
    root, upstreams = plan(session, tree)
    check_not_on_batch_refresh(upstreams)
    spec = sink_type(spec, root)
    append_only = spec["options"]["type"] == "append-only"
    if not target.user_pk and not append_only:
        raise BindError(_NPK_APPEND_ONLY)
    if target.append_only and not append_only:
        raise BindError("Only append-only sinks can sink to an append-only table.")
    check_no_cycle(session.catalog, [u.id for u in upstreams], target.id)
    visible = [(n, t) for n, t, h in zip(root.names, root.types, root.hidden) if not h]
    spec["into_columns"] = into_columns(target, tree.args.get("into_columns"), len(visible))
    if session.dirty:
        session.barrier()
    columns = [ColumnCatalog(n, t, h) for n, t, h in zip(root.names, root.types, root.hidden)]
    rel = RelationCatalog(session.catalog.alloc_id(), name, SINK, columns, list(root.stream_key),
                          definition=sql, dependencies=[u.id for u in upstreams] + [target.id],
                          parallelism=streaming_parallelism(session, SINK), connector=spec,
                          parallelism_config=session.settings.job_parallelism(SINK), target=target.id,
                          rate_limits=limits_at_create(session.settings, SINK))
    rows = into_rows(session, rel)
    import pyarrow as pa

    rows(pa.table({f"_{i}": pa.nulls(0, t.arrow()) for i, (_, t) in enumerate(visible)}))  # casts exist
    start_job(session, rel, build_sink_job(session, root, rel, into_rows=rows))
    return Result("CREATE_SINK")


def into_table(session, name: str) -> RelationCatalog:
    schema, _, bare = name.rpartition(".")
    target = session.catalog.get(session.catalog.qualified(bare, schema or None))
    if target is None or target.kind != TABLE:
        raise CatalogError(f'table "{name}" does not exist')
    if target.connector:
        raise BindError(f'table "{name}" has a connector: a sink cannot write into it')
    return target


def into_columns(target: RelationCatalog, names: list[str] | None, n: int) -> list[str]:
    """The target's columns the sink's n columns go to, in order: those named, else its
    first n columns (not hidden, not generated); the others get their defaults."""
    free = [c.name for c in target.columns if not c.hidden and not c.generated]
    if names:
        for c in names:
            if c not in free:
                raise BindError(f'column "{c}" of table "{target.name}" does not exist or is generated')
        if len(set(names)) != len(names):
            raise BindError("column specified more than once")
    else:
        names = free[:n]
    if len(names) != n:
        raise BindError(f'the sink has {n} columns, but {len(names)} columns of table "{target.name}" receive them')
    return names


def into_rows(session, sink: RelationCatalog):
    """The function turning the sink's visible columns into whole rows of its target table
    (defaults, row ids, casts as an INSERT of those columns makes them), looked up by id so a
    renamed table is still found."""
    from rw_cli.handler.dml import positional, table_rows

    def rows(data):
        target = session.catalog.relations[sink.target]
        indices = [target.column_index(n) for n in sink.connector["into_columns"]]
        return positional(table_rows(session, target, data, indices, check=False), target)
    return rows


def check_no_cycle(catalog, upstream_ids: list[int], target_id: int) -> None:
    """The table a sink writes into must not feed the sink's query: not directly, through
    MVs, indexes or views over it, nor through other sinks into the tables it reads."""
    feeds: dict[int, list[int]] = {}
    for r in catalog.relations.values():
        if r.target is not None:
            feeds.setdefault(r.target, []).append(r.id)
    stack, seen = list(upstream_ids), set()
    while stack:
        i = stack.pop()
        if i == target_id:
            raise BindError(_CYCLE)
        if i in seen or i not in catalog.relations:
            continue
        seen.add(i)
        stack += catalog.relations[i].dependencies + feeds.get(i, [])
