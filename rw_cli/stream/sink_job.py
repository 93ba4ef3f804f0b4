"""A sink's job: its query's executors with a SinkExecutor at the end, whose writer delivers
each committed epoch to the connector (state table ids allocated as for an MV)."""
from __future__ import annotations

from rw_cli.engine.runtime import StreamJob
from rw_cli.errors import BindError, NotSupported
from rw_cli.meta.catalog import RelationCatalog
from rw_cli.stream.job import stream_builder
from rw_cli.stream.plan import StreamMaterialize


def sink_writer(rel: RelationCatalog, types, staging=None):
    """The writer of the sink's connector (its options checked here, so a bad one fails the
    CREATE SINK). `staging`: the object store where a writer keeps epochs until they commit."""
    from rw_cli.engine.sink import BlackholeWriter, FileWriter

    opts = rel.connector["options"]
    name = opts["connector"]
    if name == "blackhole":
        return BlackholeWriter()
    if name == "kafka":
        return kafka_writer(rel, types, staging)
    if name == "http":
        from rw_cli.engine.http_sink import HttpWriter

        return HttpWriter(opts, [(c.name, t) for c, t in zip(rel.columns, types) if not c.hidden])
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
    raise NotSupported(f"sink connector '{name}'", hint="sink connectors: blackhole, file, http, kafka, s3")


def kafka_key_columns(rel: RelationCatalog, fmt: str) -> list[str]:
    """The message key's columns: `primary_key = 'a, b'`, else (FORMAT UPSERT | DEBEZIUM) the
    sink's stream key where the query shows it; PLAIN messages have no key unless one is named."""
    visible = [c.name for c in rel.columns if not c.hidden]
    given = rel.connector["options"].get("primary_key")
    if given:
        names = [n.strip() for n in given.split(",") if n.strip()]
        for n in names:
            if n not in visible:
                raise BindError(f'primary_key column "{n}" is not a column of the sink')
        return names
    if fmt == "plain":
        return []
    names = [rel.columns[i].name for i in rel.pk]
    if not names or any(n not in visible for n in names):
        raise BindError(f"a kafka sink with FORMAT {fmt.upper()} needs primary_key = '<columns>'")
    return names


def kafka_writer(rel: RelationCatalog, types, staging):
    from rw_cli.connector.kafka import client_config
    from rw_cli.engine.kafka_sink import KafkaWriter

    opts = rel.connector["options"]
    fmt = (rel.connector.get("format") or "plain").lower()
    encode = (rel.connector.get("encode") or "json").lower()
    if fmt not in ("plain", "upsert", "debezium") or encode != "json":
        raise NotSupported(f"FORMAT {fmt.upper()} ENCODE {encode.upper()} in a kafka sink",
                           hint="use FORMAT PLAIN | UPSERT | DEBEZIUM ENCODE JSON")
    conf = client_config(opts)
    visible = [(c.name, t) for c, t in zip(rel.columns, types) if not c.hidden]
    return KafkaWriter(conf, opts["topic"], fmt, [n for n, _ in visible], [t for _, t in visible],
                       kafka_key_columns(rel, fmt), staging, rel.id)


def build_sink_job(ctx, root: StreamMaterialize, rel: RelationCatalog, table_ids=None,
                   into_rows=None) -> StreamJob:
    """The query's executors with a SinkExecutor at the end (state table ids as for an MV);
    for a sink into a table (`rel.target`), a TableSinkExecutor whose rows (`into_rows`: the
    sink's visible columns -> the table's rows) enter the table's job."""
    from rw_cli.engine.sink import SinkExecutor

    builder = stream_builder(ctx, rel, table_ids)
    child = builder.build_node(root.inputs[0])
    opts = rel.connector["options"]
    append_only = opts.get("type", "append-only").lower() != "upsert"
    visible = sum(1 for c in rel.columns if not c.hidden)
    if rel.target is not None:
        from rw_cli.engine.table_sink import TableSinkExecutor

        table = ctx.catalog.relations[rel.target]
        # `ignore_delete = 'true'`: retractions dropped, an update's new row kept (an upsert)
        inserts_only = append_only or opts.get("ignore_delete", "false").lower() == "true"
        not_null = tuple(i for i, c in enumerate(table.columns) if c.not_null)
        sink = TableSinkExecutor([c.type for c in table.columns], list(table.pk), visible, into_rows, inserts_only,
                                 not_null)
        job = builder.finish(child, sink, rel)
        job.into = rel.target
        return job
    writer = sink_writer(rel, [c.type for c in rel.columns], getattr(ctx.store, "object_store", None))
    writer.recover(ctx.store.committed_epoch)
    sink = SinkExecutor(root.types, list(root.stream_key), [c.name for c in rel.columns], visible, writer,
                        append_only=append_only)
    return builder.finish(child, sink, rel)
