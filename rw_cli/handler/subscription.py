"""CREATE / DROP SUBSCRIPTION, and subscription cursors: DECLARE cur SUBSCRIPTION CURSOR FOR
sub [SINCE ...] [FULL], FETCH [NEXT | n] FROM cur, CLOSE cur.

A subscription keeps its table's or MV's change log: its job is the relation's CHANGELOG
(rw_cli.engine.changelog) materialized in the subscription's own table, keyed by a row id
that orders the changes in time ((milliseconds << 22) + sequence), so it survives restarts
as any MV does. `retention` (an interval, `'1D'`) bounds how far back a cursor may start:
changes older than it are never returned.

A cursor is the session's (as in RisingWave and PostgreSQL: not persisted, not in a schema).
Without SINCE (or with FULL) it first returns the relation's rows as of its declaration (op
`Insert`), then every later change; SINCE now() / proctime() only the changes after its
declaration; SINCE begin() every retained change; SINCE <unix milliseconds> the changes
after that time. FETCH returns the relation's columns, then `op` (Insert, Delete,
UpdateInsert, UpdateDelete) and `rw_timestamp` (unix milliseconds of the change). The log
starts with the relation's rows when the subscription was created (as inserts).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp

from rw_cli.common import numeric
from rw_cli.common.epoch import EPOCH_ORIGIN_MS, physical_now
from rw_cli.common.types import BIGINT, VARCHAR
from rw_cli.errors import BindError, CatalogError, NotSupported
from rw_cli.handler.create_mv import check_not_on_batch_refresh
from rw_cli.meta.catalog import MATERIALIZED_VIEW, SUBSCRIPTION, TABLE, ColumnCatalog, RelationCatalog
from rw_cli.result import Result
from rw_cli.sql.dialect import SubscriptionStatement

_OP_NAMES = np.array(["", "Insert", "Delete", "UpdateInsert", "UpdateDelete"], dtype=object)
SEQ_BITS = 22  # a change's row id: (milliseconds << SEQ_BITS) + sequence (rw_cli.engine.changelog)


def handle(session, st: SubscriptionStatement) -> Result:
    kind = st.args["kind"]
    if kind == "create":
        return create(session, st)
    if kind == "drop":
        return drop(session, st)
    if kind == "declare":
        return declare(session, st)
    if kind == "declare_query":
        return declare_query(session, st)
    if kind == "alter_retention":
        return alter_retention(session, st)
    if kind == "fetch":
        return fetch(session, st)
    return close(session, st)


def changelog_query(source: RelationCatalog) -> exp.Expression:
    """The subscription's stream query: its relation's change log."""
    from rw_cli.sql.dialect import parse_statement
    from rw_cli.sql.rename import quote_name

    return parse_statement(f"WITH c AS CHANGELOG FROM {quote_name(source.name)} SELECT * FROM c")


def plan(session, rel: RelationCatalog, existing: bool = True):
    """The subscription's stream plan (also what recovery builds its job from)."""
    from rw_cli.sql.planner import StreamPlanner

    source = session.catalog.relations[rel.dependencies[0]]
    return StreamPlanner(session.catalog, existing).plan_mv(changelog_query(source), rel.name)


def _retention_ms(options: dict[str, str]) -> int:
    from rw_cli.common.pg_interval import parse_interval

    text = options.get("retention")
    if text is None:
        raise BindError("a subscription needs WITH (retention = '<interval>')")
    try:
        iv = parse_interval(text)
    except Exception:  # noqa: BLE001 - any unreadable interval is the same user error
        raise BindError(f'invalid retention "{text}"', hint="an interval, e.g. '1D' or '2 hours'") from None
    months, days, micros = iv
    return (months * 30 + days) * 86_400_000 + micros // 1000


def create(session, st: SubscriptionStatement) -> Result:
    from rw_cli.stream.job import build_job, start_job

    catalog = session.catalog
    name = catalog.qualified(st.this.name, st.this.text("db"))
    if catalog.get(name) is not None:
        if st.args.get("exists"):
            return Result("CREATE_SUBSCRIPTION", notices=[f'relation "{name}" already exists, skipping'])
        raise catalog.name_taken(name)
    src = st.args["source"]
    source = catalog.get(catalog.qualified(src.name, src.text("db")))
    if source is None or source.kind not in (TABLE, MATERIALIZED_VIEW):
        raise CatalogError(f'table or materialized view "{src.sql()}" does not exist')
    check_not_on_batch_refresh([source])
    retention = _retention_ms(st.args.get("options") or {})
    if session.dirty:
        session.barrier()
    rel = RelationCatalog(catalog.alloc_id(), name, SUBSCRIPTION, [], [], definition="",
                          dependencies=[source.id], connector={"retention_ms": retention})
    root, _ = plan(session, rel, existing=False)
    rel.columns = [ColumnCatalog(n, t, h) for n, t, h in zip(root.names, root.types, root.hidden)]
    rel.pk = list(root.stream_key)
    given = (st.args.get("options") or {})["retention"].replace("'", "''")
    rel.definition = f"CREATE SUBSCRIPTION {name} FROM {source.name} WITH (retention = '{given}')"
    start_job(session, rel, build_job(session, root, rel))
    return Result("CREATE_SUBSCRIPTION")


