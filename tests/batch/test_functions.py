"""Table-driven tests for the pure PostgreSQL helpers behind the DuckDB rewrites."""
from __future__ import annotations

import pytest

from rw_cli.engine.duck_functions import _encode, bytea_in, jsonb_in
from rw_cli.sql.functions import _similar_to_regex
from rw_cli.common.pg_interval import IntervalError, justify_days, justify_hours, parse_interval, scale_interval

US = 1_000_000
DAY = 86_400 * US


@pytest.mark.parametrize("text, expected", [
    ("1 day", (0, 1, 0)),
    ("1 year 2 mons 3 days 04:05:06.5", (14, 3, (4 * 3600 + 5 * 60 + 6) * US + US // 2)),
    ("-1 year -2 months +3 days", (-14, 3, 0)),
    ("- 1 year -1 months -       1 days 4 hours 5 minutes 6 seconds", (-13, -1, (4 * 3600 + 5 * 60 + 6) * US)),
    ("1.5 days", (0, 1, 12 * 3600 * US)),
    ("1.5 months", (1, 15, 0)),
    ("P1Y2M3DT4H5M6S", (14, 3, (4 * 3600 + 5 * 60 + 6) * US)),
    ("P0Y0M0DT0H0M0S", (0, 0, 0)),
    ("12:34:56.1234565", (0, 0, 45296123456)),  # microseconds round half to even
    ("12:34:56.1234555", (0, 0, 45296123456)),
    ("90", (0, 0, 90 * US)),
    ("@ 1 day ago", (0, -1, 0)),
    ("-1 day +02:00:00", (0, -1, 2 * 3600 * US)),
    ("1 day 2:", (0, 1, 2 * 3600 * US)),  # RisingWave reads 'h:' as hours (PostgreSQL rejects it)
    ("P1DT0.1234567S", (0, 1, 123456)),  # ISO 8601 seconds truncated to the microsecond
])
def test_parse_interval(text, expected):
    assert parse_interval(text) == expected


@pytest.mark.parametrize("text", ["", "1 fortnight", "abc", "1 day :2", "P0Y0M0DT0H0M0S1"])
def test_parse_interval_errors(text):
    with pytest.raises(IntervalError):
        parse_interval(text)


def test_justify_and_scale():
    assert justify_hours(0, 0, 27 * 3600 * US) == (0, 1, 3 * 3600 * US)
    assert justify_days(0, 35, 0) == (1, 5, 0)
    assert scale_interval(0, 0, 3, 2, divide=True) == (0, 0, 2)   # 1.5us -> 2 (half to even)
    assert scale_interval(0, 0, 5, 2, divide=True) == (0, 0, 2)   # 2.5us -> 2
    assert scale_interval(1, 0, 0, 1.5) == (1, 15, 0)
    with pytest.raises(IntervalError):
        scale_interval(1, 0, 0, 0, divide=True)


@pytest.mark.parametrize("text, expected", [
    ("\\xc3b1", b"\xc3\xb1"),
    ("\\303\\261", b"\xc3\xb1"),
    ("a\\\\b", b"a\\b"),
    ("plain", b"plain"),
])
def test_bytea_in(text, expected):
    assert bytea_in(text) == expected


@pytest.mark.parametrize("data, fmt, expected", [
    (b"\xc3\xb1", "escape", "\\303\\261"),
    (b"123\x00\x01", "base64", "MTIzAAE="),
    (b"joanna", "hex", "6a6f616e6e61"),
])
def test_encode(data, fmt, expected):
    assert _encode(data, fmt) == expected


@pytest.mark.parametrize("text, expected", [
    ('{"b": 1, "a": 2}', '{"a": 2, "b": 1}'),
    ('{"aa":1,"b":{"y":[1,2.50,null,true],"x":"s"}}', '{"aa": 1, "b": {"x": "s", "y": [1, 2.5, null, true]}}'),
    ('[1, "a"]', '[1, "a"]'),
])
def test_jsonb_text(text, expected):
    assert jsonb_in(text) == expected


@pytest.mark.parametrize("pattern, regex", [
    ("(a|h)%", "(a|h).*"), ("a_c", "a.c"), ("a.b%", "a\\.b.*"),
])
def test_similar_to(pattern, regex):
    assert _similar_to_regex(pattern) == regex
