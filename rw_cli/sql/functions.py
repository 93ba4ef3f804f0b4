"""PostgreSQL / RisingWave functions that DuckDB lacks or spells differently, mapped onto
DuckDB's functions and onto ours (the macros and UDFs of rw_cli.engine.duck_functions).

- `rewrite_function(node)`: called by `rw_cli.sql.transpile` for every node of the
  (type-annotated) PostgreSQL tree; returns a replacement or None.
"""
from __future__ import annotations

import re

from sqlglot import exp

from rw_cli.sql.duckdb_dialect import duckdb_dialect
from rw_cli.common.pg_array import pg_array_brackets
from rw_cli.errors import BindError
from rw_cli.sql import approx_percentile
from rw_cli.sql.dialect import ROWS_ARE_ARRAYS, DatePart, SingleValue
from rw_cli.sql.extract import rewrite_extract
from rw_cli.sql.agg_wrappers import aggregate_result, filter_into
from rw_cli.sql.array_dims import array_dimension_function, check_array_cast
from rw_cli.sql.array_functions import rewrite_array_function
from rw_cli.sql.decorrelate import EMPTY_ARRAY_OK
from rw_cli.sql.jsonb import rewrite_jsonb
from rw_cli.sql import numeric_sql

# -- rewrites -----------------------------------------------------------------------------------

T = exp.DataType.Type
_TEXT = {T.VARCHAR, T.TEXT, T.CHAR, T.NCHAR, T.NVARCHAR}
_BYTES = {T.VARBINARY, T.BINARY, T.BLOB}
_INTS = {T.TINYINT, T.SMALLINT, T.INT, T.BIGINT}
# text a date is read from, as RisingWave reads it (pg_date_in in rw_cli.engine.duck_functions)
_DATE_TEXT = re.compile(r"\s*[0-9]{4}-[0-9]{2}-[0-9]{2}([ T].*)?", re.S)

# the temporal types whose text (a cast, || or concat) is RisingWave's, not DuckDB's: the macro
# or UDF writing it (rw_cli.engine.duck_functions)
_TEMPORAL_OUT = {T.TIMESTAMPTZ: "pg_timestamptz_out", T.TIMESTAMP: "pg_timestamp_out", T.TIME: "pg_time_out",
                 T.INTERVAL: "pg_interval_out"}


def _similar_to_regex(pattern: str, escape: str = "\\") -> str:
    """A SIMILAR TO pattern as a regular expression: `%` and `_` are wildcards, `.` is
    literal, the escape character (a backslash unless ESCAPE names another; none for ESCAPE
    '') makes the next character literal, and before a double quote marks one of the
    substring's bounds (a group, for matching)."""
    out = []
    i = 0
    bounds = 0
    while i < len(pattern):
        c = pattern[i]
        if escape and c == escape and i + 1 < len(pattern):
            nxt = pattern[i + 1]
            if nxt == '"':
                out.append("(" if bounds % 2 == 0 else ")")
                bounds += 1
            else:
                out.append(re.escape(nxt))
            i += 2
            continue
        out.append({"%": ".*", "_": ".", ".": "\\."}.get(c, c))
        i += 1
    if bounds % 2:
        out.append(")")
    return "".join(out)


def _similar_escape(node: exp.Escape) -> exp.Expression | None:
    """`x SIMILAR TO pattern ESCAPE e` with a constant pattern and escape character."""
    similar, escape = node.this, node.expression
    if not (isinstance(similar, exp.SimilarTo) and _is_text_literal(similar.expression) and _is_text_literal(escape)):
        return None
    if len(escape.this) > 1:
        raise BindError("invalid escape string", hint="Escape string must be empty or one character.")
    regex = _similar_to_regex(similar.expression.this, escape.this)
    return _fn("regexp_full_match", similar.this, exp.Literal.string(regex))


_DATE_TRUNC_UNITS = {"microseconds", "milliseconds", "second", "minute", "hour", "day", "week", "month",
                     "quarter", "year", "decade", "century", "millennium"}

def _type(node: exp.Expression):
    t = getattr(node, "type", None)
    return t.this if t is not None else None


def _time_interval(t: exp.Expression) -> exp.Expression:
    """A time of day as the interval since midnight (`time - time` is an interval)."""
    epoch = exp.Cast(this=exp.Literal.string("2000-01-01"), to=exp.DataType.build("TIMESTAMP"))
    return exp.paren(exp.Sub(this=exp.Add(this=exp.Cast(this=exp.Literal.string("2000-01-01"),
                                                         to=exp.DataType.build("DATE")), expression=t.copy()),
                             expression=epoch))


def _is_text_literal(node: exp.Expression) -> bool:
    return isinstance(node, exp.Literal) and node.is_string


def _text_constant(node: exp.Expression) -> exp.Expression:
    """A string literal through parentheses and casts to text (`('x')::varchar`, as a bound
    parameter arrives) as the literal; anything else as it is."""
    inner = node
    while isinstance(inner, exp.Paren) or (isinstance(inner, exp.Cast) and inner.to.is_type(*exp.DataType.TEXT_TYPES)):
        inner = inner.this
    return inner if _is_text_literal(inner) else node


def _fn(name: str, *args: exp.Expression) -> exp.Anonymous:
    return exp.Anonymous(this=name, expressions=list(args))


def _bytea(node: exp.Expression) -> exp.Expression:
    """An argument PostgreSQL would take as bytea: text literals use bytea input syntax."""
    if _is_text_literal(node) or _type(node) in _TEXT:
        return _fn("pg_bytea_in", node)
    return node


def _numeric_literal(node: exp.Literal) -> exp.Expression | None:
    """`1e-6` is numeric in PostgreSQL (DuckDB reads it as a double)."""
    from decimal import Decimal, InvalidOperation

    try:
        d = Decimal(node.this)
    except InvalidOperation:
        return None
    if not d.is_finite():
        return None
    _, digits, exponent = d.as_tuple()
    if exponent < -38 or len(digits) + max(exponent, 0) > 38:
        if d != 0 and not (1e-307 < abs(float(d)) < 1.7e308):
            raise BindError(f'"{node.this}" is out of range for type numeric')
        return exp.Cast(this=exp.Literal.string(node.this), to=exp.DataType.build("DOUBLE"))
    return exp.Literal.number(format(d, "f"))


_JSON_TYPES = {T.JSON, T.JSONB}
_COMPARISONS = (exp.EQ, exp.NEQ, exp.LT, exp.LTE, exp.GT, exp.GTE, exp.NullSafeEQ, exp.NullSafeNEQ)


_NUMBERS = {T.TINYINT, T.SMALLINT, T.INT, T.BIGINT, T.DECIMAL, T.DOUBLE, T.FLOAT}


def _unknown_literal_operand(node: exp.Expression) -> None:
    """`'10' - 1`: a quoted literal next to a number takes the number's type, as in PostgreSQL."""
    for lit, other in ((node.this, node.expression), (node.expression, node.this)):
        if _is_text_literal(lit) and getattr(other, "type", None) is not None and _type(other) in _NUMBERS:
            lit.replace(exp.Cast(this=lit.copy(), to=other.type.copy()))
            return


def _widen_real(node: exp.Expression) -> None:
    """PostgreSQL computes real op (int | numeric | double) in double precision."""
    lt, rt = _type(node.this), _type(node.expression)
    if (lt == T.FLOAT) != (rt == T.FLOAT) and None not in (lt, rt):
        side = node.this if lt == T.FLOAT else node.expression
        side.replace(exp.Cast(this=side.copy(), to=exp.DataType.build("DOUBLE")))
        if not isinstance(node, _COMPARISONS):  # (sqlglot typed it real)
            node.type = exp.DataType.build("DOUBLE")


def _interval_literal(node: exp.Expression) -> exp.Expression | None:
    """interval 'text' with PostgreSQL's input syntax (signs, ISO 8601, fractions, hh:mm:ss)."""
    if isinstance(node, exp.Interval) and _is_text_literal(node.this):
        unit = node.args.get("unit")
        text = node.this.this
        if unit is not None:
            uname = unit.name.lower() if hasattr(unit, "name") else str(unit).lower()
            if not re.fullmatch(r"[+-]?\d+(\.\d+)?", text.strip()):
                return None
            text = f"{text} {uname}"
        return _interval_constant(text)
    return None


def _interval_constant(text: str) -> exp.Expression:
    """An interval literal parsed now, as DuckDB's own constant (folded once, no per-row UDF);
    text that does not parse stays a UDF call, so the error surfaces when it runs."""
    from rw_cli.common.pg_interval import parse_interval

    try:
        months, days, micros = parse_interval(text)
    except Exception:  # noqa: BLE001 - reported by pg_interval_in at run time
        return _fn("pg_interval_in", exp.Literal.string(text))
    parts = [exp.Anonymous(this="to_months", expressions=[exp.Literal.number(months)]),
             exp.Anonymous(this="to_days", expressions=[exp.Literal.number(days)]),
             exp.Anonymous(this="to_microseconds", expressions=[exp.Literal.number(micros)])]
    return exp.Paren(this=exp.Add(this=exp.Add(this=parts[0], expression=parts[1]), expression=parts[2]))


def _values_timestamptz(node: exp.Values) -> None:
    """A VALUES column with a timestamptz cell reads its quoted literals as timestamptz (DuckDB's
    implicit cast): each written with its UTC offset after a space is cast as PostgreSQL reads it."""
    rows = [r.expressions for r in node.expressions if isinstance(r, exp.Tuple)]
    if not rows or len({len(r) for r in rows}) != 1:
        return
    for j in range(len(rows[0])):
        # to_timestamp(seconds) is timestamptz (sqlglot types it timestamp)
        if any(_type(r[j]) == T.TIMESTAMPTZ or isinstance(r[j], exp.UnixToTime) for r in rows):
            for r in rows:
                if _is_text_literal(r[j]):
                    r[j].replace(_timestamptz_text(exp.Cast(this=r[j].copy(), to=exp.DataType.build("TIMESTAMPTZ")))
                                 or r[j].copy())


_PG_NUMBER_NAMES = {T.TINYINT: "smallint", T.SMALLINT: "smallint", T.INT: "integer", T.BIGINT: "bigint",
                    T.DECIMAL: "numeric", T.FLOAT: "real", T.DOUBLE: "double precision"}


def _no_float_modulo(node: exp.Mod) -> None:
    """PostgreSQL and RisingWave have no modulo of floating point numbers."""
    lt, rt = _type(node.this), _type(node.expression)
    if {lt, rt} & {T.FLOAT, T.DOUBLE} and lt in _PG_NUMBER_NAMES and rt in _PG_NUMBER_NAMES:
        raise BindError(f"operator does not exist: {_PG_NUMBER_NAMES[lt]} % {_PG_NUMBER_NAMES[rt]}")


# What the session functions answer: RisingWave's defaults (database `dev`, user `root`,
# schema `public`), not the values of the DuckDB connection that runs the query
SESSION_VALUES = {exp.CurrentDatabase: "dev", exp.CurrentCatalog: "dev", exp.CurrentUser: "root",
                  exp.SessionUser: "root", exp.CurrentSchema: "public"}


def _server_version() -> str:
    from rw_cli.common.session_config import server_version

    return server_version()


_CONSTANT_NODES = (exp.Literal, exp.Null, exp.Paren, exp.Cast, exp.Neg, exp.Add, exp.Sub, exp.Mul, exp.Div)


def _null_fraction(node: exp.WithinGroup) -> exp.Expression | None:
    """percentile_cont / percentile_disc of a NULL fraction (`NULL`, `0.3 + NULL`): NULL, as
    in PostgreSQL (DuckDB refuses a NULL quantile when it binds the call); still an aggregate,
    so the query keeps its one row per group."""
    call = node.this
    if not isinstance(call, (exp.PercentileCont, exp.PercentileDisc)) or call.this is None:
        return None
    fraction = call.this
    if fraction.find(exp.Null) is None or not all(isinstance(n, _CONSTANT_NODES) for n in fraction.walk()):
        return None
    order = node.expression.expressions[0].this if isinstance(node.expression, exp.Order) else None
    if isinstance(call, exp.PercentileCont) or order is None or getattr(order, "type", None) is None:
        return exp.Max(this=exp.Cast(this=exp.Null(), to=exp.DataType.build("DOUBLE")))
    return exp.Max(this=exp.Cast(this=exp.Null(), to=order.type.copy()))


def _string_agg_lists(node: exp.GroupConcat) -> exp.Expression | None:
    """string_agg(x, d) with a delimiter that is not a constant (DuckDB's listagg takes only a
    constant one): each value after the first is preceded by its own row's delimiter, NULL
    values skipped with theirs, as in PostgreSQL; built from two lists in the same order."""
    sep = node.args.get("separator")
    if sep is None or sep.find(exp.Column) is None:
        return None
    value, order = node.this, None
    if isinstance(value, exp.Order):
        value, order = value.this, value.expressions
    if isinstance(value, exp.Distinct):
        return None

    def ordered(e: exp.Expression) -> exp.Expression:
        return exp.Order(this=e, expressions=[o.copy() for o in order]) if order else e

    text = exp.Cast(this=value, to=exp.DataType.build("VARCHAR"))
    piece = exp.DPipe(this=_fn("coalesce", exp.Cast(this=sep, to=exp.DataType.build("VARCHAR")),
                               exp.Literal.string("")), expression=text.copy(), safe=True)
    return aggregate_result(_fn("pg_string_agg", exp.ArrayAgg(this=ordered(text)), exp.ArrayAgg(this=ordered(piece))))


