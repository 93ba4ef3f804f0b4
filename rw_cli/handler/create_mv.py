"""CREATE MATERIALIZED VIEW [IF NOT EXISTS] name [(aliases)] AS SELECT ...

The view's job is built, filled from a snapshot of its upstreams (backfill), then connected
to their change streams; a barrier commits it together with the catalog.

`WITH (refresh.interval.sec = N)` makes RisingWave's batch refresh MV, with its rules: it
reads no source, no streaming job (MV, sink, index, subscription) may read it, and it cannot
be altered. Its rows are maintained incrementally like any MV's, so they are never staler
than RisingWave's refresh every N seconds would leave them.
"""
from __future__ import annotations

from sqlglot import exp

from rw_cli.sql.session_window import inline_named_windows
from rw_cli.sql.duckdb_dialect import duckdb_dialect
from rw_cli.errors import BindError, NotSupported
from rw_cli.meta.catalog import MATERIALIZED_VIEW, ColumnCatalog, RelationCatalog
from rw_cli.result import Result
from rw_cli.sql.dialect import changelog_display
from rw_cli.sql.watermark_origin import watermark_lost, watermark_origin

# RisingWave's words for an EMIT ON WINDOW CLOSE query whose output carries no watermark
EOWC_IMPOSSIBLE = "The query cannot be executed in Emit-On-Window-Close mode."
EOWC_HINT = "Try define a watermark column in the source, or avoid aggregation without GROUP BY"


def mv_target(tree: exp.Create, catalog) -> tuple[str, list[str] | None]:
    """The catalog name the view is created as (`s.name` in schema s) and its column aliases."""
    target = tree.this
    table = target.this if isinstance(target, exp.Schema) else target
    name = catalog.qualified(table.name, table.text("db"))
    if isinstance(target, exp.Schema):
        return name, [e.name for e in target.expressions]
    return name, None


def plan(session, tree: exp.Create, existing: bool = False):
    """`existing`: a relation the catalog has (recovery) plans as it was accepted, whatever
    this session's settings say."""
    from rw_cli.sql.planner import StreamPlanner

    name, aliases = mv_target(tree, session.catalog)
    query = tree.expression
    if query is None:
        raise BindError("CREATE MATERIALIZED VIEW needs AS SELECT")
    planner = StreamPlanner(session.catalog, existing or session.settings.allow_cross_join)
    planner.eowc = bool(tree.args.get("emit_on_window_close"))
    if planner.eowc and _over_windows_on_close(query):
        planner.eowc_watermark = _windows_watermark(session, query)
    root, upstreams = planner.plan_mv(query, name, aliases)
    if tree.args.get("emit_on_window_close"):
        root = emit_on_window_close(session, query, root)
    return root, upstreams


def emit_on_window_close(session, query: exp.Expression, root):
    """Rows of a window are emitted once the watermark of the table it comes from has passed
    the window's end; a closed window never changes again."""
    from rw_cli.errors import NotSupported

    window = next((t.this for t in query.find_all(exp.Table)
                   if isinstance(t.this, exp.Anonymous) and t.this.name.lower() in ("tumble", "hop")), None)
    if window is None:
        return _emit_rows_on_close(session, query, root)
    args = window.expressions
    table = session.catalog.must_get(session.catalog.qualified(args[0].name, args[0].text("db")))
    origin = watermark_origin(session.catalog, table, args[1].name)
    if origin is None:
        raise BindError(f'EMIT ON WINDOW CLOSE needs a watermark on "{table.name}.{args[1].name}"')
    size = (args[2] if window.name.lower() == "tumble" else args[3]).sql(dialect=duckdb_dialect())
    origins = _output_origins(query, root)
    if "window_end" in origins:
        cond = f"_{origins.index('window_end')} <= {{now}}"
    elif "window_start" in origins:
        cond = f"_{origins.index('window_start')} + {size} <= {{now}}"
    else:
        raise NotSupported("EMIT ON WINDOW CLOSE needs window_start or window_end in the output")
    return _emit_when(root, cond, origin, origin.watermark[0])


