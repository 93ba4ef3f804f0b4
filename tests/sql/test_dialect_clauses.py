"""The dialect's additions to sqlglot: RisingWave clauses taken out of the text as flags,
SET TIME ZONE, whole interval strings, IS UNKNOWN, E'' byte checks, case folding."""
from __future__ import annotations

import pytest
from sqlglot import exp

from rw_cli.errors import SqlSyntaxError
from rw_cli.sql.dialect import Explain, parse_statement


@pytest.mark.parametrize("sql,flags,rest", [
    ("create table t (a int) append only", {"append_only": True}, "CREATE TABLE t (a INT)"),
    ("create table t (a int) on conflict do nothing", {"on_conflict": "do nothing"}, "CREATE TABLE t (a INT)"),
    ("create table t (a int primary key) append only on conflict do update full",
     {"append_only": True, "on_conflict": "do update full"}, "CREATE TABLE t (a INT PRIMARY KEY)"),
    ("create table t (a int primary key) on conflict do  update if not null",
     {"on_conflict": "do update if not null"}, "CREATE TABLE t (a INT PRIMARY KEY)"),
    ("create materialized view m as select 1 emit on window close", {"emit_on_window_close": True},
     "CREATE MATERIALIZED VIEW m AS SELECT 1"),
])
def test_table_clauses_are_flags(sql, flags, rest):
    tree = parse_statement(sql)
    assert isinstance(tree, exp.Create) and tree.sql() == rest
    for key, value in flags.items():
        assert tree.args.get(key) == value


def test_set_time_zone_is_a_setting():
    assert parse_statement("set time zone 'UTC'").sql() == "SET timezone = 'UTC'"
    assert parse_statement("SET SESSION TIME ZONE 'Europe/Paris'").sql() == "SET SESSION timezone = 'Europe/Paris'"


def test_interval_string_kept_whole():
    assert parse_statement("select interval '-1 day +02:00:00'").sql() == "SELECT INTERVAL '-1 day +02:00:00'"


def test_is_unknown_is_marked():
    null = parse_statement("select x is unknown from t").expressions[0].expression
    assert isinstance(null, exp.Null) and null.meta.get("unknown")
    assert not parse_statement("select x is null from t").expressions[0].expression.meta.get("unknown")


def test_unquoted_names_fold_to_lower_case():
    assert parse_statement('SELECT Foo, "Bar" FROM T').sql() == 'SELECT foo, "Bar" FROM t'


@pytest.mark.parametrize("sql,message,position", [
    ("select E'\\xff'", 'invalid byte sequence for encoding "UTF8": 0xff', 7),
    ("select 1, E'\\303'", 'invalid byte sequence for encoding "UTF8": 0xc3', 10),
    ("select 1; select 2", "expected exactly one statement", 0),
])
def test_syntax_errors(sql, message, position):
    with pytest.raises(SqlSyntaxError) as e:
        parse_statement(sql)
    assert (e.value.message, e.value.position) == (message, position)


def test_valid_escape_bytes():
    assert isinstance(parse_statement("select E'\\xc3\\xa9'"), exp.Select)


def test_explain_offsets_errors_of_its_statement():
    assert isinstance(parse_statement("explain select 1"), Explain)
    with pytest.raises(SqlSyntaxError) as e:
        parse_statement("explain select * fro t")
    assert e.value.position == len("explain select * fro ")
