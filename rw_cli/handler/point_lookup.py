"""Primary-key lookups answered from the store instead of a snapshot scan.

`SELECT ... FROM rel WHERE pk1 = c1 [AND pk2 IN (c2, c3)] [AND other predicates] ...` on one
table or materialized view: every pk column is bound to constants, so the rows are fetched
with `StateTable.get_rows` (one batched multi-get at the committed epoch), and the query runs
on DuckDB over just those rows. Anything else returns None and takes the general path.
DML (`DELETE`/`UPDATE ... WHERE pk ...`) uses the same plan, with `pk IN (subquery)` too,
over the table's live state (this epoch's own writes included): its cost follows the rows it
changes, not the table.
"""
from __future__ import annotations

import datetime
import re
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
from sqlglot import exp

from rw_cli.meta.catalog import MATERIALIZED_VIEW, RW_TIMESTAMP, TABLE, RelationCatalog
from rw_cli.sql.dialect import INT_LIST
from rw_cli.sql.walk import nodes
from rw_cli.common.lazy_import import lazy_import

pc = lazy_import("pyarrow.compute")  # imported on first use: see rw_cli.common.lazy_import

MAX_KEYS = 4096

# a `col IN (subquery)`'s values, as one Arrow array (None: not a set of keys)
Subquery = Callable[[exp.Expression], "pa.Array | None"]


class _CommittedReads:
    """The store as seen by a batch read: point gets at the epoch it reads (the committed
    one, or its read-only transaction's)."""

    def __init__(self, store, epoch: int):
        self.store = store
        self.epoch = epoch

    def multi_get(self, keys, epoch):
        return self.store.multi_get(keys, self.epoch)


def single_table(tree: exp.Expression, catalog, subquery: Subquery | None
                 ) -> tuple[RelationCatalog, str, dict[str, int], list[exp.Expression]] | None:
    """(the relation, its alias, its visible columns' indexes by name, the WHERE's
    conjuncts) when `tree` is a SELECT from one table or MV with a pk and a WHERE."""
    if not isinstance(tree, exp.Select) or any(c.name == RW_TIMESTAMP for c in tree.find_all(exp.Column)):
        return None  # a lookup returns no write times
    from_ = tree.args.get("from_") or tree.args.get("from")
    if from_ is None or tree.args.get("joins") or tree.args.get("with") or tree.args.get("laterals"):
        return None
    if isinstance(from_.this, exp.Table) and from_.this.args.get("version") is not None:
        return None  # a time travel reads an older version
    src = from_.this
    if not isinstance(src, exp.Table) or not isinstance(src.this, exp.Identifier):
        return None
    if src.text("db") not in ("", "public"):
        return None
    rel = catalog.get(src.name)
    if rel is None or rel.kind not in (TABLE, MATERIALIZED_VIEW) or not rel.pk:
        return None
    where = tree.args.get("where")
    if where is None:
        return None
    if subquery is None and len(nodes(tree, exp.Table)) != 1:
        return None
    names = {c.name: i for i, c in enumerate(rel.columns) if not c.hidden}
    cond = where.this
    return rel, src.alias_or_name, names, list(cond.flatten()) if isinstance(cond, exp.And) else [cond]


def lookup_plan(tree: exp.Expression, catalog, subquery: Subquery | None = None,
                max_keys: int = MAX_KEYS) -> tuple[RelationCatalog, list[pa.Array], int] | None:
    """(relation, one array of constants per pk column, number of pk constraints) when `tree`
    is a pk lookup of at most `max_keys` keys. With `subquery`, `pk IN (SELECT ...)` binds
    the pk too (its values computed by `subquery`)."""
    got = single_table(tree, catalog, subquery)
    if got is None:
        return None
    rel, alias, names, conjuncts = got
    pk = set(rel.pk)
    found = [(c, _target(c, alias, names)) for c in conjuncts]
    spans = _integer_spans(rel, alias, names, conjuncts)
    if not pk <= {i for _, i in found} | set(spans):
        return None  # checked first: a subquery runs only when every pk column is bound
    values: dict[int, pa.Array] = {}
    used = 0
    for idx, (vals, bounding) in spans.items():
        values[idx], used = vals, used + bounding
    for c, idx in found:
        if idx is None or idx not in pk:
            continue
        vals = _values(c, rel.columns[idx].type, subquery)
        if vals is None:
            continue
        used += 1
        values[idx] = vals.filter(pc.is_in(vals, value_set=values[idx])) if idx in values else vals
    if any(k not in values for k in rel.pk):
        return None
    lists = [pc.unique(values[k]) for k in rel.pk]
    n = 1
    for v in lists:
        n *= len(v)
    if n > max_keys:
        return None
    return rel, lists, used


