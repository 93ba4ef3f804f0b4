"""Secondary indexes in batch reads and DML (issue 21): a WHERE binding the first key
columns of an index on the relation reads that key range of the index, not a snapshot of the
relation — for DELETE and UPDATE (this epoch's writes included) and for a SELECT whose
relation has no snapshot kept. Answers are DuckDB's (DML) or the snapshot path's (SELECT)."""
from __future__ import annotations

import pytest

import rw_cli
from duckdb_twin import sorted_rows as _rows, twins
from rw_cli.handler import index_lookup, query

MV = "SELECT g, count(*) AS n, sum(v) AS sv, max(s) AS ms FROM t GROUP BY g"
INDEXES = ["CREATE INDEX ig ON t (g)",  # every column: the index's rows are the table's
           "CREATE INDEX iv ON t (v) INCLUDE (g)",  # not s: the rows are looked up by pk
           "CREATE INDEX isg ON t (s, g)",
           "CREATE INDEX ie ON t (lower(s))"]  # an expression: no WHERE names its key

SCENARIOS = {
    "eq": ["DELETE FROM t WHERE g = 1", "UPDATE t SET v = v + 1 WHERE g = 2 AND k < 6",
           "DELETE FROM t WHERE g = 7"],
    "in_list": ["DELETE FROM t WHERE g IN (0, 2) AND v > 50", "UPDATE t SET s = 'zz' WHERE s IN ('s1', 's4', 'nope')"],
    "range": ["DELETE FROM t WHERE v >= 60", "UPDATE t SET g = 5 WHERE v < 25 AND v > 10",
              "UPDATE t SET v = 0 WHERE v BETWEEN 30 AND 40"],
    "prefix_and_range": ["DELETE FROM t WHERE s = 's3' AND g >= 0", "UPDATE t SET v = -1 WHERE s = 's5' AND g < 2"],
    "moves_the_key": ["UPDATE t SET g = g + 10 WHERE g = 1", "DELETE FROM t WHERE g = 11",
                      "UPDATE t SET v = 1 WHERE g = 10"],
    "same_epoch_writes": ["INSERT INTO t VALUES (20, 1, 5, 'a'), (21, 1, 6, 'b')", "DELETE FROM t WHERE g = 1 AND v = 5",
                          "UPDATE t SET v = 7 WHERE g = 1 AND s = 'b'", "INSERT INTO t VALUES (22, 1, 8, 'c')",
                          "DELETE FROM t WHERE v = 7", "UPDATE t SET s = 'x' WHERE s = 'c'"],
    "nulls": ["INSERT INTO t VALUES (30, NULL, NULL, NULL), (31, 1, NULL, 'n')", "DELETE FROM t WHERE g = NULL",
              "UPDATE t SET v = 3 WHERE v IS NULL", "DELETE FROM t WHERE s < 's3'", "UPDATE t SET v = 4 WHERE g IS NULL",
              "DELETE FROM t WHERE s = 'n' AND g IS NULL", "DELETE FROM t WHERE s IS NULL AND g IS NULL"],
}


@pytest.fixture(params=["pk", "no_pk"])
def pair(request, tmp_path):
    key = "k INT PRIMARY KEY" if request.param == "pk" else "k INT"
    s, con = twins(str(tmp_path / "d"), [
        f"CREATE TABLE t ({key}, g INT, v INT, s VARCHAR)",
        "INSERT INTO t VALUES " + ", ".join(f"({k}, {k % 3}, {k * 10}, 's{k}')" for k in range(1, 9))])
    s.execute("FLUSH")
    for sql in INDEXES:
        s.execute(sql)
    s.execute(f"CREATE MATERIALIZED VIEW m AS {MV}")
    yield s, con
    s.close()
    con.close()


@pytest.fixture
def few_keys(monkeypatch):
    """MAX_KEYS of 10: a range of more rows is "many" (looked up by key no more, or wide)."""
    from rw_cli.handler import point_lookup

    for module in (index_lookup, point_lookup):
        monkeypatch.setattr(module, "MAX_KEYS", 10)


