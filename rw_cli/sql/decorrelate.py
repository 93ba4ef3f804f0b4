"""Subqueries in expressions of a materialized view, rewritten as joins (apply elimination).

A subquery in an expression is a dependent join (an *apply*) of the outer query with the
subquery. As RisingWave's optimizer does, after Neumann & Kemper's "Unnesting Arbitrary
Queries", the apply becomes ordinary joins and aggregations, so that the stream operators
that maintain joins and aggregates maintain the subquery too. Its key is the *domain*: the
distinct values of the outer columns the subquery reads (`SELECT DISTINCT t1.b FROM t1`).
The subquery is joined with the domain (its correlated predicates become that join's
condition, equalities or not), grouped by the domain columns when it aggregates, and the
outer query joins the result on the domain columns (`IS NOT DISTINCT FROM`: a NULL outer
value is a domain value too).

The rules, on the qualified sqlglot tree:
- `[NOT] EXISTS (q)`, `x [NOT] IN (q)`, `x op ANY|ALL (q)` as a conjunct of WHERE: a semi
  (anti) join with q, q's correlated predicates being the join condition (IN is `= ANY`,
  `x op ALL (q)` is `NOT (x negated-op ANY (q))`). NOT IN also matches when either side is
  NULL: a NULL makes `x NOT IN (...)` unknown, which WHERE drops (and an empty q keeps every
  row, NULL or not).
- a scalar subquery of aggregates: a LEFT JOIN with its aggregates grouped by the domain.
  A domain value without rows has no group; its outer rows read the subquery's expression
  over an empty set (count 0, the other aggregates NULL), the classic count bug avoided.
  A subquery that may return more rows is refused, as RisingWave refuses it in a streaming
  plan (a batch query checks the rows at run time).
- `EXISTS (q)` elsewhere (under OR, in the select list): a LEFT JOIN with the distinct domain
  values that have rows in q (a mark join); the mark is the EXISTS.
- `x IN (q)` / `x op ANY|ALL (q)` elsewhere: a mark join for the rows that compare true,
  and counts of q's rows per domain value (none, with a NULL) for IN's three-valued answer.
- in a query that aggregates, a joined value outside the aggregates is one more group key
  (it depends on group keys only); aggregates without GROUP BY are computed first.
- `JOIN LATERAL (q) AS b ON cond` (or `, LATERAL (q) AS b`): q joined with the domain of the
  FROM items left of it becomes a derived table b with the domain columns, joined on them
  (and cond) with the same join kind. q of aggregates without GROUP BY has one row per
  domain value, also one without rows: the domain LEFT JOINed with q's groups, a missing
  group reading q's items over no rows (count 0).
The outermost query is rewritten first: a subquery that reads columns of a query two levels
up reads the middle query's domain columns once the middle query is rewritten.
"""
from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

from rw_cli.errors import BindError, NotSupported
from rw_cli.sql.output_name import AS_WRITTEN, output_name

_COUNTS = (exp.Count, exp.CountIf, exp.ApproxDistinct)


def _from(s: exp.Select) -> exp.From | None:
    return s.args.get("from_") or s.args.get("from")


def _and(conds: list[exp.Expression]) -> exp.Expression | None:
    out = None
    for c in conds:
        out = c if out is None else exp.and_(out, c)
    return out


def _conjuncts(e: exp.Expression | None) -> list[exp.Expression]:
    if e is None:
        return []
    if isinstance(e, exp.Paren):
        return _conjuncts(e.this)
    if isinstance(e, exp.And):
        return _conjuncts(e.this) + _conjuncts(e.expression)
    return [e]


def local_aliases(s: exp.Select) -> set[str]:
    """The names a SELECT's FROM and JOINs define."""
    f = _from(s)
    sources = ([f.this] if f is not None else []) + [j.this for j in s.args.get("joins") or []]
    return {src.alias_or_name for src in sources}


_NEGATED = {exp.EQ: exp.NEQ, exp.NEQ: exp.EQ, exp.LT: exp.GTE, exp.GTE: exp.LT, exp.GT: exp.LTE, exp.LTE: exp.GT}


def is_quantified(n: exp.Expression) -> bool:
    """`x op ANY (query)` / `x op ALL (query)` (op a comparison)."""
    return type(n) in _NEGATED and isinstance(n.expression, (exp.Any, exp.All)) and \
        isinstance(n.expression.this, (exp.Query, exp.Subquery))


def quantified(n: exp.Expression) -> tuple[exp.Expression, type, bool]:
    """(x, op, negated) of IN or a quantified comparison: IN is `x = ANY (q)`; `x op ALL (q)`
    is `NOT (x negop ANY (q))`."""
    if isinstance(n, exp.In):
        return n.this, exp.EQ, False
    if isinstance(n.expression, exp.All):
        return n.this, _NEGATED[type(n)], True
    return n.this, type(n), False


def is_subquery_expr(n: exp.Expression) -> bool:
    """EXISTS, IN (query), a quantified comparison or a scalar subquery (not a derived table)."""
    if isinstance(n, exp.Exists):
        return True
    if isinstance(n, exp.In):
        return n.args.get("query") is not None
    if is_quantified(n):
        return True
    return isinstance(n, exp.Subquery) and not isinstance(
        n.parent, (exp.From, exp.Join, exp.In, exp.SetOperation, exp.Any, exp.All, exp.Lateral))


def subqueries_in(e: exp.Expression | None) -> list[exp.Expression]:
    """The subquery expressions of `e` that are not inside another query."""
    out: list[exp.Expression] = []

    def visit(n: exp.Expression) -> None:
        if is_subquery_expr(n):
            out.append(n)
            return
        if isinstance(n, exp.Query):
            return
        for c in n.iter_expressions():
            visit(c)
    if e is not None:
        visit(e)
    return out


