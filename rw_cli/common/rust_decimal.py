"""RisingWave's `numeric`, bit for bit, on Python ints.

RisingWave stores a numeric as `rust_decimal::Decimal` (a 96-bit mantissa and a scale of 0..28
kept per value, so `1.50` stays `1.50`) wrapped in its own enum that adds NaN, +Infinity and
-Infinity (`risingwave_common::types::Decimal`, since 2026 `decimal/legacy.rs`). Its results are
not those of an ideal decimal: an operation whose exact result does not fit 96 bits is rounded
(half to even) to fewer fraction digits, a quotient keeps as many digits as fit and then drops
only *some* trailing zeros (`14841035 / 2` is `7420517.50`), a product with a zero operand has
scale 0, and so on. Every function here reproduces the rust_decimal 1.40 algorithm (the version
RisingWave's Cargo.lock pins) through its observable behaviour: the digits and the scale.

Values
    A finite value is a tuple `(m, s)`: `m` an int with `|m| <= 2**96 - 1`, `s` an int 0..28, the
    value being `m * 10**-s`. There is no negative zero (`(0, s)`). The specials are the module
    constants `NAN`, `POS_INF` and `NEG_INF`.

Errors
    `NumericError` with RisingWave's messages: `Numeric out of range` (overflow, and also `x % 0`,
    which RisingWave reports so because `general_mod` maps every `checked_rem` failure to it),
    `Numeric out of range: overflow` (RisingWave's `NumericOverflow`: round(x, -n), exp, pow),
    `Division by zero`, `invalid input syntax for type numeric: "<text>"`, `smallint out of range`
    / `integer out of range` / `bigint out of range`, and the `Invalid parameter ...` texts of
    sqrt, ln, log10 and pow.

Functions RisingWave computes in numeric (and so does this module): + - * / %, neg, abs, sign,
round(x), round(x, n) (n may be negative), trunc(x) (there is no trunc(numeric, int)), floor,
ceil, scale, min_scale, trim_scale, sqrt, exp, ln, log10 (= log(x); RisingWave has no two-argument
log), pow/power(numeric, numeric), mod (= %), and the casts from and to integers, real and double
precision. RisingWave has only double-precision versions of cbrt, degrees, radians and the
trigonometric functions (sin, cos, tan, cot, asin, acos, atan, atan2, their degree variants sind,
cosd, ... and the hyperbolic ones): a numeric argument is cast to float8 for them.

Note that exp, ln, log10 and fractional powers are rust_decimal 1.40's series, which RisingWave
inherits with their inaccuracies: exp stops at a term <= 0.0000002 (exp(1) is 2.71828182619...),
and ln of a tiny value drifts (ln(1e-28) is -64.3788... instead of -64.4723...).
"""
from __future__ import annotations

import math
import struct
from typing import Callable, Iterable, Optional, Tuple, Union

Finite = Tuple[int, int]
Numeric = Union[Finite, str]

NAN = "NaN"
POS_INF = "Infinity"
NEG_INF = "-Infinity"
_SPECIALS = (NAN, POS_INF, NEG_INF)

MAX_SCALE = 28
MAX_MANTISSA = (1 << 96) - 1

_ZERO: Finite = (0, 0)
_ONE: Finite = (1, 0)
_TWO: Finite = (2, 0)
# rust_decimal's constants (src/decimal.rs, src/maths.rs), all at scale 28
_E: Finite = (27182818284590452353602874714, 28)
_E_INVERSE: Finite = (3678794411714423215955237702, 28)
_LN10_INVERSE: Finite = (4342944819032518276511289189, 28)
# `EXP_TOLERANCE` of rust_decimal's `exp`: the series stops at the first term <= 0.0000002
_EXP_TOLERANCE: Finite = (2, 7)

