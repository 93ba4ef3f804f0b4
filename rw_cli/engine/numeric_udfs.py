"""numeric's operations as DuckDB UDFs over Arrow chunks (rw_cli.common.numeric holds the
representation, rw_cli.common.rust_decimal the arithmetic).

Each operation that can fail (overflow, division by zero, bad text) also has a NULL-returning
form, `<name>_or_null`, that a materialized view's expressions call: RisingWave's streaming
gives NULL for a row an expression fails on instead of stopping.
"""
from __future__ import annotations

import json
from collections.abc import Callable

import numpy as np
import pyarrow as pa

from rw_cli.common import numeric as N
from rw_cli.common import rust_decimal as rd

NUM = N.NUMERIC_DUCKDB
PARTS = "STRUCT(i DECIMAL(38,0), f DECIMAL(38,0), s TINYINT)"  # a numeric with its scale as a number


def _values(arr: pa.Array) -> list:
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    if N.is_numeric_arrow(arr.type):
        return N.unpack(arr)
    return arr.to_pylist()


def _apply(fn: Callable, args: tuple[pa.Array, ...], strict: bool) -> list:
    cols = [_values(a) for a in args]
    out = []
    for row in zip(*cols):
        if any(v is None for v in row):
            out.append(None)
            continue
        try:
            out.append(fn(*row))
        except rd.NumericError:
            if strict:
                raise
            out.append(None)
    return out


def _arity(body: Callable[..., pa.Array], n: int) -> Callable:
    """`body` as a function of exactly n arguments (DuckDB counts a UDF's parameters)."""
    return [lambda a: body(a), lambda a, b: body(a, b), lambda a, b, c: body(a, b, c),
            lambda a, b, c, d: body(a, b, c, d), lambda a, b, c, d, e: body(a, b, c, d, e),
            lambda a, b, c, d, e, f: body(a, b, c, d, e, f)][n - 1]


def _to_numeric(fn: Callable, n: int, strict: bool = True) -> Callable:
    """A UDF giving numerics: `fn` maps argument values (rust_decimal values for numerics,
    Python values otherwise) to a rust_decimal value."""
    return _arity(lambda *args: N.pack(_apply(fn, args, strict)), n)


def _to_arrow(fn: Callable, out_type: pa.DataType, n: int, strict: bool = True) -> Callable:
    """A UDF giving another type (`fn` returns a Python value of it)."""
    return _arity(lambda *args: pa.array(_apply(fn, args, strict), out_type), n)