def drop(session, st: SubscriptionStatement) -> Result:
    from rw_cli.stream.job import drop_job

    name = session.catalog.qualified(st.this.name, st.this.text("db"))
    rel = session.catalog.get(name)
    if rel is None or rel.kind != SUBSCRIPTION:
        if st.args.get("exists"):
            return Result("DROP_SUBSCRIPTION", notices=[f'subscription "{name}" does not exist, skipping'])
        raise CatalogError(f'subscription "{name}" does not exist')
    for cur in [c for c, state in cursors(session).items() if getattr(state, "subscription", None) == rel.id]:
        del cursors(session)[cur]
    drop_job(session, rel)
    session.barrier()
    return Result("DROP_SUBSCRIPTION")


def alter_retention(session, st: SubscriptionStatement) -> Result:
    """ALTER SUBSCRIPTION s SET RETENTION [TO | =] '<interval>': how far back a cursor may
    start from now on (its definition says the new retention)."""
    name = session.catalog.qualified(st.this.name, st.this.text("db"))
    rel = session.catalog.get(name)
    if rel is None or rel.kind != SUBSCRIPTION:
        raise CatalogError(f'subscription "{name}" does not exist')
    options = st.args["options"]
    retention = _retention_ms(options)
    given = options["retention"].replace("'", "''")
    head, sep, _ = rel.definition.rpartition(" WITH (retention = ")
    rel.definition = f"{head if sep else rel.definition} WITH (retention = '{given}')"
    rel.connector = {**rel.connector, "retention_ms": retention}
    session.barrier()  # the catalog is durable when the statement returns
    return Result("ALTER_SUBSCRIPTION")


@dataclass
class QueryCursor:
    """A cursor over a query (DECLARE c CURSOR FOR SELECT ...): its result as of the
    declaration, returned a FETCH at a time."""
    rows: pa.Table
    types: list


def declare_query(session, st: SubscriptionStatement) -> Result:
    cur = st.this
    if cur.text("db"):
        raise BindError(f'cursor "{cur.sql()}" cannot be schema-qualified', hint="a cursor belongs to the session")
    from rw_cli.handler.query import run_query

    if session.dirty:
        session.barrier()
    rows, types = run_query(session, st.expression)  # its errors first, as RisingWave binds it first
    if cur.name in cursors(session):
        raise CatalogError(f'cursor "{cur.name}" already exists')
    cursors(session)[cur.name] = QueryCursor(rows, types)
    return Result("DECLARE_CURSOR")


@dataclass
class Cursor:
    subscription: int
    after: int  # the row id of the last change returned (or skipped)
    pending: pa.Table | None = None  # snapshot rows still to return, in the FETCH layout


def cursors(session) -> dict[str, Cursor]:
    return session.cursors


def declare(session, st: SubscriptionStatement) -> Result:
    cur = st.this
    if cur.text("db"):
        raise BindError(f'cursor "{cur.sql()}" cannot be schema-qualified', hint="a cursor belongs to the session")
    if cur.name in cursors(session):
        raise CatalogError(f'cursor "{cur.name}" already exists')
    sub_name = st.args["source"]
    sub = session.catalog.get(session.catalog.qualified(sub_name.name, sub_name.text("db")))
    if sub is None or sub.kind != SUBSCRIPTION:
        raise CatalogError(f'subscription "{sub_name.sql()}" does not exist')
    if session.dirty:
        session.barrier()
    now = physical_now()
    oldest = now - sub.connector["retention_ms"]
    since = st.args.get("since")
    state = Cursor(sub.id, now << SEQ_BITS)
    if since is None or st.args.get("full"):
        state.pending = _snapshot(session, sub, now)
    elif _is_call(since, ("now", "proctime")) or isinstance(since, exp.CurrentTimestamp):
        pass
    elif _is_call(since, ("begin",)):
        state.after = max(oldest, 0) << SEQ_BITS
    elif isinstance(since, exp.Literal) and not since.is_string and since.is_int:
        ms = int(since.this) - EPOCH_ORIGIN_MS  # unix milliseconds, as rw_timestamp shows them
        if ms < oldest:
            raise BindError(f"cursor since {since.this} is out of the subscription's retention "
                            f"(oldest {oldest + EPOCH_ORIGIN_MS})")
        if ms > now:
            raise BindError(f"cursor since {since.this} is in the future (now {now + EPOCH_ORIGIN_MS})")
        state.after = ((ms + 1) << SEQ_BITS) - 1
    else:
        raise BindError(f"cursor SINCE takes now(), proctime(), begin() or unix milliseconds, not {since.sql()}")
    cursors(session)[cur.name] = state
    return Result("DECLARE_CURSOR")