def subquery_body(n: exp.Expression) -> exp.Expression:
    """The query of an EXISTS, IN, quantified comparison or scalar subquery."""
    if isinstance(n, exp.In):
        n = n.args["query"]
    elif is_quantified(n):
        n = n.expression
    q = n.this
    while isinstance(q, exp.Subquery):
        q = q.this
    return q


def outer_columns(e: exp.Expression, q: exp.Expression | None = None) -> list[exp.Column]:
    """Columns of `e` (at any depth) that name no source of the query `q` (`e` itself by
    default, else a query around `e`) or of a query inside it around them: the correlated
    references to a query enclosing q."""
    q = e if q is None else q
    out = []
    for col in e.find_all(exp.Column):
        if not col.table:
            continue
        n: exp.Expression | None = col
        local = False
        while n is not None:
            if isinstance(n, exp.Select) and col.table in local_aliases(n):
                local = True
                break
            if n is q:
                break
            n = n.parent
        if not local:
            out.append(col)
    return out


def _key(c: exp.Column) -> tuple[str, str]:
    return c.table, c.name


def _refs(cols: list[exp.Column]) -> list[tuple[str, str]]:
    return list(dict.fromkeys(_key(c) for c in cols))


def _has_aggs(q: exp.Select) -> bool:
    """Whether q's select list or HAVING calls an aggregate of q (not a window function, not
    one of a nested query)."""
    for e in list(q.expressions) + ([q.args["having"]] if q.args.get("having") else []):
        for a in e.find_all(exp.AggFunc):
            if a.find_ancestor(exp.Select) is not q:
                continue
            p = a.parent
            while isinstance(p, (exp.Filter, exp.IgnoreNulls, exp.RespectNulls)):
                p = p.parent
            if not isinstance(p, exp.Window):
                return True
    return False


def _has_windows(q: exp.Select) -> bool:
    return any(w.find_ancestor(exp.Select) is q for e in q.expressions for w in e.find_all(exp.Window))


def _limited(q: exp.Select) -> bool:
    return bool(q.args.get("limit") or q.args.get("offset"))


def is_plain(q: exp.Expression) -> bool:
    """SELECT ... FROM ... WHERE ...: rows of the FROM, filtered (DISTINCT aside)."""
    return isinstance(q, exp.Select) and not (q.args.get("group") or q.args.get("having") or _has_aggs(q)
                                              or _has_windows(q) or _limited(q))


def is_scalar_agg(q: exp.Expression) -> bool:
    """Aggregates without GROUP BY: exactly one row (none when HAVING is false)."""
    return isinstance(q, exp.Select) and not q.args.get("group") and _has_aggs(q) and not _has_windows(q) \
        and not _limited(q)


def is_grouped(q: exp.Expression) -> bool:
    return isinstance(q, exp.Select) and bool(q.args.get("group")) and not _has_windows(q) and not _limited(q)


def on_empty(e: exp.Expression) -> exp.Expression:
    """`e` (a detached select item or HAVING condition) over an empty set of rows: counts are
    0, the other aggregates NULL (those of queries inside `e` are theirs)."""
    def repl(n: exp.Expression):
        agg = n.this if isinstance(n, exp.Filter) and isinstance(n.this, exp.AggFunc) else n
        if isinstance(agg, exp.AggFunc) and agg.find_ancestor(exp.Window, exp.Select) is None:
            return exp.Literal.number(0) if isinstance(agg, _COUNTS) else exp.Null()
        return n
    return e.transform(repl)


def _col(table: str, name: str) -> exp.Column:
    return exp.column(name, table=table)


def _aliased(e: exp.Expression, name: str) -> exp.Alias:
    return exp.Alias(this=e, alias=exp.to_identifier(name))


def _subquery(q: exp.Expression, alias: str) -> exp.Subquery:
    return exp.Subquery(this=q, alias=exp.TableAlias(this=exp.to_identifier(alias)))


@dataclass
class _Outer:
    """What a domain is computed from: the outer query's FROM, JOINs and the conjuncts of its
    WHERE without subqueries, as they were before any LEFT JOIN of a subquery was added."""

    from_: exp.From
    joins: list[exp.Join]
    where: list[exp.Expression]


