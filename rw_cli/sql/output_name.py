"""PostgreSQL's names for the columns of a query's result (`?column?`, `now`, `int4`, ...).

Apart from the stream planner, so that a batch SELECT names its columns without importing
the planner (about 25 ms of `rw -c` start-up).
"""
from __future__ import annotations

import re

from sqlglot import exp

from rw_cli.sql.dialect import AS_WRITTEN, WRITTEN_NAME


def replace_call(call: exp.Anonymous, value: exp.Expression) -> None:
    """Put `value`, a call's answer found when the query is bound, in the call's place; a
    select item keeps the call's name (`pg_get_viewdef`, not `?column?`)."""
    if isinstance(call.parent, exp.Select) and call.arg_key == "expressions":
        value = exp.Alias(this=value, alias=exp.to_identifier(call.name.lower()))
    call.replace(value)


def output_name(e: exp.Expression) -> str:
    """PostgreSQL's name for a select item: its alias, column name, function name, the type
    it is cast to, or `?column?`."""
    if isinstance(e, exp.Alias):
        # qualify names a constant after its text (`1`) and a cast after what it casts
        generated = e.alias.startswith("_col_") or \
            (isinstance(e.this, (exp.Literal, exp.Cast, exp.Paren, exp.Bracket)) and e.alias == e.this.output_name)
        if e.meta.get(AS_WRITTEN) or not generated:
            return e.alias
        e = e.this  # an alias sqlglot's qualify added
    if isinstance(e, exp.Func) and e.meta.get(WRITTEN_NAME):
        return e.meta[WRITTEN_NAME]  # `substr(...)`, not the Substring sqlglot reads it as
    if isinstance(e, exp.Paren):
        return output_name(e.this)  # `(a)` is `a`, `(1 + 2)` `?column?`
    if isinstance(e, exp.Bracket):
        return output_name(e.this)  # a subscript is named for what it subscripts: `a[1]` is `a`
    if isinstance(e, (exp.Binary, exp.MatchAgainst)):
        return "?column?"  # an operator, though sqlglot may make a function of it (`j @? p`, `j @@ p`)
    if isinstance(e, exp.Column):
        # `_col_1`: sqlglot's name for an unnamed item of a subquery, read through `*`
        return "?column?" if _GENERATED.fullmatch(e.name) else e.name
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
        sql = e.sql(dialect="postgres")
        m = _LEADING_NAME.match(sql)
        # a call (`name(` or a bare keyword such as CURRENT_DATE), not an operator sqlglot
        # makes a function of (`j @? p` starts with its operand)
        if m and (m.end() == len(sql) or sql[m.end()] == "("):
            return m.group(0).lower()
        return "?column?"
    return "?column?"


_LEADING_NAME = re.compile(r"[A-Za-z_][A-Za-z_0-9]*")
_GENERATED = re.compile(r"_col_\d+")


def name_derived_columns(selects: list[exp.Select], root: exp.Expression) -> None:
    """A subquery's or CTE's unnamed items get PostgreSQL's names for them as aliases, so that
    the query around can name them: `select lower from (select lower(s) from t) x`,
    `select count from c`. (sqlglot would call them `_col_0`.) Only names unique in their
    select: PostgreSQL lets a duplicate stand, but no reference to it."""
    for sel in selects:
        outer = sel
        while isinstance(outer.parent, (exp.Union, exp.Except, exp.Intersect)):
            outer = outer.parent
        if outer is root or not isinstance(outer.parent, (exp.Subquery, exp.CTE)):
            continue
        names = [output_name(e) for e in sel.expressions]
        for e, name in zip(list(sel.expressions), names):
            if isinstance(e, (exp.Alias, exp.Column, exp.Star)) or name == "?column?" or names.count(name) > 1:
                continue
            alias = exp.Alias(alias=exp.to_identifier(name))
            e.replace(alias)
            alias.set("this", e)
# the names PostgreSQL gives `CAST(x AS type)` columns: its types' internal names
_PG_TYPE_NAMES = {exp.DataType.Type.INT: "int4", exp.DataType.Type.BIGINT: "int8",
                  exp.DataType.Type.SMALLINT: "int2", exp.DataType.Type.FLOAT: "float4",
                  exp.DataType.Type.DOUBLE: "float8", exp.DataType.Type.BOOLEAN: "bool",
                  exp.DataType.Type.DECIMAL: "numeric", exp.DataType.Type.VARCHAR: "varchar",
                  exp.DataType.Type.TEXT: "text", exp.DataType.Type.TIMESTAMPTZ: "timestamptz"}