def _integer_spans(rel: RelationCatalog, alias: str, names: dict[str, int],
                   conjuncts: list[exp.Expression]) -> dict[int, tuple[pa.Array, int]]:
    """Per integer pk column that the conjuncts bound on both sides to at most MAX_KEYS
    values (`id BETWEEN 5 AND 9`, `id >= 5 AND id < 10`): those values, and how many
    conjuncts bound it. A short range is a list of keys: looked up, not scanned."""
    per: dict[int, list[tuple[str, object, bool]]] = {}
    count: dict[int, int] = {}
    for c in conjuncts:
        bounds = _bounds(c, alias, names, rel)
        for idx in {b[0] for b in bounds}:
            count[idx] = count.get(idx, 0) + 1
        for idx, side, v, inclusive in bounds:
            per.setdefault(idx, []).append((side, v, inclusive))
    out = {}
    for idx, bounds in per.items():
        t = rel.columns[idx].type
        if not t.is_integer or not all(_fits([v], t.arrow()) for _, v, _ in bounds):
            continue
        lows = [v if inclusive else v + 1 for side, v, inclusive in bounds if side == "lower"]
        highs = [v if inclusive else v - 1 for side, v, inclusive in bounds if side == "upper"]
        if lows and highs and min(highs) - max(lows) < MAX_KEYS:
            out[idx] = (_array(list(range(max(lows), min(highs) + 1)), t.arrow()), count[idx])
    return out


def _fits(values: list, t: pa.DataType) -> bool:
    try:
        _array(values, t)
    except (pa.ArrowInvalid, OverflowError, ValueError):
        return False
    return True


@dataclass
class PkRange:
    """A WHERE's key range: the first pk columns bound to constants (`prefix`, one array per
    column), the next one between `lower` and `upper` (None, or (a one-value array,
    inclusive)); `exact` when the WHERE says no more than that."""
    rel: RelationCatalog
    prefix: list[pa.Array]
    lower: tuple[pa.Array, bool] | None
    upper: tuple[pa.Array, bool] | None
    exact: bool
    wide: bool = False  # a SELECT found most of the relation in it: it reads the snapshot then

    def read(self, session) -> pa.Table:
        """The committed rows of the range (`read_range`)."""
        return read_range(session, self)

    def describe(self, rel: RelationCatalog) -> str:
        """The range in SQL over `rel`'s pk columns (EXPLAIN): `a = 1 AND b >= 'x'`."""
        parts = []
        for k, values in zip(rel.pk, self.prefix):
            shown = [_sql_literal(v) for v in values.to_pylist()]
            name = rel.columns[k].name
            if not len(values):
                parts.append("FALSE")  # (conjuncts no value meets)
            elif values.null_count:
                parts.append(f"{name} IS NULL")
            else:
                parts.append(f"{name} = {shown[0]}" if len(shown) == 1 else f"{name} IN ({', '.join(shown)})")
        name = rel.columns[rel.pk[len(self.prefix)]].name if len(self.prefix) < len(rel.pk) else ""
        for bound, op in ((self.lower, ">"), (self.upper, "<")):
            if bound is not None:
                parts.append(f"{name} {op}{'=' if bound[1] else ''} {_sql_literal(bound[0][0].as_py())}")
        return " AND ".join(parts)


def _sql_literal(v) -> str:
    return str(v) if isinstance(v, int) else "'" + str(v).replace("'", "''") + "'"


def range_plan(tree: exp.Expression, catalog) -> PkRange | None:
    """The key range of `tree`'s pk constraints when they narrow the relation to one but are
    no point lookup: `id < 100`, `id BETWEEN 5 AND 9`, `a = 1` for a pk (a, b), `a IN (1, 2)
    AND b > 7`. The rows in it are a superset of the answer (the query still applies the
    other conjuncts); None when the constraints give no range."""
    got = single_table(tree, catalog, None)
    if got is None:
        return None
    return range_over(*got)


