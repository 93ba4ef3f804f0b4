"""CREATE INDEX name ON relation (columns) [INCLUDE (columns)]: an arrangement of the
relation's rows ordered by the index columns, maintained like a materialized view (its
storage pk is the index columns followed by the relation's pk)."""
from __future__ import annotations

from rw_cli.handler.create_mv import check_not_on_batch_refresh

from sqlglot import exp

from rw_cli.errors import BindError, CatalogError
from rw_cli.sql.index_def import index_query
from rw_cli.meta.catalog import INDEX, ColumnCatalog, RelationCatalog
from rw_cli.result import Result


def _base_name(session, tree: exp.Create) -> str:
    """The catalog name of the relation indexed (the index lives in its schema)."""
    base = tree.this.args["table"]
    return session.catalog.qualified(base.name, base.text("db"))


def plan(session, tree: exp.Create, existing: bool = False):
    """`existing`: a relation the catalog has (recovery) plans as it was accepted, whatever
    this session's settings say."""
    from rw_cli.sql.planner import StreamPlanner

    name, query, keys = index_query(tree, session.catalog.get(_base_name(session, tree)))
    root, upstreams = StreamPlanner(session.catalog, existing or session.settings.allow_cross_join).plan_mv(query, name)
    positions = []
    for k in keys:
        if k not in root.names:
            raise BindError(f'column "{k}" does not exist')
        positions.append(root.names.index(k))
    pk = list(dict.fromkeys(positions + list(root.stream_key)))
    return root, upstreams, pk, _dist_key(tree, list(dict.fromkeys(positions)))


def _dist_key(tree: exp.Create, keys: list[int]) -> list[int]:
    """The index's distribution key: its DISTRIBUTED BY prefix of the key columns, else all
    of them (RisingWave's)."""
    dist = tree.args.get("distributed_by")
    return keys[:len(dist)] if dist else keys


def handle(session, tree: exp.Create, sql: str) -> Result:
    from rw_cli.handler.create_mv import streaming_parallelism
    from rw_cli.handler.rate_limit import limits_at_create
    from rw_cli.stream.job import build_job, start_job

    base_name = _base_name(session, tree)
    name = session.catalog.qualified(tree.this.name, base_name.rpartition(".")[0] or None)
    if session.catalog.get(name) is not None:
        if tree.args.get("exists"):
            return Result("CREATE_INDEX", notices=[f'relation "{name}" already exists, skipping'])
        raise session.catalog.name_taken(name)
    base = session.catalog.must_get(base_name)
    if base.kind not in ("table", "materialized view"):
        raise CatalogError(f'"{base.name}" is not a table or materialized view')
    root, upstreams, pk, dist = plan(session, tree)
    check_not_on_batch_refresh(upstreams)
    if session.dirty:
        session.barrier()
    columns = [ColumnCatalog(n, t, h) for n, t, h in zip(root.names, root.types, root.hidden)]
    rel = RelationCatalog(session.catalog.alloc_id(), name, INDEX, columns, pk, dist_key=dist, definition=sql,
                          dependencies=[u.id for u in upstreams], parallelism=streaming_parallelism(session, INDEX),
                          parallelism_config=session.settings.job_parallelism(INDEX),
                          rate_limits=limits_at_create(session.settings, INDEX))
    start_job(session, rel, build_job(session, root, rel))
    return Result("CREATE_INDEX")
