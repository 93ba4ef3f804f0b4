"""Statement shapes: a statement parsed once is reused for the same text with other literals.

Drivers and scripts send the same statement again and again with other values (`executemany`
of `UPDATE t SET v = v + 1 WHERE id = 7`, `DELETE FROM t WHERE id = 8`, point SELECTs); sqlglot's
tokenizer and parser took a third of such a statement's time. Here a statement's literals
(plain numbers and simple quoted strings) are cut out of its text, leaving its shape; the
first statements of a shape are parsed as always, and also with a marker in place of each
literal, and the marker tree with the literals put back must be the statement's own tree
(`TRUST` times): then later statements of the shape copy the marker tree and put their
literals in, without the parser. Whatever the parser might read differently for other
literal values stays with the parser: strings with anything but plain characters or with
words that change how a statement is read (INTERVAL's units, MAP, ...), dollar quotes,
escapes, parameters, and shapes whose markers do not come out as literals of their own.
"""
from __future__ import annotations

import re
import threading
from collections import OrderedDict
from typing import Callable

from sqlglot import exp

HEADS = frozenset(("select", "update", "delete"))
MAX_TEXT = 512  # longer statements (IN lists of thousands) have a path of their own
MAX_LITERALS = 32
TRUST = 2  # statements of a shape parsed both ways, and equal, before the shape is used
MAX_SHAPES = 512

_TOKEN = re.compile(r"""
    (?P<ident>"(?:[^"]|"")*")
  | (?P<str>(?<![\w$'])'(?:[^'\\]|'')*'(?![\w']))
  | (?P<num>(?<![\w.$])\d+(?:\.\d+)?(?:[eE][-+]?\d+)?(?![\w.]))
  | (?P<stop>[$\\']|--|/\*)
""", re.X)
_PLAIN_STRING = re.compile(r"[\w .:,/@+-]*")
# words of a string that some rewrite before the parser looks for in the whole text, or
# that a typed literal's parse reads (INTERVAL '1 day'): such a statement goes to the parser
_READ_WORDS = re.compile(r"interval|aggregate|changelog|struct|map|append|conflict|day|hour|minute|second|"
                         r"month|year|week|epoch|inf|nan", re.I)
_NUMBER_MARK = "918273645{:03d}"
_STRING_MARK = "rw\x1fmark{:03d}"


class _Shape:
    __slots__ = ("tree", "marks", "spans", "seen")

    def __init__(self, tree: exp.Expression, marks: list[str], spans: list[tuple[int, int, int]]):
        self.tree = tree  # the statement parsed with markers for its literals
        self.marks = marks
        self.spans = spans  # the markers' (start, end, line) in the text parsed
        self.seen = 0  # statements parsed both ways and found equal


_SHAPES: OrderedDict[str, _Shape | None] = OrderedDict()
_LOCK = threading.Lock()  # sessions of `rw serve` parse in threads of their own


def clear() -> None:
    """Forget every shape."""
    with _LOCK:
        _SHAPES.clear()


def shapes() -> list[tuple[str, int | None]]:
    """(shape, statements of it parsed both ways and found equal; None: left to the parser),
    oldest first."""
    with _LOCK:
        return [(k, None if s is None else s.seen) for k, s in _SHAPES.items()]


def _literals(sql: str) -> tuple[str, list[tuple[str, str, int, int]]] | None:
    """(the statement's shape: its text with each literal replaced by its kind, and the
    literals: (kind, value, start, end in the text)); None when it holds something that
    keeps it with the parser."""
    parts, lits, at = [], [], 0
    for m in _TOKEN.finditer(sql):
        kind = m.lastgroup
        if kind == "stop":
            return None
        if kind == "ident":
            continue
        text = m.group()
        if kind == "str":
            text = text[1:-1].replace("''", "'")
            if not _PLAIN_STRING.fullmatch(text) or _READ_WORDS.search(text):
                return None
        parts.append(sql[at:m.start()])
        parts.append("\x00s" if kind == "str" else "\x00n")
        lits.append((kind, text, m.start(), m.end()))
        at = m.end()
        if len(lits) > MAX_LITERALS:
            return None
    parts.append(sql[at:])
    return "".join(parts), lits


