"""Rebuild every stream job from the committed catalog when a session opens."""
from __future__ import annotations

from rw_cli.meta.catalog import INDEX, SINK, SOURCE, TABLE, VIEW


def recover(session) -> None:
    from rw_cli.handler import create_mv
    from rw_cli.sql.dialect import parse_statement
    from rw_cli.stream.builder import table_job

    for rel in session.catalog.in_creation_order():
        if rel.kind == VIEW:
            continue
        if rel.kind == SOURCE or (rel.kind == TABLE and rel.connector):
            from rw_cli.handler.create_source import connector_table_job, source_job

            job = source_job if rel.kind == SOURCE else connector_table_job
            session.runtime.add_job(job(session.store, rel))
            continue
        if rel.kind == TABLE:
            session.runtime.add_job(table_job(session.store, rel))
            continue
        tree = parse_statement(rel.definition)
        if rel.kind == SINK:
            from rw_cli.handler import create_sink

            root, _ = create_sink.plan(session, tree)
            job = create_sink.build_job(session, root, rel, table_ids=rel.state_table_ids)
            session.runtime.add_job(job)
            session.runtime.connect(job)
            continue
        if rel.kind == INDEX:
            from rw_cli.handler import create_index

            root, _, _ = create_index.plan(session, tree)
        else:
            root, _ = create_mv.plan(session, tree)
        job = create_mv.build_job(session, root, rel, table_ids=rel.state_table_ids)
        session.runtime.add_job(job)
        session.runtime.connect(job)
