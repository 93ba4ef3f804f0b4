"""rw_cli.common.numeric_arith: products and quotients of numerics exact to the stored scale,
rounded half away from zero, out of range only past the stored range."""
from __future__ import annotations

import decimal
import random

import pyarrow as pa
import pytest

from rw_cli.common import numeric_arith
from rw_cli.common.numeric_arith import NUMERIC_ARROW, NumericOutOfRange

_CTX = decimal.Context(prec=100, rounding=decimal.ROUND_HALF_UP)
_STEP = decimal.Decimal("1e-10")


def _arr(values) -> pa.Array:
    return pa.array([None if v is None else decimal.Decimal(v) for v in values], NUMERIC_ARROW)


def _random_values(r: random.Random, n: int) -> list[decimal.Decimal]:
    out = []
    for _ in range(n):
        digits = r.randint(0, 14)
        out.append(decimal.Decimal(r.randint(-10 ** digits, 10 ** digits)).scaleb(-r.randint(0, 10)))
    return out


def test_multiply_is_exact_rounded():
    r = random.Random(3)
    a, b = _random_values(r, 2000), _random_values(r, 2000)
    got = numeric_arith.multiply(_arr(a), _arr(b)).to_pylist()
    assert got == [_CTX.multiply(x, y).quantize(_STEP, context=_CTX) for x, y in zip(a, b)]


def test_divide_is_exact_rounded():
    r = random.Random(5)
    a, b = _random_values(r, 2000), _random_values(r, 2000)
    got = numeric_arith.divide(_arr(a), _arr(b)).to_pylist()
    want = [None if y == 0 else _CTX.divide(x, y).quantize(_STEP, context=_CTX) for x, y in zip(a, b)]
    assert got == want


def test_nulls_and_wide_values():
    a = _arr(["99999999999999999999999999.5", None, "2", "-0.0000000005"])
    b = _arr(["0.5", "3", None, "1"])
    assert numeric_arith.multiply(a, b).to_pylist() == [
        decimal.Decimal("49999999999999999999999999.75"), None, None, decimal.Decimal("-5E-10")]
    wide = _arr(["99999999999999999999999999", "5"])
    assert numeric_arith.divide(wide, wide).to_pylist() == [decimal.Decimal(1), decimal.Decimal(1)]


def test_out_of_range():
    with pytest.raises(NumericOutOfRange):
        numeric_arith.multiply(_arr(["100000000000000"]), _arr(["100000000000000"]))
    with pytest.raises(NumericOutOfRange):
        numeric_arith.divide(_arr(["1000000000000000000000000"]), _arr(["0.0001"]))
