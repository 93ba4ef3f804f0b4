"""pg_relation_size, pg_table_size, pg_indexes_size, pg_total_relation_size (of a relation named
by a literal, or of an expression of oids: psql's \\dt+) and pg_database_size: how many bytes a
relation takes in the state store, answered when a query is bound (as the catalog functions
of rw_cli.sql.catalog_functions are), from the store's metadata without reading the data.

A relation's size is its share of the SSTs and append-log segments holding its rows, plus what
the shared buffer holds of it (rw_cli.store.hummock.HummockStorage.estimate_size): RisingWave
answers from its per-table statistics of the same, so a table with rows has a size > 0 and one
without has none. Only the main fork exists: `fsm`, `vm` and `init` are empty.
"""
from __future__ import annotations

from sqlglot import exp

from rw_cli.errors import BindError
from rw_cli.meta.catalog import INDEX, Catalog, RelationCatalog
from rw_cli.sql.catalog_functions import relation_named
from rw_cli.sql.output_name import replace_call
from rw_cli.sql.pg_catalog import GLOBAL_TABLESPACE_OID

SIZE_FUNCTIONS = frozenset({"pg_relation_size", "pg_table_size", "pg_indexes_size", "pg_total_relation_size",
                            "pg_database_size", "pg_tablespace_size"})
_FORKS = ("main", "fsm", "vm", "init")


def answer_size_calls(calls: list[exp.Anonymous], catalog: Catalog, store) -> None:
    """Replace each size call of literal arguments among `calls` by its answer (a bigint), in
    place; a call over columns is left as written (and fails as an unknown function)."""
    for call in calls:
        name = call.name.lower()
        if name not in SIZE_FUNCTIONS or not call.expressions:
            continue
        args = call.expressions
        if name in ("pg_database_size", "pg_tablespace_size"):
            if len(args) == 1:  # one database in one tablespace (pg_default) holds every relation
                total = sum(_size(store, r) for r in catalog.relations.values())
                ifs = [exp.If(this=exp.Is(this=args[0].copy(), expression=exp.Null()), true=exp.cast(exp.Null(), "BIGINT"))]
                if name == "pg_tablespace_size":  # pg_global holds nothing of rw's
                    ifs.append(exp.If(this=exp.In(this=exp.cast(args[0].copy(), "VARCHAR"), expressions=[
                        exp.Literal.string("pg_global"), exp.Literal.string(str(GLOBAL_TABLESPACE_OID))]),
                        true=exp.cast(exp.Literal.number(0), "BIGINT")))
                replace_call(call, exp.Case(ifs=ifs, default=exp.cast(exp.Literal.number(total), "BIGINT")))
            continue
        if not all(isinstance(a, exp.Literal) and a.is_string for a in args):
            if len(args) == 1:
                replace_call(call, _by_oid(name, args[0], catalog, store))  # psql's \dt+: pg_table_size(c.oid)
            continue
        if len(args) > (2 if name == "pg_relation_size" else 1):
            continue  # no such signature: the function lookup says so
        rel = relation_named(catalog, args[0].this)
        fork = args[1].this if len(args) > 1 else "main"
        if fork not in _FORKS:
            raise BindError(f"invalid fork name: {fork}",
                            hint='Valid fork names are "main", "fsm", "vm", and "init".')
        size = 0 if fork != "main" else _size_of(name, catalog, store, rel)
        replace_call(call, exp.cast(exp.Literal.number(size), "BIGINT"))


def _size_of(name: str, catalog: Catalog, store, rel: RelationCatalog) -> int:
    if name == "pg_indexes_size":
        return sum(_size(store, i) for i in _indexes(catalog, rel))
    if name == "pg_total_relation_size":
        return _size(store, rel) + sum(_size(store, i) for i in _indexes(catalog, rel))
    return _size(store, rel)


def _by_oid(name: str, arg: exp.Expression, catalog: Catalog, store) -> exp.Expression:
    """The size call over an expression of relation oids: each relation's size by its oid,
    NULL for an oid no relation has (as PostgreSQL answers a dropped one)."""
    ifs = [exp.If(this=exp.EQ(this=exp.cast(arg.copy(), "BIGINT"), expression=exp.Literal.number(rel.id)),
                  true=exp.Literal.number(_size_of(name, catalog, store, rel)))
           for rel in catalog.relations.values()]
    if not ifs:
        return exp.cast(exp.Null(), "BIGINT")
    return exp.cast(exp.Case(ifs=ifs), "BIGINT")


def _indexes(catalog: Catalog, rel: RelationCatalog) -> list[RelationCatalog]:
    """The indexes on `rel` (an index depends on its table first)."""
    return [r for r in catalog.relations.values() if r.kind == INDEX and r.dependencies[:1] == [rel.id]]


def _size(store, rel: RelationCatalog) -> int:
    """Bytes of `rel`'s rows; 0 for a relation with no storage (a view, a source) or a store
    that keeps no such metadata."""
    estimate = getattr(store, "estimate_size", None)
    return estimate(rel.id) if estimate is not None else 0
