"""What to complete at the cursor: a pure function of the text, tested without a terminal.

`suggest(text, cursor)` returns the *kinds* of things that fit (keywords, functions,
relations of some kinds, columns of the relations in scope, backslash commands, files);
`completer.SqlCompleter` turns them into names from the catalog. As in pgcli's
`sqlcompletion.py`, the analysis is lexical: the previous keyword decides, and the relations
in scope come from the FROM / JOIN / UPDATE / INTO clauses of the statement at the cursor.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from rw_cli.sql.split import split_meta, split_statements, why_incomplete

TABLE, MV = "table", "materialized view"

KEYWORDS = (
    "ALTER", "AND", "APPEND", "AS", "ASC", "BEGIN", "BETWEEN", "BY", "CASE", "CAST", "COMMIT", "CREATE",
    "CROSS", "DELETE", "DESC", "DESCRIBE", "DISTINCT", "DROP", "ELSE", "EMIT", "END", "EXCEPT", "EXISTS",
    "EXPLAIN", "FALSE", "FILTER", "FLUSH", "FROM", "FULL", "GROUP", "HAVING", "IF", "ILIKE", "IN", "INNER",
    "INDEX", "INSERT", "INTERSECT", "INTERVAL", "INTO", "IS", "JOIN", "KEY", "LEFT", "LIKE", "LIMIT", "MATERIALIZED",
    "NOT", "NULL", "NULLS", "OFFSET", "ON", "ONLY", "OR", "ORDER", "OUTER", "OVER", "PARTITION", "PRIMARY",
    "RETURNING", "RIGHT", "ROLLBACK", "SELECT", "SET", "SHOW", "SINK", "SOURCE", "TABLE", "TABLES", "THEN", "TRUE", "UNION",
    "UPDATE", "USING", "VALUES", "VIEW", "VIEWS", "WHEN", "WHERE", "WINDOW", "WITH",
)
FUNCTIONS = (
    "abs", "array_agg", "array_length", "avg", "bool_and", "bool_or", "ceil", "char_length", "coalesce",
    "concat", "concat_ws", "count", "current_timestamp", "date_part", "date_trunc", "decode", "dense_rank",
    "encode", "extract", "first_value", "floor", "generate_series", "greatest", "hop", "jsonb_array_length",
    "jsonb_extract_path", "lag", "last_value", "lead", "least", "length", "lower", "lpad", "ltrim", "max",
    "md5", "min", "mod", "now", "nullif", "position", "power", "rank", "regexp_match", "regexp_replace",
    "replace", "round", "row_number", "rpad", "rtrim", "split_part", "sqrt", "starts_with", "string_agg",
    "string_to_array", "substr", "sum", "to_char", "to_date", "to_timestamp", "trim", "tumble", "upper",
)
DATATYPES = (
    "boolean", "smallint", "int", "integer", "bigint", "real", "double precision", "numeric", "varchar",
    "bytea", "date", "time", "timestamp", "timestamptz", "interval", "jsonb",
)
META_VALUES = {
    "\\x": ("on", "off", "auto"),
    "\\timing": ("on", "off"),
    "\\pset": ("format", "null", "pager", "expanded"),
}
_PSET_VALUES = {
    "format": ("table", "expanded", "csv", "tsv", "json", "jsonl", "markdown"),
    "pager": ("on", "off"),
    "expanded": ("on", "off", "auto"),
}
_RELATION_KINDS = {"\\d": (), "\\dt": (TABLE,), "\\dm": (MV,), "\\dv": ("view",), "\\di": ("index",),
                   "\\ds": ("source",)}


@dataclass(frozen=True)
class Suggestion:
    """One kind of completion: `type` is keyword, function, datatype, relation (of `kinds`,
    all kinds when empty), column (of `relations`), meta_command, file or value (`values`)."""

    type: str
    kinds: tuple[str, ...] = ()
    relations: tuple[str, ...] = ()
    values: tuple[str, ...] = ()


_TOKEN = re.compile(r'"(?:[^"]|"")*"?|[A-Za-z_][A-Za-z0-9_$]*(?:\.(?:[A-Za-z_][A-Za-z0-9_$]*)?)*|\S')
_CLAUSES = {"SELECT", "FROM", "JOIN", "WHERE", "ON", "BY", "HAVING", "SET", "VALUES", "INTO", "UPDATE",
            "TABLE", "DESCRIBE", "RETURNING", "USING", "LIMIT", "VIEW", "CREATE", "DROP", "INSERT", "DELETE",
            "AS", "WITH", "SHOW"}
_AFTER_RELATION = {"WHERE", "JOIN", "INNER", "LEFT", "RIGHT", "FULL", "CROSS", "ON", "GROUP", "ORDER",
                   "LIMIT", "AS", "UNION", "HAVING", "SET", "VALUES", "EMIT"}


def _unquote(word: str) -> str:
    return word[1:-1].replace('""', '"') if word.startswith('"') and word.endswith('"') and len(word) > 1 \
        else word.lower()


def tables_in_scope(statement: str) -> list[tuple[str, str | None]]:
    """(relation, alias) for every relation the statement reads or writes:
    `FROM a x, b JOIN c AS y`, `UPDATE t`, `INSERT INTO t`, `DELETE FROM t`."""
    tokens = _TOKEN.findall(statement)
    out: list[tuple[str, str | None]] = []
    i = 0
    while i < len(tokens):
        up = tokens[i].upper()
        if up in ("FROM", "JOIN", "UPDATE", "INTO", "TABLE", "DESCRIBE"):
            i += 1
            while i < len(tokens):
                tok = tokens[i]
                if tok == "(" or not (tok[0].isalpha() or tok[0] in '_"'):
                    break
                if tok.upper() in KEYWORDS and not tok.startswith('"'):
                    break
                name, alias = _unquote(tok), None
                i += 1
                if i < len(tokens) and tokens[i].upper() == "AS":
                    i += 1
                if i < len(tokens) and tokens[i][0].isalpha() and tokens[i].upper() not in KEYWORDS:
                    alias = _unquote(tokens[i])
                    i += 1
                out.append((name, alias))
                if i < len(tokens) and tokens[i] == "," and up == "FROM":
                    i += 1
                    continue
                break
            continue
        i += 1
    return out


def _resolve(qualifier: str, scope: list[tuple[str, str | None]]) -> str:
    q = _unquote(qualifier)
    for name, alias in scope:
        if alias == q:
            return name
    return q


def _meta_suggestions(before: str) -> set[Suggestion]:
    words = before.split()
    if len(words) <= 1 and not before.endswith((" ", "\t")):
        return {Suggestion("meta_command")}
    cmd = words[0].rstrip("+")
    nargs = len(words) - (0 if before.endswith((" ", "\t")) else 1) - 1  # complete args before the cursor
    if cmd in _RELATION_KINDS and nargs == 0:
        return {Suggestion("relation", kinds=_RELATION_KINDS[cmd])}
    if cmd in ("\\i", "\\o", "\\e", "\\include", "\\out", "\\edit") and nargs == 0:
        return {Suggestion("file")}
    if cmd == "\\pset" and nargs == 1 and words[1] in _PSET_VALUES:
        return {Suggestion("value", values=_PSET_VALUES[words[1]])}
    if cmd in META_VALUES and nargs == 0:
        return {Suggestion("value", values=META_VALUES[cmd])}
    return set()


def suggest(text: str, cursor: int | None = None) -> set[Suggestion]:
    """The kinds of names that fit at `cursor` (default: the end of `text`)."""
    cursor = len(text) if cursor is None else cursor
    before_all = text[:cursor]
    sql, command = split_meta(before_all)
    if command is not None:
        return _meta_suggestions(before_all[len(sql):].lstrip())
    # the statement the cursor is in
    start = 0
    for _stmt, off in split_statements(before_all):
        start = off
    if before_all.rstrip().endswith(";"):
        start = cursor
    before = before_all[start:]
    if why_incomplete(before) in ("'", "/*") or (why_incomplete(before) or "").startswith("$") \
            or re.search(r"--[^\n]*$", before):
        return set()
    statement = text[start:]
    end = split_statements(statement)
    statement = statement[: end[0][1] + len(end[0][0])] if end else statement
    scope = tables_in_scope(statement)

    tokens = _TOKEN.findall(before)
    typing = bool(tokens) and bool(re.search(r'[A-Za-z0-9_$."]$', before))
    word = tokens[-1] if typing else ""
    prev = tokens[:-1] if typing else tokens
    if "." in word and not word.startswith('"'):
        qualifier = word.rsplit(".", 1)[0]
        return {Suggestion("column", relations=(_resolve(qualifier, scope),))}

    prev_up = [t.upper() for t in prev]
    last = prev_up[-1] if prev_up else ""
    clause = next((t for t in reversed(prev_up) if t in _CLAUSES), "")

    if not prev_up:
        return {Suggestion("keyword")}
    if last in ("FROM", "JOIN", "DESCRIBE") or (last == "TABLE" and "CREATE" not in prev_up):
        if "DELETE" in prev_up or ("DROP" in prev_up and last == "TABLE"):
            return {Suggestion("relation", kinds=(TABLE,))}
        return {Suggestion("relation")}
    if last in ("INTO", "UPDATE"):
        return {Suggestion("relation", kinds=(TABLE,))}
    if last == "VIEW" and "DROP" in prev_up:
        return {Suggestion("relation", kinds=(MV,) if "MATERIALIZED" in prev_up else ("view",))}
    if last in ("INDEX", "SINK", "SOURCE") and "DROP" in prev_up:
        return {Suggestion("relation", kinds=(last.lower(),))}
    if last == "," and clause == "FROM":
        return {Suggestion("relation")}
    if clause in ("FROM", "JOIN", "UPDATE") and last not in _AFTER_RELATION and last not in (",", "("):
        return {Suggestion("keyword")}  # after `FROM t` (or its alias): WHERE, JOIN, ...
    if "CREATE" in prev_up and "TABLE" in prev_up and "AS" not in prev_up and "(" in prev:
        if last in ("(", ","):
            return set()  # a new column name
        return {Suggestion("datatype"), Suggestion("keyword")}
    if clause == "INTO" and "(" in prev and last in ("(", ","):
        return {Suggestion("column", relations=tuple(n for n, _ in scope[:1]))}
    if clause in ("SELECT", "WHERE", "ON", "BY", "HAVING", "SET", "RETURNING", "USING") or last in (
            "(", ",", "AND", "OR", "NOT", "=", "<", ">", "+", "-", "*", "/"):
        return {Suggestion("column", relations=tuple(n for n, _ in scope)), Suggestion("function"),
                Suggestion("keyword")}
    return {Suggestion("keyword")}
