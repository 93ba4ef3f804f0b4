"""Data formats for scripts: csv, tsv, json, jsonl, markdown.

Each writer takes column names, rows of PostgreSQL text values (None for NULL, as
`Result.text_rows()` gives them) and the column types, and returns the whole text. The
output is the same whether or not stdout is a terminal.

- csv: RFC 4180 with a header line, as `psql --csv` (NULL is an empty field).
- tsv: a header line, then PostgreSQL's COPY text format (NULL is `\\N`; tab, newline,
  carriage return and backslash are escaped).
- json: one array, one object per line: a script (`-c`, `-f`, a pipe) writes one JSON
  document whatever its number of statements (their rows in order); jsonl: one object per line.
  Numbers and booleans are JSON numbers and booleans, jsonb is embedded as JSON, arrays are
  JSON arrays, every other type is its PostgreSQL text form as a string.
- markdown: a GitHub table, numbers right-aligned, NULL empty.
"""
from __future__ import annotations

import csv
import io
import json
from typing import Callable, Sequence

from rw_cli.config import FORMATS  # noqa: F401 - re-exported


_INTEGER = ("smallint", "integer", "bigint")
_FLOAT = ("real", "double precision", "numeric")
_SPECIAL_FLOATS = ("NaN", "Infinity", "-Infinity")

Rows = Sequence[Sequence[str | None]]


def write_csv(columns: Sequence[str], rows: Rows, types: Sequence = ()) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(columns)
    w.writerows(["" if v is None else v for v in row] for row in rows)
    return buf.getvalue()


_TSV_ESCAPES = str.maketrans({"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"})


def _tsv_field(v: str | None) -> str:
    return "\\N" if v is None else v.translate(_TSV_ESCAPES)


def write_tsv(columns: Sequence[str], rows: Rows, types: Sequence = ()) -> str:
    lines = ["\t".join(_tsv_field(c) for c in columns)]
    lines += ["\t".join(_tsv_field(v) for v in row) for row in rows]
    return "\n".join(lines) + "\n"


def _json_value(text: str | None, type_name: str) -> str:
    if text is None:
        return "null"
    if type_name == "boolean":
        return "true" if text == "t" else "false"
    if type_name in _INTEGER:
        return text
    if type_name in _FLOAT and text not in _SPECIAL_FLOATS:
        return text
    if type_name == "jsonb":
        return text
    if type_name.endswith("[]"):
        return json.dumps(_pg_array(text, type_name.rstrip("[]")), ensure_ascii=False)
    return json.dumps(text, ensure_ascii=False)


def _pg_array(text: str, element: str):
    """A PostgreSQL array's text (`{1,NULL,"a b",{2,3}}`) as JSON values: an array of the
    elements, NULL as null, numbers and booleans as JSON's."""
    pos = 0

    def value(raw: str, quoted: bool):
        if not quoted and raw == "NULL":
            return None
        return json.loads(_json_value(raw, element))

    def parse():
        nonlocal pos
        pos += 1  # {
        items = []
        while pos < len(text) and text[pos] != "}":
            if text[pos] == "{":
                items.append(parse())
            elif text[pos] == '"':
                pos += 1
                chars = []
                while text[pos] != '"':
                    if text[pos] == "\\":
                        pos += 1
                    chars.append(text[pos])
                    pos += 1
                pos += 1
                items.append(value("".join(chars), True))
            else:
                end = pos
                while text[end] not in ",}":
                    end += 1
                items.append(value(text[pos:end], False))
                pos = end
            if pos < len(text) and text[pos] == ",":
                pos += 1
        pos += 1  # }
        return items

    try:
        return parse() if text.startswith("{") else text
    except (IndexError, ValueError):  # not the array text we know: keep it as a string
        return text


def json_objects(columns: Sequence[str], rows: Rows, types: Sequence) -> list[str]:
    """One JSON object (text) per row: what a script's single `json` document collects."""
    return _json_objects(columns, rows, types)


def json_document(objects: Sequence[str]) -> str:
    """The one JSON array a `json` run writes, whatever its number of statements."""
    if not objects:
        return "[]\n"
    return "[\n" + ",\n".join(objects) + "\n]\n"


def _json_objects(columns: Sequence[str], rows: Rows, types: Sequence) -> list[str]:
    keys = [json.dumps(c, ensure_ascii=False) + ": " for c in columns]
    names = [getattr(types[i], "name", "") if i < len(types) else "" for i in range(len(columns))]
    return ["{" + ", ".join(k + _json_value(v, t) for k, v, t in zip(keys, row, names)) + "}"
            for row in rows]


def write_json(columns: Sequence[str], rows: Rows, types: Sequence = ()) -> str:
    return json_document(_json_objects(columns, rows, types))


def write_jsonl(columns: Sequence[str], rows: Rows, types: Sequence = ()) -> str:
    return "".join(o + "\n" for o in _json_objects(columns, rows, types))


def _md_cell(v: str | None) -> str:
    if v is None:
        return ""
    return v.replace("\\", "\\\\").replace("|", "\\|").replace("\r\n", "<br>").replace("\n", "<br>")


def write_markdown(columns: Sequence[str], rows: Rows, types: Sequence = ()) -> str:
    right = [bool(getattr(types[i], "is_numeric", False)) if i < len(types) else False
             for i in range(len(columns))]
    lines = ["| " + " | ".join(_md_cell(c) for c in columns) + " |",
             "|" + "|".join("---:" if r else "---" for r in right) + "|"]
    lines += ["| " + " | ".join(_md_cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


WRITERS: dict[str, Callable[[Sequence[str], Rows, Sequence], str]] = {
    "csv": write_csv,
    "tsv": write_tsv,
    "json": write_json,
    "jsonl": write_jsonl,
    "markdown": write_markdown,
}