@pytest.fixture
def scans(monkeypatch):
    """The relations whose whole snapshot was read."""
    seen: list[str] = []
    real = query.snapshot
    monkeypatch.setattr(query, "snapshot", lambda session, rel, *a, **k: seen.append(rel.name) or
                        real(session, rel, *a, **k))
    return seen


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_dml_through_an_index_matches_duckdb(pair, scans, name):
    s, con = pair
    for sql in SCENARIOS[name]:
        got = s.execute(sql).status
        want = con.execute(sql).fetchall()
        if sql.startswith(("DELETE", "UPDATE")):
            assert got.split()[-1] == str(want[0][0]), sql
    # every WHERE bound an index's key (`IS NULL` too), but `g = NULL`: the general path
    assert scans.count("t") == (1 if name == "nulls" else 0)
    s.execute("FLUSH")
    assert _rows(s, "SELECT * FROM t") == _rows(con, "SELECT * FROM t")
    assert _rows(s, "SELECT * FROM m") == _rows(con, MV)
    for index in ("ig", "iv", "isg"):  # each index still holds exactly the table's rows
        assert _rows(s, f"SELECT * FROM {index}") == _rows(s, f"SELECT {_columns(s, index)} FROM t")


def _columns(s, index: str) -> str:
    rel = s.catalog.get(index)
    return ", ".join(c.name for c in rel.columns if not c.hidden)


def test_a_predicate_no_index_starts_with_reads_a_snapshot(pair, scans):
    s, con = pair
    for sql in ["DELETE FROM t WHERE lower(s) = 's1'", "UPDATE t SET v = 0 WHERE g + 0 = 2"]:
        assert s.execute(sql).status.split()[-1] == str(con.execute(sql).fetchall()[0][0])
    assert scans.count("t") == 2


def test_select_reads_the_index_range_where_no_snapshot_is_kept(tmp_path, scans, monkeypatch):
    s = rw_cli.connect(str(tmp_path / "d"))
    s.execute("CREATE TABLE t (id BIGINT PRIMARY KEY, g INT, name VARCHAR, v INT)")
    s.execute("INSERT INTO t SELECT i, i % 50, 'n' || (i % 700), i * 3 FROM generate_series(1, 20000) AS x(i); FLUSH")
    s.execute("CREATE INDEX by_name ON t (name)")
    s.execute("CREATE INDEX by_g ON t (g) INCLUDE (v)")
    s.execute("CREATE MATERIALIZED VIEW m AS SELECT name, g, count(*) AS n FROM t GROUP BY name, g")
    s.execute("CREATE INDEX m_by_g ON m (g)")
    queries = ["SELECT * FROM t WHERE name = 'n7'", "SELECT id, v FROM t WHERE name IN ('n1', 'n2') AND id < 3000",
               "SELECT count(*), sum(v) FROM t WHERE g = 3", "SELECT id FROM t WHERE g >= 48 ORDER BY id DESC LIMIT 4",
               "SELECT name FROM t WHERE name > 'n698' GROUP BY name", "SELECT * FROM m WHERE g = 7 AND n > 0",
               "SELECT * FROM t AS x WHERE x.name = 'n9' AND x.g = 9"]
    s.execute("INSERT INTO t VALUES (20001, 3, 'n7', 1); FLUSH")  # no snapshot of t or m is kept now
    got = [s.execute(q).fetchall() for q in queries]
    assert scans == []
    monkeypatch.setattr(index_lookup, "indexes_of", lambda catalog, rel: [])
    want = [s.execute(q.replace(" ", "  ", 1)).fetchall() for q in queries]  # (another text: bound anew)
    assert scans  # (the general path did read snapshots)
    assert got == want
    assert len(got[0]) == 30 and got[0][-1] == (20001, 3, "n7", 1)
    s.close()


def test_a_dropped_index_is_not_read(tmp_path):
    s = rw_cli.connect(str(tmp_path / "d"))
    s.execute("CREATE TABLE t (a INT, b VARCHAR)")
    s.execute("INSERT INTO t VALUES (1, 'x'), (2, 'y'), (3, 'x'); FLUSH")
    s.execute("CREATE INDEX i ON t (b)")
    q = "SELECT a FROM t WHERE b = 'x' ORDER BY a"
    assert s.execute(q).fetchall() == [(1,), (3,)]
    s.execute("DROP INDEX i")
    s.execute("INSERT INTO t VALUES (4, 'x'); FLUSH")
    assert s.execute(q).fetchall() == [(1,), (3,), (4,)]
    assert s.execute("DELETE FROM t WHERE b = 'x'").status == "DELETE 3"
    s.close()


