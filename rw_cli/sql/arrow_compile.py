"""Compile a DuckDB expression tree into rw_cli.engine.arrow_expr's form, when its meaning is
integer arithmetic on microseconds: a projection's TUMBLE and HOP window bounds over TIMESTAMP
columns, and a join condition made of comparisons between such values (or integer columns).
Anything else compiles to None and stays a DuckDB expression."""
from __future__ import annotations

import numpy as np
import pyarrow as pa
from sqlglot import exp

from rw_cli.common.types import DataType


class _NotPlain(Exception):
    pass


def compile_expr(tree: exp.Expression, input_types: list[DataType]) -> tuple | None:
    """The form of a timestamp-valued expression, given as its DuckDB tree (None: not
    compilable)."""
    try:
        return _timestamp(tree, input_types)
    except (_NotPlain, ValueError, OverflowError):
        return None


_COMPARISONS = {exp.EQ: "eq", exp.NEQ: "ne", exp.LT: "lt", exp.LTE: "le", exp.GT: "gt", exp.GTE: "ge"}


def compile_condition(tree: exp.Expression, input_types: list[DataType]) -> tuple | None:
    """The form of a condition (its DuckDB tree) that is a conjunction of comparisons, each
    between two timestamps (columns, window bounds, ± constant intervals) or two integer
    columns (None: not compilable)."""
    try:
        tree = _strip(tree)
        conjuncts = list(tree.flatten()) if isinstance(tree, exp.And) else [tree]
        return ("and", *(_comparison(_strip(c), input_types) for c in conjuncts))
    except (_NotPlain, ValueError, OverflowError):
        return None


def _comparison(node: exp.Expression, types: list[DataType]) -> tuple:
    op = _COMPARISONS.get(type(node))
    if op is None:
        raise _NotPlain()
    sides = []
    for side in (node.this, node.expression):
        side = _strip(side)
        if isinstance(side, exp.Column) and pa.types.is_signed_integer(types[_column(side, types)].arrow()):
            sides.append(("int", ("col", _column(side, types))))
        else:
            sides.append(("ts", _timestamp(side, types)))
    if sides[0][0] != sides[1][0]:
        raise _NotPlain()
    return (op, sides[0][1], sides[1][1])


def _strip(node: exp.Expression) -> exp.Expression:
    """TRY and parentheses change nothing here: the evaluator leaves overflow to DuckDB."""
    while isinstance(node, (exp.Try, exp.Paren)):
        node = node.this
    return node


def _column(node: exp.Expression, types: list[DataType]) -> int:
    if not isinstance(node, exp.Column) or node.table or not node.name.startswith("_") or not node.name[1:].isdigit():
        raise _NotPlain()
    i = int(node.name[1:])
    if i >= len(types):
        raise _NotPlain()
    return i


def _timestamp(node: exp.Expression, types: list[DataType]) -> tuple:
    node = _strip(node)
    if isinstance(node, exp.Column):
        i = _column(node, types)
        if types[i].arrow() != pa.timestamp("us"):
            raise _NotPlain()
        return ("col", i)
    if isinstance(node, exp.DateBin) or (isinstance(node, exp.Anonymous) and node.name.upper() == "TIME_BUCKET"):
        width, value, origin = _bucket_args(node)
        w = _interval(width, types)
        if w[0] != "const_us" or w[1] <= 0:
            raise _NotPlain()
        return ("bucket", w[1], _timestamp(value, types), _timestamp_literal(origin))
    if isinstance(node, exp.Add):
        try:
            return ("add_us", _timestamp(node.this, types), _interval(node.expression, types))
        except _NotPlain:
            return ("add_us", _timestamp(node.expression, types), _interval(node.this, types))
    if isinstance(node, exp.Sub):
        return ("sub_us", _timestamp(node.this, types), _interval(node.expression, types))
    raise _NotPlain()


def _bucket_args(node: exp.Expression) -> tuple:
    if isinstance(node, exp.DateBin):
        # DuckDB's TIME_BUCKET(width, ts, origin) parses with the origin as `unit`
        given = [node.args.get(k) for k in ("unit", "origin") if node.args.get(k) is not None]
        if len(given) != 1 or node.args.get("zone") is not None:
            raise _NotPlain()
        origin = given[0]
        return node.this, node.expression, origin
    args = node.expressions
    if len(args) != 3:
        raise _NotPlain()
    return args[0], args[1], args[2]


def _timestamp_literal(node: exp.Expression) -> int:
    node = _strip(node)
    if not (isinstance(node, exp.Cast) and node.to.is_type(exp.DataType.Type.TIMESTAMP, exp.DataType.Type.TIMESTAMPNTZ)
            and isinstance(node.this, exp.Literal) and node.this.is_string):
        raise _NotPlain()
    return int(np.datetime64(node.this.this.strip().replace(" ", "T"), "us").astype(np.int64))


def _interval(node: exp.Expression, types: list[DataType]) -> tuple:
    """("const_us", n) or ("mul_us", integer form, n)."""
    node = _strip(node)
    if isinstance(node, exp.Mul):
        for a, b in ((node.this, node.expression), (node.expression, node.this)):
            try:
                iv = _interval(b, types)
            except _NotPlain:
                continue
            i = _column(_strip(a), types)
            if iv[0] == "const_us" and pa.types.is_integer(types[i].arrow()):
                return ("mul_us", ("col", i), iv[1])
        raise _NotPlain()
    months, days, micros = _interval_parts(node)
    if months or days:
        raise _NotPlain()
    return ("const_us", micros)


def _interval_parts(node: exp.Expression) -> tuple[int, int, int]:
    """TO_MONTHS(m) + TO_DAYS(d) + TO_MICROSECONDS(us), as the transpiler spells a constant
    interval."""
    node = _strip(node)
    if isinstance(node, exp.Add):
        a, b = _interval_parts(node.this), _interval_parts(node.expression)
        return a[0] + b[0], a[1] + b[1], a[2] + b[2]
    if isinstance(node, exp.ToDays):
        return 0, _int_literal(node.this), 0
    if isinstance(node, exp.Anonymous) and len(node.expressions) == 1:
        n = _int_literal(node.expressions[0])
        name = node.name.upper()
        if name == "TO_MONTHS":
            return n, 0, 0
        if name == "TO_DAYS":
            return 0, n, 0
        if name == "TO_MICROSECONDS":
            return 0, 0, n
    raise _NotPlain()


def _int_literal(node: exp.Expression) -> int:
    node = _strip(node)
    neg = isinstance(node, exp.Neg)
    if neg:
        node = _strip(node.this)
    if not isinstance(node, exp.Literal) or node.is_string or not node.this.lstrip("-").isdigit():
        raise _NotPlain()
    return -int(node.this) if neg else int(node.this)
