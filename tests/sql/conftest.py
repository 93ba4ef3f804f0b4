"""A bare catalog for the sql layer's unit tests: relations created directly as catalog
objects (no store, no Session, no data directory), so binding and planning run alone."""
from __future__ import annotations

import pytest

from rw_cli.common.types import BIGINT, DataType
from rw_cli.meta.catalog import (MATERIALIZED_VIEW, ROW_ID, SOURCE, TABLE, VIEW, Catalog, ColumnCatalog,
                                 RelationCatalog)

# name -> (kind, [(column, type)], primary key names or None for a hidden _row_id, options)
RELATIONS = [
    ("t", TABLE, [("k", "int"), ("v", "int"), ("s", "varchar")], None, {}),
    ("u", TABLE, [("id", "int"), ("k", "int"), ("w", "int")], ["id"], {}),
    ("ao", TABLE, [("k", "int"), ("v", "int"), ("ts", "timestamp")], None, {"append_only": True}),
    ("aopk", TABLE, [("id", "int"), ("k", "int"), ("v", "int")], ["id"],
     {"append_only": True, "on_conflict": "do nothing"}),
    ("src", SOURCE, [("auction", "bigint"), ("bidder", "bigint"), ("price", "bigint"),
                     ("date_time", "timestamp")], None, {"append_only": True}),
    ("n", TABLE, [("i2", "smallint"), ("i4", "int"), ("i8", "bigint"), ("r", "real"), ("d", "double precision"),
                  ("num", "numeric"), ("b", "boolean"), ("txt", "varchar"), ("dt", "date"), ("tm", "time"),
                  ("ts", "timestamp"), ("tstz", "timestamptz"), ("iv", "interval"), ("j", "jsonb"),
                  ("arr", "int[]")], None, {}),
    ("mv", MATERIALIZED_VIEW, [("k", "int"), ("total", "bigint")], ["k"], {}),
    ("vw", VIEW, [("k", "int"), ("v", "int")], [], {"definition": "create view vw as select k, v from t where v > 0"}),
    ("pk2", TABLE, [("a", "int"), ("b", "varchar"), ("c", "int")], ["a", "b"], {}),
]

# SQL functions (CREATE FUNCTION ... LANGUAGE SQL), as the catalog records them
FUNCTIONS = {
    "add_one": {"args": [[None, "integer"]], "returns": "integer", "body": "select $1 + 1"},
    "full_name": {"args": [["a", "character varying"], ["b", "character varying"]], "returns": "character varying",
                  "body": "a || ' ' || b"},
    "twice_plus_two": {"args": [["x", "integer"]], "returns": "bigint", "body": "select add_one(x) * 2"},
}


def bare_catalog() -> Catalog:
    """The relations above, with ids 1, 2, ... in that order (fixtures name `__rel_<id>`)."""
    catalog = Catalog()
    for name, kind, cols, pk, options in RELATIONS:
        columns = [ColumnCatalog(n, DataType.from_sql(t)) for n, t in cols]
        if pk is None:
            columns.append(ColumnCatalog(ROW_ID, BIGINT, hidden=True))
            keys = [len(columns) - 1]
        else:
            keys = [[n for n, _ in cols].index(p) for p in pk]
        rel = RelationCatalog(catalog.alloc_id(), name, kind, columns, keys,
                              user_pk=bool(pk) and kind == TABLE, **options)
        catalog.add(rel)
    catalog.functions = {name: dict(record) for name, record in FUNCTIONS.items()}
    return catalog


@pytest.fixture(scope="session")
def catalog() -> Catalog:
    return bare_catalog()
