"""`INSERT INTO t [(cols)] VALUES (...), (...)` whose cells are all plain literals, read
without the SQL parser.

Scripts, dumps and drivers load tables with thousands of such rows per statement (and
`executemany` sends one row per statement, thousands of times). sqlglot's tokenizer and parser
walk every cell in Python, and the VALUES list then went through binding, transpiling and a
DuckDB query: 10,000 rows took seconds. Here one regular expression reads a row at a time, the
cells are turned into Arrow columns by Arrow kernels, and only the statement's head (`INSERT
INTO t (cols) VALUES`) is parsed by sqlglot, so that the target is exactly what the parser makes
of it. Anything else in a cell (DEFAULT, an expression, a cast of anything but a quoted literal
or NULL, E'' strings, a placeholder) or after the rows (RETURNING, ON CONFLICT) leaves the
statement to the parser: `parse` returns None.

Each column comes out with the kind of its literals (PostgreSQL types a VALUES cell of INSERT by
its target column, so the handler converts them): 'str' (the strings' text), 'int' (int64),
'num' (numbers with a fraction or exponent, or beyond int64, as their text), 'bool', 'null', or
'cast:<type>' (parameters bound with their type, `CAST('5' AS bigint)`, as their text).
A column that mixes kinds (numbers and strings) is the parser's too.
"""
from __future__ import annotations

import re

import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp

_STRING = r"'(?:[^']|'')*'"
_NUMBER = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
_WORD = r"(?i:null|true|false)"
# a parameter a driver bound with its type (`CAST('5' AS bigint)`: rw serve, Session.execute)
_TYPED = rf"(?i:cast\(\s*(?:{_STRING}|null)\s+as\s+[a-z][a-z ]*?\s*\))"
_LITERAL = rf"(?:{_STRING}|{_NUMBER}|{_WORD}|{_TYPED})"
_CELL = rf"(?:{_LITERAL}|\(\s*{_LITERAL}\s*\))"  # (a parameter is substituted in parentheses)
# a cell ends at `,` or `)`: `'a' 'b'` (a continued string), `1e` or `nullx` do not match
_CELL_END = r"(?=\s*[,)])"
_HEAD = re.compile(r"\s*insert\s+into\s+([^()';]+?(?:\s*\([^()';]*\))?)\s*values\s*(?=\()", re.I)
_FIRST_CELLS = re.compile(rf"\s*({_CELL}){_CELL_END}\s*,?")
_END = re.compile(r"\s*;?\s*\Z")
_INT = r"^[-+]?\d+$"
_INT_RE = re.compile(_INT)
_KIND_TYPES = {"str": pa.string(), "int": pa.int64(), "num": pa.string(), "bool": pa.bool_(), "null": pa.null()}
_TYPED_CELL = re.compile(rf"(?is)cast\(\s*({_STRING}|null)\s+as\s+([a-z][a-z ]*?)\s*\)")
# a typed cell's type -> rw's name of it (others: the parser's way)
_TYPE_NAMES = {"smallint": "smallint", "integer": "integer", "int": "integer", "bigint": "bigint", "real": "real",
               "double precision": "double precision", "numeric": "numeric", "boolean": "boolean",
               "character varying": "character varying", "varchar": "character varying",
               "text": "character varying", "date": "date", "time": "time without time zone",
               "time without time zone": "time without time zone", "timestamp": "timestamp without time zone",
               "timestamp without time zone": "timestamp without time zone",
               "timestamptz": "timestamp with time zone", "timestamp with time zone": "timestamp with time zone",
               "interval": "interval", "bytea": "bytea", "jsonb": "jsonb"}
SMALL = 8  # cells per column read by Python, not Arrow's kernels
_HEADS: dict[str, exp.Insert | None] = {}
_ROW_PATTERNS: dict[int, tuple[re.Pattern, re.Pattern]] = {}


class Columns:
    """The rows' columns, [(kind, Arrow array)]: shared, never copied, by copies of the tree
    (sqlglot copies a node's meta deeply)."""

    __slots__ = ("columns", "rows")

    def __init__(self, columns: list[tuple[str, pa.Array]], rows: int):
        self.columns = columns
        self.rows = rows

    def __deepcopy__(self, memo) -> "Columns":
        return self


class LiteralRows(exp.Expression):
    """An INSERT's VALUES list of literal cells, read into columns (`meta["columns"]`); its
    statement's text and offset (`meta["text"]`, `meta["offset"]`) for the parser, when the
    handler leaves it the statement."""

    arg_types: dict = {}


def parse(sql: str, parse_head) -> exp.Insert | None:
    """The INSERT with its rows read (`parse_head(text)`: the parser, for the statement's head),
    or None when the statement is not one of plain literal rows."""
    m = _HEAD.match(sql)
    if m is None:
        return None
    start = m.end()
    arity = _arity(sql, start)
    if not arity:
        return None
    rows = _rows(sql, start, arity)
    if rows is None:
        return None
    columns = []
    for cells in zip(*rows):
        col = _small_column(cells) if len(cells) <= SMALL else _column(pa.array(cells, pa.string()))
        if col is None:
            return None
        columns.append(col)
    tree = _head(f"INSERT INTO {m.group(1)} VALUES ({', '.join(['NULL'] * arity)})", parse_head)
    if tree is None:
        return None
    node = LiteralRows()
    node.meta["columns"] = Columns(columns, len(rows))
    tree.set("expression", node)
    return tree