def _emit_rows_on_close(session, query: exp.Expression, root):
    """EMIT ON WINDOW CLOSE of a query without TUMBLE or HOP: a row is emitted once the
    watermark of its table has reached the row's watermark column, which the output carries
    (a plain selection, or a GROUP BY on that column). Window functions, whose frames close
    later than their rows, release their rows themselves (StreamEowcOverWindow)."""
    if _over_windows_on_close(query):
        return root
    table, column = _watermarked_table(session, query)
    origins = _output_origins(query, root)
    if column not in origins:
        raise NotSupported(f'EMIT ON WINDOW CLOSE needs the watermark column "{column}" in the output')
    if watermark_lost(query, column):
        raise NotSupported(EOWC_IMPOSSIBLE, hint=EOWC_HINT)
    origin = watermark_origin(session.catalog, table, column)
    return _emit_when(root, f"_{origins.index(column)} <= {{now}}", origin, origin.watermark[0])


def _output_origins(query: exp.Expression, root) -> list[str | None]:
    """Per output column of the view, the name of the column it passes on: a select item
    that is a column, renamed (`window_start AS ws`) or not, or renamed by the view's column
    list, still carries that column's watermark; other items are None (a hidden column keeps
    its name)."""
    n_visible = sum(1 for h in root.hidden if not h)
    items = query.expressions if isinstance(query, exp.Select) else []
    plain = len(items) == n_visible and not any(isinstance(e, exp.Star) or
                                                (isinstance(e, exp.Column) and isinstance(e.this, exp.Star))
                                                for e in items)
    out: list[str | None] = []
    for i, (name, hidden) in enumerate(zip(root.names, root.hidden)):
        if hidden or not plain:
            out.append(name)
            continue
        e = items[i].this if isinstance(items[i], exp.Alias) else items[i]
        out.append(e.name if isinstance(e, exp.Column) else None)
    return out


def _over_windows_on_close(query: exp.Expression) -> bool:
    """Window functions without a TUMBLE or HOP window: they release rows on close themselves."""
    if query.find(exp.Window) is None:
        return False
    return not any(isinstance(t.this, exp.Anonymous) and t.this.name.lower() in ("tumble", "hop")
                   for t in query.find_all(exp.Table))


def _windows_watermark(session, query: exp.Expression):
    """The table whose watermark closes the frames of the window functions of an EMIT ON
    WINDOW CLOSE view: its watermark column must be their ORDER BY (as RisingWave requires)."""
    table, column = _watermarked_table(session, query)
    for select in list(query.find_all(exp.Select)):
        inline_named_windows(select)  # `OVER w` has its ORDER BY in the WINDOW clause
    for w in query.find_all(exp.Window):
        order = w.args.get("order")
        keys = order.expressions if order is not None else []
        if len(keys) != 1 or not isinstance(keys[0].this, exp.Column) or keys[0].this.name != column:
            raise NotSupported(f'EMIT ON WINDOW CLOSE with window functions needs them ordered by the '
                               f'watermark column "{column}" alone')
    return watermark_origin(session.catalog, table, column)


def _watermarked_table(session, query: exp.Expression):
    """The one relation with a watermark an EMIT ON WINDOW CLOSE query without TUMBLE or HOP
    reads, and its watermark column (a table's own, or the column of an MV that carries one:
    sql/watermark_origin.py)."""
    catalog = session.catalog
    tables = [catalog.get(catalog.qualified(t.name, t.text("db"))) for t in query.find_all(exp.Table)
              if isinstance(t.this, exp.Identifier)]
    marked = []
    for t in tables:
        if t is None:
            continue
        if getattr(t, "watermark", None):
            marked.append((t, t.watermark[0]))
            continue
        carried = [c.name for c in t.visible_columns if watermark_origin(catalog, t, c.name) is not None]
        if carried:
            marked.append((t, carried[0]))
    if len(marked) != 1:
        raise NotSupported("EMIT ON WINDOW CLOSE without a TUMBLE or HOP window, over other than one table "
                           "with a watermark")
    return marked[0]


def _emit_when(root, cond: str, table, column: str):
    """`root` (a materialize) receiving its input's rows once `cond` holds for them, `{now}`
    being the watermark of `table`'s `column`: rows wait in a sort buffer until then."""
    from rw_cli.stream.plan import StreamPartitionRecompute

    child = root.inputs[0]
    root.inputs = [StreamPartitionRecompute(list(child.types), list(child.stream_key), [child],
                                            name="StreamEowcSort", partition_keys=[],
                                            sql=f"SELECT * FROM in0 WHERE {cond}",
                                            detail=f"watermark: {table.name}.{column}", temporal=True,
                                            watermark_of=table.id)]
    return root


