"""Rendering for the terminal, in psql's layouts: the aligned table, the expanded records,
the command tag, notices and the error block; `render_result` picks the layout, or a data
format of `data_formats.py`, for a result.

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


def rows_footer(n: int) -> str:
    return f"({n} row{'' if n == 1 else 's'})"


def render_table(columns: Sequence[str], rows: Sequence[Sequence[str | None]], types: Sequence = (),
                 *, title: str | None = None, footer: str | None = None, null: str = "") -> str:
    """An aligned table as psql prints it (border 1), with a footer (default `(N rows)`) and
    a blank line after it; `title` is centred above the table as psql's `\\d` does."""
    n = len(rows)
    footer = (rows_footer(n) if footer is None else footer) + "\n\n"
    if not columns:
        return "--\n" + footer
    right = [_is_numeric(types[i]) if i < len(types) else False for i in range(len(columns))]
    cells = [[(null if v is None else str(v)).split("\n") for v in row] for row in rows]
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
    if title is not None:
        total = sum(widths) + 3 * len(widths) - 1
        out.insert(0, " " * max(0, (total - _width(title)) // 2) + title)
    return "\n".join(out) + "\n" + footer


def render_expanded(columns: Sequence[str], rows: Sequence[Sequence[str | None]], null: str = "") -> str:
    """psql's expanded layout (`\\x`): one `-[ RECORD n ]` block per row, no row-count footer
    except `(0 rows)`."""
    if not rows:
        return "(0 rows)\n\n"
    hwidth = max((_width(c) for c in columns), default=0)
    cells = [[(null if v is None else str(v)).split("\n") for v in row] for row in rows]
    dwidth = max((_width(line) for row in cells for lines in row for line in lines), default=0)
    out: list[str] = []
    for k, row in enumerate(cells, 1):
        out.append(_record_line(k, hwidth, dwidth))
        for name, lines in zip(columns, row):
            for j, line in enumerate(lines):
                head = name if j == 0 else ""
                head += " " * (hwidth - _width(head))
                more = j < len(lines) - 1
                text = line + " " * (dwidth - _width(line)) + "+" if more else line
                out.append(f"{head} | {text}")
    return "\n".join(out) + "\n\n"


def _record_line(record: int, hwidth: int, dwidth: int) -> str:
    # print_aligned_vertical_line() of psql's print.c, border 1
    label = f"[ RECORD {record} ]"
    line = "-" + label
    reclen = len(label) + 1
    line += "-" * max(0, hwidth - reclen)
    reclen -= hwidth
    for ch in "-+-":
        if reclen <= 0:
            line += ch
        reclen -= 1
    line += "-" * max(0, dwidth - max(reclen, 0))
    return line


def table_width(columns: Sequence[str], rows: Sequence[Sequence[str | None]]) -> int:
    """The width of the aligned table's widest line (for `\\x auto`)."""
    widths = [_width(c) for c in columns]
    for row in rows:
        for i, v in enumerate(row):
            if v is not None:
                widths[i] = max(widths[i], max(_width(line) for line in str(v).split("\n")))
    return sum(widths) + 3 * len(widths) - 1


def render_result(result, fmt: str = "table", *, expanded: str = "off", null: str = "",
                  width: int | None = None) -> str:
    """A statement's result in output format `fmt` (one of `data_formats.FORMATS`).

    In `table` format a statement without rows prints its command tag; `expanded` ("on",
    "off" or "auto": expanded when wider than `width`) switches to the record layout. The
    data formats print rows only, never command tags, so their output stays parseable.
    """
    from rw_cli.shell import data_formats

    if result.copy_out is not None:  # COPY ... TO STDOUT: the data as it is, no tag
        return result.copy_out
    if fmt not in ("table", "expanded"):
        if result.table is None:
            return ""
        return data_formats.WRITERS[fmt](result.columns, result.text_rows(), result.types)
    if result.table is None:
        return f"{result.status}\n"
    rows = result.text_rows()
    if fmt == "expanded" or expanded == "on" or (
            expanded == "auto" and width is not None and table_width(result.columns, rows) > width):
        return render_expanded(result.columns, rows, null)
    return render_table(result.columns, rows, result.types, null=null)


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
    context = getattr(err, "context", None)
    if context:
        lines.append(f"CONTEXT:  {context}")
    return "\n".join(lines) + "\n"