def range_over(rel: RelationCatalog, alias: str, names: dict[str, int],
               conjuncts: list[exp.Expression]) -> PkRange | None:
    """`range_plan` over `rel`'s pk, its columns known to the WHERE by `names` (name ->
    column index): for the relation the query reads, or an index on it."""
    values: dict[int, pa.Array] = {}
    bounds: dict[int, list[tuple[str, object, bool]]] = {}
    kept: list[tuple[str, set[int]]] = []  # per conjunct: what it is, the pk columns it binds
    for c in conjuncts:
        idx = _target(c, alias, names)
        vals = _values(c, rel.columns[idx].type, None) if idx is not None and idx in rel.pk else None
        if vals is None and (idx := _null_target(c, alias, names)) is not None and idx in rel.pk:
            vals = pa.nulls(1, rel.columns[idx].type.arrow())  # `col IS NULL`: the key's NULL
        if vals is not None:
            values[idx] = vals.filter(pc.is_in(vals, value_set=values[idx])) if idx in values else vals
            kept.append(("eq", {idx}))
            continue
        found = _bounds(c, alias, names, rel)
        for idx, side, v, inclusive in found:
            bounds.setdefault(idx, []).append((side, v, inclusive))
        kept.append(("bound", {b[0] for b in found}) if found else ("other", set()))
    m = 0
    while m < len(rel.pk) and rel.pk[m] in values:
        m += 1
    if m == len(rel.pk) and not any(values[k].null_count for k in rel.pk):
        return None  # a point lookup, or more keys than one is worth (a lookup has no NULL key)
    prefix = [pc.unique(values[k]) for k in rel.pk[:m]]
    if int(np.prod([len(v) for v in prefix])) > MAX_KEYS:
        return None
    if m == len(rel.pk):  # every key column bound, one to its NULL
        return PkRange(rel, prefix, None, None, all(what == "eq" for what, _ in kept))
    col = rel.pk[m]
    t = rel.columns[col].type.arrow()
    mine = bounds.get(col, [])
    lower = _tightest([(v, i) for side, v, i in mine if side == "lower"], True, t)
    upper = _tightest([(v, i) for side, v, i in mine if side == "upper"], False, t)
    if m == 0 and lower is None and upper is None:
        return None
    exact = _fits([v for _, v, _ in mine], t) and all(
        (what == "eq" and cols <= set(rel.pk[:m])) or (what == "bound" and cols == {col}) for what, cols in kept)
    return PkRange(rel, prefix, lower, upper, exact)


_FLIP = {exp.GT: exp.LT, exp.GTE: exp.LTE, exp.LT: exp.GT, exp.LTE: exp.GTE}


def _bounds(c: exp.Expression, alias: str, names: dict[str, int],
            rel: RelationCatalog) -> list[tuple[int, str, object, bool]]:
    """(column, "lower" | "upper", value, inclusive) for each bound a conjunct puts on a pk
    column: `col < c` (either side), `col BETWEEN a AND b`; none for anything else."""
    c = _unparen(c)
    if isinstance(c, exp.Between) and not c.args.get("symmetric"):
        pairs = [(exp.GTE, c.this, c.args["low"]), (exp.LTE, c.this, c.args["high"])]
    elif type(c) in _FLIP:
        col, lit = (c.this, c.expression) if isinstance(c.this, exp.Column) else (c.expression, c.this)
        pairs = [(type(c) if col is c.this else _FLIP[type(c)], col, lit)]
    else:
        return []
    out = []
    for op, col, lit in pairs:
        if not isinstance(col, exp.Column) or (col.table and col.table != alias) or col.name not in names:
            return []
        idx = names[col.name]
        if idx not in rel.pk:
            return []
        v = _literal(lit, rel.columns[idx].type)
        if v is _NO:
            return []
        out.append((idx, "lower" if op in (exp.GT, exp.GTE) else "upper", v, op in (exp.GTE, exp.LTE)))
    return out


def _tightest(bounds: list[tuple[object, bool]], lower: bool, t: pa.DataType) -> tuple[pa.Array, bool] | None:
    """The narrowest of a column's lower (upper) bounds, as (a one-value array, inclusive); a
    value out of the column type's range bounds nothing (the query still compares it)."""
    best = None
    for v, inclusive in bounds:
        if not _fits([v], t):
            continue
        if best is None or (v > best[0] if lower else v < best[0]) or (v == best[0] and not inclusive):
            best = (v, inclusive)
    return None if best is None else (_array([best[0]], t), best[1])