class Decorrelator:
    """Rewrites every subquery expression of a qualified query into joins (see the module)."""

    def __init__(self) -> None:
        self.count = 0
        self.grouping = False  # the subquery being rewritten is a group key of its query

    def fresh(self, prefix: str) -> str:
        self.count += 1
        return f"__{prefix}{self.count}"

    # -- walk ---------------------------------------------------------------------------------
    def rewrite(self, q: exp.Expression) -> exp.Expression:
        for s in _child_selects(q, include_self=True):
            self.rewrite_select(s)
        return q

    def rewrite_select(self, s: exp.Select) -> None:
        for j in s.args.get("joins") or []:
            if subqueries_in(j.args.get("on")):
                raise NotSupported("a subquery in a join condition of a materialized view")
        if subqueries_in(s.args.get("group")):
            raise NotSupported("a subquery in GROUP BY of a materialized view")
        self.laterals(s)
        self.semi_joins(s)
        aggregating = bool(s.args.get("group")) or _has_aggs(s)
        if aggregating and not s.args.get("group") and any(
                not isinstance(n.find_ancestor(exp.AggFunc, exp.Select), exp.AggFunc)
                for key in ("expressions", "having", "order") for e in _clause(s, key) for n in subqueries_in(e)):
            self.aggregate_first(s)
            aggregating = False
        outer = _outer(s)
        clauses = ["expressions", "where", "having"] + (["order"] if _limited(s) else [])
        for _ in range(1024):
            found = [(key, n) for key in clauses for e in _clause(s, key) for n in subqueries_in(e)]
            if not found:
                break
            key, n = found[0]
            in_agg = isinstance(n.find_ancestor(exp.AggFunc, exp.Select), exp.AggFunc)
            self.grouping = aggregating and key != "where" and not in_agg
            self.replace(s, n, outer)
        for child in _child_selects(s):
            self.rewrite_select(child)

    def aggregate_first(self, s: exp.Select) -> None:
        """Aggregates without GROUP BY beside a subquery: the aggregates (one row, even over no
        rows) become a derived table that the subquery is then joined to, HAVING its WHERE."""
        calls: dict[str, exp.Expression] = {}
        for key in ("expressions", "having", "order"):
            for e in _clause(s, key):
                for a in list(e.find_all(exp.AggFunc)):
                    call = a.parent if isinstance(a.parent, exp.Filter) else a
                    if a.find_ancestor(exp.Select) is s and not isinstance(call.parent, exp.Window):
                        calls.setdefault(call.sql(), call)
        alias = self.fresh("a")
        inner = exp.select(*[_aliased(c.copy(), f"a{i}") for i, c in enumerate(calls.values())])
        for key in ("from_", "joins", "where"):
            inner.set(key, s.args.get(key))
        names = {sql: f"a{i}" for i, sql in enumerate(calls)}
        for key in ("expressions", "having", "order"):
            for e in _clause(s, key):
                for a in list(e.find_all(exp.AggFunc, exp.Filter)):
                    if a.sql() in names and a.find_ancestor(exp.Select) is s:
                        a.replace(_col(alias, names[a.sql()]))
        having = s.args.get("having")
        s.set("from_", exp.From(this=_subquery(inner, alias)))
        s.set("joins", None)
        s.set("where", exp.Where(this=having.this) if having is not None else None)
        s.set("having", None)

    # -- LATERAL subqueries in FROM ------------------------------------------------------------
    def laterals(self, s: exp.Select) -> None:
        """Every `JOIN LATERAL (query)` of s as a join with a derived table (see the module);
        LATERAL over a set-returning function is the planner's."""
        f = _from(s)
        if f is not None and isinstance(f.this, exp.Lateral):
            raise NotSupported("LATERAL as the first FROM item of a materialized view")
        joins = list(s.args.get("joins") or [])
        for i, j in enumerate(joins):
            if isinstance(j.this, exp.Lateral) and isinstance(j.this.this, exp.Subquery):
                joins[i] = self.lateral_join(s, _Outer(f.copy(), [x.copy() for x in joins[:i]], []), j)
        s.set("joins", joins or None)

    def lateral_join(self, s: exp.Select, outer: _Outer, j: exp.Join) -> exp.Join:
        """The join `j` of a LATERAL subquery, `outer` being the FROM items left of it."""
        lateral = j.this
        q = subquery_body(lateral)
        alias = lateral.args.get("alias")
        name = alias.name if alias is not None and alias.name else self.fresh("l")
        if not outer_columns(q):  # uncorrelated: a derived table
            j = j.copy()
            j.set("this", exp.Subquery(this=q.copy(), alias=alias.copy() if alias is not None else
                                       exp.TableAlias(this=exp.to_identifier(name))))
            return j
        side = (j.side or "").upper()
        if side in ("RIGHT", "FULL"):
            raise NotSupported(f"{side} JOIN LATERAL in a materialized view")
        if not isinstance(q, exp.Select) or not (is_plain(q) or is_grouped(q) or is_scalar_agg(q)) \
                or q.args.get("having") and is_scalar_agg(q):
            raise NotSupported("a correlated LATERAL subquery with LIMIT, window functions, HAVING without "
                               "GROUP BY or set operations in a materialized view")
        if q.args.get("distinct") is not None and q.args["distinct"].args.get("on") is not None:
            raise NotSupported("a correlated LATERAL subquery with DISTINCT ON in a materialized view")
        left = {src.alias_or_name for src in [outer.from_.this] + [x.this for x in outer.joins]}
        if any(c.table not in left for c in outer_columns(q)):
            raise NotSupported("a LATERAL subquery reading columns of an enclosing query, in a "
                               "materialized view")
        cols = [c.name for c in alias.columns] if alias is not None and alias.columns else []
        names = cols + [e.alias_or_name for e in q.expressions[len(cols):]]
        body, keys = self.lateral_body(q, s, outer, names)
        on = j.args.get("on")
        cond = _and([c for c in (_domain_cond(keys, name, "__k"), on) if c is not None
                     and not (isinstance(c, exp.Boolean) and c.this)]) or exp.true()
        if side == "LEFT":
            return exp.Join(this=_subquery(body, name), side="LEFT", on=cond)
        return exp.Join(this=_subquery(body, name), on=cond)

    def lateral_body(self, q: exp.Select, s: exp.Select, outer: _Outer, names: list[str]):
        """q with the domain of its outer references joined in, its items named `names`
        after the domain columns `__k0..`; for aggregates without GROUP BY, one row for every
        domain value. Returns (query, domain column keys)."""
        scalar = is_scalar_agg(q)
        distinct = q.args.get("distinct")
        body, keys = self._apply(q, s, outer, items=[e.unalias().copy() for e in q.expressions],
                                 group=is_grouped(q))
        nk = len(keys)
        domain_cols = [e.this.copy() for e in body.expressions[:nk]]
        items = [e.this for e in body.expressions[nk:]]
        body.set("expressions", [_aliased(c.copy(), f"__k{i}") for i, c in enumerate(domain_cols)] +
                 [_aliased(e, n) for e, n in zip(items, names)])
        if distinct is not None:
            body.set("distinct", exp.Distinct())
        if not scalar:
            return body, keys
        g = self.fresh("g")
        d = domain_cols[0].table
        body.set("expressions", list(body.expressions) + [_aliased(exp.true(), "__p")])
        empty = [on_empty(e) for e in items]
        missing = exp.Is(this=_col(g, "__p"), expression=exp.Null())
        full = exp.select(*[_aliased(c.copy(), f"__k{i}") for i, c in enumerate(domain_cols)], *[
            _aliased(exp.Case(ifs=[exp.If(this=missing.copy(), true=v)], default=_col(g, n)), n)
            for v, n in zip(empty, names)])
        domain = self._domain(outer, keys, {k: c.name for k, c in zip(keys, domain_cols)})
        full.set("from_", exp.From(this=_subquery(domain, d)))
        full.set("joins", [exp.Join(this=_subquery(body, g), side="LEFT", on=_and([
            exp.NullSafeEQ(this=c.copy(), expression=_col(g, f"__k{i}")) for i, c in enumerate(domain_cols)]))])
        return full, keys

    # -- WHERE conjuncts: semi and anti joins --------------------------------------------------
    def semi_joins(self, s: exp.Select) -> None:
        where = s.args.get("where")
        if where is None or _from(s) is None:
            return
        rest = []
        for c in _conjuncts(where.this):
            neg = isinstance(c, exp.Not)
            inner = c.this if neg else c
            while isinstance(inner, exp.Paren):
                inner = inner.this
            if not (isinstance(inner, exp.Exists) or (isinstance(inner, exp.In) and inner.args.get("query"))
                    or is_quantified(inner)):
                rest.append(c)
                continue
            probe, op = None, exp.EQ
            if not isinstance(inner, exp.Exists):
                probe, op, flip = quantified(inner)
                neg = neg != flip
            done = self.semi_join(s, subquery_body(inner), probe, neg, op)
            if done is None:
                rest.append(c)
            elif done is not True:
                rest.append(done)
        s.set("where", exp.Where(this=_and(rest)) if rest else None)

    def semi_join(self, s: exp.Select, q: exp.Expression, probe: exp.Expression | None, anti: bool,
                  op: type = exp.EQ):
        """`s` semi (anti) joined with q (EXISTS, or `probe op ANY (q)`): True when done, a
        constant that stands for the conjunct, or None to leave it to the general rules."""
        kind = "ANTI" if anti else "SEMI"
        if probe is not None:
            _one_column(q, "subquery has too many columns")
        if not isinstance(q, exp.Select):
            if probe is None:
                return None
            raise NotSupported("IN (a set operation) in a materialized view")
        correlated = bool(outer_columns(q))
        if is_scalar_agg(q) and not q.args.get("having") and probe is None:
            return exp.false() if anti else True  # aggregates without GROUP BY: one row, always
        alias = self.fresh("s")
        if not correlated:
            body = q.copy()
            if probe is not None:
                body.set("expressions", [_aliased(q.expressions[0].unalias().copy(), "v")])
            cond: exp.Expression = exp.true()
        elif is_plain(q) and (direct := self._direct(q, alias, probe is not None)) is not None:
            body, cond = direct
        elif is_plain(q) or is_grouped(q):
            items = [q.expressions[0].unalias().copy()] if probe is not None else [exp.true()]
            body, keys = self._apply(q, s, None, items=items, group=is_grouped(q))
            cond = _domain_cond(keys, alias)
        else:
            return None
        if probe is not None:
            cond = _and([c for c in (cond,) if not isinstance(c, exp.Boolean)] +
                        [_in_cond(probe, _col(alias, "v"), anti, op)])
        _join(s, _subquery(body, alias), kind, cond)
        return True

    def _direct(self, q: exp.Select, alias: str, with_item: bool):
        """A plain subquery whose outer references are all in conjuncts of its WHERE (without
        deeper subqueries): those conjuncts are the join condition, over the inner columns
        they read (selected by the subquery, which keeps the other conjuncts as a filter).
        Returns (subquery, condition) or None."""
        q = q.copy()
        where = q.args.get("where")
        corr, rest = [], []
        for c in _conjuncts(where.this if where is not None else None):
            (corr if outer_columns(c, q) else rest).append(c)
        if any(subqueries_in(c) for c in corr):
            return None
        outer_keys = {_key(col) for c in corr for col in outer_columns(c, q)}
        q.set("where", exp.Where(this=_and(rest)) if rest else None)
        if outer_columns(q):  # outer references elsewhere: the select list, joins, deeper subqueries
            return None
        inner = list(dict.fromkeys(_key(col) for c in corr for col in c.find_all(exp.Column)
                                   if _key(col) not in outer_keys))
        names = {k: f"i{n}" for n, k in enumerate(inner)}
        items = [_aliased(_col(*k), names[k]) for k in inner]
        if with_item:
            items.append(_aliased(q.expressions[0].unalias(), "v"))
        q.set("expressions", items or [_aliased(exp.true(), "v")])
        q.set("distinct", None)
        q.set("order", None)
        cond = []
        for c in corr:
            c = c.copy()
            for col in list(c.find_all(exp.Column)):
                if _key(col) in names:
                    col.replace(_col(alias, names[_key(col)]))
            cond.append(c)
        return q, _and(cond)

    # -- general positions --------------------------------------------------------------------
    def replace(self, s: exp.Select, n: exp.Expression, outer: _Outer | None) -> None:
        if isinstance(n, exp.Exists):
            n.replace(self.exists_value(s, subquery_body(n), outer))
        elif isinstance(n, exp.In) or is_quantified(n):
            probe, op, flip = quantified(n)
            value = self.in_value(s, subquery_body(n), probe, op, outer)
            n.replace(exp.Not(this=exp.Paren(this=value)) if flip else value)
        else:
            n.replace(self.scalar_value(s, subquery_body(n), outer))

    def scalar_value(self, s: exp.Select, q: exp.Expression, outer: _Outer | None) -> exp.Expression:
        _one_column(q)
        q = _merged_into_aggregate(q)
        if isinstance(q, exp.Select) and _from(q) is None:
            if _has_aggs(q) or q.args.get("group") or _limited(q):
                raise NotSupported("a subquery without FROM that aggregates, in a materialized view")
            item = q.expressions[0].unalias().copy()
            where = q.args.get("where")
            if where is None:
                return exp.Paren(this=item)
            return exp.Case(ifs=[exp.If(this=where.this.copy(), true=item)])
        if isinstance(q, exp.Select) and is_scalar_agg(q):
            q = q.copy()
            q.set("distinct", None)
            return self.apply_scalar(s, q, q.expressions[0].unalias().copy(), outer)
        if isinstance(q, exp.Select) and _at_most_one_row(q):
            if outer_columns(q):
                raise NotSupported("a correlated scalar subquery with LIMIT in a materialized view")
            alias = self.fresh("sq")
            body = q.copy()
            body.set("expressions", [_aliased(q.expressions[0].unalias().copy(), "v")])
            _join(s, _subquery(body, alias), "LEFT", exp.true())
            return self._joined_value(s, _col(alias, "v"), [])
        raise BindError("Scalar subquery might produce more than one row")

    def exists_value(self, s: exp.Select, q: exp.Expression, outer: _Outer | None) -> exp.Expression:
        """EXISTS (q) where it is not a conjunct: a mark join with the domain values that have
        rows in q."""
        if isinstance(q, exp.Select) and is_scalar_agg(q):
            if not q.args.get("having"):
                return exp.true()
            value = self.apply_scalar(s, q.copy(), exp.true(), outer)
            return exp.Not(this=exp.Is(this=value, expression=exp.Null()))
        if not isinstance(q, exp.Select):
            raise NotSupported("EXISTS (a set operation) in a materialized view")
        alias = self.fresh("m")
        if not outer_columns(q):
            body = exp.select(_aliased(exp.true(), "p")).from_(_subquery(q.copy(), self.fresh("e")), copy=False)
            keys: list[tuple[str, str]] = []
        elif is_plain(q) or is_grouped(q):
            body, keys = self._apply(q, s, outer, items=[exp.true()], group=is_grouped(q))
            body.set("expressions", body.expressions[:len(keys)] + [_aliased(exp.true(), "p")])
            if not is_grouped(q):
                body.set("group", None)
        else:
            raise NotSupported("a correlated EXISTS with LIMIT or window functions in a materialized view")
        body.set("distinct", exp.Distinct())
        _join(s, _subquery(body, alias), "LEFT", _domain_cond(keys, alias))
        mark = self._joined_value(s, _col(alias, "p"), keys)
        return exp.Coalesce(this=mark, expressions=[exp.false()])  # the mark: TRUE, or NULL without a match

    def in_value(self, s: exp.Select, q: exp.Expression, probe: exp.Expression, op: type,
                 outer: _Outer | None) -> exp.Expression:
        """`probe op ANY (q)` (IN: op is =) where it is not a conjunct, with its three values:
        TRUE when a row of q compares true (a mark join on the domain and the comparison), else
        FALSE when q has no rows, else NULL when x or a row of q is NULL, else FALSE (from
        counts of q's rows, grouped by the domain)."""
        _one_column(q, "subquery has too many columns")
        if isinstance(q, exp.Select) and is_scalar_agg(q) and not q.args.get("having"):
            return op(this=probe.copy(), expression=exp.Subquery(this=q.copy()))
        if not is_plain(q):
            if not isinstance(q, exp.Select) or outer_columns(q):
                raise NotSupported("IN (a correlated subquery that aggregates) under OR or in the select list "
                                   "of a materialized view")
            q = self._single(q)
        q = q.copy()
        q.set("distinct", None)
        item = q.expressions[0].unalias()
        alias = self.fresh("m")
        if op is exp.EQ:  # the distinct (domain, value) pairs, joined on the domain and x = value
            body, keys = self._apply(q, s, outer, items=[item.copy()])
            body.set("expressions", list(body.expressions) + [_aliased(exp.true(), "p")])
            on = [c for c in (_domain_cond(keys, alias),) if not isinstance(c, exp.Boolean)]
            on.append(op(this=probe.copy(), expression=_col(alias, "v")))
        else:  # the comparison is one more correlated predicate: x's columns join the domain
            marked = self._renamed(q.copy(), {c.table for c in probe.find_all(exp.Column)} & local_aliases(q))
            marked.where(op(this=probe.copy(), expression=marked.expressions[0].unalias().copy()), copy=False)
            body, keys = self._apply(marked, s, outer, items=[exp.true()])
            body.set("expressions", body.expressions[:len(keys)] + [_aliased(exp.true(), "p")])
            on = [_domain_cond(keys, alias)]
        body.set("distinct", exp.Distinct())
        _join(s, _subquery(body, alias), "LEFT", _and(on))
        mark = self._joined_value(s, _col(alias, "p"), keys)
        star = exp.Count(this=exp.Star())
        rows = exp.Case(ifs=[  # 0: no rows, 2: a NULL row, 1: rows without NULL
            exp.If(this=exp.EQ(this=star.copy(), expression=exp.Literal.number(0)), true=exp.Literal.number(0)),
            exp.If(this=exp.GT(this=star.copy(), expression=exp.Count(this=item.copy())), true=exp.Literal.number(2)),
        ], default=exp.Literal.number(1))
        kind = self.apply_scalar(s, q, rows, outer)
        return exp.Case(ifs=[
            exp.If(this=exp.Coalesce(this=mark, expressions=[exp.false()]), true=exp.true()),
            exp.If(this=exp.EQ(this=kind.copy(), expression=exp.Literal.number(0)), true=exp.false()),
            exp.If(this=exp.or_(exp.EQ(this=kind.copy(), expression=exp.Literal.number(2)),
                                exp.Is(this=exp.Paren(this=probe.copy()), expression=exp.Null())), true=exp.Null()),
        ], default=exp.false())

    def _renamed(self, q: exp.Select, names: set[str]) -> exp.Select:
        """q with its sources named `names` renamed (and the columns that read them), so that
        an outer column of the same name can be put into it."""
        for name in names:
            new = self.fresh("r")
            for col in list(q.find_all(exp.Column)):
                if col.table != name:
                    continue
                n: exp.Expression | None = col
                while n is not None and not (isinstance(n, exp.Select) and name in local_aliases(n)):
                    n = n.parent
                if n is q:
                    col.set("table", exp.to_identifier(new))
            sources = [_from(q).this] + [j.this for j in q.args.get("joins") or []]
            for src in sources:
                if src.alias_or_name == name:
                    src.set("alias", exp.TableAlias(this=exp.to_identifier(new)))
        return q

    def _single(self, q: exp.Select) -> exp.Select:
        """An uncorrelated query as a derived table, read by its one column."""
        alias = self.fresh("e")
        return exp.select(_col(alias, q.expressions[0].alias_or_name)).from_(_subquery(q.copy(), alias), copy=False)

    # -- the apply: a subquery joined with its domain -----------------------------------------
    def apply_scalar(self, s: exp.Select, q: exp.Select, item: exp.Expression,
                     outer: _Outer | None) -> exp.Expression:
        """`s` LEFT JOIN `item` (an aggregate expression over q's rows) grouped by the domain;
        a domain value without rows reads `item` over no rows."""
        having = q.args.get("having")
        empty = on_empty(item)
        if having is not None:
            empty = exp.Case(ifs=[exp.If(this=on_empty(having.this), true=empty)])
        alias = self.fresh("sq")
        body, keys = self._apply(q, s, outer, items=[item])
        value: exp.Expression = _col(alias, "v")
        cols = [_col(alias, "v")]
        if keys and not isinstance(empty, exp.Null):
            body.set("expressions", body.expressions + [_aliased(exp.true(), "p")])
            value = exp.Case(ifs=[exp.If(this=exp.Is(this=_col(alias, "p"), expression=exp.Null()), true=empty)],
                             default=value)
            cols.append(_col(alias, "p"))
        _join(s, _subquery(body, alias), "LEFT", _domain_cond(keys, alias))
        self._group_by(s, cols, keys)
        return value

    def _joined_value(self, s: exp.Select, col: exp.Column, keys: list[tuple[str, str]]) -> exp.Column:
        self._group_by(s, [col], keys)
        return col

    def _group_by(self, s: exp.Select, cols: list[exp.Column], keys: list[tuple[str, str]]) -> None:
        """A value joined in for a select item of an aggregating query is one more group key:
        it depends only on the outer columns it reads, which must be group keys themselves."""
        if not self.grouping:
            return
        group = s.args.get("group")
        if group is None:
            raise NotSupported("a subquery beside aggregates without GROUP BY in a materialized view")
        grouped = {g.sql() for g in group.expressions}
        for k in keys:
            if _col(*k).sql() not in grouped:
                raise BindError(f'subquery uses ungrouped column "{_col(*k).sql()}" from outer query')
        group.set("expressions", list(group.expressions) + [c.copy() for c in cols])

    def _apply(self, q: exp.Select, s: exp.Select, outer: _Outer | None, items: list[exp.Expression],
               group: bool = False):
        """q joined with the domain of its outer references, which become domain columns;
        selects the domain columns `k0..` then `items` as `v`, grouped by the domain columns
        (and q's own GROUP BY) when q aggregates. Returns (query, domain column keys)."""
        q = q.copy()
        q.set("order", None)
        q.set("expressions", [_aliased(i, "v") for i in items])
        _set_function_tables(q)
        _pull_up_derived_filters(q)
        keys = _refs(outer_columns(q))
        aggregates = group or _has_aggs(q)
        if not keys:
            return q, []
        outer = outer if outer is not None else _outer(s)
        if outer is None:
            raise NotSupported("a correlated subquery in a query without FROM, in a materialized view")
        d = self.fresh("d")
        names = {k: f"c{i}" for i, k in enumerate(keys)}
        for col in outer_columns(q):
            col.replace(_col(d, names[_key(col)]))
        self._join_domain(q, d, self._domain(outer, keys, names))
        key_items = [_aliased(_col(d, names[k]), f"k{i}") for i, k in enumerate(keys)]
        q.set("expressions", key_items + list(q.expressions))
        if aggregates:
            old = list(q.args["group"].expressions) if q.args.get("group") else []
            q.set("group", exp.Group(expressions=[_col(d, names[k]) for k in keys] + old))
        return q, keys

    @staticmethod
    def _domain(outer: _Outer, keys: list[tuple[str, str]], names: dict) -> exp.Select:
        """SELECT DISTINCT of the outer columns, over the outer query's FROM and filters."""
        domain = exp.select(*[_aliased(_col(*k), names[k]) for k in keys])
        domain.set("distinct", exp.Distinct())
        domain.set("from_", outer.from_.copy())
        if outer.joins:
            domain.set("joins", [j.copy() for j in outer.joins])
        if outer.where:
            domain.set("where", exp.Where(this=_and([c.copy() for c in outer.where])))
        return domain

    @staticmethod
    def _join_domain(q: exp.Select, d: str, domain: exp.Select) -> None:
        """The domain joined into q: q's conjuncts that read it are the join condition, unless
        q's own joins read it (then it comes first and the conjuncts stay in WHERE)."""
        where = q.args.get("where")
        on, rest = [], []
        for c in _conjuncts(where.this if where is not None else None):
            reads = any(col.table == d for col in c.find_all(exp.Column))
            (on if reads and not subqueries_in(c) else rest).append(c)
        joins = list(q.args.get("joins") or [])
        source = _subquery(domain, d)
        if _from(q) is None:
            q.set("from_", exp.From(this=source))
            rest = on + rest
        elif any(col.table == d for col in _from(q).find_all(exp.Column)):
            # the first item reads the domain (`FROM unnest(outer.a) i`): a set of each
            # domain row, after it (a lateral item, as `FROM t, unnest(t.a)`)
            q.set("joins", [exp.Join(this=_from(q).this.copy())] + joins)
            q.set("from_", exp.From(this=source))
            rest = on + rest
        elif any(col.table == d for j in joins for col in j.find_all(exp.Column)):
            q.set("joins", [exp.Join(this=source, on=exp.true())] + joins)
            rest = on + rest
        else:
            q.set("joins", joins + [exp.Join(this=source, on=_and(on) or exp.true())])
        q.set("where", exp.Where(this=_and(rest)) if rest else None)


