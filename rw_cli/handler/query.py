"""SELECT (and VALUES, set operations): a batch query on DuckDB over committed snapshots.

The query is bound against the catalog (`rw_cli.sql.batch`: views expanded, time windows
rewritten, system catalogs materialized, `*` expanded to visible columns), each relation it
reads is registered as the Arrow snapshot of the last committed epoch, and the SQL is
transpiled to DuckDB with PostgreSQL's semantics. A lookup on a relation's whole primary key
is answered from the store directly (`rw_cli.handler.point_lookup`).
"""
from __future__ import annotations

import dataclasses
import re

import numpy as np
import pyarrow as pa
from sqlglot import exp

from rw_cli.common.epoch import epoch_unix_ms
from rw_cli.common.types import JSONB, DataType
from rw_cli.engine import duck
from rw_cli.handler import prepared
from rw_cli.handler.prepared import BoundSelect
from rw_cli.handler.row_order import pk_order
from rw_cli.handler.snapshots import cache_for
from rw_cli.meta.catalog import RW_TIMESTAMP, RelationCatalog
from rw_cli.result import Result
from rw_cli.sql.batch import bind_query
from rw_cli.sql.output_name import output_name
from rw_cli.sql.transpile import to_duckdb


def snapshot(session, rel: RelationCatalog, committed: bool = True, progress=None,
             write_times: bool = False) -> pa.Table:
    """A relation's rows (all columns, named) at the committed epoch, or with own writes.
    A committed snapshot streams from the store batch by batch, advancing `progress`.
    `write_times`: with a last `_rw_timestamp` column (when each row was last written)."""
    from rw_cli.handler.transaction import read_epoch
    from rw_cli.stream.builder import relation_state_table

    if write_times and committed:
        return _with_write_times(relation_state_table(session.store, rel), read_epoch(session), rel)
    if not committed:
        live = session.runtime.live_table(rel.id)  # its memtable holds this epoch's writes
        if live is not None:
            return live.scan()
    table = relation_state_table(session.store, rel)
    if not committed:
        return pk_order(table.scan(), rel)
    batches = []
    epoch = read_epoch(session)  # the committed one, or a read-only transaction's
    for batch in table.iter_batches(epoch=epoch):
        batches.append(batch)
        if progress is not None:
            progress.advance(batch.num_rows)
            if progress.total is not None and progress.done > progress.total:
                progress.total = progress.done  # the estimate was short
    rows = pa.Table.from_batches(batches) if batches else table.scan(epoch=epoch)
    return pk_order(rows, rel)


def snapshot_at(session, rel: RelationCatalog, epoch: int, write_times: bool = False) -> pa.Table:
    """A relation's rows (all columns, named) as committed at `epoch` (time travel)."""
    from rw_cli.stream.builder import relation_state_table

    table = relation_state_table(session.store, rel)
    if write_times:
        return _with_write_times(table, epoch, rel)
    return pk_order(table.scan(epoch=epoch), rel)


def _with_write_times(table, epoch: int, rel: RelationCatalog) -> pa.Table:
    batches, times = [], []
    for batch, epochs in table.iter_batches_with_epochs(epoch=epoch):
        batches.append(batch)
        times.append(epoch_unix_ms(epochs).astype(np.int64))
    rows = pa.Table.from_batches(batches) if batches else table.scan(epoch=epoch)
    ms = np.concatenate(times) if times else np.zeros(0, np.int64)
    stamps = pa.array(ms * 1000, pa.int64()).cast(pa.timestamp("us", tz="UTC"))
    return pk_order(rows.append_column(RW_TIMESTAMP, stamps), rel)


def estimate_rows(store, table_id: int) -> int | None:
    """About how many rows a table holds at the committed epoch, from the store's metadata
    without reading it (`HummockStorage.estimate_rows`). None when the store cannot say."""
    try:
        return store.estimate_rows(table_id, store.committed_epoch)
    except Exception:  # noqa: BLE001 - an estimate must never fail the query
        return None


