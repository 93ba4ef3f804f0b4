"""What makes a batch SELECT cheap must not change its answer (issue 19): snapshots kept
between queries follow every write and schema change, a SELECT's tree is bound in place (and
parsed again when binding must start over), and transpiling in place keeps output names."""
from __future__ import annotations

import pyarrow as pa
import pytest

import rw_cli
from rw_cli.errors import RwError
from rw_cli.handler.snapshots import SnapshotCache


@pytest.fixture
def db(tmp_path):
    s = rw_cli.connect(str(tmp_path / "data"))
    s.execute("SET RW_IMPLICIT_FLUSH TO true")
    s.execute("CREATE TABLE t (id int PRIMARY KEY, v int)")
    s.execute("INSERT INTO t VALUES (1, 10), (2, 20)")
    yield s
    s.close()


def rows(s, sql):
    return s.execute(sql).text_rows()


def test_kept_snapshot_follows_writes(db):
    assert rows(db, "SELECT id, v FROM t ORDER BY id") == [["1", "10"], ["2", "20"]]
    assert rows(db, "SELECT sum(v) FROM t") == [["30"]]  # the same snapshot, kept
    db.execute("INSERT INTO t VALUES (3, 30)")
    assert rows(db, "SELECT sum(v) FROM t") == [["60"]]
    db.execute("UPDATE t SET v = 1 WHERE id = 1")
    db.execute("DELETE FROM t WHERE id = 2")
    assert rows(db, "SELECT id, v FROM t ORDER BY id") == [["1", "1"], ["3", "30"]]


def test_kept_snapshot_without_implicit_flush(tmp_path):
    s = rw_cli.connect(str(tmp_path / "data"))
    try:
        s.execute("CREATE TABLE t (v int)")
        s.execute("INSERT INTO t VALUES (1)")
        s.execute("FLUSH")
        assert rows(s, "SELECT count(*) FROM t") == [["1"]]
        s.execute("INSERT INTO t VALUES (2)")
        s.execute("FLUSH")
        assert rows(s, "SELECT count(*) FROM t") == [["2"]]
    finally:
        s.close()


def test_kept_snapshot_follows_a_new_table_of_the_same_name(db):
    assert rows(db, "SELECT * FROM t ORDER BY id") == [["1", "10"], ["2", "20"]]
    db.execute("DROP TABLE t")
    db.execute("CREATE TABLE t (id int PRIMARY KEY, v varchar, w int)")
    db.execute("INSERT INTO t VALUES (7, 'x', 70)")
    assert rows(db, "SELECT * FROM t") == [["7", "x", "70"]]


def test_hidden_row_id_and_visible_columns_are_kept_apart(tmp_path):
    s = rw_cli.connect(str(tmp_path / "data"))
    try:
        s.execute("SET RW_IMPLICIT_FLUSH TO true")
        s.execute("CREATE TABLE n (v int)")
        s.execute("INSERT INTO n VALUES (5)")
        assert rows(s, "SELECT * FROM n") == [["5"]]
        assert len(s.execute("SELECT _row_id, v FROM n").text_rows()[0]) == 2
        assert rows(s, "SELECT * FROM n") == [["5"]]
    finally:
        s.close()


def test_unqualifiable_query_is_bound_again(db):
    # sqlglot cannot know a table function's columns: binding starts over, unqualified
    assert rows(db, "SELECT x * 2 FROM generate_series(1, 3) AS g(x) ORDER BY 1") == [["2"], ["4"], ["6"]]
    assert rows(db, "SELECT v FROM t, unnest(ARRAY[1]) AS u(k) WHERE id = k") == [["10"]]
    with pytest.raises(RwError, match='column "nope" does not exist'):
        db.execute("SELECT nope FROM t")


def test_output_names_survive_transpiling(db):
    r = db.execute("SELECT sum(v), v / 2 AS half, avg(id)::int FROM t GROUP BY v ORDER BY half")
    assert r.arrow().column_names == ["sum", "half", "avg"]


