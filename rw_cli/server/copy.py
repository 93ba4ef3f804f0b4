"""COPY ... FROM STDIN and COPY ... TO STDOUT over the wire: text and CSV formats, and
PostgreSQL's binary format FROM STDIN (asyncpg's copy_records_to_table sends it).

The server reads the CopyData a client sends, turns it into Arrow text columns (pyarrow's
CSV reader: vectorized; the text format's backslash escapes are undone only in the
columns that hold a backslash), and hands them to `Session.copy_in`. COPY TO runs the
query and writes each row as one CopyData message.
"""
from __future__ import annotations

import io
import re
import struct
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.csv as pacsv

from rw_cli.common.copy_text import decode_text_column
from rw_cli.errors import NotSupported, QueryCanceled, RwError, SqlSyntaxError
from rw_cli.result import Result
from rw_cli.server import pgtypes, protocol

_COPY = re.compile(
    r"^\s*copy\s+(?:(?P<query>\(.*\))|(?P<table>[\w.\"]+)\s*(?:\((?P<columns>[^)]*)\))?)\s+"
    r"(?P<dir>from\s+stdin|to\s+stdout)\s*(?:(?:with\s*)?\((?P<options>.*)\)|(?P<legacy>[^;]*?))?\s*;?\s*$",
    re.I | re.S)


@dataclass
class CopyStatement:
    table: str | None
    columns: list[str] | None
    query: str | None
    into_table: bool  # FROM STDIN
    csv: bool = False
    delimiter: str = "\t"
    null: str = "\\N"
    header: bool = False
    binary: bool = False


def copy_kind(sql: str) -> str | None:
    """"in", "out", or None when `sql` is no COPY statement."""
    if not re.match(r"^\s*copy\b", sql, re.I):
        return None
    m = _COPY.match(sql)
    return None if m is None else ("in" if m.group("dir").lower().startswith("from") else "out")


def _ident(text: str) -> str:
    text = text.strip()
    return text[1:-1].replace('""', '"') if text.startswith('"') else text.lower()


def parse_copy(sql: str) -> CopyStatement:
    m = _COPY.match(sql)
    if m is None:
        raise SqlSyntaxError("COPY: expected COPY table [(columns)] FROM STDIN | COPY table|(query) TO STDOUT")
    into = m.group("dir").lower().startswith("from")
    if m.group("query") and into:
        raise SqlSyntaxError("COPY (query) only goes TO STDOUT")
    columns = [_ident(c) for c in m.group("columns").split(",")] if m.group("columns") else None
    stmt = CopyStatement(".".join(_ident(p) for p in m.group("table").split(".")) if m.group("table") else None,
                         columns, m.group("query")[1:-1] if m.group("query") else None, into)
    opts = _options(sql)
    if opts.format not in ("text", "csv", "binary") or (opts.format == "binary" and not into):
        raise NotSupported(f"COPY format {opts.format} over the wire",
                           hint="formats: text, csv (and binary FROM STDIN)")
    stmt.csv, stmt.binary = opts.format == "csv", opts.format == "binary"
    stmt.delimiter, stmt.null, stmt.header = opts.delimiter, opts.null, opts.header
    return stmt


def _options(sql: str):
    """The statement's options, read as COPY to and from files reads them."""
    from rw_cli.handler.copy import copy_options
    from rw_cli.sql.dialect import parse_statement

    return copy_options(parse_statement(sql))


# -- reading ------------------------------------------------------------------------------------
def parse_rows(stmt: CopyStatement, data: bytes, ncols: int) -> pa.Table:
    """The rows of a COPY FROM as text columns (None for NULL)."""
    if not stmt.csv:
        lines = data.split(b"\n")
        if lines and lines[-1] == b"":
            lines.pop()
        if b"\\." in lines:  # the end-of-data marker of the text format
            lines = lines[: lines.index(b"\\.")]
        data = b"\n".join(line[:-1] if line.endswith(b"\r") else line for line in lines)
    if not data.strip(b"\r\n"):
        return pa.table({f"c{i}": pa.array([], pa.string()) for i in range(ncols)})
    names = [f"c{i}" for i in range(ncols)]
    parse = pacsv.ParseOptions(delimiter=stmt.delimiter, quote_char='"' if stmt.csv else False,
                               escape_char=False, newlines_in_values=stmt.csv)
    convert = pacsv.ConvertOptions(column_types={n: pa.string() for n in names},
                                   null_values=[stmt.null], strings_can_be_null=True,
                                   quoted_strings_can_be_null=False)
    read = pacsv.ReadOptions(column_names=names, skip_rows=1 if stmt.header else 0)
    try:
        table = pacsv.read_csv(io.BytesIO(data), read_options=read, parse_options=parse, convert_options=convert)
    except pa.ArrowInvalid as e:
        raise RwError(f"COPY: invalid input: {e}", hint=f"each row needs {ncols} field(s)") from None
    if not stmt.csv:
        table = pa.table(dict(zip(names, (decode_text_column(c) for c in table.columns))))
    return table