_ROW_SHAPING = ("group", "having", "distinct", "limit", "offset", "qualify", "windows")


def _set_function_tables(q: exp.Select) -> None:
    """`FROM (SELECT unnest(outer.a) AS i) d`: a derived table that is one set function of
    no FROM is that function as a FROM item (`unnest(outer.a) AS d(i)`), which the domain
    join reaches as a lateral item."""
    sources = [f.this for f in [_from(q)] if f is not None] + [j.this for j in q.args.get("joins") or []]
    for src in sources:
        body = src.this if isinstance(src, exp.Subquery) else None
        if not isinstance(body, exp.Select) or _from(body) is not None or len(body.expressions) != 1 \
                or any(body.args.get(k) for k in ("where", "joins") + _ROW_SHAPING) or not src.alias:
            continue
        item = body.expressions[0]
        fn = item.unalias()
        if isinstance(fn, exp.Explode):  # unnest(...) in a select list
            array = fn.this
        elif isinstance(fn, exp.Unnest) and len(fn.expressions) == 1:
            array = fn.expressions[0]
        else:
            continue
        unnest = exp.Unnest(expressions=[array.copy()],
                            alias=exp.TableAlias(this=exp.to_identifier(src.alias),
                                                 columns=[exp.to_identifier(item.alias_or_name)]))
        src.replace(unnest)