# `07:30:00 -07:00`: PostgreSQL reads a UTC offset after a space; DuckDB takes it for a zone name
_SPACED_OFFSET = r"(\d)\s+([+-]\d{1,2}(?::?\d{2})?)\s*$"


def _timestamptz_text(node: exp.Cast) -> exp.Expression | None:
    """Text cast to timestamptz with its UTC offset written after a space: the space removed."""
    arg = node.this
    if _is_text_literal(arg):
        fixed = re.sub(_SPACED_OFFSET, r"\1\2", arg.this)
        return None if fixed == arg.this else exp.Cast(this=exp.Literal.string(fixed), to=node.to.copy())
    if _type(arg) in _TEXT:
        return _fn("pg_timestamptz_in", arg)
    return None


def _to_char_marks(node: exp.TimeToStr) -> exp.Expression | None:
    """to_char with fields strftime lacks (marked by the dialect's time mapping): the format
    split at each mark, the pieces' strftime joined with the fields computed apart."""
    from rw_cli.sql.dialect import LOWER_MERIDIEM_MARK, TZH_TZM_MARK

    fmt = node.args.get("format")
    if not (isinstance(fmt, exp.Literal) and "\x01" in fmt.this):
        return None
    field = {TZH_TZM_MARK: _fn("pg_tzh_tzm", _fn("strftime", node.this.copy(), exp.Literal.string("%z"))),
             LOWER_MERIDIEM_MARK: _fn("lower", _fn("strftime", node.this.copy(), exp.Literal.string("%p")))}
    out: exp.Expression | None = None
    for piece in re.split("(\x01.)", fmt.this):
        if not piece:
            continue
        part = field.get(piece) or _fn("strftime", node.this.copy(), exp.Literal.string(piece))
        out = part if out is None else exp.DPipe(this=out, expression=part, safe=True)
    return out


def _parse_marks(node: exp.Expression) -> None:
    """to_timestamp / to_date read the marked fields with strptime's own codes (in place)."""
    from rw_cli.sql.dialect import LOWER_MERIDIEM_MARK, TZH_TZM_MARK

    fmt = node.args.get("format")
    if isinstance(fmt, exp.Literal) and "\x01" in fmt.this:
        fmt.set("this", fmt.this.replace(TZH_TZM_MARK, "%z").replace(LOWER_MERIDIEM_MARK, "%p"))


def _array_text(node: exp.Cast) -> exp.Expression | None:
    """Text cast to an array type in PostgreSQL's array syntax (`'{1, 2}'`, `'{{1}, {2}}'`):
    DuckDB reads the same list with brackets (quotes, NULL and blanks alike)."""
    arg = node.this
    if _is_text_literal(arg):
        text = arg.this.strip()
        if not text.startswith("{"):
            return None
        return exp.Cast(this=exp.Literal.string(pg_array_brackets(text)), to=node.to.copy())
    if _type(arg) in _TEXT:
        return exp.Cast(this=_fn("pg_array_brackets", arg), to=node.to.copy())
    return None


def _like_quantified(node: exp.Expression) -> exp.Expression | None:
    """`x [NOT] LIKE ANY|ALL (array)`: the LIKE of each element, combined as PostgreSQL's
    quantifiers do (ANY: true if one is, else NULL if one is NULL; ALL: false if one is, else
    NULL if one is NULL; an empty array: false for ANY, true for ALL)."""
    quant = node.expression
    if not isinstance(quant, (exp.Any, exp.All)):
        return None
    arr = quant.this.this if isinstance(quant.this, exp.Paren) else quant.this
    cls = type(node)
    test = exp.Escape(this=cls(this=node.this.copy(), expression=exp.column("__e")),
                      expression=exp.Literal.string("\\"))
    if node.args.get("negate"):
        test = exp.Not(this=test)
    tests = _fn("list_transform", arr.copy(), exp.Lambda(this=test, expressions=[exp.to_identifier("__e")]))
    has_null = exp.GT(this=_fn("len", _fn("list_filter", tests.copy(), exp.Lambda(
        this=exp.Is(this=exp.column("__v"), expression=exp.Null()), expressions=[exp.to_identifier("__v")]))),
        expression=exp.Literal.number(0))
    if isinstance(quant, exp.Any):
        decided = exp.If(this=_fn("list_bool_or", tests), true=exp.true())
        default = exp.false()
    else:
        decided = exp.If(this=exp.Not(this=_fn("coalesce", _fn("list_bool_and", tests), exp.true())), true=exp.false())
        default = exp.true()
    return exp.Case(ifs=[exp.If(this=exp.Is(this=arr.copy(), expression=exp.Null()), true=exp.Null()), decided,
                         exp.If(this=has_null, true=exp.Null())], default=default)


def _quantified_operand(e: exp.Expression) -> exp.Expression | None:
    """The operand of ANY / SOME / ALL (the parser reads SOME(...) and ALL(...) as calls)."""
    if isinstance(e, (exp.Any, exp.All)):
        return e.this
    if isinstance(e, exp.Anonymous) and e.name.lower() in _QUANTIFIERS and len(e.expressions) == 1:
        return e.expressions[0]
    return None


def _compare_quantified(node: exp.Expression) -> exp.Expression | None:
    """`x op ANY|ALL (array)`: NULL when the array is NULL, as in PostgreSQL (DuckDB reads a
    NULL list as an empty one: false for ANY, true for ALL); an operand that is no array is
    PostgreSQL's error. A subquery's quantifier is DuckDB's own, which agrees."""
    if node.meta.get("null_array_checked"):
        return None
    arr = _quantified_operand(node.expression)
    while isinstance(arr, exp.Paren):
        arr = arr.this
    if isinstance(arr, (exp.Query, exp.Subquery)):
        return None
    if isinstance(arr, exp.Literal) and not arr.is_string:  # (a string may be an array's text)
        raise BindError("op ANY/ALL (array) requires array on right side")
    node.meta["null_array_checked"] = True
    return exp.Case(ifs=[exp.If(this=exp.Is(this=arr.copy(), expression=exp.Null()), true=exp.Null())],
                    default=node.copy())


def _default_like_escape(node: exp.Expression) -> exp.Expression | None:
    """LIKE without ESCAPE escapes with a backslash in PostgreSQL (DuckDB: no escape at all)."""
    pattern = node.expression
    if _is_text_literal(pattern) and "\\" not in pattern.this:
        return None
    if not (_is_text_literal(pattern) or _type(pattern) in _TEXT):
        return None
    return _like_escape(node.copy(), exp.Literal.string("\\"))


def _ends_with_escape(pattern: str, escape: str) -> bool:
    i = 0
    while i < len(pattern):
        if pattern[i] == escape:
            if i + 1 == len(pattern):
                return True
            i += 1
        i += 1
    return False


def _like_escape(like: exp.Expression, escape: exp.Expression) -> exp.Expression:
    """`x LIKE p ESCAPE e`. A constant pattern ending in a lone escape character matches
    nothing, and fails only where matching reaches that character with text left (PostgreSQL's
    and RisingWave's matcher: 'abc' LIKE 'abc\\' is false); DuckDB refuses the pattern."""
    pattern = like.expression
    if not (_is_text_literal(pattern) and _is_text_literal(escape) and len(escape.this) == 1
            and _ends_with_escape(pattern.this, escape.this)):
        return exp.Escape(this=like, expression=escape)
    prefix = pattern.this[:-1]

    def like_of(p: str) -> exp.Expression:
        return exp.Escape(this=type(like)(this=like.this.copy(), expression=exp.Literal.string(p)),
                          expression=escape.copy())
    reaches_end = exp.and_(like_of(prefix + "%"), exp.Not(this=like_of(prefix)))
    fail = _fn("error", exp.Literal.string("LIKE pattern must not end with escape character"))
    no_match = exp.true() if like.args.get("negate") else exp.false()  # NOT LIKE: every text
    nothing = exp.Case(ifs=[exp.If(this=exp.Is(this=like.this.copy(), expression=exp.Null()), true=exp.Null())],
                       default=no_match)
    return exp.Case(ifs=[exp.If(this=reaches_end, true=fail)], default=nothing)


_FORMAT_SPEC = re.compile(r"%(?:(\d+)\$)?([sIL%])")


def _format(node: exp.Format) -> exp.Expression | None:
    """format(template, args...) with a constant template: `%s` (NULL as empty), `%I` (an
    identifier, quoted when needed), `%L` (a literal, NULL unquoted) and `%%`, positional
    `%n$s` too, as a concatenation."""
    fmt, args = node.this, list(node.expressions)
    if not _is_text_literal(fmt):
        return None
    pieces: list[exp.Expression] = []
    pos, nxt = 0, 0
    for m in _FORMAT_SPEC.finditer(fmt.this):
        if m.start() > pos:
            pieces.append(exp.Literal.string(fmt.this[pos:m.start()]))
        pos = m.end()
        if m.group(2) == "%":
            pieces.append(exp.Literal.string("%"))
            continue
        i = int(m.group(1)) - 1 if m.group(1) else nxt
        nxt = i + 1
        if not 0 <= i < len(args):
            raise BindError("too few arguments for format()")
        text = exp.Cast(this=_text_of(args[i].copy()), to=exp.DataType.build("VARCHAR"))
        if m.group(2) == "s":
            pieces.append(_fn("coalesce", text, exp.Literal.string("")))
        elif m.group(2) == "I":
            pieces.append(_fn("quote_ident", text))
        else:
            pieces.append(_fn("coalesce", _fn("quote_literal", text), exp.Literal.string("NULL")))
    if "%" in fmt.this[pos:]:
        raise BindError("unterminated format() type specifier")
    pieces.append(exp.Literal.string(fmt.this[pos:]))
    out = pieces[0]
    for p in pieces[1:]:
        out = exp.DPipe(this=out, expression=p, safe=True)
    return exp.paren(out)


def _row_field(node: exp.Dot) -> exp.Expression | None:
    """`(ROW(a, b)).f2`: an anonymous row's fields are f1, f2, ... (RisingWave's names)."""
    row = node.this.this if isinstance(node.this, exp.Paren) else node.this
    if not (isinstance(row, exp.Anonymous) and row.name.lower() == "row" and isinstance(node.expression, exp.Identifier)):
        return None
    field = node.expression.name.lower()
    m = re.fullmatch(r"f(\d+)", field)
    if m is None or not 1 <= int(m.group(1)) <= len(row.expressions):
        raise BindError(f'field "{node.expression.name}" not found in struct type')
    return row.expressions[int(m.group(1)) - 1].copy()


def _single_value(node: exp.Expression) -> exp.Expression:
    """single_value(x): the group's value, an error when it has more than one."""
    many = exp.GT(this=exp.Count(this=node.this.copy()), expression=exp.Literal.number(1))
    fail = _fn("error", exp.Literal.string("SingleValue aggregation can only accept exactly one value. "
                                           "But there is more than one."))
    # max of the one value: an aggregate that keeps a numeric's scale (rw_cli.sql.numeric_sql)
    value = exp.Max(this=node.this.copy())
    value = numeric_sql.lower(value) or value
    return aggregate_result(exp.Case(ifs=[exp.If(this=many, true=fail)], default=value))


def _first_last_aggregate(node: exp.Expression) -> exp.Expression | None:
    """first_value / last_value without OVER: RisingWave's aggregates (the value of the first
    / last row in the ORDER BY order), DuckDB's first / last."""
    up = node.parent
    while isinstance(up, (exp.IgnoreNulls, exp.RespectNulls)):
        up = up.parent
    if isinstance(up, exp.Window):
        return None
    name = "first" if isinstance(node, exp.FirstValue) else "last"
    return _fn(name, node.this)


def _array_depth(node: exp.Expression) -> int:
    t = getattr(node, "type", None)
    if isinstance(node, exp.Array) and len(node.expressions) == 1 and isinstance(node.expressions[0], exp.Query):
        # ARRAY(SELECT x ...): an array of its one column's values
        query = node.expressions[0]
        selects = query.selects if isinstance(query, exp.Query) else []
        return 1 + (_array_depth(selects[0]) if len(selects) == 1 else 0)
    depth = 0
    while t is not None and t.this == T.ARRAY:
        depth += 1
        t = t.expressions[0] if t.expressions else None
    return depth


def _array_concat(left: exp.Expression, right: exp.Expression) -> exp.Expression | None:
    """`a || b` / array_cat(a, b) whose operands differ in depth by one, as PostgreSQL: the
    shallower one is an element appended or prepended (`{{1}} || {2}`, `{1} || 2`,
    `2 || {1}`); a NULL array operand leaves the other one as is. Equal depths: None (DuckDB's
    list concatenation already agrees)."""
    dl, dr = _array_depth(left), _array_depth(right)
    if max(dl, dr) == 0 or abs(dl - dr) != 1:
        return None
    if dl > dr:
        arr, elem, fn = left, right, "list_append"
        call = _fn(fn, arr.copy(), elem.copy())
    else:
        arr, elem, fn = right, left, "list_prepend"
        call = _fn(fn, elem.copy(), arr.copy())
    if _array_depth(elem) == 0:
        return call  # an element, NULL included, is added
    null = exp.Null()
    return exp.Case(ifs=[exp.If(this=exp.and_(exp.Is(this=arr.copy(), expression=null.copy()),
                                              exp.Is(this=elem.copy(), expression=null.copy())), true=exp.Null()),
                         exp.If(this=exp.Is(this=elem.copy(), expression=null.copy()), true=arr.copy())],
                    default=call)