def fetch_range(plan: PkRange, table, epoch: int | None = None) -> pa.Table:
    """The rows in the plan's key range, in key order, from `table` (the relation's state
    table): at a committed `epoch`, or from a job's live table with this epoch's writes."""
    prefix = _cross_product([v.cast(table.schema.field(k).type) for v, k in zip(plan.prefix, table.pk_indices)])
    return table.scan_pk_range(prefix, plan.lower, plan.upper, epoch)


def read_range(session, plan: PkRange) -> pa.Table:
    """The committed rows in the plan's key range (at the epoch a batch query reads)."""
    from rw_cli.handler.transaction import read_epoch
    from rw_cli.stream.builder import relation_state_table

    return fetch_range(plan, relation_state_table(session.store, plan.rel), read_epoch(session))


def _null_target(c: exp.Expression, alias: str, names: dict[str, int]) -> int | None:
    """The column of a conjunct `col IS NULL`, else None."""
    c = _unparen(c)
    if not isinstance(c, exp.Is) or not isinstance(c.expression, exp.Null):
        return None
    col = c.this
    if not isinstance(col, exp.Column) or (col.table and col.table != alias) or col.name not in names:
        return None
    return names[col.name]


def _unparen(c: exp.Expression) -> exp.Expression:
    return c.unnest() if isinstance(c, exp.Paren) else c


def _target(c: exp.Expression, alias: str, names: dict[str, int]) -> int | None:
    """The column a conjunct `col = const`, `col IN (...)` constrains, else None."""
    c = _unparen(c)
    if isinstance(c, exp.EQ):
        col = c.this if isinstance(c.this, exp.Column) else c.expression
    elif isinstance(c, exp.In) and not c.args.get("unnest") and not c.args.get("field"):
        col = c.this
    else:
        return None
    if not isinstance(col, exp.Column) or (col.table and col.table != alias) or col.name not in names:
        return None
    return names[col.name]


def _values(c: exp.Expression, t, subquery: Subquery | None) -> pa.Array | None:
    """The constants a conjunct binds its column to, as an array of the column's type (None:
    not constants of a type a lookup handles; the general path decides)."""
    c = _unparen(c)
    if isinstance(c, exp.EQ):
        lits = [c.expression if isinstance(c.this, exp.Column) else c.this]
    elif c.args.get("query") is not None:
        if subquery is None or not (t.is_integer or t.name == "character varying"):
            return None
        got = subquery(c.args["query"])
        return None if got is None else _cast(got, t.arrow())
    elif t.is_integer and _as_hidden(c):
        try:  # a long list of integer literals, read as one array (rw_cli.sql.dialect._fill_int_lists)
            return pa.array(c.meta[INT_LIST], pa.string()).cast(pa.int64()).cast(t.arrow())
        except (pa.ArrowInvalid, OverflowError):
            return None  # a constant that does not fit the column type: let DuckDB decide
    else:
        lits = list(c.expressions)
    out = []
    for lit in lits:
        v = _literal(lit, t)
        if v is _NO:
            return None
        out.append(v)
    try:
        return _array(out, t.arrow())
    except (pa.ArrowInvalid, OverflowError, ValueError):
        return None  # a constant that does not fit the column type: let DuckDB decide


def _as_hidden(c: exp.In) -> bool:
    """Whether `c`'s list is still the integer literals the parser hid (and kept in meta)."""
    values = c.meta.get(INT_LIST) if c.meta else None
    exprs = c.expressions
    return bool(values) and len(values) == len(exprs) and all(
        isinstance(e, exp.Literal) and e.this == v for e, v in ((exprs[0], values[0]), (exprs[-1], values[-1])))


def _cast(values: pa.Array, t: pa.DataType) -> pa.Array | None:
    """A subquery's values as keys of type `t`; NULLs match no key. None when they do not
    all fit `t` exactly (the general path compares them as SQL does)."""
    values = values.drop_null()
    if values.type == t:
        return values
    if not ((pa.types.is_integer(values.type) and pa.types.is_integer(t))
            or (pa.types.is_string(values.type) or pa.types.is_large_string(values.type))
            and pa.types.is_string(t)):
        return None
    try:
        return values.cast(t)  # safe: an integer out of range raises
    except (pa.ArrowInvalid, OverflowError):
        return None


