"""Exact products and quotients of numerics, a chunk at a time.

RisingWave multiplies and divides numerics exactly (rust_decimal: 96-bit mantissa, up to 28
digits of scale). DuckDB cannot: a product of two DECIMAL(38,10) is a DECIMAL(38,20) that
overflows past 10^18 (three factors: DECIMAL(38,30), past 10^8), and a quotient of decimals
is a double. These kernels compute both in Arrow's decimal256 and round the result to the
numeric storage type (`NUMERIC_ARROW`, see rw_cli.common.types), so a value overflows only
where the stored numeric cannot hold it, and a quotient is exact to the last stored digit.
Both are used by the DuckDB UDFs behind `*` and `/` of numerics and by the stream's avg, so a
SELECT and a materialized view compute the same digits.
"""
from __future__ import annotations

import decimal

import pyarrow as pa

from rw_cli.common.types import NUMERIC_PRECISION, NUMERIC_SCALE
from rw_cli.common.lazy_import import lazy_import

pc = lazy_import("pyarrow.compute")  # imported on first use: see rw_cli.common.lazy_import

NUMERIC_ARROW = pa.decimal128(NUMERIC_PRECISION, NUMERIC_SCALE)
_MAX_PRECISION = 76  # decimal256
# PostgreSQL rounds half away from zero (so does DuckDB's cast to a narrower scale)
_ROUND = "half_towards_infinity"


class NumericOutOfRange(ValueError):
    """A result the numeric type cannot hold (RisingWave: `Numeric out of range`)."""

    def __init__(self) -> None:
        super().__init__("Numeric out of range")


def _as_numeric(a: pa.Array) -> pa.Array:
    if isinstance(a, pa.ChunkedArray):
        a = a.combine_chunks()
    if a.type == NUMERIC_ARROW:
        return a
    try:
        return a.cast(NUMERIC_ARROW)
    except pa.ArrowInvalid:
        raise NumericOutOfRange() from None


def _digits(a: pa.Array) -> int:
    """How many digits the largest magnitude of `a` has (at scale NUMERIC_SCALE), at least 1."""
    top = pc.max(pc.abs(a)).as_py()
    if top is None or top == 0:
        return 1
    return max(1, len(str(int(top)).lstrip("0"))) + NUMERIC_SCALE


def _narrow(a: pa.Array, precision: int) -> pa.Array:
    return a.cast(pa.decimal256(max(precision, NUMERIC_SCALE + 1), NUMERIC_SCALE))


def _store(wide: pa.Array) -> pa.Array:
    """A decimal256 result rounded to the stored scale, or NumericOutOfRange."""
    rounded = pc.round(wide, NUMERIC_SCALE, round_mode=_ROUND) if wide.type.scale > NUMERIC_SCALE else wide
    try:
        return rounded.cast(pa.decimal256(_MAX_PRECISION, NUMERIC_SCALE)).cast(NUMERIC_ARROW)
    except pa.ArrowInvalid:
        raise NumericOutOfRange() from None


def multiply(a: pa.Array, b: pa.Array) -> pa.Array:
    """a * b, exact, rounded to the stored scale."""
    a, b = _as_numeric(a), _as_numeric(b)
    pa_, pb = _digits(a), _digits(b)
    if pa_ + pb + 1 > _MAX_PRECISION:  # both beyond 10^27: some product surely overflows
        raise NumericOutOfRange()
    return _store(pc.multiply(_narrow(a, pa_), _narrow(b, pb)))


def divide(a: pa.Array, b: pa.Array) -> pa.Array:
    """a / b, rounded to the stored scale; NULL where b is NULL or zero (the caller decides
    what a zero divisor means: an error in a SELECT, NULL in a materialized view)."""
    a, b = _as_numeric(a), _as_numeric(b)
    zero = pc.equal(b, pa.scalar(0, NUMERIC_ARROW))
    if pc.any(zero).as_py():
        b = pc.if_else(zero, pa.scalar(None, NUMERIC_ARROW), b)
    # Arrow's quotient has scale s_a + p_b - s_b + 1 (truncated): p_b >= 12 keeps 13 digits,
    # enough to round to 10; its precision p_a - s_a + s_b + scale must stay within 76
    pb = max(_digits(b), NUMERIC_SCALE + 2)
    pa_ = _digits(a)
    if pa_ + pb + 1 > _MAX_PRECISION:  # a dividend and a divisor both beyond 10^26: rare
        return _divide_per_value(a, b)
    return _store(pc.divide(_narrow(a, pa_), _narrow(b, pb)))


def _divide_per_value(a: pa.Array, b: pa.Array) -> pa.Array:
    ctx = decimal.Context(prec=80, rounding=decimal.ROUND_HALF_UP)
    step = decimal.Decimal(1).scaleb(-NUMERIC_SCALE)
    out = [None if x is None or y is None else ctx.divide(x, y).quantize(step, context=ctx)
           for x, y in zip(a.to_pylist(), b.to_pylist())]
    return _store(pa.array(out, pa.decimal256(_MAX_PRECISION, NUMERIC_SCALE)))
