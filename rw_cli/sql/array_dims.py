"""array_ndims, array_lower and array_upper, as RisingWave computes them, in DuckDB SQL.

A RisingWave array's dimensions are its type's: `int[][]` has two, whatever its value
(`array[]::int[][]` and `NULL::int[][]` too), so array_ndims is a constant of the argument's
type and an argument of no array type (`7`, `NULL`, `'{2,3}'`) is an error. Nested arrays may
be ragged (`array[array[1], array[2,3,4]]`): the upper bound of a dimension below the first is
the longest of its arrays. Every lower bound is 1. An array without a single element, at any
depth (`array[array[]::int[]]`), has no bounds: NULL.

- `array_dimension_function(name, args)`: the DuckDB expression for a call, or None when
  `name` is not one of these.
"""
from __future__ import annotations

from sqlglot import exp

from rw_cli.engine.duck_functions import MAX_ARRAY_DEPTH, array_bound_macro
from rw_cli.errors import BindError

T = exp.DataType.Type
_NAMES = ("array_ndims", "array_lower", "array_upper")


def array_depth(node: exp.Expression) -> int | None:
    """How many array levels the (annotated) expression's type has; None for no array type."""
    t = getattr(node, "type", None)
    depth = 0
    while t is not None and t.this == T.ARRAY and t.expressions:
        depth += 1
        t = t.expressions[0]
    return depth or None


def _typed_array_depth(name: str, arg: exp.Expression) -> int:
    """The argument's array depth; PostgreSQL's errors for an argument of another type."""
    depth = array_depth(arg)
    if depth is not None:
        return depth
    t = getattr(arg, "type", None)
    if t is None or t.this in (T.UNKNOWN, T.NULL) or (isinstance(arg, exp.Literal) and arg.is_string):
        raise BindError(f"could not determine polymorphic type because input has type unknown "
                        f"(function {name})")
    raise BindError(f"function {name}({_pg_type_name(t)}) does not exist",
                    hint="No function matches the given name and argument types. "
                         "You might need to add explicit type casts.")


def array_dimension_function(name: str, args: list[exp.Expression]) -> exp.Expression | None:
    """array_ndims(a): a constant of a's type; array_lower / array_upper(a, d): our macro for
    a's depth (rw_cli.engine.duck_functions)."""
    if name not in _NAMES:
        return None
    want = 1 if name == "array_ndims" else 2
    if len(args) != want:
        return None
    depth = _typed_array_depth(name, args[0])
    if name == "array_ndims":
        return exp.Cast(this=exp.Literal.number(depth), to=exp.DataType.build("INT"))
    if depth > MAX_ARRAY_DEPTH:
        raise BindError(f"{name} of an array of more than {MAX_ARRAY_DEPTH} dimensions is not supported")
    return exp.Anonymous(this=array_bound_macro(name, depth), expressions=[args[0], args[1]])


def _pg_type_name(t: exp.DataType) -> str:
    from rw_cli.common.types import DataType
    from rw_cli.sql.duckdb_dialect import duckdb_dialect

    try:
        return str(DataType.from_sql(t.sql(duckdb_dialect())))
    except Exception:  # noqa: BLE001 - a type we have no name for: sqlglot's
        return t.sql("postgres").lower()


def check_array_cast(node: exp.Expression) -> None:
    """A cast between array types of different dimensions is an error in RisingWave (an
    `int[][]` is no `int[]`; PostgreSQL has one type for both)."""
    if not isinstance(node, exp.Cast) or node.to.this != T.ARRAY:
        return
    source = array_depth(node.this)
    inner = getattr(node.this, "type", None)
    while inner is not None and inner.this == T.ARRAY and inner.expressions:
        inner = inner.expressions[0]
    if inner is None or inner.this in (T.UNKNOWN, T.NULL):
        return  # `array[]`, `array[null]`: no element type to hold to
    target = array_depth(exp.Cast(this=exp.Null(), to=node.to))  # (typed by its `to`)
    if source is not None and target is not None and source != target:
        raise BindError(f'cannot cast type "{_pg_type_name(node.this.type)}" to "{_pg_type_name(node.to)}"')