def _scale_of(arr: pa.Array) -> pa.Array:
    """Each value's display scale, read off its NaN (the specials' is 0): for max() over a
    group, which SQL cannot read."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    s = N.known_scales(arr)
    mask = None if arr.null_count == 0 else np.asarray(arr.is_null().to_numpy(zero_copy_only=False))
    return pa.array(s, pa.int8(), mask=mask)


def _from_ints(arr: pa.Array) -> pa.Array:
    """Integers of any width (DuckDB hands them over as DECIMAL(38,0)) as numerics."""
    return N.coerce(arr)


def _sum_parts(int_sum, frac_sum, scale, top, bottom):
    """A group's sum from DuckDB's sums of n_int and n_frac, its largest scale and its least
    and greatest n_int (which tell NaN and the infinities)."""
    if top == N.NAN_INT or (top == N.POS_INF_INT and bottom == N.NEG_INF_INT):
        return rd.NAN
    if top == N.POS_INF_INT:
        return rd.POS_INF
    if bottom == N.NEG_INF_INT:
        return rd.NEG_INF
    whole = int(int_sum) * N.FRAC_ONE + int(frac_sum)  # the sum * 10^28, exactly
    s = int(scale)
    return fit(whole // 10 ** (N.FRAC_DIGITS - s), s)


def fit(m: int, s: int):
    """The exact m * 10^-s as rust_decimal holds it: fewer fraction digits (rounded half to
    even, as its additions round) while the mantissa needs more than 96 bits; out of range
    when even scale 0 cannot hold it."""
    while abs(m) > rd.MAX_MANTISSA and s > 0:
        q, r = divmod(abs(m), 10)
        if r > 5 or (r == 5 and q % 2):
            q += 1
        m, s = (q if m > 0 else -q), s - 1
    if abs(m) > rd.MAX_MANTISSA:
        raise rd.NumericError("Numeric out of range")
    return m, s


def _avg_parts(int_sum, frac_sum, scale, top, bottom, count):
    total = _sum_parts(int_sum, frac_sum, scale, top, bottom)
    return rd.div(total, rd.from_int(int(count)))


def trunc_dp(v, digits: int):
    """trunc(numeric, n) (PostgreSQL's; RisingWave has only trunc(numeric)): toward zero to n
    fraction digits (n < 0: to tens, hundreds...), a value of fewer digits as it is, as
    round(x, n) keeps it."""
    if isinstance(v, str):
        return v
    m, s = v
    digits = min(int(digits), rd.MAX_SCALE)
    if digits >= s:
        return v
    p = 10 ** (s - max(digits, 0))
    q = abs(m) // p * (1 if m >= 0 else -1)
    if digits < 0:
        p10 = 10 ** -digits
        return fit(abs(q) // p10 * p10 * (1 if q >= 0 else -1), 0)
    return q, digits


def typmod(v, precision: int, scale: int):
    """A cast to numeric(precision, scale) (PostgreSQL's): rounded half away from zero to
    exactly `scale` fraction digits; more than precision - scale digits before the point
    overflow. NaN and the infinities pass."""
    if isinstance(v, str):
        return v
    m, s = rd.round_dp(v, scale) if scale < v[1] else v
    if s < scale:
        m, s = m * 10 ** (scale - s), scale
    if abs(m) >= 10 ** precision:
        raise rd.NumericError("numeric field overflow")
    return fit(m, s)


def _sum_list(values: list):
    """sum(DISTINCT x): the distinct values added in turn, as RisingWave's sum adds."""
    total = None
    for v in values:
        if v is not None:
            total = v if total is None else rd.add(total, v)
    return total


def _avg_list(values: list):
    present = [v for v in values if v is not None]
    return rd.div(_sum_list(present), rd.from_int(len(present))) if present else None


def _list_udf(fn: Callable, strict: bool = True) -> Callable:
    """A UDF over lists of numerics (NULL where `fn` gives None)."""
    def udf(lists: pa.Array) -> pa.Array:
        if isinstance(lists, pa.ChunkedArray):
            lists = lists.combine_chunks()
        flat = N.unpack(lists.flatten())
        offsets = lists.offsets.to_pylist()
        start = lists.offsets[0].as_py() if len(lists) else 0
        out = []
        for i in range(len(lists)):
            if not lists[i].is_valid:
                out.append(None)
                continue
            try:
                out.append(fn(flat[offsets[i] - start:offsets[i + 1] - start]))
            except rd.NumericError:
                if strict:
                    raise
                out.append(None)
        return N.pack(out)
    return udf


def _jsonb(v) -> str:
    """A numeric as RisingWave's jsonb holds it: a double, NaN and the infinities as strings."""
    if isinstance(v, str):
        return json.dumps(v)
    return json.dumps(rd.to_f64(v))


def _avg_int(total, count):
    return rd.avg_int(int(total), int(count))


_SUM_PARAMS = ["DECIMAL(38,0)", "DECIMAL(38,0)", "TINYINT", "DECIMAL(38,0)", "DECIMAL(38,0)"]

# name -> (value function, parameter types, whether it can fail); the result is numeric
_TO_NUMERIC: dict[str, tuple[Callable, list[str], bool]] = {
    "rw_num_const": (rd.parse, ["VARCHAR"], True),
    "rw_num_in": (rd.parse, ["VARCHAR"], True),
    "rw_num_from_hugeint": (lambda i: rd.from_int(int(i)), ["DECIMAL(38,0)"], True),
    "rw_num_from_f64": (rd.from_f64, ["DOUBLE"], True),
    "rw_num_from_f32": (rd.from_f32, ["FLOAT"], True),
    "rw_num_add": (rd.add, [NUM, NUM], True),
    "rw_num_sub": (rd.sub, [NUM, NUM], True),
    "rw_num_mul": (rd.mul, [NUM, NUM], True),
    "rw_num_div": (rd.div, [NUM, NUM], True),
    "rw_num_mod": (rd.rem, [NUM, NUM], True),
    "rw_num_neg": (rd.neg, [NUM], False),
    "rw_num_abs": (rd.abs_, [NUM], False),
    "rw_num_sign": (rd.sign, [NUM], False),
    "rw_num_round": (rd.round_, [NUM], True),
    "rw_num_round_dp": (rd.round_dp, [NUM, "INTEGER"], True),
    "rw_num_trunc": (rd.trunc, [NUM], False),
    "rw_num_trunc_dp": (trunc_dp, [NUM, "INTEGER"], True),
    "rw_num_typmod": (lambda v, p, s: typmod(v, int(p), int(s)), [NUM, "INTEGER", "INTEGER"], True),
    "rw_num_floor": (rd.floor, [NUM], True),
    "rw_num_ceil": (rd.ceil, [NUM], True),
    "rw_num_trim_scale": (rd.trim_scale, [NUM], False),
    "rw_num_sqrt": (rd.sqrt, [NUM], True),
    "rw_num_exp": (rd.exp, [NUM], True),
    "rw_num_ln": (rd.ln, [NUM], True),
    "rw_num_log10": (rd.log10, [NUM], True),
    "rw_num_pow": (rd.pow_, [NUM, NUM], True),
    "rw_num_sum_parts": (_sum_parts, _SUM_PARAMS, True),
    "rw_num_avg_parts": (_avg_parts, _SUM_PARAMS + ["BIGINT"], True),
    "rw_num_avg_int": (_avg_int, ["DECIMAL(38,0)", "BIGINT"], True),
    "rw_num_scaled": (lambda m, s: fit(int(m), int(s)), ["DECIMAL(38,0)", "INTEGER"], True),
}

# name -> (value function, parameter types, result type, whether it can fail)
_FROM_NUMERIC: dict[str, tuple[Callable, list[str], str, pa.DataType, bool]] = {
    "rw_num_out": (rd.to_text, [NUM], "VARCHAR", pa.string(), False),
    "rw_num_to_f64": (rd.to_f64, [NUM], "DOUBLE", pa.float64(), False),
    "rw_num_to_f32": (rd.to_f32, [NUM], "FLOAT", pa.float32(), False),
    "rw_num_to_int2": (lambda v: rd.to_int(v, 16), [NUM], "SMALLINT", pa.int16(), True),
    "rw_num_to_int4": (lambda v: rd.to_int(v, 32), [NUM], "INTEGER", pa.int32(), True),
    "rw_num_to_int8": (lambda v: rd.to_int(v, 64), [NUM], "BIGINT", pa.int64(), True),
    "rw_num_scale": (rd.scale, [NUM], "INTEGER", pa.int32(), False),
    "rw_num_min_scale": (rd.min_scale, [NUM], "INTEGER", pa.int32(), False),
    "rw_num_jsonb": (_jsonb, [NUM], "VARCHAR", pa.string(), False),
}


# the operations numpy computes a chunk at a time (rw_cli.common.numeric), falling back to the
# value functions above row by row where it cannot: name -> (function of the arrays and
# `strict`, parameter types); each also has its `_or_null` form
_VECTORIZED: dict[str, tuple[Callable, list[str]]] = {
    "rw_num_in": (lambda a, strict: N.parse_texts(a, strict), ["VARCHAR"]),
    "rw_num_const": (lambda a, strict: N.parse_texts(a, strict), ["VARCHAR"]),
    "rw_num_from_f64": (lambda a, strict: N.from_f64_column(a, strict), ["DOUBLE"]),
    "rw_num_round": (lambda a, strict: N.round_dp_arrays(a, None, strict), [NUM]),
    "rw_num_round_dp": (lambda a, d, strict: N.round_dp_arrays(a, d, strict), [NUM, "INTEGER"]),
    "rw_num_add": (lambda a, b, strict: N.add_arrays(a, b, strict=strict), [NUM, NUM]),
    "rw_num_sub": (lambda a, b, strict: N.add_arrays(a, b, subtract=True, strict=strict), [NUM, NUM]),
    "rw_num_mul": (lambda a, b, strict: N.mul_arrays(a, b, strict=strict), [NUM, NUM]),
    "rw_num_div": (lambda a, b, strict: N.div_arrays(a, b, strict=strict), [NUM, NUM]),
    "rw_num_avg_int": (lambda total, count, strict: N.avg_int_arrays(total, count, strict=strict),
                       ["DECIMAL(38,0)", "BIGINT"]),
    "rw_num_sum_parts": (lambda *parts, strict: N.sum_parts_arrays(*parts, _sum_parts, strict), _SUM_PARAMS),
    "rw_num_avg_parts": (lambda *parts, strict: N.sum_parts_arrays(*parts[:5], _avg_parts, strict, counts=parts[5]),
                         _SUM_PARAMS + ["BIGINT"]),
}


def _vectorized(fn: Callable, n: int, strict: bool) -> Callable:
    return _arity(lambda *args: fn(*args, strict=strict), n)


def _f64_column(arr: pa.Array) -> pa.Array:
    """`rd.to_f64` a chunk at a time (NULL stays NULL)."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    values = N.to_f64_array(arr)
    return pa.array(values, pa.float64(), mask=~arr.is_valid().to_numpy(zero_copy_only=False) if arr.null_count else None)


def _udfs() -> dict[str, tuple[Callable, list[str], str]]:
    out: dict[str, tuple[Callable, list[str], str]] = {
        "rw_num_from_int": (_from_ints, ["DECIMAL(38,0)"], NUM),
        "rw_num_scale_of": (_scale_of, [NUM], "TINYINT"),
        "rw_num_from_parts": (N.from_parts, [PARTS], NUM),
        "rw_num_sum_list": (_list_udf(_sum_list), [NUM + "[]"], NUM),
        "rw_num_sum_list_or_null": (_list_udf(_sum_list, strict=False), [NUM + "[]"], NUM),
        "rw_num_avg_list": (_list_udf(_avg_list), [NUM + "[]"], NUM),
        "rw_num_avg_list_or_null": (_list_udf(_avg_list, strict=False), [NUM + "[]"], NUM),
    }
    for name, (fn, params, fails) in _TO_NUMERIC.items():
        out[name] = (_to_numeric(fn, len(params)), params, NUM)
        if fails:
            out[name + "_or_null"] = (_to_numeric(fn, len(params), strict=False), params, NUM)
    for name, (fn, params) in _VECTORIZED.items():
        out[name] = (_vectorized(fn, len(params), True), params, NUM)
        out[name + "_or_null"] = (_vectorized(fn, len(params), False), params, NUM)
    for name, (fn, params, ret, arrow_type, fails) in _FROM_NUMERIC.items():
        out[name] = (_to_arrow(fn, arrow_type, len(params)), params, ret)
        if fails:
            out[name + "_or_null"] = (_to_arrow(fn, arrow_type, len(params), strict=False), params, ret)
    out["rw_num_out"] = (N.text_array, [NUM], "VARCHAR")  # rd.to_text, a chunk at a time
    out["rw_num_to_f64"] = (_f64_column, [NUM], "DOUBLE")
    return out


# name -> (function over Arrow arrays, DuckDB parameter types, DuckDB result type)
UDFS = _udfs()

# the numeric UDFs that raise an error on some values; each has its `_or_null` form
RAISING = frozenset(name for name in UDFS if name + "_or_null" in UDFS)
