import datetime as dt
from decimal import Decimal

import pyarrow as pa
import pytest

from rw_cli.common import types as T
from rw_cli.common.pg_text import (format_column, format_float4, format_float8, format_interval,
                                   format_value_slt)


def fmt(values, t, arrow_type=None):
    arr = pa.array(values, type=arrow_type or t.arrow())
    return format_column(arr, t)


def test_boolean():
    assert fmt([True, False, None], T.BOOLEAN) == ["t", "f", None]


@pytest.mark.parametrize("t", [T.SMALLINT, T.INTEGER, T.BIGINT])
def test_integers(t):
    assert fmt([1, -2, None, 0], t) == ["1", "-2", None, "0"]


def test_chunked():
    col = pa.chunked_array([pa.array([1, 2], pa.int32()), pa.array([None, 4], pa.int32())])
    assert format_column(col, T.INTEGER) == ["1", "2", None, "4"]
    assert format_column(pa.chunked_array([], pa.int32()), T.INTEGER) == []


@pytest.mark.parametrize("v,text", [
    (1.5, "1.5"), (0.1, "0.1"), (3.0, "3"), (-3.0, "-3"), (1e20, "1e+20"), (1.5e20, "1.5e+20"),
    (1e15, "1000000000000000"), (1e16, "1e+16"), (1e-5, "0.00001"), (1e-6, "1e-06"),
    (1.25e-7, "1.25e-07"), (float("inf"), "Infinity"), (float("-inf"), "-Infinity"),
    (float("nan"), "NaN"), (0.0, "0"), (-0.0, "-0"), (123456.789, "123456.789"),
    (0.30000000000000004, "0.30000000000000004"), (1e300, "1e+300"), (2.5e-300, "2.5e-300"),
])
def test_float8(v, text):
    assert format_float8(v) == text


@pytest.mark.parametrize("v,text", [
    (0.1, "0.1"), (1.5, "1.5"), (3.0, "3"), (1e20, "1e+20"), (1e12, "1000000000000"),
    (1e13, "1e+13"), (float("nan"), "NaN"), (3.14159, "3.14159"),
])
def test_float4(v, text):
    assert format_float4(v) == text


def test_float_columns():
    assert fmt([1.5, None, 2.0], T.DOUBLE) == ["1.5", None, "2"]
    assert fmt([0.1, None], T.REAL) == ["0.1", None]


def test_a_long_float8_column_is_formatted_as_each_value_is():
    """Past a few rows a double column is formatted as a whole (Python's repr, fixed up by
    Arrow kernels): the same text as `format_float8` for every value, from random bit
    patterns (every exponent, subnormals, NaNs) to the edges of positional notation."""
    import math
    import random
    import struct

    r = random.Random(5)
    values = [struct.unpack("<d", struct.pack("<Q", r.getrandbits(64)))[0] for _ in range(20000)]
    for e in range(-25, 25):
        values += [m * 10.0 ** e for m in (1.0, -1.0, 1.5, 9.999999, 123456.789)]
    values += [0.0, -0.0, math.inf, -math.inf, math.nan, 5e-324, 1.7976931348623157e308, 2.0 ** 53, None]
    want = [None if v is None else format_float8(v) for v in values]
    assert fmt(values, T.DOUBLE) == want


@pytest.mark.parametrize("t,arrow_type", [(T.TIMESTAMP, pa.timestamp("us")), (T.TIMESTAMPTZ, pa.timestamp("us", "UTC")),
                                          (T.TIME, pa.time64("us")), (T.TIMESTAMP, pa.timestamp("ns"))])
def test_whole_seconds_are_cast_at_seconds_as_fractions_are_trimmed(t, arrow_type):
    """A column of whole seconds is cast at a unit of seconds (no fraction to trim): the same
    text as the trimming of a column that also holds a fraction."""
    per = 1000 if arrow_type.unit == "ns" else 1
    ticks = [(i * 7919 - 50_000) * 1_000_000 * per for i in range(3000)]
    if t == T.TIME:
        ticks = [v % (86_400 * 1_000_000) for v in ticks]
    whole = format_column(pa.array(ticks + [None], pa.int64()).cast(arrow_type), t)
    mixed = format_column(pa.array(ticks + [None, 1500 * per], pa.int64()).cast(arrow_type), t)
    assert whole == mixed[:-1] and "." not in whole[0] and "." in mixed[-1]


