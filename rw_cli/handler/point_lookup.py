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

from collections.abc import Callable

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


def lookup_plan(tree: exp.Expression, catalog, subquery: Subquery | None = None,
                max_keys: int = MAX_KEYS) -> tuple[RelationCatalog, list[pa.Array], int] | None:
    """(relation, one array of constants per pk column, number of pk constraints) when `tree`
    is a pk lookup of at most `max_keys` keys. With `subquery`, `pk IN (SELECT ...)` binds
    the pk too (its values computed by `subquery`)."""
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
    alias = src.alias_or_name
    names = {c.name: i for i, c in enumerate(rel.columns) if not c.hidden}
    pk = set(rel.pk)
    cond = where.this
    conjuncts = list(cond.flatten()) if isinstance(cond, exp.And) else [cond]
    found = [(c, _target(c, alias, names)) for c in conjuncts]
    if not pk <= {i for _, i in found}:
        return None  # checked first: a subquery runs only when every pk column is bound
    values: dict[int, pa.Array] = {}
    used = 0
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
    from rw_cli.handler.transaction import read_epoch
    from rw_cli.stream.builder import relation_schema
    from rw_cli.store.state_table import StateTable

    schema = relation_schema(rel)
    cols = _cross_product([v.cast(schema.field(k).type) for v, k in zip(lists, rel.pk)])
    n = len(cols[0]) if cols else 0
    store = session.store
    epoch = read_epoch(session)
    if live is not None:
        rows, found = live.get_rows(cols)  # memtable first, then the store
        if not found.all():
            rows = rows.filter(pa.array(found))
    elif hasattr(store, "multi_get_array"):
        # one batched get at the committed epoch, keys and values kept as Arrow arrays
        table = StateTable(_CommittedReads(store, epoch), rel.id, schema, list(rel.pk))
        values = store.multi_get_array(table.keys_of_pk(cols, n), epoch)
        rows = table.decode(values.filter(values.is_valid()))
    else:
        table = StateTable(_CommittedReads(store, epoch), rel.id, schema, list(rel.pk))
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
        if len(lists) == 1 and len(lists[0]) > 1 and rows.num_rows > 1:
            return None  # IN (...) keeps its own row order rules; let DuckDB answer
        table = pa.Table.from_arrays([rows.column(i) for i in cols], names=[rel.columns[i].name for i in cols])
        return table, [rel.columns[i].type for i in cols]
    return {rel.id: rows}