def _parse_time_type(node: exp.Expression):
    """The type sqlglot's parser gave `node` (it knew no table's columns then)."""
    from sqlglot.optimizer.annotate_types import annotate_types

    from rw_cli.sql.dialect import RwDialect

    fresh = node.copy()
    for n in fresh.walk():
        n.type = None
    return annotate_types(fresh, dialect=RwDialect).type.this


def _parser_made_zero_based(node: exp.Bracket) -> bool:
    """Whether sqlglot's parser moved this index to 0-based: it does so for an index it typed
    as an integer on a value it typed as an array or not at all. Its generator moves every
    index typed integer back when writing DuckDB's 1-based SQL — after binding, when a column
    index (`a[i]`) is typed too, so that one read a[i + 1]. An index the parser left alone is
    marked already 1-based."""
    if _parse_time_type(node.this) not in (T.UNKNOWN, T.ARRAY):
        return False
    return _parse_time_type(node.expressions[0]) in exp.DataType.INTEGER_TYPES


def _element_text(x: exp.Expression, t: exp.DataType | None, depth: int) -> exp.Expression:
    """An array element's text as PostgreSQL's array output writes it (its type's output
    function: booleans are t/f there, unlike a cast of a boolean to text)."""
    k = t.this if t is not None else None
    if k == T.ARRAY:
        return _array_text_out(x, t.expressions[0] if t.expressions else None, depth + 1)
    if k == T.BOOLEAN:
        return exp.Case(ifs=[exp.If(this=x.copy(), true=exp.Literal.string("t")),
                             exp.If(this=exp.Not(this=x.copy()), true=exp.Literal.string("f"))])
    if k == T.DOUBLE:
        return _fn("pg_float8_out", x)
    if k == T.FLOAT:
        return _fn("pg_float4_out", x)
    if k == T.DECIMAL:
        return numeric_sql.call("rw_num_out", x, t="VARCHAR")
    if _row_constructor(x) is not None:
        return _row_text_out(_row_constructor(x).expressions)
    if k in _BYTES:  # `\x00ff`, bytea's output (DuckDB's cast writes `\x00\xFF`)
        return exp.DPipe(this=exp.Literal.string("\\x"), expression=_fn("lower", _fn("hex", x)))
    if k == T.STRUCT and _is_numeric_struct(t):  # a numeric, as DuckDB holds it
        return numeric_sql.call("rw_num_out", x, t="VARCHAR")
    if k == T.STRUCT and t.expressions:
        return _struct_text_out(x, t, depth + 1)
    if k == T.MAP and len(t.expressions) == 2:
        return _map_text_out(x, t, depth + 1)
    if k in _TEMPORAL_OUT:
        return _fn(_TEMPORAL_OUT[k], x)
    if k in _TEXT:
        return x
    return exp.Cast(this=x, to=exp.DataType.build("VARCHAR"))


def _record_text(texts: list[exp.Expression]) -> exp.Expression:
    """`(a,b,...)` from the fields' texts, each quoted as record_out quotes it."""
    body: exp.Expression = exp.Literal.string("(")
    for i, text in enumerate(texts):
        text = _fn("pg_record_item", text)
        body = exp.DPipe(this=body, expression=text if i == 0 else exp.DPipe(
            this=exp.Literal.string(","), expression=text, safe=True), safe=True)
    return exp.DPipe(this=body, expression=exp.Literal.string(")"), safe=True)


def _row_constructor(x: exp.Expression) -> exp.Expression | None:
    """`ROW(a, b)` or `(a, b)` (in parentheses or not), else None."""
    while isinstance(x, exp.Paren):
        x = x.this
    if isinstance(x, exp.Tuple) or (isinstance(x, exp.Anonymous) and x.name.lower() == "row"):
        return x
    return None


def _row_text_out(items: list[exp.Expression]) -> exp.Expression:
    """ROW(...) (or `(a, b)`) as text: its values' texts as a record's (never NULL)."""
    return _record_text([_element_text(x.copy(), getattr(x, "type", None), 0) for x in items])


def _map_text_out(value: exp.Expression, t: exp.DataType, depth: int = 0) -> exp.Expression:
    """A map as RisingWave writes it: `{k:v,k2:NULL}`, keys and values in their text forms
    (DuckDB would write `{k=v}`)."""
    var = f"__kv{depth}"
    key = _element_text(exp.Dot(this=exp.column(var), expression=exp.to_identifier("key")), t.expressions[0], depth)
    val = _element_text(exp.Dot(this=exp.column(var), expression=exp.to_identifier("value")), t.expressions[1], depth)
    entry = exp.DPipe(this=exp.DPipe(this=key, expression=exp.Literal.string(":"), safe=True),
                      expression=_fn("coalesce", val, exp.Literal.string("NULL")), safe=True)
    texts = _fn("list_transform", _fn("map_entries", value.copy()),
                exp.Lambda(this=entry, expressions=[exp.to_identifier(var)]))
    body = exp.DPipe(this=exp.DPipe(this=exp.Literal.string("{"), expression=_fn(
        "array_to_string", texts, exp.Literal.string(",")), safe=True), expression=exp.Literal.string("}"), safe=True)
    return exp.Case(ifs=[exp.If(this=exp.Is(this=value.copy(), expression=exp.Null()), true=exp.Null())],
                    default=body)


def _is_numeric_struct(t: exp.DataType) -> bool:
    """Whether a struct type is numeric's representation in DuckDB (rw_cli.common.numeric):
    a struct's numeric field is typed so."""
    names = [f.name for f in t.expressions if isinstance(f, exp.ColumnDef)]
    return names == [f.name for f in numeric_sql.struct_type().expressions]


def _struct_text_out(value: exp.Expression, t: exp.DataType, depth: int = 0) -> exp.Expression:
    """A struct as PostgreSQL's record text: `(1,"a b",)`: each field's text (as its output
    function writes it; NULL as nothing), quoted where record_out quotes (DuckDB would write
    `{'a': 1, ...}` or `(1, a b)`)."""
    texts = []
    for i, field in enumerate(t.expressions):
        ft = field.args.get("kind") if isinstance(field, exp.ColumnDef) else field
        texts.append(_element_text(_fn("struct_extract_at", value.copy(), exp.Literal.number(i + 1)), ft, depth))
    body = _record_text(texts)
    return exp.Case(ifs=[exp.If(this=exp.Is(this=value.copy(), expression=exp.Null()), true=exp.Null())],
                    default=body)


def _array_join(node: exp.ArrayToString) -> exp.Expression | None:
    """array_to_string / array_join(a, delimiter [, null_text]) as PostgreSQL's: the
    elements' text as their output functions write it (booleans t/f), nested arrays'
    elements all, NULLs skipped (or replaced); a NULL delimiter or array gives NULL; the
    delimiter may differ from row to row (DuckDB's own takes a constant one)."""
    arr, sep, null = node.this, node.expression, node.args.get("null")
    t = getattr(arr, "type", None)
    if isinstance(arr, exp.Null) or t is None or t.this in (T.NULL, T.UNKNOWN):
        raise BindError("could not determine polymorphic type because input has type unknown "
                        "(function array_to_string)")
    if t.this != T.ARRAY or sep is None:
        return None
    element = t.expressions[0] if t.expressions else None
    while element is not None and element.this == T.ARRAY:
        arr = _fn("flatten", arr)
        element = element.expressions[0] if element.expressions else None
    body = _element_text(exp.column("__e"), element, 0)
    if null is not None:
        body = _fn("coalesce", body, exp.Cast(this=null, to=exp.DataType.build("VARCHAR")))
    texts = _fn("list_transform", arr, exp.Lambda(this=body, expressions=[exp.to_identifier("__e")]))
    return _fn("pg_array_join", texts, exp.Cast(this=sep, to=exp.DataType.build("VARCHAR")))


def _array_text_out(arr: exp.Expression, element: exp.DataType | None, depth: int = 0) -> exp.Expression:
    """An array as PostgreSQL's text: `{1,2}`, `{{1,2},{3,4}}`, `{a,"b c",NULL}` (DuckDB would
    write `[1, 2]`)."""
    var = f"__e{depth}"
    body = _element_text(exp.column(var), element, depth)
    each = _fn("list_transform", arr, exp.Lambda(this=body, expressions=[exp.to_identifier(var)]))
    nested = element is not None and element.this == T.ARRAY
    return _fn("pg_array_out_nested" if nested else "pg_array_out", each)


def _map_key_subscript(node: exp.Bracket) -> exp.Expression | None:
    """map[key] as RisingWave looks it up: a key of another type than the map's is cast to it
    (`MAP {'a': 1}[1]` looks up '1': NULL; DuckDB refuses the types), and an integer key the
    parser moved to 0-based (it took the map for an array) is moved back here (the
    generator moves back the indexes of what it cannot type only, so a map column's `m[2]`
    read key 1)."""
    types = _map_types(node.this)
    key = node.expressions[0]
    if types is None or isinstance(key, exp.Slice):
        return None
    fixed = key.copy()
    if _parser_made_zero_based(node):
        fixed = exp.Literal.number(int(key.this) + 1) if isinstance(key, exp.Literal) and key.this.isdigit() \
            else exp.paren(exp.Add(this=fixed, expression=exp.Literal.number(1)))
    if _type(key) not in (None, T.UNKNOWN, T.NULL) and _type(key) != types[0].this:
        fixed = exp.Cast(this=fixed, to=types[0].copy())
    out = node.copy()
    out.set("expressions", [fixed])
    out.set("offset", 1)  # the key as written: the generator must not move it
    out.meta["pg_subscript"] = True
    return out


def _pg_subscript(node: exp.Bracket) -> exp.Expression | None:
    """PostgreSQL's array subscripts over DuckDB's lists: an index below 1 is out of bounds
    (NULL; DuckDB counts a negative one from the end), and text has no subscripts."""
    if node.meta.get("pg_subscript"):
        return None
    at = _type(node.this)
    if at in _TEXT:
        raise BindError("cannot subscript type character varying because it does not support subscripting")
    if at != T.ARRAY and len(node.expressions) == 1:
        keyed = _map_key_subscript(node)
        if keyed is not None:
            return keyed
    if at in (None, T.UNKNOWN) and len(node.expressions) == 1 and not isinstance(node.expressions[0], exp.Slice) \
            and not _parser_made_zero_based(node):
        # a value of a type the binder does not know (a function's array): its index is
        # already 1-based, which DuckDB's generator must not move once the index is typed
        out = node.copy()
        out.set("offset", 1)
        out.meta["pg_subscript"] = True
        return out
    if at != T.ARRAY or len(node.expressions) != 1:
        return None
    index = node.expressions[0]
    if isinstance(index, exp.Slice):
        return None  # _array_slice
    out = node.copy()
    out.meta["pg_subscript"] = True
    if not _parser_made_zero_based(node):
        out.set("offset", 1)  # already 1-based: DuckDB's generator must not move it
    if isinstance(index, exp.Literal) and not index.is_string:
        return out  # a positive constant: DuckDB's meaning is PostgreSQL's
    return exp.Case(ifs=[exp.If(this=exp.GTE(this=index.copy(), expression=exp.Literal.number(1)), true=out)])


def _int256_op(node: exp.Expression) -> exp.Expression | None:
    """rw_int256's `*`, `/`, `%` and abs() (rw_cli.common.types: DuckDB's BIGNUM computes
    them in DOUBLE): exact macros; with a float operand, the product or quotient in double
    precision, as RisingWave's int256 / float8 is."""
    if isinstance(node, exp.Abs) and _type(node.this) == T.INT256:
        return _fn("pg_int256_abs", node.this)
    if not isinstance(node, (exp.Mul, exp.Div, exp.Mod)):
        return None
    lt, rt = _type(node.this), _type(node.expression)
    if T.INT256 not in (lt, rt):
        return None
    if {lt, rt} & {T.DOUBLE, T.FLOAT, T.DECIMAL}:
        side = "this" if lt == T.INT256 else "expression"
        node.set(side, exp.Cast(this=node.args[side], to=exp.DataType.build("DOUBLE")))
        return _fn("pg_div", node.this, node.expression) if isinstance(node, exp.Div) else None
    name = {exp.Mul: "pg_int256_mul", exp.Div: "pg_int256_div", exp.Mod: "pg_int256_mod"}[type(node)]
    return _fn(name, node.this, node.expression)


_INT4_MAX = 2**31 - 1


def _array_slice(node: exp.Expression) -> exp.Expression | None:
    """`a[lo:hi]` as PostgreSQL slices: bounds clamped to the array (a negative one is before
    the start, not counted from the end as DuckDB counts it), a missing one the array's end;
    a bound is an integer (a bigint literal is refused as RisingWave refuses it)."""
    if not (isinstance(node, exp.Bracket) and len(node.expressions) == 1 and isinstance(node.expressions[0], exp.Slice)
            and _type(node.this) in (T.ARRAY, None)):
        return None
    if _type(node.this) is None and not isinstance(node.this, (exp.Array, exp.Paren)):
        return None
    sl = node.expressions[0]
    bounds = []
    for which, b in enumerate((sl.this, sl.expression)):
        lit = b.this if isinstance(b, exp.Neg) else b
        if isinstance(lit, exp.Literal) and not lit.is_string and lit.is_int and abs(int(lit.this)) > _INT4_MAX:
            from rw_cli.errors import BindError

            raise BindError('cannot cast type "bigint" to "integer" in Implicit context')
        # a missing bound is the array's end; a NULL one makes the slice NULL
        bounds.append(b if b is not None else exp.Literal.number(_INT4_MAX if which else 1))
    return _fn("pg_array_slice", node.this, *bounds)