def run_query(session, tree: exp.Expression, committed: bool = True, hidden: bool = False,
              empty: bool = False, reparse=None, plan: tuple | None = None) -> tuple[pa.Table, list[DataType]]:
    """Run a query; `committed=False` reads the session's own uncommitted writes (DML),
    `hidden=True` makes hidden columns visible, `empty=True` runs it on empty inputs (to
    learn its output schema). With `reparse` (a fresh tree of the same statement, on demand)
    the caller hands `tree` over: it is bound in place (`bind_query`). `plan`: the query's
    `lookup_plan`, when the caller made it already."""
    if committed and not hidden and not empty:
        from rw_cli.handler.point_lookup import try_point_lookup

        fast = try_point_lookup(session, tree, plan)
        if isinstance(fast, dict):  # the looked-up rows, for the rest of the query
            return run_query_on(session, tree, fast, reparse=reparse)
        if fast is not None:
            return fast
    return run_query_on(session, tree, None, committed, hidden, empty, reparse)


def run_query_on(session, tree: exp.Expression, overrides: dict[int, pa.Table] | None,
                 committed: bool = True, hidden: bool = False, empty: bool = False, reparse=None):
    """Run a query; relations whose id is in `overrides` read those rows instead of a snapshot."""
    return run_bound(session, bind(session, tree, hidden, reparse), overrides, committed, hidden, empty)


def bind(session, tree: exp.Expression, hidden: bool = False, reparse=None) -> BoundSelect:
    """`tree` bound against the catalog and transpiled (bound in place when `reparse` hands
    it over: `bind_query`)."""
    _check_select(session, tree)
    bound = bind_query(tree, session.catalog, hidden=hidden, session=session, reparse=reparse)
    names = _select_names(bound.tree)  # before transpiling, which rewrites the tree in place
    sql = to_duckdb(bound.tree, bound.schema, owned=True, strict=session.settings.batch_strict)
    return BoundSelect(sql, bound.relations, dict(bound.system), names, bound.named_hidden, bound.rw_timestamp,
                       dict(bound.as_of))


def run_bound(session, bound: BoundSelect, overrides: dict[int, pa.Table] | None = None,
              committed: bool = True, hidden: bool = False, empty: bool = False):
    """Run a bound query over the snapshots of its relations (the rows of `overrides` for
    the relations whose id is there)."""
    tables: dict[str, pa.Table] = dict(bound.system)
    progress = _scan_progress(session, bound.relations, overrides) if committed and not empty else None
    cache = cache_for(session.store) if committed and not empty else None
    pinned: set[str] = set()  # snapshots the cache keeps: DuckDB may keep them registered
    try:
        for reg, rel in bound.relations.items():
            if overrides and rel.id in overrides:
                tables[reg] = _columns(overrides[rel.id], rel, hidden, bound.named_hidden, bound.rw_timestamp)
                continue
            if reg in bound.as_of:  # FOR SYSTEM_TIME AS OF: the relation as of then, never cached
                from rw_cli.handler.time_travel import as_of_epoch

                epoch = as_of_epoch(session, bound.as_of[reg].copy(), rel, run_query)  # (kept for reruns)
                tables[reg] = _columns(snapshot_at(session, rel, epoch, bound.rw_timestamp), rel, hidden,
                                       bound.named_hidden, bound.rw_timestamp)
                continue
            retention = _retention_seconds(session, rel)
            if retention is not None and not empty:  # its rows age out: read now, never cached
                data = snapshot(session, rel, committed, progress, write_times=True)
                tables[reg] = _columns(_within_retention(data, retention, bound.rw_timestamp), rel, hidden,
                                       bound.named_hidden, bound.rw_timestamp)
                continue
            key = _snapshot_key(session, rel, hidden, bound.named_hidden, bound.rw_timestamp) if cache is not None else None
            data = cache.get(key) if cache is not None else None
            ranged = None
            if data is None and cache is not None and _reads_range(bound.key_range, rel):
                # no snapshot kept: the rows of the query's key range (of the relation's pk, or
                # of an index on it), not the relation's (None: too many to look up by key)
                ranged = bound.key_range.read(session)
                if ranged is not None and _wide(session, ranged, rel):
                    bound.key_range.wide = True
            if data is not None:
                pinned.add(reg)
            elif ranged is not None:
                data = _columns(pk_order(ranged, rel), rel, hidden, bound.named_hidden, bound.rw_timestamp)
            else:
                if empty:
                    from rw_cli.stream.builder import relation_schema

                    data = relation_schema(rel).empty_table()
                else:
                    data = snapshot(session, rel, committed, progress, write_times=bound.rw_timestamp)
                data = _columns(data, rel, hidden, bound.named_hidden, bound.rw_timestamp)
                if cache is not None and cache.put(key, data):
                    pinned.add(reg)
            tables[reg] = data
    finally:
        if progress is not None:
            # DuckDB runs the query next: the statement's own line (a spinner and the
            # elapsed time) shows from here on
            progress.close()
    result = duck.query(bound.sql, tables, settings=session_settings(session), pinned=pinned)
    result = result.rename_columns(_output_names(bound.names, result))
    types = [DataType.from_field(f) for f in result.schema]
    return _in_session_zone(_normalize(result, types), session), types


