"""A sink's job: its query's executors with a SinkExecutor at the end, whose writer delivers
each committed epoch to the connector (state table ids allocated as for an MV)."""
from __future__ import annotations

from rw_cli.engine.runtime import StreamJob
from rw_cli.errors import BindError, NotSupported
from rw_cli.meta.catalog import RelationCatalog
from rw_cli.stream.job import stream_builder
from rw_cli.stream.plan import StreamMaterialize


def sink_writer(rel: RelationCatalog, types):
    """The writer of the sink's connector (its options checked here, so a bad one fails the
    CREATE SINK)."""
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


def build_sink_job(ctx, root: StreamMaterialize, rel: RelationCatalog, table_ids=None) -> StreamJob:
    """The query's executors with a SinkExecutor at the end (state table ids as for an MV)."""
    from rw_cli.engine.sink import SinkExecutor

    builder = stream_builder(ctx, rel, table_ids)
    child = builder.build_node(root.inputs[0])
    opts = rel.connector["options"]
    append_only = opts.get("type", "append-only").lower() != "upsert"
    visible = sum(1 for c in rel.columns if not c.hidden)
    writer = sink_writer(rel, [c.type for c in rel.columns])
    writer.recover(ctx.store.committed_epoch)
    sink = SinkExecutor(root.types, list(root.stream_key), [c.name for c in rel.columns], visible, writer,
                        append_only=append_only)
    return builder.finish(child, sink, rel)
