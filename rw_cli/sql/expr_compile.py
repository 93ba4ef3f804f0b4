"""Compile the planner's expressions (sqlglot trees over positional columns `_0.._n`) once,
into the typed objects executors run (rw_cli.engine.expr): DuckDB SQL with the non-strict
TRY wrapping already applied, the columns read, and where it applies a numpy form.

Everything here works on the tree: the DuckDB SQL text is generated last, and nothing parses
it again.
"""
from __future__ import annotations

from dataclasses import replace

import pyarrow as pa
from sqlglot import exp

from rw_cli.sql.duckdb_dialect import duckdb_dialect
from rw_cli.common.types import DataType
from rw_cli.engine.expr import Condition, Conjunct, Expr, comparable
from rw_cli.sql import arrow_compile
from rw_cli.sql.non_strict import non_strict, null_forms
from rw_cli.sql.transpile import expr_to_duckdb_tree

def compile_expr(tree: exp.Expression, input_types: list[DataType], result: DataType | None = None,
                 strict: bool = False) -> Expr:
    """A scalar PostgreSQL expression over the input columns; non-strict unless `strict`."""
    return compile_duckdb(expr_to_duckdb_tree(tree, input_types), input_types, result, strict)


def compile_duckdb(tree: exp.Expression, input_types: list[DataType], result: DataType | None = None,
                   strict: bool = False) -> Expr:
    """A scalar expression already in DuckDB's terms (a tree the caller may give away)."""
    plain = _plain_column(tree)
    if plain is not None:
        return Expr(f"_{plain}", (plain,), result, column=plain)
    strict_sql = None
    if not strict:
        strict_sql = tree.sql(dialect=duckdb_dialect())
        tree = non_strict(tree)
    sql = tree.sql(dialect=duckdb_dialect())
    return Expr(sql, _columns(tree), result, form=arrow_compile.compile_expr(tree, input_types),
                strict_sql=strict_sql if strict_sql != sql else None)


def compile_condition(tree: exp.Expression, input_types: list[DataType], strict: bool = False,
                      arrow_form: bool = False) -> Condition:
    """A filter's or a join's condition: its top-level conjuncts, each with its fast Arrow
    test where it has one. `arrow_form`: also the whole condition's numpy form (a join's
    timestamp comparisons), when it compiles."""
    return compile_duckdb_condition(expr_to_duckdb_tree(tree, input_types), input_types, strict, arrow_form)


def compile_duckdb_condition(duck_tree: exp.Expression, input_types: list[DataType], strict: bool = False,
                             arrow_form: bool = False) -> Condition:
    """A condition already in DuckDB's terms (a tree the caller may give away)."""
    strict_sqls: list[str | None] = []
    if not strict:
        strict_sqls = [c.sql(dialect=duckdb_dialect()) for c in conjuncts_of(duck_tree)]
        duck_tree = non_strict(duck_tree)
    conjuncts = tuple(_conjunct(c, input_types) for c in conjuncts_of(duck_tree))
    if len(strict_sqls) == len(conjuncts):  # each conjunct raising its errors, where it differs
        conjuncts = tuple(replace(c, strict_sql=s) if s != c.sql else c for c, s in zip(conjuncts, strict_sqls))
    form = arrow_compile.compile_condition(duck_tree, input_types) if arrow_form else None
    return Condition(conjuncts, form)


def conjuncts_of(tree: exp.Expression) -> list[exp.Expression]:
    """The terms of `a AND b AND ...` at the top of the tree (through parentheses); the ANDs
    of OR, NOT, CASE or BETWEEN below the top are no conjunctions."""
    tree = _unparen(tree)
    if not isinstance(tree, exp.And):
        return [tree]
    return [t for side in (tree.this, tree.expression) for t in conjuncts_of(side)]


_COMPARISONS = {exp.EQ: "eq", exp.NEQ: "ne", exp.LT: "lt", exp.LTE: "le", exp.GT: "gt", exp.GTE: "ge"}
_MIRROR = {"eq": "eq", "ne": "ne", "lt": "gt", "le": "ge", "gt": "lt", "ge": "le"}
_INT64 = 1 << 63


def _conjunct(tree: exp.Expression, types: list[DataType]) -> Conjunct:
    return Conjunct(tree.sql(dialect=duckdb_dialect()), _columns(tree), _fast(_unparen(tree), types))