def _type_depth(t: exp.DataType | None) -> int:
    """How many array levels a type has (int[][] -> 2)."""
    depth = 0
    while t is not None and t.this == T.ARRAY:
        depth += 1
        t = t.expressions[0] if t.expressions else None
    return depth


def _generate_subscripts(node: exp.Expression) -> exp.Expression | None:
    """generate_subscripts(a, dim [, reverse]): the subscripts 1..n of the array's dimension
    `dim` (none for a dimension it does not have), descending when `reverse`."""
    if not (isinstance(node, exp.Anonymous) and node.name.lower() == "generate_subscripts"
            and len(node.expressions) in (2, 3)):
        return None
    arr, dim = node.expressions[0], node.expressions[1]
    rev = node.expressions[2] if len(node.expressions) == 3 else exp.false()
    depth = _type_depth(getattr(arr, "type", None))
    if not (isinstance(dim, (exp.Literal, exp.Neg)) and depth):
        return None
    d = int(dim.sql())
    if d < 1 or d > depth:
        return _fn("unnest", exp.Cast(this=exp.Array(expressions=[]), to=exp.DataType.build("INT[]")))
    inner = arr
    for _ in range(d - 1):
        inner = exp.Bracket(this=inner, expressions=[exp.Literal.number(1)])
    n = _fn("len", inner)
    subs = _fn("range", exp.Literal.number(1), exp.Add(this=n, expression=exp.Literal.number(1)))
    return _fn("unnest", exp.If(this=rev, true=_fn("list_reverse", subs.copy()), false=subs))


def _map_function(node: exp.Expression) -> exp.Expression | None:
    """map_from_key_values(keys, values): keys of a type a map may have, unique, not NULL."""
    if not (isinstance(node, exp.Anonymous) and node.name.lower() == "map_from_key_values"
            and len(node.expressions) == 2):
        return None
    kt = getattr(node.expressions[0], "type", None)
    element = kt.expressions[0] if kt is not None and kt.this == T.ARRAY and kt.expressions else None
    if element is not None and element.this in (T.FLOAT, T.DOUBLE, T.DECIMAL):
        from rw_cli.errors import BindError

        name = {T.FLOAT: "real", T.DOUBLE: "double precision", T.DECIMAL: "numeric"}[element.this]
        raise BindError(f"invalid map key type: {name}")
    return _fn("pg_map_from_key_values", *node.expressions)


def _check_empty_array(node: exp.Expression) -> None:
    """`ARRAY[]` has no element type unless cast (PostgreSQL and RisingWave refuse it)."""
    if isinstance(node, exp.Array) and not node.expressions and not isinstance(node.parent, exp.Cast) \
            and not node.meta.get(EMPTY_ARRAY_OK) \
            and _type(node) in (T.ARRAY, None) and (getattr(node, "type", None) is None
                                                     or not node.type.expressions
                                                     or node.type.expressions[0].this in (T.UNKNOWN, T.NULL)):
        from rw_cli.errors import BindError

        raise BindError("cannot determine type of empty array",
                        hint="Explicitly cast to the desired type, for example ARRAY[]::integer[].")


def _populate_record(node: exp.Expression) -> exp.Expression | None:
    """jsonb_populate_record(base, j): `base`'s struct type with each field read from j's
    member of the same name (text cast to the field's type), `base`'s value where j has
    none; jsonb_populate_recordset(base, j): one such row per element of j's array."""
    if not (isinstance(node, exp.Anonymous) and len(node.expressions) == 2
            and node.name.lower() in ("jsonb_populate_record", "jsonb_populate_recordset")):
        return None
    base, j = node.expressions
    t = getattr(base, "type", None)
    if t is None or t.this != T.STRUCT or not t.expressions:
        return None
    element = exp.to_identifier("__e")

    def record(doc: exp.Expression) -> exp.Expression:
        fields = []
        for f in t.expressions:
            name = f.name
            text = exp.JSONExtractScalar(this=doc.copy(), expression=exp.Literal.string(f"$.{name}"))
            value = exp.Cast(this=text, to=f.args["kind"].copy())
            old = _fn("struct_extract", base.copy(), exp.Literal.string(name))
            fields.append(exp.PropertyEQ(this=exp.to_identifier(name), expression=_fn("coalesce", value, old)))
        return _fn("struct_pack", *fields)

    if node.name.lower() == "jsonb_populate_record":
        return record(exp.Cast(this=j, to=exp.DataType.build("JSON")))
    elements = exp.Cast(this=j, to=exp.DataType.build("JSON[]", dialect=duckdb_dialect()))
    lam = exp.Lambda(this=record(exp.column(element)), expressions=[element])
    return _fn("unnest", _fn("list_transform", elements, lam))


def _populate_map(node: exp.Expression) -> exp.Expression | None:
    """jsonb_populate_map(base, j): `base` (a map with text keys) with j's members added or
    replacing its entries, each value read as text and cast to the map's value type."""
    if not (isinstance(node, exp.Anonymous) and node.name.lower() == "jsonb_populate_map"
            and len(node.expressions) == 2):
        return None
    base, j = node.expressions
    types = _map_types(base)
    if types is None:
        return None
    key_t, value_t = types
    if key_t.this not in _TEXT:
        from rw_cli.errors import BindError

        raise BindError("cannot convert jsonb to a map with non-string keys")
    doc = exp.Cast(this=j, to=exp.DataType.build("JSON"))
    member = exp.to_identifier("__m")
    value = exp.Cast(this=exp.JSONExtractScalar(this=exp.column(member), expression=exp.Literal.string("$")),
                     to=value_t.copy())
    values = _fn("list_transform", _fn("pg_jsonb_members", doc.copy()), exp.Lambda(this=value, expressions=[member]))
    added = _fn("map", _fn("pg_jsonb_each_keys", doc), values)
    return exp.Case(ifs=[exp.If(this=exp.Is(this=base.copy(), expression=exp.Null()), true=added)],
                    default=_fn("map_concat", base, added.copy()))


def _type_words(x: exp.Expression) -> str:
    """An operand's type as an error message names it (`map(integer,integer)`)."""
    types = _map_types(x)
    if types is not None:
        k, v = (t.sql(dialect="postgres").lower() for t in types)
        return f"map({k},{v})"
    t = getattr(x, "type", None)
    return t.sql().lower() if t is not None else "unknown"


def _map_types(node: exp.Expression) -> tuple[exp.DataType, exp.DataType] | None:
    """A map's key and value types: from its type, or from the arrays of a `MAP {...}`
    literal (map_from_key_values of two arrays)."""
    t = getattr(node, "type", None)
    if t is not None and t.this == T.MAP and len(t.expressions) == 2:
        return t.expressions[0], t.expressions[1]
    if isinstance(node, exp.Anonymous) and node.name.lower() in ("map_from_key_values", "pg_map_from_key_values") \
            and len(node.expressions) == 2:
        arrays = [getattr(a, "type", None) for a in node.expressions]
        if all(a is not None and a.this == T.ARRAY and a.expressions for a in arrays):
            return arrays[0].expressions[0], arrays[1].expressions[0]
    return None


# -2147483648 and -9223372036854775808 are integer and bigint constants in PostgreSQL (its
# grammar folds the minus into the literal); DuckDB types the unsigned part first
_NEGATIVE_BOUNDS = {2**31: "INT", 2**63: "BIGINT"}


def _negative_bound(node: exp.Expression) -> exp.Expression | None:
    if not (isinstance(node, exp.Neg) and isinstance(node.this, exp.Literal) and not node.this.is_string
            and node.this.this.isdigit() and int(node.this.this) in _NEGATIVE_BOUNDS):
        return None
    return exp.Cast(this=exp.Literal.string(f"-{node.this.this}"),
                    to=exp.DataType.build(_NEGATIVE_BOUNDS[int(node.this.this)]))


def _unnest_nested(node: exp.Expression) -> None:
    """unnest of a nested array gives its innermost elements, as in PostgreSQL and RisingWave
    (`unnest(array[array[1,2],array[3]])` is 1, 2, 3); DuckDB's unnests one level. The argument
    is flattened in place, once per level below the first."""
    if node.meta.get(ROWS_ARE_ARRAYS):
        return None
    if isinstance(node, exp.Explode):
        key, arg = "this", node.this
    elif isinstance(node, exp.Unnest) and len(node.expressions) == 1:
        key, arg = "expressions", node.expressions[0]
    else:
        return None
    t = getattr(arg, "type", None)
    depth = 0
    while t is not None and t.this == T.ARRAY and t.expressions:
        t, depth = t.expressions[0], depth + 1
    if depth < 2:
        return None
    flat = arg.copy()
    for _ in range(depth - 1):
        flat = _fn("flatten", flat)
    node.set(key, flat if key == "this" else [flat])
    return None


def _make_interval(node: exp.Expression) -> exp.Expression | None:
    """make_interval(years, months, weeks, days, hours, mins, secs), each defaulting to 0 and
    any of them a column (sqlglot writes a text literal of the arguments, for constants only)."""
    if not isinstance(node, exp.MakeInterval):
        return None
    args = []
    for unit in exp.MakeInterval.arg_types:
        value = node.args.get(unit)
        if isinstance(value, exp.Kwarg):
            value = value.expression
        args.append(exp.Literal.number(0) if value is None else value)
    return _fn("pg_make_interval", *args)


def _vector_distance(node: exp.Expression) -> exp.Expression | None:
    """pgvector's `a <-> b` (L2 distance) on vector(n) values (or their text form); the type
    vector(n) itself is DuckDB's FLOAT[n]."""
    if isinstance(node, exp.Distance):
        return _fn("pg_vector_l2", node.this, node.expression)
    if isinstance(node, exp.DataType) and node.this == T.VECTOR and node.expressions:
        return exp.DataType.build(f"FLOAT[{int(node.expressions[-1].name)}]", dialect=duckdb_dialect())
    return None


def _check_overlap_operands(node: exp.ArrayOverlaps) -> None:
    """`a && b` is defined for two arrays of one element type (PostgreSQL's anyarray &&
    anyarray): `text[] && integer[]`, even `bigint[] && integer[]`, has no operator, where
    DuckDB would find a common type for the elements."""
    elements = []
    for side in (node.this, node.expression):
        t = getattr(side, "type", None)
        if t is None or t.this != T.ARRAY or not t.expressions or t.expressions[0].this in (T.NULL, T.UNKNOWN):
            return
        elements.append(t.expressions[0])
    if elements[0] == elements[1]:
        return
    from rw_cli.common.types import DataType

    try:
        names = [str(DataType.from_sql(side.type.sql(duckdb_dialect()))) for side in (node.this, node.expression)]
    except Exception:  # noqa: BLE001 - no name of ours: leave it to DuckDB
        return
    raise BindError(f"operator does not exist: {names[0]} && {names[1]}",
                    hint="No operator matches the given name and argument types. "
                         "You might need to add explicit type casts.")


_CONCAT_OPERANDS = _TEXT | _BYTES | _JSON_TYPES | {T.ARRAY, T.NULL, T.UNKNOWN}


def _check_concat_operands(node: exp.DPipe) -> None:
    """`a || b` needs a string (or bytea, jsonb, array) on one side at least: two numbers, say,
    have no such operator in PostgreSQL."""
    sides = (node.this, node.expression)
    if any(_is_text_literal(x) or getattr(x, "type", None) is None or _type(x) in _CONCAT_OPERANDS for x in sides):
        return
    from rw_cli.common.types import DataType

    names = []
    for x in sides:
        try:
            names.append(str(DataType.from_sql(x.type.sql(duckdb_dialect()))))
        except Exception:  # noqa: BLE001 - no name of ours: leave it to DuckDB
            return
    raise BindError(f"operator does not exist: {names[0]} || {names[1]}",
                    hint="No operator matches the given name and argument types. "
                         "You might need to add explicit type casts.")


_BYTEA_BIT_FUNCTIONS = {"get_bit": 2, "set_bit": 3, "get_byte": 2, "set_byte": 3, "bit_count": 1}


def _bytea_bits(node: exp.Expression) -> exp.Expression | None:
    """get_bit, set_bit, get_byte, set_byte and bit_count of a bytea, as PostgreSQL's (bits
    counted from the lowest of each byte; DuckDB's get_bit and bit_count take a bit string
    or an integer, which stay theirs)."""
    if isinstance(node, exp.Getbit):
        name, args = "get_bit", [node.this, node.expression]
    elif isinstance(node, exp.Anonymous) and node.name.lower() in _BYTEA_BIT_FUNCTIONS:
        name, args = node.name.lower(), list(node.expressions)
    else:
        return None
    if len(args) != _BYTEA_BIT_FUNCTIONS[name] or not (_is_text_literal(args[0]) or _type(args[0]) in _BYTES):
        return None
    rest = [exp.Cast(this=a, to=exp.DataType.build("INT")) if _is_text_literal(a) else a for a in args[1:]]
    macro = "pg_bytea_bit_count" if name == "bit_count" else f"pg_{name}"
    return _fn(macro, _bytea(args[0]), *rest)


# math functions whose untyped NULL argument is a double precision, as PostgreSQL and
# RisingWave resolve it (the preferred type of the numeric category): round(NULL) is a
# double precision NULL, round(NULL, 2) a numeric one (that form takes only numeric)
_NULL_IS_DOUBLE = (exp.Abs, exp.Ceil, exp.Floor, exp.Sign, exp.Sqrt, exp.Cbrt, exp.Exp, exp.Ln, exp.Log,
                   exp.Pow, exp.Round)


