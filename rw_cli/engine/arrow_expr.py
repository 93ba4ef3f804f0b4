"""Expressions evaluated by numpy over Arrow buffers, without a DuckDB query.

A DuckDB query costs a few milliseconds however small the chunk, and a stream's projections
run once per chunk. The SQL layer compiles the expressions whose meaning is plain integer
arithmetic on microseconds — the window starts and ends of TUMBLE and HOP — into this small
form; everything else (and any chunk whose values come near overflow) stays with DuckDB.

Forms (nested tuples, picklable):
    ("col", i)                              input column i
    ("const_us", n)                         an interval of n microseconds
    ("mul_us", form, n)                     an integer times an interval of n microseconds
    ("bucket", width_us, form, origin_us)   time_bucket: the start of the form's bucket
    ("add_us", form, form) / ("sub_us", form, form)   timestamp ± interval
A condition: ("and", (op, form, form), ...) with op one of eq, ne, lt, le, gt, ge (NULL on
either side: false, as a filter reads it).
"""
from __future__ import annotations

import numpy as np
import pyarrow as pa

LIMIT = 1 << 62  # beyond this, leave the arithmetic (and its overflow checks) to DuckDB


class Fallback(Exception):
    """This chunk needs DuckDB."""


def evaluate(form: tuple, data: pa.Table) -> pa.Array:
    values, valid = _eval(form, data)
    if values.dtype != np.int64:
        raise Fallback()
    mask = None if valid is None else ~valid
    return pa.array(values, pa.int64(), mask=mask).cast(pa.timestamp("us"))


_COMPARE = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
            "gt": np.greater, "ge": np.greater_equal}


def condition_mask(form: tuple, data: pa.Table) -> np.ndarray:
    """The rows of `data` for which the condition holds."""
    mask = np.ones(data.num_rows, dtype=bool)
    for op, a_form, b_form in form[1:]:
        a, ok_a = _eval(a_form, data)
        b, ok_b = _eval(b_form, data)
        mask &= _COMPARE[op](a, b)
        for ok in (ok_a, ok_b):
            if ok is not None:
                mask &= ok
    return mask


def _eval(form: tuple, data: pa.Table) -> tuple[np.ndarray, np.ndarray | None]:
    """(int64 values, validity or None when all valid)."""
    op = form[0]
    if op == "col":
        return _column(data.column(form[1]))
    if op == "const_us":
        return np.full(data.num_rows, form[1], dtype=np.int64), None
    if op == "mul_us":
        v, ok = _eval(form[1], data)
        _check(v, abs(form[2]))
        return v * np.int64(form[2]), ok
    if op == "bucket":
        width, origin = np.int64(form[1]), np.int64(form[3])
        v, ok = _eval(form[2], data)
        _check(v, 1)
        return origin + np.floor_divide(v - origin, width) * width, ok
    if op in ("add_us", "sub_us"):
        a, ok_a = _eval(form[1], data)
        b, ok_b = _eval(form[2], data)
        _check(a, 1)
        _check(b, 1)
        out = a + b if op == "add_us" else a - b
        ok = ok_b if ok_a is None else (ok_a if ok_b is None else ok_a & ok_b)
        return out, ok
    raise Fallback()


def _column(col) -> tuple[np.ndarray, np.ndarray | None]:
    arr = col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
    t = arr.type
    if pa.types.is_timestamp(t):
        if t.unit != "us" or t.tz is not None:
            raise Fallback()
        arr = arr.cast(pa.int64())
    elif not pa.types.is_integer(t):
        raise Fallback()
    valid = None
    if arr.null_count:
        valid = arr.is_valid().to_numpy(zero_copy_only=False)
        arr = arr.fill_null(0)
    return arr.to_numpy(zero_copy_only=False).astype(np.int64, copy=False), valid


def _check(values: np.ndarray, scale: int) -> None:
    bound = LIMIT // max(1, scale)
    if len(values) and (int(values.max()) > bound or int(values.min()) < -bound):
        raise Fallback()