def _fast(node: exp.Expression, types: list[DataType]) -> tuple | None:
    """The conjunct as Arrow evaluates it the way DuckDB does: ("null", i, is_null) for
    `_i IS [NOT] NULL`; ("cmp", op, i, j) for two columns whose types Arrow compares as
    DuckDB does; ("cmp_int", op, i, n) for an integer column and an integer literal."""
    negated = False
    while isinstance(node, exp.Not):
        negated = not negated
        node = _unparen(node.this)
    if isinstance(node, exp.Is) and isinstance(node.expression, exp.Null):
        i = _plain_column(_unparen(node.this))
        return None if i is None else ("null", i, not negated)
    op = _COMPARISONS.get(type(node))
    if op is None or negated:
        return None
    a, b = _unparen(node.this), _unparen(node.expression)
    i, j = _plain_column(a), _plain_column(b)
    if i is None and j is not None:
        a, b, i, j, op = b, a, j, i, _MIRROR[op]
    if i is None or i >= len(types):
        return None
    if j is not None:
        return ("cmp", op, i, j) if j < len(types) and comparable(types[i].arrow(), types[j].arrow()) else None
    n = _int_literal(b)
    if n is None or not pa.types.is_integer(types[i].arrow()):
        return None
    return ("cmp_int", op, i, n)


def _int_literal(node: exp.Expression) -> int | None:
    neg = isinstance(node, exp.Neg)
    if neg:
        node = _unparen(node.this)
    if not isinstance(node, exp.Literal) or node.is_string or not node.this.isdigit():
        return None
    n = -int(node.this) if neg else int(node.this)
    return n if -_INT64 < n < _INT64 else None


def _unparen(node: exp.Expression) -> exp.Expression:
    while isinstance(node, exp.Paren):
        node = node.this
    return node


def _plain_column(node: exp.Expression) -> int | None:
    """i when the node is the positional column `_i`."""
    if isinstance(node, exp.Column) and not node.table and node.name.startswith("_") and node.name[1:].isdigit():
        return int(node.name[1:])
    return None


def _columns(tree: exp.Expression) -> tuple[int, ...]:
    return tuple(sorted({i for c in tree.find_all(exp.Column) if (i := _plain_column(c)) is not None}))


def compile_series(tree: exp.Expression) -> tuple[Expr, bool]:
    """A set-returning function's list (its DuckDB tree), wrapped whole in TRY: a list that
    fails to compute yields no rows (our raising macros in it in their NULL-returning forms,
    which TRY may enclose). And whether it is a series of integer literals (a HOP window's),
    the same list for every row."""
    constant = _literal_series(_unparen(tree))
    wrapped = exp.Try(this=null_forms(tree.copy()))
    return Expr(wrapped.sql(dialect=duckdb_dialect()), _columns(wrapped)), constant


def _literal_series(node: exp.Expression) -> bool:
    if isinstance(node, exp.GenerateSeries):
        args = [node.args.get(k) for k in ("start", "end", "step") if node.args.get(k) is not None]
    elif isinstance(node, exp.Anonymous) and node.name.lower() in ("range", "generate_series"):
        args = node.expressions
    else:
        return False
    return len(args) in (2, 3) and all(_signed_literal(a) is not None for a in args)


def _signed_literal(node: exp.Expression) -> int | None:
    """An integer literal (`-3` may be a negative literal or the negation of one)."""
    node = _unparen(node)
    if isinstance(node, exp.Literal) and not node.is_string and node.this.lstrip("-").isdigit():
        return int(node.this)
    return _int_literal(node)


def compile_plan(root):
    """Compile every expression of a finished stream plan once, in place: each node that
    evaluates expressions gets what its executor runs, so building the job (in rw_cli.stream,
    perhaps in a Spark task) needs nothing of the SQL frontend."""
    from rw_cli.stream.plan import StreamFilter, StreamHashJoin, StreamProject, StreamProjectSet

    seen: set[int] = set()
    stack = [root]
    while stack:
        p = stack.pop()
        if id(p) in seen:
            continue
        seen.add(id(p))
        stack.extend(p.inputs)
        if isinstance(p, StreamProject) and p.compiled is None:
            inp = p.inputs[0].types
            p.compiled = [compile_expr(e, inp, t) for e, t in zip(p.exprs, p.types)]
        elif isinstance(p, StreamFilter) and p.compiled is None:
            p.compiled = compile_condition(p.predicate, p.inputs[0].types)
        elif isinstance(p, StreamProjectSet) and p.compiled is None:
            p.compiled = compile_series(p.list_expr)
        elif isinstance(p, StreamHashJoin) and p.condition is not None and p.compiled_condition is None:
            types = p.inputs[0].types + p.inputs[1].types
            p.compiled_condition = compile_condition(p.condition, types, strict=True, arrow_form=True)
    return root
