"""TEMPORARY STUB (replaced by the full module from branch rustdec)."""
from __future__ import annotations

import decimal

NAN, POS_INF, NEG_INF = "NaN", "Infinity", "-Infinity"
MAX_SCALE = 28
MAX_MANTISSA = 2 ** 96 - 1


class NumericError(ValueError):
    pass


def _from_dec(d: decimal.Decimal):
    if d.is_nan():
        return NAN
    if d.is_infinite():
        return POS_INF if d > 0 else NEG_INF
    sign, digits, exp = d.as_tuple()
    m = int("".join(map(str, digits)) or "0")
    s = max(0, -exp)
    if exp > 0:
        m *= 10 ** exp
    if s > MAX_SCALE:
        d = d.quantize(decimal.Decimal(1).scaleb(-MAX_SCALE), context=decimal.Context(prec=100))
        return _from_dec(d)
    if m > MAX_MANTISSA:
        raise NumericError("Numeric out of range")
    return (-m if sign else m, s)


def _to_dec(v) -> decimal.Decimal:
    if isinstance(v, str):
        return decimal.Decimal(v)
    m, s = v
    return decimal.Decimal(m).scaleb(-s)


def parse(text: str):
    t = text.strip().lower()
    if t in ("nan",):
        return NAN
    if t in ("inf", "+inf", "infinity", "+infinity"):
        return POS_INF
    if t in ("-inf", "-infinity"):
        return NEG_INF
    try:
        return _from_dec(decimal.Decimal(t))
    except decimal.InvalidOperation:
        raise NumericError(f'invalid input syntax for type numeric: "{text}"') from None


def to_text(v) -> str:
    if isinstance(v, str):
        return v
    m, s = v
    sign = "-" if m < 0 else ""
    digits = str(abs(m)).rjust(s + 1, "0")
    return sign + (digits[:-s] + "." + digits[-s:] if s else digits)


_CTX = decimal.Context(prec=200)


def add(a, b):
    return _from_dec(_CTX.add(_to_dec(a), _to_dec(b)))


def sub(a, b):
    return _from_dec(_CTX.subtract(_to_dec(a), _to_dec(b)))


def mul(a, b):
    return _from_dec(_CTX.multiply(_to_dec(a), _to_dec(b)))


def div(a, b):
    if _to_dec(b) == 0:
        raise NumericError("Division by zero")
    q = decimal.Context(prec=28).divide(_to_dec(a), _to_dec(b))
    return _from_dec(q)


def rem(a, b):
    if _to_dec(b) == 0:
        raise NumericError("Division by zero")
    return _from_dec(_CTX.remainder(_to_dec(a), _to_dec(b)))


def neg(a):
    return _from_dec(-_to_dec(a))


def from_int(i: int):
    return (i, 0)


def to_f64(a) -> float:
    return float(_to_dec(a))


def from_f64(x: float):
    return _from_dec(decimal.Decimal(repr(x)))


def compare(a, b) -> int:
    x, y = _to_dec(a), _to_dec(b)
    return (x > y) - (x < y)


def from_f32(x: float):
    import numpy as np
    return _from_dec(decimal.Decimal(str(np.float32(x))))


def to_f32(a) -> float:
    return float(_to_dec(a))


def abs_(a):
    return a if isinstance(a, str) else (abs(a[0]), a[1])


def sign(a):
    if isinstance(a, str):
        return a if a == NAN else (1 if a == POS_INF else -1, 0)
    return ((a[0] > 0) - (a[0] < 0), 0)


def round_dp(a, dp):
    if isinstance(a, str):
        return a
    m, s = a
    if dp >= s:
        return a
    q = _to_dec(a).quantize(decimal.Decimal(1).scaleb(-dp), rounding=decimal.ROUND_HALF_UP, context=_CTX)
    return _from_dec(q)


def round_(a):
    return round_dp(a, 0)


def trunc_dp(a, dp):
    if isinstance(a, str):
        return a
    m, s = a
    if dp >= s:
        return a
    q = _to_dec(a).quantize(decimal.Decimal(1).scaleb(-dp), rounding=decimal.ROUND_DOWN, context=_CTX)
    return _from_dec(q)


def trunc(a):
    return trunc_dp(a, 0)


def floor(a):
    if isinstance(a, str):
        return a
    return _from_dec(_to_dec(a).quantize(decimal.Decimal(1), rounding=decimal.ROUND_FLOOR, context=_CTX))


def ceil(a):
    if isinstance(a, str):
        return a
    return _from_dec(_to_dec(a).quantize(decimal.Decimal(1), rounding=decimal.ROUND_CEILING, context=_CTX))


def trim_scale(a):
    if isinstance(a, str):
        return a
    m, s = a
    while s > 0 and m % 10 == 0:
        m, s = m // 10, s - 1
    return m, s


def scale(a):
    return None if isinstance(a, str) else a[1]


def min_scale(a):
    return None if isinstance(a, str) else trim_scale(a)[1]


def to_int(a, bits):
    if isinstance(a, str):
        raise NumericError("integer out of range")
    v = int(_to_dec(a).quantize(decimal.Decimal(1), rounding=decimal.ROUND_HALF_UP, context=_CTX))
    if not -(1 << (bits - 1)) <= v < (1 << (bits - 1)):
        raise NumericError({16: "smallint", 32: "integer", 64: "bigint"}[bits] + " out of range")
    return v