def _pull_up_derived_filters(q: exp.Select) -> None:
    """A derived table of q's FROM filtered by the outer query (`FROM (SELECT x, y FROM t2
    WHERE o.y = t2.y) d JOIN t3 ...`) cannot see the domain q is joined with: each such
    conjunct moves up to q's WHERE, over the derived table's columns (`o.y = d.y`), when the
    derived table only filters and projects and its columns carry what the conjunct reads
    (apply elimination through a projection, as RisingWave's optimizer pushes the domain)."""
    sources = [f.this for f in [_from(q)] if f is not None] + [j.this for j in q.args.get("joins") or []]
    moved: list[exp.Expression] = []
    for src in sources:
        body = src.this if isinstance(src, exp.Subquery) else None
        where = body.args.get("where") if isinstance(body, exp.Select) else None
        if where is None or not src.alias or any(body.args.get(k) for k in _ROW_SHAPING) or _has_aggs(body) \
                or any(e.find(exp.Window) for e in body.expressions):
            continue
        outputs = {_key(e.unalias()): e.alias_or_name for e in body.expressions if isinstance(e.unalias(), exp.Column)}
        # a column the conjunct reads that the derived table does not pass on is added to it,
        # unless q reads the derived table's columns by `*`
        widen = not any(isinstance(i.unalias(), exp.Star) or
                        (isinstance(i.unalias(), exp.Column) and isinstance(i.unalias().this, exp.Star))
                        for i in q.expressions)
        outer = {id(c) for c in outer_columns(body, q)}
        kept = []
        for c in _conjuncts(where.this):
            inner = [col for col in c.find_all(exp.Column) if id(col) not in outer]
            if not any(id(col) in outer for col in c.find_all(exp.Column)) or subqueries_in(c) \
                    or not (widen or all(_key(col) in outputs for col in inner)):
                kept.append(c)
                continue
            for col in inner:
                if _key(col) not in outputs:
                    outputs[_key(col)] = f"__up{len(body.expressions)}"
                    body.set("expressions", list(body.expressions) + [_aliased(col.copy(), outputs[_key(col)])])
                col.replace(_col(src.alias, outputs[_key(col)]))
            moved.append(c)
        body.set("where", exp.Where(this=_and(kept)) if kept else None)
    if moved:
        where = q.args.get("where")
        q.set("where", exp.Where(this=_and(_conjuncts(where.this if where is not None else None) + moved)))


