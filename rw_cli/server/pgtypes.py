"""rw's types on the wire: type OIDs, result values in text and binary format, and bound
parameters turned into typed SQL literals.

Text format is PostgreSQL's output of every type (`rw_cli.common.pg_text`, the same text
the CLI prints). Binary format is supported for results of every scalar type (bool, int2/4/8,
float4/8, numeric, varchar, bytea, date, time, timestamp, timestamptz, interval, jsonb) and
one-dimensional lists of them and structs (as records); for parameters of the scalar types
but interval. Anything else in binary is a clear error (0A000), never wrong bytes.
"""
from __future__ import annotations

import math
import struct

import pyarrow as pa
import pyarrow.compute as pc

from rw_cli.common.pg_text import format_column
from rw_cli.common.types import DataType
from rw_cli.errors import NotSupported, RwError
from rw_cli.sql.literals import quote_literal
from rw_cli.sql.pg_catalog import PG_TYPES, RECORD_OID, TEXT_OID, type_oid  # noqa: F401 (re-exported)

UNKNOWN_OID = 705
OID_OID, OID_ARRAY_OID = 26, 1028

_ARRAY_OIDS = {array: oid for oid, _, _, array in PG_TYPES.values()}
# what a parameter's OID says to cast its literal to (the rw type name)
_OID_TO_TYPE: dict[int, str] = {oid: name for name, (oid, _, _, _) in PG_TYPES.items()}
_OID_TO_TYPE.update({TEXT_OID: "character varying", 1042: "character varying", 19: "character varying",
                     26: "bigint", 114: "jsonb"})
_OID_TO_TYPE.update({array: f"{name}[]" for name, (_, _, _, array) in PG_TYPES.items() if array})
# text[], bpchar[] and name[] are varchar[] here; oid[] bigint[]
_OID_TO_TYPE.update({1009: "character varying[]", 1014: "character varying[]", 1003: "character varying[]",
                     OID_ARRAY_OID: "bigint[]"})
_ELEMENT_OIDS = {array: oid for array, oid in _ARRAY_OIDS.items() if array} | \
    {1009: TEXT_OID, 1014: 1042, 1003: 19, OID_ARRAY_OID: OID_OID}


def type_size(t: DataType) -> int:
    entry = None if (t.is_list or t.is_struct) else PG_TYPES.get(t.name)
    return entry[2] if entry else -1


def param_oid(t: DataType | None) -> int:
    """The OID a parameter of inferred type `t` is described with, 0 (unspecified) for none
    or a type PostgreSQL lacks (a struct, rw_int256), whose literal stays untyped."""
    if t is None or t.is_struct or (t.is_list and t.inner[0].name not in PG_TYPES):
        return 0
    oid = type_oid(t)
    return 0 if oid == TEXT_OID and t.name != "character varying" else oid


def type_name_of_oid(oid: int) -> str | None:
    """The rw type a parameter of this OID is cast to, or None (unknown: an untyped literal)."""
    return _OID_TO_TYPE.get(oid)


# -- results ----------------------------------------------------------------------------------
def encode_column(col: pa.ChunkedArray | pa.Array, t: DataType, fmt: int) -> list[bytes | None]:
    """One result column as wire values (None for NULL), vectorized where Arrow can."""
    if fmt == 0:
        return [None if v is None else v.encode("utf-8") for v in format_column(col, t)]
    return _encode_binary(col, t)


_BINARY_INT = {"smallint": ("!h", pa.int16()), "integer": ("!i", pa.int32()), "bigint": ("!q", pa.int64()),
               "real": ("!f", pa.float32()), "double precision": ("!d", pa.float64())}


