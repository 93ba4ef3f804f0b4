"""Values as PostgreSQL / RisingWave print them in text form (psql, sqllogictest).

`format_column` turns one Arrow column into a list of strings (None for NULL), using
pyarrow.compute casts where Arrow's text form is already right and a per-value function
where it is not (floats, intervals, bytea).
"""
from __future__ import annotations

import math
import re
from decimal import ROUND_HALF_UP, Context, Decimal
from typing import Callable

import pyarrow as pa

from rw_cli.common.int256 import bignum_to_int
from rw_cli.common.pg_json import jsonb_in
from rw_cli.common import numeric
from rw_cli.common.types import DataType
from rw_cli.common.lazy_import import lazy_import

pc = lazy_import("pyarrow.compute")  # imported on first use: see rw_cli.common.lazy_import


# A result this short formats its integers and booleans in Python: as fast as Arrow's kernels
# at this size, and a one-shot `rw -c` then never imports pyarrow.compute.
_FEW_ROWS = 1024
_BOOL_TEXT = {True: "t", False: "f"}


def format_column(col: pa.ChunkedArray | pa.Array, t: DataType) -> list[str | None]:
    """One column as PostgreSQL text, NULL as None."""
    if isinstance(col, pa.ChunkedArray):
        col = col.combine_chunks() if col.num_chunks != 1 else col.chunk(0)
    if pa.types.is_null(col.type):
        return [None] * len(col)
    whole = _format_arrow(col, t)
    if whole is not None:
        return whole.to_pylist()
    name = t.name
    if name == "boolean":
        return _per_value(col, _BOOL_TEXT.get)
    if name in ("smallint", "integer", "bigint"):
        return _per_value(col, str)
    if name == "double precision":
        return _per_value(col, format_float8)
    if name == "real":
        return _per_value(col, format_float4)
    if name == "numeric":
        return _format_numeric(col)
    if name == "rw_int256":
        return _per_value(col.storage if isinstance(col, pa.ExtensionArray) else col,
                          lambda b: str(bignum_to_int(b)))
    if name == "jsonb":
        return _per_value(col if pa.types.is_string(col.type) else pc.cast(col, pa.string()), jsonb_in)
    if name == "character varying":
        return pc.cast(col, pa.string()).to_pylist()
    if name == "timestamp with time zone":
        return _format_tstz_in_zone(col, col.type.tz)
    if name == "interval":
        return _per_value(col, format_interval)
    if name == "bytea":
        return _per_value(col, format_bytea)
    if t.is_map:
        return _format_map(col, t)
    if t.is_vector:  # pgvector's text form: [1,2.5,3]
        return _format_vector(col)
    if t.is_list or t.is_struct:
        return _format_nested(col, t)
    return _per_value(col, str)


def format_array(col: pa.ChunkedArray | pa.Array, t: DataType) -> pa.Array:
    """`format_column` as an Arrow string array (COPY TO writes whole columns: the common
    types' text never becomes a Python string)."""
    if isinstance(col, pa.ChunkedArray):
        col = col.combine_chunks() if col.num_chunks != 1 else col.chunk(0)
    whole = None if pa.types.is_null(col.type) else _format_arrow(col, t)
    return whole if whole is not None else pa.array(format_column(col, t), pa.string())


def _format_arrow(col: pa.Array, t: DataType) -> pa.Array | None:
    """The column's text by Arrow kernels, where its type's text is theirs (None: value by
    value). A result of a few rows formats its integers, booleans and doubles in Python."""
    name = t.name
    few = len(col) <= _FEW_ROWS
    if name == "boolean" and not few:
        return pc.if_else(col, "t", "f")
    if name in ("smallint", "integer", "bigint") and not few:
        return pc.cast(col, pa.string())
    if name == "double precision" and not few:
        return _float8_array(col)
    if name == "numeric" and numeric.is_numeric_arrow(col.type) and not few:
        return numeric.text_array(col)
    if name == "character varying" and pa.types.is_string(col.type):
        return col
    if name == "date":
        return _bc(pc.cast(col, pa.string()))
    if name == "time without time zone":
        return _time_text(col)
    if name == "timestamp without time zone":
        return _bc(_time_text(_naive(col)))
    if name == "timestamp with time zone":
        tz = col.type.tz if pa.types.is_timestamp(col.type) else None
        if tz and tz not in ("UTC", "+00:00", "Etc/UTC"):
            return None
        return _bc(pc.binary_join_element_wise(_time_text(_naive(col)), "+00:00", ""))
    return None


