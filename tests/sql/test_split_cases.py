"""Statement splitting: quoting and bracketing cases beyond tests/test_split.py."""
from __future__ import annotations

import pytest

from rw_cli.sql.split import split_statements, why_incomplete


@pytest.mark.parametrize("text,expected", [
    ("select (';'); x", [("select (';')", 0), ("x", 14)]),  # a quoted ; inside brackets
    ("select '--'; x", [("select '--'", 0), ("x", 13)]),  # comment openers inside strings
    ("select '/*'; x", [("select '/*'", 0), ("x", 13)]),
    ("select $é$ ; $é$; x", [("select $é$ ; $é$", 0), ("x", 18)]),  # a non-ASCII dollar tag
    ("select $$a$$b$$; x", [("select $$a$$b$$", 0), ("x", 17)]),  # `b$$` continues an identifier
    ("select a$1$; x", [("select a$1$", 0), ("x", 13)]),
    ("select $1$ ; x", [("select $1$", 0), ("x", 13)]),  # `$1` is a parameter, not a tag
    ('select """" ; x', [('select """"', 0), ("x", 14)]),  # a doubled quote in an identifier
    ("select b'1;0'; x", [("select b'1;0'", 0), ("x", 15)]),  # bit and hex strings
    ("select x'ff;'; x", [("select x'ff;'", 0), ("x", 15)]),
    ("select U&'d;'; x", [("select U&'d;'", 0), ("x", 15)]),
    ("select 1;;; select 2", [("select 1", 0), ("select 2", 12)]),
    ("select 1\n-- a ; b\n; select 2", [("select 1", 0), ("select 2", 20)]),
    ("select 1 /* a */; x", [("select 1", 0), ("x", 18)]),  # a trailing comment is not part of it
    ("select ((1); x", [("select ((1); x", 0)]),  # an open bracket swallows the rest
])
def test_split(text, expected):
    assert split_statements(text) == expected


@pytest.mark.parametrize("text,why", [
    ("select ((1);", "("),
    ("select $é$ ;", "$é$"),
    ("select '--';", None),
    ("select 1 /* /* */", "/*"),
])
def test_why_incomplete(text, why):
    assert why_incomplete(text) == why