def test_plan_picks_the_index_whose_key_the_where_binds_most(tmp_path):
    from rw_cli.sql.dialect import parse_statement

    s = rw_cli.connect(str(tmp_path / "d"))
    s.execute("CREATE TABLE t (a INT, b INT, c VARCHAR)")
    for sql in ["CREATE INDEX ia ON t (a)", "CREATE INDEX iab ON t (a, b)", "CREATE INDEX ic ON t (lower(c))"]:
        s.execute(sql)

    def plan(where: str):
        p = index_lookup.index_range_plan(parse_statement(f"SELECT * FROM t WHERE {where}"), s.catalog)
        return None if p is None else (p.index.name, len(p.key_range.prefix), p.exact)
    assert plan("a = 1") == ("ia", 1, True)
    assert plan("a = 1 AND b = 2") == ("iab", 2, True)
    assert plan("a IN (1, 2) AND b > 2") == ("iab", 1, True)
    assert plan("a = 1 AND c = 'x'") == ("ia", 1, False)
    assert plan("b = 2") is None and plan("c = 'x'") is None and plan("a + 1 = 2") is None
    s.close()


def test_an_index_without_every_column_is_read_only_for_few_rows(tmp_path, scans, few_keys):
    """The relation's other columns are looked up by pk, one point read each: past
    MAX_KEYS rows one scan of the relation costs less, and answers the same."""
    s = rw_cli.connect(str(tmp_path / "d"))
    s.execute("CREATE TABLE t (id INT PRIMARY KEY, g INT, v INT)")
    s.execute("INSERT INTO t SELECT i, i % 2, i FROM generate_series(1, 40) AS x(i); FLUSH")
    s.execute("CREATE INDEX ig ON t (g) INCLUDE (id)")
    s.execute("INSERT INTO t VALUES (41, 5, 41); FLUSH")
    assert s.execute("SELECT sum(v) FROM t WHERE g = 5").fetchall() == [(41,)]
    assert scans == []
    assert s.execute("SELECT sum(v) FROM t WHERE g = 1").fetchall() == [(400,)]  # 20 rows: a scan
    assert scans == ["t"]
    assert s.execute("DELETE FROM t WHERE g = 0").status == "DELETE 20"
    assert s.execute("DELETE FROM t WHERE g = 5").status == "DELETE 1"
    assert scans == ["t", "t"]
    s.close()


def test_an_index_is_distributed_by_its_key_and_read_one_range_a_key(tmp_path, monkeypatch):
    """As RisingWave distributes an index by its key columns (or its DISTRIBUTED BY prefix),
    a key's rows lie in one vnode: `name = 'x'` reads one key range, not one per vnode. The
    layout is recorded in the catalog, so a reopened directory reads it the same way."""
    from rw_cli.store.state_table import StateTable

    path = str(tmp_path / "d")
    s = rw_cli.connect(path)
    s.execute("CREATE TABLE t (id INT PRIMARY KEY, name VARCHAR, g INT)")
    s.execute("INSERT INTO t SELECT i, 'n' || (i % 30), i % 4 FROM generate_series(1, 3000) AS x(i); FLUSH")
    s.execute("CREATE INDEX by_name ON t (name)")
    s.execute("CREATE INDEX by_gn ON t (g, name) DISTRIBUTED BY (g)")
    assert s.catalog.get("by_name").dist_key == [0] and s.catalog.get("by_gn").dist_key == [0]
    s.close()
    ranges = []  # the key ranges each read of a range takes
    real = StateTable._read_ranges
    monkeypatch.setattr(StateTable, "_read_ranges", lambda self, starts, ends, epoch: ranges.append(
        len(starts)) or real(self, starts, ends, epoch))
    s = rw_cli.connect(path)
    s.execute("INSERT INTO t VALUES (3001, 'n7', 1); FLUSH")
    assert s.execute("SELECT count(*) FROM t WHERE name = 'n7'").fetchall() == [(101,)]
    assert s.execute("SELECT count(*) FROM t WHERE g = 1 AND name IN ('n1', 'n5')").fetchall() == [(100,)]
    assert s.execute("DELETE FROM t WHERE name = 'n7' AND g = 3").status == "DELETE 50"
    assert s.execute("SELECT * FROM by_name WHERE name = 'n8' AND id = 8").fetchall() == [("n8", 8, 0)]
    assert ranges == [1, 2, 1]  # a range per key: by_gn's (1, 'n1') and (1, 'n5'); by_gn's (3, 'n7')
    s.execute("FLUSH")
    assert s.execute("SELECT count(*) FROM t WHERE name = 'n7'").fetchall() == [(51,)]
    s.close()


