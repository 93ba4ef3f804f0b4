"""PostgreSQL's interval input and arithmetic on (months, days, microseconds)."""
from __future__ import annotations

import pytest

from rw_cli.common.pg_interval import (IntervalError, justify_days, justify_hours, justify_interval, parse_interval,
                                      scale_interval)

H = 3_600_000_000  # microseconds per hour


@pytest.mark.parametrize("text,expected", [
    ("1 day", (0, 1, 0)),
    ("1 year -2 mons +3 days 04:05:06.5", (10, 3, 14_706_500_000)),
    ("P1Y2M3DT4H5M6S", (14, 3, 14_706_000_000)),  # ISO 8601
    ("P1.5Y", (18, 0, 0)),
    ("P1W", (0, 7, 0)),
    ("PT0.0000015S", (0, 0, 1)),  # ISO seconds are truncated to the microsecond
    ("1.5 days", (0, 1, 12 * H)),  # a fraction of a day spills into time
    ("1.5 months", (1, 15, 0)),  # a fraction of a month into days (30 each)
    ("@ 1 day ago", (0, -1, 0)),
    ("3 mins ago", (0, 0, -180_000_000)),
    ("10", (0, 0, 10_000_000)),  # a bare number is seconds
    ("0.5 seconds", (0, 0, 500_000)),
    ("1 us", (0, 0, 1)),
    ("1 h", (0, 0, H)),
    ("1 week", (0, 7, 0)),
    ("1 decade", (120, 0, 0)),
    ("1 millennium", (12_000, 0, 0)),
    ("- 1 year", (-12, 0, 0)),  # a sign apart from its number
    ("+1 day -1 hour", (0, 1, -H)),  # fields keep their own signs
    ("1 day, 2 hours", (0, 1, 2 * H)),
    ("2 hours 30 minutes", (0, 0, 9_000_000_000)),
    ("-1:30", (0, 0, -5_400_000_000)),
    ("1:", (0, 0, H)),  # `1:` is an hour
    ("1:02:03.25", (0, 0, 3_723_250_000)),
    ("100000000 hours", (0, 0, 100_000_000 * H)),
    ("  1 DAY  ", (0, 1, 0)),
])
def test_parse(text, expected):
    assert parse_interval(text) == expected


@pytest.mark.parametrize("text,message", [
    ("", 'invalid input syntax for type interval: ""'),
    ("abc", 'invalid input syntax for type interval: "abc"'),
    ("day", 'invalid input syntax for type interval: "day"'),
    ("1 fortnight", 'invalid input syntax for type interval: "1 fortnight"'),
    ("1:00 2:00", 'invalid input syntax for type interval: "1:00 2:00"'),
    ("3000000000 days", 'interval field value out of range: "3000000000 days"'),
])
def test_parse_errors(text, message):
    with pytest.raises(IntervalError) as e:
        parse_interval(text)
    assert str(e.value) == message


@pytest.mark.parametrize("args,expected", [
    ((0, 0, 25 * H), (0, 1, H)),
    ((0, 1, -H), (0, 0, 23 * H)),  # time and days get one sign
    ((0, -1, H), (0, 0, -23 * H)),
    ((5, 0, 48 * H), (5, 2, 0)),
    ((0, 0, -25 * H), (0, -1, -H)),
])
def test_justify_hours(args, expected):
    assert justify_hours(*args) == expected


@pytest.mark.parametrize("args,expected", [
    ((0, 35, 0), (1, 5, 0)),
    ((1, -5, 0), (0, 25, 0)),  # months and days get one sign
    ((-1, 5, 0), (0, -25, 0)),
    ((0, -65, 0), (-2, -5, 0)),
    ((0, 29, 7), (0, 29, 7)),
])
def test_justify_days(args, expected):
    assert justify_days(*args) == expected


@pytest.mark.parametrize("args,expected", [
    ((1, 0, -H), (0, 29, 23 * H)),  # one sign for months, days and time
    ((-1, 0, H), (0, -29, -23 * H)),
    ((0, 35, 25 * H), (1, 6, H)),
    ((0, 0, 31 * 24 * H), (1, 1, 0)),  # whole days out of the time, then whole months
    ((0, -30, -1), (-1, 0, -1)),
])
def test_justify_interval(args, expected):
    assert justify_interval(*args) == expected


@pytest.mark.parametrize("interval,factor,divide,expected", [
    ((1, 0, 0), 0.5, False, (0, 15, 0)),  # half a month is 15 days
    ((0, 1, 0), 0.5, False, (0, 0, 12 * H)),  # half a day is 12 hours
    ((1, 1, 1), 2, False, (2, 2, 2)),
    ((0, 0, 1), -1, False, (0, 0, -1)),
    ((1, 0, 0), 3, True, (0, 10, 0)),
    ((0, 0, 10), 3, True, (0, 0, 3)),  # rounded to the microsecond
    ((2, 0, 0), 1.5, False, (3, 0, 0)),
])
def test_scale(interval, factor, divide, expected):
    assert scale_interval(*interval, factor, divide=divide) == expected


@pytest.mark.parametrize("interval,factor,divide,message", [
    ((1, 0, 0), 0, True, "Division by zero"),
    ((2**31 - 1, 0, 0), 2, False, "interval out of range"),
])
def test_scale_errors(interval, factor, divide, message):
    with pytest.raises(IntervalError) as e:
        scale_interval(*interval, factor, divide=divide)
    assert str(e.value) == message
