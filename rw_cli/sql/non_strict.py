"""Non-strict evaluation: an expression that fails on a row's values gives NULL for that row.

RisingWave's streaming is non-strict (a bad row must not stop a pipeline), and so is its batch
mode under `SET batch_expr_strict_mode = false`. Both rewrite the DuckDB tree here.
"""
from __future__ import annotations

from sqlglot import exp


# nodes whose evaluation can fail on a row's values (division by zero, overflow, a bad cast)
_MAY_FAIL = (exp.Div, exp.IntDiv, exp.Mod, exp.Cast, exp.Add, exp.Sub, exp.Mul)


# our functions that may fail on a row's values and have no NULL-returning form
_MAY_FAIL_FUNCTIONS: frozenset[str] = frozenset()


def _non_strict_forms() -> dict[str, str]:
    """Our macros raising PostgreSQL's errors (they call DuckDB's error(), which DuckDB counts
    as volatile, so no TRY may enclose them) -> their NULL-returning forms."""
    from rw_cli.engine.duck_functions import RAISING_MACROS, non_strict_name
    from rw_cli.engine.numeric_udfs import RAISING

    return {name: non_strict_name(name) for name in RAISING_MACROS | RAISING}


_NON_STRICT_FORMS = _non_strict_forms()


def non_strict(tree: exp.Expression) -> exp.Expression:
    """Stream expressions do not fail: as in RisingWave, an expression node whose evaluation
    errors yields NULL for that row, node by node — each node that may fail is wrapped in
    DuckDB's TRY (bottom-up, so its arguments are wrapped too), and a division or modulo by
    zero gives NULL. A node enclosing one of DuckDB's error() calls (a macro raising
    PostgreSQL's error) is left unwrapped: TRY refuses it."""
    for child in list(tree.iter_expressions()):
        new = non_strict(child)
        if new is not child:
            child.replace(new)
    if isinstance(tree, exp.Anonymous) and tree.name.lower() == "error":
        # PostgreSQL's error for a bad value, written inline (to_timestamp's fraction check)
        return exp.Null()
    if isinstance(tree, exp.Anonymous) and tree.name.lower() in _NON_STRICT_FORMS:
        return exp.Anonymous(this=_NON_STRICT_FORMS[tree.name.lower()], expressions=[a.copy() for a in tree.expressions])
    if (isinstance(tree, _MAY_FAIL) or isinstance(tree, exp.Anonymous) and tree.name.lower() in _MAY_FAIL_FUNCTIONS) \
            and not _raises(tree) and tree.find(exp.AggFunc, exp.Window) is None:
        # (TRY may not enclose an aggregate: `CAST(sum(x) AS BIGINT)` stays as it is, its
        # argument wrapped already)
        return exp.Try(this=tree.copy())
    return tree


def null_forms(tree: exp.Expression) -> exp.Expression:
    """`tree` with each of our raising macros in its NULL-returning form."""
    for n in list(tree.find_all(exp.Anonymous)):
        if n.name.lower() == "error":
            n.replace(exp.Null())
        elif n.name.lower() in _NON_STRICT_FORMS:
            n.set("this", _NON_STRICT_FORMS[n.name.lower()])
    return tree


def _raises(tree: exp.Expression) -> bool:
    """Whether a call of one of our macros that may raise (through error()) is in `tree`."""
    from rw_cli.engine.duck_functions import RAISING_MACROS

    return any(isinstance(n, exp.Anonymous) and (n.name.lower() in RAISING_MACROS or n.name.lower() == "error")
               for n in tree.walk())
