"""INSERT of literal rows read without the parser (rw_cli.sql.literal_insert): every statement
gives what the parser's way gives — the same rows, or the same error — for each column type
and kind of literal; statements that are not plain literal rows take the parser's way."""
from __future__ import annotations

import pytest

import rw_cli
from rw_cli.errors import RwError
from rw_cli.sql import literal_insert
from rw_cli.sql.dialect import parse_statement

TYPES = ["smallint", "int", "bigint", "real", "double precision", "numeric", "varchar", "boolean", "date", "time",
         "timestamp", "timestamptz", "interval", "jsonb", "bytea", "int[]", "varchar[]", "rw_int256",
         "struct<a int, b varchar>"]
LITERALS = ["'1'", "1", "-1", "+7", "1.5", "-2.5", "'1.5'", "1e3", "1.5E-2", ".5", "5.", "99999999999",
            "99999999999999999999999", "32768", "-32769", "2147483648", "'abc'", "''", "'it''s'", "'a\\b'", "NULL",
            "true", "FALSE", "'true'", "'t'", "'on'", "'2024-01-02'", "'2024-01-02 03:04:05'",
            "'2024-01-02 03:04:05+02'", "'1 day 02:00'", "'{\"a\": 1, \"b\": [1,2]}'", "'\\x0102'", "'{1,2}'",
            "'{a,b}'", "'NaN'", "'-infinity'", "' 42 '", "'1e400'", "1e400", "'(1,x)'", "'12:34:56'", "0",
            "'2024-02-30'", "'épée'", "1.0000000000000000001", "-0.0",
            # parameters as rw serve and Session.execute bind them: typed
            "CAST('1' AS integer)", "CAST(' 42 ' AS integer)", "CAST('5' AS bigint)", "CAST('1.5' AS numeric)",
            "CAST('2.5e3' AS double precision)", "CAST('1e400' AS double precision)", "CAST(NULL AS bigint)",
            "CAST('t' AS boolean)", "CAST('2024-01-02' AS date)", "CAST('2024-01-02 03:04:05' AS TIMESTAMP)",
            "CAST('x' AS character varying)", "CAST('{\"a\": 2}' AS jsonb)", "CAST('1 day' AS interval)",
            "CAST('99999999999' AS integer)", "'-12'", "'7.25'", "'1e5'", "' 3'",
            "'2024-01-01 24:00:00'", "'2024-01-02T03:04:05.5'", "'0999-01-01'", "'2024-01-02 03:04:05.1234567'",
            "'2024-01-01 23:59:60'"]
STATEMENTS = [
    "INSERT INTO t VALUES (1, 'a', 1.5), (2, NULL, -3), (3, 'c''d', NULL);",
    "INSERT INTO t (k, s) VALUES (1, 'x'), (2, 'y')",
    "INSERT INTO t (s, k) VALUES ('x', 1)",
    "INSERT INTO t VALUES (1)",
    "INSERT INTO t VALUES (1, 'a', 2.5, 4)",
    "INSERT INTO t (k, s) VALUES (1)",
    "INSERT INTO t (k, nope) VALUES (1, 2)",
    "INSERT INTO t (k, k) VALUES (1, 2)",
    "INSERT INTO t VALUES (1, 'a', 2), (2, 3, 4)",
    "INSERT INTO t VALUES (NULL, 'a', 1)",
    "INSERT INTO t VALUES (1, 'a', DEFAULT)",
    "INSERT INTO t VALUES (1, 'a', 1) RETURNING k, s",
    "INSERT INTO t VALUES (1, 'a', 1), (2, 'b')",
    "INSERT INTO t VALUES (1, 'a' 'b', 1)",
    "INSERT INTO t VALUES (1, E'a\\tb', 1)",
    "INSERT INTO t VALUES (1, 'a', 1) (2, 'b', 2)",
    "INSERT INTO t VALUES (1, 'a', 1),",
    "INSERT INTO \"t\" VALUES (4, 'q', 1e2)",
    "insert into T values (5 , 'r' , .25 ) ;",
    "INSERT INTO t VALUES (1, 'a', 1); -- a comment",
    "INSERT INTO g VALUES (1, 2)",
    "INSERT INTO g (a) VALUES (1), (2)",
    "INSERT INTO r VALUES ('x'), ('y')",
    "INSERT INTO nope VALUES (1)",
    "INSERT INTO m VALUES (1)",
    "INSERT INTO t VALUES (CAST('7' AS integer), CAST('z' AS character varying), CAST('2.5' AS double precision))",
    "INSERT INTO t VALUES (CAST('8' AS bigint), CAST(NULL AS text), CAST('1e3' AS double precision))",
    "INSERT INTO t (k) VALUES (CAST('x' AS integer))",
    "INSERT INTO t (k, v) VALUES (CAST('9' AS integer), '4.5'), (10, '-1e2')",
]
SCHEMA = ["CREATE TABLE t (k int NOT NULL, s varchar DEFAULT 'dflt', v double precision)",
          "CREATE TABLE g (a int, b int AS a + 1)",
          "CREATE TABLE r (s varchar)",
          "CREATE MATERIALIZED VIEW m AS SELECT count(*) AS n FROM t"]


