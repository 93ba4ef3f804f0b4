"""SQL/JSON path language (PostgreSQL's `jsonpath`): parsed once per path text, evaluated over
jsonb values decoded as Python values (dict, list, str, int / Decimal / float, bool, None for
JSON null).

What the jsonb_path_* functions and the `@?` / `@@` operators run. The semantics are
PostgreSQL's: `lax` mode (the default) unwraps arrays where an accessor or filter wants their
elements, wraps a non-array where an array accessor wants one, and turns structural errors
into empty results; `strict` mode raises them. A predicate is true, false or unknown (None);
a comparison is true when any pair of items compares true.
"""
from __future__ import annotations

import functools
import math
import re
from decimal import Decimal, InvalidOperation

__all__ = ["JsonPathError", "compile_path", "JsonPath"]


class JsonPathError(ValueError):
    """A jsonpath that does not parse, or an error its evaluation raises (strict mode,
    a missing variable, arithmetic on a non-number)."""


class _Fatal(JsonPathError):
    """An error no predicate turns into unknown (a variable the vars lack)."""


# -- tokens -----------------------------------------------------------------------------------------
_TOKEN = re.compile(r"""
    (?P<ws>\s+)
  | (?P<num>(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)
  | (?P<str>"(?:[^"\\]|\\.)*")
  | (?P<var>\$(?:[A-Za-z_][A-Za-z0-9_]*|"(?:[^"\\]|\\.)*"))
  | (?P<op>\*\*|==|!=|<>|<=|>=|&&|\|\||[$@.\[\](),*?<>!+\-/%{}])
  | (?P<word>[A-Za-z_][A-Za-z0-9_]*)
""", re.VERBOSE)

_ESCAPES = {"b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v", '"': '"', "\\": "\\", "/": "/"}


def _unquote(text: str) -> str:
    out, i = [], 1
    while i < len(text) - 1:
        c = text[i]
        if c == "\\":
            nxt = text[i + 1]
            if nxt == "u":
                out.append(chr(int(text[i + 2:i + 6], 16)))
                i += 6
                continue
            if nxt == "x":
                out.append(chr(int(text[i + 2:i + 4], 16)))
                i += 4
                continue
            out.append(_ESCAPES.get(nxt, nxt))
            i += 2
            continue
        out.append(c)
        i += 1
    return "".join(out)


def _tokens(path: str) -> list[tuple[str, str]]:
    out, i = [], 0
    while i < len(path):
        m = _TOKEN.match(path, i)
        if m is None:
            raise JsonPathError(f'syntax error at or near "{path[i]}" of jsonpath input')
        kind = m.lastgroup
        if kind != "ws":
            out.append((kind, m.group()))
        i = m.end()
    out.append(("end", ""))
    return out


# -- parsing ----------------------------------------------------------------------------------------
_COMPARISONS = {"==": "==", "!=": "!=", "<>": "!=", "<": "<", "<=": "<=", ">": ">", ">=": ">="}
_METHODS = {"type", "size", "double", "ceiling", "floor", "abs", "keyvalue", "number", "integer", "bigint",
            "boolean", "string", "decimal", "datetime", "date", "time", "time_tz", "timestamp", "timestamp_tz"}


