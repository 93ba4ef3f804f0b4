"""RisingWave's approx_percentile(quantile, relative_error) WITHIN GROUP (ORDER BY x), as its
DDSketch computes it, over DuckDB: each value falls in a logarithmic bucket of base
y = (1 + e) / (1 - e) (`ceil(log_y |x|)`, negative values in buckets of their own, zeros in
one), buckets ordered from the most negative value up; the result is the bucket holding the
value past floor(count * quantile), as `±2 y^i / (y + 1)` (0 for the zeros' bucket, NULL when
no value is past it). DESC orders count from the top: the quantile 1 - q.

The buckets of a group are collected and sorted in SQL (so an MV's recomputed aggregate
is the same query); `y^i` is the one step done in Python (rw_cli.engine.duck_functions),
by repeated squaring as Rust's powi does, for the same last digit.

- `approx_percentile(node)`: the DuckDB expression for a WITHIN GROUP call of it, or None.
"""
from __future__ import annotations

from sqlglot import exp

from rw_cli.errors import BindError


class ApproxPercentile(exp.Expression, exp.AggFunc):
    """approx_percentile(quantile, relative_error): an aggregate node, so that the planners
    see an aggregate where sqlglot would read an anonymous function."""
    arg_types = {"this": True, "expression": True}
    _sql_names = ["APPROX_PERCENTILE"]


def parse_approx_percentile(args: list) -> exp.Expression:
    if len(args) == 2:
        return ApproxPercentile(this=args[0], expression=args[1])
    return exp.Anonymous(this="approx_percentile", expressions=args)


def _constant(node: exp.Expression, what: str) -> float:
    """A direct argument's value: RisingWave takes only constants there."""
    sign = 1.0
    while isinstance(node, (exp.Neg, exp.Paren, exp.Cast)):
        if isinstance(node, exp.Neg):
            sign = -sign
        node = node.this
    if isinstance(node, exp.Literal):
        try:
            return sign * float(node.this)
        except ValueError:
            pass
    raise BindError(f"{what} of approx_percentile must be a constant")


def approx_percentile(node: exp.Expression) -> exp.Expression | None:
    if not (isinstance(node, exp.WithinGroup) and isinstance(node.this, ApproxPercentile)):
        return None
    order = node.expression
    if not isinstance(order, exp.Order) or len(order.expressions) != 1:
        raise BindError("approx_percentile takes exactly one ORDER BY expression")
    quantile = _constant(node.this.this, "the quantile")
    error = _constant(node.this.expression, "the relative error")
    if not 0 <= quantile <= 1:
        raise BindError(f"Quantile must be between 0.0 and 1.0, got {quantile}")
    if not 0 < error < 1:
        raise BindError(f"Relative error must be between 0.0 and 1.0, got {error}")
    ordered = order.expressions[0]
    if ordered.args.get("desc"):
        quantile = 1.0 - quantile
    value = exp.Cast(this=ordered.this.copy(), to=exp.DataType.build("DOUBLE"))
    rel = exp.Cast(this=exp.Literal.number(repr(error)), to=exp.DataType.build("DOUBLE"))
    bucket = exp.Anonymous(this="pg_approx_bucket", expressions=[value, rel])
    keep = exp.Lambda(this=exp.Not(this=exp.Is(this=exp.column("__b"), expression=exp.Null())),
                      expressions=[exp.to_identifier("__b")])
    buckets = exp.Anonymous(this="list_sort", expressions=[
        exp.Anonymous(this="list_filter", expressions=[exp.ArrayAgg(this=bucket), keep])])
    out = exp.Anonymous(this="pg_approx_percentile_of", expressions=[
        buckets, exp.Cast(this=exp.Literal.number(repr(quantile)), to=exp.DataType.build("DOUBLE")), rel.copy()])
    return exp.Cast(this=out, to=exp.DataType.build("DOUBLE"))  # typed, for the planners
