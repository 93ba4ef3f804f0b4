"""Secondary indexes in batch reads and DML: RisingWave's index selection.

`CREATE INDEX i ON t (email)` keeps t's rows ordered by (email, t's pk). A WHERE on one
relation that binds the first key columns of one of its indexes — `email = 'x'`,
`email IN ('x', 'y')`, `email > 'm'`, `email = 'x' AND id < 10` — reads that key range of
the index (`point_lookup.range_over` over the index's pk), not a snapshot of the relation:
a SELECT whose relation has no snapshot kept, and a DELETE or UPDATE, cost the rows they
touch. The index's rows carry the relation's pk: a relation's rows are the index's own when
it includes every column (the default), else they are looked up by pk. The WHERE still
filters them unless the range is all it says (`exact`).
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

import pyarrow as pa
from sqlglot import exp

from rw_cli.handler.point_lookup import MAX_KEYS, PkRange, fetch_pks, fetch_range, range_over, single_table
from rw_cli.meta.catalog import INDEX, RelationCatalog


@dataclass
class IndexRange:
    """A WHERE's key range over an index of the relation it reads."""
    rel: RelationCatalog  # the relation the query reads
    index: RelationCatalog
    key_range: PkRange  # over the index's pk (its key columns, then the relation's pk)
    wide: bool = False  # as PkRange.wide

    @property
    def exact(self) -> bool:
        return self.key_range.exact

    def read(self, session) -> pa.Table | None:
        """The relation's committed rows in the range (every column, in no order; None: see
        `read_index_range`)."""
        return read_index_range(session, self)


def index_range_plan(tree: exp.Expression, catalog) -> IndexRange | None:
    """The key range of the relation's index that `tree`'s WHERE narrows most (the most key
    columns bound; an exact one first), or None when it narrows none."""
    return key_ranges(tree, catalog)[1]


def key_ranges(tree: exp.Expression, catalog) -> tuple[PkRange | None, IndexRange | None]:
    """(the key range of the relation's pk that `tree`'s WHERE bounds, `range_plan`; the
    index range of `index_range_plan`), the query looked at once for both."""
    got = single_table(tree, catalog, None)
    if got is None:
        return None, None
    return range_over(*got), _index_range(catalog, *got)


def _index_range(catalog, rel: RelationCatalog, alias: str, _names, conjuncts: list) -> IndexRange | None:
    if rel.retention_seconds is not None or rel.ttl_column is not None:
        return None  # rows age out of the relation's reads: its own path knows which
    best, score = None, None
    for index in indexes_of(catalog, rel):
        names = _plain_columns(index, rel)
        if not names or index.columns[index.pk[0]].name not in names:
            continue  # an index on an expression: the WHERE names no column of its key
        plan = range_over(index, alias, names, conjuncts)
        if plan is None:
            continue
        mine = (len(plan.prefix), plan.lower is not None or plan.upper is not None, plan.exact)
        if score is None or mine > score:
            best, score = IndexRange(rel, index, plan), mine
    return best


def key_range_plan(tree: exp.Expression, catalog) -> PkRange | IndexRange | None:
    """The key range a one-relation query reads: of the relation's pk (`range_plan`) or of
    an index on it, whichever `prefers_index` says."""
    own, index = key_ranges(tree, catalog)
    return index if prefers_index(own, index) else own


def prefers_index(own: PkRange | None, index: IndexRange | None) -> bool:
    """Whether to read the index's range rather than the pk's: when it binds more leading
    key columns to values (an index's `email = 'x'` over the pk's `id > 0`); the pk's on a
    tie (no second read of the relation by key)."""
    return index is not None and (own is None or len(index.key_range.prefix) > len(own.prefix))


def indexes_of(catalog, rel: RelationCatalog) -> list[RelationCatalog]:
    """The indexes on `rel` that hold all its rows (not one still being built)."""
    return [r for r in catalog.in_creation_order()
            if r.kind == INDEX and r.dependencies[:1] == [rel.id] and not r.creating]


def _plain_columns(index: RelationCatalog, rel: RelationCatalog) -> dict[str, int]:
    """The index's columns that copy a visible column of the relation, by that column's
    name (-> the index's column position); an expression key is none of them."""
    expressions = _expression_names(index.definition)
    visible = {c.name: c.type for c in rel.columns if not c.hidden}
    return {c.name: i for i, c in enumerate(index.columns)
            if not c.hidden and c.name not in expressions and visible.get(c.name) == c.type}


@functools.lru_cache(maxsize=256)
def _expression_names(definition: str) -> frozenset[str]:
    """The names of the index's expression keys (`lower(b)` is `expr1`), from its CREATE
    INDEX statement."""
    from rw_cli.sql.dialect import parse_statement
    from rw_cli.sql.index_def import index_query

    _, query, _ = index_query(parse_statement(definition))
    return frozenset(e.alias for e in query.expressions if isinstance(e, exp.Alias))


def read_index_range(session, plan: IndexRange, live_index=None, live=None) -> pa.Table | None:
    """The relation's rows whose index key lies in the plan's range (every column of the
    relation, in no order): at the committed epoch, or — given the live state tables of the
    index and the relation (`live_index`, `live`; the index's in step with the relation's)
    — with this epoch's writes. None when the index lacks columns of the relation and the
    rows to look up by key are more than MAX_KEYS (a scan is cheaper)."""
    from rw_cli.handler.transaction import read_epoch
    from rw_cli.stream.builder import relation_state_table

    if live_index is None:
        table = relation_state_table(session.store, plan.index)
        entries = fetch_range(plan.key_range, table, read_epoch(session))
    else:
        entries = fetch_range(plan.key_range, live_index)
    where = _positions(plan.index, plan.rel)
    if all(p is not None for p in where):  # the index holds every column: its rows are the relation's
        return pa.Table.from_arrays([entries.column(p) for p in where], names=[c.name for c in plan.rel.columns])
    if entries.num_rows > MAX_KEYS or any(where[k] is None for k in plan.rel.pk):
        return None  # a point read each: one scan costs less (or no key to read by)
    pk = [entries.column(where[k]).combine_chunks() for k in plan.rel.pk]
    return fetch_pks(session, plan.rel, pk, live)


def _positions(index: RelationCatalog, rel: RelationCatalog) -> list[int | None]:
    """Per column of the relation, the index's column holding its values (None: not held).
    A visible column is the index's of its name. The index's pk ends with the relation's
    stream key: its columns the index does not hold under their names (`_row_id`, or a pk
    column INCLUDE left out) are the index's hidden pk columns, in the same order."""
    plain = _plain_columns(index, rel)
    hidden = [p for p in index.pk if index.columns[p].hidden]
    unnamed = [k for k in rel.stream_key if rel.columns[k].hidden or rel.columns[k].name not in plain]
    out: list[int | None] = []
    for k, c in enumerate(rel.columns):
        if not c.hidden and c.name in plain:
            out.append(plain[c.name])
        elif k in unnamed and len(hidden) == len(unnamed) and index.columns[hidden[unnamed.index(k)]].type == c.type:
            out.append(hidden[unnamed.index(k)])
        else:
            out.append(None)
    return out