def _is_call(e: exp.Expression, names: tuple[str, ...]) -> bool:
    return isinstance(e, exp.Anonymous) and e.name.lower() in names and not e.expressions


def _source_columns(session, sub: RelationCatalog) -> list[ColumnCatalog]:
    source = session.catalog.relations[sub.dependencies[0]]
    return list(source.visible_columns)


def _snapshot(session, sub: RelationCatalog, now_ms: int) -> pa.Table:
    """The relation's rows now, in FETCH's layout (op Insert, rw_timestamp now)."""
    from rw_cli.handler.query import run_query
    from rw_cli.sql.dialect import parse_statement
    from rw_cli.sql.rename import quote_name

    source = session.catalog.relations[sub.dependencies[0]]
    rows, _ = run_query(session, parse_statement(f"SELECT * FROM {quote_name(source.name)}"))
    n = rows.num_rows
    return _layout(list(rows.columns), _source_columns(session, sub), pa.array(["Insert"] * n),
                   pa.array(np.full(n, now_ms + EPOCH_ORIGIN_MS, dtype=np.int64)))


def _layout(values: list, columns: list[ColumnCatalog], ops: pa.Array, times: pa.Array) -> pa.Table:
    names = [c.name for c in columns] + ["op", "rw_timestamp"]
    return pa.Table.from_arrays([*(numeric.cast(v, c.type.arrow()) for v, c in zip(values, columns)), ops.cast(pa.string()),
                                 times.cast(pa.int64())], names=names)


def _changes(session, sub: RelationCatalog, after: int, count: int) -> tuple[pa.Table, int]:
    """The next `count` changes after row id `after`, in FETCH's layout, and the last row id."""
    from rw_cli.handler.query import run_query
    from rw_cli.sql.dialect import parse_statement
    from rw_cli.sql.rename import quote_name

    log, _ = run_query(session, parse_statement(f"SELECT * FROM {quote_name(sub.name)}"), hidden=True)
    ids = log.column(log.num_columns - 1)
    oldest = (physical_now() - sub.connector["retention_ms"]) << SEQ_BITS
    log = log.filter(pc.greater(ids, max(after, oldest)))
    log = log.take(pc.sort_indices(log.column(log.num_columns - 1))).slice(0, count)
    cols = _source_columns(session, sub)
    width = len(cols)
    ops = _OP_NAMES[log.column(width).to_numpy(zero_copy_only=False).astype(np.int64)] if log.num_rows else []
    ids = log.column(log.num_columns - 1)
    times = pc.add(pc.shift_right(ids, SEQ_BITS), EPOCH_ORIGIN_MS) if log.num_rows else pa.array([], pa.int64())
    last = int(ids[-1].as_py()) if log.num_rows else after
    return _layout(log.columns[:width], cols, pa.array(list(ops), pa.string()), times), last


def fetch(session, st: SubscriptionStatement) -> Result:
    name = st.this.name
    state = cursors(session).get(name)
    if state is None:
        raise CatalogError(f'cursor "{name}" does not exist')
    count = st.args.get("count")
    if isinstance(state, QueryCursor):
        count = state.rows.num_rows if count is None else count
        table, state.rows = state.rows.slice(0, count), state.rows.slice(count)
        if st.args.get("move"):
            return Result(f"MOVE {table.num_rows}")
        return Result(f"FETCH {table.num_rows}", table, state.types)
    if st.args.get("move"):
        raise NotSupported("MOVE on a subscription cursor", hint="FETCH its changes")
    sub = session.catalog.relations.get(state.subscription)
    if sub is None:
        raise CatalogError(f'the subscription of cursor "{name}" was dropped')
    if session.dirty:
        session.barrier()
    count = (1 << 62) if count is None else (count or 1)  # ALL: every change there is
    parts = []
    if state.pending is not None and state.pending.num_rows:
        parts.append(state.pending.slice(0, count))
        state.pending = state.pending.slice(count)
        count -= parts[0].num_rows
    if count > 0:
        changes, state.after = _changes(session, sub, state.after, count)
        parts.append(changes)
    table = pa.concat_tables(parts) if len(parts) > 1 else parts[0]
    types = [c.type for c in _source_columns(session, sub)] + [VARCHAR, BIGINT]
    return Result(f"FETCH {table.num_rows}", table, types)


def cursor_shape(session, name: str) -> Result | None:
    """The columns a FETCH from query cursor `name` returns, as an empty result (a driver's
    Describe of the cursor's portal); None when no query cursor has that name."""
    state = cursors(session).get(name)
    if not isinstance(state, QueryCursor):
        return None
    return Result("FETCH 0", state.rows.slice(0, 0), state.types)


def close(session, st: SubscriptionStatement) -> Result:
    if st.args["kind"] == "close_all":
        cursors(session).clear()
        return Result("CLOSE_CURSOR")
    if cursors(session).pop(st.this.name, None) is None:
        raise CatalogError(f'cursor "{st.this.name}" does not exist')
    return Result("CLOSE_CURSOR")
