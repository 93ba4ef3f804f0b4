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

from rw_cli.errors import BindError, CatalogError, NotSupported
from rw_cli.meta.catalog import SINK, ColumnCatalog, RelationCatalog
from rw_cli.result import Result


def plan(session, tree: exp.Create):
    from rw_cli.sql.planner import StreamPlanner

    query = tree.expression
    if query is None:
        raise BindError("CREATE SINK needs FROM relation or AS SELECT ...")
    return StreamPlanner(session.catalog).plan_mv(query, tree.this.name)


def _writer(session, rel: RelationCatalog, types):
    from rw_cli.engine.sink import BlackholeWriter, FileWriter

    opts = rel.connector["options"]
    name = opts["connector"]
    if name == "blackhole":
        return BlackholeWriter()
    if name in ("file", "fs", "posix_fs", "s3"):
        from rw_cli.connector.objects import local_store, s3_store

        encode = (rel.connector.get("encode") or "json").lower()
        if encode not in FileWriter.EXT:
            raise NotSupported(f"ENCODE {encode.upper()} in a file sink", hint="use JSON, CSV or PARQUET")
        if name == "s3":
            return FileWriter(s3_store(opts, "s3.path"), encode, types)
        path = opts.get("path") or opts.get("fs.path") or opts.get("posix_fs.path")
        if not path:
            raise BindError(f"the {name} sink needs path = '<directory>'")
        return FileWriter(local_store(path), encode, types)
    raise NotSupported(f"sink connector '{name}'", hint="sink connectors: blackhole, file, s3")


def build_job(session, root, rel: RelationCatalog, table_ids=None):
    """The query's executors with a SinkExecutor at the end (state table ids as for an MV)."""
    from rw_cli.engine.runtime import Node, StreamJob
    from rw_cli.engine.sink import SinkExecutor
    from rw_cli.handler.create_mv import stream_builder

    builder = stream_builder(session, rel, table_ids)
    child = builder._build(root.inputs[0])
    opts = rel.connector["options"]
    append_only = opts.get("type", "append-only").lower() != "upsert"
    visible = sum(1 for c in rel.columns if not c.hidden)
    writer = _writer(session, rel, [c.type for c in rel.columns])
    writer.recover(session.store.committed_epoch)
    sink = SinkExecutor(root.types, list(root.stream_key), [c.name for c in rel.columns], visible, writer,
                        append_only=append_only)
    node = Node(sink)
    child.downstream.append((node, 0))
    builder.nodes.append(node)
    return StreamJob(rel.id, builder.nodes, builder.scans)


def handle(session, tree: exp.Create, sql: str) -> Result:
    from rw_cli.connector import connector_spec
    from rw_cli.handler.create_mv import start_job, streaming_parallelism

    name = tree.this.name
    if session.catalog.get(name) is not None:
        if tree.args.get("exists"):
            return Result("CREATE_SINK", notices=[f'relation "{name}" already exists, skipping'])
        raise CatalogError(f'relation "{name}" already exists')
    spec = connector_spec(tree)
    if not spec:
        raise BindError("a sink needs WITH (connector = '...')")
    root, upstreams = plan(session, tree)
    if session.dirty:
        session.barrier()
    columns = [ColumnCatalog(n, t, h) for n, t, h in zip(root.names, root.types, root.hidden)]
    rel = RelationCatalog(session.catalog.alloc_id(), name, SINK, columns, list(root.stream_key),
                          definition=sql, dependencies=[u.id for u in upstreams],
                          parallelism=streaming_parallelism(session), connector=spec)
    start_job(session, rel, build_job(session, root, rel))
    return Result("CREATE_SINK")
