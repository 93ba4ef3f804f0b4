"""CREATE INDEX name ON relation (columns) [INCLUDE (columns)]: an arrangement of the
relation's rows ordered by the index columns, maintained like a materialized view (its
storage pk is the index columns followed by the relation's pk)."""
from __future__ import annotations

from rw_cli.handler.create_mv import check_not_on_batch_refresh

from sqlglot import exp

from rw_cli.errors import BindError, CatalogError
from rw_cli.meta.catalog import INDEX, ColumnCatalog, RelationCatalog
from rw_cli.result import Result


def index_query(tree: exp.Create, base_rel=None) -> tuple[str, exp.Select, list[str]]:
    """(index name, the query it arranges, its key columns). An index's columns are its key
    columns first, then the included ones (all others by default), as RisingWave shows them."""
    index = tree.this
    base = index.args["table"]
    params = index.args.get("params")
    keys = [o.this.name if isinstance(o, exp.Ordered) else o.name for o in (params.args.get("columns") or [])]
    include = [c.name for c in (params.args.get("include") or [])] if params is not None else []
    if not keys:
        raise BindError("an index needs at least one column")
    if include:
        cols = list(dict.fromkeys(keys + include))
    elif base_rel is not None:
        cols = list(dict.fromkeys(keys + [c.name for c in base_rel.visible_columns]))
    else:
        cols = ["*"]
    query = exp.select(*cols).from_(exp.to_table(base.name))
    return index.name, query, keys


def plan(session, tree: exp.Create, existing: bool = False):
    """`existing`: a relation the catalog has (recovery) plans as it was accepted, whatever
    this session's settings say."""
    from rw_cli.sql.planner import StreamPlanner

    name, query, keys = index_query(tree, session.catalog.get(tree.this.args["table"].name))
    root, upstreams = StreamPlanner(session.catalog, existing or session.settings.allow_cross_join).plan_mv(query, name)
    positions = []
    for k in keys:
        if k not in root.names:
            raise BindError(f'column "{k}" does not exist')
        positions.append(root.names.index(k))
    pk = list(dict.fromkeys(positions + list(root.stream_key)))
    return root, upstreams, pk


def handle(session, tree: exp.Create, sql: str) -> Result:
    from rw_cli.handler.create_mv import streaming_parallelism
    from rw_cli.stream.job import build_job, start_job

    name = tree.this.name
    if session.catalog.get(name) is not None:
        if tree.args.get("exists"):
            return Result("CREATE_INDEX", notices=[f'relation "{name}" already exists, skipping'])
        raise CatalogError(f'relation "{name}" already exists')
    base = session.catalog.must_get(tree.this.args["table"].name)
    if base.kind not in ("table", "materialized view"):
        raise CatalogError(f'"{base.name}" is not a table or materialized view')
    root, upstreams, pk = plan(session, tree)
    check_not_on_batch_refresh(upstreams)
    if session.dirty:
        session.barrier()
    columns = [ColumnCatalog(n, t, h) for n, t, h in zip(root.names, root.types, root.hidden)]
    rel = RelationCatalog(session.catalog.alloc_id(), name, INDEX, columns, pk, definition=sql,
                          dependencies=[u.id for u in upstreams], parallelism=streaming_parallelism(session, INDEX),
                          parallelism_config=session.settings.job_parallelism(INDEX))
    start_job(session, rel, build_job(session, root, rel))
    return Result("CREATE_INDEX")
