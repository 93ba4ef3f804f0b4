"""Binds a SELECT against the catalog and plans it as a stream plan for a materialized view.

The query is first qualified by sqlglot (unknown columns are errors, `*` expands to visible
columns), then planned bottom-up: scans, joins, filter, aggregation, projection. Every
node derives its stream key; a projection that drops stream-key columns keeps them as
hidden columns, as RisingWave does.
"""
from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp
from sqlglot.errors import OptimizeError
from sqlglot.optimizer.qualify import qualify

from rw_cli.common.types import DataType
from rw_cli.engine import duck
from rw_cli.engine.hash_agg import AggCall, agg_return_type
from rw_cli.errors import BindError, CatalogError, NotSupported
from rw_cli.meta.catalog import Catalog, RelationCatalog
from rw_cli.sql.dialect import RwDialect
from rw_cli.sql.plan import (PlanNode, StreamFilter, StreamHashAgg, StreamHashJoin, StreamMaterialize,
                             StreamProject, StreamTableScan)
from rw_cli.sql.transpile import expr_to_duckdb, sqlglot_type

_AGGS = {exp.Count: "count", exp.Sum: "sum", exp.Avg: "avg", exp.Min: "min", exp.Max: "max"}


@dataclass
class Planned:
    node: PlanNode
    scope: list[tuple[str, str]]  # (table alias, column name) per output column
    names: list[str]              # output names (visible ones first)
    visible: int                  # how many leading outputs are visible


def check_relations(tree: exp.Expression, catalog: Catalog) -> list[RelationCatalog]:
    """Every referenced relation, in order; unknown names are errors."""
    ctes = {c.alias for c in tree.find_all(exp.CTE)}
    rels = []
    for t in tree.find_all(exp.Table):
        if t.name in ctes:
            continue
        rel = catalog.get(t.name)
        if rel is None:
            raise CatalogError(f'relation "{t.name}" does not exist')
        if rel not in rels:
            rels.append(rel)
    return rels


def schema_of(rels: list[RelationCatalog], visible_only: bool = True) -> dict:
    return {r.name: {c.name: sqlglot_type(c.type) for c in (r.visible_columns if visible_only else r.columns)}
            for r in rels}


def qualify_query(tree: exp.Expression, catalog: Catalog) -> tuple[exp.Expression, list[RelationCatalog]]:
    rels = check_relations(tree, catalog)
    try:
        q = qualify(tree.copy(), schema=schema_of(rels), dialect=RwDialect, quote_identifiers=False,
                    identify=False)
    except OptimizeError as e:
        msg = str(e).split(". Line:")[0]
        if "could not be resolved" in msg:
            name = msg.split("'")[1] if "'" in msg else msg
            raise BindError(f'column "{name}" does not exist') from None
        raise BindError(msg) from None
    return q, rels


def conjuncts(e: exp.Expression | None) -> list[exp.Expression]:
    if e is None:
        return []
    if isinstance(e, exp.Paren):
        return conjuncts(e.this)
    if isinstance(e, exp.And):
        return conjuncts(e.this) + conjuncts(e.expression)
    return [e]


def fix_decorrelated_counts(q: exp.Expression) -> exp.Expression:
    """A correlated scalar `count(...)` becomes a LEFT JOIN on an aggregate: a row with no
    match must read 0, not NULL (the classic decorrelation count bug)."""
    for sel in list(q.find_all(exp.Select)):
        for join in sel.args.get("joins") or []:
            sub = join.this
            if not (isinstance(sub, exp.Subquery) and sub.alias.startswith("_u_") and isinstance(sub.this, exp.Select)):
                continue
            counts = {e.alias for e in sub.this.expressions if isinstance(e, exp.Alias) and isinstance(e.this, exp.Count)}
            for col in list(sel.find_all(exp.Column)):
                if col.table == sub.alias and col.name in counts and col.find_ancestor(exp.Select) is sel \
                        and not isinstance(col.parent, exp.Coalesce):
                    col.replace(exp.Coalesce(this=col.copy(), expressions=[exp.Literal.number(0)]))
    return q


def join_kind(join: exp.Join) -> str:
    side = (join.side or "").lower()
    kind = (join.kind or "").lower()
    if side in ("left", "right", "full"):
        return side
    if kind in ("semi", "anti"):
        return kind
    if kind in ("", "inner", "cross", "outer"):
        return "inner"
    raise NotSupported(f"{kind.upper()} JOIN in a materialized view")