def _head(text: str, parse_head) -> exp.Insert | None:
    """The statement's head parsed (a copy: handlers change trees), remembered by its text:
    a driver's `executemany` sends one head thousands of times."""
    tree = _HEADS.get(text)
    if tree is None and text not in _HEADS:
        try:
            tree = parse_head(text)
        except Exception:  # noqa: BLE001 - the parser says what is wrong, with the whole text
            tree = None
        if not isinstance(tree, exp.Insert) or not isinstance(tree.expression, exp.Values):
            tree = None
        if len(_HEADS) >= 256:
            _HEADS.clear()
        _HEADS[text] = tree
    return None if tree is None else tree.copy()


def _arity(sql: str, start: int) -> int:
    """How many cells the first row has (0: it is not a row of literals)."""
    pos, n = start + 1, 0
    while True:
        m = _FIRST_CELLS.match(sql, pos)
        if m is None:
            break
        n, pos = n + 1, m.end()
        if not m.group(0).rstrip().endswith(","):
            break
    return n if re.match(r"\s*\)", sql[pos:pos + 64]) else 0


def _row_patterns(arity: int) -> tuple[re.Pattern, re.Pattern]:
    """A row of `arity` cells, and one after a `,`."""
    got = _ROW_PATTERNS.get(arity)
    if got is None:
        row = r"\(\s*" + r"\s*,\s*".join([rf"({_CELL})"] * arity) + r"\s*\)"
        got = _ROW_PATTERNS[arity] = (re.compile(row), re.compile(r"\s*,\s*" + row))
    return got


def _rows(sql: str, start: int, arity: int) -> list[tuple[str, ...]] | None:
    """Each row's cells as written, or None unless the rows, comma-separated, run to the
    statement's end (an optional `;`)."""
    first, after = _row_patterns(arity)
    m = first.match(sql, start)
    if m is None:
        return None
    rows = [m.groups()]
    pos = m.end()
    for m in after.finditer(sql, pos):
        if m.start() != pos:
            return None
        rows.append(m.groups())
        pos = m.end()
    return rows if _END.match(sql, pos) is not None else None


def _small_column(cells: tuple[str, ...]) -> tuple[str, pa.Array] | None:
    """`_column` of a few cells (a one-row INSERT), by Python: Arrow's kernels cost more
    per call than a few cells do. Typed cells (`CAST('x' AS t)`) are of kind `cast:<t>`, their
    text the value."""
    kinds, values = set(), []
    for c in cells:
        if c[0] == "(":
            c = c[1:-1].strip()
        lower = c.lower()
        typed = _TYPED_CELL.fullmatch(c) if lower.startswith("cast") else None
        if typed is not None:
            name = _TYPE_NAMES.get(" ".join(typed.group(2).lower().split()))
            if name is None:
                return None
            kinds.add("cast:" + name)  # (a typed NULL is NULL of that type: it stays in the kind)
            text = typed.group(1)
            values.append(None if text.lower() == "null" else text[1:-1].replace("''", "'"))
        elif lower == "null":
            values.append(None)
        elif c[0] == "'":
            kinds.add("str")
            values.append(c[1:-1].replace("''", "'"))
        elif lower in ("true", "false"):
            kinds.add("bool")
            values.append(lower == "true")
        elif _INT_RE.match(c) and -(1 << 63) <= int(c) < (1 << 63):
            kinds.add("int")
            values.append(int(c))
        else:
            kinds.add("num")
            values.append(c.lstrip("+"))
    if "num" in kinds and kinds <= {"int", "num"}:  # integers among decimals: numbers, as written
        kinds = {"num"}
        values = [None if v is None else str(v) if isinstance(v, int) else v for v in values]
    if len(kinds) > 1:
        return None
    kind = kinds.pop() if kinds else "null"
    return kind, pa.array(values, _KIND_TYPES.get(kind, pa.string()))


def _column(cells: pa.Array) -> tuple[str, pa.Array] | None:
    """One column's cells as (kind, values); None when it mixes kinds."""
    n = len(cells)
    first = pc.utf8_slice_codeunits(cells, 0, 1)
    if pc.any(pc.is_in(first, pa.array(["c", "C", "("]))).as_py():  # typed cells: rare in long lists
        return _small_column(tuple(cells.to_pylist()))
    quoted = pc.equal(first, "'")
    lower = pc.utf8_lower(cells)
    null = pc.equal(lower, "null")
    nulls = pc.sum(null).as_py() or 0
    mask = null
    if nulls == n:
        return "null", pa.nulls(n)
    strings = pc.sum(quoted).as_py() or 0
    if strings:
        if strings + nulls != n:
            return None
        text = pc.replace_substring(pc.utf8_slice_codeunits(cells, 1, -1), "''", "'")
        return "str", pc.if_else(mask, pa.scalar(None, pa.string()), text)
    true, false = pc.equal(lower, "true"), pc.equal(lower, "false")
    words = (pc.sum(true).as_py() or 0) + (pc.sum(false).as_py() or 0)
    if words:
        if words + nulls != n:
            return None
        return "bool", pc.if_else(mask, pa.scalar(None, pa.bool_()), true)
    numbers = pc.if_else(mask, pa.scalar(None, pa.string()), cells)
    if pc.all(pc.match_substring_regex(numbers, _INT)).as_py() is not False:
        try:
            return "int", pc.cast(pc.utf8_ltrim(numbers, "+"), pa.int64())
        except pa.ArrowInvalid:  # beyond int64: a numeric, as PostgreSQL types it
            pass
    return "num", pc.utf8_ltrim(numbers, "+")
