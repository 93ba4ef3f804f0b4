"""The jobs of sources and connector tables: a SourceExecutor reading the connector's
splits, whose offsets are the job's one state table; a connector table puts it in front of
the table's materialize, so the table keeps what the connector delivers."""
from __future__ import annotations

from rw_cli.common.types import DataType
from rw_cli.engine.expr import Expr
from rw_cli.engine.runtime import Node, StreamJob
from rw_cli.meta.catalog import ROW_ID, RelationCatalog
from rw_cli.stream.builder import table_job
from rw_cli.stream.throttle import job_limit

OFFSETS_PK = [0]


def offsets_table(store, rel: RelationCatalog):
    from rw_cli.engine.source import OFFSETS_SCHEMA
    from rw_cli.store.state_table import StateTable

    return StateTable(store, rel.state_table_ids[0], OFFSETS_SCHEMA, OFFSETS_PK)


def source_executor(store, rel: RelationCatalog, generated: list[tuple[int, Expr]]):
    """`generated`: (position, DuckDB SQL over the read columns) of each generated column."""
    from rw_cli.connector import open_reader
    from rw_cli.engine.source import SourceExecutor

    names = (rel.connector.get("generated") or {}).keys()
    visible = [(c.name, c.type) for c in rel.columns
               if (c.name != ROW_ID or not c.hidden) and c.name not in names]
    row_id = next((i for i, c in enumerate(rel.columns) if c.name == ROW_ID and c.hidden), None)
    ex = SourceExecutor([c.type for c in rel.columns], list(rel.pk), open_reader(rel.connector, visible),
                        offsets_table(store, rel), row_id, name=rel.name)
    if generated:
        ex.generated = generated
    ex.rate_limit = job_limit(rel, "source")
    return ex


def source_job(store, rel: RelationCatalog, generated: list[tuple[int, Expr]] = ()) -> StreamJob:
    return StreamJob(rel.id, [Node(source_executor(store, rel, list(generated)))], [])


def connector_table_job(store, rel: RelationCatalog, watermark: tuple[str, DataType] | None = None,
                        generated: list[tuple[int, Expr]] = ()) -> StreamJob:
    job = table_job(store, rel, watermark)
    src = Node(source_executor(store, rel, list(generated)))
    src.downstream.append((job.nodes[0], 0))
    job.nodes.insert(0, src)
    return job