def _outcomes(tmp_path, fast: bool, statements: list[tuple[str, str]], schema: list[str], monkeypatch) -> dict:
    """Each statement's status or error, and each table's rows after all of them."""
    if not fast:
        monkeypatch.setattr(literal_insert, "parse", lambda sql, parse_head: None)
    s = rw_cli.connect(str(tmp_path / ("fast" if fast else "slow")))
    try:
        for ddl in schema:
            s.execute(ddl)
        out = {}
        for key, sql in statements:
            try:
                r = s.execute(sql)
                out[key] = (r.status, r.fetchall() if r.columns else None)
            except RwError as e:
                out[key] = ("error", str(e).split("\n")[0])
        s.execute("FLUSH")
        for table in ("t", "g", "r"):  # (as text: a timestamp of -infinity is no Python datetime)
            cols = ", ".join(f"{c}::varchar" for c in s.execute(f"SELECT * FROM {table} LIMIT 0").columns)
            out[table] = sorted(map(repr, s.execute(f"SELECT {cols} FROM {table}").fetchall()))
        return out
    finally:
        s.close()
        monkeypatch.undo()


@pytest.mark.parametrize("type_name", TYPES)
def test_each_literal_into_each_type_as_the_parser_does(tmp_path, monkeypatch, type_name):
    schema = [f"CREATE TABLE t (k int, v {type_name})", "CREATE TABLE g (a int)", "CREATE TABLE r (a int)"]
    statements = [(lit, f"INSERT INTO t VALUES ({j}, {lit})") for j, lit in enumerate(LITERALS)]
    statements.append(("all", "INSERT INTO t VALUES " + ", ".join(f"({100 + j}, {lit})" for j, lit in enumerate(LITERALS))))
    fast = _outcomes(tmp_path, True, statements, schema, monkeypatch)
    slow = _outcomes(tmp_path, False, statements, schema, monkeypatch)
    assert fast == slow


def test_statement_shapes_as_the_parser_does(tmp_path, monkeypatch):
    statements = [(sql, sql) for sql in STATEMENTS]
    fast = _outcomes(tmp_path, True, statements, SCHEMA, monkeypatch)
    slow = _outcomes(tmp_path, False, statements, SCHEMA, monkeypatch)
    assert fast == slow
    assert fast["t"]  # rows went in


@pytest.mark.parametrize("sql, read", [
    ("INSERT INTO t VALUES (1, 'a''b', NULL), (-2, '', 1.5)", True),
    ("insert into s.t (a, \"B\") values (TRUE, false)", True),
    ("INSERT INTO t VALUES (1, 'a', DEFAULT)", False),
    ("INSERT INTO t VALUES (1 + 1)", False),
    ("INSERT INTO t VALUES ($1)", False),
    ("INSERT INTO t VALUES ('1'::int)", False),
    ("INSERT INTO t VALUES (1) ON CONFLICT DO NOTHING", False),
    ("INSERT INTO t SELECT 1", False),
    ("INSERT INTO t VALUES (1), ('a')", False),  # numbers and strings in one column
    ("INSERT INTO t VALUES (1e)", False),
    ("INSERT INTO t VALUES (nullx)", False),
    ("INSERT INTO t VALUES (CAST('1' AS bigint), CAST(NULL AS text))", True),
    ("INSERT INTO t VALUES (CAST('1' AS int[]))", False),
    ("INSERT INTO t VALUES (CAST(1 AS bigint))", False),
])
def test_which_statements_are_read_without_the_parser(sql, read):
    tree = parse_statement(sql)
    assert isinstance(tree.expression, literal_insert.LiteralRows) is read


@pytest.mark.parametrize("copies", [1, 2 * literal_insert.SMALL])  # read by Python, and by Arrow's kernels
def test_columns_by_kind(copies):
    rows = "(1, 'x', 1.5, true, NULL, 7), (+2, 'it''s', -2e1, NULL, NULL, 99999999999999999999)"
    tree = parse_statement("INSERT INTO t VALUES " + ", ".join([rows] * copies))
    cols = tree.expression.meta["columns"]
    assert cols.rows == 2 * copies
    kinds = [(k, v.to_pylist()) for k, v in cols.columns]
    assert kinds == [("int", [1, 2] * copies), ("str", ["x", "it's"] * copies), ("num", ["1.5", "-2e1"] * copies),
                     ("bool", [True, None] * copies), ("null", [None, None] * copies),
                     ("num", ["7", "99999999999999999999"] * copies)]


def test_plain_literal_rows_skip_the_batch_query(tmp_path, monkeypatch):
    """Literal rows of the common column types go in as columns: no VALUES query runs."""
    from rw_cli.handler import dml

    def no_query(*args, **kwargs):
        raise AssertionError("the VALUES list went through a query")

    monkeypatch.setattr(dml, "run_query", no_query)
    s = rw_cli.connect(str(tmp_path / "d"))
    s.execute("CREATE TABLE t (id bigint PRIMARY KEY, n int, name varchar, v double precision, x numeric, "
              "ok boolean, at timestamp, d date, j jsonb)")
    s.execute("CREATE MATERIALIZED VIEW m AS SELECT count(*) AS c, sum(n) AS s FROM t")
    rows = ", ".join(f"({i}, {i % 7}, 'n''{i}', {i}.5, {i}.25, {'true' if i % 2 else 'NULL'}, "
                     f"'2024-01-01 00:00:{i % 60:02d}', '2024-01-{1 + i % 28:02d}', '{{\"k\": {i}}}')"
                     for i in range(20000))
    assert s.execute(f"INSERT INTO t VALUES {rows}").status == "INSERT 0 20000"
    s.execute("FLUSH")
    monkeypatch.undo()
    assert s.execute("SELECT * FROM m").fetchall() == [(20000, sum(i % 7 for i in range(20000)))]
    assert s.execute("SELECT name, v, x::varchar, ok, at::varchar, d::varchar, j->>'k' FROM t WHERE id = 7").fetchall() \
        == [("n'7", 7.5, "7.25", True, "2024-01-01 00:00:07", "2024-01-08", "7")]
    s.close()
