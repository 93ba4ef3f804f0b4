"""SQLite's classic sqllogictest format: the parser, the value formatting and hashing (checked
against Python's sqlite3, which the corpus's expected results come from), and the runner on
classic files."""
import decimal
import hashlib
import io
import os
import sqlite3
import textwrap

import pyarrow as pa
import pytest

from rw_cli.common.types import DataType
from rw_cli.result import Result
from rw_cli.slt.classic import (ClassicState, check_query, digest, format_integer, format_real,
                                format_result, format_text, sorted_values)
from rw_cli.slt.parser import CLASSIC_ENGINES, ENGINE, is_classic, parse
from rw_cli.slt.runner import RunOptions, expand_paths, run_files

CORPUS = "/work/shared/sqllogictest/test"


def p(text):
    return parse(textwrap.dedent(text).lstrip("\n"), "/x/f.test")


# -- parser ---------------------------------------------------------------------------------

CLASSIC = """
    hash-threshold 8

    statement ok
    CREATE TABLE t1(a INTEGER, b INTEGER, c TEXT)

    statement error
    CREATE TABLE t1(a INTEGER)

    onlyif mysql # aggregate syntax:
    query I rowsort label-10
    SELECT DISTINCT - COUNT( * ) AS col1 FROM t1

    skipif mysql # not compatible
    skipif sqlite
    query I rowsort label-10
    SELECT DISTINCT - COUNT ( * ) AS col1
      FROM t1
    ----
    0

    query IIT valuesort
    SELECT a, b, c FROM t1
    ----
    30 values hashing to 3f2a5f2bcbd1ee8bd9a9bb7a2e0b6d2a

    query R nosort
    SELECT 1.5
    ----
    1.500

    onlyif mssql
    halt

    halt
"""


def test_classic_records_every_kind():
    recs = p(CLASSIC)
    kinds = [(r.kind, r.line) for r in recs]
    assert kinds == [("hash-threshold", 1), ("statement", 3), ("statement", 6), ("query", 10),
                     ("query", 15), ("query", 21), ("query", 26), ("halt", 32), ("halt", 34)]
    threshold, create, err, mysql_only, counted, valuesort, real, mssql_halt, halt = recs
    assert threshold.arg == "8"
    assert create.sql == "CREATE TABLE t1(a INTEGER, b INTEGER, c TEXT)" and not create.expect_error
    assert err.expect_error and err.error_regex is None
    assert mysql_only.conditions == [("onlyif", "mysql")] and mysql_only.expected == []
    assert mysql_only.label == "label-10" and mysql_only.sort_mode == "rowsort"
    assert counted.conditions == [("skipif", "mysql"), ("skipif", "sqlite")]
    assert counted.sql == "SELECT DISTINCT - COUNT ( * ) AS col1\n  FROM t1" and counted.expected == ["0"]
    assert (valuesort.types, valuesort.sort_mode, valuesort.label) == ("IIT", "valuesort", None)
    assert valuesort.expected == ["30 values hashing to 3f2a5f2bcbd1ee8bd9a9bb7a2e0b6d2a"]
    assert (real.types, real.sort_mode, real.expected) == ("R", "nosort", ["1.500"])
    assert mssql_halt.conditions == [("onlyif", "mssql")]
    assert [r.applies(CLASSIC_ENGINES) for r in recs] == [True, True, True, False, True, True, True, False, True]


def test_engine_names():
    (skip_pg, only_pg, only_rw, only_risingwave) = p("""
        skipif postgresql
        statement ok
        a

        onlyif postgresql
        statement ok
        b

        onlyif rw
        statement ok
        c

        onlyif risingwave
        statement ok
        d
    """)
    assert [r.applies(CLASSIC_ENGINES) for r in (skip_pg, only_pg, only_rw, only_risingwave)] == [
        False, True, True, True]
    # the RisingWave format answers to `risingwave` only, as before
    assert [r.applies(ENGINE) for r in (skip_pg, only_pg, only_rw, only_risingwave)] == [
        True, False, False, True]


def test_format_detection_and_directories(tmp_path):
    (tmp_path / "a.test").write_text("statement ok\nSELECT 1\n")
    (tmp_path / "b.slt").write_text("statement ok\nSELECT 1\n")
    (tmp_path / "c.slt.part").write_text("statement ok\nSELECT 1\n")
    files, missing = expand_paths([str(tmp_path)])
    assert [os.path.basename(f) for f in files] == ["a.test", "b.slt"] and not missing
    assert is_classic("x/a.test") and not is_classic("x/b.slt") and not is_classic("x/c.slt.part")