def _check_select(session, tree: exp.Expression) -> None:
    """A session acting as another user (SET SESSION AUTHORIZATION) reads only the relations
    it may SELECT from: those the query names (a view's own relations are its owner's)."""
    from rw_cli.handler.authz import current_user, require
    from rw_cli.meta.access import DEFAULT_USER
    from rw_cli.sql.batch import referenced_relations

    if current_user(session) == DEFAULT_USER:
        return
    for rel in referenced_relations(tree, session.catalog):
        require(session, rel, "SELECT")


def _columns(data: pa.Table, rel: RelationCatalog, hidden: bool, named_hidden: frozenset[str],
             rw_timestamp: bool) -> pa.Table:
    """The columns a query sees: the visible ones (and the hidden ones and `_rw_timestamp`
    that it names), or all with `hidden`."""
    if hidden:
        return data
    keep = [c.name for c in rel.visible_columns]
    # named explicitly: `*` does not expand to them
    keep += [c.name for c in rel.columns if c.hidden and c.name in named_hidden and c.name in data.column_names]
    if rw_timestamp and RW_TIMESTAMP in data.column_names:
        keep.append(RW_TIMESTAMP)
    if not keep and data.num_columns:  # a table of no columns (`CREATE TABLE t`): DuckDB reads one
        keep = [data.column_names[0]]
    return _json_typed(data.select(keep), rel)


def _json_typed(data: pa.Table, rel: RelationCatalog) -> pa.Table:
    """jsonb columns (text in Arrow) as Arrow's JSON extension type, which DuckDB reads as
    its JSON: its JSON functions and operators then apply to them as to any jsonb value."""
    jsonb = {c.name for c in rel.columns if c.type == JSONB}
    if not jsonb & set(data.column_names):
        return data
    columns = [pa.ExtensionArray.from_storage(pa.json_(), c.combine_chunks().cast(pa.string()))
               if name in jsonb and not isinstance(c.type, pa.ExtensionType) else c
               for name, c in zip(data.column_names, data.columns)]
    return pa.table(columns, names=data.column_names)


def _retention_seconds(session, rel: RelationCatalog) -> int | None:
    """A table's `retention_seconds` (storage TTL), which its indexes' rows share."""
    if rel.retention_seconds is not None or rel.kind != "index":
        return rel.retention_seconds
    for dep in rel.dependencies:
        base = session.catalog.relations.get(dep)
        if base is not None and base.retention_seconds is not None:
            return base.retention_seconds
    return None


def _within_retention(data: pa.Table, seconds: int, keep_write_times: bool) -> pa.Table:
    """The rows written within the last `seconds` (older ones are gone, as RisingWave's
    compaction drops them); the write times stay only when the query names them."""
    import time

    import pyarrow.compute as pc

    if RW_TIMESTAMP not in data.column_names:  # this transaction's own rows: all fresh
        return data
    cutoff = pa.scalar(int((time.time() - seconds) * 1_000_000), pa.timestamp("us", tz="UTC"))
    kept = data.filter(pc.greater_equal(data[RW_TIMESTAMP], cutoff))
    return kept if keep_write_times else kept.drop_columns([RW_TIMESTAMP])


def _snapshot_key(session, rel: RelationCatalog, hidden: bool, named_hidden: frozenset[str],
                  rw_timestamp: bool) -> tuple:
    """What a relation's committed snapshot, as a query sees it, depends on: the SSTs its
    rows are read from, when the store can say (a relation the last epochs left as it was
    keeps its snapshot, and DuckDB keeps it registered), else the committed epoch."""
    from rw_cli.stream.builder import relation_state_table

    from rw_cli.handler.transaction import read_epoch

    columns = tuple((c.name, c.type, c.hidden) for c in rel.columns)
    epoch = read_epoch(session)
    token = relation_state_table(session.store, rel).content_token(epoch)
    version = ("epoch", epoch) if token is None else ("ssts", token)
    return rel.id, version, columns, tuple(rel.pk), hidden, named_hidden, rw_timestamp