def _type_null_argument(node: exp.Expression) -> None:
    """Give a bare NULL argument of a math function its type (in place)."""
    if not isinstance(node, _NULL_IS_DOUBLE):
        return
    numeric = isinstance(node, exp.Round) and node.args.get("decimals") is not None
    for key in ("this", "expression"):
        if isinstance(node.args.get(key), exp.Null):
            node.set(key, numeric_sql.to_numeric(exp.Null()) if numeric else
                     exp.Cast(this=exp.Null(), to=exp.DataType.build("DOUBLE")))


_COMPARISONS = (exp.EQ, exp.NEQ, exp.LT, exp.LTE, exp.GT, exp.GTE, exp.NullSafeEQ, exp.NullSafeNEQ)


_NUMBERS = _INTS | {T.DECIMAL, T.FLOAT, T.DOUBLE}
_OPERATOR_TEXT = {exp.EQ: "=", exp.NEQ: "<>", exp.LT: "<", exp.LTE: "<=", exp.GT: ">", exp.GTE: ">=",
                  exp.NullSafeEQ: "IS NOT DISTINCT FROM", exp.NullSafeNEQ: "IS DISTINCT FROM"}


_TO_CHAR_TYPES = frozenset({None, T.DATE, T.TIMESTAMP, T.TIMESTAMPTZ, T.TIME, T.TIMETZ, T.INTERVAL, T.TIMESTAMP_NS,
                            T.TIMESTAMP_MS, T.TIMESTAMP_S, T.DATETIME, T.UNKNOWN, T.NULL})


def _pg_type_name(node: exp.Expression) -> str:
    from rw_cli.common.types import DataType

    try:
        return str(DataType.from_sql(node.type.sql(duckdb_dialect())))
    except Exception:  # noqa: BLE001 - a type we have no name for
        return node.type.sql()


def _boolean_and_number(a: exp.Expression, b: exp.Expression) -> bool:
    """Whether one of `a`, `b` is a boolean value and the other a number. Quantified and
    subquery operands (`x > ALL (...)`, typed boolean by sqlglot) are neither."""
    if any(isinstance(x, (exp.SubqueryPredicate, exp.Subquery, exp.Query)) for x in (a, b)):
        return False
    types = {_type(a), _type(b)}
    return T.BOOLEAN in types and bool(types & _NUMBERS)


def _check_comparable(node: exp.Expression) -> None:
    """A boolean compares with a boolean only (PostgreSQL has no `integer = boolean`, and no
    such column pair in two records), where DuckDB would cast one to the other."""
    left, right = node.this, node.expression
    if _is_row_constructor(left) and _is_row_constructor(right):
        for i, (a, b) in enumerate(zip(left.expressions, right.expressions)):
            if _boolean_and_number(a, b):
                raise BindError(f"cannot compare dissimilar column types {_pg_type_name(a)} and "
                                f"{_pg_type_name(b)} at record column {i + 1}")
        return
    if _boolean_and_number(left, right):
        raise BindError(f"operator does not exist: {_pg_type_name(left)} {_OPERATOR_TEXT[type(node)]} "
                        f"{_pg_type_name(right)}",
                        hint="No operator matches the given name and argument types. "
                             "You might need to add explicit type casts.")


def _is_row_constructor(node: exp.Expression) -> bool:
    return isinstance(node, exp.Anonymous) and node.name.lower() == "row"


def _row_compared_with_struct(node: exp.Expression) -> exp.Expression | None:
    """`struct_value <op> ROW(...)`: the row constructor cast to the struct's type, field by
    field as PostgreSQL coerces a record (`ROW(1, ROW(1, 1))` against struct<a int, b
    struct<x varchar, y int>>); DuckDB has no comparison of a named struct with an unnamed
    one."""
    for struct_side, row_side in (("this", "expression"), ("expression", "this")):
        t = getattr(node.args.get(struct_side), "type", None)
        row = node.args.get(row_side)
        if t is not None and t.this == T.STRUCT and t.expressions and _is_row_constructor(row) \
                and len(row.expressions) == len(t.expressions):
            out = node.copy()
            out.set(row_side, exp.Cast(this=row.copy(), to=t.copy()))
            return out
    return None


_TEMPORAL = {T.DATE, T.TIMESTAMP, T.TIMESTAMPTZ, T.TIME, T.INTERVAL}


def _unknown_temporal_operand(node: exp.Expression) -> exp.Expression | None:
    """A quoted literal beside a date, time or interval in arithmetic takes PostgreSQL's
    type for it: the other operand's where that operator exists (`d - '2024-01-01'` is date -
    date, `i + '1 hour'` interval + interval), else an interval (`ts + '1 hour'`) or, for `*`
    and `/` of an interval, a double (DuckDB finds no single candidate for either)."""
    if not isinstance(node, (exp.Add, exp.Sub, exp.Mul, exp.Div)):
        return None
    left, right = node.this, node.expression
    if _is_text_literal(left) == _is_text_literal(right):
        return None
    other = right if _is_text_literal(left) else left
    t = _type(other)
    if t not in _TEMPORAL:
        return None
    if isinstance(node, (exp.Mul, exp.Div)):
        to = "DOUBLE" if t == T.INTERVAL else None
    elif isinstance(node, exp.Sub) or t == T.INTERVAL:
        to = other.type.sql(dialect=duckdb_dialect())
    else:
        to = "INTERVAL" if t != T.DATE else None  # date + unknown: PostgreSQL finds it ambiguous
    if to is None:
        return None
    literal = left if _is_text_literal(left) else right
    cast = exp.Cast(this=literal.copy(), to=exp.DataType.build(to, dialect="duckdb"))
    return type(node)(this=cast if literal is left else left.copy(), expression=cast if literal is right else right.copy())


def _nested_unary(node: exp.Expression) -> exp.Expression | None:
    """`~ ~ a`, `- ~ a`, `~ - a` with the inner operation parenthesized: DuckDB's generator
    writes `~~a`, `-~a`, `~-a`, and its lexer (PostgreSQL's) reads `~~` as LIKE and `-~`, `~-`
    as operators of their own."""
    unary = (exp.BitwiseNot, exp.Neg)
    if isinstance(node, unary) and isinstance(node.this, unary) \
            and not (isinstance(node, exp.Neg) and isinstance(node.this, exp.Neg)):  # `- -a`: spaced
        out = type(node)(this=exp.Paren(this=node.this.copy()))
        out.type = node.type
        return out
    return None


# an integer type's shifts: the width PostgreSQL computes in (smallint is promoted to int)
_SHIFT_WIDTHS = {T.SMALLINT: 32, T.INT: 32, T.BIGINT: 64}


def _int_shift(node: exp.Expression) -> exp.Expression | None:
    """`x << n` and `x >> n` on integers as PostgreSQL's C shifts: the count taken modulo the
    width computed in, a left shift of a negative number allowed and wrapping around the
    type's width (DuckDB raises for both, and for bits shifted out). The result keeps x's type."""
    if not isinstance(node, (exp.BitwiseLeftShift, exp.BitwiseRightShift)) or node.meta.get("pg_shift"):
        return None
    kind = _type(node.this)
    if kind not in _SHIFT_WIDTHS or _type(node.expression) not in _INTS:
        return None
    width = _SHIFT_WIDTHS[kind]
    count = exp.Paren(this=exp.BitwiseAnd(this=exp.Cast(this=node.expression.copy(), to=exp.DataType.build("INT")),
                                          expression=exp.Literal.number(width - 1)))
    if isinstance(node, exp.BitwiseLeftShift):
        bits = {T.SMALLINT: 16, T.INT: 32, T.BIGINT: 64}[kind]
        out = _fn("pg_shl", node.this.copy(), count, exp.Literal.number(bits))
    else:
        wide = exp.Cast(this=node.this.copy(), to=exp.DataType.build("INT" if width == 32 else "BIGINT"))
        out = exp.BitwiseRightShift(this=wide, expression=count)
        out.meta["pg_shift"] = True
    cast = exp.Cast(this=out, to=node.this.type.copy())
    cast.type = node.this.type.copy()
    return cast


