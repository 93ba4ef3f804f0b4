"""var_pop, var_samp, stddev_pop and stddev_samp as RisingWave computes them: from sum(x * x),
sum(x) and count(x), never with an aggregate of their own.

    numerator = greatest(sum(x * x) - sum(x) * sum(x) / count(x), 0)
    var_pop = numerator / count(x)        var_samp = numerator / (count(x) - 1)
    stddev_* = sqrt(var_*)                NULL for no row (var_samp: for fewer than two)

in the aggregate's result type: numeric for integers and numerics (PostgreSQL's type, and
rust_decimal's digits: var_pop of 1..6 is 2.9166666666666666666666666667), double precision for
reals and doubles. DISTINCT and FILTER apply to each of the three aggregates, as in RisingWave's
rewrite. A window's variance (OVER) is left to DuckDB.

`expand_variances(tree)` runs on the type-annotated PostgreSQL tree, before the other
rewrites, and annotates what it builds, so they treat it as if the user had written it.
"""
from __future__ import annotations

from sqlglot import exp

from rw_cli.sql.walk import nodes

T = exp.DataType.Type
_EXACT = {T.TINYINT, T.SMALLINT, T.INT, T.BIGINT, T.DECIMAL}
_FLOATS = {T.FLOAT, T.DOUBLE}
_KINDS = {exp.VariancePop: ("pop", False), exp.Variance: ("samp", False), exp.StddevPop: ("pop", True),
          exp.StddevSamp: ("samp", True), exp.Stddev: ("samp", True)}


def _typed(node: exp.Expression, t: exp.DataType | str) -> exp.Expression:
    node.type = t.copy() if isinstance(t, exp.DataType) else exp.DataType.build(t)
    return node


class _Agg:
    """The aggregate's argument and the FILTER around it, which each new aggregate takes."""

    def __init__(self, arg: exp.Expression, distinct: bool, condition: exp.Expression | None):
        self.arg, self.distinct, self.condition = arg, distinct, condition

    def wrap(self, agg: exp.Expression, t: str) -> exp.Expression:
        _typed(agg, t)
        if self.condition is None:
            return agg
        return _typed(exp.Filter(this=agg, expression=self.condition.copy()), t)

    def value(self, x: exp.Expression) -> exp.Expression:
        return exp.Distinct(expressions=[x]) if self.distinct else x

    def sum(self, x: exp.Expression, t: exp.DataType, result: exp.DataType) -> exp.Expression:
        """sum(x) as the result type (sum of integers is a bigint or a numeric first)."""
        total = self.wrap(exp.Sum(this=self.value(x)), t)
        return _typed(exp.Cast(this=total, to=result.copy()), result)

    def count(self) -> exp.Expression:
        return self.wrap(exp.Count(this=self.value(self.arg.copy())), "BIGINT")


def _sum_type(t) -> str:
    if t in (T.TINYINT, T.SMALLINT, T.INT):
        return "BIGINT"
    if t in (T.BIGINT, T.DECIMAL):
        return "DECIMAL"
    return "FLOAT" if t == T.FLOAT else "DOUBLE"


def _formula(kind: str, stddev: bool, agg: _Agg, arg_type: exp.DataType) -> exp.Expression:
    result = exp.DataType.build("DECIMAL" if arg_type.this in _EXACT else "DOUBLE")
    square = _typed(exp.Mul(this=agg.arg.copy(), expression=agg.arg.copy()), arg_type)
    sum_of_squares = agg.sum(square, exp.DataType.build(_sum_type(arg_type.this)), result)
    total = agg.sum(agg.arg.copy(), exp.DataType.build(_sum_type(arg_type.this)), result)
    count = agg.count()
    squared_sum = _typed(exp.Mul(this=total, expression=total.copy()), result)
    raw = _typed(exp.Sub(this=sum_of_squares, expression=_typed(exp.Div(this=squared_sum, expression=count),
                                                                 result)), result)
    zero = _typed(exp.Cast(this=exp.Literal.number(0), to=result.copy()), result)
    numerator = _typed(exp.Greatest(this=raw, expressions=[zero]), result)
    one = _typed(exp.Literal.number(1), "INT")
    denominator = count.copy() if kind == "pop" else _typed(exp.Sub(this=count.copy(), expression=one), "BIGINT")
    target = _typed(exp.Div(this=numerator, expression=denominator), result)
    if stddev:
        target = _typed(exp.Sqrt(this=target), result)
    empty = exp.EQ(this=count.copy(), expression=_typed(exp.Literal.number(0), "INT")) if kind == "pop" \
        else exp.LTE(this=count.copy(), expression=one.copy())
    _typed(empty, "BOOLEAN")
    null = _typed(exp.Cast(this=exp.Null(), to=result.copy()), result)
    return _typed(exp.Case(ifs=[exp.If(this=empty, true=null)], default=target), result)


def _rewrite(node: exp.Expression) -> exp.Expression | None:
    condition = None
    agg = node
    if isinstance(node, exp.Filter):
        condition, agg = node.expression, node.this
    kind = _KINDS.get(type(agg))
    if kind is None or isinstance(node.parent, exp.Window):
        return None
    arg = agg.this
    distinct = isinstance(arg, exp.Distinct)
    if distinct:
        if len(arg.expressions) != 1:
            return None
        arg = arg.expressions[0]
    arg_type = getattr(arg, "type", None)
    if arg_type is None or arg_type.this not in _EXACT | _FLOATS:
        return None
    return _formula(kind[0], kind[1], _Agg(arg, distinct, condition), arg_type)


def expand_variances(tree: exp.Expression) -> exp.Expression:
    """Each variance or standard deviation aggregate (with its FILTER) replaced by RisingWave's
    formula, in place."""
    for node in list(nodes(tree, exp.Filter, *_KINDS)):
        if isinstance(node, tuple(_KINDS)) and isinstance(node.parent, exp.Filter):
            continue  # rewritten with its FILTER
        new = _rewrite(node)
        if new is not None:
            if node is tree:
                return new
            node.replace(new)
    return tree
