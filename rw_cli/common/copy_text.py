"""PostgreSQL's COPY data formats, as Arrow columns of text: the `text` format's escapes and
the `csv` format's quoting.

A value's own text (`t`, `2024-01-02 03:04:05`, `{1,2}`) comes from rw_cli.common.pg_text;
this module only frames it: `text` escapes backslash, tab, newline and carriage return and
writes NULL as `\\N`; `csv` quotes a field that holds the delimiter, the quote, a line break,
or that would read back as NULL, and writes NULL as an empty unquoted field.
"""
from __future__ import annotations

import re

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

# text format: what a backslash sequence stands for (anything else: the character itself)
_TEXT_ESCAPES = {"b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}
_TEXT_ESCAPE = re.compile(r"\\(x[0-9A-Fa-f]{1,2}|[0-7]{1,3}|.)", re.S)


def _unescape_one(m: re.Match) -> str:
    s = m.group(1)
    if s[0] == "x" and len(s) > 1:
        return chr(int(s[1:], 16))
    if s[0] in "01234567":
        return chr(int(s, 8) & 0xFF)
    return _TEXT_ESCAPES.get(s, s)


def decode_text_column(col: pa.Array) -> pa.Array:
    """A column read from the `text` format with its backslash escapes resolved. Only the
    values that hold a backslash go through Python."""
    col = col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
    has = pc.fill_null(pc.match_substring(col, "\\"), False)
    if not pc.any(has).as_py():
        return col
    values = col.to_pylist()
    for i in pc.indices_nonzero(has).to_pylist():
        values[i] = _TEXT_ESCAPE.sub(_unescape_one, values[i])
    return pa.array(values, pa.string())


def encode_text_column(values: pa.Array, null: str) -> pa.Array:
    """Values (PostgreSQL text, nulls as null) as `text` format fields."""
    out = values
    for raw, escaped in (("\\", "\\\\"), ("\t", "\\t"), ("\n", "\\n"), ("\r", "\\r")):
        out = pc.replace_substring(out, raw, escaped)
    return pc.fill_null(out, null)


def encode_csv_column(values: pa.Array, delimiter: str, quote: str, escape: str, null: str) -> pa.Array:
    """Values (PostgreSQL text, nulls as null) as `csv` format fields."""
    special = "[" + re.escape(delimiter + quote + "\r\n") + "]"
    needs = pc.match_substring_regex(values, special)
    if null == "":
        needs = pc.or_(needs, pc.equal(values, ""))  # "" is an empty string, an empty field is NULL
    else:
        needs = pc.or_(needs, pc.equal(values, null))
    if not pc.any(needs).as_py():  # (numbers, dates, most text: nothing to quote)
        return pc.fill_null(values, null)
    quoted = pc.binary_join_element_wise(quote, pc.replace_substring(values, quote, escape + quote), quote, "")
    if escape != quote:
        quoted = pc.binary_join_element_wise(
            quote, pc.replace_substring(pc.replace_substring(values, escape, escape + escape), quote, escape + quote),
            quote, "")
    return pc.fill_null(pc.if_else(needs, quoted, values), null)


def join_lines(fields: list[pa.Array], delimiter: str) -> str:
    """Rows of fields joined by `delimiter`, one line each (with its newline)."""
    if not fields or len(fields[0]) == 0:
        return ""
    lines = pc.binary_join_element_wise(*fields, delimiter) if len(fields) > 1 else fields[0]
    # each line with its newline, then the array's character data as it lies in its buffer
    # (no Python string per line)
    lines = pc.binary_join_element_wise(lines, "", "\n")
    lines = lines.combine_chunks() if isinstance(lines, pa.ChunkedArray) else lines
    width = np.int64 if pa.types.is_large_string(lines.type) else np.int32
    offsets = np.frombuffer(lines.buffers()[1], dtype=width)[lines.offset:lines.offset + len(lines) + 1]
    return memoryview(lines.buffers()[2])[int(offsets[0]):int(offsets[-1])].tobytes().decode("utf-8")