def test_snapshot_cache_is_bounded():
    import pyarrow as pa

    from rw_cli.handler import snapshots

    cache = SnapshotCache(max_bytes=1 << 20)
    small = pa.table({"a": list(range(1000))})
    for i in range(2 * cache.max_bytes // small.nbytes + 2):
        assert cache.put(("k", i), small)
    assert cache.nbytes <= cache.max_bytes
    assert cache.get(("k", 0)) is None  # the least recently used went first
    big = pa.table({"a": list(range(cache.max_table_bytes // 8 + 1))})
    assert not cache.put(("big",), big)
    # by default a share of the machine's memory: a table of millions of rows is kept
    assert snapshots.MAX_TABLE_BYTES >= snapshots.MIN_BYTES // snapshots.TABLE_SHARE
    assert SnapshotCache().max_bytes == snapshots.MAX_BYTES


def test_scalar_subquery_ordered_by_position_is_qualified(db):
    from rw_cli.sql.batch import bind_query
    from rw_cli.sql.dialect import parse_statement

    sql = "SELECT (SELECT count(*) FROM t AS x WHERE x.v < t.v), sum(v) / 4 FROM t GROUP BY v ORDER BY 1, 2"
    assert bind_query(parse_statement(sql), db.catalog).qualified  # sqlglot alone gave up on it
    assert rows(db, sql) == [["0", "2"], ["1", "5"]]
    r = db.execute("SELECT (SELECT max(v) FROM t), id FROM t ORDER BY 1, 2")
    assert r.arrow().column_names == ["max", "id"]
    assert r.text_rows() == [["20", "1"], ["20", "2"]]


# -- a SELECT bound once, run again (rw_cli.handler.prepared) ---------------------------------

@pytest.fixture
def binds(monkeypatch):
    """How many times a SELECT was bound (parsed, qualified and transpiled)."""
    from rw_cli.handler import prepared, query

    prepared.clear()
    count = [0]
    real = query.bind_query

    def counting(*args, **kwargs):
        count[0] += 1
        return real(*args, **kwargs)
    monkeypatch.setattr(query, "bind_query", counting)
    return count


def test_bound_select_is_reused_and_follows_writes(db, binds):
    assert rows(db, "SELECT sum(v) FROM t") == [["30"]]
    assert rows(db, "SELECT sum(v) FROM t") == [["30"]]
    assert binds[0] == 1
    db.execute("INSERT INTO t VALUES (3, 30)")
    before = binds[0]
    assert rows(db, "SELECT sum(v) FROM t") == [["60"]]  # the rows are read anew
    assert binds[0] == before  # the statement is not bound again


def test_bound_select_follows_schema_changes(db, binds):
    assert rows(db, "SELECT * FROM t ORDER BY id") == [["1", "10"], ["2", "20"]]
    db.execute("ALTER TABLE t RENAME TO t0")
    with pytest.raises(RwError, match='relation "t" does not exist'):
        db.execute("SELECT * FROM t ORDER BY id")
    db.execute("CREATE TABLE t (id int PRIMARY KEY, v varchar, w int)")
    db.execute("INSERT INTO t VALUES (7, 'x', 70)")
    assert rows(db, "SELECT * FROM t ORDER BY id") == [["7", "x", "70"]]
    db.execute("DROP TABLE t")
    db.execute("ALTER TABLE t0 RENAME TO t")
    assert rows(db, "SELECT * FROM t ORDER BY id") == [["1", "10"], ["2", "20"]]


def test_bound_select_follows_a_redefined_view(db, binds):
    db.execute("CREATE VIEW w AS SELECT id FROM t")
    assert rows(db, "SELECT * FROM w ORDER BY 1") == [["1"], ["2"]]
    db.execute("DROP VIEW w")
    db.execute("CREATE VIEW w AS SELECT v FROM t")
    assert rows(db, "SELECT * FROM w ORDER BY 1") == [["10"], ["20"]]


def test_bound_select_follows_session_parameters(db, binds):
    with pytest.raises(RwError, match="Division by zero"):
        db.execute("SELECT 1 / 0")
    db.execute("SET batch_expr_strict_mode = false")
    assert rows(db, "SELECT 1 / 0") == [[None]]
    db.execute("CREATE USER u")
    assert rows(db, "SELECT current_user") == [["root"]]
    db.execute("SET SESSION AUTHORIZATION u")
    assert rows(db, "SELECT current_user") == [["u"]]
    db.execute("RESET SESSION AUTHORIZATION")
    assert rows(db, "SELECT current_user") == [["root"]]


def test_bound_select_is_not_shared_between_data_directories(tmp_path, binds):
    with rw_cli.connect(str(tmp_path / "a")) as a, rw_cli.connect(str(tmp_path / "b")) as b:
        a.execute("CREATE TABLE t (v int); INSERT INTO t VALUES (1); FLUSH")
        b.execute("CREATE TABLE t (v int, w int); INSERT INTO t VALUES (2, 3); FLUSH")
        for _ in range(2):
            assert rows(a, "SELECT * FROM t") == [["1"]]
            assert rows(b, "SELECT * FROM t") == [["2", "3"]]


def test_unchanged_relation_keeps_its_snapshot(tmp_path, monkeypatch):
    """A relation the last epochs did not write is not read from the store again."""
    from rw_cli.handler import query

    reads = []
    real = query.snapshot

    def counting(session, rel, *args, **kwargs):
        reads.append(rel.name)
        return real(session, rel, *args, **kwargs)
    monkeypatch.setattr(query, "snapshot", counting)
    with rw_cli.connect(str(tmp_path / "data")) as s:
        s.execute("CREATE TABLE a (v int); CREATE TABLE b (v int); INSERT INTO a VALUES (1); FLUSH")
        assert rows(s, "SELECT count(*) FROM a") == [["1"]]
        s.execute("INSERT INTO b VALUES (5); FLUSH")
        assert rows(s, "SELECT count(*) FROM a") == [["1"]]
        assert reads == ["a"]
        s.execute("INSERT INTO a VALUES (2); FLUSH")
        assert rows(s, "SELECT count(*) FROM a") == [["2"]]
        assert reads == ["a", "a"]


def test_read_only_session_reuses_a_bound_select_while_the_catalog_stays(tmp_path, binds):
    path = str(tmp_path / "data")
    with rw_cli.connect(path) as w:
        w.execute("CREATE TABLE t (v int); INSERT INTO t VALUES (1); FLUSH")
        with rw_cli.connect(path, read_only=True) as r:
            assert rows(r, "SELECT count(*) FROM t") == [["1"]]
            w.execute("INSERT INTO t VALUES (2); FLUSH")
            before = binds[0]
            assert rows(r, "SELECT count(*) FROM t") == [["2"]]  # the newest commit's rows
            assert binds[0] == before  # under the same catalog: not bound again
            w.execute("ALTER TABLE t RENAME TO t0; CREATE TABLE t (v int, w int); INSERT INTO t VALUES (5, 6); FLUSH")
            assert rows(r, "SELECT count(*) FROM t") == [["1"]]  # the new catalog's t
            assert rows(r, "SELECT * FROM t") == [["5", "6"]]


@pytest.mark.parametrize("arrow_type", [pa.int64(), pa.int32(), pa.uint64(), pa.date32(), pa.timestamp("us")])
def test_an_integer_keys_order_is_arrows_sort_order(arrow_type):
    """A snapshot of one integer (date, timestamp) key is put in key order by numpy's stable
    sort: the same rows in the same order as Arrow's sort of the key."""
    import numpy as np

    from rw_cli.handler.row_order import order_by_integer_key

    rng = np.random.default_rng(3)
    keys = rng.permutation(5000).astype(np.int64)
    via = pa.int32() if arrow_type == pa.date32() else pa.int64()  # (Arrow casts int32 to date32 only)
    t = pa.table({"k": pa.array(keys, via).cast(arrow_type), "v": pa.array([f"v{k}" for k in keys])})
    t = pa.concat_tables([t.slice(0, 1200), t.slice(1200)])  # as a snapshot read in batches
    got = order_by_integer_key(t, "k")
    assert got.equals(t.sort_by([("k", "ascending")]).combine_chunks())
    with_null = pa.table({"k": pa.array([2, None, 1], via).cast(arrow_type), "v": ["a", "b", "c"]})
    assert order_by_integer_key(with_null, "k") is None  # NULLs: Arrow's sort (NULLs last)
    assert order_by_integer_key(pa.table({"k": ["b", "a"]}), "k") is None