def _child_selects(q: exp.Expression, include_self: bool = False) -> list[exp.Select]:
    """The SELECTs right below `q` (through set operations, derived tables and subqueries)."""
    out: list[exp.Select] = []

    def visit(n: exp.Expression, top: bool) -> None:
        if isinstance(n, exp.Select) and (not top or include_self):
            out.append(n)
            return
        for c in n.iter_expressions():
            visit(c, False)
    visit(q, True)
    return out


def _clause(s: exp.Select, key: str) -> list[exp.Expression]:
    v = s.args.get(key)
    if v is None:
        return []
    return list(v) if isinstance(v, list) else [v]


def _outer(s: exp.Select) -> _Outer | None:
    f = _from(s)
    if f is None:
        return None
    where = s.args.get("where")
    conds = [c.copy() for c in _conjuncts(where.this if where is not None else None) if not subqueries_in(c)]
    return _Outer(f.copy(), [j.copy() for j in s.args.get("joins") or []], conds)


def _one_column(q: exp.Expression, message: str = "subquery must return only one column") -> None:
    first = q
    while isinstance(first, exp.SetOperation):
        first = first.this
    if isinstance(first, exp.Select) and len(first.expressions) != 1:
        raise BindError(message)


def _merged_into_aggregate(q: exp.Expression) -> exp.Expression:
    """`SELECT f(x.j) FROM (SELECT max(i) AS j FROM a ...) x [WHERE p(x.j)]` (a CTE's aggregate
    read by a scalar subquery) is the aggregate itself, `SELECT f(max(i)) FROM a ... [HAVING
    p(max(i))]`: one row at most, which the rules for aggregates decorrelate. Anything else
    is returned as it was."""
    if not isinstance(q, exp.Select) or q.args.get("joins") or any(q.args.get(k) for k in _ROW_SHAPING) \
            or _has_aggs(q) or _has_windows(q):
        return q
    src = _from(q).this if _from(q) is not None else None
    inner = src.this if isinstance(src, exp.Subquery) else None
    if not src or not src.alias or not is_scalar_agg(inner) or inner.args.get("having") is not None \
            or any(isinstance(i.unalias(), exp.Star) for i in q.expressions):
        return q
    items = {e.alias_or_name: e.unalias() for e in inner.expressions}

    def substitute(e: exp.Expression) -> exp.Expression | None:
        def repl(n: exp.Expression) -> exp.Expression:
            if isinstance(n, exp.Column) and n.table in (src.alias, "") and n.name in items:
                return exp.Paren(this=items[n.name].copy())
            return n
        out = e.copy().transform(repl)
        # a column the derived table does not give, or a subquery: not merged
        return None if any(c.table == src.alias for c in out.find_all(exp.Column)) or subqueries_in(out) else out

    merged = inner.copy()
    exprs = [substitute(e) for e in q.expressions]
    where = q.args.get("where")
    having = substitute(where.this) if where is not None else None
    if any(e is None for e in exprs) or (where is not None and having is None):
        return q
    merged.set("expressions", exprs)
    if having is not None:
        merged.set("having", exp.Having(this=having))
    return merged