def _scan_progress(session, relations: dict[str, RelationCatalog], overrides):
    """Progress of reading the snapshots a query needs (rows streamed from the store of the
    total estimated from the relations' sizes), or None when nobody shows progress."""
    from rw_cli.common.progress import Progress, current

    if current() is None:
        return None
    rels = {rel.id: rel for rel in relations.values() if not (overrides and rel.id in overrides)}
    if not rels:
        return None
    estimates = [estimate_rows(session.store, rid) for rid in rels]
    total = None if any(e is None for e in estimates) else sum(estimates)
    names = ", ".join(rel.name for rel in rels.values())
    if len(names) > 30:
        names = names[:29] + "…"
    return Progress(f"scan {names}", total=total or None)


def _in_session_zone(t: pa.Table, session) -> pa.Table:
    """timestamptz columns carry the session's TimeZone, so they print in local time."""
    tz = session_settings(session)["timezone"]
    if tz.upper() in ("UTC", "ETC/UTC", "+00:00", "GMT"):
        return t
    cols = [c.cast(pa.timestamp(c.type.unit, tz=tz)) if pa.types.is_timestamp(c.type) and c.type.tz else c
            for c in t.columns]
    return pa.Table.from_arrays(cols, names=t.column_names)


def session_settings(session) -> dict[str, str]:
    """What DuckDB must know of the session's parameters."""
    settings = getattr(session, "settings", None)
    return {"timezone": settings.timezone if settings is not None else "UTC"}


def _select_names(q: exp.Expression) -> list[str] | None:
    """The output names PostgreSQL gives the query's columns, when its (first) SELECT lists
    them without `*`."""
    s = q
    while isinstance(s, (exp.Union, exp.Except, exp.Intersect)):
        s = s.this
    if isinstance(s, exp.Subquery):
        s = s.unnest()
    if isinstance(s, exp.Select) and not any(
            isinstance(e, exp.Star) or (isinstance(e, exp.Column) and isinstance(e.this, exp.Star))
            for e in s.expressions):
        return [output_name(e) for e in s.expressions]
    return None


def _output_names(names: list[str] | None, result: pa.Table) -> list[str]:
    if names is not None and len(names) == result.num_columns:
        return names
    return [_clean_name(n) for n in result.column_names]


_GENERATED_NAME = re.compile(r"_col_\d+")


def _clean_name(n: str) -> str:
    """A result column's name: `?column?` for one sqlglot named (`_col_1`, an unnamed item of
    a subquery under `*`) or DuckDB gave a name PostgreSQL would not."""
    return n if n.isidentifier() and not _GENERATED_NAME.fullmatch(n) else "?column?"


def _normalize(t: pa.Table, types: list[DataType]) -> pa.Table:
    """Cast DuckDB's result types to our Arrow mapping (e.g. string_view -> string)."""
    cols = []
    for c, dt in zip(t.columns, types):
        want = dt.arrow()
        if c.type != want and dt.name != "numeric":
            try:
                c = c.cast(want)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                pass
        cols.append(c)
    return pa.Table.from_arrays(cols, names=t.column_names)


def explain_query(session, tree: exp.Expression) -> list[str]:
    """The batch plan: a pk lookup on the store, or DuckDB's physical plan over the scans of
    committed snapshots (drawn in RisingWave's tree style)."""
    from rw_cli.handler.point_lookup import lookup_plan

    plan = lookup_plan(tree, session.catalog)
    if plan is not None:
        rel, lists, _ = plan
        keys = ", ".join(rel.columns[k].name for k in rel.pk)
        n = 1
        for v in lists:
            n *= len(v)
        return [f"BatchLookup {{ table: {rel.name}, pk: [{keys}], keys: {n}, epoch: committed }}"]
    bound = bind_query(tree, session.catalog, session=session)
    sql = to_duckdb(bound.tree, bound.schema, owned=True)
    tables: dict[str, pa.Table] = {k: v.schema.empty_table() for k, v in bound.system.items()}
    from rw_cli.stream.builder import relation_schema

    for reg, rel in bound.relations.items():
        tables[reg] = relation_schema(rel).empty_table().select([c.name for c in rel.visible_columns])
    physical = duck.explain(sql, tables)
    lines = ["BatchDuckDB { engine: duckdb }"]
    key_range = _key_range(session, tree)
    children = [f"BatchScan {{ table: {rel.name}, columns: [{', '.join(c.name for c in rel.visible_columns)}], "
                f"{_scan_of(rel, key_range)} }}" for rel in bound.relations.values()]
    children += [f"BatchSystemScan {{ table: {name.split('_', 3)[-1]} }}" for name in bound.system]
    body = [f"  {line}" for line in physical]
    for i, c in enumerate(children):
        lines.append(("└─" if i == len(children) - 1 else "├─") + c)
    return lines + ["", "DuckDB plan:"] + body


