"""Results as SQLite's classic sqllogictest writes and checks them.

The classic corpus (SQLite's `*.test` files, also run by Materialize, CockroachDB and DuckDB)
was produced by SQLite's C runner, so its expected results follow that runner's rules rather
than PostgreSQL's text output:

- each value is formatted by its column's letter in `query <types>`: `I` as an integer
  (a fraction truncated toward zero, text read for its leading number as SQLite does), `R`
  with three decimals (halves rounded up), `T` as text; NULL is `NULL`, an empty string
  `(empty)`, and every byte outside printable ASCII `@`;
- results are listed one value per line, after sorting (`rowsort`: rows compared value by
  value; `valuesort`: all values) - or, past the file's `hash-threshold`, summarized as
  `N values hashing to MD5`, the MD5 of every value followed by a newline;
- queries sharing a label must give the same values (compared by their hash).
"""
from __future__ import annotations

import decimal
import hashlib
import re
from dataclasses import dataclass, field

from rw_cli.common.numeric import python_values
from rw_cli.common.pg_text import format_column
from rw_cli.result import Result

HASHED = re.compile(r"^\s*(\d+)\s+values\s+hashing\s+to\s+([0-9a-fA-F]{32})\s*$")
_LEADING_NUMBER = re.compile(r"^\s*([+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)")
_THREE = decimal.Decimal("0.001")
_WIDE = decimal.Context(prec=200)  # large numerics quantize without InvalidOperation
SHOWN_VALUES = 40  # a failure lists at most this many actual values besides their hash


# -- one value -----------------------------------------------------------------------------

def _leading_number(text: str) -> decimal.Decimal:
    """The number a text starts with, 0 if none: how SQLite reads text as a number."""
    m = _LEADING_NUMBER.match(text)
    return decimal.Decimal(m.group(1)) if m else decimal.Decimal(0)


def _as_decimal(value) -> decimal.Decimal | None:
    """A numeric value exactly as a Decimal (a float through its shortest repr); None for
    NaN and infinities, which have no integer or fixed-point form."""
    if isinstance(value, bool):
        return decimal.Decimal(int(value))
    if isinstance(value, int):
        return decimal.Decimal(value)
    if isinstance(value, float):
        d = decimal.Decimal(repr(value))
    elif isinstance(value, decimal.Decimal):
        d = value
    else:
        d = _leading_number(str(value))
    return d if d.is_finite() else None


def format_integer(value) -> str:
    if type(value) is int:  # the common case, without a Decimal
        return str(value)
    d = _as_decimal(value)
    if d is None:
        return str(value)
    return str(int(d.to_integral_value(rounding=decimal.ROUND_DOWN, context=_WIDE)))


def format_real(value) -> str:
    if type(value) is int:
        return f"{value}.000"
    d = _as_decimal(value)
    if d is None:
        return str(value)
    return str(d.quantize(_THREE, rounding=decimal.ROUND_HALF_UP, context=_WIDE))


def printable(text: str) -> str:
    """Every byte outside printable ASCII as `@`, as SQLite's runner writes it."""
    if text.isascii() and text.isprintable():
        return text
    return "".join(chr(b) if 0x20 <= b <= 0x7E else "@" for b in text.encode("utf-8"))


def format_text(text: str) -> str:
    return "(empty)" if text == "" else printable(text)


# -- one result ----------------------------------------------------------------------------

def format_result(result: Result | None, types: str) -> list[list[str]]:
    """A result's rows, each value formatted by its column's letter (`T` past the letters
    given). Column by column: numbers from their Arrow values, text from PostgreSQL's form."""
    if result is None or result.table is None:
        return []
    table = result.table
    columns: list[list[str]] = []
    for i in range(table.num_columns):
        letter = types[i] if i < len(types) else "T"
        column = table.column(i)
        if letter in ("I", "R"):
            fmt = format_integer if letter == "I" else format_real
            columns.append(["NULL" if v is None else fmt(v) for v in python_values(column)])
        else:
            texts = format_column(column, result.types[i]) if i < len(result.types) else [
                None if v is None else str(v) for v in python_values(column)]
            columns.append(["NULL" if t is None else format_text(t) for t in texts])
    if not columns:
        return [[] for _ in range(table.num_rows)]
    return [list(row) for row in zip(*columns)]


def sorted_values(rows: list[list[str]], sort_mode: str) -> list[str]:
    """The values in the order they are listed and hashed: rows sorted value by value
    (`rowsort`), every value sorted (`valuesort`), or as returned (`nosort`)."""
    if sort_mode == "rowsort":
        rows = sorted(rows)
    values = [v for row in rows for v in row]
    if sort_mode == "valuesort":
        values.sort()
    return values


def digest(values: list[str]) -> str:
    h = hashlib.md5()
    for v in values:
        h.update(v.encode("utf-8"))
        h.update(b"\n")
    return h.hexdigest()


def hashed_form(values: list[str]) -> str:
    return f"{len(values)} values hashing to {digest(values)}"


@dataclass
class ClassicState:
    """What a classic file carries from record to record: its hash threshold and the hash
    of each label's first result."""

    hash_threshold: int = 0
    labels: dict[str, str] = field(default_factory=dict)


def _expected_values(expected: list[str], ncols: int, sort_mode: str) -> list[str]:
    """The expected values, one per line as written; sorted again as a check would sort
    them (files written by other tools list them unsorted)."""
    values = [e.strip() for e in expected]
    if sort_mode == "rowsort" and ncols and len(values) % ncols == 0:
        rows = [values[i:i + ncols] for i in range(0, len(values), ncols)]
        return [v for row in sorted(rows) for v in row]
    if sort_mode == "valuesort":
        return sorted(values)
    return values


def _rows_as_lines(rows: list[list[str]], expected: list[str], sort_mode: str) -> bool:
    """Whether the expected lines are the rows written one per line, values separated by
    spaces (how other runners write small results)."""
    lines = [" ".join(row) for row in rows]
    want = [" ".join(e.split()) for e in expected]
    if sort_mode != "nosort":
        lines, want = sorted(lines), sorted(want)
    return lines == want


def check_query(result: Result | None, types: str, sort_mode: str, expected: list[str],
                label: str | None, state: ClassicState) -> str | None:
    """None when the result is what the record expects (and equals its label's), else the
    failure: its first line a summary, then the expected and actual results."""
    rows = format_result(result, types)
    ncols = result.table.num_columns if result is not None and result.table is not None else 0
    if rows and types and ncols != len(types):
        return f"wrong number of columns: expected {len(types)}, got {ncols}"
    values = sorted_values(rows, sort_mode)
    summary = hashed_form(values)
    m = HASHED.match(expected[0]) if len(expected) == 1 else None
    if m:
        ok = int(m.group(1)) == len(values) and m.group(2).lower() == digest(values)
    else:
        ok = values == _expected_values(expected, ncols, sort_mode) or (
            ncols > 1 and len(expected) == len(rows) and _rows_as_lines(rows, expected, sort_mode))
    if not ok:
        if m or (state.hash_threshold and len(values) > state.hash_threshold):
            actual = summary + ("\n" + "\n".join(values) if len(values) <= SHOWN_VALUES else "")
        else:
            actual = "\n".join(values)
        return "query result mismatch\n[Expected]\n" + "\n".join(expected) + "\n[Actual]\n" + actual
    if label is not None:
        first = state.labels.setdefault(label, summary)
        if first != summary:
            return (f"query result differs from the first result labelled {label}\n"
                    f"[Label {label}]\n{first}\n[Actual]\n{summary}")
    return None