def _at_most_one_row(q: exp.Select) -> bool:
    limit = q.args.get("limit")
    if limit is not None and isinstance(limit.expression, exp.Literal) and not limit.expression.is_string:
        return int(limit.expression.this) <= 1
    return False


def _in_cond(probe: exp.Expression, item: exp.Expression, anti: bool, op: type = exp.EQ) -> exp.Expression:
    """IN (ANY) as a join condition; for NOT IN (an anti join), a NULL on either side matches
    too: it makes the comparison unknown, and NOT IN with it."""
    eq = op(this=probe.copy(), expression=item.copy())
    if not anti:
        return eq
    return exp.Paren(this=exp.or_(eq, exp.Is(this=probe.copy(), expression=exp.Null()),
                                  exp.Is(this=item.copy(), expression=exp.Null())))


def _domain_cond(keys: list[tuple[str, str]], alias: str, prefix: str = "k") -> exp.Expression:
    return _and([exp.NullSafeEQ(this=_col(*k), expression=_col(alias, f"{prefix}{i}"))
                 for i, k in enumerate(keys)]) or exp.true()


def _join(s: exp.Select, source: exp.Subquery, kind: str, on: exp.Expression) -> None:
    """`source` joined to s; a SELECT without FROM reads one row, as it always did."""
    if _from(s) is None:
        s.set("from_", exp.From(this=_subquery(exp.select(_aliased(exp.Literal.number(1), "one")), "__one")))
    join = exp.Join(this=source, kind=kind, on=on) if kind in ("SEMI", "ANTI") else \
        exp.Join(this=source, side=kind, on=on)
    s.set("joins", list(s.args.get("joins") or []) + [join])