# -- formatting and hashing -----------------------------------------------------------------

@pytest.mark.parametrize("value,integer,real", [
    (0, "0", "0.000"),
    (-7, "-7", "-7.000"),
    (True, "1", "1.000"),
    (2.5, "2", "2.500"),
    (-2.5, "-2", "-2.500"),
    (1 / 3, "0", "0.333"),
    (0.0625, "0", "0.063"),  # halves round up, as SQLite's printf does
    (decimal.Decimal("-12.3456"), "-12", "-12.346"),
    (decimal.Decimal("123456789012345678901234567890.5"), "123456789012345678901234567890",
     "123456789012345678901234567890.500"),
    ("12abc", "12", "12.000"),
    ("abc", "0", "0.000"),
    (" 3.75x", "3", "3.750"),
])
def test_integer_and_real_formatting(value, integer, real):
    assert format_integer(value) == integer and format_real(value) == real


def test_text_formatting():
    assert format_text("") == "(empty)"
    assert format_text("a b") == "a b"
    assert format_text("tab\there") == "tab@here"
    assert format_text("é") == "@@"  # one @ per UTF-8 byte


def _arrow_result(rows, types):
    cols = list(zip(*rows)) if rows else [[] for _ in types]
    arrays = []
    for letter, col in zip(types, cols):
        kind = {"I": pa.int64(), "R": pa.float64(), "T": pa.string()}[letter]
        arrays.append(pa.array(list(col), type=kind))
    table = pa.table(arrays, names=[f"c{i}" for i in range(len(types))])
    return Result(f"SELECT {len(rows)}", table, [DataType.from_arrow(f.type) for f in table.schema])


def test_sort_modes_and_hash():
    rows = [["2", "b"], ["10", "a"], ["1", "c"]]
    assert sorted_values(rows, "nosort") == ["2", "b", "10", "a", "1", "c"]
    assert sorted_values(rows, "rowsort") == ["1", "c", "10", "a", "2", "b"]  # as strings
    assert sorted_values(rows, "valuesort") == ["1", "10", "2", "a", "b", "c"]
    assert digest(["1", "c"]) == hashlib.md5(b"1\nc\n").hexdigest()


def test_check_query_values_hashes_and_labels():
    result = _arrow_result([(1, None, ""), (2, 0.5, "x")], "IRT")
    assert format_result(result, "IRT") == [["1", "NULL", "(empty)"], ["2", "0.500", "x"]]
    state = ClassicState(hash_threshold=4)
    listed = ["1", "NULL", "(empty)", "2", "0.500", "x"]
    assert check_query(result, "IRT", "nosort", listed, None, state) is None
    hashed = [f"6 values hashing to {digest(listed)}"]
    assert check_query(result, "IRT", "nosort", hashed, "label-1", state) is None
    failure = check_query(result, "IRT", "nosort", ["6 values hashing to " + "0" * 32], None, state)
    assert failure.startswith("query result mismatch") and f"6 values hashing to {digest(listed)}" in failure
    # rows one per line, as other runners write small results, are accepted too
    assert check_query(result, "IRT", "rowsort", ["2 0.500 x", "1 NULL (empty)"], None, state) is None
    # a label's results must equal the first result with that label
    other = _arrow_result([(3, 1.0, "y")], "IRT")
    failure = check_query(other, "IRT", "nosort", ["3", "1.000", "y"], "label-1", state)
    assert failure.startswith("query result differs from the first result labelled label-1")
    assert check_query(result, "IT", "nosort", listed, None, state).startswith("wrong number of columns")


# -- against sqlite3 ------------------------------------------------------------------------