def output_name(e: exp.Expression) -> str:
    """PostgreSQL's name for a select item: its alias, column name, or function name."""
    if isinstance(e, exp.Alias):
        if not e.alias.startswith("_col_"):
            return e.alias
        e = e.this
    if isinstance(e, exp.Column):
        return e.name
    if isinstance(e, exp.Cast):
        return output_name(e.this) if isinstance(e.this, (exp.Column, exp.Func)) else e.to.sql(dialect="postgres").lower()
    if isinstance(e, exp.Func):
        return (e.sql_name() if hasattr(e, "sql_name") else type(e).__name__).lower()
    return "?column?"


class StreamPlanner:
    def __init__(self, catalog: Catalog):
        self.catalog = catalog

    def plan_mv(self, query: exp.Expression, name: str, column_aliases: list[str] | None = None):
        from sqlglot.optimizer.pushdown_predicates import pushdown_predicates
        from sqlglot.optimizer.unnest_subqueries import unnest_subqueries

        q, rels = qualify_query(query, self.catalog)
        q = pushdown_predicates(fix_decorrelated_counts(unnest_subqueries(q)))
        if not isinstance(q, exp.Select):
            raise NotSupported(f"{type(q).__name__.upper()} in a materialized view")
        planned = self.plan_select(q)
        names = planned.names
        if column_aliases:
            if len(column_aliases) > planned.visible:
                raise BindError("too many column aliases")
            names = column_aliases + names[len(column_aliases):]
        seen = set()
        for n in names[: planned.visible]:
            if n in seen:
                raise BindError(f'column "{n}" specified more than once')
            seen.add(n)
        hidden = [i >= planned.visible for i in range(len(names))]
        names = [n if i < planned.visible else f"_hidden_{n}_{i}" for i, n in enumerate(names)]
        node = planned.node
        root = StreamMaterialize(node.types, node.stream_key, [node], names=names, hidden=hidden, name=name)
        return root, rels

    # -- SELECT -------------------------------------------------------------------------------
    def plan_select(self, s: exp.Select) -> Planned:
        for key in ("limit", "offset", "windows", "qualify"):
            if s.args.get(key):
                raise NotSupported(f"{key.upper()} in a materialized view")
        if s.args.get("with"):
            raise NotSupported("WITH in a materialized view")
        node, scope = self.plan_from(s)
        where = s.args.get("where")
        if where is not None:
            node, scope, rest = self.semi_joins(node, scope, where.this)
            rest = [c for c in rest if not (isinstance(c, exp.Boolean) and c.this)]
            if rest:
                pred = rest[0]
                for c in rest[1:]:
                    pred = exp.and_(pred, c)
                node = StreamFilter(node.types, node.stream_key, [node], predicate=self.rewrite(pred, scope))
        items = list(s.expressions)
        names = [output_name(e) for e in items]
        exprs = [e.this if isinstance(e, exp.Alias) else e for e in items]
        having = s.args.get("having")
        group = s.args.get("group")
        has_agg = any(e.find(exp.AggFunc) for e in exprs) or (having is not None)
        if group is not None or has_agg:
            node, exprs, having_expr = self.plan_agg(node, scope, exprs, group, having)
            if having_expr is not None:
                node = StreamFilter(node.types, node.stream_key, [node], predicate=having_expr)
        else:
            exprs = [self.rewrite(e, scope) for e in exprs]
        planned = self.project(node, exprs, names, [e.alias_or_name for e in items])
        if s.args.get("distinct"):
            planned = self.distinct(planned)
        return planned

    def plan_from(self, s: exp.Select) -> tuple[PlanNode, list[tuple[str, str]]]:
        from_ = s.args.get("from") or s.args.get("from_")
        if from_ is None:
            raise NotSupported("a materialized view without FROM")
        node, scope = self.plan_source(from_.this)
        for join in s.args.get("joins") or []:
            right, rscope = self.plan_source(join.this)
            if join.args.get("using"):
                raise NotSupported("JOIN ... USING in a materialized view")
            node, scope = self.join(node, scope, right, rscope, join.args.get("on"), join_kind(join))
        return node, scope

    def plan_source(self, src: exp.Expression) -> tuple[PlanNode, list[tuple[str, str]]]:
        if isinstance(src, exp.Table):
            rel = self.catalog.must_get(src.name)
            alias = src.alias_or_name
            node = StreamTableScan([c.type for c in rel.columns], list(rel.pk), relation=rel)
            return node, [(alias, c.name) for c in rel.columns]
        if isinstance(src, exp.Subquery) and isinstance(src.this, exp.Select):
            inner = self.plan_select(src.this)
            alias = src.alias_or_name
            scope = [(alias, n) for _, n in inner.scope]
            return inner.node, scope
        raise NotSupported(f"{type(src).__name__} in FROM of a materialized view")

    def join(self, left, lscope, right, rscope, on, kind: str = "inner"):
        nl = len(left.types)
        scope = lscope + rscope
        lkeys, rkeys, null_safe, rest = [], [], [], []
        for c in conjuncts(on):
            if isinstance(c, (exp.EQ, exp.NullSafeEQ)) and isinstance(c.this, exp.Column) \
                    and isinstance(c.expression, exp.Column):
                a, b = self.lookup(c.this, scope), self.lookup(c.expression, scope)
                if b < nl <= a:
                    a, b = b, a
                if a < nl <= b:
                    lkeys.append(a), rkeys.append(b - nl), null_safe.append(isinstance(c, exp.NullSafeEQ))
                    continue
            if isinstance(c, exp.Boolean) and c.this:
                continue
            rest.append(self.rewrite(c, scope))
        cond = None
        for r in rest:
            cond = r if cond is None else exp.and_(cond, r)
        if kind in ("semi", "anti"):
            types, sk, scope = list(left.types), list(left.stream_key), lscope
        else:
            types = left.types + right.types
            sk = left.stream_key + [nl + k for k in right.stream_key]
        node = StreamHashJoin(types, sk, [left, right], left_keys=lkeys, right_keys=rkeys, condition=cond,
                              kind=kind, null_safe=null_safe)
        return node, scope

    def semi_joins(self, node, scope, where: exp.Expression | None):
        """`x [NOT] IN (subquery)` conjuncts of WHERE become semi / anti joins; the rest stays."""
        rest = []
        for c in conjuncts(where):
            neg = isinstance(c, exp.Not)
            inner = c.this if neg else c
            if isinstance(inner, exp.In) and inner.args.get("query") is not None:
                sub = inner.args["query"]
                sub = sub.this if isinstance(sub, exp.Subquery) else sub
                planned = self.plan_select(sub) if isinstance(sub, exp.Select) else None
                if planned is None or planned.visible != 1:
                    raise NotSupported("IN (subquery) with more than one column in a materialized view")
                alias = "__in_sub"
                rscope = [(alias, f"c{i}") for i in range(len(planned.names))]
                probe = inner.this
                right_col = exp.column("c0", table=alias)
                if neg:
                    # NOT IN is false as soon as either side is NULL (PostgreSQL's three-valued logic)
                    on = exp.or_(exp.EQ(this=probe.copy(), expression=right_col.copy()),
                                 exp.Is(this=probe.copy(), expression=exp.Null()),
                                 exp.Is(this=right_col.copy(), expression=exp.Null()))
                else:
                    on = exp.EQ(this=probe.copy(), expression=right_col)
                node, scope = self.join(node, scope, planned.node, rscope, on, "anti" if neg else "semi")
            else:
                rest.append(c)
        return node, scope, rest

    # -- aggregation ------------------------------------------------------------------------------
    def plan_agg(self, node, scope, exprs, group, having):
        group_exprs = list(group.expressions) if group is not None else []
        pre: list[exp.Expression] = [self.rewrite(g, scope) for g in group_exprs]
        group_sql = [g.sql() for g in group_exprs]
        calls: list[AggCall] = []
        agg_sql: list[str] = []

        def collect(e: exp.Expression) -> None:
            for a in e.find_all(exp.AggFunc):
                if a.sql() in agg_sql:
                    continue
                if a.find_ancestor(exp.AggFunc):
                    raise BindError("aggregate function calls cannot be nested")
                kind = next((v for k, v in _AGGS.items() if isinstance(a, k)), None)
                if kind is None:
                    raise NotSupported(f"aggregate {a.sql_name() if hasattr(a, 'sql_name') else a.key} in a materialized view")
                arg = a.this
                if isinstance(arg, exp.Distinct):
                    raise NotSupported(f"{kind}(DISTINCT ...) in a materialized view")
                if kind == "count" and (arg is None or isinstance(arg, exp.Star)):
                    calls.append(AggCall("count_star", None, None, agg_return_type("count_star", None)))
                else:
                    pre.append(self.rewrite(arg, scope))
                    calls.append(AggCall(kind, len(pre) - 1, None, None))  # types filled below
                agg_sql.append(a.sql())

        for e in exprs:
            collect(e)
        if having is not None:
            collect(having.this)
        pre_types = self.expr_types(node, pre)
        project = StreamProject(pre_types, [], [node], exprs=pre)
        for c in calls:
            if c.arg is not None:
                c.arg_type = pre_types[c.arg]
                c.return_type = agg_return_type(c.kind, c.arg_type)
        ng = len(group_exprs)
        agg_types = pre_types[:ng] + [c.return_type for c in calls]
        agg = StreamHashAgg(agg_types, list(range(ng)), [project], group_keys=list(range(ng)), calls=calls)

        def post(e: exp.Expression) -> exp.Expression:
            def repl(n: exp.Expression):
                sql = n.sql()
                if isinstance(n, exp.AggFunc) and sql in agg_sql:
                    return exp.column(f"_{ng + agg_sql.index(sql)}")
                if sql in group_sql and not isinstance(n, exp.Literal):
                    return exp.column(f"_{group_sql.index(sql)}")
                return n
            out = e.copy().transform(repl)
            for col in out.find_all(exp.Column):
                if not (col.name.startswith("_") and col.name[1:].isdigit() and not col.table):
                    raise BindError(f'column "{col.sql()}" must appear in the GROUP BY clause '
                                    f"or be used in an aggregate function")
            return out

        return agg, [post(e) for e in exprs], post(having.this) if having is not None else None

    def distinct(self, p: Planned) -> Planned:
        n = p.visible
        project = StreamProject(p.node.types[:n], [], [p.node], exprs=[exp.column(f"_{i}") for i in range(n)])
        agg = StreamHashAgg(p.node.types[:n], list(range(n)), [project], group_keys=list(range(n)), calls=[])
        return Planned(agg, p.scope[:n], p.names[:n], n)

    # -- projection -------------------------------------------------------------------------------
    def project(self, node: PlanNode, exprs: list[exp.Expression], names: list[str],
                aliases: list[str] | None = None) -> Planned:
        """`names` are what users see; `aliases` what an outer query references (sqlglot's)."""
        exprs = list(exprs)
        aliases = list(aliases or names)
        visible = len(exprs)
        key = []
        for k in node.stream_key:
            ref = next((i for i, e in enumerate(exprs) if isinstance(e, exp.Column) and e.name == f"_{k}"), None)
            if ref is None:
                exprs.append(exp.column(f"_{k}"))
                names = names + [f"_{k}"]
                aliases.append(f"__hidden_{len(exprs) - 1}")
                ref = len(exprs) - 1
            key.append(ref)
        types = self.expr_types(node, exprs)
        proj = StreamProject(types, key, [node], exprs=exprs)
        scope = [("", n) for n in aliases]
        return Planned(proj, scope, names, visible)

    def expr_types(self, node: PlanNode, exprs: list[exp.Expression]) -> list[DataType]:
        if not exprs:
            return []
        import pyarrow as pa

        sql = [expr_to_duckdb(e, node.types) for e in exprs]
        empty = pa.schema([pa.field(f"_{i}", t.arrow()) for i, t in enumerate(node.types)]).empty_table()
        out = duck.eval_exprs(empty, sql)
        return [DataType.from_arrow(f.type) for f in out.schema]

    # -- name resolution ---------------------------------------------------------------------------
    def lookup(self, col: exp.Column, scope: list[tuple[str, str]]) -> int:
        matches = [i for i, (t, n) in enumerate(scope) if n == col.name and (not col.table or t == col.table)]
        if not matches:
            raise BindError(f'column "{col.sql()}" does not exist')
        return matches[0]

    def rewrite(self, e: exp.Expression, scope: list[tuple[str, str]]) -> exp.Expression:
        def repl(n: exp.Expression):
            if isinstance(n, exp.Column) and not isinstance(n.this, exp.Star):
                return exp.column(f"_{self.lookup(n, scope)}")
            if isinstance(n, (exp.Subquery, exp.Exists)) or (isinstance(n, exp.In) and n.args.get("query")):
                raise NotSupported("subqueries in expressions of a materialized view")
            return n
        return e.copy().transform(repl)