_ASTRONOMICAL_YEAR = re.compile(r"^(-?\d{4,})(.*)$")


def _bc(texts: pa.Array) -> pa.Array:
    """Years before 1 AD as PostgreSQL prints them: year 0 is `0001 ... BC`, -1 is `0002 BC`."""
    early = pc.or_(pc.starts_with(texts, "-"), pc.starts_with(texts, "0000"))
    if not pc.any(early).as_py():
        return texts
    out = []
    for t in texts.to_pylist():
        m = _ASTRONOMICAL_YEAR.match(t) if t is not None and (t[:1] == "-" or t[:4] == "0000") else None
        out.append(f"{1 - int(m.group(1)):04d}{m.group(2)} BC" if m else t)
    return pa.array(out, pa.string())


def _format_tstz_in_zone(col: pa.Array, tz: str) -> list[str | None]:
    """timestamptz in the session's TimeZone: local time and its offset (`+08:00`)."""
    import datetime
    from zoneinfo import ZoneInfo

    zone = ZoneInfo(tz)
    micros = col.cast(pa.timestamp("us", tz="UTC")).cast(pa.int64()).to_pylist()
    epoch = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
    out: list[str | None] = []
    for us in micros:
        if us is None:
            out.append(None)
            continue
        local = (epoch + datetime.timedelta(microseconds=us)).astimezone(zone)
        text = local.strftime("%Y-%m-%d %H:%M:%S")
        if local.microsecond:
            frac = f"{local.microsecond:06d}"
            text += "." + (frac[:3] if frac.endswith("000") else frac)
        off = local.utcoffset() or datetime.timedelta(0)
        secs = int(off.total_seconds())
        sign = "-" if secs < 0 else "+"
        secs = abs(secs)
        text += f"{sign}{secs // 3600:02d}:{secs % 3600 // 60:02d}"
        if secs % 60:
            text += f":{secs % 60:02d}"
        out.append(text)
    return out


def format_value_slt(text: str | None) -> str:
    """A value as sqllogictest writes it: NULL, (empty) for the empty string."""
    if text is None:
        return "NULL"
    if text == "":
        return "(empty)"
    return text


def _format_nested(col: pa.Array, t: DataType) -> list[str | None]:
    """Arrays as `{a,"b c",NULL}` and structs as `(1,"x y")`, elements quoted as PostgreSQL does."""
    if t.is_list:
        if not pa.types.is_list(col.type):
            col = col.cast(pa.list_(col.type.value_type))
        items = format_column(col.flatten(), t.inner[0])
        offsets = col.offsets.to_pylist()
        valid = col.is_valid().to_pylist()
        base = offsets[0]
        out = []
        for i, ok in enumerate(valid):
            if not ok:
                out.append(None)
                continue
            a, b = offsets[i] - base, offsets[i + 1] - base
            parts = [_quote_array_item(v, t.inner[0]) for v in items[a:b]]
            out.append("{" + ",".join(parts) + "}")
        return out
    fields = [format_column(f, ft) for f, ft in zip(col.flatten(), t.inner)]
    valid = col.is_valid().to_pylist()
    return [("(" + ",".join(_quote_record_item(f[i]) for f in fields) + ")") if ok else None
            for i, ok in enumerate(valid)]


def _format_vector(col: pa.Array) -> list[str | None]:
    return [None if v is None else "[" + ",".join(format_float4(x) for x in v) + "]" for v in col.to_pylist()]


def _format_map(col: pa.Array, t: DataType) -> list[str | None]:
    """Maps as RisingWave prints them: `{k:v,k2:NULL}`, keys and values in their text form."""
    if isinstance(col, pa.MapArray):
        keys, items = col.keys, col.items
    else:  # a list of key/value structs (DuckDB's MAP at times reaches Arrow so)
        entries = col.flatten()
        keys, items = entries.field(0), entries.field(1)
    keys = format_column(keys, t.inner[0])
    items = format_column(items, t.inner[1])
    offsets = col.offsets.to_pylist()
    base = offsets[0]
    out = []
    for i, ok in enumerate(col.is_valid().to_pylist()):
        if not ok:
            out.append(None)
            continue
        a, b = offsets[i] - base, offsets[i + 1] - base
        out.append("{" + ",".join(f"{k}:{'NULL' if v is None else v}" for k, v in zip(keys[a:b], items[a:b])) + "}")
    return out


