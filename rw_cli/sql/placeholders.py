"""`$1`, `$2`... in a prepared statement: found by a scanner that knows PostgreSQL's quoting,
and replaced by literals.

A placeholder counts only outside string literals (`'...'`, `E'...'`), quoted identifiers,
dollar-quoted strings and comments, so `'$1'` stays text. The literals put in its place are
quoted by `pgtypes.param_literal`: user data never becomes SQL syntax.
"""
from __future__ import annotations

import re
from collections.abc import Callable

_PLACEHOLDER = re.compile(r"\$(\d+)")
_DOLLAR_TAG = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)?\$")


def placeholder_spans(sql: str) -> list[tuple[int, int, int]]:
    """(start, end, number) of each placeholder outside quotes and comments."""
    out = []
    i, n = 0, len(sql)
    while i < n:
        c = sql[i]
        if c == "'":
            escapes = i > 0 and sql[i - 1] in "eE" and (i < 2 or not (sql[i - 2].isalnum() or sql[i - 2] == "_"))
            i = _string_end(sql, i, escapes)
        elif c == '"':
            end = sql.find('"', i + 1)
            while end >= 0 and sql.startswith('""', end):
                end = sql.find('"', end + 2)
            i = n if end < 0 else end + 1
        elif sql.startswith("--", i):
            end = sql.find("\n", i)
            i = n if end < 0 else end + 1
        elif sql.startswith("/*", i):
            i = _block_comment_end(sql, i)
        elif c == "$":
            m = _PLACEHOLDER.match(sql, i)
            if m and not (i > 0 and (sql[i - 1].isalnum() or sql[i - 1] == "_")):
                out.append((i, m.end(), int(m.group(1))))
                i = m.end()
                continue
            tag = _DOLLAR_TAG.match(sql, i)
            if tag and not (i > 0 and (sql[i - 1].isalnum() or sql[i - 1] == "_")):
                end = sql.find(tag.group(0), tag.end())
                i = n if end < 0 else end + len(tag.group(0))
            else:
                i += 1
        else:
            i += 1
    return out


def _string_end(sql: str, i: int, escapes: bool) -> int:
    j = i + 1
    n = len(sql)
    while j < n:
        if escapes and sql[j] == "\\":
            j += 2
            continue
        if sql[j] == "'":
            if sql.startswith("''", j):
                j += 2
                continue
            return j + 1
        j += 1
    return n


def _block_comment_end(sql: str, i: int) -> int:
    depth, j, n = 0, i, len(sql)
    while j < n:
        if sql.startswith("/*", j):
            depth += 1
            j += 2
        elif sql.startswith("*/", j):
            depth -= 1
            j += 2
            if depth == 0:
                return j
        else:
            j += 1
    return n


def parameter_count(sql: str) -> int:
    """The highest placeholder number (PostgreSQL's count of a statement's parameters)."""
    return max((num for _, _, num in placeholder_spans(sql)), default=0)


def substitute(sql: str, literals: list[str]) -> str:
    """`sql` with `$k` replaced by `literals[k-1]` (parenthesized, so `-$1` and `$1::int`
    read as they would with a value)."""
    return substitute_mapped(sql, literals)[0]


def substitute_mapped(sql: str, literals: list[str]) -> tuple[str, "Callable[[int], int]"]:
    """`substitute`, plus a function from a position in the new text to the position in
    `sql` (an error inside a value points at its placeholder), so errors point into the
    statement the client prepared."""
    parts, last = [], 0
    shifts: list[tuple[int, int, int, int]] = []  # (start, end) in the new text, (start, end) in sql
    new_len = 0
    for start, end, num in placeholder_spans(sql):
        if not 1 <= num <= len(literals):
            from rw_cli.errors import RwError

            raise RwError(f"there is no parameter ${num}", position=start)
        parts.append(sql[last:start])
        new_len += start - last
        value = f"({literals[num - 1]})"
        shifts.append((new_len, new_len + len(value), start, end))
        parts.append(value)
        new_len += len(value)
        last = end
    parts.append(sql[last:])

    def to_original(pos: int) -> int:
        delta = 0
        for new_start, new_end, old_start, old_end in shifts:
            if pos < new_start:
                break
            if pos < new_end:
                return old_start
            delta = new_end - old_end
        return pos - delta

    return "".join(parts), to_original