class SqliteSession:
    """A session over Python's sqlite3: what the corpus's expected results come from."""

    def __init__(self, data_dir, engine="embedded"):
        self.con = sqlite3.connect(":memory:")

    def execute(self, sql):
        if sql.lstrip().upper().startswith(("SET ", "FLUSH")):
            return Result("SET")
        cur = self.con.execute(sql)
        if cur.description is None:
            return Result("OK")
        rows = cur.fetchall()
        arrays = []
        for i in range(len(cur.description)):
            col = [r[i] for r in rows]
            present = [v for v in col if v is not None]
            if all(isinstance(v, int) for v in present):
                arrays.append(pa.array(col, type=pa.int64()))
            elif all(isinstance(v, (int, float)) for v in present):
                arrays.append(pa.array([None if v is None else float(v) for v in col], type=pa.float64()))
            else:
                arrays.append(pa.array([None if v is None else str(v) for v in col], type=pa.string()))
        table = pa.table(arrays, names=[f"c{i}" for i in range(len(arrays))])
        return Result(f"SELECT {len(rows)}", table, [DataType.from_arrow(f.type) for f in table.schema])

    def close(self):
        self.con.close()


def _slice(src, records, dest):
    """The first `records` records of a corpus file (a record: text up to a blank line)."""
    with open(src, encoding="utf-8") as f:
        blocks = f.read().split("\n\n")
    dest.write_text("\n\n".join(blocks[:records]) + "\n")
    return str(dest)


@pytest.mark.skipif(not os.path.isdir(CORPUS), reason="the shared sqllogictest corpus is not here")
@pytest.mark.parametrize("name,records", [
    ("select1.test", 400), ("select4.test", 600), ("evidence/in1.test", 10_000),
    ("random/aggregates/slt_good_0.test", 600), ("index/orderby/10/slt_good_0.test", 400),
])
def test_corpus_sample_passes_through_sqlite3(tmp_path, name, records):
    """sqlite3 answers the corpus's records as its expected results say: our parser, value
    formatting, sorting and hashing agree with SQLite's runner."""
    path = _slice(os.path.join(CORPUS, name), records, tmp_path / "sample.test")
    out = io.StringIO()
    rc = run_files([path], keep_going=True, out=out, session_factory=SqliteSession)
    text = out.getvalue()
    # records that apply to PostgreSQL but whose SQL SQLite rejects are no hashing matter
    hash_failures = [ln for ln in text.splitlines() if "mismatch" in ln or "labelled" in ln]
    assert not hash_failures, text[:3000]
    passed, failed = (int(x.split()[0]) for x in text.splitlines()[-1].split(", "))
    assert passed > 0 and failed <= passed // 50, text[:3000]
    assert rc == (1 if failed else 0)


def test_classic_runner_on_sqlite3(tmp_path):
    values = ["1", "2.000", "x", "3", "NULL", "(empty)", "-5", "0.125", "@@"]
    path = tmp_path / "mine.test"
    path.write_text(textwrap.dedent(f"""
        hash-threshold 4

        statement ok
        CREATE TABLE t(a INTEGER, b REAL, c TEXT)

        statement ok
        INSERT INTO t VALUES(1, 2.0, 'x'), (3, NULL, ''), (-5, 0.125, 'é')

        statement error
        INSERT INTO nothing VALUES(1)

        query I rowsort label-a
        SELECT a FROM t
        ----
        -5
        1
        3

        query I valuesort label-a
        SELECT a FROM t ORDER BY a DESC
        ----
        -5
        1
        3

        query IRT nosort
        SELECT a, b, c FROM t ORDER BY rowid
        ----
        9 values hashing to {digest(values)}

        skipif postgresql
        statement ok
        THIS IS NOT SQL

        query I nosort
        SELECT count(*) FROM t
        ----
        3

        halt

        statement ok
        THIS IS NOT SQL EITHER
    """).lstrip("\n"))
    out = io.StringIO()
    rc = run_files([str(path)], out=out, session_factory=SqliteSession)
    assert rc == 0, out.getvalue()
    assert out.getvalue() == f"ok {path}\n7 passed, 0 failed\n"


def test_timeout_counts_unrun_records(tmp_path):
    path = tmp_path / "slow.test"
    path.write_text("statement ok\nCREATE TABLE t(a INTEGER)\n\n" +
                    "".join(f"query I nosort\nSELECT {i}\n----\n{i}\n\n" for i in range(50)))

    class Slow(SqliteSession):
        def execute(self, sql):
            import time
            time.sleep(0.05)
            return super().execute(sql)

    out = io.StringIO()
    rc = run_files([str(path)], out=out, session_factory=Slow, options=RunOptions(timeout=0.5))
    text = out.getvalue()
    assert rc == 1 and "timeout after 0.5s" in text, text
    passed, failed = (int(x.split()[0]) for x in text.splitlines()[-1].split(", "))
    assert passed + failed == 51 and 0 < passed < 51
