"""Primary-key lookups answered from the store instead of a snapshot scan.

`SELECT ... FROM rel WHERE pk1 = c1 [AND pk2 IN (c2, c3)] [AND other predicates] ...` on one
table or materialized view: every pk column is bound to constants, so the rows are fetched
with `StateTable.get_rows` (one batched multi-get at the committed epoch), and the query runs
on DuckDB over just those rows. Anything else returns None and takes the general path.
"""
from __future__ import annotations

import itertools

import pyarrow as pa
from sqlglot import exp

from rw_cli.meta.catalog import MATERIALIZED_VIEW, RW_TIMESTAMP, TABLE, RelationCatalog
from rw_cli.sql.walk import nodes

MAX_KEYS = 4096


class _CommittedReads:
    """The store as seen by a batch read: point gets at the committed epoch."""

    def __init__(self, store):
        self.store = store

    def multi_get(self, keys, epoch):
        return self.store.multi_get(keys, self.store.committed_epoch)


def lookup_plan(tree: exp.Expression, catalog) -> tuple[RelationCatalog, list[list], int] | None:
    """(relation, one list of constants per pk column, number of pk constraints) when `tree`
    is a pk lookup."""
    if not isinstance(tree, exp.Select) or any(c.name == RW_TIMESTAMP for c in tree.find_all(exp.Column)):
        return None  # a lookup returns no write times
    from_ = tree.args.get("from_") or tree.args.get("from")
    if from_ is None or tree.args.get("joins") or tree.args.get("with") or tree.args.get("laterals"):
        return None
    src = from_.this
    if not isinstance(src, exp.Table) or not isinstance(src.this, exp.Identifier):
        return None
    if src.text("db") not in ("", "public"):
        return None
    rel = catalog.get(src.name)
    if rel is None or rel.kind not in (TABLE, MATERIALIZED_VIEW) or not rel.pk:
        return None
    if len(nodes(tree, exp.Table)) != 1:
        return None
    where = tree.args.get("where")
    if where is None:
        return None
    alias = src.alias_or_name
    names = {c.name: i for i, c in enumerate(rel.columns) if not c.hidden}
    values: dict[int, list] = {}
    used = 0
    cond = where.this
    conjuncts = list(cond.flatten()) if isinstance(cond, exp.And) else [cond]
    for c in conjuncts:
        got = _constraint(c, alias, names, rel)
        if got is None:
            continue
        idx, vals = got
        used += 1
        if idx in values:
            vals = [v for v in values[idx] if v in vals]
        values[idx] = vals
    if any(k not in values for k in rel.pk):
        return None
    lists = [values[k] for k in rel.pk]
    n = 1
    for v in lists:
        n *= len(v)
    if n > MAX_KEYS:
        return None
    return rel, lists, used


def _constraint(c: exp.Expression, alias: str, names: dict[str, int], rel) -> tuple[int, list] | None:
    if isinstance(c, exp.Paren):
        c = c.unnest()
    if isinstance(c, exp.EQ):
        col, lit = c.this, c.expression
        if not isinstance(col, exp.Column):
            col, lit = lit, col
        cols, lits = [col], [lit]
    elif isinstance(c, exp.In) and not c.args.get("query") and not c.args.get("unnest"):
        cols, lits = [c.this], list(c.expressions)
    else:
        return None
    col = cols[0]
    if not isinstance(col, exp.Column) or (col.table and col.table != alias) or col.name not in names:
        return None
    idx = names[col.name]
    t = rel.columns[idx].type
    out = []
    for lit in lits:
        v = _literal(lit, t)
        if v is _NO:
            return None
        out.append(v)
    return idx, out


_NO = object()


def _literal(e: exp.Expression, t):
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


def fetch(session, rel: RelationCatalog, lists: list[list]) -> pa.Table:
    from rw_cli.stream.builder import relation_schema
    from rw_cli.store.state_table import StateTable

    schema = relation_schema(rel)
    table = StateTable(_CommittedReads(session.store), rel.id, schema, list(rel.pk))
    keys = list(itertools.product(*lists)) if lists else []
    keys = list(dict.fromkeys(keys))
    pk_types = [schema.field(k).type for k in rel.pk]
    cols = [_array([k[j] for k in keys], pk_types[j]) for j in range(len(rel.pk))]
    store = session.store
    if hasattr(store, "multi_get_array"):
        # one batched get at the committed epoch, keys and values kept as Arrow arrays
        encoded = table.keys_of_pk(cols, len(keys))
        values = store.multi_get_array(encoded, store.committed_epoch)
        present = values.filter(values.is_valid())
        rows = table.decode(present)
    else:
        rows, found = table.get_rows(cols)
        if not found.all():
            rows = rows.filter(pa.array(found))
    return pa.Table.from_batches([rows]) if isinstance(rows, pa.RecordBatch) else rows


def _array(values: list, t: pa.DataType) -> pa.Array:
    """A small Arrow array; integers go through numpy (pa.array on a list is slow)."""
    import numpy as np

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


def try_point_lookup(session, tree: exp.Expression):
    """None when the query is no pk lookup; else the answer `(table, types)` when the looked
    up rows are it, or `{relation id: rows}`: the rows the query reads instead of a snapshot
    of the relation (the caller runs the query over them)."""
    plan = lookup_plan(tree, session.catalog)
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
