"""Batch queries: views, time windows, system catalogs, pk lookups, EXPLAIN, SHOW, time zones."""
from __future__ import annotations

import pytest

import rw_cli
from rw_cli.errors import RwError


@pytest.fixture
def db(tmp_path):
    s = rw_cli.connect(str(tmp_path / "data"))
    s.execute("SET RW_IMPLICIT_FLUSH TO true")
    s.execute("CREATE TABLE t (id int PRIMARY KEY, v int, ts timestamp)")
    s.execute("INSERT INTO t VALUES (1, 10, '2020-01-01 00:10:00'), (2, 20, '2020-01-01 00:40:00'), "
              "(3, NULL, NULL)")
    yield s
    s.close()


def rows(s, sql):
    return s.execute(sql).text_rows()


def test_view_is_expanded_and_follows_its_tables(db):
    db.execute("CREATE VIEW big AS SELECT id, v * 2 AS v2 FROM t WHERE v > 10")
    db.execute("CREATE VIEW big2 (x) AS SELECT v2 + 1 FROM big")
    assert rows(db, "SELECT * FROM big") == [["2", "40"]]
    db.execute("INSERT INTO t VALUES (4, 50, NULL)")
    assert rows(db, "SELECT x FROM big2 ORDER BY x") == [["41"], ["101"]]
    with pytest.raises(RwError, match="depend"):
        db.execute("DROP VIEW big")
    db.execute("DROP VIEW big2")
    db.execute("DROP VIEW big")
    with pytest.raises(RwError, match="does not exist"):
        db.execute("SELECT * FROM big")


def test_view_survives_restart(tmp_path):
    path = str(tmp_path / "data")
    with rw_cli.connect(path) as s:
        s.execute("CREATE VIEW nums AS SELECT i FROM generate_series(1, 3) g(i)")
    with rw_cli.connect(path) as s:
        assert rows(s, "SELECT sum(i) FROM nums") == [["6"]]


def test_tumble_and_hop(db):
    assert rows(db, "SELECT id, window_start, window_end FROM tumble(t, ts, interval '30' minute) "
                    "WHERE ts IS NOT NULL ORDER BY id") == [
        ["1", "2020-01-01 00:00:00", "2020-01-01 00:30:00"],
        ["2", "2020-01-01 00:30:00", "2020-01-01 01:00:00"]]
    assert rows(db, "SELECT id, window_start FROM hop(t, ts, interval '15' minute, interval '30' minute) "
                    "ORDER BY id, window_start") == [
        ["1", "2019-12-31 23:45:00"], ["1", "2020-01-01 00:00:00"],
        ["2", "2020-01-01 00:15:00"], ["2", "2020-01-01 00:30:00"]]


def test_table_functions_in_from(db):
    assert rows(db, "SELECT count(*) FROM t, generate_series(1, 4) g") == [["12"]]
    assert rows(db, "SELECT * FROM unnest(array[3, 1]) ORDER BY 1") == [["1"], ["3"]]
    db.execute("CREATE TABLE n (i int)")
    db.execute("INSERT INTO n SELECT * FROM generate_series(1, 1000)")
    assert rows(db, "SELECT count(*), sum(i) FROM n") == [["1000", "500500"]]


def test_system_catalogs(db):
    db.execute("CREATE MATERIALIZED VIEW m AS SELECT v, count(*) AS c FROM t GROUP BY v")
    db.execute("CREATE VIEW w AS SELECT 1 AS one")
    assert rows(db, "SELECT table_name, table_type FROM information_schema.tables ORDER BY 1") == [
        ["m", "MATERIALIZED VIEW"], ["t", "BASE TABLE"], ["w", "VIEW"]]
    assert rows(db, "SELECT column_name, data_type FROM information_schema.columns "
                    "WHERE table_name = 't' ORDER BY ordinal_position") == [
        ["id", "integer"], ["v", "integer"], ["ts", "timestamp without time zone"]]
    assert rows(db, "SELECT c.relname, c.relkind, n.nspname FROM pg_catalog.pg_class c "
                    "JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace ORDER BY 1") == [
        ["m", "m", "public"], ["t", "r", "public"], ["w", "v", "public"]]
    assert rows(db, "SELECT a.attname, t.typname FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid "
                    "JOIN pg_class c ON c.oid = a.attrelid WHERE c.relname = 't' ORDER BY a.attnum") == [
        ["id", "int4"], ["v", "int4"], ["ts", "timestamp"]]
    assert rows(db, "SELECT indisprimary FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid "
                    "WHERE c.relname = 't'") == [["t"]]


def test_point_lookup_reads_the_store(db, monkeypatch):
    from rw_cli.handler import query

    def no_scan(*a, **k):
        raise AssertionError("a pk lookup must not scan the snapshot")

    monkeypatch.setattr(query, "snapshot", no_scan)
    assert rows(db, "SELECT * FROM t WHERE id = 2") == [["2", "20", "2020-01-01 00:40:00"]]
    assert rows(db, "SELECT v + 1 FROM t WHERE id = 1 AND v > 5") == [["11"]]
    assert rows(db, "SELECT v FROM t WHERE id IN (3, 1, 99) ORDER BY v NULLS FIRST") == [[None], ["10"]]
    assert rows(db, "SELECT * FROM t WHERE id = 42") == []