_NO = object()


_INT_BITS = {exp.DataType.Type.SMALLINT: 16, exp.DataType.Type.INT: 32, exp.DataType.Type.BIGINT: 64}


def _literal(e: exp.Expression, t):
    while isinstance(e, exp.Paren):
        e = e.this
    if t.name in _TIME_TYPES:
        return _time_literal(e, t.name)
    if t.name == "character varying" and isinstance(e, exp.Cast):
        return _text_cast(e)
    if isinstance(e, exp.Cast) and t.is_integer and e.to.this in _INT_BITS:
        return _cast_integer(e.this, _INT_BITS[e.to.this])  # a bound parameter: CAST('5' AS bigint)
    neg = False
    if isinstance(e, exp.Neg):
        neg, e = True, e.this
    if not isinstance(e, exp.Literal):
        return _NO
    if t.is_integer and not e.is_string:
        try:
            v = int(e.this)
        except ValueError:
            return _NO
        return -v if neg else v
    if t.name == "character varying" and e.is_string and not neg:
        return e.this
    return _NO


_TEXT_TYPES = (exp.DataType.Type.VARCHAR, exp.DataType.Type.TEXT)


def _text_cast(e: exp.Expression):
    """The string of `CAST('x' AS varchar | text)` — a text parameter, as `rw serve` binds a
    driver's — or _NO (a length, `varchar(3)`, would truncate it)."""
    if isinstance(e, exp.Cast) and e.to.this in _TEXT_TYPES and not e.to.expressions:
        inner = e.this
        if isinstance(inner, exp.Literal) and inner.is_string:
            return inner.this
    return _NO


# date and timestamp key columns: their SQL type in a typed literal, the ISO forms read here
_TIME_TYPES = {"date": exp.DataType.Type.DATE, "timestamp without time zone": exp.DataType.Type.TIMESTAMP}
_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_ISO_TIMESTAMP = re.compile(r"\d{4}-\d{2}-\d{2}([ T]\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?)?")


def _time_literal(e: exp.Expression, type_name: str):
    """A date (timestamp) constant in ISO form — `'2024-05-01'`, `TIMESTAMP '2024-05-01
    12:30:00.5'`, a bound parameter `CAST('...' AS timestamp)` — as Python's date (datetime),
    the value the general path's cast gives it; _NO for anything else (PostgreSQL's other
    input forms, a date out of range: the general path reads or refuses them)."""
    if isinstance(e, exp.Cast):
        if e.to.this != _TIME_TYPES[type_name]:
            return _NO
        e = e.this
    if not isinstance(e, exp.Literal) or not e.is_string:
        return _NO
    text = e.this.strip()
    try:
        if type_name == "date":
            return datetime.date.fromisoformat(text) if _ISO_DATE.fullmatch(text) else _NO
        return datetime.datetime.fromisoformat(text) if _ISO_TIMESTAMP.fullmatch(text) else _NO
    except ValueError:
        return _NO


def _cast_integer(e: exp.Expression, bits: int):
    """The value of CAST(literal AS an integer type), or _NO when it is not that simple
    (the general path then casts, and raises for text that is no integer or out of range)."""
    while isinstance(e, exp.Paren):
        e = e.this
    neg = isinstance(e, exp.Neg)
    if neg:
        e = e.this
    if not isinstance(e, exp.Literal):
        return _NO
    text = e.this.strip()
    if not text.lstrip("+-").isdigit() or (neg and not text[:1].isdigit()):
        return _NO
    v = -int(text) if neg else int(text)
    return v if -(1 << (bits - 1)) <= v < (1 << (bits - 1)) else _NO


def fetch(session, rel: RelationCatalog, lists: list[pa.Array], live=None) -> pa.Table:
    """The rows whose pk is in the cross product of `lists` (one array per pk column): at
    the committed epoch, or from `live` (a job's state table: this epoch's writes too)."""
    from rw_cli.stream.builder import relation_schema

    schema = relation_schema(rel)
    return fetch_pks(session, rel, _cross_product([v.cast(schema.field(k).type) for v, k in zip(lists, rel.pk)]),
                     live)