class _Parser:
    def __init__(self, path: str):
        self.path = path
        self.toks = _tokens(path)
        self.i = 0

    def peek(self, k: int = 0) -> tuple[str, str]:
        return self.toks[min(self.i + k, len(self.toks) - 1)]

    def take(self) -> tuple[str, str]:
        t = self.toks[self.i]
        self.i += 1
        return t

    def at(self, value: str) -> bool:
        """The next token is the operator or (any case) the keyword `value`."""
        kind, text = self.peek()
        if kind == "word":
            return text.lower() == value
        return kind == "op" and text == value

    def eat(self, value: str) -> bool:
        if self.at(value):
            self.i += 1
            return True
        return False

    def expect(self, value: str) -> None:
        if not self.eat(value):
            self.fail()

    def fail(self):
        kind, text = self.peek()
        where = "end of jsonpath input" if kind == "end" else f'"{text}" of jsonpath input'
        raise JsonPathError(f"syntax error at or near {where}" if kind != "end" else "syntax error at end of jsonpath input")

    def parse(self) -> tuple[bool, tuple]:
        strict = False
        if self.at("strict") or self.at("lax"):
            strict = self.take()[1].lower() == "strict"
        node = self.or_()
        if self.peek()[0] != "end":
            self.fail()
        return strict, node

    # predicates (booleans) and expressions share one precedence ladder, checked at the end
    def or_(self) -> tuple:
        node = self.and_()
        while self.eat("||"):
            node = ("or", node, self.and_())
        return node

    def and_(self) -> tuple:
        node = self.not_()
        while self.eat("&&"):
            node = ("and", node, self.not_())
        return node

    def not_(self) -> tuple:
        if self.eat("!"):
            self.expect("(")
            inner = self.or_()
            self.expect(")")
            return ("not", inner)
        return self.comparison()

    def comparison(self) -> tuple:
        if self.at("exists") and self.peek(1)[1] == "(":
            self.take()
            self.expect("(")
            inner = self.or_()
            self.expect(")")
            return ("exists", inner)
        left = self.additive()
        text = self.peek()[1]
        if self.peek()[0] == "op" and text in _COMPARISONS:
            self.take()
            return ("cmp", _COMPARISONS[text], left, self.additive())
        if self.eat("like_regex"):
            kind, pattern = self.take()
            if kind != "str":
                self.i -= 1
                self.fail()
            flags = ""
            if self.eat("flag"):
                kind, flag_text = self.take()
                if kind != "str":
                    self.i -= 1
                    self.fail()
                flags = _unquote(flag_text)
            return ("like_regex", left, _regex(_unquote(pattern), flags))
        if self.at("starts") and self.peek(1)[1].lower() == "with":
            self.i += 2
            return ("starts_with", left, self.primary())
        if self.at("is") and self.peek(1)[1].lower() == "unknown":
            self.i += 2
            return ("is_unknown", left)
        return left

    def additive(self) -> tuple:
        node = self.multiplicative()
        while self.peek()[0] == "op" and self.peek()[1] in ("+", "-"):
            op = self.take()[1]
            node = ("arith", op, node, self.multiplicative())
        return node

    def multiplicative(self) -> tuple:
        node = self.unary()
        while self.peek()[0] == "op" and self.peek()[1] in ("*", "/", "%"):
            op = self.take()[1]
            node = ("arith", op, node, self.unary())
        return node

    def unary(self) -> tuple:
        if self.peek()[0] == "op" and self.peek()[1] in ("+", "-"):
            op = self.take()[1]
            return ("unary", op, self.unary())
        return self.accessors(self.primary())

    def primary(self) -> tuple:
        kind, text = self.take()
        if kind == "num":
            return ("lit", _number(text))
        if kind == "str":
            return ("lit", _unquote(text))
        if kind == "var":
            name = text[1:]
            return ("var", _unquote(name) if name.startswith('"') else name)
        if text == "$":
            return ("root",)
        if text == "@":
            return ("current",)
        if text == "(":
            inner = self.or_()
            self.expect(")")
            return inner
        if kind == "word":
            low = text.lower()
            if low in ("true", "false"):
                return ("lit", low == "true")
            if low == "null":
                return ("lit", None)
            if low == "last":
                return ("last",)
        self.i -= 1
        self.fail()

    def accessors(self, node: tuple) -> tuple:
        while True:
            if self.eat("."):
                node = self.dot(node)
            elif self.eat("["):
                if self.eat("*"):
                    self.expect("]")
                    node = ("elem_wild", node)
                    continue
                ranges = []
                while True:
                    lo = self.additive()
                    hi = self.additive() if self.eat("to") else None
                    ranges.append((lo, hi))
                    if self.eat("]"):
                        break
                    self.expect(",")
                node = ("subscript", node, ranges)
            elif self.eat("?"):
                self.expect("(")
                pred = self.or_()
                self.expect(")")
                node = ("filter", node, pred)
            else:
                return node

    def dot(self, node: tuple) -> tuple:
        kind, text = self.peek()
        if text == "*" and kind == "op":
            self.take()
            return ("member_wild", node)
        if text == "**" and kind == "op":
            self.take()
            lo, hi = 0, None
            if self.eat("{"):
                lo = self.level()
                hi = self.level() if self.eat("to") else lo
                self.expect("}")
            return ("any", node, lo, hi)
        if kind == "str":
            self.take()
            return ("member", node, _unquote(text))
        if kind == "word":
            self.take()
            if self.peek()[1] == "(" and text.lower() in _METHODS:
                self.take()
                args = []
                while not self.eat(")"):
                    args.append(self.additive())
                    self.eat(",")
                return ("method", node, text.lower(), args)
            return ("member", node, text)
        if kind == "var":  # `.$x` is no accessor
            self.fail()
        self.fail()

    def level(self) -> int | None:
        kind, text = self.take()
        if kind == "num" and text.isdigit():
            return int(text)
        if text.lower() == "last":
            return None
        self.i -= 1
        self.fail()


