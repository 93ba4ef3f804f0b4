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
    keys, items = [], []
    for i, o in enumerate((params.args.get("columns") or []) if params is not None else []):
        key = o.this if isinstance(o, exp.Ordered) else o
        if isinstance(key, exp.Column):
            keys.append(key.name)
            items.append(key.name)
        else:  # an index on an expression (`j->'k'`): a column of its own, named by its position
            keys.append(f"expr{i + 1}")
            items.append(exp.alias_(key.copy(), keys[-1]))
    include = [c.name for c in (params.args.get("include") or [])] if params is not None else []
    if not keys:
        raise BindError("an index needs at least one column")
    _check_distribution(tree, params)
    if include:
        rest = include
    elif base_rel is not None:
        rest = [c.name for c in base_rel.visible_columns]
    else:
        rest = ["*"]
    items += [c for c in dict.fromkeys(rest) if c not in keys]
    query = exp.select(*items).from_(exp.Table(this=base.this.copy(),
                                               db=base.args["db"].copy() if base.args.get("db") else None))
    return index.name, query, keys


def _check_distribution(tree: exp.Create, params) -> None:
    """DISTRIBUTED BY (...) must name a prefix of the index's key columns, as RisingWave
    requires (its rows are spread over vnodes by those columns)."""
    dist = tree.args.get("distributed_by")
    if not dist:
        return
    keys = [(o.this if isinstance(o, exp.Ordered) else o).sql(dialect="postgres")
            for o in (params.args.get("columns") or [])]
    if len(dist) > len(keys) or keys[:len(dist)] != dist:
        raise BindError(f"the distribution key ({', '.join(dist)}) must be a prefix of the index key "
                        f"({', '.join(keys)})")


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
    return root, upstreams, pk


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
    root, upstreams, pk = plan(session, tree)
    check_not_on_batch_refresh(upstreams)
    if session.dirty:
        session.barrier()
    columns = [ColumnCatalog(n, t, h) for n, t, h in zip(root.names, root.types, root.hidden)]
    rel = RelationCatalog(session.catalog.alloc_id(), name, INDEX, columns, pk, definition=sql,
                          dependencies=[u.id for u in upstreams], parallelism=streaming_parallelism(session, INDEX),
                          parallelism_config=session.settings.job_parallelism(INDEX),
                          rate_limits=limits_at_create(session.settings, INDEX))
    start_job(session, rel, build_job(session, root, rel))
    return Result("CREATE_INDEX")