def decorrelate(q: exp.Expression) -> exp.Expression:
    """`q` (qualified) with every subquery expression rewritten as joins."""
    return Decorrelator().rewrite(array_subqueries(q))


EMPTY_ARRAY_OK = "empty_array_typed_by_context"


def _array_of_rows(node: exp.Expression) -> exp.Expression:
    """`ARRAY(SELECT x FROM ... [ORDER BY ...])` as the scalar subquery of an aggregate that
    the rules above maintain: `array_agg(x ORDER BY ...)`, an empty array (never NULL) when
    the subquery has no rows."""
    if not (isinstance(node, exp.Array) and len(node.expressions) == 1):
        return node
    q = node.expressions[0]
    while isinstance(q, exp.Subquery):
        q = q.this
    if not isinstance(q, exp.Select) or len(q.expressions) != 1 or any(
            q.args.get(k) for k in ("group", "having", "limit", "offset", "distinct")) or _has_aggs(q) \
            or _has_windows(q):
        return node
    q = q.copy()
    item = q.expressions[0].unalias()
    order = q.args.get("order")
    q.set("order", None)
    arg = exp.Order(this=item.copy(), expressions=[o.copy() for o in order.expressions]) if order else item.copy()
    q.set("expressions", [exp.alias_(exp.ArrayAgg(this=arg), "array")])
    empty = exp.Array(expressions=[])
    empty.meta[EMPTY_ARRAY_OK] = True
    return exp.Coalesce(this=exp.Subquery(this=q), expressions=[empty])


def _named_array_of_rows(node: exp.Expression) -> exp.Expression:
    """_array_of_rows, a select item keeping its name (`array` unless aliased)."""
    if not (isinstance(node, exp.Alias) and isinstance(node.this, exp.Array)):
        return _array_of_rows(node)
    out = _array_of_rows(node.this)
    if out is node.this:
        return node
    named = exp.alias_(out, "array" if output_name(node) == "array" else node.alias)
    named.meta[AS_WRITTEN] = True
    return named


def array_subqueries(q: exp.Expression) -> exp.Expression:
    """Every ARRAY(subquery) of `q` as an aggregate's scalar subquery (_array_of_rows)."""
    if q.find(exp.Array) is None:
        return q
    return q.transform(_named_array_of_rows)