def rewrite_function(node: exp.Expression) -> exp.Expression | None:
    _check_empty_array(node)
    check_array_cast(node)
    _type_null_argument(node)
    lowered = numeric_sql.lower(node)
    if lowered is not None:
        return lowered
    for rewrite in (_bytea_bits, _vector_distance, _populate_record, _populate_map, _map_function, _generate_subscripts, _array_slice,
                    _int256_op, _make_interval, _unnest_nested, _negative_bound, _unknown_temporal_operand,
                    _int_shift, _nested_unary):
        out = rewrite(node)
        if out is not None:
            return out
    if isinstance(node, exp.Bracket):
        return _pg_subscript(node)  # slices: _array_slice, above
    if type(node) in SESSION_VALUES and not node.args.get("this"):
        return exp.Literal.string(SESSION_VALUES[type(node)])
    if isinstance(node, exp.CurrentVersion):
        return exp.Literal.string(_server_version())
    if isinstance(node, exp.WithinGroup):
        return approx_percentile.rewrite(node) or _null_fraction(node)
    if isinstance(node, exp.Filter):
        return filter_into(node)
    if isinstance(node, exp.WidthBucket) and node.args.get("num_buckets") is not None:
        bounds = (node.this, node.args["min_value"], node.args["max_value"])
        return _fn("pg_width_bucket", *(exp.Cast(this=a, to=exp.DataType.build("DOUBLE")) for a in bounds),
                   exp.Cast(this=node.args["num_buckets"], to=exp.DataType.build("INT")))
    if isinstance(node, exp.TimeToStr) and _type(node.this) == T.INTERVAL:
        return _fn("pg_to_char_interval", node.this, node.args["format"])
    if isinstance(node, exp.TimeToStr) and _type(node.this) == T.TIME:  # as PostgreSQL: the time as an interval
        return _fn("pg_to_char_interval", _time_interval(node.this), node.args["format"])
    if isinstance(node, exp.TimeToStr) and _type(node.this) not in _TO_CHAR_TYPES:
        # to_char of a number (PostgreSQL's numeric templates): RisingWave has none either
        fmt = node.args["format"]
        second = "unknown" if isinstance(fmt, exp.Literal) and fmt.is_string else _pg_type_name(fmt)
        raise BindError(f"function to_char({_pg_type_name(node.this)}, {second}) does not exist",
                        hint="to_char formats timestamps, dates, times and intervals")
    if isinstance(node, exp.TimeToStr):
        return _to_char_marks(node)
    if isinstance(node, exp.Format):
        return _format(node)
    if isinstance(node, exp.TimeFromParts) and not node.args.get("nano") and node.args.get("sec") is not None:
        return _fn("pg_make_time", node.args["hour"], node.args["min"], node.args["sec"])
    if isinstance(node, exp.TimestampFromParts) and node.args.get("sec") is not None and not node.args.get("zone"):
        return _fn("pg_make_timestamp", *(node.args[k] for k in ("year", "month", "day", "hour", "min", "sec")))
    if isinstance(node, exp.Dot):
        return _row_field(node)
    if isinstance(node, _COMPARISONS):
        _check_comparable(node)
        row_cast = _row_compared_with_struct(node)
        if row_cast is not None:
            return row_cast
    if isinstance(node, exp.ArrayToString):
        return _array_join(node)
    array_fn = rewrite_array_function(node)
    if array_fn is not None:
        return array_fn
    if isinstance(node, exp.ArrayDistinct):
        return _fn("pg_array_distinct", node.this)
    if isinstance(node, exp.Uuid) and not node.meta.get("text"):
        # RisingWave has no uuid type: gen_random_uuid() is its text (regex-matchable, concatenable)
        inner = node.copy()
        inner.meta["text"] = True
        return exp.Cast(this=inner, to=exp.DataType.build("VARCHAR"))
    if isinstance(node, exp.DPipe) and (_array_depth(node.this) or _array_depth(node.expression)):
        return _array_concat(node.this, node.expression)
    if isinstance(node, exp.DPipe):
        _check_concat_operands(node)
        out = _concat_operator(node)
        if out is not None:
            return out
    if isinstance(node, exp.ArrayOverlaps):
        _check_overlap_operands(node)
    if isinstance(node, exp.ArrayConcat) and len(node.expressions) == 1:
        return _array_concat(node.this, node.expressions[0])
    if isinstance(node, exp.Cast) and node.to.this == T.INTERVAL and _type(node.this) == T.TIME:
        return _time_interval(node.this)  # time -> interval: the time since midnight
    if isinstance(node, (exp.FirstValue, exp.LastValue)):
        return _first_last_aggregate(node)
    if isinstance(node, (exp.Like, exp.ILike)) and isinstance(node.expression, (exp.Any, exp.All)):
        return _like_quantified(node)
    if isinstance(node, exp.MapFromEntries) and isinstance(node.this, exp.Null):
        # an untyped NULL gives no key and value types (RisingWave's binder refuses it)
        raise BindError("Bind error: Cannot implicitly cast 'null:Varchar' to polymorphic type AnyArray")
    if isinstance(node, _COMPARISONS) and (_map_types(node.this) is not None or _map_types(node.expression) is not None):
        # RisingWave's maps have no order and no equality
        sides = [_type_words(x) for x in (node.this, node.expression)]
        raise BindError(f"operator does not exist: {sides[0]} {_OPERATOR_TEXT.get(type(node), '=')} {sides[1]}")
    if isinstance(node, _COMPARISONS) and _quantified_operand(node.expression) is not None:
        return _compare_quantified(node)
    if isinstance(node, (exp.Like, exp.ILike)) and not isinstance(node.parent, exp.Escape):
        return _default_like_escape(node)
    if isinstance(node, exp.Escape) and isinstance(node.this, (exp.Like, exp.ILike)) \
            and not node.meta.get("like_checked"):
        out = _like_escape(node.this.copy(), node.expression.copy())
        out.meta["like_checked"] = True
        return out
    if isinstance(node, exp.Cast) and node.to.this == T.ARRAY and not node.meta.get("array_text"):
        fixed = _array_text(node)
        if fixed is not None:
            fixed.meta["array_text"] = True
            return fixed
    if isinstance(node, (exp.StrToTime, exp.StrToDate)):
        _parse_marks(node)
    if isinstance(node, exp.Cast) and node.to.this == T.TIMESTAMPTZ:
        fixed = _timestamptz_text(node)
        if fixed is not None:
            return fixed
    if isinstance(node, exp.GroupConcat):
        return _string_agg_lists(node)
    if isinstance(node, exp.Overlay) and node.args.get("from_") is not None and not node.meta.get("checked"):
        # PostgreSQL: substring(s, 1, from - 1) || new || substring(s, from + for): a start
        # before 1 (or a negative count) is a negative substring length
        start = exp.Cast(this=node.args["from_"].copy(), to=exp.DataType.build("BIGINT"))
        bad = exp.LT(this=start, expression=exp.Literal.number(1))
        count = node.args.get("for_")
        if count is not None:
            bad = exp.or_(bad, exp.LT(this=exp.Cast(this=count.copy(), to=exp.DataType.build("BIGINT")),
                                     expression=exp.Literal.number(0)))
        inner = node.copy()
        inner.meta["checked"] = True
        return exp.Case(ifs=[exp.If(this=bad, true=_fn("error", exp.Literal.string(
            "negative substring length not allowed")))], default=inner)
    if isinstance(node, exp.Date) and node.this is None and not node.expressions:
        raise BindError("Invalid function `date`: unexpected arguments number")
    if isinstance(node, exp.CurrentTimestamp) and node.this is not None and node.meta.get("written_name") == "now":
        raise BindError("Invalid function `now`: unexpected arguments number")  # now() takes none
    if isinstance(node, exp.Literal) and not node.is_string and ("e" in node.this or "E" in node.this):
        return _numeric_literal(node)
    if isinstance(node, exp.Values):
        _values_timestamptz(node)
        return None
    if isinstance(node, exp.Select):
        _interval_keys(node)
        return None
    if isinstance(node, exp.ByteString):  # E'...': escapes were resolved by the tokenizer
        return exp.Literal.string(node.this)
    if isinstance(node, exp.Interval):
        return _interval_literal(node)
    if isinstance(node, exp.Cast) and node.to.this == T.INTERVAL and _is_text_literal(node.this):
        return _interval_constant(node.this.this)
    if isinstance(node, exp.Cast) and node.to.this in _JSON_TYPES and \
            (_is_text_literal(node.this) or _type(node.this) in _TEXT):
        return exp.Cast(this=_fn("pg_jsonb_in", node.this), to=exp.DataType.build("JSON"))
    if isinstance(node, exp.Cast) and node.to.this in _NUMBERS and _type(node.this) in _JSON_TYPES \
            and not node.meta.get("jsonb_number"):
        # only a jsonb number casts to a number (RisingWave's error names the jsonb's kind)
        checked = exp.Cast(this=_fn("pg_jsonb_number", node.this), to=node.to.copy())
        checked.meta["jsonb_number"] = True
        return checked
    jsonb = rewrite_jsonb(node, output_text)
    if jsonb is not None:
        return jsonb
    if isinstance(node, exp.Collate):
        name = node.expression.name if isinstance(node.expression, (exp.Identifier, exp.Column, exp.Var)) \
            else str(node.expression.this) if isinstance(node.expression, exp.Literal) else node.expression.sql()
        quoted = isinstance(node.expression, exp.Column) and node.expression.this.quoted or \
            isinstance(node.expression, exp.Identifier) and node.expression.quoted
        if name not in ("C", "POSIX") or not quoted:
            raise BindError(f'collation "{name}" for encoding "UTF8" does not exist')
        t = _type(node.this)
        if not (_is_text_literal(node.this) or t in _TEXT or t is None or t == T.UNKNOWN):
            raise BindError(f"collations are not supported by type {t.value.lower()}")
        return node.this
    if isinstance(node, exp.Mul) and _type(node.this) == T.TIME and _type(node.expression) in _NUMBERS:
        return _fn("pg_interval_mul", _time_interval(node.this),  # time * n is an interval
                   exp.Cast(this=node.expression, to=exp.DataType.build("DOUBLE")))
    if isinstance(node, exp.Mul) and _type(node.expression) == T.TIME and _type(node.this) in _NUMBERS:
        return _fn("pg_interval_mul", _time_interval(node.expression),
                   exp.Cast(this=node.this, to=exp.DataType.build("DOUBLE")))
    if isinstance(node, (exp.Add, exp.Sub)):
        added = _timestamptz_plus_interval(node)
        if added is not None:
            return added
    if isinstance(node, exp.Sub) and _type(node.this) == T.TIME and _type(node.expression) == T.TIME:
        return exp.Sub(this=_time_interval(node.this), expression=_time_interval(node.expression))
    if isinstance(node, (exp.EQ, exp.NEQ, exp.LT, exp.LTE, exp.GT, exp.GTE)) and \
            {_type(node.this), _type(node.expression)} == {T.TIME, T.INTERVAL}:
        # time compared with an interval: the time as the interval since midnight
        for side in ("this", "expression"):
            if _type(node.args[side]) == T.TIME:
                node.set(side, _time_interval(node.args[side]))
        return node
    if isinstance(node, exp.Is) and isinstance(node.expression, exp.Null) and node.expression.meta.get("unknown"):
        t = _type(node.this)
        if _is_text_literal(node.this):  # an unknown-type literal: a boolean, so never unknown
            text = node.this.this.strip().lower()
            if text and (any(w.startswith(text) for w in ("true", "yes", "false", "no"))
                         or text in ("on", "of", "off", "1", "0")):
                return exp.false()
            raise BindError(f'invalid input syntax for type boolean: "{node.this.this}"')
        if t is not None and t not in (T.BOOLEAN, T.NULL, T.UNKNOWN):
            raise BindError(f"argument of IS UNKNOWN must be type boolean, not type {t.value.lower()}")
    if isinstance(node, (exp.Add, exp.Sub, exp.Mul, exp.Div, exp.Mod)):
        _unknown_literal_operand(node)
    if isinstance(node, (exp.Add, exp.Sub, exp.Mul, exp.Div)):
        _widen_real(node)
    if isinstance(node, _COMPARISONS) and {_type(node.this), _type(node.expression)} == {T.FLOAT, T.DECIMAL}:
        _widen_real(node)  # real compared with numeric: both in double precision, as RisingWave does
    if isinstance(node, exp.Sum) and _type(node.this) == T.INTERVAL:
        return _fn("pg_sum_interval", node.this)
    if isinstance(node, exp.Avg) and _type(node.this) == T.INTERVAL and not isinstance(node.parent, exp.Window) \
            and not isinstance(node.this, exp.Distinct):
        # the sum divided as PostgreSQL divides an interval (as an MV's avg does)
        count = exp.Cast(this=exp.Count(this=node.this.copy()), to=exp.DataType.build("DOUBLE"))
        return _fn("pg_interval_div", _fn("pg_sum_interval", node.this), count)
    if isinstance(node, (exp.Sum, exp.Min, exp.Max)) and _type(node.this) == T.FLOAT \
            and not isinstance(node.parent, exp.Cast):
        return exp.Cast(this=node.copy(), to=exp.DataType.build("FLOAT"))
    if isinstance(node, exp.Cbrt) or (isinstance(node, exp.Anonymous) and node.name.lower() == "cbrt"):
        arg = node.this if isinstance(node, exp.Cbrt) else node.expressions[0]
        return _fn("pg_cbrt", exp.Cast(this=arg, to=exp.DataType.build("DOUBLE")))
    if isinstance(node, (exp.Mul, exp.Div)):
        lt, rt = _type(node.this), _type(node.expression)
        if isinstance(node, exp.Mul) and {lt, rt} & {T.INTERVAL} and ({lt, rt} - {T.INTERVAL}) <= _INTS:
            return None  # interval * integer: DuckDB's native product has PostgreSQL's result
        if lt == T.INTERVAL and rt in _NUMBERS:
            name = "pg_interval_div" if isinstance(node, exp.Div) else "pg_interval_mul"
            return _fn(name, node.this, exp.Cast(this=node.expression, to=exp.DataType.build("DOUBLE")))
        if rt == T.INTERVAL and lt in _NUMBERS and isinstance(node, exp.Mul):
            return _fn("pg_interval_mul", node.expression, exp.Cast(this=node.this, to=exp.DataType.build("DOUBLE")))
    if isinstance(node, exp.Sign) and not node.meta.get("typed"):
        return _sign(node)
    if isinstance(node, exp.Div):
        lt, rt = _type(node.this), _type(node.expression)
        if not (lt in _INTS and rt in _INTS):
            return _fn("pg_div", node.this, node.expression)
        return None
    if isinstance(node, exp.Mod):
        _no_float_modulo(node)
        return _fn("pg_mod", node.this, node.expression)
    if isinstance(node, exp.Substring):
        name = "pg_bytea_substr" if _type(node.this) in _BYTES else "pg_substr"  # bytes of a bytea
        if node.args.get("length") is not None:
            return _fn(name, node.this, node.args.get("start") or exp.Literal.number(1), node.args["length"])
        return _fn(f"{name}1", node.this, node.args.get("start") or exp.Literal.number(1))
    if isinstance(node, exp.Escape) and isinstance(node.this, exp.SimilarTo):
        return _similar_escape(node)
    if isinstance(node, exp.SimilarTo) and isinstance(node.parent, exp.Escape):
        return None  # rewritten with its escape character, above
    if isinstance(node, exp.SimilarTo) and _is_text_literal(node.expression):
        return _fn("regexp_full_match", node.this, exp.Literal.string(_similar_to_regex(node.expression.this)))
    if isinstance(node, exp.SimilarTo) and _type(node.expression) in _TEXT:
        return _fn("regexp_full_match", node.this, _fn("pg_similar_regex", node.expression))
    if isinstance(node, exp.Hex) or (isinstance(node, exp.Anonymous) and node.name.lower() == "to_hex"):
        arg = node.this if isinstance(node, exp.Hex) else node.expressions[0]
        at = _type(arg)
        if at is None and isinstance(arg, exp.Neg) and isinstance(arg.this, exp.Literal):
            at = _type(arg.this)
        if at in (T.INT, T.SMALLINT, T.TINYINT):  # two's complement in 32 bits
            big = exp.Cast(this=arg, to=exp.DataType.build("BIGINT"))
            arg = exp.If(this=exp.LT(this=big, expression=exp.Literal.number(0)),
                         true=exp.Add(this=big.copy(), expression=exp.Literal.number(4294967296)),
                         false=big.copy())
        return _fn("lower", _fn("hex", exp.Cast(this=arg, to=exp.DataType.build("BIGINT"))))
    if isinstance(node, (exp.Extract, DatePart)):
        return rewrite_extract(node)
    if isinstance(node, SingleValue):
        return _single_value(node)
    digest = _sha_digest(node)
    if digest is not None:
        return digest
    if isinstance(node, exp.Encode):
        return _fn("pg_encode", _bytea(node.this), node.args.get("charset") or exp.Literal.string("hex"))
    if isinstance(node, exp.Decode):
        return _fn("pg_decode", node.this, node.args.get("charset") or exp.Literal.string("hex"))
    if isinstance(node, exp.Cast) and node.to.this in (T.VARBINARY, T.BINARY) \
            and (_is_text_literal(node.this) or _type(node.this) in _TEXT):
        return _fn("pg_bytea_in", node.this)
    if isinstance(node, exp.Cast) and node.to.this == T.BOOLEAN \
            and (_is_text_literal(node.this) or _type(node.this) in _TEXT):
        return _fn("pg_text_to_bool", node.this)
    if isinstance(node, exp.Cast) and node.to.this == T.DATE \
            and (_is_text_literal(node.this) or _type(node.this) in _TEXT):
        # RisingWave reads YYYY-MM-DD only (a constant in that form is DuckDB's to cast)
        if not (_is_text_literal(node.this) and _DATE_TEXT.fullmatch(node.this.this)):
            return _fn("pg_date_in", node.this)
    if isinstance(node, exp.Cast) and node.to.this in _TEXT and _type(node.this) == T.ARRAY:
        t = node.this.type
        return _array_text_out(node.this, t.expressions[0] if t.expressions else None)
    if isinstance(node, exp.Cast) and node.to.this == T.TIME and _type(node.this) == T.TIMESTAMPTZ:
        # the time of day in the session's zone (DuckDB has no direct cast)
        return exp.Cast(this=exp.Cast(this=node.this, to=exp.DataType.build("TIMESTAMP")), to=node.to)
    if isinstance(node, exp.Cast) and node.to.this in _TEXT and _type(node.this) == T.STRUCT \
            and node.this.type.expressions:
        return _struct_text_out(node.this, node.this.type)  # `(1,"a b")`, as record_out writes it
    if isinstance(node, exp.Cast) and node.to.this in _TEXT and _type(node.this) == T.MAP \
            and len(node.this.type.expressions) == 2:
        return _map_text_out(node.this, node.this.type)  # `{a:1}`, as RisingWave writes a map
    if isinstance(node, exp.Cast) and node.to.this in _TEXT and _row_constructor(node.this) is not None:
        return _row_text_out(_row_constructor(node.this).expressions)
    if isinstance(node, exp.Cast) and node.to.this in _TEXT and _type(node.this) in _TEMPORAL_OUT:
        # `-08:00`, `.500`, `2 mons`: as RisingWave's cast (and its query output) writes it
        return _fn(_TEMPORAL_OUT[_type(node.this)], node.this)
    if isinstance(node, exp.Cast) and node.to.this in _TEXT and _type(node.this) in _BYTES:
        # bytea as text is its output form (hex), as PostgreSQL casts it: '\x61', not 'a'
        return exp.DPipe(this=exp.Literal.string("\\x"), expression=_fn("lower", _fn("hex", node.this)))
    if isinstance(node, exp.Length) and _type(node.this) in _BYTES:
        return _fn("octet_length", node.this)  # length(bytea) counts bytes
    if isinstance(node, exp.StringToArray):
        null = node.args.get("null") or exp.Null()
        return _fn("pg_string_to_array", node.this, node.expression, null)
    if isinstance(node, exp.Concat):
        return _concat(node)
    if isinstance(node, exp.TimestampTrunc) or isinstance(node, exp.DateTrunc):
        return _date_trunc(node)
    if isinstance(node, exp.Round) and node.args.get("decimals") is None:
        arg = node.this
        if _is_text_literal(arg) or _type(arg) in (T.DOUBLE, T.FLOAT):
            return _fn("round_even", exp.Cast(this=arg, to=exp.DataType.build("DOUBLE")), exp.Literal.number(0))
        return None
    if isinstance(node, exp.StrToDate) and not isinstance(node.args.get("format"), exp.Literal):
        # a template that is not a constant: DuckDB's strptime needs one, read row by row
        return _fn("pg_to_date", node.this, node.args["format"])
    if isinstance(node, exp.StrToTime) and not isinstance(node.parent, exp.Cast):
        # to_timestamp(text, format) is timestamptz in PostgreSQL
        return exp.Cast(this=_exact_fractions(node.copy()), to=exp.DataType.build("TIMESTAMPTZ"))
    if isinstance(node, _MATH_NODES):
        return _math_function(node)
    if isinstance(node, exp.Anonymous):
        return _anonymous(node)
    return None