# the largest q with q * 10**x <= 2**96 - 1, for x = 0..9 (rust_decimal's POWER_OVERFLOW_VALUES)
_FIT_LIMIT = [MAX_MANTISSA // 10 ** x for x in range(10)]

_OUT_OF_RANGE = "Numeric out of range"
_OVERFLOW = "Numeric out of range: overflow"
_DIVISION_BY_ZERO = "Division by zero"
# PostgreSQL's words for a bad argument (as the double precision forms say; RisingWave's own are
# "Invalid parameter input: cannot take logarithm of zero or a negative number" and
# "Invalid parameter sqrt input: input cannot be negative value")
_LOG_ZERO = "cannot take logarithm of zero"
_LOG_NEGATIVE = "cannot take logarithm of a negative number"
_SQRT_INPUT = "cannot take square root of a negative number"
_POW_ZERO_NEGATIVE = "Invalid parameter rhs: zero raised to a negative power is undefined"
_POW_NEGATIVE_FRACT = ("Invalid parameter rhs: a negative number raised to a non-integer power "
                       "yields a complex result")
_INT_NAMES = {16: "smallint", 32: "integer", 64: "bigint"}


class NumericError(ValueError):
    """A numeric operation RisingWave refuses; the message is RisingWave's."""


class _Overflow(Exception):
    """rust_decimal's `None` from a checked operation; each caller decides RisingWave's error."""


def _is_finite(a: Numeric) -> bool:
    return not isinstance(a, str)


def _check(a: Numeric) -> Numeric:
    """Validate a value so that a wrong tuple fails loudly instead of computing nonsense."""
    if isinstance(a, str):
        if a not in _SPECIALS:
            raise TypeError(f"not a numeric value: {a!r}")
        return a
    m, s = a
    if not (isinstance(m, int) and isinstance(s, int) and 0 <= s <= MAX_SCALE
            and abs(m) <= MAX_MANTISSA):
        raise TypeError(f"not a numeric value: {a!r}")
    return a


# ---------------------------------------------------------------------------------------------
# rust_decimal's arithmetic on finite values (mantissa, scale); `_Overflow` where rust_decimal's
# checked operation returns None
# ---------------------------------------------------------------------------------------------

def _round_half_even_div(v: int, p: int) -> int:
    """v / p (v >= 0, p a power of ten >= 10) rounded half to even, as rust_decimal rounds a
    result it must shorten (the exact value, remainder and sticky digits included)."""
    q, r = divmod(v, p)
    half = p >> 1
    if r > half or (r == half and q & 1):
        q += 1
    return q


def _fit(v: int, scale: int) -> Finite:
    """An exact non-negative mantissa `v` at `scale`, brought into 96 bits and scale <= 28 the
    way rust_decimal's `Buf24::rescale` (and `reduce_scale`) do: drop the fewest digits that
    make the half-even rounded mantissa fit, and overflow when even scale 0 cannot hold it."""
    k = max(0, scale - MAX_SCALE)
    if v > MAX_MANTISSA:
        k = max(k, len(str(v)) - 29)
    while True:
        q = v if k == 0 else _round_half_even_div(v, 10 ** k)
        if q <= MAX_MANTISSA:
            break
        k += 1
    if k > scale:
        raise _Overflow()
    return q, scale - k


def _signed(negative: bool, q: int) -> int:
    return -q if negative else q


def _add(a: Finite, b: Finite) -> Finite:
    """rust_decimal `checked_add` (ops/add.rs): a zero operand returns the other one unchanged
    (its own scale), otherwise the exact sum at the larger scale, shortened only if it must."""
    (m1, s1), (m2, s2) = a, b
    if m1 == 0:
        return m2, s2
    if m2 == 0:
        return m1, s1
    s = max(s1, s2)
    v = m1 * 10 ** (s - s1) + m2 * 10 ** (s - s2)
    q, scale = _fit(abs(v), s)
    return _signed(v < 0, q), scale


def _sub(a: Finite, b: Finite) -> Finite:
    return _add(a, (-b[0], b[1]))


def _mul(a: Finite, b: Finite) -> Finite:
    """rust_decimal `checked_mul` (ops/mul.rs): a zero operand gives 0 at scale 0; the exact
    product keeps scale s1 + s2 when it fits (96 bits, scale <= 28), else it is rounded; two
    32-bit mantissas whose scales add up to more than 47 give 0 at scale 0."""
    (m1, s1), (m2, s2) = a, b
    if m1 == 0 or m2 == 0:
        return _ZERO
    x, y = abs(m1), abs(m2)
    scale = s1 + s2
    if x < 1 << 32 and y < 1 << 32 and scale > MAX_SCALE + 19:
        return _ZERO
    q, scale = _fit(x * y, scale)
    return _signed((m1 < 0) != (m2 < 0), q), scale


def _find_scale(q: int, scale: int) -> Optional[int]:
    """rust_decimal `Buf12::find_scale`: how many digits (at most 9) the running quotient may
    grow by without leaving 96 bits or passing scale 28; None when it cannot reach scale 0."""
    fit = 9
    while fit > 0 and q > _FIT_LIMIT[fit]:
        fit -= 1
    if scale > 19:
        return min(MAX_SCALE - scale, fit)
    if fit == 9:
        return 9
    return None if fit + scale < 0 else fit


def _unscale_from_overflow(v: int, scale: int, sticky: bool) -> Tuple[int, int]:
    """rust_decimal `unscale_from_overflow`: a quotient that reached 2**96 loses one digit."""
    scale -= 1
    if scale < 0:
        raise _Overflow()
    q, digit = divmod(v, 10)
    if digit > 5 or (digit == 5 and (sticky or q & 1)):
        q += 1
    return q, scale


def _unscale(q: int, scale: int) -> Tuple[int, int]:
    """rust_decimal `unscale`: drop trailing zeros of an inexact quotient, but only by the steps
    .NET's algorithm takes (10^8 only while the low 32 bits are zero, then 10^4, 10^2 and 10 once
    each), which is why 14841035 / 2 keeps the zero of 7420517.50."""
    while q & 0xFFFFFFFF == 0 and scale >= 8 and q % 100000000 == 0:
        q //= 100000000
        scale -= 8
    if q & 0xF == 0 and scale >= 4 and q % 10000 == 0:
        q //= 10000
        scale -= 4
    if q & 0x3 == 0 and scale >= 2 and q % 100 == 0:
        q //= 100
        scale -= 2
    if q & 0x1 == 0 and scale >= 1 and q % 10 == 0:
        q //= 10
        scale -= 1
    return q, scale


def _div(a: Finite, b: Finite) -> Finite:
    """rust_decimal `checked_div` (ops/div.rs, .NET's algorithm): the integer quotient grows by
    up to 9 digits a step while a remainder is left, until the next step would leave 96 bits or
    pass scale 28; the last remainder rounds half to even; an inexact quotient is `_unscale`d.
    A zero divisor is the caller's business (RisingWave turns it into `Division by zero`)."""
    (m1, s1), (m2, s2) = a, b
    if m1 == 0:
        return _ZERO
    divisor = abs(m2)
    scale = s1 - s2
    q, r = divmod(abs(m1), divisor)
    inexact = False
    while True:
        if r == 0:
            if scale >= 0:
                break
            step = min(9, -scale)
        else:
            inexact = True
            step = 0 if scale == MAX_SCALE else _find_scale(q, scale)
            if step is None:
                raise _Overflow()
            if step == 0:
                twice = r << 1
                if twice > divisor or (twice == divisor and q & 1):
                    q += 1
                    if q > MAX_MANTISSA:
                        q, scale = _unscale_from_overflow(q, scale, True)
                break
        power = 10 ** step
        scale += step
        q *= power
        if q > MAX_MANTISSA:
            raise _Overflow()
        digits, r = divmod(r * power, divisor)
        q += digits
        if q > MAX_MANTISSA:
            q, scale = _unscale_from_overflow(q, scale, r != 0)
            break
    if inexact:
        q, scale = _unscale(q, scale)
    return _signed((m1 < 0) != (m2 < 0), q), scale


def _rem(a: Finite, b: Finite) -> Finite:
    """rust_decimal `checked_rem` (ops/rem.rs): exact, sign of the dividend, at the larger
    scale; a dividend smaller than the divisor comes back as it is, an equal one (or a zero
    dividend) gives 0 at scale 0."""
    (m1, s1), (m2, s2) = a, b
    if m1 == 0:
        return _ZERO
    s = max(s1, s2)
    x = abs(m1) * 10 ** (s - s1)
    y = abs(m2) * 10 ** (s - s2)
    if x == y:
        return _ZERO
    if x < y:
        return a
    return _signed(m1 < 0, x % y), s


def _cmp(a: Finite, b: Finite) -> int:
    (m1, s1), (m2, s2) = a, b
    s = max(s1, s2)
    x = m1 * 10 ** (s - s1)
    y = m2 * 10 ** (s - s2)
    return (x > y) - (x < y)


def _normalize(a: Finite) -> Finite:
    """rust_decimal `normalize`: strip trailing zeros (zero becomes `0`)."""
    m, s = a
    if m == 0:
        return _ZERO
    while s > 0 and m % 10 == 0:
        m //= 10
        s -= 1
    return m, s


def _round_dp_away(a: Finite, dp: int) -> Finite:
    """rust_decimal `round_dp_with_strategy(dp, MidpointAwayFromZero)`: a value with at most
    `dp` fraction digits is returned unchanged (round(1.5, 3) is 1.5), otherwise it gets exactly
    `dp` of them."""
    m, s = a
    if s <= dp:
        return a
    if m == 0:
        return 0, dp
    q, r = divmod(abs(m), 10 ** (s - dp))
    if r >= 5 * 10 ** (s - dp - 1):
        q += 1
    return _signed(m < 0, q), dp


def _trunc(a: Finite) -> Finite:
    m, s = a
    return _signed(m < 0, abs(m) // 10 ** s), 0


def _has_fraction(a: Finite) -> bool:
    m, s = a
    return m % 10 ** s != 0


# ---------------------------------------------------------------------------------------------
# text
# ---------------------------------------------------------------------------------------------

_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


class _ParseError(Exception):
    pass


def _parse_plain(s: str) -> Finite:
    """rust_decimal `from_str` (str/parse.rs): an optional sign, digits with one `.` and `_`
    separators after the first digit. Once 28 fraction digits are read, or the next digit of the
    fraction would leave 96 bits, that next character alone rounds (>= 5 up) and the rest of the
    text is ignored unread; too many integer digits are an error."""
    n = len(s)
    i = 0
    negative = False
    if n and s[0] in "+-":
        negative = s[0] == "-"
        i = 1
    data = 0
    scale = 0
    point = False
    has_digit = False
    while i < n:
        c = s[i]
        if "0" <= c <= "9":
            digit = ord(c) - 48
            grown = data * 10 + digit
            if grown > MAX_MANTISSA:
                if not point:
                    raise _ParseError("overflow from too many digits")
                if digit >= 5:
                    data += 1
                    if data > MAX_MANTISSA:  # rust_decimal wraps here; refuse instead
                        raise _ParseError("overflow when rounding")
                return _signed(negative, data), scale
            data = grown
            has_digit = True
            if point:
                scale += 1
            if point and scale >= MAX_SCALE and i + 1 < n:
                nxt = s[i + 1]
                if "0" <= nxt <= "9":
                    digit = ord(nxt) - 48
                elif nxt in "_.":
                    digit = 0
                else:
                    raise _ParseError("unknown character")
                if digit >= 5:
                    data += 1
                    if data > MAX_MANTISSA:
                        raise _ParseError("overflow when rounding")
                return _signed(negative, data), scale
        elif c == "." and not point:
            point = True
        elif c == "_" and has_digit:
            pass
        else:
            raise _ParseError("invalid character")
        i += 1
    if not has_digit:
        raise _ParseError("no digits found")
    return _signed(negative, data), scale


def _parse_u32(s: str) -> int:
    """Rust's `u32::from_str`: an optional `+`, then ASCII digits only."""
    body = s[1:] if s.startswith("+") else s
    if not body or not all("0" <= c <= "9" for c in body):
        raise _ParseError("bad exponent")
    v = int(body)
    if v > 0xFFFFFFFF:
        raise _ParseError("bad exponent")
    return v


def _parse_scientific(s: str) -> Finite:
    """rust_decimal `from_scientific`, RisingWave's fallback when `from_str` fails: `1e-3` sets
    the scale (0.001), `1.50e1` only lowers it (15.0), and an exponent past the scale multiplies
    by 10^exp and normalizes (1.5e3 is 1500). Exponents above 28 either way are refused."""
    if "e" not in s:
        raise _ParseError("not scientific")
    base, exp = s.split("e", 1)
    m, scale = _parse_plain(base)
    if exp.startswith("-"):
        e = _parse_u32(exp[1:])
        if e > MAX_SCALE or scale + e > MAX_SCALE:
            raise _ParseError("scale exceeds maximum precision")
        return m, scale + e
    e = _parse_u32(exp)
    if e <= scale:
        return m, scale - e
    if e > MAX_SCALE:
        raise _ParseError("scale exceeds maximum precision")
    value: Finite = (m, scale)
    while e > 0:
        chunk = min(e, 19)
        e -= chunk
        try:
            value = _mul(value, (10 ** chunk, 0))
        except _Overflow:
            raise _ParseError("exceeds maximum possible value") from None
    return _normalize(value)


def parse(text: str) -> Numeric:
    """RisingWave's text input for numeric (`'...'::numeric`, `str_parse`): the text is trimmed,
    `nan`, `inf`, `+inf`, `infinity`, `+infinity`, `-inf`, `-infinity` (any ASCII case) are the
    specials, then rust_decimal's `from_str` with `from_scientific` as the fallback."""
    s = text.strip().translate(_ASCII_LOWER)
    if s == "nan":
        return NAN
    if s in ("inf", "+inf", "infinity", "+infinity"):
        return POS_INF
    if s in ("-inf", "-infinity"):
        return NEG_INF
    try:
        try:
            return _parse_plain(s)
        except _ParseError:
            return _parse_scientific(s)
    except _ParseError:
        raise NumericError(f'invalid input syntax for type numeric: "{text}"') from None


def to_text(value: Numeric) -> str:
    """RisingWave's output of a numeric: rust_decimal's `Display` (every digit of the scale,
    `0.00` for a zero at scale 2) and `NaN`, `Infinity`, `-Infinity`."""
    value = _check(value)
    if isinstance(value, str):
        return value
    m, s = value
    digits = str(abs(m))
    if s:
        digits = digits.rjust(s + 1, "0")
        digits = f"{digits[:-s]}.{digits[-s:]}"
    return f"-{digits}" if m < 0 else digits


# ---------------------------------------------------------------------------------------------
# SQL operators (risingwave_expr_impl::scalar::arithmetic_op over RisingWave's Decimal)
# ---------------------------------------------------------------------------------------------

def _sign_of(a: Numeric) -> int:
    if a == POS_INF:
        return 1
    if a == NEG_INF:
        return -1
    m = a[0]  # type: ignore[index]
    return (m > 0) - (m < 0)


def _inf(sign: int) -> str:
    return POS_INF if sign > 0 else NEG_INF


def _checked(op: Callable[[Finite, Finite], Finite], a: Finite, b: Finite) -> Finite:
    """Run a rust_decimal checked operation; its None is RisingWave's `Numeric out of range`."""
    try:
        return op(a, b)
    except _Overflow:
        raise NumericError(_OUT_OF_RANGE) from None


def add(a: Numeric, b: Numeric) -> Numeric:
    """`a + b` (`general_add`: rust_decimal `checked_add`, NaN and infinities as PostgreSQL)."""
    a, b = _check(a), _check(b)
    if _is_finite(a) and _is_finite(b):
        return _checked(_add, a, b)  # type: ignore[arg-type]
    if NAN in (a, b) or {a, b} == {POS_INF, NEG_INF}:
        return NAN
    return a if isinstance(a, str) else b


def sub(a: Numeric, b: Numeric) -> Numeric:
    """`a - b` (`general_sub`)."""
    a, b = _check(a), _check(b)
    if _is_finite(a) and _is_finite(b):
        return _checked(_sub, a, b)  # type: ignore[arg-type]
    if NAN in (a, b) or (a == b):
        return NAN
    if isinstance(a, str):
        return a
    return neg(b)


def mul(a: Numeric, b: Numeric) -> Numeric:
    """`a * b` (`general_mul`): zero times an infinity is NaN."""
    a, b = _check(a), _check(b)
    if _is_finite(a) and _is_finite(b):
        return _checked(_mul, a, b)  # type: ignore[arg-type]
    if NAN in (a, b):
        return NAN
    sign = _sign_of(a) * _sign_of(b)
    return NAN if sign == 0 else _inf(sign)


def div(a: Numeric, b: Numeric) -> Numeric:
    """`a / b` (`general_div`): a finite value over zero is `Division by zero` (0 / 0 too), an
    infinity over zero keeps its sign, NaN over anything is NaN, a finite value over an
    infinity is 0."""
    a, b = _check(a), _check(b)
    if _is_finite(a) and _is_finite(b):
        if b[0] == 0:  # type: ignore[index]
            raise NumericError(_DIVISION_BY_ZERO)
        return _checked(_div, a, b)  # type: ignore[arg-type]
    if NAN in (a, b):
        return NAN
    if _is_finite(b):
        if b[0] == 0:  # type: ignore[index]
            return a
        return _inf(_sign_of(a) * _sign_of(b))
    if _is_finite(a):
        return _ZERO
    return NAN


def rem(a: Numeric, b: Numeric) -> Numeric:
    """`a % b` and `mod(a, b)` (`general_mod`): rust_decimal `checked_rem`; a finite value modulo
    zero fails like any `checked_rem` failure there, as `Numeric out of range`; a finite value
    modulo an infinity is itself; everything else with a special is NaN."""
    a, b = _check(a), _check(b)
    if _is_finite(a) and _is_finite(b):
        if b[0] == 0:  # type: ignore[index]
            raise NumericError(_OUT_OF_RANGE)
        return _rem(a, b)  # type: ignore[arg-type]
    if _is_finite(a) and b in (POS_INF, NEG_INF):
        return a
    return NAN


def neg(a: Numeric) -> Numeric:
    """`-a` (rust_decimal keeps a negative zero here and RisingWave prints `-0.00` for
    `-(0.00)`; this model has no negative zero, so it stays `0.00`)."""
    a = _check(a)
    if a == POS_INF:
        return NEG_INF
    if a == NEG_INF:
        return POS_INF
    if a == NAN:
        return NAN
    return -a[0], a[1]  # type: ignore[index]


def abs_(a: Numeric) -> Numeric:
    """`abs(a)`: -Infinity becomes Infinity."""
    a = _check(a)
    if a == NEG_INF:
        return POS_INF
    if isinstance(a, str):
        return a
    return abs(a[0]), a[1]


def sign(a: Numeric) -> Numeric:
    """`sign(a)`: -1, 0 or 1 at scale 0 (the infinities included), NaN for NaN."""
    a = _check(a)
    if a == NAN:
        return NAN
    return _sign_of(a), 0


def compare(a: Numeric, b: Numeric) -> int:
    """-1, 0 or 1 in PostgreSQL's order, RisingWave's derived `Ord`: -Infinity < numbers <
    Infinity < NaN, NaN equal to itself, 1.5 equal to 1.50."""
    a, b = _check(a), _check(b)
    rank = {NEG_INF: 0, POS_INF: 2, NAN: 3}
    ra = rank[a] if isinstance(a, str) else 1
    rb = rank[b] if isinstance(b, str) else 1
    if ra != rb or ra != 1:
        return (ra > rb) - (ra < rb)
    return _cmp(a, b)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------------
# rounding and scale
# ---------------------------------------------------------------------------------------------

def round_dp(a: Numeric, digits: int) -> Numeric:
    """`round(a, digits)` (`round_digits`): half away from zero; at most 28 fraction digits are
    kept, a value with fewer digits than asked keeps its own scale; negative `digits` round left
    of the point to an integer (scale 0) and fail with `Numeric out of range: overflow` when the
    rounded value does not fit."""
    a = _check(a)
    if isinstance(a, str):
        return a
    if digits >= 0:
        return _round_dp_away(a, min(digits, MAX_SCALE))
    return _round_left(a, -digits)


def _round_left(a: Finite, left: int) -> Finite:
    """RisingWave's `round_left_ties_away`: shift the point `left` places left, round, shift
    back by multiplying, with its special cases for a shift of 29 or more places."""
    m, s = a
    shifted = s + left
    if shifted < MAX_SCALE + 1:
        r = _round_dp_away((m, shifted), 0)
    elif shifted == MAX_SCALE + 1:
        r = (int(abs(m) >= 5 * 10 ** 28) * ((m > 0) - (m < 0)), 0)
    else:
        r = _ZERO
    if left > MAX_SCALE:
        if r[0] == 0:
            return _ZERO
        raise NumericError(_OVERFLOW)
    try:
        return _mul(r, (10 ** left, 0))
    except _Overflow:
        raise NumericError(_OVERFLOW) from None


def round_(a: Numeric) -> Numeric:
    """`round(a)`: half away from zero to scale 0 (rust_decimal's own `round` is half even)."""
    a = _check(a)
    if isinstance(a, str):
        return a
    return _round_dp_away(a, 0)


def trunc(a: Numeric) -> Numeric:
    """`trunc(a)`: toward zero, scale 0 (a value already at scale 0 is kept)."""
    a = _check(a)
    if isinstance(a, str):
        return a
    return _trunc(a)


def floor(a: Numeric) -> Numeric:
    """`floor(a)`: scale 0 (rust_decimal returns a scale-0 value unchanged)."""
    a = _check(a)
    if isinstance(a, str) or a[1] == 0:
        return a
    t = _trunc(a)
    if a[0] < 0 and _has_fraction(a):
        return _sub(t, _ONE)
    return t


def ceil(a: Numeric) -> Numeric:
    """`ceil(a)`: scale 0; RisingWave turns the negative zero of ceil(-0.5) into 0."""
    a = _check(a)
    if isinstance(a, str) or a[1] == 0:
        return a
    t = _trunc(a)
    if a[0] > 0 and _has_fraction(a):
        return _add(t, _ONE)
    return t


def scale(a: Numeric) -> Optional[int]:
    """`scale(a)`: the kept scale; NULL (None) for the specials."""
    a = _check(a)
    return None if isinstance(a, str) else a[1]


def min_scale(a: Numeric) -> Optional[int]:
    """`min_scale(a)`: the scale without trailing zeros; NULL (None) for the specials."""
    a = _check(a)
    return None if isinstance(a, str) else _normalize(a)[1]


def trim_scale(a: Numeric) -> Numeric:
    """`trim_scale(a)`: trailing zeros dropped (rust_decimal `normalize`); specials unchanged."""
    a = _check(a)
    return a if isinstance(a, str) else _normalize(a)


# ---------------------------------------------------------------------------------------------
# casts
# ---------------------------------------------------------------------------------------------

def from_int(i: int) -> Finite:
    """An integer as numeric (scale 0), as the casts from smallint/integer/bigint give it."""
    if abs(i) > MAX_MANTISSA:
        raise NumericError(_OUT_OF_RANGE)
    return i, 0


def to_int(a: Numeric, bits: int) -> int:
    """The cast to smallint (16), integer (32) or bigint (64): rounded half away from zero
    (`round_dp_ties_away(0)`), then range-checked; NaN and the infinities are out of range."""
    a = _check(a)
    name = _INT_NAMES[bits]
    if isinstance(a, str):
        raise NumericError(f"{name} out of range")
    m, s = _round_dp_away(a, 0)
    value = _signed(m < 0, abs(m) // 10 ** s)
    limit = 1 << (bits - 1)
    if not -limit <= value < limit:
        raise NumericError(f"{name} out of range")
    return value


def _base2_to_decimal(bits: int, exponent2: int, negative: bool, is64: bool,
                      remove_excess_bits: bool) -> Optional[Finite]:
    """rust_decimal `base2_to_decimal`: bits * 2**exponent2 as mantissa * 10**exponent10 within
    96 bits, then (as `from_f64`/`from_f32` do) rounded to the digits the float guarantees
    (while the mantissa has 53 / 24 or more bits), one digit at a time half up, and stripped of
    trailing zeros."""
    exponent5 = -exponent2
    exponent10 = exponent2
    while exponent5 > 0:
        if bits & 1 == 0:
            exponent10 += 1
            exponent5 -= 1
            bits >>= 1
        else:
            exponent5 -= 1
            if bits * 5 <= MAX_MANTISSA:
                bits *= 5
            else:
                exponent10 += 1
                bits >>= 1
    while exponent5 < 0:
        if bits >> 95 == 0:
            exponent10 -= 1
            exponent5 += 1
            bits <<= 1
        elif exponent10 * 2 > -exponent5:
            return None
        else:
            exponent5 += 1
            bits //= 5
    while exponent10 > 0:
        if bits * 10 > MAX_MANTISSA:
            return None
        bits *= 10
        exponent10 -= 1
    while exponent10 < -MAX_SCALE:
        bits, rem10 = divmod(bits, 10)
        exponent10 += 1
        if bits == 0:
            exponent10 = 0
        elif rem10 >= 5:
            bits += 1
    if remove_excess_bits:
        limit = 1 << 52 if is64 else 1 << 24
        while exponent10 < 0 and bits >= limit:
            bits, rem10 = divmod(bits, 10)
            exponent10 += 1
            if rem10 >= 5:
                bits += 1
        while exponent10 < 0 and bits % 10 == 0:
            bits //= 10
            exponent10 += 1
    return _signed(negative, bits), -exponent10


def _from_float(x: float, is64: bool, remove_excess_bits: bool = True) -> Numeric:
    if math.isnan(x):
        return NAN
    if math.isinf(x):
        return POS_INF if x > 0 else NEG_INF
    if is64:
        raw = struct.unpack("<Q", struct.pack("<d", x))[0]
        negative = raw >> 63 == 1
        biased = (raw >> 52) & 0x7FF
        mantissa = raw & ((1 << 52) - 1)
        bias, width = 1023, 52
    else:
        raw = struct.unpack("<I", struct.pack("<f", x))[0]
        negative = raw >> 31 == 1
        biased = (raw >> 23) & 0xFF
        mantissa = raw & ((1 << 23) - 1)
        bias, width = 127, 23
    if biased == 0 and mantissa == 0:
        return _ZERO
    exponent2 = biased - bias
    if biased == 0:
        exponent2 += 1
    else:
        mantissa |= 1 << width
    result = _base2_to_decimal(mantissa, exponent2 - width, negative, is64, remove_excess_bits)
    if result is None:
        raise NumericError(_OUT_OF_RANGE)
    return result


def from_f64(x: float) -> Numeric:
    """The cast of double precision to numeric: NaN and the infinities map to the specials,
    otherwise rust_decimal `from_f64` (0.1 becomes 0.1, not 0.1000000000000000055511151231);
    magnitudes rust_decimal cannot hold (about 7.9e28 and up) are out of range."""
    return _from_float(float(x), True)


def from_f32(x: float) -> Numeric:
    """The cast of real to numeric: rust_decimal `from_f32` on the value rounded to a float32."""
    return _from_float(float(x), False)


def _powi(base: float, n: int) -> float:
    """`f64::powi` as compiled (compiler-rt's `__powidf2`): square and multiply, each step a
    rounded double product, so 10^23.. are not the correctly rounded powers."""
    result = 1.0
    while True:
        if n & 1:
            result *= base
        n >>= 1
        if n == 0:
            return result
        base *= base


def _round_half_away(x: float) -> float:
    """`f64::round` for x >= 0."""
    if x >= 4503599627370496.0:
        return x
    f = math.floor(x)
    return f + 1.0 if x - f >= 0.5 else f


def to_f64(a: Numeric) -> float:
    """The cast of numeric to double precision: rust_decimal `to_f64` (integral part plus the
    fraction as a double quotient, then rounded at the scale through 10^scale), so some results
    differ from the correctly rounded double by an ulp."""
    a = _check(a)
    if a == NAN:
        return math.nan
    if a == POS_INF:
        return math.inf
    if a == NEG_INF:
        return -math.inf
    m, s = a  # type: ignore[misc]
    if s == 0:
        return float(m)
    precision = 10 ** s
    integral_part, frac_part = divmod(abs(m), precision)
    frac = float(frac_part) / float(precision)
    integral = float(integral_part)
    if frac == 0.0:
        return -integral if m < 0 else integral
    round_to = _powi(10.0, s)
    rounded = _round_half_away((integral + frac) * round_to) / round_to
    return -rounded if m < 0 else rounded


def to_f32(a: Numeric) -> float:
    """The cast of numeric to real: `to_f64` then Rust's `as f32` (nearest, overflow to inf)."""
    x = to_f64(a)
    try:
        return struct.unpack("<f", struct.pack("<f", x))[0]
    except OverflowError:
        return math.copysign(math.inf, x)


# ---------------------------------------------------------------------------------------------
# numeric functions (rust_decimal's MathematicalOps, RisingWave's wrappers)
# ---------------------------------------------------------------------------------------------

def _exp_with_tolerance(x: Finite, tolerance: Finite) -> Finite:
    """rust_decimal `checked_exp_with_tolerance`: 1 + x + sum of q_i = q_{i-1} * x / i until a
    term <= tolerance (at most 200 terms); e^-x is 1 / e^x. Raises `_Overflow` where rust_decimal
    returns None, including e^-x whose e^x overflows."""
    if x[0] == 0:
        return _ONE
    if x[0] < 0:
        e = _exp_with_tolerance((-x[0], x[1]), tolerance)
        if e[0] == 0:
            raise _Overflow()
        return _div(_ONE, e)
    result = _add(x, _ONE)
    term = x
    for i in range(2, 200):
        term = _mul(x, _div(term, (i, 0)))
        result = _add(result, term)
        if _cmp(term, tolerance) <= 0:
            break
    return result


def _ln(a: Finite) -> Finite:
    """rust_decimal `ln`: reduce into (1/e, 1) by multiplying with E_INVERSE or E, then the
    Mercator series until it stops changing (at most 100 terms). `a` > 0."""
    if _cmp(a, _ONE) == 0:
        return _ZERO
    x = a
    count = 0
    while _cmp(x, _ONE) >= 0:
        x = _mul(x, _E_INVERSE)
        count += 1
    while _cmp(x, _E_INVERSE) <= 0:
        x = _mul(x, _E)
        count -= 1
    x = _sub(x, _ONE)
    if x[0] == 0:
        return count, 0
    minus_x = (-x[0], x[1])
    result = _ZERO
    last = _ONE
    y = _ONE
    iteration = 0
    while _cmp(last, result) != 0 and iteration < 100:
        iteration += 1
        last = result
        y = _mul(y, minus_x)
        result = _add(result, _div(y, (iteration, 0)))
    return _sub((count, 0), result)


def _log10(a: Finite) -> Finite:
    """rust_decimal `checked_log10`: exact for powers of ten, else LN10_INVERSE * ln. `a` > 0."""
    m, s = a
    if _cmp(a, _ONE) == 0:
        return _ZERO
    if s > 0 and m == 1:
        return -s, 0
    power = 0
    work = m
    while work:
        work, digit = divmod(work, 10)
        if digit:
            break
        power += 1
        if work == 1:
            return power - s, 0
    return _mul(_LN10_INVERSE, _ln(a))


def _sqrt(a: Finite) -> Finite:
    """rust_decimal `sqrt`: Babylonian steps (x + a / x) / 2 from a / 2 until a step repeats."""
    if a[0] == 0:
        return _ZERO
    result = _div(a, _TWO)
    if result[0] == 0:
        result = a
    last = _add(result, _ONE)
    while _cmp(last, result) != 0:
        last = result
        result = _div(_add(result, _div(a, result)), _TWO)
    return result


def _powu(x: Finite, n: int) -> Finite:
    """rust_decimal `checked_powu`: square and multiply, the product normalized."""
    if n == 0:
        return _ONE
    if n == 1:
        return x
    if n == 2:
        return _mul(x, x)
    product = _ONE
    power = x
    mask = n
    for step in range(n.bit_length()):
        if step > 0:
            power = _mul(power, power)
            mask >>= 1
        if mask & 1:
            product = _mul(product, power)
    return _normalize(product)


def _powd(x: Finite, y: Finite) -> Finite:
    """rust_decimal `checked_powd`: integer exponents (below 2**32) by `_powu` (1 / x^n when
    negative), others as exp(y * ln|x|) with `exp`'s tolerance."""
    if y[0] == 0:
        return _ONE
    if x[0] == 0:
        return _ZERO
    if _cmp(x, _ONE) == 0:
        return _ONE
    if _cmp(y, _ONE) == 0:
        return x
    y = _normalize(y)
    if y[1] == 0:
        n = abs(y[0])
        if n >= 1 << 32:
            raise _Overflow()
        if y[0] > 0:
            return _powu(x, n)
        p = _powu(x, n)
        if p[0] == 0:
            raise _Overflow()
        return _div(_ONE, p)
    e = _mul(_ln((abs(x[0]), x[1])), y)
    r = _exp_with_tolerance(e, _EXP_TOLERANCE)
    return _signed(x[0] < 0, abs(r[0])), r[1]


def exp(a: Numeric) -> Numeric:
    """`exp(a)`: rust_decimal `checked_exp` (series stopped at a term <= 0.0000002, so only
    about 7 fraction digits are right); failures are `Numeric out of range: overflow`."""
    a = _check(a)
    if a == NEG_INF:
        return _ZERO
    if isinstance(a, str):
        return a
    try:
        return _exp_with_tolerance(a, _EXP_TOLERANCE)
    except _Overflow:
        raise NumericError(_OVERFLOW) from None


def _check_log_argument(a: Numeric) -> None:
    if _is_finite(a) and a[0] == 0:  # type: ignore[index]
        raise NumericError(_LOG_ZERO)
    if a == NEG_INF or (_is_finite(a) and a[0] < 0):  # type: ignore[index]
        raise NumericError(_LOG_NEGATIVE)


def ln(a: Numeric) -> Numeric:
    """`ln(a)`: rust_decimal `checked_ln`; zero, negatives and -Infinity are refused."""
    a = _check(a)
    _check_log_argument(a)
    if isinstance(a, str):
        return a
    return _ln(a)


def log10(a: Numeric) -> Numeric:
    """`log10(a)` and `log(a)`: rust_decimal `checked_log10`."""
    a = _check(a)
    _check_log_argument(a)
    if isinstance(a, str):
        return a
    return _log10(a)


def sqrt(a: Numeric) -> Numeric:
    """`sqrt(a)`: rust_decimal `sqrt`; negatives and -Infinity are refused."""
    a = _check(a)
    if a == NEG_INF or (_is_finite(a) and a[0] < 0):  # type: ignore[index]
        raise NumericError(_SQRT_INPUT)
    if isinstance(a, str):
        return a
    return _sqrt(a)


def pow_(a: Numeric, b: Numeric) -> Numeric:
    """`pow(a, b)` / `power(a, b)` on numerics: RisingWave's `checked_powd` (PostgreSQL's rules
    for NaN and the infinities) over rust_decimal `checked_powd`."""
    a, b = _check(a), _check(b)
    if _is_finite(a) and _is_finite(b):
        if a[0] == 0 and b[0] < 0:  # type: ignore[index]
            raise NumericError(_POW_ZERO_NEGATIVE)
        if a[0] < 0 and _has_fraction(b):  # type: ignore[index, arg-type]
            raise NumericError(_POW_NEGATIVE_FRACT)
        try:
            return _powd(a, b)  # type: ignore[arg-type]
        except _Overflow:
            raise NumericError(_OVERFLOW) from None
    if a == NAN:
        return _ONE if _is_finite(b) and b[0] == 0 else NAN  # type: ignore[index]
    if b == NAN:
        return _ONE if _is_finite(a) and _cmp(a, _ONE) == 0 else NAN  # type: ignore[arg-type]
    if b == POS_INF:
        if isinstance(a, str):
            return POS_INF
        c = _cmp((abs(a[0]), a[1]), _ONE)
        return POS_INF if c > 0 else (_ONE if c == 0 else _ZERO)
    if b == NEG_INF:
        if isinstance(a, str):
            return _ZERO
        c = _cmp((abs(a[0]), a[1]), _ONE)
        if c > 0:
            return _ZERO
        if c == 0:
            return _ONE
        if a[0] == 0:
            raise NumericError(_POW_ZERO_NEGATIVE)
        return POS_INF
    if a == POS_INF:
        s = _sign_of(b)
        return POS_INF if s > 0 else (_ONE if s == 0 else _ZERO)
    # a is -Infinity, b finite
    if _has_fraction(b):  # type: ignore[arg-type]
        raise NumericError(_POW_NEGATIVE_FRACT)
    s = _sign_of(b)
    if s == 0:
        return _ONE
    if s < 0:
        return _ZERO
    odd = _trunc(b)[0] % 2 != 0  # type: ignore[arg-type]
    return NEG_INF if odd else POS_INF


# ---------------------------------------------------------------------------------------------
# aggregates
# ---------------------------------------------------------------------------------------------

def sum_values(values: Iterable[Numeric]) -> Optional[Numeric]:
    """`sum(numeric)`: the values added left to right with `checked_add` (an overflow is
    `Numeric out of range`); NULL (None) for no values. Pass the non-NULL inputs only."""
    total: Optional[Numeric] = None
    for v in values:
        total = _check(v) if total is None else add(total, v)
    return total


def avg_values(values: Iterable[Numeric]) -> Optional[Numeric]:
    """`avg(numeric)`: RisingWave's frontend rewrites it into `sum(x) / count(x)`
    (`general_rewrite_agg_call`), so it is `div(sum, count)` with the count at scale 0."""
    items = list(values)
    total = sum_values(items)
    if total is None:
        return None
    return div(total, from_int(len(items)))


def avg_int(sum_int: int, count: int) -> Optional[Numeric]:
    """`avg` of smallint/integer/bigint: `cast(sum as numeric) / count`; None when count is 0.
    (Without `div`'s checks of its operands: a stream's avg calls this per changed group.)"""
    if count == 0:
        return None
    if abs(sum_int) > MAX_MANTISSA:
        return div(from_int(sum_int), from_int(count))  # (out of range: from_int says so)
    try:
        return _div((sum_int, 0), (count, 0))
    except _Overflow:
        raise NumericError(_OUT_OF_RANGE) from None