def fetch_pks(session, rel: RelationCatalog, cols: list[pa.Array], live=None) -> pa.Table:
    """The rows of the given pks (one array per pk column, of its type), those that exist:
    at the committed epoch, or from `live` (see `fetch`)."""
    from rw_cli.handler.transaction import read_epoch
    from rw_cli.stream.builder import relation_state_table

    n = len(cols[0]) if cols else 0
    store = session.store
    epoch = read_epoch(session)
    if live is not None:
        rows, found = live.get_rows(cols)  # memtable first, then the store
        if not found.all():
            rows = rows.filter(pa.array(found))
    elif hasattr(store, "multi_get_array"):
        # one batched get at the committed epoch, keys and values kept as Arrow arrays
        table = relation_state_table(_CommittedReads(store, epoch), rel)
        values = store.multi_get_array(table.keys_of_pk(cols, n), epoch)
        rows = table.decode(values.filter(values.is_valid()))
    else:
        table = relation_state_table(_CommittedReads(store, epoch), rel)
        rows, found = table.get_rows(cols)
        if not found.all():
            rows = rows.filter(pa.array(found))
    return pa.Table.from_batches([rows]) if isinstance(rows, pa.RecordBatch) else rows


def _cross_product(lists: list[pa.Array]) -> list[pa.Array]:
    """Every combination of the (distinct) values, in `itertools.product`'s order."""
    sizes = [len(v) for v in lists]
    total = int(np.prod(sizes)) if sizes else 0
    out, inner = [], total
    for v, size in zip(lists, sizes):
        inner //= max(size, 1)
        idx = np.tile(np.repeat(np.arange(size), inner), total // max(size * inner, 1)) if size else \
            np.zeros(0, np.int64)
        out.append(v.take(pa.array(idx, pa.int64())))
    return out


def _array(values: list, t: pa.DataType) -> pa.Array:
    """A small Arrow array; integers go through numpy (pa.array on a list is slow)."""
    if pa.types.is_integer(t):
        return pa.array(np.asarray(values, dtype=np.dtype(str(t))))
    return pa.array(values, type=t)


def _plain_projection(tree: exp.Select, rel: RelationCatalog, n_conjuncts: int) -> list[int] | None:
    """Column indexes when the query is just `SELECT cols | * FROM rel WHERE <pk constraints>`."""
    for key in ("group", "having", "order", "limit", "offset", "distinct", "windows", "qualify", "fetch"):
        if tree.args.get(key):
            return None
    where = tree.args["where"].this
    conjuncts = list(where.flatten()) if isinstance(where, exp.And) else [where]
    if len(conjuncts) != n_conjuncts:
        return None
    alias = tree.args.get("from_") or tree.args.get("from")
    alias = alias.this.alias_or_name
    names = {c.name: i for i, c in enumerate(rel.columns) if not c.hidden}
    out: list[int] = []
    for e in tree.expressions:
        if isinstance(e, exp.Star):
            out.extend(names.values())
        elif isinstance(e, exp.Column) and isinstance(e.this, exp.Star) and e.table in ("", alias):
            out.extend(names.values())
        elif isinstance(e, exp.Column) and e.table in ("", alias) and e.name in names:
            out.append(names[e.name])
        else:
            return None
    return out


def try_point_lookup(session, tree: exp.Expression, plan: tuple | None = None):
    """None when the query is no pk lookup; else the answer `(table, types)` when the looked
    up rows are it, or `{relation id: rows}`: the rows the query reads instead of a snapshot
    of the relation (the caller runs the query over them). `plan`: its `lookup_plan`, when
    the caller made it already."""
    plan = plan or lookup_plan(tree, session.catalog)
    if plan is None:
        return None
    rel, lists, n_conjuncts = plan
    try:
        rows = fetch(session, rel, lists)
    except (pa.ArrowInvalid, OverflowError, ValueError):
        return None  # a constant that does not fit the column type: let DuckDB decide
    cols = _plain_projection(tree, rel, n_conjuncts)
    if cols is not None:
        # the rows are the answer: no DuckDB, no transpiling
        if rows.num_rows > 1:  # in a scan's order, as the general path answers
            from rw_cli.handler.row_order import pk_order

            rows = pk_order(rows, rel)
        table = pa.Table.from_arrays([rows.column(i) for i in cols], names=[rel.columns[i].name for i in cols])
        return table, [rel.columns[i].type for i in cols]
    return {rel.id: rows}
