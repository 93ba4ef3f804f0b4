import textwrap

import pytest

from rw_cli.slt.parser import SltParseError, include_paths, parse, parse_duration


def p(text):
    return parse(textwrap.dedent(text).lstrip("\n"), "/x/f.slt")


def test_statement_ok_and_comment():
    recs = p("""
        # a comment
        statement ok
        create table t (v int);

        statement count 3
        insert into t values (1), (2),
          (3);
    """)
    assert [(r.kind, r.line, r.sql, r.expect_error) for r in recs] == [
        ("statement", 2, "create table t (v int);", False),
        ("statement", 5, "insert into t values (1), (2),\n  (3);", False),
    ]


def test_sql_comment_lines_between_records_are_comments():
    """A `-- ...` line before a record (RisingWave's files have them) does not swallow the
    record after it; inside a record's SQL it stays part of the SQL."""
    recs = p("""
        -- the table
        statement ok
        create table t (v int);

        -- this one counts too
        query I
        -- a comment inside the query
        select 1;
        ----
        1
    """)
    assert [(r.kind, r.line) for r in recs] == [("statement", 2), ("query", 6)]
    assert recs[1].sql == "-- a comment inside the query\nselect 1;"


def test_statement_error_regex():
    (r,) = p("""
        statement error cannot cast type "integer" to "date"
        select date(1);
    """)
    assert r.expect_error and r.error_regex == 'cannot cast type "integer" to "date"'
    assert r.sql == "select date(1);"


def test_statement_error_multiline_text():
    recs = p("""
        statement error
        create materialized view v5 as select 1
        ----
        db error: ERROR: Failed to run the query

        Caused by:
          Invalid input syntax: bad


        statement ok
        drop table txx;
    """)
    assert len(recs) == 2
    assert recs[0].error_regex is None
    assert recs[0].error_text.startswith("db error") and "Caused by:" in recs[0].error_text
    assert recs[1].sql == "drop table txx;"


def test_query_with_modes():
    recs = p("""
        query IT rowsort label-1
        select v, s from t;
        ----
        1 a
        2   b

        query I
        select 1 where false;

        query error Scalar subquery produced more than one row
        select (select x from t) x;

        query T nosort
        select 'x'
        ----
        x
    """)
    assert [r.kind for r in recs] == ["query"] * 4
    a, b, c, d = recs
    assert (a.types, a.sort_mode, a.label, a.expected) == ("IT", "rowsort", "label-1", ["1 a", "2   b"])
    assert b.expected == [] and b.sql == "select 1 where false;"
    assert c.expect_error and c.error_regex == "Scalar subquery produced more than one row"
    assert d.sort_mode == "nosort" and d.expected == ["x"]


def test_first_line_after_header_is_sql_even_when_blank():
    (r,) = p("statement ok\n\nselect 1;\n\nstatement ok\nselect 2;\n")[:1]
    # the blank line does not end the record: the SQL continues to the next blank line
    assert r.sql == "select 1;"


def test_retry_backoff():
    (r,) = p("""
        query I rowsort retry 60 backoff 1s
        select v1 from t;
        ----
        1
    """)
    assert (r.sort_mode, r.retry, r.backoff_s, r.expected) == ("rowsort", 60, 1.0, ["1"])


def test_conditions_and_controls():
    recs = p("""
        skipif risingwave
        statement ok
        select 1;

        onlyif postgres
        query I
        select 1;
        ----
        1

        onlyif risingwave
        statement ok
        select 2;

        control sortmode rowsort
        hash-threshold 8
        sleep 500ms
        include ./other/*.slt.part
        halt
    """)
    kinds = [r.kind for r in recs]
    assert kinds == ["statement", "query", "statement", "control", "hash-threshold", "sleep", "include", "halt"]
    assert [r.applies() for r in recs[:3]] == [False, False, True]
    assert recs[3].arg == "rowsort" and recs[5].arg == "500ms" and recs[6].arg == "./other/*.slt.part"


def test_unknown_record_is_skipped_with_its_body():
    recs = p("""
        system ok
        echo hi

        statement ok
        select 1;
    """)
    assert [r.kind for r in recs] == ["unsupported", "statement"]


def test_bad_statement_mode():
    with pytest.raises(SltParseError):
        p("statement maybe\nselect 1;\n")


@pytest.mark.parametrize("text,secs", [("1s", 1), ("500ms", 0.5), ("2m", 120), ("3", 3)])
def test_duration(text, secs):
    assert parse_duration(text) == secs


def test_include_paths(tmp_path):
    (tmp_path / "b.slt.part").write_text("")
    (tmp_path / "a.slt.part").write_text("")
    (r,) = parse("include ./*.slt.part\n", str(tmp_path / "main.slt"))
    assert include_paths(r) == [str(tmp_path / "a.slt.part"), str(tmp_path / "b.slt.part")]
    (r,) = parse(f"include {tmp_path}/a.slt.part\n", "/elsewhere/main.slt")
    assert include_paths(r) == [f"{tmp_path}/a.slt.part"]


def test_real_conformance_files_parse():
    import glob
    import os

    root = "/work/shared/conformance/e2e_test"
    if not os.path.isdir(root):
        pytest.skip("no conformance suite")
    files = sorted(glob.glob(root + "/**/*.slt*", recursive=True))
    total = 0
    for f in files:
        try:
            total += sum(r.counted for r in parse(open(f, encoding="utf-8").read(), f))
        except SltParseError:
            raise
    assert total > 1000


def test_an_empty_block_after_an_error_regex_ends_at_the_blank_line():
    # RisingWave's files write `query error <regex>` with an empty `----` block; the record after
    # it must still run (a multi-line error text is read only when the header has no regex)
    recs = p("""
        query error not found
        select * from sink limit 0;
        ----

        query I
        select 1;
        ----
        1
    """)
    assert [r.kind for r in recs] == ["query", "query"]
    assert recs[0].error_regex == "not found" and not recs[0].error_text
    assert recs[1].expected == ["1"]