_BINARY_SIGNATURE = b"PGCOPY\n\xff\r\n\x00"


def parse_binary_rows(data: bytes, types: list) -> pa.Table:
    """The rows of a binary COPY FROM (signature, flags, header extension, then per row a
    field count and each field's length and bytes, -1 for NULL; a count of -1 ends it) as text
    columns, each value decoded as a binary parameter of its column's type is."""
    if not data.startswith(_BINARY_SIGNATURE) or len(data) < 19:
        raise RwError("COPY file signature not recognized")
    (extension,) = struct.unpack_from("!i", data, 15)
    pos = 19 + extension
    oids = [pgtypes.type_oid(t) for t in types]
    columns: list[list[str | None]] = [[] for _ in types]
    while pos + 2 <= len(data):
        (count,) = struct.unpack_from("!h", data, pos)
        pos += 2
        if count == -1:
            break
        if count != len(types):
            raise RwError(f"row field count is {count}, expected {len(types)}")
        for i in range(count):
            (size,) = struct.unpack_from("!i", data, pos)
            pos += 4
            if size < 0:
                columns[i].append(None)
                continue
            columns[i].append(pgtypes.decode_binary_value(data[pos:pos + size], oids[i]))
            pos += size
    return pa.table({f"c{i}": pa.array(c, pa.string()) for i, c in enumerate(columns)})


def _target_types(conn, stmt: CopyStatement) -> list:
    from rw_cli.handler.copy import copy_in_types

    return conn.server.run_as(conn.state, f"COPY {stmt.table} FROM STDIN",
                              lambda session: copy_in_types(session, stmt.table, stmt.columns))


def copy_in(conn, stmt: CopyStatement) -> Result:
    types = _target_types(conn, stmt)
    ncols = len(types)
    conn.send(protocol.copy_in_response_msg(ncols, binary=stmt.binary))
    conn.flush()
    chunks = []
    while True:
        kind, body = protocol.read_message(conn.sock)
        if kind == b"d":
            chunks.append(body)
        elif kind == b"c":
            break
        elif kind == b"f":
            reason = body.rstrip(b"\0").decode("utf-8", "replace")
            raise QueryCanceled(f"COPY from stdin failed: {reason}")
        elif kind in (b"H", b"S"):
            continue
        else:
            raise RwError(f"unexpected message type {kind!r} during COPY from stdin")
    raw = b"".join(chunks)
    try:
        data = parse_binary_rows(raw, types) if stmt.binary else parse_rows(stmt, raw, ncols)
    except (struct.error, ValueError, UnicodeDecodeError) as e:
        raise RwError(f"COPY: invalid binary input: {e}") from None
    return conn.server.run_as(conn.state, f"COPY {stmt.table} FROM STDIN",
                              lambda session: session.copy_in(stmt.table, stmt.columns, data))


# -- writing ------------------------------------------------------------------------------------
def _text_field(v: str | None, stmt: CopyStatement) -> str:
    if v is None:
        return stmt.null
    if stmt.csv:
        if v == "" or any(ch in v for ch in (stmt.delimiter, '"', "\n", "\r")) or v == stmt.null:
            return '"' + v.replace('"', '""') + '"'
        return v
    return v.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r") \
        .replace(stmt.delimiter, "\\" + stmt.delimiter) if v else v


def copy_out(conn, stmt: CopyStatement) -> Result:
    query = stmt.query
    if query is None:
        from rw_cli.handler.copy import copy_out_columns

        query = conn.server.run_as(conn.state, "COPY", lambda s: copy_out_columns(s, stmt.table, stmt.columns))
    result = conn.server.execute(conn.state, query)
    if not result.has_rows:
        raise RwError("COPY (query) TO: the query returns no rows")
    conn.send(protocol.copy_out_response_msg(len(result.columns)))
    if stmt.header:
        conn.send(protocol.copy_data_msg(
            (stmt.delimiter.join(_text_field(c, stmt) for c in result.columns) + "\n").encode()))
    for row in result.text_rows():
        conn.send(protocol.copy_data_msg((stmt.delimiter.join(_text_field(v, stmt) for v in row) + "\n").encode()))
    conn.send(protocol.copy_done_msg())
    return Result(f"COPY {result.rowcount}")


def run_copy(conn, sql: str) -> Result:
    stmt = parse_copy(sql)
    return copy_in(conn, stmt) if stmt.into_table else copy_out(conn, stmt)