def test_numeric_prints_each_value_with_its_own_scale():
    """numeric keeps a scale per value, as RisingWave's rust_decimal does: 1.50 prints 1.50."""
    from rw_cli.common import numeric
    from rw_cli.common import rust_decimal as rd

    texts = ["5727.60", "-0.5", "100", "0", None, "1.23", "0.00000001", "NaN", "-Infinity",
             "79228162514264337593543950335", "-0.0000000000000000000000000001"]
    col = numeric.pack([None if v is None else rd.parse(v) for v in texts])
    assert format_column(col, T.NUMERIC) == texts


def test_numeric_of_an_arrow_decimal_prints_its_type_scale():
    """A decimal an engine hands back (Parquet's, DuckDB's) prints with its type's scale."""
    arr = pa.array([Decimal("1.5"), Decimal("2.125"), None], pa.decimal128(38, 3))
    assert format_column(arr, T.NUMERIC) == ["1.500", "2.125", None]


def test_varchar_and_jsonb():
    assert fmt(["a b", "", None], T.VARCHAR) == ["a b", "", None]
    assert fmt(['{"a": 1}', None], T.JSONB) == ['{"a": 1}', None]
    assert format_column(pa.array(["x"], pa.large_string()), T.VARCHAR) == ["x"]


def test_date_time():
    assert fmt([dt.date(2020, 1, 2), None], T.DATE) == ["2020-01-02", None]
    assert fmt([dt.time(1, 2, 3), dt.time(1, 2, 3, 500000), dt.time(0, 0, 0, 1)], T.TIME) == [
        "01:02:03", "01:02:03.500", "00:00:00.000001"]  # RisingWave: 3 or 6 fraction digits


def test_timestamp():
    vals = [dt.datetime(2020, 1, 2, 3, 4, 5), dt.datetime(2020, 1, 2, 3, 4, 5, 120000), None]
    assert fmt(vals, T.TIMESTAMP) == ["2020-01-02 03:04:05", "2020-01-02 03:04:05.120", None]
    assert fmt(vals, T.TIMESTAMPTZ) == ["2020-01-02 03:04:05+00:00", "2020-01-02 03:04:05.120+00:00", None]


def mdn(m, d, ns):
    return pa.MonthDayNano([m, d, ns])


@pytest.mark.parametrize("m,d,ns,text", [
    (0, 0, 0, "00:00:00"),
    (14, 3, (4 * 3600 + 5 * 60 + 6) * 10**9 + 500_000_000, "1 year 2 mons 3 days 04:05:06.5"),
    (0, 21, (23 * 3600 + 59 * 60 + 59) * 10**9, "21 days 23:59:59"),
    (0, -1, 0, "-1 days"),
    (0, 0, -10**9, "-00:00:01"),
    (12, 0, 0, "1 year"),
    (1, 1, 0, "1 mon 1 day"),
    (-50, 0, 0, "-4 years -2 mons"),
    (6000, 0, 0, "500 years"),
    (-13, -1, (4 * 3600 + 5 * 60 + 6) * 10**9, "-1 years -1 mons -1 days +04:05:06"),
    (0, 0, 5 * 60 * 10**9, "00:05:00"),
    (1, 1, 1000, "1 mon 1 day 00:00:00.000001"),
    (0, 0, 2562047 * 3600 * 10**9 + 54_775_807_000, "2562047:00:54.775807"),
    (0, 0, -(2562047 * 3600 * 10**9 + 54_775_808_000), "-2562047:00:54.775808"),
])
def test_interval(m, d, ns, text):
    assert format_interval(mdn(m, d, ns)) == text
    assert format_column(pa.array([mdn(m, d, ns), None], pa.month_day_nano_interval()), T.INTERVAL) == [text, None]


def test_interval_timedelta():
    assert format_interval(dt.timedelta(days=2, seconds=3)) == "2 days 00:00:03"


def test_bytea():
    assert fmt([b"\x00\xffab", b"", None], T.BYTEA) == ["\\x00ff6162", "\\x", None]


def test_null_column():
    assert format_column(pa.nulls(2), T.VARCHAR) == [None, None]


def test_slt_value():
    assert format_value_slt(None) == "NULL"
    assert format_value_slt("") == "(empty)"
    assert format_value_slt("x y") == "x y"


def test_numeric_with_more_digits_than_decimals_default_context():
    """A numeric(38,10) value has 38 digits; Python's default context stops at 28 (this
    crashed `rw slt` on TPC-H's sums)."""
    from decimal import Decimal

    from rw_cli.common.pg_text import format_numeric

    assert format_numeric(Decimal("1234567890123456789012345678.1234567890"), 10) == \
        "1234567890123456789012345678.1234567890"
    assert format_numeric(Decimal("9" * 38), 0) == "9" * 38