def _marked(sql: str, lits: list) -> tuple[str, list[str], list[tuple[int, int, int]]]:
    """The statement with a distinct marker for each literal, the markers, and where each
    marker lies in that text: (start, end, line)."""
    marks = [(_STRING_MARK if lit[0] == "str" else _NUMBER_MARK).format(i) for i, lit in enumerate(lits)]
    pieces, spans, at, size = [], [], 0, 0
    for (kind, _, start, end), mark in zip(lits, marks):
        pieces.append(sql[at:start])
        size += start - at
        text = f"'{mark}'" if kind == "str" else mark
        spans.append((size, size + len(text), sql.count("\n", 0, start)))
        pieces.append(text)
        size += len(text)
        at = end
    pieces.append(sql[at:])
    return "".join(pieces), marks, spans


def _fill(shape: _Shape, lits: list) -> exp.Expression | None:
    """A copy of the shape's tree with the literals in place of its markers, and the nodes'
    positions in the text moved to where they are in this statement's; None when some
    marker is not one literal of its kind."""
    tree = shape.tree.copy()
    where = {m: i for i, m in enumerate(shape.marks)}
    filled = 0
    for node in tree.find_all(exp.Literal):
        i = where.get(node.this)
        if i is None:
            continue
        kind, value, _, _ = lits[i]
        if node.is_string != (kind == "str"):
            return None
        node.set("this", value)
        filled += 1
    if filled != len(lits):
        return None
    if any(e - s != end - start for (s, e, _), (_, _, start, end) in zip(shape.spans, lits)):
        _move_positions(tree, shape.spans, lits)
    return tree


def _move_positions(tree: exp.Expression, spans: list[tuple[int, int, int]], lits: list) -> None:
    """Node positions (`start`, `end`: offsets in the text; `col`: on its line) from the
    marker text to this statement's, whose literals are longer or shorter than the markers
    (neither holds a line break: lines stay as they are)."""
    deltas = [(stop - start) - (e - s) for (s, e, _), (_, _, start, stop) in zip(spans, lits)]

    def moved(pos: int, last: bool) -> int:
        shift = 0
        for (s, e, _), (_, _, start, stop), d in zip(spans, lits, deltas):
            if pos < s:
                break
            if pos < e:  # within a literal: its first (last) character
                return stop - 1 if last else start
            shift += d
        return pos + shift
    for node in tree.walk():
        meta = node.meta
        if "start" in meta:
            meta["start"] = moved(meta["start"], False)
        if "end" in meta:
            end = meta["end"]
            meta["end"] = moved(end, True)
            if "col" in meta and "line" in meta:  # as the end moved, less what lines above moved it
                above = sum(d for (s, e, ln), d in zip(spans, deltas) if e <= end and ln < meta["line"] - 1)
                meta["col"] += meta["end"] - end - above


def parse(sql: str, head: str, parse_statement: Callable[[str], exp.Expression]) -> exp.Expression:
    """`sql` parsed: from its shape's tree once the shape is trusted, else by
    `parse_statement` (whose errors are the statement's)."""
    if head not in HEADS or len(sql) > MAX_TEXT:
        return parse_statement(sql)
    found = _literals(sql)
    if found is None or not found[1]:
        return parse_statement(sql)
    key, lits = found
    with _LOCK:
        shape = _SHAPES.get(key, False)
        if shape:
            _SHAPES.move_to_end(key)
    if shape is None:
        return parse_statement(sql)
    if shape is not False and shape.seen >= TRUST:
        tree = _fill(shape, lits)
        if tree is not None:
            return tree
    tree = parse_statement(sql)  # (raises for a statement the parser refuses: no shape kept)
    if shape is False:
        shape = _new_shape(sql, lits, parse_statement)
    if shape is not None:
        again = _fill(shape, lits)
        if again is not None and again == tree and _same_meta(again, tree):
            shape.seen += 1
        else:
            shape = None  # the parser reads this shape's literals by their values
    with _LOCK:
        _SHAPES[key] = shape
        if len(_SHAPES) > MAX_SHAPES:
            _SHAPES.popitem(last=False)
    return tree


def _new_shape(sql: str, lits: list[tuple[str, str]], parse_statement: Callable[[str], exp.Expression]) -> _Shape | None:
    text, marks, spans = _marked(sql, lits)
    try:
        tree = parse_statement(text)
    except Exception:  # noqa: BLE001 - a marker the parser refuses: this shape stays with it
        return None
    return _Shape(tree, marks, spans)


def _same_meta(a: exp.Expression, b: exp.Expression) -> bool:
    """The meta that binding reads (written function names, folded identifiers, ...) is the
    same in both trees, positions in the text aside."""
    ignore = {"line", "col", "start", "end"}
    for x, y in zip(a.walk(), b.walk()):
        mx = {k: v for k, v in x.meta.items() if k not in ignore}
        my = {k: v for k, v in y.meta.items() if k not in ignore}
        if mx != my:
            return False
    return True