MV_OPTIONS = ("backfill_rate_limit", "streaming_parallelism", "source_rate_limit", "backfill_order",
              "resource_group", "refresh.interval.sec")
BATCH_REFRESH = "refresh.interval.sec"
ON_BATCH_REFRESH = "creating streaming jobs on batch refresh materialized views is not supported"


def check_not_on_batch_refresh(upstreams) -> None:
    """No streaming job reads a batch refresh MV (RisingWave's rule)."""
    if any(u.refresh_interval_sec is not None for u in upstreams):
        raise BindError(ON_BATCH_REFRESH)


def _refresh_interval(options: dict[str, str], upstreams) -> int | None:
    if BATCH_REFRESH not in options:
        return None
    text = options[BATCH_REFRESH]
    if not text.isdigit() or int(text) <= 0:
        raise BindError(f"{BATCH_REFRESH} must be a positive number of seconds, not {text!r}")
    if any(u.kind == "source" for u in upstreams):
        raise BindError("batch refresh materialized views must not depend on sources")
    return int(text)


def check_options(tree: exp.Create) -> dict[str, str]:
    """`WITH (option = value, ...)` of CREATE MATERIALIZED VIEW: known names, each once."""
    props = tree.args.get("properties")
    options: dict[str, str] = {}
    unknown = []
    for p in (props.expressions if props is not None else []):
        dotted = isinstance(p, exp.Property) and isinstance(p.this, exp.Dot)  # refresh.interval.sec
        if not isinstance(p, exp.Property) or isinstance(p, exp.MaterializedProperty) or not (p.name or dotted):
            continue
        key = p.this.sql().lower() if dotted else p.name.lower()
        if key in options:
            raise BindError(f'Duplicated option: "{key}"')
        options[key] = p.args["value"].name if p.args.get("value") is not None else ""
        if key not in MV_OPTIONS:
            unknown.append(key)
    if unknown:
        raise BindError(f"unexpected options in WITH clause: {', '.join(unknown)}",
                        hint=f"known options: {', '.join(MV_OPTIONS)}")
    return options


def handle(session, tree: exp.Create, sql: str) -> Result:
    from rw_cli.handler.rate_limit import limits_at_create

    name, _ = mv_target(tree, session.catalog)
    options = check_options(tree)
    if "resource_group" in options:
        from rw_cli.meta.system_params import check_resource_group_license

        check_resource_group_license(session.catalog.system_params)
    if session.catalog.get(name) is not None:
        if tree.args.get("exists"):
            return Result("CREATE_MATERIALIZED_VIEW", notices=[f'relation "{name}" already exists, skipping'])
        raise session.catalog.name_taken(name)
    if "backfill_order" in options and tree.expression is not None:  # checked before the query is planned
        from rw_cli.handler import backfill_order
        from rw_cli.sql.batch import referenced_relations

        backfill_order.check(session.catalog, sql, referenced_relations(tree.expression, session.catalog))
    root, upstreams = plan(session, tree)
    check_not_on_batch_refresh(upstreams)
    refresh = _refresh_interval(options, upstreams)
    if session.dirty:
        session.barrier()  # the snapshot below must be what upstream has emitted so far
    from rw_cli.handler.create_table import check_system_column_names

    check_system_column_names([n for n, h in zip(root.names, root.hidden) if not h])
    columns = [ColumnCatalog(n, t, h) for n, t, h in zip(root.names, root.types, root.hidden)]
    rel = RelationCatalog(session.catalog.alloc_id(), name, MATERIALIZED_VIEW, columns, list(root.stream_key),
                          definition=changelog_display(sql), dependencies=dependencies(session, tree, upstreams),
                          parallelism=streaming_parallelism(session, MATERIALIZED_VIEW),
                          parallelism_config=session.settings.job_parallelism(MATERIALIZED_VIEW),
                          resource_group=_resource_group(options.get("resource_group")),
                          refresh_interval_sec=refresh,
                          rate_limits=limits_at_create(session.settings, MATERIALIZED_VIEW, options),
                          order_key=order_key(tree.expression, root))
    from rw_cli.stream.job import build_job, start_job

    start_job(session, rel, build_job(session, root, rel))
    return Result("CREATE_MATERIALIZED_VIEW")


