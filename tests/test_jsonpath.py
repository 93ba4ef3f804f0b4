"""SQL/JSON path (rw_cli.common.jsonpath): each case's expected items are PostgreSQL 15's
(`jsonb_path_query(doc, path, vars)`, run against a real server when these were written)."""
import json
import re
from decimal import Decimal

import pytest

from rw_cli.common.jsonpath import JsonPathError, compile_path
from rw_cli.common.pg_json import jsonb_text

DOC = json.loads('{"a": [1, 2, 3, 4, 5], "items": [{"name": "x", "q": 2, "sev": "critical"}, '
                 '{"name": "y", "q": 5, "sev": "low"}], "k": [1, 2, {"z": 3}], "s": "hello"}', parse_float=Decimal)
VARS = {"min": 2, "max": 4}


@pytest.mark.parametrize("path,expected", [
    ("$.a[*] ? (@ >= $min && @ <= $max)", "[2, 3, 4]"),
    ("$.k[*]", '[1, 2, {"z": 3}]'),
    ('$.items[*] ? (@.sev == "critical").name', '["x"]'),
    ("$.a.size()", "[5]"),
    ("$.a[0, 2 to last]", "[1, 3, 4, 5]"),
    ('$.s starts with "he"', "[true]"),
    ('$.s like_regex "^H" flag "i"', "[true]"),
    ("exists($.nope)", "[false]"),
    ("$.items.name", '["x", "y"]'),                    # lax: the array is unwrapped
    ("$.a ? (@ > 3)", "[4, 5]"),
    ("$.a[*] > 4", "[true]"),
    ("$.s > 1", "[null]"),                             # not comparable: unknown
    ("($.s > 1) is unknown", "[true]"),
    ("-$.a[*]", "[-1, -2, -3, -4, -5]"),
    ("$.a[4] % 3", "[2]"),
    ('$ ? (@.s == "hello").s', '["hello"]'),
    ("$.a[10]", "[]"),                                 # lax: out of bounds is no item
    ("$.a[*] ? (@ > 1 || @ == 1)", "[1, 2, 3, 4, 5]"),
    ("$.a[1.7]", "[2]"),
    ("$.a[-1]", "[]"),
    ("$.s.size()", "[1]"),
    ("$.a.type()", '["array"]'),
    ("$.items[0].q * 2.5", "[5.0]"),
    ("$.**.z", "[3, 3]"),
    ("$.a[*] ? (!(@ > 2))", "[1, 2]"),
    ("$.a == $.a", "[true]"),
    ("$.a[*] ? (@ == $min)", "[2]"),
    ("$.**{2}", '[1, 2, 3, 4, 5, {"name": "x", "q": 2, "sev": "critical"}, {"name": "y", "q": 5, "sev": "low"}, '
                '1, 2, {"z": 3}]'),
])
def test_items_are_postgresql_s(path, expected):
    got = compile_path(path).query(DOC, VARS)
    assert json.loads(jsonb_text(got)) == json.loads(expected)


@pytest.mark.parametrize("path,message", [
    ("strict $.nope", 'JSON object does not contain key "nope"'),
    ("strict $.a[10]", "jsonpath array subscript is out of bounds"),
    ("strict $.s[*]", "jsonpath wildcard array accessor can only be applied to an array"),
    ("$.a[*] + 1", "left operand of jsonpath operator + is not a single numeric value"),
    ("$.a[0] / 0", "division by zero"),
    ("$.a ? (@ > $nope)", 'could not find jsonpath variable "nope"'),
])
def test_errors(path, message):
    with pytest.raises(JsonPathError, match=re.escape(message)):
        compile_path(path).query(DOC, VARS)


@pytest.mark.parametrize("path", ["$.a[", "$$", "$.a ? @ > 1", "foo", "$.a like_regex 1"])
def test_syntax_errors(path):
    with pytest.raises(JsonPathError, match="syntax error"):
        compile_path(path)


def test_match_wants_one_boolean():
    assert compile_path("$.a[0] == 1").match(DOC) is True
    with pytest.raises(JsonPathError, match="single boolean result is expected"):
        compile_path("$.a").match(DOC)