def _quote_array_item(v: str | None, t: DataType) -> str:
    if v is None:
        return "NULL"
    if t.is_list:
        return v
    if v == "" or v.upper() == "NULL" or any(c in v for c in '{},"\\ \t\n'):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return v


def _quote_record_item(v: str | None) -> str:
    """A record's field as PostgreSQL's record_out writes it: quoted when it must be, a
    quote inside doubled and a backslash escaped."""
    if v is None:
        return ""
    if v == "" or any(c in v for c in '(),"\\ \t\n'):
        return '"' + v.replace("\\", "\\\\").replace('"', '""') + '"'
    return v


# -- helpers -----------------------------------------------------------------------------

def _per_value(col: pa.Array, fn: Callable) -> list[str | None]:
    return [None if v is None else fn(v) for v in col.to_pylist()]


_PER_SECOND = {"s": 1, "ms": 1000, "us": 1_000_000, "ns": 1_000_000_000}


def _time_text(col: pa.Array) -> pa.Array:
    """Times and timestamps (without zone) as text: a column of whole seconds (most data)
    cast at a unit of seconds, with no fraction to trim (two regular expressions over every
    value otherwise, the most of a timestamp column's formatting)."""
    unit = getattr(col.type, "unit", None)
    if unit == "ns":  # (microseconds are what PostgreSQL and RisingWave keep and print)
        col = col.cast(pa.timestamp("us") if pa.types.is_timestamp(col.type) else pa.time64("us"), safe=False)
        unit = "us"
    per_second = _PER_SECOND.get(unit, 0)
    if per_second > 1 and len(col):
        import numpy as np

        ticks = col.cast(pa.int64() if col.type.bit_width == 64 else pa.int32()).fill_null(0)
        if not (ticks.to_numpy(zero_copy_only=False) % per_second).any():
            seconds = pa.timestamp("s") if pa.types.is_timestamp(col.type) else pa.time32("s")
            return pc.cast(col.cast(seconds, safe=False), pa.string())
    return _chrono_fraction(pc.cast(col, pa.string()))


def _chrono_fraction(text: pa.Array) -> pa.Array:
    """RisingWave prints times with 3 or 6 fraction digits, as few as keep the value
    (`20.210`, `20.210500`), and none for whole seconds."""
    text = pc.replace_substring_regex(text, r"\.000000$", "")
    return pc.replace_substring_regex(text, r"(\.\d{3})000$", r"\1")


def _naive(col: pa.Array) -> pa.Array:
    """Timestamps as UTC wall-clock time without a zone (Arrow appends 'Z' otherwise)."""
    if pa.types.is_timestamp(col.type) and col.type.tz is not None:
        return col.cast(pa.timestamp(col.type.unit))
    return col


def _format_numeric(col: pa.Array) -> list[str | None]:
    """Each value with its own scale (rw_cli.common.numeric); a decimal or a float an engine
    handed back as it is, with the digits it has."""
    if numeric.is_numeric_arrow(col.type):
        return numeric.texts(col)
    if pa.types.is_decimal(col.type):
        # Arrow's own decimal-to-string switches to scientific notation ('0E-10')
        return _per_value(col, lambda d: format_numeric(d, col.type.scale))
    return [None if v is None else format_numeric(Decimal(str(v))) for v in col.to_pylist()]


_WIDE = Context(prec=200_000, Emax=999_999, Emin=-999_999)


def format_numeric(d: Decimal, scale: int | None = None) -> str:
    """A decimal with exactly `scale` fraction digits, or normalized when scale is None."""
    if d.is_nan():
        return "NaN"
    if d.is_infinite():
        return "Infinity" if d > 0 else "-Infinity"
    if d == 0:
        d = abs(d)
    if scale is not None:
        # numeric holds up to 131072 digits before the point: quantize in a context wide
        # enough for any of them (the default one stops at 28 digits)
        d = d.quantize(Decimal(1).scaleb(-scale), rounding=ROUND_HALF_UP, context=_WIDE)
        return f"{d:f}"
    if d == 0:
        return "0"
    return f"{d.normalize(context=_WIDE):f}"  # (the default context would round to 28 digits)