@pytest.mark.parametrize("create", ["CREATE TABLE t (id INT PRIMARY KEY, v INT, tag VARCHAR)",
                                    "CREATE TABLE t (id INT, v INT, tag VARCHAR)",
                                    "CREATE MATERIALIZED VIEW t AS SELECT id, v, tag FROM src",
                                    "CREATE MATERIALIZED VIEW t AS SELECT id, count(*) AS v, max(tag) AS tag "
                                    "FROM src GROUP BY id"])
@pytest.mark.parametrize("include", ["", " INCLUDE (v)", " INCLUDE (tag)"])
def test_rows_through_an_index_with_any_key(tmp_path, create, include):
    """The relation's key may be its own columns, a hidden `_row_id`, an MV's hidden key or
    its group key; the index may leave any column out: the rows found through the index
    are the relation's, as a scan finds them."""
    s = rw_cli.connect(str(tmp_path / "d"))
    s.execute("CREATE TABLE src (id INT, v INT, tag VARCHAR)")
    s.execute("INSERT INTO src SELECT i % 40, 1, 't' || (i % 3) FROM generate_series(1, 120) AS x(i)")
    s.execute(create)
    if create.startswith("CREATE TABLE"):
        s.execute("INSERT INTO t SELECT i, i % 7, 't' || (i % 3) FROM generate_series(1, 120) AS x(i)")
    s.execute(f"CREATE INDEX ti ON t (id){include}")
    s.execute("FLUSH")
    queries = ["SELECT * FROM t WHERE id = 5 AND tag <> 'zz'", "SELECT count(*), sum(v) FROM t WHERE id IN (1, 2, 3)",
               "SELECT tag FROM t WHERE id > 35 AND v > 0"]
    got = [_rows(s, q) for q in queries]
    if create.startswith("CREATE TABLE"):
        assert s.execute("DELETE FROM t WHERE id = 7").status == "DELETE 1"
        assert s.execute("UPDATE t SET v = 100 WHERE id IN (8, 9)").status == "UPDATE 2"
    s.execute("DROP INDEX ti")
    s.execute("FLUSH")
    assert got == [_rows(s, q) for q in queries]
    if create.startswith("CREATE TABLE"):
        assert _rows(s, "SELECT id, v FROM t WHERE id BETWEEN 7 AND 9") == [(8, 100), (9, 100)]
    s.close()


def test_explain_shows_the_range_a_query_reads(tmp_path):
    """EXPLAIN names the index and the key range a query reads where no snapshot is kept,
    as RisingWave's BatchScan shows its scan_ranges."""
    s = rw_cli.connect(str(tmp_path / "d"))
    s.execute("CREATE TABLE t (id INT PRIMARY KEY, name VARCHAR, g INT)")
    s.execute("CREATE INDEX by_name ON t (name)")
    s.execute("CREATE INDEX by_gn ON t (g, name)")

    def scan(q: str) -> str:
        return next(r[0] for r in s.execute("EXPLAIN " + q).fetchall() if "BatchScan" in r[0])
    assert "index: by_name, scan_ranges: [name = 'a''b'], epoch: committed" in scan(
        "SELECT * FROM t WHERE name = 'a''b'")
    assert "index: by_gn, scan_ranges: [g IN (1, 2) AND name > 'x']" in scan(
        "SELECT count(*) FROM t WHERE g IN (1, 2) AND name > 'x' AND id > 0")
    assert "scan_ranges: [id >= 5000]" in scan("SELECT * FROM t WHERE id >= 5000") and "index" not in scan(
        "SELECT * FROM t WHERE id >= 5000")
    assert scan("SELECT * FROM t WHERE g + 1 = 2").endswith("snapshot: committed }")
    s.close()