def _number(text: str):
    if re.fullmatch(r"\d+", text):
        return int(text)
    return Decimal(text)


def _regex(pattern: str, flags: str) -> re.Pattern:
    opts = 0
    for f in flags:
        if f == "i":
            opts |= re.IGNORECASE
        elif f == "s":
            opts |= re.DOTALL
        elif f == "m":
            opts |= re.MULTILINE
        elif f == "x":
            opts |= re.VERBOSE
        elif f == "q":
            pattern = re.escape(pattern)
        else:
            raise JsonPathError(f'invalid input syntax for type jsonpath: unrecognized flag character "{f}" in LIKE_REGEX predicate')
    try:
        return re.compile(pattern, opts)
    except re.error as e:
        raise JsonPathError(f"invalid regular expression: {e}") from None


# -- evaluation -------------------------------------------------------------------------------------
def _type_name(v) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, (int, float, Decimal)):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    return "object"


def _is_number(v) -> bool:
    return isinstance(v, (int, float, Decimal)) and not isinstance(v, bool)


class _Eval:
    def __init__(self, root, variables: dict, strict: bool):
        self.root = root
        self.vars = variables
        self.strict = strict

    def fail(self, message: str):
        raise JsonPathError(message)

    def unwrap(self, items: list) -> list:
        """Lax mode: arrays give their elements."""
        if self.strict:
            return items
        out = []
        for v in items:
            out.extend(v) if isinstance(v, list) else out.append(v)
        return out

    def run(self, node: tuple, current, last: int | None = None) -> list:
        kind = node[0]
        if kind == "root":
            return [self.root]
        if kind == "current":
            return [current]
        if kind == "lit":
            return [node[1]]
        if kind == "var":
            if node[1] not in self.vars:
                raise _Fatal(f'could not find jsonpath variable "{node[1]}"')
            return [self.vars[node[1]]]
        if kind == "last":
            if last is None:
                self.fail("LAST is allowed only in array subscripts")
            return [last]
        if kind == "member":
            out = []
            for v in self.unwrap(self.run(node[1], current, last)):
                if isinstance(v, dict):
                    if node[2] in v:
                        out.append(v[node[2]])
                    elif self.strict:
                        self.fail(f'JSON object does not contain key "{node[2]}"')
                elif self.strict:
                    self.fail("jsonpath member accessor can only be applied to an object")
            return out
        if kind == "member_wild":
            out = []
            for v in self.unwrap(self.run(node[1], current, last)):
                if isinstance(v, dict):
                    out.extend(v.values())
                elif self.strict:
                    self.fail("jsonpath wildcard member accessor can only be applied to an object")
            return out
        if kind == "elem_wild":
            out = []
            for v in self.run(node[1], current, last):
                if isinstance(v, list):
                    out.extend(v)
                elif self.strict:
                    self.fail("jsonpath wildcard array accessor can only be applied to an array")
                else:
                    out.append(v)
            return out
        if kind == "subscript":
            return self.subscript(node, current, last)
        if kind == "any":
            out = []
            for v in self.run(node[1], current, last):
                self.descend(v, 0, node[2], node[3], out)
            return out
        if kind == "filter":
            out = []
            for v in self.unwrap(self.run(node[1], current, last)):
                if self.predicate(node[2], v, last) is True:
                    out.append(v)
            return out
        if kind == "method":
            return self.method(node, current, last)
        if kind == "arith":
            return [self.arith(node, current, last)]
        if kind == "unary":
            out = []
            for v in self.unwrap(self.run(node[2], current, last)):
                if not _is_number(v):
                    self.fail(f"operand of unary jsonpath operator {node[1]} is not a numeric value")
                out.append(-v if node[1] == "-" else v)
            return out
        # a predicate used as a value: its truth (unknown: null)
        return [self.predicate(node, current, last)]

    def descend(self, v, depth: int, lo: int, hi: int | None, out: list) -> None:
        if depth >= lo and (hi is None or depth <= hi):
            out.append(v)
        if hi is not None and depth >= hi:
            return
        children = v.values() if isinstance(v, dict) else v if isinstance(v, list) else ()
        for c in children:
            self.descend(c, depth + 1, lo, hi, out)

    def subscript(self, node: tuple, current, last) -> list:
        out = []
        for v in self.run(node[1], current, last):
            if not isinstance(v, list):
                if self.strict:
                    self.fail("jsonpath array accessor can only be applied to an array")
                v = [v]
            n_last = len(v) - 1
            for lo_node, hi_node in node[2]:
                lo = self.index(lo_node, current, n_last)
                hi = self.index(hi_node, current, n_last) if hi_node is not None else lo
                if self.strict and (lo < 0 or hi >= len(v) or lo > hi):
                    self.fail("jsonpath array subscript is out of bounds")
                out.extend(v[i] for i in range(max(lo, 0), min(hi, n_last) + 1))
        return out

    def index(self, node: tuple, current, last: int) -> int:
        items = self.run(node, current, last)
        if len(items) != 1 or not _is_number(items[0]):
            self.fail("jsonpath array subscript is not a single numeric value")
        try:
            return int(items[0])
        except (OverflowError, ValueError):
            self.fail("jsonpath array subscript is out of integer range")

    def method(self, node: tuple, current, last) -> list:
        name = node[2]
        items = self.run(node[1], current, last)
        if name == "type":
            return [_type_name(v) for v in items]
        if name == "size":
            out = []
            for v in items:
                if isinstance(v, list):
                    out.append(len(v))
                elif self.strict:
                    self.fail("jsonpath item method .size() can only be applied to an array")
                else:
                    out.append(1)
            return out
        out = []
        for v in self.unwrap(items):
            out.extend(self.item_method(name, v))
        return out

    def item_method(self, name: str, v) -> list:
        if name == "keyvalue":
            if not isinstance(v, dict):
                self.fail("jsonpath item method .keyvalue() can only be applied to an object")
            return [{"key": k, "value": x, "id": 0} for k, x in v.items()]
        if name in ("abs", "floor", "ceiling"):
            if not _is_number(v):
                self.fail(f"jsonpath item method .{name}() can only be applied to a numeric value")
            if name == "abs":
                return [abs(v)]
            f = math.floor if name == "floor" else math.ceil
            return [v if isinstance(v, int) else (f(v) if isinstance(v, float) else Decimal(f(v)))]
        if name in ("double", "number", "decimal"):
            if _is_number(v):
                return [float(v) if name == "double" else v]
            if isinstance(v, str):
                try:
                    d = Decimal(v.strip())
                except InvalidOperation:
                    self.fail(f'argument "{v}" of jsonpath item method .{name}() is invalid for type double precision')
                if not d.is_finite() and name != "double":
                    self.fail(f"NaN or Infinity is not allowed for jsonpath item method .{name}()")
                return [float(d) if name == "double" else d]
            self.fail(f"jsonpath item method .{name}() can only be applied to a string or numeric value")
        if name in ("integer", "bigint"):
            if _is_number(v) or isinstance(v, str):
                try:
                    return [int(Decimal(str(v)).to_integral_value())]
                except InvalidOperation:
                    pass
            self.fail(f"jsonpath item method .{name}() can only be applied to a string or numeric value")
        if name == "boolean":
            if isinstance(v, bool):
                return [v]
            if isinstance(v, int):
                return [v != 0]
            if isinstance(v, str) and v.lower() in ("t", "true", "yes", "y", "on", "1", "f", "false", "no", "n", "off", "0"):
                return [v.lower() in ("t", "true", "yes", "y", "on", "1")]
            self.fail("jsonpath item method .boolean() can only be applied to a boolean, string, or numeric value")
        if name == "string":
            if isinstance(v, (dict, list)):
                self.fail("jsonpath item method .string() can only be applied to a boolean, string, numeric, "
                          "or datetime value")
            if isinstance(v, bool):
                return ["true" if v else "false"]
            from rw_cli.common.pg_json import jsonb_text

            return [v if isinstance(v, str) else jsonb_text(v)]
        raise JsonPathError(f"jsonpath item method .{name}() is not supported")

    def arith(self, node: tuple, current, last):
        op = node[1]
        left = self.unwrap(self.run(node[2], current, last))
        right = self.unwrap(self.run(node[3], current, last))
        if len(left) != 1 or not _is_number(left[0]):
            self.fail(f"left operand of jsonpath operator {op} is not a single numeric value")
        if len(right) != 1 or not _is_number(right[0]):
            self.fail(f"right operand of jsonpath operator {op} is not a single numeric value")
        a, b = left[0], right[0]
        if isinstance(a, float) or isinstance(b, float):
            a, b = float(a), float(b)
        elif isinstance(a, Decimal) or isinstance(b, Decimal):
            a, b = Decimal(a), Decimal(b)
        if op in ("/", "%") and b == 0:
            self.fail("division by zero")
        if op == "+":
            return a + b
        if op == "-":
            return a - b
        if op == "*":
            return a * b
        if op == "/":
            return a / b if not isinstance(a, int) else Decimal(a) / Decimal(b)
        if isinstance(a, float):
            return math.fmod(a, b)
        r = abs(a) % abs(b)  # the dividend's sign, as numeric's % (Decimal's % already is)
        return (-r if a < 0 else r) if isinstance(a, int) else a % b

    def predicate(self, node: tuple, current, last):
        """True, False or None (unknown)."""
        kind = node[0]
        if kind in ("and", "or"):
            decisive = kind == "or"  # the value either side settles it with: true for ||, false for &&
            a = self.predicate(node[1], current, last)
            if a is decisive:
                return decisive
            b = self.predicate(node[2], current, last)
            if b is decisive:
                return decisive
            return None if a is None or b is None else not decisive
        if kind == "not":
            a = self.predicate(node[1], current, last)
            return None if a is None else not a
        if kind == "is_unknown":
            return self.predicate(node[1], current, last) is None
        if kind == "exists":
            try:
                return bool(self.run(node[1], current, last))
            except _Fatal:
                raise
            except JsonPathError:
                return None
        if kind == "cmp":
            return self.compare(node, current, last)
        if kind in ("like_regex", "starts_with"):
            try:
                items = self.unwrap(self.run(node[1], current, last))
                prefixes = self.run(node[2], current, last) if kind == "starts_with" else None
            except _Fatal:
                raise
            except JsonPathError:
                return None
            found, unknown = False, False
            for v in items:
                if not isinstance(v, str):
                    unknown = True
                elif kind == "like_regex":
                    found = found or node[2].search(v) is not None
                else:
                    if len(prefixes) != 1 or not isinstance(prefixes[0], str):
                        return None
                    found = found or v.startswith(prefixes[0])
                if found and not self.strict:
                    return True
            return None if unknown and (self.strict or not found) else found
        # an expression where a predicate is due: PostgreSQL reads only booleans there
        try:
            items = self.run(node, current, last)
        except _Fatal:
            raise
        except JsonPathError:
            return None
        if len(items) == 1 and isinstance(items[0], bool):
            return items[0]
        return None

    def compare(self, node: tuple, current, last):
        try:
            left = self.unwrap(self.run(node[2], current, last))
            right = self.unwrap(self.run(node[3], current, last))
        except _Fatal:
            raise
        except JsonPathError:
            return None
        op = node[1]
        found, unknown = False, False
        for a in left:
            for b in right:
                r = _compare_items(op, a, b)
                if r is None:
                    unknown = True
                    if self.strict:
                        return None
                elif r:
                    found = True
                    if not self.strict:
                        return True
        if unknown:
            return None
        return found


