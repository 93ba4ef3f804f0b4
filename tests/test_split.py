import pytest

from rw_cli.sql.split import is_complete, split_statements, why_incomplete

SPLIT_CASES = [
    ("", []),
    ("   ;  ; ", []),
    ("select 1", [("select 1", 0)]),
    ("select 1;", [("select 1", 0)]),
    ("select 1; select 2;", [("select 1", 0), ("select 2", 10)]),
    ("  select 1  ;\n\n  select 2", [("select 1", 2), ("select 2", 17)]),
    ("select ';';", [("select ';'", 0)]),
    ("select 'it''s;';", [("select 'it''s;'", 0)]),
    ("select E'a\\';b'; select 2", [("select E'a\\';b'", 0), ("select 2", 17)]),
    ("select e'\\\\'; select 2", [("select e'\\\\'", 0), ("select 2", 14)]),
    # a standard string: backslash is not an escape
    ("select 'a\\'; select 2", [("select 'a\\'", 0), ("select 2", 13)]),
    ('select ";" from t; x', [('select ";" from t', 0), ("x", 19)]),
    ('select "a""b;" ;', [('select "a""b;"', 0)]),
    ("select $$a;b$$; x", [("select $$a;b$$", 0), ("x", 16)]),
    ("select $fn$ $$; $fn$; x", [("select $fn$ $$; $fn$", 0), ("x", 22)]),
    ("select a$b; x", [("select a$b", 0), ("x", 12)]),
    ("select $1; x", [("select $1", 0), ("x", 11)]),
    ("select 1 -- c;\n; x", [("select 1", 0), ("x", 17)]),
    ("-- only a comment\nselect 1;", [("select 1", 18)]),
    ("select /* ; /* ; */ ; */ 1; x", [("select /* ; /* ; */ ; */ 1", 0), ("x", 28)]),
    ("select (1;2); x", [("select (1;2)", 0), ("x", 14)]),
    ("select a[1;2]; x", [("select a[1;2]", 0), ("x", 15)]),
    ("select 1; -- trailing", [("select 1", 0)]),
    ("select 1; /* trailing */", [("select 1", 0)]),
    ("select 'unterminated;", [("select 'unterminated;", 0)]),
]


@pytest.mark.parametrize("text,expected", SPLIT_CASES)
def test_split(text, expected):
    assert split_statements(text) == expected
    for stmt, off in split_statements(text):
        assert text[off:off + len(stmt)] == stmt


COMPLETE_CASES = [
    ("", True, None),
    ("   \n", True, None),
    ("select 1", False, None),
    ("select 1;", True, None),
    ("select 1;  \n", True, None),
    ("select 1; -- done", True, None),
    ("select 1 -- ;", False, None),
    ("select 1; select", False, None),
    ("select ';", False, "'"),
    ("select 'a''", False, "'"),
    ("select E'\\';", False, "'"),
    ("select E'\\'';", True, None),
    ('select "a;', False, '"'),
    ("select $$;", False, "$$"),
    ("select $f$ $$ ;", False, "$f$"),
    ("select $f$ ; $f$;", True, None),
    ("select /* ;", False, "/*"),
    ("select /* /* */ ;", False, "/*"),
    ("select /* /* */ */ 1;", True, None),
    ("select (1;", False, "("),
    ("select (1);", True, None),
    ("select a[1;", False, "["),
    ("\\q", True, None),
    ("  \\d t", True, None),
    ("\\dt", True, None),
]


@pytest.mark.parametrize("text,complete,why", COMPLETE_CASES)
def test_is_complete(text, complete, why):
    assert is_complete(text) is complete
    assert why_incomplete(text) == why


REAL = [
    "CREATE TABLE t (v1 int, v2 varchar);",
    "INSERT INTO t VALUES (1, 'a;b'), (2, E'it\\'s');",
    "CREATE MATERIALIZED VIEW mv AS SELECT v1, count(*) AS c FROM t GROUP BY v1;",
    "SELECT $$dollar ; quoted$$, $tag$ a $$ b ; $tag$;",
    "/* header /* nested ; */ */ SELECT \"weird;name\" FROM t -- comment ;\n WHERE v1 > (select 1);",
    "SELECT * FROM tumble(t, ts, interval '1 day') WHERE x IN (1, 2);",
]


@pytest.mark.parametrize("stmt", REAL)
def test_every_prefix_of_real_statements(stmt):
    # only the whole statement is complete; every proper prefix that has content is not
    for k in range(1, len(stmt)):
        prefix = stmt[:k]
        if prefix.strip():
            assert not is_complete(prefix), prefix
    assert is_complete(stmt)
    assert why_incomplete(stmt) is None
    assert split_statements(stmt) == [(stmt[:-1].rstrip(), 0)] or split_statements(stmt)[0][1] > 0
    # two statements in a row split into exactly two
    both = stmt + "\n" + stmt
    assert len(split_statements(both)) == 2


@pytest.mark.parametrize("text,sql,meta", [
    ("select 1", "select 1", None),
    ("select 1 \\watch 2", "select 1 ", "\\watch 2"),
    ("select '\\x' \\g", "select '\\x' ", "\\g"),
    ("select E'\\\\' \\g", "select E'\\\\' ", "\\g"),
    ("select 1 -- \\x\n", "select 1 -- \\x\n", None),
    ("select 1; \\x on", "select 1; ", "\\x on"),
    ("\\d t", "", "\\d t"),
])
def test_split_meta(text, sql, meta):
    from rw_cli.sql.split import split_meta

    assert split_meta(text) == (sql, meta)
    assert is_complete(text) is (meta is not None or text.rstrip().endswith(";"))


def test_split_statements_keeps_backslashes():  # the session reports them as syntax errors
    assert split_statements("select 1 \\watch 2") == [("select 1 \\watch 2", 0)]


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_PIECES = ["select", " ", "1", ";", "'", "''", '"', "$$", "$t$", "--", "\n", "/*", "*/", "(", ")",
           "[", "]", "E'", "\\", "a", ","]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=25))
def test_fuzz_submit_rule(pieces):
    text = "".join(pieces)
    why = why_incomplete(text)
    complete = is_complete(text)
    if text.strip() and not text.lstrip().startswith("\\"):
        # a `;` on a fresh line finishes the text exactly when nothing is open
        assert is_complete(text + "\n;") is (why is None) or "\\" in text
    if why is not None and "\\" not in text:
        assert not complete
    for stmt, off in split_statements(text):
        assert text[off:off + len(stmt)] == stmt
        assert why is not None or "\\" in text or stmt.strip() == stmt
