"""RisingWave's `approx_percentile(q [, relative_error]) WITHIN GROUP (ORDER BY x)`.

RisingWave answers from a DDSketch: each non-zero value falls in the bucket
`ceil(log_base |x|)` (base = (1 + e) / (1 - e)) of its sign, zeros in a bucket of their own,
and the answer is the bucket holding the `floor((n - 1) * q)`-th value (from 0, in value
order), given as `±2 * base^bucket / (base + 1)`. The same is computed here as one DuckDB
aggregate expression, so a SELECT and an MV (which recomputes the groups an epoch touched)
both give RisingWave's numbers to the last bit: the constants are computed as RisingWave
computes them (IEEE doubles; `base.powi(i)` by the squarings of compiler-rt's __powidf2).
"""

from __future__ import annotations

import math

import sqlglot
from sqlglot import exp

from rw_cli.errors import BindError

DEFAULT_RELATIVE_ERROR = 0.01
# a bucket key that sorts in value order: negative buckets (larger bucket, smaller value)
# below zero below positive buckets; the bucket id is recovered from it
_SHIFT = 1 << 32


class ApproxPercentile(exp.Expression, exp.AggFunc):
    """approx_percentile(quantile [, relative_error]): the direct arguments; the value
    comes from WITHIN GROUP (ORDER BY x)."""

    arg_types = {"this": True, "expression": False}
    _sql_names = ["APPROX_PERCENTILE"]


def build(args: list) -> ApproxPercentile:
    return ApproxPercentile(this=args[0] if args else None, expression=args[1] if len(args) > 1 else None)


def _constant(e: exp.Expression | None, what: str, default: float | None = None) -> float:
    if e is None and default is not None:
        return default
    node = e.unnest() if isinstance(e, exp.Paren) else e
    sign = 1.0
    if isinstance(node, exp.Neg):
        sign, node = -1.0, node.this
    if isinstance(node, exp.Cast):
        node = node.this
    if not isinstance(node, exp.Literal):
        raise BindError(f"the {what} of approx_percentile must be a constant")
    try:
        return sign * float(node.this)
    except ValueError:
        raise BindError(f'invalid input syntax for type double precision: "{node.this}"') from None


def _powi_squares(base: float) -> list[float]:
    """base^(2^k), k = 0..31, by repeated squaring in doubles (what __powidf2 multiplies)."""
    out, a = [], base
    for _ in range(32):
        out.append(a)
        a = a * a
    return out


def _double(v: float) -> str:
    if math.isinf(v):
        return "CAST('inf' AS DOUBLE)" if v > 0 else "CAST('-inf' AS DOUBLE)"
    return f"CAST({v!r} AS DOUBLE)"


def rewrite(node: exp.WithinGroup) -> exp.Expression | None:
    """The DuckDB aggregate expression of `approx_percentile(...) WITHIN GROUP (ORDER BY x)`."""
    call = node.this
    if not isinstance(call, ApproxPercentile):
        return None
    order = node.expression
    if not isinstance(order, exp.Order) or len(order.expressions) != 1:
        raise BindError("approx_percentile needs WITHIN GROUP (ORDER BY one value)")
    ordered = order.expressions[0]
    value = ordered.this if isinstance(ordered, exp.Ordered) else ordered
    descending = isinstance(ordered, exp.Ordered) and bool(ordered.args.get("desc"))
    quantile = _constant(call.this, "quantile")
    if not 0.0 <= quantile <= 1.0:
        raise BindError(f"quantile must be between 0 and 1, got {quantile}")
    if descending:
        quantile = 1.0 - quantile
    error = _constant(call.expression, "relative error", DEFAULT_RELATIVE_ERROR)
    if not 0.0 < error < 1.0:
        raise BindError(f"relative_error must be in the range (0, 1), got {error}")
    base = (1.0 + error) / (1.0 - error)
    ln_base = math.log(base)
    squares = "[" + ", ".join(_double(a) for a in _powi_squares(base)) + "]"
    x = "CAST(__x AS DOUBLE)"
    bucket = f"LEAST(GREATEST(ceil(ln(abs({x})) / {_double(ln_base)}), -2147483648), 2147483647)"
    # (GREATEST and LEAST skip NULLs: a NULL value must not reach them)
    key = (f"CASE WHEN {x} IS NULL THEN NULL WHEN {x} = 0 THEN CAST(0 AS BIGINT) "
           f"WHEN {x} > 0 THEN {_SHIFT} + CAST({bucket} AS BIGINT) "
           f"ELSE -{_SHIFT} - CAST({bucket} AS BIGINT) END")
    n = f"count({x})"
    chosen = (f"list_sort(list_filter(list({key}), lambda v: v IS NOT NULL))"
              f"[CAST(floor(CAST({n} - 1 AS DOUBLE) * {_double(quantile)}) AS BIGINT) + 1]")
    sql = (f"pg_ddsketch_value(CASE WHEN {n} = 0 THEN NULL ELSE {chosen} END, {squares}, "
           f"{_double(base + 1.0)})")
    return _substitute(sql, value)


def _substitute(sql: str, value: exp.Expression) -> exp.Expression:
    """The template parsed (DuckDB's dialect: its lambdas) with `__x` as the ordered value."""
    tree = sqlglot.parse_one(sql, read="duckdb")

    def put(n: exp.Expression) -> exp.Expression:
        if isinstance(n, exp.Column) and n.name == "__x" and not n.table:
            return value.copy()
        return n

    return tree.transform(put)