_ELAPSED_UNITS = {"HOUR", "MINUTE", "SECOND", "MILLISECOND", "MICROSECOND"}


def _timestamptz_plus_interval(node: exp.Add | exp.Sub) -> exp.Expression | None:
    """timestamptz ± interval (and interval + timestamptz) with PostgreSQL's days and months:
    added to the local time in the session's zone (`pg_tstz_add`). An interval written in
    hours, minutes or seconds is elapsed time: DuckDB's own sum is that."""
    lt, rt = _type(node.this), _type(node.expression)
    if lt == T.TIMESTAMPTZ and rt == T.INTERVAL:
        ts, iv = node.this, node.expression
    elif isinstance(node, exp.Add) and lt == T.INTERVAL and rt == T.TIMESTAMPTZ:
        ts, iv = node.expression, node.this
    else:
        return None
    unit = iv.args.get("unit") if isinstance(iv, exp.Interval) else None
    if unit is not None and unit.name.upper().rstrip("S") in _ELAPSED_UNITS:
        return None
    if isinstance(node, exp.Sub):
        iv = exp.Neg(this=exp.Paren(this=iv.copy()))
    return _fn("pg_tstz_add", ts.copy(), iv.copy() if isinstance(node, exp.Add) else iv)


# row ids (a table's `_row_id`, a changelog's `_changelog_row_id`: RisingWave's serial) hold
# the milliseconds since RisingWave's epoch above their low 22 bits (rw_cli.common.row_id)
_ROW_ID_NAMES = ("_row_id", "_changelog_row_id")
_ROW_ID_SHIFT = 22


def row_id_casts(tree: exp.Expression) -> exp.Expression:
    """`_row_id::timestamptz` (a row id cast to the time it was made, as RisingWave casts its
    serial type) as the expression computing that time, before binding: the planner renames
    columns, so a SELECT and an MV must both see the row id by its name here."""
    for cast in list(tree.find_all(exp.Cast)):
        col = cast.this
        if cast.to.this == T.TIMESTAMPTZ and isinstance(col, exp.Column) and \
                (col.name in _ROW_ID_NAMES or col.name.endswith("._row_id")):
            cast.replace(_row_id_time(col))
    return tree


def _row_id_time(node: exp.Expression) -> exp.Expression:
    """serial::timestamptz (RisingWave): the time the row id was made."""
    from rw_cli.common.epoch import EPOCH_ORIGIN_MS

    ms = exp.Add(this=exp.BitwiseRightShift(this=node.copy(), expression=exp.Literal.number(_ROW_ID_SHIFT)),
                 expression=exp.Literal.number(EPOCH_ORIGIN_MS))
    return _fn("to_timestamp", exp.Div(this=exp.Paren(this=ms), expression=exp.Literal.number("1000.0")))


def _sign(node: exp.Sign) -> exp.Expression:
    """sign(x) has x's type, double precision here (an integer is a double, as PostgreSQL
    resolves it; a numeric's is rw_cli.sql.numeric_sql's); DuckDB's is a tinyint."""
    inner = node.copy()
    inner.meta["typed"] = True
    return exp.Cast(this=inner, to=exp.DataType.build("DOUBLE"))


# PostgreSQL's math functions that raise on arguments outside their domain -> our macros
# (rw_cli.engine.duck_functions) raising its errors
_MATH_MACRO_OF = {exp.Sqrt: "pg_sqrt", exp.Ln: "pg_ln", exp.Exp: "pg_exp", exp.Acos: "pg_acos",
                  exp.Asin: "pg_asin"}
_MATH_NODES = (*_MATH_MACRO_OF, exp.Log, exp.Pow)


def _math_function(node: exp.Expression) -> exp.Expression:
    """sqrt, ln, log, exp, power, acos, asin: PostgreSQL's errors for a bad argument. A quoted
    literal argument (type unknown) is a double precision, the type PostgreSQL resolves it to
    (the macros compare it with numbers, which would read '1e200' as an integer)."""
    for key in ("this", "expression"):
        arg = node.args.get(key)
        if arg is not None and _is_text_literal(arg):
            node.set(key, exp.Cast(this=arg.copy(), to=exp.DataType.build("DOUBLE")))
    if isinstance(node, exp.Pow):
        return _fn("pg_pow", node.this, node.expression)
    if isinstance(node, exp.Log):
        if node.expression is None:  # log(x) is the base 10 logarithm
            return _fn("pg_log10", node.this)
        return _fn("pg_log", node.this, node.expression)
    return _fn(_MATH_MACRO_OF[type(node)], node.this)


# to_timestamp's MS and US read exactly 3 and 6 digits in RisingWave (chrono's %.3f, %.6f);
# DuckDB's %g and %f read fewer too
_EXACT_FRACTIONS = {"%g": r"\d{3}", "%f": r"\d{6}"}
_DIRECTIVE = re.compile(r"%-?[A-Za-z%]")


def _exact_fractions(node: exp.StrToTime) -> exp.Expression:
    """strptime(s, f) whose constant format reads milliseconds or microseconds: an error
    unless s has exactly that many fraction digits (the format as a regular expression:
    those fixed widths, any text for the other fields)."""
    fmt = node.args.get("format")
    if not isinstance(fmt, exp.Literal) or not any(d in fmt.this for d in _EXACT_FRACTIONS):
        return node
    pattern, last = [], 0
    for m in _DIRECTIVE.finditer(fmt.this):
        pattern.append(re.escape(fmt.this[last:m.start()]))
        pattern.append(_EXACT_FRACTIONS.get(m.group(0), "%" if m.group(0) == "%%" else ".*?"))
        last = m.end()
    pattern.append(re.escape(fmt.this[last:]))
    text = node.this
    ok = _fn("regexp_full_match", text.copy(), exp.Literal.string("".join(pattern)))
    bad = _fn("error", exp.Concat(expressions=[exp.Literal.string('invalid input for to_timestamp: "'),
                                               text.copy(), exp.Literal.string('" (fraction of seconds)')]))
    return exp.Case(ifs=[exp.If(this=exp.or_(ok, exp.Is(this=text.copy(), expression=exp.Null())),
                                true=node)], default=exp.Cast(this=bad, to=exp.DataType.build("TIMESTAMP")))


def _interval_keys(select: exp.Select) -> None:
    """RisingWave groups by a key's hash form, and an interval's is its normalized value
    (months of 30 days, days of 24 hours, one sign): DISTINCT and GROUP BY output interval
    keys that way (`30 days` and `1 mon` are one group, shown `1 mon`), and expressions over
    a GROUP BY key see it so. Equal intervals are one group in DuckDB too; only the value
    shown changes."""
    distinct = select.args.get("distinct")
    group = select.args.get("group")
    if distinct is not None and distinct.args.get("on") is not None:
        return
    keys = {g.sql() for g in group.expressions if _type(g) == T.INTERVAL} if group is not None else set()
    if distinct is None and not keys:
        return

    def key(n: exp.Expression) -> exp.Expression:
        # within the item (a copy): not an aggregate's argument, nor a subquery's column
        if n.sql() in keys and _type(n) == T.INTERVAL and n.find_ancestor(exp.AggFunc, exp.Select) is None:
            return _interval_key(n)
        return n

    for item in select.expressions:
        inner = item.this if isinstance(item, exp.Alias) else item
        out = inner.transform(key) if keys else inner
        if out.sql() == inner.sql():
            if distinct is None or _type(inner) != T.INTERVAL:
                continue
            out = _interval_key(inner)
        if isinstance(item, exp.Alias):
            item.set("this", out)
        else:
            item.replace(exp.alias_(out, item.output_name or "_col"))


def _interval_key(n: exp.Expression) -> exp.Expression:
    out = _fn("pg_interval_key", n.copy())
    out.type = exp.DataType.build("INTERVAL")
    return out


# the trigonometric functions in degrees (rw_cli.engine.duck_functions), by argument count
_DEGREE_FUNCTIONS = {"sind": 1, "cosd": 1, "tand": 1, "cotd": 1, "asind": 1, "acosd": 1, "atand": 1, "atan2d": 2}


def _anonymous(node: exp.Anonymous) -> exp.Expression | None:
    name = node.name.lower()
    args = node.expressions
    if name == "format_type" and len(args) == 2:  # PostgreSQL's type names (DuckDB's macro is its own)
        return _fn("pg_format_type", *args)
    if name == "octet_length" and len(args) == 1 and _type(args[0]) not in (T.VARBINARY, T.BINARY, T.BLOB):
        return _fn("strlen", args[0])
    if name == "regexp_match" and len(args) in (2, 3):
        return _fn("pg_regexp_match", *args, *([] if len(args) == 3 else [exp.Literal.string("")]))
    if name == "convert_from" and len(args) == 2:
        return _fn("decode", _bytea(args[0]))
    if name == "convert_to" and len(args) == 2:
        return _fn("encode", args[0])
    if name in _DEGREE_FUNCTIONS and len(args) == _DEGREE_FUNCTIONS[name]:
        return _fn(f"pg_{name}", *(exp.Cast(this=a, to=exp.DataType.build("DOUBLE")) for a in args))
    if name == "gamma" and len(args) == 1:
        return _fn("pg_gamma", exp.Cast(this=args[0], to=exp.DataType.build("DOUBLE")))
    if name == "lgamma" and len(args) == 1:
        return _fn("pg_lgamma", exp.Cast(this=args[0], to=exp.DataType.build("DOUBLE")))
    if name in ("scale", "min_scale", "trim_scale") and len(args) == 1:
        return _scale_function(name, args[0])
    if name == "current_setting" and args:
        args = [_text_constant(args[0]), *args[1:]]  # `($1)::varchar` of a driver's bound parameter: the name
    if name == "current_setting" and args and _is_text_literal(args[0]):
        from rw_cli.common.session_config import default

        value = default(args[0].this)
        if value is None:
            if len(args) > 1 and isinstance(args[1], exp.Boolean) and args[1].this:
                return exp.Null()
            raise BindError(f'unrecognized configuration parameter "{args[0].this}"')
        return exp.Literal.string(value)
    if name == "set_config" and len(args) == 3:
        return exp.Cast(this=args[1], to=exp.DataType.build("VARCHAR"))
    if (name, len(args)) in (("make_date", 3), ("make_timestamptz", 6), ("make_timestamptz", 7)):
        return _fn(f"pg_{name}", *args)
    if name in ("proctime", "clock_timestamp") and not args:
        # RisingWave's processing time, and the wall clock: the statement's now() (a statement
        # is one instant here)
        return exp.CurrentTimestamp()
    if name == "map_filter" and len(args) == 2:
        return _map_filter(args[0], args[1])
    if name in ("array_is_overlap", "array_is_intersect") and len(args) == 2:  # RisingWave's names of &&
        overlaps = exp.ArrayOverlaps(this=args[0], expression=args[1])
        _check_overlap_operands(overlaps)
        return overlaps
    if name == "rw_vnode":
        from rw_cli.sql.vnode import rw_vnode

        return rw_vnode(args)
    if name in ("crc32", "crc32c") and len(args) == 1:
        return _fn(f"pg_{name}", _typed_argument(name, args[0], _BYTES, _bytea))
    if name in ("num_nulls", "num_nonnulls") and args:
        # how many arguments are (not) NULL: PostgreSQL's variadic counts
        flags = [exp.Case(ifs=[exp.If(this=exp.Is(this=a.copy(), expression=exp.Null()),
                                      true=exp.Literal.number(int(name == "num_nulls")))],
                          default=exp.Literal.number(int(name == "num_nonnulls"))) for a in args]
        total = flags[0]
        for f in flags[1:]:
            total = exp.Add(this=total, expression=f)
        return exp.Cast(this=exp.paren(total), to=exp.DataType.build("INT"))
    if name == "quote_nullable" and len(args) == 1:
        text = exp.Cast(this=_text_of(args[0].copy()), to=exp.DataType.build("VARCHAR"))
        return _fn("coalesce", _fn("quote_literal", text), exp.Literal.string("NULL"))
    if name == "int8send" and len(args) == 1:
        return _fn("pg_int8send", _typed_argument(name, args[0], _INTS, lambda a: exp.Cast(
            this=a, to=exp.DataType.build("BIGINT"))))
    if name == "int8recv" and len(args) == 1:
        return _fn("pg_int8recv", _typed_argument(name, args[0], _BYTES, _bytea))
    if name == "casefold" and len(args) == 1:
        return _fn("pg_casefold", _typed_argument(name, args[0], _TEXT, lambda a: a))
    dims = array_dimension_function(name, args)
    if dims is not None:
        return dims
    if name == "pg_typeof" and len(args) == 1:
        if _is_text_literal(args[0]):
            return exp.Literal.string("unknown")  # a quoted literal has no type yet
        return _fn("pg_typeof_name", args[0])
    _check_known(node)
    return None


