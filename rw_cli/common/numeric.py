"""numeric as Arrow and DuckDB hold it.

RisingWave's numeric is rust_decimal (a 96-bit mantissa with a scale of 0..28 per value: `1.50`
stays `1.50`) plus NaN, Infinity and -Infinity (rw_cli.common.rust_decimal computes with it).
No Arrow or DuckDB type holds that: a DECIMAL has one scale for the whole column and at most 38
digits, while rust_decimal spans 29 digits before the point and 28 after. So a value V with
the display scale s is the struct

    n_int    decimal128(38, 0)   floor(V)
    n_frac   decimal128(38, 0)   (V - floor(V)) * 10^28, in [0, 10^28)
    n_scale  float64             a NaN whose payload is s + 1

(n_int, n_frac) is V exactly, and a struct compares field by field, so the struct orders as the
numbers do. The scale rides in a NaN because DuckDB, like PostgreSQL, holds every NaN equal to
every other: 1.5 and 1.50 are equal in comparisons, sorts, GROUP BY, DISTINCT and joins (and in
our memcomparable keys, which write one NaN for all), yet each value keeps the digits it prints
with. DuckDB never computes on the field, it only copies it, and copies keep a NaN's payload.
Some of DuckDB's aggregates (min, max, any_value, arg_min, mode) keep their state in its sort
keys, which write one NaN for all, so what they return has lost its scale: a NaN of payload 0
means "scale unknown", and such a value has the fewest fraction digits that hold it (the
rewrites of rw_cli.sql.numeric_sql carry the scale past min and max).
NaN, Infinity and -Infinity are values of n_int beyond any number's, NaN the greatest, as
PostgreSQL orders them.

Arithmetic runs in Python UDFs over these structs (rw_cli.engine.numeric_udfs); this module
converts between the struct arrays and rust_decimal values, and from and to Arrow decimals, and
computes + - * /, avg and sum a chunk at a time in numpy where it can (rust_decimal's results
bit for bit; the other rows by rw_cli.common.rust_decimal).
"""
from __future__ import annotations

import decimal
import functools
from collections.abc import Callable, Sequence

import numpy as np
import pyarrow as pa

from rw_cli.common import rust_decimal as rd
from rw_cli.common.lazy_import import lazy_import

pc = lazy_import("pyarrow.compute")  # imported on first use: see rw_cli.common.lazy_import

FRAC_DIGITS = 28
FRAC_ONE = 10 ** FRAC_DIGITS
_I128 = pa.decimal128(38, 0)

NUMERIC_ARROW = pa.struct([pa.field("n_int", _I128), pa.field("n_frac", _I128), pa.field("n_scale", pa.float64())])
NUMERIC_DUCKDB = "STRUCT(n_int DECIMAL(38,0), n_frac DECIMAL(38,0), n_scale DOUBLE)"

# the specials' n_int: beyond 2^96 (every number's floor is within it), in PostgreSQL's order
NEG_INF_INT = -(10 ** 36)
POS_INF_INT = 10 ** 36
NAN_INT = 2 * 10 ** 36
_SPECIAL_INT = {rd.NAN: NAN_INT, rd.POS_INF: POS_INF_INT, rd.NEG_INF: NEG_INF_INT}
_INT_SPECIAL = {v: k for k, v in _SPECIAL_INT.items()}

_QUIET_NAN = np.uint64(0x7FF8000000000000)
_PAYLOAD = np.uint64(0x3F)


def is_numeric_arrow(t: pa.DataType) -> bool:
    return t == NUMERIC_ARROW


def child(arr: pa.StructArray, name: str | int) -> pa.Array:
    """A struct array's field, row for row with the array (older pyarrow's StructArray.field
    ignored the array's offset)."""
    f = arr.field(name)
    return f if len(f) == len(arr) else f.slice(arr.offset, len(arr))


# -- int128 columns ------------------------------------------------------------------------------

def _words(arr: pa.Array) -> np.ndarray:
    """The (n, 2) uint64 little-endian words of a decimal128 array (null slots: whatever they hold)."""
    n = len(arr)
    buf = arr.buffers()[1]
    if buf is None or n == 0:
        return np.zeros((n, 2), dtype=np.uint64)
    words = np.frombuffer(buf, dtype=np.uint64, count=(arr.offset + n) * 2)
    return words[arr.offset * 2:].reshape(n, 2)


def int128_values(arr: pa.Array) -> list[int]:
    """The integers of a decimal128(38, 0) array (0 in null slots)."""
    w = _words(arr)
    lo = w[:, 0]
    hi = w[:, 1].view(np.int64)
    small = hi == (lo.view(np.int64) >> np.int64(63))  # the value fits 64 bits
    if small.all():
        return lo.view(np.int64).tolist()
    out = lo.view(np.int64).tolist()
    for i in np.flatnonzero(~small).tolist():
        out[i] = (int(hi[i]) << 64) | int(lo[i])
    return out


def int128_array(values: Sequence[int], validity: pa.Buffer | None = None, null_count: int = -1) -> pa.Array:
    """A decimal128(38, 0) array of Python ints (each within 38 digits)."""
    n = len(values)
    words = np.empty((n, 2), dtype=np.uint64)
    try:
        small = np.asarray(values, dtype=np.int64)
        words[:, 0] = small.view(np.uint64)
        words[:, 1] = (small >> np.int64(63)).view(np.uint64)
    except OverflowError:
        mask = (1 << 64) - 1
        words[:, 0] = [v & mask for v in values]
        words[:, 1] = [(v >> 64) & mask for v in values]
    return pa.Array.from_buffers(_I128, n, [validity, pa.py_buffer(words.tobytes())], null_count=null_count)


# -- scales --------------------------------------------------------------------------------------

def scales(arr: pa.Array) -> np.ndarray:
    """Each value's display scale (int8) from its NaN's payload: -1 where it was lost (and in
    null slots)."""
    f = child(arr, "n_scale") if isinstance(arr, pa.StructArray) else arr
    if len(f) == 0:
        return np.zeros(0, dtype=np.int8)
    bits = np.frombuffer(f.buffers()[1], dtype=np.uint64, count=f.offset + len(f))[f.offset:]
    return (bits & _PAYLOAD).astype(np.int8) - np.int8(1)


def known_scales(arr: pa.Array) -> np.ndarray:
    """Each value's display scale, the fewest fraction digits that hold it where it was lost."""
    s = scales(arr)
    lost = np.flatnonzero(s < 0)
    if len(lost):
        fracs = int128_values(child(arr, "n_frac"))
        for i in lost.tolist():
            s[i] = _min_scale(fracs[i])
    return s


def _min_scale(n_frac: int) -> int:
    if n_frac == 0:
        return 0
    digits = str(n_frac).rjust(FRAC_DIGITS, "0").rstrip("0")
    return len(digits)


def scale_array(s: np.ndarray) -> pa.Array:
    """float64 NaNs carrying the scales `s`."""
    bits = _QUIET_NAN | (np.asarray(s, dtype=np.int64) + 1).astype(np.uint64)
    return pa.Array.from_buffers(pa.float64(), len(bits), [None, pa.py_buffer(bits.tobytes())])


# -- struct arrays <-> rust_decimal values -------------------------------------------------------