def test_point_lookup_sees_committed_epoch_only(tmp_path):
    s = rw_cli.connect(str(tmp_path / "data"))
    s.execute("CREATE TABLE k (id int PRIMARY KEY, v int)")
    s.execute("INSERT INTO k VALUES (1, 1)")
    assert rows(s, "SELECT v FROM k WHERE id = 1") == rows(s, "SELECT v FROM k WHERE id + 0 = 1")
    s.execute("FLUSH")
    assert rows(s, "SELECT v FROM k WHERE id = 1") == [["1"]]
    s.close()


def test_explain_select(db):
    plan = [r[0] for r in rows(db, "EXPLAIN SELECT * FROM t WHERE id = 1")]
    assert plan[0].startswith("BatchLookup { table: t, pk: [id]")
    plan = [r[0] for r in rows(db, "EXPLAIN SELECT v, count(*) FROM t GROUP BY v")]
    assert plan[0].startswith("BatchDuckDB")
    assert any("BatchScan { table: t" in line for line in plan)


def test_show_create_and_settings(db):
    db.execute("CREATE VIEW w AS SELECT id FROM t")
    assert rows(db, "SHOW CREATE VIEW w") == [["public.w", "CREATE VIEW w AS SELECT id FROM t"]]
    assert rows(db, "SHOW CREATE TABLE t")[0][1].startswith("CREATE TABLE t (id INT")
    assert rows(db, "SHOW VIEWS") == [["public.w"]]
    assert rows(db, "SHOW server_version") == [["13.14.0"]]
    assert rows(db, "SELECT current_setting('server_version_num')") == [["130014"]]


def test_timestamptz_in_session_time_zone(db):
    db.execute("SET TimeZone = 'Asia/Shanghai'")
    assert rows(db, "SELECT '2024-01-01 00:00:00+00'::timestamptz") == [["2024-01-01 08:00:00+08:00"]]
    db.execute("SET TimeZone = 'UTC'")
    assert rows(db, "SELECT '2024-01-01 00:00:00+00'::timestamptz") == [["2024-01-01 00:00:00+00:00"]]


@pytest.mark.parametrize("sql, expected", [
    ("SELECT 7 / 2, -7 / 2, 7 % -3", [["3", "-3", "1"]]),
    ("SELECT round(2.5), round(2.5::float8), round(-0.5)", [["3", "2", "-1"]]),
    ("SELECT 1e-6, 1.5e3", [["0.000001", "1500"]]),
    ("SELECT interval '-1 year -2 months +3 days', 'P1Y2M3DT4H5M6S'::interval",
     [["-1 years -2 mons +3 days", "1 year 2 mons 3 days 04:05:06"]]),
    ("SELECT encode('\\xc3b1', 'hex'), decode('MTIzAAE=', 'base64')", [["c3b1", "\\x3132330001"]]),
    ("SELECT ARRAY['a b', NULL, 'c'], string_to_array('a,b', ',')", [['{"a b",NULL,c}', "{a,b}"]]),
    ("SELECT '{\"b\": 1, \"a\": [1, 2]}'::jsonb", [['{"a": [1, 2], "b": 1}']]),
    ("SELECT concat(1, true, 2.50, NULL)", [["1t2.50"]]),
    ("SELECT substring('hello', -1, 3), to_hex(-1)", [["h", "ffffffff"]]),
    ("SELECT ' TRUE '::boolean, booleq(true, false)", [["t", "f"]]),
])
def test_postgres_semantics(db, sql, expected):
    assert rows(db, sql) == expected


@pytest.mark.parametrize("sql", [
    "SELECT 1 / 0", "SELECT 1.0 / 0", "SELECT 1.5::float8 / 0", "SELECT 5 % 0",
    "SELECT 2147483647 + 1", "SELECT 'abc'::int", "SELECT 'maybe'::boolean",
    "SELECT date_trunc('s', TIMESTAMP '2020-01-01 00:00:00')",
])
def test_postgres_errors(db, sql):
    with pytest.raises(RwError):
        db.execute(sql)


def test_psql_describe_queries(db):
    """The first two queries psql's `\\d t` sends."""
    found = rows(db, "SELECT c.oid, n.nspname, c.relname FROM pg_catalog.pg_class c "
                     "LEFT JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace "
                     "WHERE c.relname OPERATOR(pg_catalog.~) '^(t)$' COLLATE pg_catalog.default "
                     "AND pg_catalog.pg_table_is_visible(c.oid) ORDER BY 2, 3")
    assert [r[1:] for r in found] == [["public", "t"]]
    oid = found[0][0]
    assert rows(db, "SELECT a.attname, pg_catalog.format_type(a.atttypid, a.atttypmod), a.attnotnull "
                    f"FROM pg_catalog.pg_attribute a WHERE a.attrelid = '{oid}' AND a.attnum > 0 "
                    "AND NOT a.attisdropped ORDER BY a.attnum") == [
        ["id", "integer", "t"], ["v", "integer", "f"], ["ts", "timestamp without time zone", "f"]]
