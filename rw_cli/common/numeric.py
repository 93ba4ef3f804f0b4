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
converts between the struct arrays and rust_decimal values, and from and to Arrow decimals.
"""
from __future__ import annotations

import decimal
import functools
from collections.abc import Sequence

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
    """Each value as RisingWave prints it."""
    return [None if v is None else rd.to_text(v) for v in unpack(arr)]


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
        s = np.clip(self.scale, 0, 28)
        frac = self.lo.astype(np.float64) + self.hi.astype(np.float64) * 18446744073709551616.0
        digits = np.rint(frac / _POW10_F[28 - s])
        ok = self.fast & (self.scale <= limit_scale) & \
            ((np.abs(self.int).astype(np.float64) + 1) * _POW10_F[s] < 4e18)
        digits = np.where(ok, digits, 0).astype(np.int64)
        m = np.where(ok, self.int * _POW10_I[np.where(ok, s, 0)] + digits, 0)
        return m, ok


def _result(n: int, ints: np.ndarray, lo: np.ndarray, hi: np.ndarray, s: np.ndarray, valid: np.ndarray,
            slow: dict[int, object]) -> pa.StructArray:
    """A numeric array from the fast kernels' int64 n_int, n_frac words and scales, with the
    rows computed apart (`slow`: row -> rust_decimal value or None)."""
    iw = np.empty((n, 2), dtype=np.uint64)
    iw[:, 0] = ints.view(np.uint64)
    iw[:, 1] = (ints >> np.int64(63)).view(np.uint64)
    fw = np.empty((n, 2), dtype=np.uint64)
    fw[:, 0], fw[:, 1] = lo, hi
    scale = np.asarray(s, dtype=np.int64).copy()
    valid = valid.copy()
    for i, v in slow.items():
        if v is None:
            valid[i] = False
            continue
        a, f, sc = _split(v)
        iw[i] = (a & _MASK64, (a >> 64) & _MASK64)
        fw[i] = (f & _MASK64, f >> 64)
        scale[i] = sc
    n_int = pa.Array.from_buffers(_I128, n, [None, pa.py_buffer(iw.tobytes())])
    n_frac = pa.Array.from_buffers(_I128, n, [None, pa.py_buffer(fw.tobytes())])
    return _struct(n_int, n_frac, scale_array(np.clip(scale, 0, 28)), None if valid.all() else pa.array(valid))


def _slow_rows(op, a: _Columns, b: _Columns, rows: np.ndarray, strict: bool) -> dict[int, object]:
    """The rows the fast kernel left, by rust_decimal (None where an error is NULL)."""
    out: dict[int, object] = {}
    if len(rows) == 0:
        return out
    take = pa.array(rows)
    xs, ys = unpack(a.arr.take(take)), unpack(b.arr.take(take))
    for i, x, y in zip(rows.tolist(), xs, ys):
        if x is None or y is None:
            out[i] = None
            continue
        try:
            out[i] = op(x, y)
        except rd.NumericError:
            if strict:
                raise
            out[i] = None
    return out


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
    return _result(n, ints, lo, hi, s, valid, _slow_rows(op, _Columns(a), _Columns(b), slow, strict))


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
    return _result(n, ints, fw[:, 0], fw[:, 1], s, valid, _slow_rows(rd.mul, x, y, slow, strict))


@functools.cache
def _pow10_decimals() -> pa.Array:
    """10^0 .. 10^28 as decimal256 (built on first use: building decimals imports pandas)."""
    return pa.array([decimal.Decimal(10 ** k) for k in range(29)], pa.decimal256(38, 0))


def _frac_words(digits: np.ndarray, s: np.ndarray) -> np.ndarray:
    """n_frac = digits * 10^(28 - s), as (n, 2) uint64 words (Arrow's decimal256 product)."""
    prod = pc.multiply(pa.array(digits, pa.int64()).cast(pa.decimal256(19, 0)),
                       _pow10_decimals().take(pa.array(28 - s))).cast(_I128)
    return _words(prod).copy()