def _shortest(v: float, single: bool) -> tuple[str, int]:
    """The shortest round-trip digits of v (no sign, no trailing zeros) and the decimal
    exponent of the first digit."""
    if single:
        import numpy as np

        text = np.format_float_scientific(np.float32(v), unique=True, trim="-")
    else:
        text = repr(abs(v))
    sign, digits, exp = Decimal(text).as_tuple()
    ds = "".join(map(str, digits)).rstrip("0") or "0"
    first_exp = exp + len(digits) - 1
    return ds, first_exp


def _format_float(v: float, single: bool) -> str:
    # RisingWave prints floats with ryu, drops a trailing '.0' and writes the exponent
    # with a sign and at least two digits (1e+20, 1.5e-07).
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "Infinity" if v > 0 else "-Infinity"
    sign = "-" if math.copysign(1.0, v) < 0 else ""
    if v == 0:
        return sign + "0"
    digits, e = _shortest(v, single)
    lo, hi = (-6, 12) if single else (-5, 15)
    if lo <= e <= hi:
        if e < 0:
            body = "0." + "0" * (-e - 1) + digits
        elif len(digits) <= e + 1:
            body = digits + "0" * (e + 1 - len(digits))
        else:
            body = digits[: e + 1] + "." + digits[e + 1:]
    else:
        mant = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        body = f"{mant}e{'-' if e < 0 else '+'}{abs(e):02d}"
    return sign + body


def _float8_array(col: pa.Array) -> pa.Array:
    """`format_float8` of a whole column: Python's repr is the same shortest round-trip text
    but for a trailing '.0' (dropped here by one Arrow kernel) and the values Python writes
    otherwise (exponent -5, which RisingWave writes in positional notation; NaN and
    infinities), which few columns hold and `format_float8` formats one by one. (Decimal
    digits, value by value, took 3.5 s a million values.)"""
    import numpy as np

    values = col.fill_null(0).to_numpy(zero_copy_only=False).astype(np.float64, copy=False)
    texts = pc.replace_substring_regex(pa.array(list(map(float.__repr__, values.tolist())), pa.string()),
                                       r"\.0$", "")
    odd = pc.match_substring_regex(texts, r"e-05$|^-?(nan|inf)$")
    if pc.any(odd).as_py():
        out = texts.to_pylist()
        for i in pc.indices_nonzero(odd).to_pylist():
            out[i] = format_float8(values[i])
        texts = pa.array(out, pa.string())
    return pc.if_else(col.is_valid(), texts, pa.scalar(None, pa.string())) if col.null_count else texts


def format_float8(v: float) -> str:
    return _format_float(float(v), single=False)


def format_float4(v: float) -> str:
    return _format_float(float(v), single=True)


def format_bytea(b: bytes) -> str:
    return "\\x" + bytes(b).hex()


def format_interval(v) -> str:
    """PostgreSQL's interval output (IntervalStyle postgres): `1 year 2 mons 3 days 04:05:06.5`,
    `-1 years -1 mons -1 days +04:05:06`, `00:00:00`."""
    if isinstance(v, pa.MonthDayNano) or hasattr(v, "months"):
        months, days, nanos = v.months, v.days, v.nanoseconds
    else:  # a datetime.timedelta
        months, days, nanos = 0, v.days, (v.seconds * 1_000_000 + v.microseconds) * 1000
    micros = nanos // 1000 if nanos >= 0 else -(-nanos // 1000)
    years = abs(months) // 12 * (1 if months >= 0 else -1)
    mons = months - years * 12
    parts: list[str] = []
    is_zero, is_before = True, False
    for value, unit in ((years, "year"), (mons, "mon"), (days, "day")):
        if value == 0:
            continue
        plus = "+" if is_before and value > 0 else ""
        parts.append(f"{plus}{value} {unit}{'' if value == 1 else 's'}")
        is_before = value < 0
        is_zero = False
    if is_zero or micros != 0:
        minus = micros < 0
        m = abs(micros)
        hours, rem = divmod(m, 3_600_000_000)
        mins, rem = divmod(rem, 60_000_000)
        secs, frac = divmod(rem, 1_000_000)
        text = f"{'-' if minus else ('+' if is_before else '')}{hours:02d}:{mins:02d}:{secs:02d}"
        if frac:
            text += "." + f"{frac:06d}".rstrip("0")
        parts.append(text)
    return " ".join(parts)
