"""Array functions that compare elements as PostgreSQL and RisingWave do: with IS NOT DISTINCT
FROM, so a NULL element is found (and removed, replaced) like any other value and other
elements' NULLs stay, where DuckDB's equality would drop them or find nothing.

- array_remove(a, x): a without its elements equal to x
- array_replace(a, x, y): a with y for each element equal to x
- array_position(a, x [, start]): the first index from `start` (1-based) whose element is x
- array_positions(a, x): every such index

`rewrite_array_function(node)` returns the DuckDB form, or None for any other node.
"""
from __future__ import annotations

from sqlglot import exp

_E = "__e"
_I = "__i"


def _fn(name: str, *args: exp.Expression) -> exp.Expression:
    return exp.Anonymous(this=name, expressions=list(args))


def _lambda(body: exp.Expression, name: str) -> exp.Lambda:
    return exp.Lambda(this=body, expressions=[exp.to_identifier(name)])


def _same(a: exp.Expression, b: exp.Expression) -> exp.Expression:
    return exp.NullSafeEQ(this=a, expression=b)


def _remove(arr: exp.Expression, x: exp.Expression) -> exp.Expression:
    keep = exp.NullSafeNEQ(this=exp.column(_E), expression=x.copy())
    return _fn("list_filter", arr.copy(), _lambda(keep, _E))


def _replace(arr: exp.Expression, x: exp.Expression, y: exp.Expression) -> exp.Expression:
    body = exp.Case(ifs=[exp.If(this=_same(exp.column(_E), x.copy()), true=y.copy())], default=exp.column(_E))
    return _fn("list_transform", arr.copy(), _lambda(body, _E))


def _position(arr: exp.Expression, x: exp.Expression, start: exp.Expression | None) -> exp.Expression:
    """The first match at or after `start` (an index below 1 starts at 1): a search of the
    slice from `start`, shifted back."""
    if start is None:
        matches = _fn("list_transform", arr.copy(), _lambda(_same(exp.column(_E), x.copy()), _E))
        return _fn("list_position", matches, exp.true())
    first = _fn("greatest", exp.Cast(this=start.copy(), to=exp.DataType.build("BIGINT")), exp.Literal.number(1))
    matches = _fn("list_transform", _fn("list_slice", arr.copy(), first.copy(), _fn("len", arr.copy())),
                  _lambda(_same(exp.column(_E), x.copy()), _E))
    return exp.Add(this=_fn("list_position", matches, exp.true()),
                   expression=exp.paren(exp.Sub(this=first, expression=exp.Literal.number(1))))


def _positions(arr: exp.Expression, x: exp.Expression) -> exp.Expression:
    indexes = _fn("range", exp.Literal.number(1), exp.Add(this=_fn("len", arr.copy()), expression=exp.Literal.number(1)))
    hit = _same(_fn("list_extract", arr.copy(), exp.column(_I)), x.copy())
    found = _fn("list_filter", indexes, _lambda(hit, _I))
    # a NULL array has no positions: NULL (DuckDB's range of a NULL length would be one)
    return exp.Case(ifs=[exp.If(this=exp.Is(this=arr.copy(), expression=exp.Null()), true=exp.Null())], default=found)


def rewrite_array_function(node: exp.Expression) -> exp.Expression | None:
    if isinstance(node, exp.ArrayRemove):
        return _remove(node.this, node.expression)
    if isinstance(node, exp.ArrayPosition):
        # sqlglot reads PostgreSQL's third argument (the start) into `zero_based`
        start = node.args.get("zero_based")
        return _position(node.this, node.expression, None if isinstance(start, exp.Boolean) else start)
    if isinstance(node, exp.Anonymous):
        name, args = node.name.lower(), node.expressions
        if name == "array_replace" and len(args) == 3:
            return _replace(*args)
        if name == "array_positions" and len(args) == 2:
            return _positions(*args)
    return None