def _split(v) -> tuple[int, int, int]:
    """A value's (n_int, n_frac, scale)."""
    if isinstance(v, str):
        return _SPECIAL_INT[v], 0, 0
    m, s = v
    p = 10 ** s
    n_int = m // p
    return n_int, (m - n_int * p) * (FRAC_ONE // p), s


def _join(n_int: int, n_frac: int, s: int):
    if n_int in _INT_SPECIAL and n_frac == 0:
        return _INT_SPECIAL[n_int]
    if s < 0:
        s = _min_scale(n_frac)
    p = 10 ** s
    return n_int * p + n_frac // (FRAC_ONE // p), s


def _struct(n_int: pa.Array, n_frac: pa.Array, n_scale: pa.Array, validity: pa.Array | None) -> pa.StructArray:
    mask = None if validity is None or validity.null_count == 0 and pc.all(validity).as_py() else pc.invert(validity)
    return pa.StructArray.from_arrays([n_int, n_frac, n_scale], fields=list(NUMERIC_ARROW), mask=mask)


def pack(values: Sequence) -> pa.StructArray:
    """A numeric array of rust_decimal values (None: NULL)."""
    n = len(values)
    ints, fracs, ss = [0] * n, [0] * n, np.zeros(n, dtype=np.uint64)
    valid = [v is not None for v in values]
    for i, v in enumerate(values):
        if v is not None:
            ints[i], fracs[i], ss[i] = _split(v)
    validity = None if all(valid) else pa.array(valid, pa.bool_())
    return _struct(int128_array(ints), int128_array(fracs), scale_array(ss), validity)


def struct_value(v) -> dict:
    """A Python number as one value of NUMERIC_ARROW's struct (a numeric nested in a struct
    or a list that Arrow builds from Python values)."""
    n_int, n_frac, s = _split(from_python(v))
    return {"n_int": decimal.Decimal(n_int), "n_frac": decimal.Decimal(n_frac), "n_scale": float(s)}


def unpack(arr: pa.Array) -> list:
    """The rust_decimal values of a numeric array (None: NULL)."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    if len(arr) == 0:
        return []
    ints = int128_values(child(arr, "n_int"))
    fracs = int128_values(child(arr, "n_frac"))
    ss = scales(arr).tolist()
    valid = [True] * len(arr) if arr.null_count == 0 else arr.is_valid().to_pylist()
    return [_join(i, f, s) if ok else None for i, f, s, ok in zip(ints, fracs, ss, valid)]


def from_ints(arr: pa.Array) -> pa.StructArray:
    """Integers (any width) as numerics of scale 0."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    n = len(arr)
    if pa.types.is_decimal(arr.type) or pa.types.is_uint64(arr.type):
        return pack([None if v is None else (int(v), 0) for v in arr.to_pylist()])
    ints = arr.cast(pa.int64()).fill_null(0).to_numpy(zero_copy_only=False)
    words = np.empty((n, 2), dtype=np.uint64)
    words[:, 0] = ints.view(np.uint64)
    words[:, 1] = (ints >> np.int64(63)).view(np.uint64)
    n_int = pa.Array.from_buffers(_I128, n, [None, pa.py_buffer(words.tobytes())])
    zeros = pa.Array.from_buffers(_I128, n, [None, pa.py_buffer(np.zeros(2 * n, dtype=np.uint64).tobytes())])
    validity = arr.is_valid() if arr.null_count else None
    return _struct(n_int, zeros, scale_array(np.zeros(n, dtype=np.uint64)), validity)


def from_parts(arr: pa.Array) -> pa.StructArray:
    """Numerics from structs (i: n_int, f: n_frac, s: scale), which carry the scale as a
    number (past DuckDB's min and max)."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    s = child(arr, "s").fill_null(0).to_numpy(zero_copy_only=False)
    return _struct(child(arr, "i").cast(_I128), child(arr, "f").cast(_I128), scale_array(s),
                   arr.is_valid() if arr.null_count else None)


def from_int128(arr: pa.Array, nulls: pa.Array | None = None) -> pa.StructArray:
    """Integers held as decimal128(38, 0) (exact sums) as numerics of scale 0, NULL where
    `nulls` is true; the integers are the n_int as they are."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    if isinstance(nulls, pa.ChunkedArray):
        nulls = nulls.combine_chunks()
    n = len(arr)
    n_int = pa.Array.from_buffers(_I128, n, [None, arr.buffers()[1]], offset=arr.offset)
    zeros = pa.Array.from_buffers(_I128, n, [None, pa.py_buffer(np.zeros(2 * n, dtype=np.uint64).tobytes())])
    valid = arr.is_valid()
    if nulls is not None:
        valid = pc.and_(valid, pc.invert(pc.fill_null(nulls, True)))
    return _struct(n_int, zeros, scale_array(np.zeros(n, dtype=np.uint64)), valid)


def from_decimals(arr: pa.Array) -> pa.StructArray:
    """An Arrow decimal array (one scale for all) as numerics of that scale; values rust_decimal
    cannot hold are out of range."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    s = arr.type.scale
    out = []
    for d in arr.to_pylist():
        out.append(None if d is None else from_python(d, min_scale=max(s, 0)))
    return pack(out)


# a number as text that the arrays below parse as rust_decimal does (what rd.parse reads more,
# and every row this does not match, it reads a row at a time): sign, digits, an optional
# fraction, no more than 28 digits in all (the mantissa stays below 2^96: no rounding) and 18
# before the point (an int64)
_PLAIN_TEXT = r"^\s*(?P<sign>[+-]?)(?P<int>\d{1,18})(?:\.(?P<frac>\d*))?\s*$"
_FRAC_I128 = pa.decimal128(29, 0)  # up to 10^28: the difference below stays within 38 digits


def parse_texts(arr: pa.Array, strict: bool = True) -> pa.StructArray:
    """Text as numerics (`rd.parse` of each value; NULL stays NULL): the plain numbers a load
    is made of (`12`, `-3.50`) a column at a time, the others (exponents, `_`, specials, long
    digit strings, bad text) by `rd.parse` — whose error a bad value raises (`strict`; else
    NULL, for a materialized view's expressions)."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    if not pa.types.is_string(arr.type):
        arr = arr.cast(pa.string())
    parts = pc.extract_regex(arr, _PLAIN_TEXT)
    sign, ints, fracs = (child(parts, k).fill_null("") for k in ("sign", "int", "frac"))
    digits = pc.add(pc.utf8_length(ints), pc.utf8_length(fracs))
    plain = pc.and_(pc.and_(arr.is_valid(), parts.is_valid()), pc.less_equal(pc.fill_null(digits, 0), FRAC_DIGITS))
    plain = plain.to_numpy(zero_copy_only=False)
    if not plain.all():
        ints = pc.if_else(plain, ints, "0")
        fracs = pc.if_else(plain, fracs, "")
    negative = pc.equal(sign, "-")
    nonzero = pc.match_substring_regex(fracs, "[1-9]")
    i = pc.cast(ints, pa.int64())
    f = pc.cast(pc.utf8_rpad(fracs, width=FRAC_DIGITS, padding="0"), _FRAC_I128)
    # V = -(i + f/10^28) for a negative: floor(V) = -i - 1 and the rest 10^28 - f when f > 0
    borrow = pc.and_(negative, nonzero)
    n_int = pc.if_else(negative, pc.subtract(pc.negate(i), pc.cast(borrow, pa.int64())), i).cast(_I128)
    n_frac = pc.if_else(borrow, pc.subtract(pa.scalar(FRAC_ONE, _FRAC_I128), f), f).cast(_I128)
    fast = _struct(n_int, n_frac, scale_array(pc.utf8_length(fracs).to_numpy(zero_copy_only=False)),
                   pa.array(plain))
    return _with_rows(fast, plain, lambda rows: arr.take(pa.array(rows)).to_pylist(), rd.parse, strict,
                      skip=~arr.is_valid().to_numpy(zero_copy_only=False))


_U64 = np.uint64
_LOW32 = _U64(0xFFFFFFFF)
_FAST_E2 = -160  # doubles below about 1e-32 take rd.from_f64's path (its rounding past 28 digits)


@functools.lru_cache(maxsize=1)
def _pow10_256() -> pa.Array:
    """10^0 .. 10^28 as decimal256 (built on first use: building it imports pandas and
    pyarrow.compute, which opening a data directory must not)."""
    return pa.array([10 ** k for k in range(FRAC_DIGITS + 1)], pa.decimal256(40, 0))


def _div10(hi: np.ndarray, lo: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(hi, lo) // 10 and the remainder, for 96-bit numbers in two words (hi < 2^32): long
    division over 32-bit limbs, no intermediate beyond 64 bits."""
    q2, r = hi // _U64(10), hi % _U64(10)
    t = (r << _U64(32)) | (lo >> _U64(32))
    q1, r = t // _U64(10), t % _U64(10)
    t = (r << _U64(32)) | (lo & _LOW32)
    q0, r = t // _U64(10), t % _U64(10)
    return q2, (q1 << _U64(32)) | q0, r


F64_CHUNK = 1 << 15  # values converted together: their words stay in the CPU's cache


def from_f64_array(values: np.ndarray, strict: bool = True) -> pa.StructArray:
    """`rd.from_f64` of every value (rust_decimal `from_f64`, bit for bit), its loops run over
    all the values at once on 96-bit numbers held in two words; the values outside what that
    covers (NaN, the infinities, magnitudes from 2^53 up or below ~1e-32) one by one. A value
rust_decimal cannot hold (7.9e28 and up) raises its error, or is NULL when not `strict`."""
    x = np.ascontiguousarray(values, dtype=np.float64)
    if len(x) > F64_CHUNK:
        return pa.concat_arrays([_from_f64_chunk(x[i:i + F64_CHUNK], strict) for i in range(0, len(x), F64_CHUNK)])
    return _from_f64_chunk(x, strict)


def from_f64_column(arr: pa.Array, strict: bool = True) -> pa.StructArray:
    """`from_f64_array` of a float64 Arrow array (NULL stays NULL)."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    out = from_f64_array(arr.fill_null(0.0).to_numpy(zero_copy_only=False), strict)
    if arr.null_count:
        out = pc.if_else(arr.is_valid(), out, pa.scalar(None, NUMERIC_ARROW))
    return out


def _from_f64_chunk(x: np.ndarray, strict: bool) -> pa.StructArray:
    n = len(x)
    raw = x.view(_U64)
    negative = (raw >> _U64(63)) == 1
    biased = ((raw >> _U64(52)) & _U64(0x7FF)).astype(np.int64)
    mant = raw & _U64((1 << 52) - 1)
    e2 = np.where(biased != 0, biased - 1023, -1022) - 52
    lo = np.where(biased != 0, mant | _U64(1 << 52), mant)
    hi = np.zeros(n, dtype=_U64)
    ok = np.isfinite(x) & (x != 0) & (e2 <= 0) & (e2 >= _FAST_E2)
    e5, e10 = np.where(ok, -e2, 0), np.where(ok, e2, 0)
    one, two, sixtytwo, sixtythree = _U64(1), _U64(2), _U64(62), _U64(63)
    steps = int(e5.max()) if n else 0
    for _ in range(steps):  # bits * 5^e5 into bits * 10^e10 within 96 bits (base2_to_decimal's first loop)
        act = e5 > 0
        l4 = lo << two
        m_lo = l4 + lo
        m_hi = (hi << two) + (lo >> sixtytwo) + hi + (m_lo < l4)
        times5 = act & ((lo & one) == one) & (m_hi <= _LOW32)
        shift = act & ~times5
        lo = np.where(times5, m_lo, np.where(shift, (lo >> one) | ((hi & one) << sixtythree), lo))
        hi = np.where(times5, m_hi, np.where(shift, hi >> one, hi))
        e10 += shift
        e5 -= act
    while True:  # at most 28 fraction digits: one digit at a time, half up (zero: scale 0)
        act = np.flatnonzero(ok & (e10 < -rd.MAX_SCALE))
        if not len(act):
            break
        q_hi, q_lo, r = _div10(hi[act], lo[act])
        zero = (q_hi == 0) & (q_lo == 0)
        up = ((r >= 5) & ~zero).astype(_U64)
        lo[act] = q_lo + up
        hi[act] = q_hi + ((q_lo + up) < q_lo).astype(_U64)
        e10[act] = np.where(zero, 0, e10[act] + 1)
    while True:  # rounded to the digits a double guarantees, one digit at a time, half up
        act = np.flatnonzero(ok & (e10 < 0) & ((hi > 0) | (lo >= _U64(1 << 52))))
        if not len(act):
            break
        q_hi, q_lo, r = _div10(hi[act], lo[act])
        up = (r >= 5).astype(_U64)
        lo[act] = q_lo + up
        hi[act] = q_hi + ((q_lo + up) < q_lo).astype(_U64)
        e10[act] += 1
    ok &= hi == 0
    while True:  # trailing zeros stripped
        act = np.flatnonzero(ok & (e10 < 0) & (lo % _U64(10) == 0) & (lo != 0))
        if not len(act):
            break
        lo[act] //= _U64(10)
        e10[act] += 1
    scale = np.where(ok, -e10, 0)
    small = scale <= 19
    p = np.where(small, _U64(10) ** np.minimum(scale, 19).astype(_U64), _U64(1))
    whole = np.where(small, lo // p, 0).astype(np.int64)
    frac = np.where(small, lo % p, lo).astype(np.int64)
    fast = _from_digits(negative & ok, whole, frac, scale, ok)
    return _with_rows(fast, ok, lambda rows: x[rows].tolist(), rd.from_f64, strict)


def _from_digits(negative: np.ndarray, whole: np.ndarray, frac: np.ndarray, scale: np.ndarray,
                 valid: np.ndarray) -> pa.StructArray:
    """Numerics from their parts: the sign, the integer part and the fraction's digits as an
    integer (both int64) at `scale` (0..28) digits; NULL where not `valid`."""
    # the fraction's digits as n_frac: frac * 10^(28 - scale), exact in decimal256
    f = pc.multiply(pa.array(frac).cast(pa.decimal256(20, 0)),
                    _pow10_256().take(pa.array(FRAC_DIGITS - scale))).cast(_FRAC_I128)
    borrow = negative & (frac != 0)  # -(w + f) = (-w - 1) + (1 - f)
    n_int = np.where(negative, -whole - borrow, whole)
    n_frac = pc.if_else(pa.array(borrow), pc.subtract(pa.scalar(FRAC_ONE, _FRAC_I128), f), f).cast(_I128)
    return _struct(pa.array(n_int).cast(_I128), n_frac, scale_array(scale), pa.array(valid))


def _with_rows(fast: pa.StructArray, done: np.ndarray, values: Callable[[np.ndarray], list], fn: Callable,
               strict: bool, skip: np.ndarray | None = None) -> pa.StructArray:
    """`fast` where `done`, elsewhere `fn` (a rust_decimal value) of each of the `values` of
    those rows (a function of their positions), but NULL where `skip` (NULL inputs); `fn`'s
    error is raised, or NULL when not `strict`."""
    rest = np.flatnonzero(~done if skip is None else ~done & ~skip)
    if not len(rest):
        return fast
    slow = []
    for v in values(rest):
        try:
            slow.append(fn(v))
        except rd.NumericError:
            if strict:
                raise
            slow.append(None)
    n = len(fast)
    where = np.arange(n)
    where[rest] = n + np.arange(len(rest))
    return pa.concat_arrays([fast, pack(slow)]).take(pa.array(where))


def _floor_fits(arr: pa.StructArray) -> tuple[np.ndarray, np.ndarray]:
    """(n_int as int64, whether it fits 62 bits) of a numeric array."""
    w = _words(child(arr, "n_int"))
    n_int = w[:, 0].view(np.int64)
    fits = (w[:, 1].view(np.int64) == (n_int >> np.int64(63))) & (n_int > -(1 << 62)) & (n_int < (1 << 62))
    return n_int, fits


def _magnitude(arr: pa.StructArray, n_int: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, pa.Array]:
    """At `rows` (whose floor fits 62 bits): (whether negative, the integer part of |V| as
    int64, the 28 digits of |V|'s fraction as text); zeros elsewhere. A negative V = n_int +
    f/10^28 is -((-n_int - 1) + (10^28 - f)/10^28) when f > 0."""
    n_int = np.where(rows, n_int, 0)
    fw = _words(child(arr, "n_frac"))
    negative = n_int < 0
    borrow = negative & ((fw[:, 0] | fw[:, 1]) != 0) & rows
    whole = np.where(negative, -n_int - borrow, n_int)
    frac = pc.if_else(pa.array(rows), child(arr, "n_frac"), pa.scalar(0, _I128)).cast(_FRAC_I128)
    frac = pc.if_else(pa.array(borrow), pc.subtract(pa.scalar(FRAC_ONE, _FRAC_I128), frac), frac)
    return negative, whole, pc.utf8_lpad(frac.cast(pa.string()), width=FRAC_DIGITS, padding="0")


def _leading_digits(frac28: pa.Array, counts: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """The first `counts` (0..18) of each row's 28 fraction digits as an int64 (at `rows`)."""
    out = np.zeros(len(frac28), dtype=np.int64)
    for k in np.unique(counts[rows]).tolist():
        if k:
            digits = pc.cast(pc.utf8_slice_codeunits(frac28, 0, k), pa.int64()).to_numpy(zero_copy_only=False)
            out = np.where(rows & (counts == k), digits, out)
    return out


def round_dp_arrays(arr: pa.Array, digits: pa.Array | None = None, strict: bool = True) -> pa.StructArray:
    """`rd.round_dp` (`digits` None: `rd.round_`) of each value: half away from zero to at most
    `digits` (0..18) fraction digits, a value with fewer keeping its own, by Arrow kernels on
    the fraction's digits; negative or larger digits, floors beyond 62 bits and the specials
    by `rd.round_dp`."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    n = len(arr)
    if isinstance(digits, pa.ChunkedArray):
        digits = digits.combine_chunks()
    d = np.zeros(n, dtype=np.int64) if digits is None else \
        digits.fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64)
    valid = arr.is_valid().to_numpy(zero_copy_only=False)
    if digits is not None:
        valid &= digits.is_valid().to_numpy(zero_copy_only=False)
    n_int, fits = _floor_fits(arr)
    s = known_scales(arr).astype(np.int64)
    fast = valid & fits & (d >= 0) & (d <= 18)
    keep = fast & (s <= d)  # as it is (round(1.5, 3) is 1.5)
    todo = fast & ~keep
    negative, whole, frac28 = _magnitude(arr, n_int, todo)
    q = _leading_digits(frac28, d, todo)
    up = np.zeros(n, dtype=bool)
    for k in np.unique(d[todo]).tolist():
        up |= (d == k) & pc.greater_equal(pc.utf8_slice_codeunits(frac28, k, k + 1), "5").to_numpy(
            zero_copy_only=False)
    q = q + (up & todo)
    carry = q == 10 ** np.clip(d, 0, 18)
    whole = whole + carry
    q = np.where(carry, 0, q)
    zero = (whole == 0) & (q == 0)
    rounded = _from_digits(negative & ~zero & todo, whole, q, np.where(todo, d, 0), todo)
    out = pc.if_else(pa.array(keep), arr, rounded) if keep.any() else rounded
    if digits is None:
        return _with_rows(out, fast, lambda rows: unpack(arr.take(pa.array(rows))), rd.round_, strict, skip=~valid)
    return _with_rows(out, fast, lambda rows: list(zip(unpack(arr.take(pa.array(rows))), d[rows].tolist())),
                      lambda v: rd.round_dp(*v), strict, skip=~valid)


def coerce(arr: pa.Array) -> pa.StructArray:
    """Any Arrow array of numbers (or text, or nulls) as numerics: integers and decimals keep
    their digits, floats convert as RisingWave casts them, text is parsed."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    t = arr.type
    if is_numeric_arrow(t):
        return arr
    if pa.types.is_null(t):
        return pack([None] * len(arr))
    if pa.types.is_integer(t) and not pa.types.is_uint64(t):
        return from_ints(arr)
    if pa.types.is_decimal(t):
        if t.scale == 0 and t.bit_width == 128:
            return from_int128(arr)
        return from_decimals(arr)
    if pa.types.is_float64(t):
        return from_f64_column(arr)
    if pa.types.is_floating(t):
        conv = rd.from_f32 if pa.types.is_float32(t) else rd.from_f64
        return pack([None if v is None else conv(v) for v in arr.to_pylist()])
    return pack([None if v is None else from_python(v) for v in arr.to_pylist()])


def cast(arr, t: pa.DataType):
    """`arr.cast(t)`, and into numeric by `coerce` (Arrow has no cast into its struct)."""
    if is_numeric_arrow(t) and not is_numeric_arrow(arr.type):
        return coerce(arr)
    return arr.cast(t)


def equal(a: pa.Array, b: pa.Array) -> pa.Array:
    """Whether two numerics are equal, as SQL compares them (1.5 = 1.50; NULL where either is)."""
    if isinstance(a, pa.ChunkedArray):
        a = a.combine_chunks()
    if isinstance(b, pa.ChunkedArray):
        b = b.combine_chunks()
    same = pc.and_(pc.equal(child(a, "n_int"), child(b, "n_int")), pc.equal(child(a, "n_frac"), child(b, "n_frac")))
    return pc.if_else(pc.or_(a.is_null(), b.is_null()), pa.scalar(None, pa.bool_()), same)


def from_python(d: decimal.Decimal | int | float | str, min_scale: int = 0):
    """A Python number (a Decimal keeps its exponent as its scale) as a rust_decimal value."""
    if isinstance(d, bool):
        raise TypeError("a boolean is no numeric")
    if isinstance(d, int):
        return rd.from_int(d)
    if isinstance(d, float):
        return rd.from_f64(d)
    if isinstance(d, str):
        return rd.parse(d)
    if d.is_nan():
        return rd.NAN
    if d.is_infinite():
        return rd.POS_INF if d > 0 else rd.NEG_INF
    sign, digits, exp = d.as_tuple()
    if exp > 0 or -exp < min_scale:
        d = d.quantize(decimal.Decimal(1).scaleb(-min_scale), context=decimal.Context(prec=200))
    return rd.parse(format(d, "f"))


def to_python(v) -> decimal.Decimal:
    """A rust_decimal value as a Python Decimal with the same digits."""
    return decimal.Decimal(rd.to_text(v))


def texts(arr: pa.Array) -> list[str | None]:
    """Each value as RisingWave prints it (a few values one by one: the kernels' fixed cost
    is more than theirs)."""
    if len(arr) <= 32:
        return [None if v is None else rd.to_text(v) for v in unpack(arr)]
    return text_array(arr).to_pylist()


def _powi10(n: np.ndarray) -> np.ndarray:
    """`rd._powi(10.0, n)` of each n (0..31): the same square-and-multiply, so the same
    rounded products."""
    result = np.ones(len(n))
    base = np.full(len(n), 10.0)
    n = n.copy()
    while n.any():
        odd = (n & 1) == 1
        result = np.where(odd, result * base, result)
        n >>= 1
        base = base * base
    return result


def to_f64_array(arr: pa.Array) -> np.ndarray:
    """`rd.to_f64` of each value (numeric into double precision, rust_decimal's way: the
    integer part plus the fraction as a quotient, rounded at the scale through 10^scale), in
    float64 arithmetic over the whole column; NaN in NULL slots. The specials, floors beyond
    62 bits and scales above 18 row by row."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    n = len(arr)
    valid = arr.is_valid().to_numpy(zero_copy_only=False)
    n_int, fits = _floor_fits(arr)
    s = known_scales(arr).astype(np.int64)
    fast = valid & fits & (s <= 18)
    negative, whole, frac28 = _magnitude(arr, n_int, fast)
    frac_part = _leading_digits(frac28, s, fast)
    with np.errstate(invalid="ignore", divide="ignore"):
        integral = whole.astype(np.float64)
        frac = frac_part.astype(np.float64) / (10 ** np.clip(s, 0, 18)).astype(np.float64)
        round_to = _powi10(np.clip(s, 0, 31))
        x = (integral + frac) * round_to
        f = np.floor(x)
        halfaway = np.where(x >= 4503599627370496.0, x, np.where(x - f >= 0.5, f + 1.0, f))
        rounded = np.where((s == 0) | (frac == 0.0), integral, halfaway / round_to)
    out = np.where(negative, -rounded, rounded)
    out[~valid] = np.nan
    rest = np.flatnonzero(valid & ~fast)
    if len(rest):
        out[rest] = [rd.to_f64(v) for v in unpack(arr.take(pa.array(rest)))]
    return out


def text_array(arr: pa.Array) -> pa.Array:
    """Each value as RisingWave prints it (`rd.to_text`: every digit of its scale; the fewest
    that hold it where the scale was lost), as a string array: by Arrow kernels for values
    whose floor fits 64 bits, row by row for the rest (the specials, 20 digits and more)."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    n = len(arr)
    if n == 0:
        return pa.array([], pa.string())
    valid = arr.is_valid().to_numpy(zero_copy_only=False)
    n_int, fits = _floor_fits(arr)
    fast = valid & fits
    negative, whole, frac28 = _magnitude(arr, n_int, fast)
    s = scales(arr)
    digits = pc.utf8_rtrim(frac28, characters="0")  # a lost scale: the fewest digits
    for scale in np.unique(s[fast & (s >= 0)]).tolist():
        at = pa.array(s == scale)
        digits = pc.if_else(at, pc.utf8_slice_codeunits(frac28, 0, scale), digits)
    point = pc.if_else(pc.greater(pc.utf8_length(digits), 0), ".", "")
    sign = pc.if_else(pa.array(negative), "-", "")
    text = pc.binary_join_element_wise(sign, pa.array(whole).cast(pa.string()), point, digits, "")
    rest = np.flatnonzero(valid & ~fast)
    if len(rest):
        slow = pa.array([rd.to_text(v) for v in unpack(arr.take(pa.array(rest)))], pa.string())
        where = np.arange(n)
        where[rest] = n + np.arange(len(rest))
        text = pa.concat_arrays([text, slow]).take(pa.array(where))
    if not valid.all():
        text = pc.if_else(pa.array(valid), text, pa.scalar(None, pa.string()))
    return text


def to_decimals(arr: pa.Array) -> pa.Array:
    """A numeric array as one Arrow decimal type that holds every value (the largest scale of
    them; decimal256 when 38 digits do not suffice), for Arrow, pandas and Parquet readers.
    NaN and the infinities have no Arrow decimal form: they are refused."""
    vals = unpack(arr)
    special = next((v for v in vals if isinstance(v, str)), None)
    if special is not None:
        raise rd.NumericError(f"numeric value {special} cannot be represented as an Arrow decimal")
    scale = max((v[1] for v in vals if v is not None), default=0)
    digits = max((len(str(abs(v[0]))) - v[1] for v in vals if v is not None), default=1)
    precision = max(1, digits) + scale
    t = pa.decimal128(38, scale) if precision <= 38 else pa.decimal256(76, scale)
    return pa.array([None if v is None else to_python(v) for v in vals], t)


def _has_numeric(t: pa.DataType) -> bool:
    if is_numeric_arrow(t):
        return True
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        return _has_numeric(t.value_type)
    if pa.types.is_struct(t):
        return any(_has_numeric(t.field(i).type) for i in range(t.num_fields))
    if pa.types.is_map(t):
        return _has_numeric(t.item_type)
    return False


def python_values(arr: pa.Array | pa.ChunkedArray) -> list:
    """A column's values as Python objects, numerics (at any depth) as Decimals with their own
    scale (`to_pylist` would give numerics' structs)."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks() if arr.num_chunks != 1 else arr.chunk(0)
    t = arr.type
    if not _has_numeric(t):
        return arr.to_pylist()
    if is_numeric_arrow(t):
        return [None if v is None else to_python(v) for v in unpack(arr)]
    if pa.types.is_struct(t):
        fields = [python_values(child(arr, i)) for i in range(t.num_fields)]
        names = [t.field(i).name for i in range(t.num_fields)]
        valid = arr.is_valid().to_pylist()
        return [dict(zip(names, vals)) if ok else None for ok, *vals in zip(valid, *fields)]
    if pa.types.is_map(t):
        return arr.to_pylist()  # (no map holds numerics: RisingWave's map values are not numeric here)
    values = python_values(arr.flatten())
    offsets = arr.offsets.to_pylist()
    base = offsets[0] if offsets else 0
    valid = arr.is_valid().to_pylist()
    return [values[offsets[i] - base:offsets[i + 1] - base] if valid[i] else None for i in range(len(arr))]


def plain_table(t: pa.Table) -> pa.Table:
    """A table with its numeric columns as Arrow decimals (`plain`): for Arrow readers and
    Parquet files."""
    if not any(is_numeric_arrow(x) for x in t.schema.types):
        return t
    return pa.table([plain(c) for c in t.columns], names=t.column_names)


def plain(arr: pa.Array | pa.ChunkedArray) -> pa.Array | pa.ChunkedArray:
    """A top-level numeric column as an Arrow decimal (what Arrow, pandas and polars read);
    with NaN or an infinity in it, as doubles, which hold those. Other columns as they are."""
    if not is_numeric_arrow(arr.type):
        return arr
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    try:
        return to_decimals(arr)
    except rd.NumericError:
        return pa.array([None if v is None else rd.to_f64(v) for v in unpack(arr)], pa.float64())


# -- vectorized arithmetic ----------------------------------------------------------------------
# add, sub and mul of the common values in numpy (rust_decimal's results where nothing needs
# rounding: a value within 64 bits before the point, a known scale); the other rows (overflow,
# rounding, NaN and the infinities, a lost scale) by rw_cli.common.rust_decimal, row by row.

_MASK64 = (1 << 64) - 1
_ONE_LO = np.uint64(FRAC_ONE & _MASK64)
_ONE_HI = np.uint64(FRAC_ONE >> 64)
_POW10_F = 10.0 ** np.arange(0, 40)
_POW10_I = np.array([10 ** k for k in range(19)], dtype=np.int64)
_LIMIT = float(2 ** 96) * 0.999


class _Columns:
    """A numeric array's fields as numpy: n_int (int64, where it fits), n_frac's words, the
    scales, and which rows the fast kernels may take."""

    def __init__(self, arr: pa.Array):
        if isinstance(arr, pa.ChunkedArray):
            arr = arr.combine_chunks()
        self.arr = arr
        iw = _words(child(arr, "n_int"))
        fw = _words(child(arr, "n_frac"))
        self.int = iw[:, 0].view(np.int64)
        self.lo = fw[:, 0].copy()
        self.hi = fw[:, 1].copy()
        self.scale = scales(arr).astype(np.int64)
        self.valid = np.ones(len(arr), dtype=bool) if arr.null_count == 0 else \
            arr.is_valid().to_numpy(zero_copy_only=False)
        small = iw[:, 1].view(np.int64) == (self.int >> np.int64(63))
        self.fast = small & (np.abs(self.int) < (1 << 61)) & (self.scale >= 0)

    def zero(self) -> np.ndarray:
        return (self.int == 0) & (self.lo == 0) & (self.hi == 0)

    def negated(self) -> "_Columns":
        """-V: (-n_int - 1, 10^28 - n_frac) when there is a fraction, (-n_int, 0) when not."""
        out = object.__new__(_Columns)
        out.__dict__.update(self.__dict__)
        has = (self.lo != 0) | (self.hi != 0)
        lo = _ONE_LO - self.lo
        borrow = (self.lo > _ONE_LO).astype(np.uint64)
        hi = _ONE_HI - self.hi - borrow
        out.int = np.where(has, -self.int - 1, -self.int)
        out.lo = np.where(has, lo, np.uint64(0))
        out.hi = np.where(has, hi, np.uint64(0))
        return out

    def mantissas(self, limit_scale: int = 15) -> tuple[np.ndarray, np.ndarray]:
        """(m, ok): each value's mantissa at its scale where it fits 62 bits and the scale is
        at most 15 (the fraction's digits from a double are exact there)."""
        s = np.minimum(np.maximum(self.scale, 0), 28)
        frac = self.lo.astype(np.float64) + self.hi.astype(np.float64) * 18446744073709551616.0
        digits = np.rint(frac / _POW10_F[28 - s])
        ok = self.fast & (self.scale <= limit_scale) & \
            ((np.abs(self.int).astype(np.float64) + 1) * _POW10_F[s] < 4e18)
        with np.errstate(invalid="ignore"):  # rows not ok may hold anything; they become 0
            digits = np.where(ok, digits, 0).astype(np.int64)
        m = np.where(ok, self.int * _POW10_I[np.where(ok, s, 0)] + digits, 0)
        return m, ok


def _int64_words(ints: np.ndarray) -> np.ndarray:
    """int64 values as (n, 2) uint64 words, a decimal128's layout."""
    w = np.empty((len(ints), 2), dtype=np.uint64)
    w[:, 0] = ints.view(np.uint64)
    w[:, 1] = (ints >> np.int64(63)).view(np.uint64)
    return w


def _word_pairs(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    w = np.empty((len(lo), 2), dtype=np.uint64)
    w[:, 0], w[:, 1] = lo, hi
    return w


def _result(n: int, iw: np.ndarray, fw: np.ndarray, s: np.ndarray, valid: np.ndarray,
            slow: dict[int, object]) -> pa.StructArray:
    """A numeric array from the fast kernels' n_int and n_frac words ((n, 2) uint64 each) and
    scales, with the rows computed apart (`slow`: row -> rust_decimal value or None)."""
    iw, fw = iw.copy(), fw.copy()
    scale = np.asarray(s, dtype=np.int64).copy()
    valid = valid.copy()
    if slow:  # (packed together: cheaper than setting numpy rows one by one)
        rows = np.fromiter(slow.keys(), dtype=np.int64, count=len(slow))
        packed = pack(list(slow.values()))
        iw[rows] = _words(child(packed, "n_int"))
        fw[rows] = _words(child(packed, "n_frac"))
        scale[rows] = scales(packed)
        valid[rows] = _validity(packed)
    n_int = pa.Array.from_buffers(_I128, n, [None, pa.py_buffer(iw.tobytes())])
    n_frac = pa.Array.from_buffers(_I128, n, [None, pa.py_buffer(fw.tobytes())])
    scale = np.minimum(np.maximum(scale, 0), 28)  # (np.clip costs more)
    return _struct(n_int, n_frac, scale_array(scale), None if valid.all() else pa.array(valid))


def _slow_rows(op, a: _Columns, b: _Columns, rows: np.ndarray, strict: bool) -> dict[int, object]:
    """The rows the fast kernel left, by rust_decimal (None where an error is NULL)."""
    return _reference_rows(op, (a.arr, b.arr), rows, strict)


def _reference_rows(op: Callable, args: Sequence[pa.Array], rows: np.ndarray, strict: bool) -> dict[int, object]:
    """`op` on the arguments' values (rust_decimal values for numerics, Python values
    otherwise) in the given rows: None where an argument is NULL, or where `op` fails and
    `strict` is off."""
    out: dict[int, object] = {}
    if len(rows) == 0:
        return out
    take = pa.array(rows)
    cols = [_python_or_numeric(arr.take(take)) for arr in args]
    for i, *values in zip(rows.tolist(), *cols):
        if any(v is None for v in values):
            out[i] = None
            continue
        try:
            out[i] = op(*values)
        except rd.NumericError:
            if strict:
                raise
            out[i] = None
    return out


def _python_or_numeric(arr: pa.Array) -> list:
    return unpack(arr) if is_numeric_arrow(arr.type) else arr.to_pylist()


def add_arrays(a: pa.Array, b: pa.Array, subtract: bool = False, strict: bool = True) -> pa.StructArray:
    """a + b (a - b), as rust_decimal adds."""
    x, y = _Columns(a), _Columns(b)
    if subtract:
        y = y.negated()
    n = len(x.valid)
    valid = x.valid & y.valid
    lo = x.lo + y.lo
    carry = (lo < x.lo).astype(np.uint64)
    hi = x.hi + y.hi + carry
    over = (hi > _ONE_HI) | ((hi == _ONE_HI) & (lo >= _ONE_LO))
    borrow = (over & (lo < _ONE_LO)).astype(np.uint64)
    lo = np.where(over, lo - _ONE_LO, lo)
    hi = np.where(over, hi - _ONE_HI - borrow, hi)
    ints = x.int + y.int + over.astype(np.int64)
    za, zb = x.zero(), y.zero()
    s = np.where(za, y.scale, np.where(zb, x.scale, np.maximum(x.scale, y.scale)))
    fits = (np.abs(ints).astype(np.float64) + 1) * _POW10_F[np.clip(s, 0, 39)] < _LIMIT
    fast = x.fast & y.fast & fits
    slow = np.flatnonzero(valid & ~fast)
    op = rd.sub if subtract else rd.add
    return _result(n, _int64_words(ints), _word_pairs(lo, hi), s, valid,
                   _slow_rows(op, _Columns(a), _Columns(b), slow, strict))


def mul_arrays(a: pa.Array, b: pa.Array, strict: bool = True) -> pa.StructArray:
    """a * b, as rust_decimal multiplies."""
    x, y = _Columns(a), _Columns(b)
    n = len(x.valid)
    valid = x.valid & y.valid
    ma, oka = x.mantissas()
    mb, okb = y.mantissas()
    s = x.scale + y.scale
    zero = (ma == 0) | (mb == 0)
    fast = oka & okb & ((s <= 18) | zero) & (np.abs(ma).astype(np.float64) * np.abs(mb).astype(np.float64) < 4e18)
    m = np.where(fast, ma * mb, 0)
    s = np.where(zero, 0, np.clip(s, 0, 18))
    p = _POW10_I[s]
    ints = np.floor_divide(m, p)
    digits = m - ints * p  # the fraction's digits, 0 <= digits < 10^s
    fw = _frac_words(digits, s)
    slow = np.flatnonzero(valid & ~fast)
    return _result(n, _int64_words(ints), fw, s, valid, _slow_rows(rd.mul, x, y, slow, strict))


@functools.cache
def _pow10_decimals() -> pa.Array:
    """10^0 .. 10^28 as decimal256 (built on first use: building decimals imports pandas)."""
    return pa.array([decimal.Decimal(10 ** k) for k in range(29)], pa.decimal256(38, 0))


def _frac_words(digits: np.ndarray, s: np.ndarray) -> np.ndarray:
    """n_frac = digits * 10^(28 - s), as (n, 2) uint64 words (Arrow's decimal256 product)."""
    prod = pc.multiply(pa.array(digits, pa.int64()).cast(pa.decimal256(19, 0)),
                       _pow10_decimals().take(pa.array(28 - s))).cast(_I128)
    return _words(prod).copy()


# -- vectorized division ------------------------------------------------------------------------
# rust_decimal's checked_div (rd._div) where the divisor's mantissa fits 32 bits: the branch of
# its ops/div.rs that divides the 96-bit quotient by one 32-bit word, which covers counts and
# most divisors people write. A magnitude here is 32-bit limbs, least significant first, in an
# (L, n) uint64 array (three limbs hold rust_decimal's 96 bits, four an int128): a limb times a
# factor below 2^32 plus a carry, and a remainder below 2^32 shifted past a limb, stay within
# 64 bits. The other rows (a wider divisor, a zero one, NaN and the infinities, quotients that
# overflow or reach 2^96 and must lose a digit) go through rw_cli.common.rust_decimal, row by row.
# (numpy divides by one scalar far faster than by a column, and takes rows by index far faster
# than by a mask: hence `_uniform` and the np.take's.)

_LIMB = np.uint64(0xFFFFFFFF)
_BITS = np.uint64(32)
_POW10_U = np.array([10 ** k for k in range(10)], dtype=np.uint64)
# rust_decimal's POWER_OVERFLOW_VALUES: the largest q with q * 10^k within 96 bits, k = 1..9
_FIT_LIMITS = [rd.MAX_MANTISSA // 10 ** k for k in range(1, 10)]
_MAX_F = float(rd.MAX_MANTISSA)
# a special's n_int is beyond +-2^100 (10^36 and up), a number's within +-2^96
_SPECIAL_HI = np.int64(1 << 36)


def _limbs(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """A 128-bit magnitude's two uint64 words as four limbs."""
    return np.stack([lo & _LIMB, lo >> _BITS, hi & _LIMB, hi >> _BITS])


def _limb_words(x: np.ndarray) -> np.ndarray:
    """Three or four limbs as (n, 2) uint64 words, a decimal128's layout."""
    hi = x[2] | (x[3] << _BITS) if len(x) == 4 else x[2]
    return _word_pairs(x[0] | (x[1] << _BITS), hi)


def _constant_limbs(v: int, limbs: int, n: int) -> np.ndarray:
    column = np.array([(v >> (32 * i)) & 0xFFFFFFFF for i in range(limbs)], dtype=np.uint64)
    return np.repeat(column[:, None], n, axis=1)


def _nonzero(x: np.ndarray) -> np.ndarray:
    return (x != 0).any(axis=0)


def _uniform(k: np.ndarray) -> np.ndarray | np.uint64:
    """10^k for each row: one scalar when every row has the same k (numpy then divides by
    multiplying), else a column."""
    if len(k) and k.min() == k.max():
        return _POW10_U[k[0]]
    return _POW10_U[k]


def _signed(w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(negative, magnitude as four limbs) of two's complement (n, 2) decimal128 words."""
    lo, hi = w[:, 0], w[:, 1]
    neg = (hi >> np.uint64(63)).astype(bool)
    nlo = ~lo + np.uint64(1)
    nhi = ~hi + (nlo == 0).astype(np.uint64)
    return neg, _limbs(np.where(neg, nlo, lo), np.where(neg, nhi, hi))


def _add(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """x + y and the carry out of the top limb."""
    out = np.empty_like(x)
    carry = np.zeros(x.shape[1], dtype=np.uint64)
    for i in range(len(x)):
        t = x[i] + y[i] + carry
        out[i] = t & _LIMB
        carry = t >> _BITS
    return out, carry


def _sub(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """x - y, for x >= y (a borrow wraps a limb's difference past 2^63)."""
    out = np.empty_like(x)
    borrow = np.zeros(x.shape[1], dtype=np.uint64)
    for i in range(len(x)):
        t = x[i] - y[i] - borrow
        out[i] = t & _LIMB
        borrow = t >> np.uint64(63)
    return out


def _less(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    less = np.zeros(x.shape[1], dtype=bool)
    equal = np.ones(x.shape[1], dtype=bool)
    for i in range(len(x) - 1, -1, -1):
        less |= equal & (x[i] < y[i])
        equal &= x[i] == y[i]
    return less


def _mul_small(x: np.ndarray, k, add: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """x * k + add (k and add below 2^32, k per row or one for all) and the carry out of the
    top limb."""
    out = np.empty_like(x)
    carry = np.zeros(x.shape[1], dtype=np.uint64) if add is None else add.astype(np.uint64, copy=False)
    for i in range(len(x)):
        t = x[i] * k + carry
        out[i] = t & _LIMB
        carry = t >> _BITS
    return out, carry


def _divmod_small(x: np.ndarray, d) -> tuple[np.ndarray, np.ndarray]:
    """(x // d, x % d) for 0 < d < 2^32 (per row or one for all): long division a limb at a
    time."""
    q = np.empty_like(x)
    r = np.zeros(x.shape[1], dtype=np.uint64)
    for i in range(len(x) - 1, -1, -1):
        q[i], r = _divmod((r << _BITS) | x[i], d)
    return q, r


def _divmod(x: np.ndarray, d) -> tuple[np.ndarray, np.ndarray]:
    """np.divmod, but by a scalar through floor_divide, which numpy does by multiplying (its
    divmod does not)."""
    if isinstance(d, np.ndarray):
        return np.divmod(x, d)
    q = x // d
    return q, x - q * d


def _mul_pow10(x: np.ndarray, k: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """x * 10^k (k >= 0 per row, nine digits a pass) and where that left the top limb."""
    over = np.zeros(x.shape[1], dtype=bool)
    k = np.asarray(k, dtype=np.int64)
    while len(k) and k.max() > 0:
        step = np.minimum(k, 9)
        x, carry = _mul_small(x, _uniform(step))
        over |= carry != 0
        k = k - step
    return x, over


def _div_pow10(x: np.ndarray, k: np.ndarray) -> np.ndarray:
    """x // 10^k (k >= 0 per row): ⌊⌊x / a⌋ / b⌋ is ⌊x / ab⌋, so nine digits a pass."""
    k = np.asarray(k, dtype=np.int64)
    while len(k) and k.max() > 0:
        step = np.minimum(k, 9)
        x, _ = _divmod_small(x, _uniform(step))
        k = k - step
    return x


def _divmod_pow10(x: np.ndarray, k: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(x // 10^k, x % 10^k) (k >= 0 per row): nine digits a pass, the remainder put together
    from the passes' remainders, r1 + p1·(r2 + p2·(r3 + ...)), without dividing again."""
    parts = []
    k = np.asarray(k, dtype=np.int64)
    while len(k) and k.max() > 0:
        step = np.minimum(k, 9)
        power = _uniform(step)
        x, r = _divmod_small(x, power)
        parts.append((power, r))
        k = k - step
    rest = np.zeros_like(x)
    for power, r in reversed(parts):
        rest, _ = _mul_small(rest, power, r)
    return x, rest


def _compose(iw: np.ndarray, fw: np.ndarray, s: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The mantissa ⌊(int + frac·10^-28)·10^s⌋ of a numeric's fields, or of their sums over a
    group (frac >= 0, possibly past 10^28), as (negative, magnitude in three limbs, fits 96
    bits)."""
    neg, whole = _signed(iw)
    whole, over = _mul_pow10(whole, s)
    frac = _div_pow10(_limbs(fw[:, 0], fw[:, 1]), FRAC_DIGITS - s)
    total, carry = _add(whole, frac)
    flip = neg & _less(whole, frac)  # -whole + frac > 0
    diff = _sub(np.where(flip, frac, whole), np.where(flip, whole, frac))
    mag = np.where(neg, diff, total)
    fits = ~over & (neg | (carry == 0)) & (mag[3] == 0)
    return neg & ~flip & _nonzero(mag), mag[:3], fits


def _fields(neg: np.ndarray, mag: np.ndarray, s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The n_int and n_frac words of the values ±mag·10^-s (mag in three limbs)."""
    ip, digits = _divmod_pow10(mag, s)
    iw, fw = _limb_words(ip), _limb_words(_mul_pow10(digits, FRAC_DIGITS - s)[0])
    rows = neg.nonzero()[0]
    if len(rows):
        _negate(iw, fw, rows)
    return iw, fw


def _negate(iw: np.ndarray, fw: np.ndarray, rows: np.ndarray) -> None:
    """n_int and n_frac of -V for V's in the given rows, in place: (-n_int - 1, 10^28 - n_frac)
    when there is a fraction, (-n_int, 0) when not (as _Columns.negated)."""
    ilo, ihi, flo, fhi = iw[rows, 0], iw[rows, 1], fw[rows, 0], fw[rows, 1]
    has = (flo | fhi) != 0
    borrow = (flo > _ONE_LO).astype(np.uint64)
    fw[rows, 0] = np.where(has, _ONE_LO - flo, np.uint64(0))
    fw[rows, 1] = np.where(has, _ONE_HI - fhi - borrow, np.uint64(0))
    one = (~has).astype(np.uint64)  # -n_int is ~n_int + 1, -n_int - 1 is ~n_int
    nlo = ~ilo + one
    iw[rows, 0] = nlo
    iw[rows, 1] = ~ihi + (one & (nlo == 0))


class _Mantissas:
    """A numeric array as mantissas (sign, magnitude in three limbs, scale) and which rows
    hold a number within 96 bits (not NULL, NaN or an infinity). Most values take
    `_Columns.mantissas`' int64 path; the others are composed from their fields in limbs."""

    def __init__(self, arr: pa.StructArray):
        cols = _Columns(arr)
        self.valid = cols.valid
        m, ok = cols.mantissas()
        self.ok = ok & cols.valid
        self.neg = m < 0
        mag = np.abs(m).view(np.uint64)
        self.mag = np.stack([mag & _LIMB, mag >> _BITS, np.zeros_like(mag)])
        self.scale = np.where(ok, cols.scale, 0)
        rest = (cols.valid & ~ok).nonzero()[0]
        if len(rest):
            self._compose(cols, rest)

    def _compose(self, cols: _Columns, rows: np.ndarray) -> None:
        fw = _words(child(cols.arr, "n_frac"))[rows]
        s = cols.scale[rows]
        for j in (s < 0).nonzero()[0].tolist():  # a lost scale
            s[j] = _min_scale(int(fw[j, 0]) | int(fw[j, 1]) << 64)
        known = s <= rd.MAX_SCALE
        s = np.where(known, s, 0)
        neg, mag, fits = _compose(_words(child(cols.arr, "n_int"))[rows], fw, s)
        self.neg[rows], self.mag[:, rows], self.scale[rows], self.ok[rows] = neg, mag, s, known & fits


def _fit_digits(q: np.ndarray) -> np.ndarray:
    """_find_scale's `fit`: how many digits (at most 9) each quotient may grow by within 96
    bits, ⌊log10(MAX / q)⌋. Doubles say it, except within a hair of a whole log, where the
    limbs decide."""
    qf = q[0].astype(np.float64) + q[1].astype(np.float64) * 4294967296.0 + \
        q[2].astype(np.float64) * 18446744073709551616.0
    log = np.log10(_MAX_F / np.maximum(qf, 1.0))
    fit = np.minimum(log, 9.0).astype(np.int64)
    near = ((np.abs(log - np.rint(log)) < 1e-9) & (log < 9.5)).nonzero()[0]
    if len(near):
        sub = np.take(q, near, axis=1)
        fit[near] = sum((~_less(_constant_limbs(v, 3, len(near)), sub)).astype(np.int64) for v in _FIT_LIMITS)
    return fit


def _steps(q: np.ndarray, r: np.ndarray, scale: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """How many digits each quotient grows by next (0: round the remainder and stop) and
    where it cannot reach scale 0 (_div's overflow), as rd._div decides: an exact quotient
    grows to scale 0; an inexact one by _find_scale's min(fit, 28 - scale), which fails where
    fit is below 9 and -scale."""
    exact = r == 0
    fit = _fit_digits(q)
    step = np.where(exact, np.minimum(np.maximum(-scale, 0), 9), np.minimum(fit, rd.MAX_SCALE - scale))
    fail = ~exact & (fit < np.minimum(-scale, 9))
    return step, fail


def _quotients(num: np.ndarray, d: np.ndarray, scale: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """|a| / |b| as rd._div computes it, for divisors d (uint64, 0 < d < 2^32): num the
    dividend's magnitude (three limbs), scale its scale less the divisor's (0 for a zero
    dividend). The quotient's magnitude and scale, and False where they are not rust_decimal's
    (an overflow, or a quotient reaching 2^96 that _unscale_from_overflow shortens: the
    reference's rows). Each pass grows the quotients still dividing by up to nine digits."""
    n = len(d)
    d = _uniform_divisor(d)
    q, r = _divmod_small(num, d)
    out_q = np.zeros((3, n), dtype=np.uint64)
    out_s = np.zeros(n, dtype=np.int64)
    out_inexact = np.zeros(n, dtype=bool)
    ok = np.ones(n, dtype=bool)
    rows, scale, inexact = np.arange(n), scale.astype(np.int64), np.zeros(n, dtype=bool)
    while len(rows):
        step, fail = _steps(q, r, scale)
        inexact |= r != 0
        end = (step == 0) & ~fail
        power = _POW10_U[step]
        digits, r = _divmod(r * power, d)  # (where the quotient ends: 0, and r as it was)
        twice = r << np.uint64(1)
        odd = (q[0] & np.uint64(1)) == 1
        up = end & ((twice > d) | ((twice == d) & odd))  # the last remainder, half to even
        q, carry = _mul_small(q, power, digits + up)
        fail |= carry != 0
        scale = scale + step
        stop = end | fail
        if not stop.any():
            continue
        fin = (end & ~fail).nonzero()[0]
        done = rows[fin]
        out_q[:, done], out_s[done], out_inexact[done] = np.take(q, fin, axis=1), scale[fin], inexact[fin]
        ok[rows[fail]] = False
        keep = (~stop).nonzero()[0]
        rows, q, r, scale, inexact = rows[keep], np.take(q, keep, axis=1), r[keep], scale[keep], inexact[keep]
        d = d[keep] if isinstance(d, np.ndarray) else d
    _unscale(out_q, out_s, out_inexact)
    return out_q, out_s, ok


def _uniform_divisor(d: np.ndarray) -> np.ndarray | np.uint64:
    """One scalar for a column of one divisor (x / 2, avg over equal counts): see `_divmod`."""
    return d[0] if len(d) and d.min() == d.max() else d


def _unscale(q: np.ndarray, scale: np.ndarray, inexact: np.ndarray) -> None:
    """rd._unscale in place on the inexact quotients: 10^8 while the low limb is zero (at
    most three times from scale 28), then 10^4, 10^2 and 10 once each, where the low bits and
    the digits allow."""
    for _ in range(3):
        if not _drop_zeros(q, scale, inexact & (q[0] == 0) & (scale >= 8), 8):
            break
    for k, low_bits in ((4, 0xF), (2, 0x3), (1, 0x1)):
        _drop_zeros(q, scale, inexact & ((q[0] & np.uint64(low_bits)) == 0) & (scale >= k), k)


def _drop_zeros(q: np.ndarray, scale: np.ndarray, candidates: np.ndarray, k: int) -> bool:
    """Divide by 10^k the candidates that end in k zeros; whether there were any."""
    rows = candidates.nonzero()[0]
    if len(rows) == 0:
        return False
    shorter, rest = _divmod_small(np.take(q, rows, axis=1), _POW10_U[k])
    exact = (rest == 0).nonzero()[0]
    q[:, rows[exact]] = np.take(shorter, exact, axis=1)
    scale[rows[exact]] -= k
    return len(exact) > 0


def _combined(arr: pa.Array | pa.ChunkedArray) -> pa.Array:
    return arr.combine_chunks() if isinstance(arr, pa.ChunkedArray) else arr


def _validity(arr: pa.Array) -> np.ndarray:
    if arr.null_count == 0:
        return np.ones(len(arr), dtype=bool)
    return arr.is_valid().to_numpy(zero_copy_only=False)


def _quotient_result(neg: np.ndarray, num: np.ndarray, d: np.ndarray, scale: np.ndarray, fast: np.ndarray,
                     valid: np.ndarray, op: Callable, args: Sequence[pa.Array], strict: bool) -> pa.StructArray:
    """±num / d in the `fast` rows, `op` on `args` in the other valid ones."""
    q, s, ok = _quotients(np.where(fast, num, np.uint64(0)), np.where(fast, d, np.uint64(1)),
                          np.where(fast & _nonzero(num), scale, 0))
    fast = fast & ok
    iw, fw = _fields(neg & _nonzero(q), q, s)
    slow = (valid & ~fast).nonzero()[0]
    return _result(len(valid), iw, fw, s, valid, _reference_rows(op, args, slow, strict))


def div_arrays(a: pa.Array, b: pa.Array, strict: bool = True) -> pa.StructArray:
    """a / b, as RisingWave divides numerics (rd.div): numpy where the divisor's mantissa
    fits 32 bits, rust_decimal in the other rows. A zero divisor is `Division by zero` when
    strict, NULL when not."""
    a, b = _combined(a), _combined(b)
    x, y = _Mantissas(a), _Mantissas(b)
    d = y.mag[0]
    fast = x.ok & y.ok & (y.mag[1] == 0) & (y.mag[2] == 0) & (d != 0)
    return _quotient_result(x.neg != y.neg, x.mag, d, x.scale - y.scale, fast, x.valid & y.valid,
                            rd.div, (a, b), strict)


def _avg_int(total, count: int):
    return rd.avg_int(int(total), int(count))


def avg_int_arrays(sums: pa.Array, counts: pa.Array, strict: bool = True) -> pa.StructArray:
    """avg of integers from their decimal128(38, 0) sums and their counts (rd.avg_int: the
    sum over the count as numerics divide; NULL for a count of 0): numpy where the count is
    below 2^32 and the sum within 96 bits."""
    sums, counts = _combined(sums), _combined(counts).cast(pa.int64())
    neg, mag = _signed(_words(sums))
    c = counts.fill_null(0).to_numpy(zero_copy_only=False)
    valid = _validity(sums) & _validity(counts) & (c != 0)
    fast = valid & (mag[3] == 0) & (c > 0) & (c < 1 << 32)
    zeros = np.zeros(len(c), dtype=np.int64)
    return _quotient_result(neg, mag[:3], c.astype(np.uint64), zeros, fast, valid, _avg_int, (sums, counts), strict)


def sum_parts_arrays(int_sum: pa.Array, frac_sum: pa.Array, scale: pa.Array, top: pa.Array, bottom: pa.Array,
                     reference: Callable, strict: bool = True, counts: pa.Array | None = None) -> pa.StructArray:
    """A group's sum of numerics from DuckDB's sums of their n_int and n_frac, their largest
    scale s and their greatest and least n_int: ⌊sum·10^s⌋ at scale s, in numpy where that fits
    96 bits; with `counts`, that sum over the count as rd.div divides (avg, without making the
    sums numerics first). `reference` (the row function: rw_cli.engine.numeric_udfs._sum_parts,
    or _avg_parts, which also takes the count) computes the rest: NaN and the infinities, which
    `top` and `bottom` tell, sums rust_decimal rounds, counts of 0 or from 2^32."""
    args = [_combined(x) for x in (int_sum, frac_sum, scale, top, bottom)]
    if counts is not None:
        args.append(_combined(counts).cast(pa.int64()))
    valid = np.logical_and.reduce([_validity(x) for x in args])
    s = args[2].cast(pa.int64()).fill_null(0).to_numpy(zero_copy_only=False)
    known = (s >= 0) & (s <= rd.MAX_SCALE)
    s = np.where(known, s, 0)
    fw = _words(args[1])
    neg, mag, fits = _compose(_words(args[0]), fw, s)
    special = (_words(args[3])[:, 1].view(np.int64) >= _SPECIAL_HI) | \
        (_words(args[4])[:, 1].view(np.int64) < -_SPECIAL_HI)
    fast = valid & known & fits & ~special & (fw[:, 1] >> np.uint64(63) == 0)
    if counts is not None:
        c = args[5].fill_null(0).to_numpy(zero_copy_only=False)
        fast &= (c > 0) & (c < 1 << 32)
        return _quotient_result(neg, mag, c.astype(np.uint64), s, fast, valid, reference, args, strict)
    iw, nf = _fields(neg, np.where(fast, mag, np.uint64(0)), s)
    slow = (valid & ~fast).nonzero()[0]
    return _result(len(valid), iw, nf, s, valid, _reference_rows(reference, args, slow, strict))