def _reads_range(key_range, rel) -> bool:
    """Whether a query reads its key range of `rel` where no snapshot of it is kept: unless
    the range held most of the relation last time (the snapshot is read then, and kept for
    the next runs of the query, as a range read never is)."""
    return key_range is not None and key_range.rel.id == rel.id and not key_range.wide


def _wide(session, rows: pa.Table, rel) -> bool:
    """Whether rows read by key range are most of the relation (an eighth of it or more)."""
    from rw_cli.handler.point_lookup import MAX_KEYS

    return rows.num_rows > MAX_KEYS and rows.num_rows * 8 >= (estimate_rows(session.store, rel.id) or 0)


def _key_range(session, tree: exp.Expression):
    """The key range a one-relation query reads where the relation's snapshot is not kept
    (of its pk, or of an index on it), or None."""
    from rw_cli.handler.index_lookup import key_range_plan

    return key_range_plan(tree, session.catalog)


def _scan_of(rel, key_range) -> str:
    """EXPLAIN's words for how a scan of `rel` reads it when no snapshot is kept: the key
    range (`scan_ranges`, as RisingWave shows them) of its pk or of an index (`index`)."""
    if key_range is None or key_range.rel.id != rel.id:
        return "snapshot: committed"
    index = getattr(key_range, "index", None)
    ranges = (key_range.key_range if index is not None else key_range).describe(index or rel)
    return (f"index: {index.name}, " if index is not None else "") + \
        f"scan_ranges: [{ranges}], epoch: committed, kept snapshot first"


def analyze_query(session, tree: exp.Expression) -> list[str]:
    """EXPLAIN ANALYZE: the query run over its snapshots under DuckDB's profiler, whose
    operator tree gives the actual rows and time of each step; then the whole run's time
    (snapshots read included), as PostgreSQL ends its output."""
    import time

    bound = bind(session, tree)
    start = time.perf_counter()
    out, _ = run_bound(session, dataclasses.replace(bound, sql=f"EXPLAIN ANALYZE {bound.sql}", names=None))
    elapsed = (time.perf_counter() - start) * 1e3
    text = out.column(out.num_columns - 1).to_pylist() if out.num_rows else []
    profile = [line.rstrip() for chunk in text for line in str(chunk).splitlines() if line.strip()]
    scans = [f"BatchScan {{ table: {rel.name}, snapshot: committed }}" for rel in bound.relations.values()]
    lines = ["BatchDuckDB { engine: duckdb }"]
    lines += [("└─" if i == len(scans) - 1 else "├─") + c for i, c in enumerate(scans)]
    return lines + ["", "DuckDB profile:"] + [f"  {line}" for line in profile] + \
        ["", f"Execution Time: {elapsed:.3f} ms"]


def handle_query(session, tree: exp.Expression, sql: str | None = None) -> Result:
    """A SELECT statement; given its text, its tree is the handler's to change (it is parsed
    again only in the rare case that binding must start over), and its bound form is kept
    for the next run of the same text (`rw_cli.handler.prepared`)."""
    if sql is None:
        table, types = run_query(session, tree)
        return Result(f"SELECT {table.num_rows}", table, types)
    from rw_cli.handler.point_lookup import lookup_plan
    from rw_cli.sql.dialect import parse_statement

    def reparse() -> exp.Expression:
        return parse_statement(sql)
    plan = lookup_plan(tree, session.catalog)
    if plan is not None:  # answered from the store: bound anew each time
        table, types = run_query(session, tree, reparse=reparse, plan=plan)
        return Result(f"SELECT {table.num_rows}", table, types)
    key_range = _key_range(session, tree)  # (of the tree as written: binding changes it)
    bound = bind(session, tree, reparse=reparse)
    if key_range is not None:
        bound = dataclasses.replace(bound, key_range=key_range)
    prepared.remember(session, sql, bound)
    return run_prepared(session, bound)


def run_prepared(session, bound: BoundSelect) -> Result:
    """A SELECT statement already bound (`rw_cli.handler.prepared`), over the committed
    snapshots of now."""
    table, types = run_bound(session, bound)
    return Result(f"SELECT {table.num_rows}", table, types)
