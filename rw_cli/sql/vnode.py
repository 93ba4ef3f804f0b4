"""rw_vnode(vnode_count, key...): the virtual node RisingWave's hash distribution puts a row
with these key values on, out of `vnode_count` (1..=32768; a table has 256 by default).

RisingWave hashes the key's datums with CRC-32 (crc32fast) as Rust's `Hash` writes them: an
integer as its little-endian bytes (2, 4 or 8 of them), a boolean as one byte, a string as
its UTF-8 bytes and a 0xff byte, NULL as the u32 0xfffffff0; the vnode is the hash modulo the
count (`VirtualNode::compute_row`). The key's bytes are built in SQL and hashed by the
crc32 UDF, so a query over any rows gets them.
"""
from __future__ import annotations

from sqlglot import exp

from rw_cli.errors import BindError, NotSupported

MAX_VNODE_COUNT = 32768  # VirtualNode::MAX_COUNT
_NULL_BYTES = "\\xF0\\xFF\\xFF\\xFF"  # 0xfffffff0 as a little-endian u32
_INT_WIDTHS = {exp.DataType.Type.SMALLINT: 2, exp.DataType.Type.INT: 4, exp.DataType.Type.BIGINT: 8,
               exp.DataType.Type.BOOLEAN: 1}
_TEXT = {exp.DataType.Type.VARCHAR, exp.DataType.Type.TEXT}


def rw_vnode(args: list[exp.Expression]) -> exp.Expression:
    """The call's SQL: a smallint, as RisingWave's vnode is."""
    if len(args) < 2:
        raise BindError(f"Invalid input syntax: rw_vnode takes at least 2 arguments ({len(args)} given)")
    count = _constant_count(args[0])
    key: exp.Expression | None = None
    for arg in args[1:]:
        part = _datum_bytes(arg)
        key = part if key is None else exp.DPipe(this=key, expression=part, safe=True)
    crc = exp.Anonymous(this="pg_crc32", expressions=[key])
    return exp.Cast(this=exp.Mod(this=crc, expression=exp.Literal.number(count)), to=exp.DataType.build("SMALLINT"))


def _constant_count(arg: exp.Expression) -> int:
    node = arg.this if isinstance(arg, exp.Cast) else arg
    if isinstance(node, exp.Null):
        raise BindError("Invalid input syntax: the first argument (vnode count) must not be NULL")
    negative = isinstance(node, exp.Neg)
    if negative:
        node = node.this
    if not (isinstance(node, exp.Literal) and not node.is_string and node.this.isdigit()):
        raise BindError("Invalid input syntax: the first argument (vnode count) must be a constant")
    count = -int(node.this) if negative else int(node.this)
    if not 1 <= count <= MAX_VNODE_COUNT:
        raise BindError(f"Invalid input syntax: the first argument (vnode count) must be in range "
                        f"1..={MAX_VNODE_COUNT}")
    return count


def _datum_bytes(arg: exp.Expression) -> exp.Expression:
    """The bytes Rust's `Hash` writes for one key datum, as a BLOB expression."""
    null = exp.Cast(this=exp.Literal.string(_NULL_BYTES), to=exp.DataType.build("BLOB"))
    if isinstance(arg, exp.Null):
        return null
    t = arg.type.this if getattr(arg, "type", None) is not None else None
    if t in _INT_WIDTHS:
        value = exp.Cast(this=arg.copy(), to=exp.DataType.build("BIGINT"))
        body = exp.Anonymous(this="rw_le_bytes", expressions=[value, exp.Literal.number(_INT_WIDTHS[t])])
    elif t in _TEXT or (isinstance(arg, exp.Literal) and arg.is_string):
        body = exp.DPipe(this=exp.Anonymous(this="encode", expressions=[arg.copy()]),
                         expression=exp.Cast(this=exp.Literal.string("\\xFF"), to=exp.DataType.build("BLOB")),
                         safe=True)
    elif t in (None, exp.DataType.Type.UNKNOWN):
        body = _by_runtime_type(arg)  # (a row id's serial, say): chosen by DuckDB's type
    else:
        raise NotSupported(f"rw_vnode of a key of type {arg.type.sql() if getattr(arg, 'type', None) else 'unknown'}",
                           hint="rw_vnode hashes integers, booleans and strings")
    return exp.Coalesce(this=body, expressions=[null])


def _by_runtime_type(arg: exp.Expression) -> exp.Expression:
    """An argument the binder could not type: its bytes by the type DuckDB gives it (a type
    not hashed here gives NULL's bytes)."""
    def le(width: int) -> exp.Expression:
        value = exp.TryCast(this=arg.copy(), to=exp.DataType.build("BIGINT"))
        return exp.Anonymous(this="rw_le_bytes", expressions=[value, exp.Literal.number(width)])

    text = exp.DPipe(this=exp.Anonymous(this="encode", expressions=[exp.TryCast(this=arg.copy(), to=exp.DataType.build("VARCHAR"))]),
                     expression=exp.Cast(this=exp.Literal.string("\\xFF"), to=exp.DataType.build("BLOB")), safe=True)
    kind = exp.Anonymous(this="typeof", expressions=[arg.copy()])
    ifs = [exp.If(this=exp.In(this=kind.copy(), expressions=[exp.Literal.string(n) for n in names]), true=body)
           for names, body in ((("SMALLINT",), le(2)), (("INTEGER",), le(4)), (("BIGINT",), le(8)),
                               (("BOOLEAN",), le(1)), (("VARCHAR",), text))]
    return exp.Case(ifs=ifs)