def _sha_digest(node: exp.Expression) -> exp.Expression | None:
    """sha1 / sha224 / sha256 / sha384 / sha512 of a bytea: the digest's bytes (a bytea, as
    PostgreSQL's), each of its own width (DuckDB's sha1 is hex text, and it has no other)."""
    if isinstance(node, exp.SHA2Digest):
        bits = node.args.get("length")
        bits = int(bits.this) if isinstance(bits, exp.Literal) else 256
    elif isinstance(node, exp.SHA):
        bits = 1
    elif isinstance(node, exp.Anonymous) and node.name.lower() in ("sha224", "sha384", "sha512", "sha256", "sha1") \
            and len(node.expressions) == 1:
        bits = int(node.name.lower()[3:])
    else:
        return None
    return _fn(f"pg_sha{bits}", _bytea(node.this if not isinstance(node, exp.Anonymous) else node.expressions[0]))


def _map_filter(m: exp.Expression, fn: exp.Expression) -> exp.Expression:
    """map_filter(m, |k, v| cond): the entries of map `m` for which cond holds, as a map (NULL
    for a NULL map), with RisingWave's binding errors."""
    if not isinstance(fn, exp.Lambda) or len(fn.expressions) != 2:
        got = len(fn.expressions) if isinstance(fn, exp.Lambda) else 0
        raise BindError(f"Lambda must have exactly two parameters (key, value), got {got}")
    t = getattr(m, "type", None)
    if t is not None and t.this not in (T.MAP, T.NULL, T.UNKNOWN):
        from rw_cli.common.types import DataType

        try:
            got = str(DataType.from_sql(t.sql(duckdb_dialect())))
        except Exception:  # noqa: BLE001 - a type we have no name for
            got = t.sql()
        raise BindError(f"Input must be Map type, got {got}")
    entry = exp.to_identifier("__entry")
    fields = {fn.expressions[0].name: "key", fn.expressions[1].name: "value"}

    def field(node: exp.Expression) -> exp.Expression:
        if isinstance(node, (exp.Identifier, exp.Column)) and not isinstance(node.parent, exp.Column) \
                and node.name in fields:
            return _fn("struct_extract", exp.column(entry.copy()), exp.Literal.string(fields[node.name]))
        return node

    if isinstance(fn.this, (exp.Binary, exp.Literal, exp.Neg)) \
            and not isinstance(fn.this, (exp.Predicate, exp.Connector, exp.Is)):
        raise BindError("Lambda must return Boolean type")  # arithmetic or a number: not a condition
    test = fn.this.transform(field)
    kept = _fn("list_filter", _fn("map_entries", m), exp.Lambda(this=test, expressions=[entry]))
    # no entry kept is NULL, as RisingWave's map_filter returns
    return _fn("map_from_entries", _fn("nullif", kept, exp.Array(expressions=[])))


def _typed_argument(name: str, arg: exp.Expression, types: set, literal) -> exp.Expression:
    """The one argument of a function of one parameter type (`types`): a quoted literal
    read as that type (`literal`), NULL as is; another type is PostgreSQL's error."""
    if _is_text_literal(arg):
        return literal(arg)
    t = _type(arg)
    if t in types or t in (None, T.NULL, T.UNKNOWN):
        return arg
    call = exp.Anonymous(this=name, expressions=[arg])
    _check_known(call, known=False)
    return arg


_QUANTIFIERS = ("all", "some")  # `x = ALL (array)`: syntax DuckDB reads, not a function


def _check_known(node: exp.Anonymous, known: bool = True) -> None:
    """A call of a name no function has (or of no function for its argument types, when not
    `known`) fails as PostgreSQL's does, naming the argument types (the caller annotated
    them), before DuckDB words it its own way."""
    from rw_cli.engine.duck import function_names

    name = node.name.lower()
    if known and (name in function_names() or name in _QUANTIFIERS):
        return
    from rw_cli.common.types import DataType

    def pg_name(arg: exp.Expression) -> str:
        t = getattr(arg, "type", None)
        if t is None or t.this in (T.UNKNOWN, T.NULL):
            return "unknown"
        try:
            return str(DataType.from_sql(t.sql(duckdb_dialect())))
        except Exception:  # noqa: BLE001 - a type we have no name for: PostgreSQL's word
            return "unknown"

    types = ", ".join(pg_name(a) for a in node.expressions)
    raise BindError(f"function {name}({types}) does not exist",
                    hint="No function matches the given name and argument types. "
                         "You might need to add explicit type casts.")


def _scale_function(name: str, arg: exp.Expression) -> exp.Expression:
    """scale, min_scale and trim_scale of a numeric (an integer is one of scale 0)."""
    arg = numeric_sql.to_numeric(arg) or arg
    if name == "trim_scale":
        return numeric_sql.call("rw_num_trim_scale", arg)
    return numeric_sql.call(f"rw_num_{name}", arg, t="INT")


def _text_of(arg: exp.Expression) -> exp.Expression:
    """An argument as PostgreSQL's output function writes it (used by concat)."""
    t = _type(arg)
    if t == T.BOOLEAN or isinstance(arg, exp.Boolean):
        return _fn("pg_bool_out", arg)
    if t == T.DECIMAL:
        return numeric_sql.call("rw_num_out", arg, t="VARCHAR")
    if t == T.DOUBLE:
        return _fn("pg_float8_out", arg)
    if t == T.FLOAT:
        return _fn("pg_float4_out", arg)
    if t == T.ARRAY:
        return _array_text_out(arg, arg.type.expressions[0] if arg.type.expressions else None)
    if t in _TEMPORAL_OUT:
        return _fn(_TEMPORAL_OUT[t], arg)
    if _row_constructor(arg) is not None:
        return _row_text_out(_row_constructor(arg).expressions)
    if t == T.STRUCT and arg.type.expressions:
        return _struct_text_out(arg, arg.type)
    if t == T.MAP and len(arg.type.expressions) == 2:
        return _map_text_out(arg, arg.type)
    return arg


def output_text(arg: exp.Expression) -> exp.Expression:
    """A value as varchar in its type's text form, the one a query shows (booleans as t/f,
    floats, timestamps, bytea `\\x..`, records and maps as RisingWave writes them)."""
    if _type(arg) in _BYTES:
        return exp.DPipe(this=exp.Literal.string("\\x"), expression=_fn("lower", _fn("hex", arg)))
    text = _text_of(arg)
    return text if _type(text) in _TEXT else exp.Cast(this=text, to=exp.DataType.build("VARCHAR"))


def _concat_operator(node: exp.DPipe) -> exp.Expression | None:
    """`a || b` with a float operand writes it as PostgreSQL's output function does, as
    concat() does (`'z' || 3::real` is `z3`, where DuckDB's cast writes `3.0`). (A boolean is
    cast, not output: `'x' || true` is `xtrue`; numeric is numeric_sql's.) A timestamptz is
    written as its cast to text writes it (`-08:00`)."""
    sides = [node.this, node.expression]
    new = [_text_of(x) if _type(x) in (T.FLOAT, T.DOUBLE, T.STRUCT, T.MAP, *_TEMPORAL_OUT) or _row_constructor(x) is not None
           else x for x in sides]
    if all(a is b for a, b in zip(new, sides)):
        return None
    out = node.copy()
    out.set("this", new[0].copy())
    out.set("expression", new[1].copy())
    return out


def _concat(node: exp.Concat) -> exp.Expression | None:
    args = node.expressions
    if not args:
        raise BindError("function concat() does not exist")
    new = [_text_of(a) for a in args]
    if all(a is b for a, b in zip(new, args)):
        return None
    out = node.copy()
    out.set("expressions", [a.copy() if a is not b else b.copy() for a, b in zip(new, args)])
    return out


_UNIT_ABBREVIATIONS = ("s", "ms", "us", "m", "h", "d", "w", "y", "mon", "sec", "min")


def _unit_is_column(unit: exp.Expression) -> bool:
    """date_trunc's first argument written as a bare name no unit has: a column (sqlglot
    reads every bare name there as a unit)."""
    if not isinstance(unit, exp.Var):
        return False
    text = unit.name.lower()
    return text not in _DATE_TRUNC_UNITS and text not in _UNIT_ABBREVIATIONS \
        and re.fullmatch(r"[a-z_][a-z0-9_]*", text) is not None


def range_rows(tree: exp.Expression) -> exp.Expression:
    """range(a, b [, step]) outside FROM is a set-returning function, as generate_series is
    (RisingWave's range: the series before b): its rows are the elements of DuckDB's range
    list. In FROM, DuckDB's range table function is the same series."""
    for node in list(tree.find_all(exp.Anonymous)):
        if node.name.lower() == "range" and len(node.expressions) in (2, 3) \
                and not isinstance(node.parent, exp.Table):
            rows = exp.Unnest(expressions=[node.copy()])
            # a select item keeps its name (`range`, not `unnest`)
            named = exp.Alias(this=rows, alias=exp.to_identifier("range"))
            node.replace(named if isinstance(node.parent, exp.Select) else rows)
    return tree


def date_trunc_unit_columns(tree: exp.Expression) -> exp.Expression:
    """`date_trunc(field, ts)` where `field` is a column: a column before binding, so that it
    is qualified and planned as any column is (in an MV, read from the input's position)."""
    for node in list(tree.find_all(exp.TimestampTrunc, exp.DateTrunc)):
        unit = node.args.get("unit")
        if unit is not None and node.meta.get("bare_unit") and _unit_is_column(unit):
            node.set("unit", exp.column(unit.name))
    return tree


_SUB_DAY_UNITS = {"microseconds", "milliseconds", "second", "minute", "hour"}


def _date_trunc_in_zone(unit: exp.Expression, ts: exp.Expression, zone: exp.Expression | None) -> exp.Expression:
    """A timestamp with time zone truncated in `zone` (the session's when None): its local
    time truncated, as RisingWave does it. Below a day the instant keeps its own UTC offset
    (01:40 PST truncates to 01:00 PST, not to the 01:00 PDT an hour earlier that the local
    01:00 also names); from a day up the truncated local time is read in the zone again."""
    local = _fn("timezone", zone.copy(), ts.copy()) if zone is not None \
        else exp.Cast(this=ts.copy(), to=exp.DataType.build("TIMESTAMP"))
    truncated = _fn("pg_date_trunc", unit, local.copy())
    if isinstance(unit, exp.Literal) and unit.name.lower() in _SUB_DAY_UNITS:
        return exp.Sub(this=ts.copy(), expression=exp.paren(exp.Sub(this=local, expression=truncated)))
    if zone is not None:
        return _fn("timezone", zone.copy(), truncated)
    return exp.Cast(this=truncated, to=exp.DataType.build("TIMESTAMPTZ"))


def _date_trunc(node: exp.Expression) -> exp.Expression | None:
    unit = node.args.get("unit")
    this = node.this
    zone = node.args.get("zone")
    if isinstance(unit, exp.Var) or (isinstance(unit, exp.Literal) and unit.is_string):
        text = unit.name.lower()
        if text not in _DATE_TRUNC_UNITS:
            if _unit_is_column(unit):
                unit_expr = exp.column(unit.name)
            else:
                raise BindError(f'timestamp units "{unit.name}" not recognized')
        else:
            unit_expr = exp.Literal.string(text)
    else:
        unit_expr = unit
    t = _type(this)
    if t == T.INTERVAL:
        if isinstance(unit_expr, exp.Literal) and unit_expr.this == "week":
            raise BindError('interval units "week" not supported because months usually have fractional weeks')
        return _fn("date_trunc", unit_expr, this)
    if t == T.TIME:  # the time of day on some day, truncated (units above a day give midnight)
        day = exp.Cast(this=exp.Literal.string("2000-01-01"), to=exp.DataType.build("DATE"))
        return exp.Cast(this=_fn("pg_date_trunc", unit_expr, exp.Add(this=day, expression=this)),
                        to=exp.DataType.build("TIME"))
    if zone is not None or t == T.TIMESTAMPTZ:
        return _date_trunc_in_zone(unit_expr, this, zone)
    out = _fn("pg_date_trunc", unit_expr, this)
    if t == T.DATE:
        return exp.Cast(this=out, to=exp.DataType.build("TIMESTAMPTZ"))
    return out