def test_date_and_timestamp_keys(tmp_path, scans, monkeypatch):
    """Dates and timestamps written in ISO form (`'2024-01-03 10:00'`, `DATE '2024-01-05'`,
    a bound parameter's CAST) bound an index's or a pk's range as their cast would; other
    forms take the general path. Same answers as a scan, DML as DuckDB's."""
    s, con = twins(str(tmp_path / "d"), [
        "CREATE TABLE e (id INT PRIMARY KEY, ts TIMESTAMP, d DATE, v INT)",
        "INSERT INTO e SELECT i, TIMESTAMP '2024-01-01 00:00:00' + i * INTERVAL '1 minute', "
        "DATE '2024-01-01' + CAST(floor(i / 100.0) AS INT), i FROM range(1, 3001) AS x(i)"])  # (the same in both)
    s.execute("CREATE TABLE p (ts TIMESTAMP PRIMARY KEY, v INT)")
    s.execute("INSERT INTO p SELECT ts, v FROM e")
    s.execute("CREATE INDEX by_at ON e (ts)")
    s.execute("CREATE INDEX by_d ON e (d)")
    s.execute("FLUSH")
    queries = ["SELECT count(*), min(id), max(id) FROM e WHERE ts >= '2024-01-02 10:00:00' AND ts < TIMESTAMP '2024-01-02 11:00'",
               "SELECT id FROM e WHERE d = '2024-01-05' AND v % 10 = 0", "SELECT count(*) FROM e WHERE d IN (DATE '2024-01-05', '2024-01-07')",
               "SELECT count(*) FROM e WHERE ts > '2024-01-03T01:00:00.5'", "SELECT count(*) FROM e WHERE d > '2024-01-29'",
               "SELECT sum(v) FROM p WHERE ts BETWEEN '2024-01-01 01:00' AND '2024-01-01 02:00'",
               "SELECT count(*) FROM e WHERE d = '2024-1-5'"]  # (not ISO: the general path)
    got = [_rows(s, q) for q in queries]
    assert scans == ["e"]
    monkeypatch.setattr(index_lookup, "key_range_plan", lambda tree, catalog: None)
    want = [_rows(s, q.replace(" ", "  ", 1)) for q in queries]
    assert got == want
    assert got[0] == [(60, 2040, 2099)] and got[2] == [(200,)]
    monkeypatch.undo()
    for sql in ["DELETE FROM e WHERE d = '2024-01-05'", "UPDATE e SET v = 0 WHERE ts BETWEEN '2024-01-02' AND '2024-01-02 00:10:00'",
                "DELETE FROM e WHERE ts > TIMESTAMP '2024-01-03 00:00:00' AND v > 2950"]:
        assert s.execute(sql).status.split()[-1] == str(con.execute(sql).fetchall()[0][0]), sql
    s.execute("FLUSH")
    assert _rows(s, "SELECT * FROM e") == _rows(con, "SELECT * FROM e")
    s.close()