def order_key(query: exp.Expression, root) -> list[list]:
    """The view's ORDER BY as [output column, descending, nulls first] items: an output
    column's name or position, or a select item's expression; the items after one that is
    none of these are left out (they order nothing a scan shows)."""
    order = query.args.get("order") if isinstance(query, exp.Query) else None
    if order is None:
        return []
    visible = [i for i, h in enumerate(root.hidden) if not h]
    items = query.expressions if isinstance(query, exp.Select) else []
    exprs = [(e.this if isinstance(e, exp.Alias) else e).sql() for e in items]
    out: list[list] = []
    for o in order.expressions:
        e = o.this if isinstance(o, exp.Ordered) else o
        pos = None
        if isinstance(e, exp.Literal) and not e.is_string and e.this.isdigit():
            pos = int(e.this) - 1 if 0 < int(e.this) <= len(visible) else None
        elif isinstance(e, exp.Column) and not e.table and e.name in [root.names[i] for i in visible]:
            pos = [root.names[i] for i in visible].index(e.name)
        elif e.sql() in exprs and len(exprs) == len(visible):
            pos = exprs.index(e.sql())
        if pos is None:
            break
        desc = bool(o.args.get("desc")) if isinstance(o, exp.Ordered) else False
        nulls_first = o.args.get("nulls_first") if isinstance(o, exp.Ordered) else None
        first = desc if nulls_first is None else bool(nulls_first)
        out.append([visible[pos], desc, first])
    return out


def dependencies(session, tree: exp.Create, upstreams) -> list[int]:
    """What the view may not outlive: the jobs it reads, and every relation its query names
    (a view it reads through, a relation of a CTE it does not use), as RisingWave records them."""
    from rw_cli.sql.batch import referenced_relations

    ids = [u.id for u in upstreams]
    named = referenced_relations(tree.expression, session.catalog) if tree.expression is not None else []
    ids += [r.id for r in named if r.id not in ids]
    if tree.expression is not None and str(session.settings.get("streaming_enable_delta_join")).lower() == "true":
        ids += [i for i in delta_join_indexes(tree.expression, session.catalog) if i not in ids]
    return ids


def delta_join_indexes(query: exp.Expression, catalog) -> list[int]:
    """With streaming_enable_delta_join, RisingWave joins two tables through their indexes
    (an arrangement led by the join key on each side) and the view depends on those indexes:
    dropping one is refused while it stands. The ids of the indexes an equi-join of two
    tables would use, when both sides have one."""
    from rw_cli.meta.catalog import INDEX, TABLE

    tables = {}
    for t in query.find_all(exp.Table):
        rel = catalog.get(catalog.qualified(t.name, t.text("db"))) if isinstance(t.this, exp.Identifier) else None
        if rel is not None and rel.kind == TABLE:
            tables[t.alias_or_name] = rel

    def index_on(col: exp.Column) -> int | None:
        rel = tables.get(col.table) if col.table else None
        if rel is None:
            return None
        for idx in catalog.in_creation_order():
            if idx.kind == INDEX and rel.id in idx.dependencies and idx.pk and idx.columns[idx.pk[0]].name == col.name:
                return idx.id
        return None

    out: list[int] = []
    for join in query.find_all(exp.Join):
        on = join.args.get("on")
        for eq in (on.find_all(exp.EQ) if on is not None else []):
            if isinstance(eq.this, exp.Column) and isinstance(eq.expression, exp.Column):
                pair = (index_on(eq.this), index_on(eq.expression))
                if None not in pair:
                    out += [i for i in pair if i not in out]
    return out


def _resource_group(value: str | None) -> str:
    """WITH (resource_group = ...): "" (its database's) for none or default."""
    text = (value or "").strip("'\"")
    return "" if text.lower() in ("", "default") else text


def streaming_parallelism(session, kind: str) -> int:
    """The actors of a new job of catalog `kind`: a fixed `streaming_parallelism_for_<kind>`,
    else `SET STREAMING_PARALLELISM = N` (0, adaptive or unset: 1 in the embedded runtime,
    Spark's default parallelism on Spark)."""
    from rw_cli.common.parallelism import fixed_actors

    n = fixed_actors(session.settings.job_parallelism(kind)) or session.settings.streaming_parallelism()
    return session.runtime.default_parallelism() if n is None else n
