"""PostgreSQL's names for the columns of a query's result (`?column?`, `now`, `int4`, ...).

Apart from the stream planner, so that a batch SELECT names its columns without importing
the planner (about 25 ms of `rw -c` start-up).
"""
from __future__ import annotations

import re

from sqlglot import exp

from rw_cli.sql.dialect import AS_WRITTEN


def output_name(e: exp.Expression) -> str:
    """PostgreSQL's name for a select item: its alias, column name, function name, the type
    it is cast to, or `?column?`."""
    if isinstance(e, exp.Alias):
        # qualify names a constant after its text (`1`) and a cast after what it casts
        generated = e.alias.startswith("_col_") or \
            (isinstance(e.this, (exp.Literal, exp.Cast)) and e.alias == e.this.output_name)
        if e.meta.get(AS_WRITTEN) or not generated:
            return e.alias
        e = e.this  # an alias sqlglot's qualify added
    if isinstance(e, exp.Column):
        return e.name
    if isinstance(e, exp.Cast):
        # a column or function under any casts names it; else the outermost type does
        # (`'a'::bytea::varchar` is `varchar`), as PostgreSQL's FigureColname decides
        inner = e.this
        while isinstance(inner, exp.Cast):
            inner = inner.this
        if isinstance(inner, (exp.Column, exp.Func)):
            return output_name(inner)
        return _PG_TYPE_NAMES.get(e.to.this, e.to.sql(dialect="postgres").lower())
    if isinstance(e, (exp.Window, exp.IgnoreNulls, exp.RespectNulls, exp.WithinGroup)) or \
            (isinstance(e, exp.Filter) and isinstance(e.this, exp.AggFunc)):
        return output_name(e.this)  # `lag(x) OVER (...)` is named `lag`, `f(q) WITHIN GROUP (...)` `f`
    if isinstance(e, exp.CurrentTimestamp) and "start" in e.meta:
        return "now"  # written now(): CURRENT_TIMESTAMP, written as such, has no call
    if isinstance(e, (exp.Case, exp.Array, exp.Exists)):
        return type(e).__name__.lower()
    if isinstance(e, exp.Subquery) and isinstance(e.this, exp.Select) and len(e.this.expressions) == 1:
        return output_name(e.this.expressions[0])  # a scalar subquery: its own column's name
    if isinstance(e, exp.Anonymous):
        return e.name.lower()
    if isinstance(e, exp.Func):
        # PostgreSQL's name for it, as sqlglot writes PostgreSQL (string_agg, not group_concat)
        m = _LEADING_NAME.match(e.sql(dialect="postgres"))
        return m.group(0).lower() if m else "?column?"
    return "?column?"


_LEADING_NAME = re.compile(r"[A-Za-z_][A-Za-z_0-9]*")
# the names PostgreSQL gives `CAST(x AS type)` columns: its types' internal names
_PG_TYPE_NAMES = {exp.DataType.Type.INT: "int4", exp.DataType.Type.BIGINT: "int8",
                  exp.DataType.Type.SMALLINT: "int2", exp.DataType.Type.FLOAT: "float4",
                  exp.DataType.Type.DOUBLE: "float8", exp.DataType.Type.BOOLEAN: "bool",
                  exp.DataType.Type.DECIMAL: "numeric", exp.DataType.Type.VARCHAR: "varchar",
                  exp.DataType.Type.TEXT: "text", exp.DataType.Type.TIMESTAMPTZ: "timestamptz"}
