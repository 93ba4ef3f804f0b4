"""rw_cli.sql.search_path: unqualified relation names resolved by the session's search path."""
from __future__ import annotations

import copy

import pytest

from rw_cli.common.types import DataType
from rw_cli.meta.catalog import TABLE, ColumnCatalog, RelationCatalog
from rw_cli.sql.dialect import parse_statement
from rw_cli.sql.search_path import apply_search_path


@pytest.fixture(scope="module")
def schemas_catalog(catalog):
    """The bare catalog (a copy) with schemas s1 (holding `t` and `only1`) and s2 (holding `t`)."""
    catalog = copy.deepcopy(catalog)
    catalog.schemas += ["s1", "s2"]
    for name in ("s1.t", "s1.only1", "s2.t"):
        catalog.add(RelationCatalog(catalog.alloc_id(), name, TABLE, [ColumnCatalog("a", DataType.from_sql("int"))],
                                    [0], user_pk=True))
    return catalog


@pytest.mark.parametrize("sql, path, want", [
    # the first schema of the path with such a relation
    ("select * from t", ["s2", "s1"], "SELECT * FROM s2.t"),
    ("select * from only1 join u on true", ["s2", "s1", "public"], "SELECT * FROM s1.only1 JOIN u ON TRUE"),
    # the default path changes nothing
    ("select * from t", ["public"], "SELECT * FROM t"),
    # no schema of the path has it: as written (a system catalog, or the binder's error)
    ("select * from pg_tables", ["s1"], "SELECT * FROM pg_tables"),
    # written schemas and CTE names stay
    ("with t as (select 1) select * from t", ["s1"], "WITH t AS (SELECT 1) SELECT * FROM t"),
    ("select * from s2.t", ["s1"], "SELECT * FROM s2.t"),
    # a CREATE makes its relation in the first schema of the path, whatever exists elsewhere
    ("create table t (a int)", ["s1", "s2"], "CREATE TABLE s1.t (a INT)"),
    ("create table only1 (a int)", ["s2", "s1"], "CREATE TABLE s2.only1 (a INT)"),
    ("create materialized view m as select * from t", ["s2"], "CREATE MATERIALIZED VIEW s2.m AS SELECT * FROM s2.t"),
    ("drop table t", ["s1", "s2"], "DROP TABLE s1.t"),
    # names that are no relations stay
    ("drop schema t", ["s1"], "DROP SCHEMA t"),
])
def test_apply_search_path(schemas_catalog, sql, path, want):
    tree = apply_search_path(parse_statement(sql), schemas_catalog, path)
    assert tree.sql(dialect="postgres") == want
