"""System catalogs built from a bare catalog (what psql and drivers read)."""
from __future__ import annotations

import pyarrow.compute as pc
import pytest

from rw_cli.sql.pg_catalog import system_table


def rows(catalog, schema, name, *columns):
    return system_table(schema, name, catalog).select(list(columns)).to_pylist()


def test_tables_by_kind(catalog):
    tables = [r["tablename"] for r in rows(catalog, None, "pg_tables", "tablename")]
    assert tables == ["t", "u", "ao", "aopk", "n", "pk2"]  # no source, view or MV
    assert rows(catalog, None, "pg_matviews", "matviewname") == [{"matviewname": "mv"}]
    assert rows(catalog, None, "pg_views", "viewname") == [{"viewname": "vw"}]
    kinds = {r["table_name"]: r["table_type"] for r in rows(catalog, "information_schema", "tables",
                                                            "table_name", "table_type")}
    assert (kinds["t"], kinds["mv"], kinds["vw"]) == ("BASE TABLE", "MATERIALIZED VIEW", "VIEW")


def test_columns_are_the_visible_ones_in_order(catalog):
    cols = system_table("information_schema", "columns", catalog)
    of_t = cols.filter(pc.equal(cols["table_name"], "t")).select(["column_name", "data_type", "ordinal_position"])
    assert of_t.to_pylist() == [
        {"column_name": "k", "data_type": "integer", "ordinal_position": 1},
        {"column_name": "v", "data_type": "integer", "ordinal_position": 2},
        {"column_name": "s", "data_type": "character varying", "ordinal_position": 3},
    ]
    attrs = system_table(None, "pg_attribute", catalog)
    assert "_row_id" not in attrs["attname"].to_pylist()


def test_primary_keys_are_indexes(catalog):
    index = {r["indrelid"]: r["indkey"] for r in rows(catalog, None, "pg_index", "indrelid", "indkey")}
    assert index == {2: [1], 4: [1], 9: [1, 2]}  # u(id), aopk(id), pk2(a, b): 1-based attribute numbers


def test_types_and_namespaces(catalog):
    names = set(system_table(None, "pg_type", catalog)["typname"].to_pylist())
    assert {"int4", "int8", "varchar", "numeric", "timestamptz", "interval", "jsonb", "bool"} <= names
    namespaces = set(system_table(None, "pg_namespace", catalog)["nspname"].to_pylist())
    assert {"public", "pg_catalog", "information_schema"} <= namespaces


@pytest.mark.parametrize("schema,name", [(None, "pg_nope"), ("information_schema", "nope")])
def test_unknown_system_relation(catalog, schema, name):
    assert system_table(schema, name, catalog) is None