def test_bound_parameters_bound_the_range(tmp_path, scans):
    """A driver's parameters arrive as typed literals (`rw serve` writes `CAST('x' AS
    character varying)`, `CAST('...' AS timestamp without time zone)`; the Python API a
    plain string): they bound a key range as constants do. A cast to `varchar(n)` is left
    to the general path (PostgreSQL cuts the text to n characters)."""
    from rw_cli.server.pgtypes import param_literal

    s = rw_cli.connect(str(tmp_path / "d"))
    s.execute("CREATE TABLE t (id INT PRIMARY KEY, name VARCHAR, ts TIMESTAMP)")
    s.execute("INSERT INTO t SELECT i, 'n' || (i % 30), TIMESTAMP '2024-01-01' + i * INTERVAL '1 hour' "
              "FROM generate_series(1, 300) AS x(i)")
    s.execute("CREATE INDEX by_name ON t (name)")
    s.execute("CREATE INDEX by_ts ON t (ts)")
    s.execute("FLUSH")
    name, ts = param_literal(b"n7", 25, 0), param_literal(b"2024-01-05 00:00:00", 1114, 0)
    assert name == "CAST('n7' AS character varying)"
    assert s.execute(f"SELECT count(*) FROM t WHERE name = {name}").fetchall() == [(10,)]
    assert s.execute(f"SELECT count(*) FROM t WHERE ts < {ts}").fetchall() == [(95,)]
    assert s.execute("SELECT count(*) FROM t WHERE name = $1", ["n8"]).fetchall() == [(10,)]
    assert scans == []
    s.execute("SELECT count(*) FROM t WHERE name = CAST('n7' AS varchar(2))")
    assert scans == ["t"]
    assert s.execute(f"DELETE FROM t WHERE name = {name}").status == "DELETE 10"
    assert scans == ["t"]
    s.close()


def test_a_range_holding_most_of_the_relation_gives_way_to_its_kept_snapshot(tmp_path, scans, few_keys):
    """A range read is never kept: where a query's range held most of the relation, its next
    runs read the snapshot, which is kept and answers the runs after without reading."""
    s = rw_cli.connect(str(tmp_path / "d"))
    s.execute("CREATE TABLE t (id INT PRIMARY KEY, g INT)")
    s.execute("INSERT INTO t SELECT i, i % 2 FROM generate_series(1, 400) AS x(i); FLUSH")
    s.execute("CREATE INDEX ig ON t (g)")
    s.execute("FLUSH")
    wide, narrow = "SELECT count(*) FROM t WHERE g = 1", "SELECT count(*) FROM t WHERE id > 395"
    assert [s.execute(wide).fetchall() for _ in range(3)] == [[(200,)]] * 3
    assert scans == ["t"]  # the range, then the snapshot (kept), then the kept snapshot
    s.execute("INSERT INTO t VALUES (401, 1); FLUSH")
    assert s.execute(narrow).fetchall() == [(6,)] and scans == ["t"]  # a narrow range stays a range
    s.close()


def test_is_null_bounds_a_key_of_an_mv_and_an_index(tmp_path, scans, monkeypatch):
    """`col IS NULL` binds a key column to its NULL: an MV's group key (which may be NULL),
    an index's column — the same rows as a scan finds."""
    s = rw_cli.connect(str(tmp_path / "d"))
    s.execute("CREATE TABLE t (id INT PRIMARY KEY, a INT, b VARCHAR)")
    s.execute("INSERT INTO t SELECT i, CASE WHEN i % 4 = 0 THEN NULL ELSE i % 3 END, "
              "CASE WHEN i % 5 = 0 THEN NULL ELSE 'b' || (i % 2) END FROM generate_series(1, 200) AS x(i)")
    s.execute("CREATE MATERIALIZED VIEW m AS SELECT a, b, count(*) AS n FROM t GROUP BY a, b")
    s.execute("CREATE INDEX ib ON t (b, a)")
    s.execute("FLUSH")
    s.execute("INSERT INTO t VALUES (201, NULL, NULL); FLUSH")
    queries = ["SELECT * FROM m WHERE a IS NULL", "SELECT n FROM m WHERE a IS NULL AND b IS NULL",
               "SELECT count(*) FROM t WHERE b IS NULL", "SELECT id FROM t WHERE b IS NULL AND a IS NULL",
               "SELECT count(*) FROM t WHERE b = 'b1' AND a IS NULL", "SELECT count(*) FROM t WHERE b IS NULL AND b = 'b0'"]
    got = [_rows(s, q) for q in queries]
    assert scans == []
    monkeypatch.setattr(index_lookup, "key_range_plan", lambda tree, catalog: None)
    assert got == [_rows(s, q.replace(" ", "  ", 1)) for q in queries]
    assert got[1] == [(11,)] and got[5] == [(0,)]
    s.close()