def _encode_binary(col, t: DataType) -> list[bytes | None]:
    if isinstance(col, pa.ChunkedArray):
        col = col.combine_chunks()
    name = t.name
    if t.is_list and not t.inner[0].is_list:
        return _binary_array(col, t.inner[0])
    if t.is_struct:
        return _binary_record(col, t)
    if name in _BINARY_INT:
        fmt, arrow = _BINARY_INT[name]
        return _fixed_width(pc.cast(col, arrow), fmt)
    if name == "boolean":
        return [None if v is None else (b"\x01" if v else b"\x00") for v in col.to_pylist()]
    if name in ("character varying", "jsonb"):
        if name == "jsonb":  # jsonb's binary format: a version byte, then the text
            return [None if v is None else b"\x01" + v for v in encode_column(col, t, 0)]
        return [None if v is None else v.encode("utf-8") for v in pc.cast(col, pa.string()).to_pylist()]
    if name == "bytea":
        return col.to_pylist()
    if name in _EPOCH_SHIFT:  # PostgreSQL counts from 2000-01-01, Arrow from 1970-01-01
        storage, shift, fmt = _EPOCH_SHIFT[name]
        values = pc.subtract(col.view(storage) if name != "time without time zone" else pc.cast(col, storage), shift)
        return _fixed_width(values, fmt)
    if name == "interval":
        return [None if v is None else struct.pack("!qii", v.nanoseconds // 1000, v.days, v.months)
                for v in col.to_pylist()]
    if name == "numeric":
        return [None if v is None else numeric_binary(v) for v in format_column(col, t)]  # its scale as shown
    raise NotSupported(f"binary format for type {name}", hint="ask for text format (format code 0)")


def _binary_array(col: pa.Array, element: DataType) -> list[bytes | None]:
    """One-dimensional arrays: dimensions, a has-null flag, the element OID, then each element
    (its elements encoded together, column-wise)."""
    if pa.types.is_list_view(col.type) or pa.types.is_large_list(col.type):
        col = col.cast(pa.list_(col.type.value_type))
    values = _encode_binary(col.flatten(), element)
    offsets = col.offsets.to_pylist()
    valid = col.is_valid().to_pylist()
    oid = type_oid(element)
    out: list[bytes | None] = []
    for i, ok in enumerate(valid):
        if not ok:
            out.append(None)
            continue
        items = values[offsets[i] - offsets[0]:offsets[i + 1] - offsets[0]]
        has_null = any(v is None for v in items)
        head = struct.pack("!iii", 1 if items else 0, int(has_null), oid)
        if items:
            head += struct.pack("!ii", len(items), 1)
        out.append(head + b"".join(b"\xff\xff\xff\xff" if v is None else struct.pack("!i", len(v)) + v for v in items))
    return out


def _binary_record(col: pa.Array, t: DataType) -> list[bytes | None]:
    """A struct as PostgreSQL's binary record: the field count, then each field's OID and value."""
    fields = [_encode_binary(col.field(i), ft) for i, ft in enumerate(t.inner)]
    oids = [type_oid(ft) for ft in t.inner]
    out: list[bytes | None] = []
    for r, ok in enumerate(col.is_valid().to_pylist()):
        if not ok:
            out.append(None)
            continue
        parts = [struct.pack("!i", len(fields))]
        for oid, values in zip(oids, fields):
            v = values[r]
            parts.append(struct.pack("!i", oid) + (b"\xff\xff\xff\xff" if v is None else struct.pack("!i", len(v)) + v))
        out.append(b"".join(parts))
    return out


_PG_EPOCH_DAYS = 10_957
_PG_EPOCH_US = _PG_EPOCH_DAYS * 86_400_000_000
_EPOCH_SHIFT = {"date": (pa.int32(), _PG_EPOCH_DAYS, "!i"),
                "timestamp without time zone": (pa.int64(), _PG_EPOCH_US, "!q"),
                "timestamp with time zone": (pa.int64(), _PG_EPOCH_US, "!q"),
                "time without time zone": (pa.int64(), 0, "!q")}


def _fixed_width(values: pa.Array, fmt: str) -> list[bytes | None]:
    width = struct.calcsize(fmt)
    raw = values.fill_null(0).to_numpy(zero_copy_only=False).astype(_numpy_be(fmt)).tobytes()
    valid = values.is_valid().to_pylist()
    return [raw[i * width:(i + 1) * width] if ok else None for i, ok in enumerate(valid)]


def numeric_binary(value) -> bytes:
    """PostgreSQL's binary numeric: base-10000 digits, a weight, a sign and a display scale."""
    from decimal import Decimal

    d = Decimal(value)
    if d.is_nan():
        return struct.pack("!hhHh", 0, 0, 0xC000, 0)
    if d.is_infinite():
        return struct.pack("!hhHh", 0, 0, 0xF000 if d < 0 else 0xD000, 0)
    sign = 0x4000 if d.is_signed() else 0
    digits_t = d.as_tuple()
    scale = max(0, -digits_t.exponent)
    text = f"{abs(d):.{scale}f}"
    int_part, _, frac_part = text.partition(".")
    int_part = int_part.lstrip("0")
    int_part = "0" * (-len(int_part) % 4) + int_part
    frac_part = frac_part + "0" * (-len(frac_part) % 4)
    groups = [int(int_part[i:i + 4]) for i in range(0, len(int_part), 4)] + \
        [int(frac_part[i:i + 4]) for i in range(0, len(frac_part), 4)]
    weight = len(int_part) // 4 - 1
    while groups and groups[0] == 0:  # leading zero groups
        groups.pop(0)
        weight -= 1
    while groups and groups[-1] == 0:
        groups.pop()
    if not groups:
        weight, sign = 0, 0
    return struct.pack(f"!hhHh{len(groups)}H", len(groups), weight, sign, scale, *groups)


def _numpy_be(fmt: str) -> str:
    """The big-endian numpy dtype of a struct format ('!i' -> '>i4')."""
    return {"!h": ">i2", "!i": ">i4", "!q": ">i8", "!f": ">f4", "!d": ">f8"}[fmt]


# -- parameters -------------------------------------------------------------------------------
def param_literal(value: bytes | None, oid: int, fmt: int) -> str:
    """A bound parameter as a SQL literal: quoted, and cast to its declared type when the
    client gave one (an unknown type stays an untyped literal, which the binder coerces as
    PostgreSQL does)."""
    type_name = type_name_of_oid(oid)
    if value is None:
        return f"CAST(NULL AS {type_name})" if type_name else "NULL"
    text = decode_binary_value(value, oid) if fmt == 1 else value.decode("utf-8")
    literal = quote_literal(text)
    return f"CAST({literal} AS {type_name})" if type_name else literal


_BINARY_PARAM = {21: "!h", 23: "!i", 20: "!q", 26: "!I", 700: "!f", 701: "!d"}


def decode_binary_value(value: bytes, oid: int) -> str:
    """A binary-format value (a parameter, a field of binary COPY) as its text form."""
    if oid in _BINARY_PARAM:
        (v,) = struct.unpack(_BINARY_PARAM[oid], value)
        return repr(v) if isinstance(v, float) else str(v)
    if oid == 16:
        return "true" if value != b"\x00" else "false"
    if oid in (TEXT_OID, 1043, 1042, 19, 0, UNKNOWN_OID, 114):
        return value.decode("utf-8")
    if oid == 3802:  # jsonb: version byte 1, then text
        return value[1:].decode("utf-8")
    if oid == 17:
        return "\\x" + value.hex()
    if oid in _BINARY_TEMPORAL:
        return _BINARY_TEMPORAL[oid](value)
    if oid == 1700:
        return numeric_from_binary(value)
    if oid in _ELEMENT_OIDS:
        return _array_param(value)
    raise NotSupported(f"binary format for parameters of type OID {oid}",
                       hint="send this parameter in text format (format code 0)")


def _array_param(value: bytes) -> str:
    """A binary array (dimensions, has-null flag, element OID, each dimension's length and
    lower bound, then each element's length and bytes) as PostgreSQL's array text."""
    ndim, _, element = struct.unpack_from("!iiI", value)
    lengths = [struct.unpack_from("!ii", value, 12 + 8 * d)[0] for d in range(ndim)]
    pos = 12 + 8 * ndim
    items: list[str] = []
    for _ in range(math.prod(lengths) if ndim else 0):
        (size,) = struct.unpack_from("!i", value, pos)
        pos += 4
        if size < 0:
            items.append("NULL")
            continue
        text = decode_binary_value(value[pos:pos + size], element)
        pos += size
        items.append('"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"')
    return _nest(items, lengths)


def _nest(items: list[str], lengths: list[int]) -> str:
    """Elements in row-major order as nested braces of the given dimension lengths."""
    if len(lengths) <= 1:
        return "{" + ",".join(items) + "}"
    step = len(items) // lengths[0] if lengths[0] else 0
    return "{" + ",".join(_nest(items[i * step:(i + 1) * step], lengths[1:]) for i in range(lengths[0])) + "}"


def _date_param(value: bytes) -> str:
    import datetime

    (days,) = struct.unpack("!i", value)
    return (datetime.date(2000, 1, 1) + datetime.timedelta(days=days)).isoformat()


def _timestamp_param(value: bytes, tz: bool) -> str:
    import datetime

    (us,) = struct.unpack("!q", value)
    ts = datetime.datetime(2000, 1, 1) + datetime.timedelta(microseconds=us)
    return ts.isoformat(sep=" ") + ("+00:00" if tz else "")


def _time_param(value: bytes) -> str:
    (us,) = struct.unpack("!q", value)
    seconds, micro = divmod(us, 1_000_000)
    return f"{seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}.{micro:06d}"


_BINARY_TEMPORAL = {1082: _date_param, 1114: lambda v: _timestamp_param(v, False),
                    1184: lambda v: _timestamp_param(v, True), 1083: _time_param}


_SPECIAL_NUMERIC = {0xC000: "NaN", 0xD000: "Infinity", 0xF000: "-Infinity"}


def numeric_from_binary(value: bytes) -> str:
    ndigits, weight, sign, scale = struct.unpack("!hhHh", value[:8])
    if sign in _SPECIAL_NUMERIC:
        return _SPECIAL_NUMERIC[sign]
    groups = struct.unpack(f"!{ndigits}H", value[8:8 + 2 * ndigits])
    from decimal import Decimal

    total = Decimal(0)
    for i, g in enumerate(groups):
        total += Decimal(g).scaleb(4 * (weight - i))
    if sign == 0x4000:
        total = -total
    return f"{total:.{scale}f}"
