"""psql's output layouts: the aligned table, the status tag, and the error block.

Every function returns the full text to write, ending with a newline.
"""
from __future__ import annotations

import unicodedata
from typing import Sequence

from rw_cli.errors import RwError


def _width(s: str) -> int:
    """Display width: East Asian wide and full-width characters take two cells."""
    if s.isascii():
        return len(s)
    w = 0
    for ch in s:
        if unicodedata.combining(ch):
            continue
        w += 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
    return w


def _is_numeric(t) -> bool:
    return bool(getattr(t, "is_numeric", False))


def render_table(columns: Sequence[str], rows: Sequence[Sequence[str | None]], types: Sequence = ()) -> str:
    """An aligned table as psql prints it (border 1), with the `(N rows)` footer and a
    blank line after it."""
    n = len(rows)
    footer = f"({n} row{'' if n == 1 else 's'})\n\n"
    if not columns:
        return "--\n" + footer
    right = [_is_numeric(types[i]) if i < len(types) else False for i in range(len(columns))]
    cells = [[("" if v is None else str(v)).split("\n") for v in row] for row in rows]
    widths = [_width(c) for c in columns]
    for row in cells:
        for i, lines in enumerate(row):
            for line in lines:
                widths[i] = max(widths[i], _width(line))

    out: list[str] = []
    # header: centered names, each followed by a space (also the last)
    head = []
    for name, w in zip(columns, widths):
        pad = w - _width(name)
        head.append(" " * (pad // 2) + name + " " * ((pad + 1) // 2))
    out.append(" " + " | ".join(head) + " ")
    out.append("-" + "-+-".join("-" * w for w in widths) + "-")

    last = len(columns) - 1
    for row in cells:
        height = max((len(lines) for lines in row), default=1)
        for k in range(height):
            parts = []
            for i, lines in enumerate(row):
                text = lines[k] if k < len(lines) else ""
                more = k < len(lines) - 1
                pad = " " * (widths[i] - _width(text))
                if right[i]:
                    cell = pad + text
                elif i < last or more:
                    cell = text + pad
                else:
                    cell = text
                marker = "+" if more else (" " if i < last else "")
                parts.append(cell + marker)
            out.append(" " + "| ".join(parts))
    return "\n".join(out) + "\n" + footer


def render_result(result) -> str:
    """A statement's result: the table when it returns rows, else its command tag."""
    if result.table is not None:
        return render_table(result.columns, result.text_rows(), result.types)
    return f"{result.status}\n"


def render_notices(result) -> str:
    return "".join(f"NOTICE:  {n}\n" for n in getattr(result, "notices", None) or [])


def render_error(err: RwError | Exception, sql: str | None = None) -> str:
    """psql's error block: `ERROR:  message`, then `LINE n: ...` with a caret under the
    error position when it is known, then `HINT:  ...`."""
    message = getattr(err, "message", None) or str(err)
    lines = [f"ERROR:  {message}"]
    pos = getattr(err, "position", None)
    if sql is not None and pos is not None and 0 <= pos <= len(sql):
        line_no = sql.count("\n", 0, pos) + 1
        line_start = sql.rfind("\n", 0, pos) + 1
        line_end = sql.find("\n", pos)
        line = sql[line_start: len(sql) if line_end < 0 else line_end].replace("\t", " ")
        prefix = f"LINE {line_no}: "
        col = _width(sql[line_start:pos].replace("\t", " "))
        lines.append(prefix + line.rstrip("\r"))
        lines.append(" " * (len(prefix) + col) + "^")
    hint = getattr(err, "hint", None)
    if hint:
        lines.append(f"HINT:  {hint}")
    return "\n".join(lines) + "\n"
