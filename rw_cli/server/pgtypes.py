"""rw's types on the wire: type OIDs, result values in text and binary format, and bound
parameters turned into typed SQL literals.

Text format is PostgreSQL's output of every type (`rw_cli.common.pg_text`, the same text
the CLI prints). Binary format is supported for the types drivers send and ask for in
binary (bool, int2/4/8, float4/8, text/varchar, bytea); another type in binary is a clear
error (0A000), never wrong bytes.
"""
from __future__ import annotations

import struct

import pyarrow as pa
import pyarrow.compute as pc

from rw_cli.common.pg_text import format_column
from rw_cli.common.types import DataType
from rw_cli.errors import NotSupported, RwError
from rw_cli.sql.pg_catalog import PG_TYPES

TEXT_OID = 25
UNKNOWN_OID = 705
# a struct has no OID of its own in rw: clients read it as the record type, in text
RECORD_OID = 2249

_ARRAY_OIDS = {array: oid for oid, _, _, array in PG_TYPES.values()}
# what a parameter's OID says to cast its literal to (the rw type name)
_OID_TO_TYPE: dict[int, str] = {oid: name for name, (oid, _, _, _) in PG_TYPES.items()}
_OID_TO_TYPE.update({TEXT_OID: "character varying", 1042: "character varying", 19: "character varying",
                     26: "bigint", 114: "jsonb"})


def type_oid(t: DataType) -> int:
    if t.is_list:
        entry = PG_TYPES.get(t.inner[0].name)
        return entry[3] if entry else 1009  # text[]
    if t.is_struct:
        return RECORD_OID
    entry = PG_TYPES.get(t.name)
    return entry[0] if entry else TEXT_OID


def type_size(t: DataType) -> int:
    entry = None if (t.is_list or t.is_struct) else PG_TYPES.get(t.name)
    return entry[2] if entry else -1


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
    if name in _BINARY_INT:
        fmt, arrow = _BINARY_INT[name]
        width = struct.calcsize(fmt)
        values = pc.cast(col, arrow)
        raw = values.fill_null(0).to_numpy(zero_copy_only=False).astype(_numpy_be(fmt)).tobytes()
        valid = values.is_valid().to_pylist()
        return [raw[i * width:(i + 1) * width] if ok else None for i, ok in enumerate(valid)]
    if name == "boolean":
        return [None if v is None else (b"\x01" if v else b"\x00") for v in col.to_pylist()]
    if name in ("character varying", "jsonb"):
        if name == "jsonb":  # jsonb's binary format: a version byte, then the text
            return [None if v is None else b"\x01" + v for v in encode_column(col, t, 0)]
        return [None if v is None else v.encode("utf-8") for v in pc.cast(col, pa.string()).to_pylist()]
    if name == "bytea":
        return col.to_pylist()
    raise NotSupported(f"binary format for type {name}", hint="ask for text format (format code 0)")


def _numpy_be(fmt: str) -> str:
    """The big-endian numpy dtype of a struct format ('!i' -> '>i4')."""
    return {"!h": ">i2", "!i": ">i4", "!q": ">i8", "!f": ">f4", "!d": ">f8"}[fmt]


# -- parameters -------------------------------------------------------------------------------
def quote_literal(text: str) -> str:
    """A PostgreSQL string literal of `text` (standard_conforming_strings is on: only `'`
    is special)."""
    if "\0" in text:
        raise RwError("invalid byte sequence for encoding \"UTF8\": 0x00")
    return "'" + text.replace("'", "''") + "'"


def param_literal(value: bytes | None, oid: int, fmt: int) -> str:
    """A bound parameter as a SQL literal: quoted, and cast to its declared type when the
    client gave one (an unknown type stays an untyped literal, which the binder coerces as
    PostgreSQL does)."""
    type_name = type_name_of_oid(oid)
    if value is None:
        return f"CAST(NULL AS {type_name})" if type_name else "NULL"
    text = _decode_binary_param(value, oid) if fmt == 1 else value.decode("utf-8")
    literal = quote_literal(text)
    return f"CAST({literal} AS {type_name})" if type_name else literal


_BINARY_PARAM = {21: "!h", 23: "!i", 20: "!q", 26: "!I", 700: "!f", 701: "!d"}


def _decode_binary_param(value: bytes, oid: int) -> str:
    """A binary-format parameter as the text its literal holds."""
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
    raise NotSupported(f"binary format for parameters of type OID {oid}",
                       hint="send this parameter in text format (format code 0)")