def _compare_items(op: str, a, b):
    if a is None or b is None:
        if a is None and b is None:
            c = 0
        else:
            return op == "!="
    elif _is_number(a) and _is_number(b):
        if isinstance(a, float) or isinstance(b, float):
            a, b = float(a), float(b)
        c = (a > b) - (a < b)
    elif isinstance(a, bool) and isinstance(b, bool):
        c = (a > b) - (a < b)
    elif isinstance(a, str) and isinstance(b, str):
        c = (a > b) - (a < b)
    else:
        return None  # different types, objects and arrays: not comparable
    return {"==": c == 0, "!=": c != 0, "<": c < 0, "<=": c <= 0, ">": c > 0, ">=": c >= 0}[op]


class JsonPath:
    """A parsed path: `query(value, vars)` gives its items."""

    def __init__(self, text: str):
        self.text = text
        self.strict, self.root = _Parser(text).parse()

    def query(self, value, variables: dict | None = None) -> list:
        return _Eval(value, variables or {}, self.strict).run(self.root, value)

    def match(self, value, variables: dict | None = None):
        """jsonb_path_match: the path's single boolean (None: unknown or null)."""
        items = self.query(value, variables)
        if len(items) == 1 and (items[0] is None or isinstance(items[0], bool)):
            return items[0]
        raise JsonPathError("single boolean result is expected")


@functools.lru_cache(maxsize=256)
def compile_path(text: str) -> JsonPath:
    return JsonPath(text)
