"""Predicate pushdown for stream plans: a WHERE's conditions into the joins and derived tables
below it, each join's own conditions into its derived table.

sqlglot's `pushdown_predicates` does this, but first rewrites every condition with its
`simplify`, whose cost grows steeply with a condition's size (the long generated WHEREs of
SQLite's corpus took tens of milliseconds each, most of planning a view) and which leaves the
view's conditions other than the query's. Here the conditions are split as written: their
top-level conjuncts (or, for a disjunction of conjunctions, the tables every arm reads) move
where sqlglot would move them (its `pushdown_cnf` / `pushdown_dnf`), and nothing else changes.
"""
from __future__ import annotations

from sqlglot import exp
from sqlglot.optimizer.normalize import normalized
from sqlglot.optimizer.pushdown_predicates import pushdown_cnf, pushdown_dnf
from sqlglot.optimizer.scope import build_scope


def _has_target(q: exp.Expression) -> bool:
    """Whether anything could move: a join, a derived table or a CTE."""
    return any(isinstance(n, (exp.Join, exp.With, exp.Lateral)) or
               (isinstance(n, exp.Subquery) and isinstance(n.parent, exp.From)) for n in q.walk())


def pushdown_predicates(q: exp.Expression) -> exp.Expression:
    """`q` with its conditions pushed down (in place; `q` is returned)."""
    if not _has_target(q):
        return q
    root = build_scope(q)
    if not root:
        return q
    ref_count = root.ref_count()
    for scope in reversed(list(root.traverse())):
        select = scope.expression
        where = select.args.get("where")
        joins = select.args.get("joins") or []
        if any(join.args.get("nearest") for join in joins):
            continue
        if where:
            join_index = {join.alias_or_name: i for i, join in enumerate(joins)}
            # a RIGHT or FULL join null-extends everything joined before it, and a WHERE on
            # it removes those rows: only sources after the last such join take conditions
            last_null_extending = max((i for i, join in enumerate(joins) if join.side in ("RIGHT", "FULL")),
                                      default=-1)
            reachable = {}
            for name, (node, source) in scope.selected_sources.items():
                parent = node.find_ancestor(exp.Join, exp.From)
                position = join_index.get(parent.alias_or_name, -1) if isinstance(parent, exp.Join) else -1
                if position >= last_null_extending:
                    reachable[name] = (node, source)
            _pushdown(where.this, reachable, ref_count, join_index)
        for join in joins:  # a join's own conditions go into its own source only
            name = join.alias_or_name
            if join.side not in ("RIGHT", "FULL") and name in scope.selected_sources:
                _pushdown(join.args.get("on"), {name: scope.selected_sources[name]}, ref_count)
    return q


def _unparen(e: exp.Expression) -> exp.Expression:
    while isinstance(e, exp.Paren):
        e = e.this
    return e


def _pushdown(condition, sources, ref_count, join_index=None) -> None:
    if not condition:
        return
    inner = _unparen(condition)
    cnf_like = normalized(inner) or not normalized(inner, dnf=True)
    kind = exp.And if cnf_like else exp.Or
    predicates = [p for p in _flatten(inner, kind)]
    if cnf_like:
        pushdown_cnf(predicates, sources, ref_count, join_index=join_index)
    else:
        pushdown_dnf(predicates, sources, ref_count, join_index=join_index)


def _flatten(e: exp.Expression, kind: type) -> list[exp.Expression]:
    """The operands of a chain of `kind` (AND or OR), through parentheses."""
    e = _unparen(e) if isinstance(_unparen(e), kind) else e
    if not isinstance(e, kind):
        return [e]
    return _flatten(e.this, kind) + _flatten(e.expression, kind)
