"""PostgreSQL's array input syntax (`{1, 2}`, `{{1}, {2}}`, `{"a,b", NULL}`) in the bracket
form DuckDB's text-to-list cast reads (`[1, 2]`): the braces that delimit the array (outside
double quotes) become brackets; quotes, NULL and blanks read the same in both."""
from __future__ import annotations


def pg_array_brackets(text: str) -> str:
    out, quoted, escaped = [], False, False
    for c in text:
        if escaped:
            escaped = False
        elif c == "\\":
            escaped = True
        elif c == '"':
            quoted = not quoted
        elif not quoted and c in "{}":
            c = "[" if c == "{" else "]"
        out.append(c)
    return "".join(out)
