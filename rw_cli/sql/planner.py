"""Binds a SELECT against the catalog and plans it as a stream plan for a materialized view.

The query is first qualified by sqlglot (unknown columns are errors, `*` expands to visible
columns), then planned bottom-up: scans, joins, filter, aggregation, projection. Every
node derives its stream key; a projection that drops stream-key columns keeps them as
hidden columns, as RisingWave does.
"""
from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp
from sqlglot.errors import ErrorLevel, OptimizeError
from sqlglot.optimizer.qualify import qualify

from rw_cli.sql.duckdb_dialect import duckdb_dialect
from rw_cli.common.types import BIGINT, DataType, struct_type_name
from rw_cli.engine import duck
from rw_cli.engine.agg_call import AggCall, agg_return_type
from rw_cli.engine.expr import Expr
from rw_cli.errors import BindError, CatalogError, NotSupported
from rw_cli.meta.catalog import ROW_ID, SYSTEM_SCHEMA_NAMES, Catalog, RelationCatalog
from rw_cli.sql.decorrelate import decorrelate
from rw_cli.sql.dialect import CHANGELOG_PREFIX, ROWS_ARE_ARRAYS, WRITTEN_NAME, RwDialect
from rw_cli.sql.expand import corresponding, expand, qualify_schema_names, schema_qualified_columns
from rw_cli.sql.output_name import name_derived_columns, output_name
from rw_cli.sql.pushdown import pushdown_predicates
from rw_cli.sql import session_window
from rw_cli.sql.expr_compile import compile_plan
from rw_cli.sql.common_types import INTEGERS, join_key_type, set_op_type
from rw_cli.sql.gap_fill import GAP_FILL, gap_fill_node, gap_fill_sources
from rw_cli.sql.jsonb import is_table_function
from rw_cli.stream.plan import (PlanNode, StreamChangelog, StreamFilter, StreamHashAgg, StreamHashJoin,
                             StreamMaterialize, StreamPartitionRecompute, StreamProject, StreamProjectSet,
                             StreamTableScan, StreamUnion, StreamValues, append_only)
from rw_cli.sql.transpile import expr_to_duckdb, expr_to_duckdb_tree, sqlglot_type, to_duckdb
from rw_cli.sql.bind_time_answers import answer_calls, name_object_arguments

_AGGS = {exp.Count: "count", exp.Sum: "sum", exp.Avg: "avg", exp.Min: "min", exp.Max: "max"}
BIGINT_T = DataType("bigint")


def _int_literal(e: exp.Expression | None) -> int | None:
    if e is None:
        return None
    if isinstance(e, exp.Literal) and not e.is_string:
        value = int(e.this)
        if not -(1 << 63) <= value < (1 << 63):
            raise BindError(f"LIMIT/OFFSET value {value} is out of range for type bigint")
        return value
    raise NotSupported("LIMIT / OFFSET that is not an integer constant in a materialized view")


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
        if t.name in ctes or not isinstance(t.this, exp.Identifier):
            continue
        rel = catalog.get(changelog_of(t.name) or catalog.qualified(t.name, t.text("db")))
        if rel is None and _is_system_catalog(t, catalog):
            raise _system_catalog_error(t.name)
        if rel is None:
            raise CatalogError(f'relation "{t.name}" does not exist')
        if rel not in rels:
            rels.append(rel)
    return rels


def _system_catalog_error(name: str) -> NotSupported:
    return NotSupported(f'a streaming job over the system catalog "{name}"',
                        hint="system catalogs are read by SELECT; they have no changes to maintain a view by")


def _is_system_catalog(t: exp.Table, catalog: Catalog) -> bool:
    from rw_cli.sql.pg_catalog import system_table

    try:
        return system_table(t.text("db") or None, t.name, catalog) is not None
    except Exception:  # noqa: BLE001 - a catalog that cannot be built here is no reason to fail differently
        return False


def changelog_of(name: str) -> str | None:
    """The relation whose change log `name` means (`AS CHANGELOG FROM rel`), or None."""
    return name[len(CHANGELOG_PREFIX):] if name.startswith(CHANGELOG_PREFIX) else None


def _changelog_schemas(tree: exp.Expression, schema: dict) -> None:
    """A change log's columns for binding: its relation's, then `changelog_op`, and the
    hidden `_changelog_row_id` (the order of the changes) when the query names it (so that
    `*` does not expand to it)."""
    named = any(c.name == "_changelog_row_id" for c in tree.find_all(exp.Column))
    for t in tree.find_all(exp.Table):
        base = changelog_of(t.name)
        if base is not None and base in schema:
            schema[t.name] = {**schema[base], "changelog_op": "SMALLINT",
                              **({"_changelog_row_id": "BIGINT"} if named else {})}


def _name_unnest_columns(tree: exp.Expression) -> None:
    """`FROM unnest(arr) u` without a column list: its one column is named `u` as in
    PostgreSQL (a function returning a base type: the table alias names its column too)."""
    for u in tree.find_all(exp.Unnest):
        alias = u.args.get("alias")
        if len(u.expressions) == 1 and alias is not None and alias.this is not None and not alias.columns \
                and not u.args.get("offset"):
            alias.set("columns", [exp.to_identifier(alias.name)])
    # `LEFT JOIN LATERAL generate_series(1, t.n) g ON TRUE`: likewise
    for lat in tree.find_all(exp.Lateral):
        alias = lat.args.get("alias")
        if isinstance(lat.this, (exp.ExplodingGenerateSeries, exp.Explode)) and alias is not None \
                and alias.this is not None and not alias.columns and not lat.args.get("ordinality"):
            alias.set("columns", [exp.to_identifier(alias.name)])



def schema_of(rels: list[RelationCatalog], visible_only: bool = True) -> dict:
    return {r.name: {c.name: sqlglot_type(c.type) for c in (r.visible_columns if visible_only else r.columns)}
            for r in rels}


def qualify_query(tree: exp.Expression, catalog: Catalog) -> tuple[exp.Expression, list[RelationCatalog]]:
    """`tree` (the caller's own copy: it is rewritten in place) with its views, windows and
    CTEs expanded and every column qualified, and the relations it reads."""
    # views, tumble/hop, CTEs: subqueries; relations of other schemas: their catalog names;
    # a view's own functions in FROM (`range(0, 5) t(i)`) as the query's are taken
    tree = scalar_sources(expand(tree, catalog))
    calls = [n for n in tree.walk() if isinstance(n, exp.Anonymous)]
    for call in calls:
        name_object_arguments(call)
    answer_calls(calls, catalog)  # as a SELECT answers them (the catalog at the MV's creation)
    schema_qualified_columns([n for n in tree.walk() if isinstance(n, (exp.Column, exp.Table, exp.Subquery))])
    for t in tree.find_all(exp.Table):  # `pg_catalog.pg_class`: a system catalog, not a schema of the user's
        if isinstance(t.this, exp.Identifier) and t.text("db") in SYSTEM_SCHEMA_NAMES and _is_system_catalog(t, catalog):
            raise _system_catalog_error(f"{t.text('db')}.{t.name}")
    tree = name_subquery_items(inline_ctes(_table_column_aliases(qualify_schema_names(tree, catalog))))
    name_derived_columns(list(tree.find_all(exp.Select)), tree)
    _name_unnest_columns(tree)
    rels = check_relations(tree, catalog)
    schema = schema_of(rels)
    _changelog_schemas(tree, schema)
    dialect = RwDialect
    named = {c.name for c in tree.find_all(exp.Column)}
    hidden = {c.name: c.type for r in rels for c in r.columns if c.hidden and c.name in named}
    if hidden:
        # hidden columns named explicitly (`_row_id`, an MV's hidden group key): they
        # resolve, but `*` does not expand to them
        from rw_cli.sql.dialect import hidden_columns_dialect

        dialect = hidden_columns_dialect(frozenset(hidden))
        for r in rels:
            for c in r.columns:
                if c.hidden and c.name in named:
                    schema[r.name].setdefault(c.name, sqlglot_type(c.type))
    try:
        q = qualify(tree, schema=schema, dialect=dialect, quote_identifiers=False, identify=False)
    except OptimizeError as e:
        msg = str(e).split(". Line:")[0]
        if "could not be resolved" in msg:
            name = msg.split("'")[1] if "'" in msg else msg
            raise BindError(f'column "{name}" does not exist') from None
        raise BindError(msg) from None
    return q, rels


_SET_RETURNING = (exp.ExplodingGenerateSeries, exp.GenerateSeries, exp.Unnest, exp.Explode)


def scalar_sources(query: exp.Expression) -> exp.Expression:
    """A query's sources as the planner takes them: a bare `VALUES ...` as `SELECT * FROM
    (VALUES ...)`; a scalar function in FROM (`FROM abs(-1)`) as a one-row subquery whose
    column is named after the function, as PostgreSQL names it; `FROM range(a, b)` as the
    series a .. b - 1. A copy of `query`: the caller's is left as it was."""
    while isinstance(query, exp.Subquery) and isinstance(query.this, exp.Values) and not query.alias:
        query = query.this  # `(VALUES ...)`: the VALUES
    if isinstance(query, exp.Values):
        n = len(query.expressions[0].expressions) if query.expressions else 0
        alias = exp.TableAlias(this=exp.to_identifier("_values"),
                               columns=[exp.to_identifier(f"column_{i}") for i in range(n)])
        values = query.copy()
        values.set("alias", alias)
        return exp.select("*").from_(values)
    query = query.copy()
    for table in list(query.find_all(exp.Table)):
        fn = table.this
        if not isinstance(fn, exp.Func) or _series_of_project_set(table):
            continue  # `FROM t, generate_series(...)`: the planner's own cross join with a series
        name = (fn.name if isinstance(fn, exp.Anonymous) else fn.meta.get(WRITTEN_NAME) or fn.sql_name()).lower()
        if name in ("tumble", "hop") or is_table_function(fn):
            continue  # time windows over a relation, jsonb_each and its kin: rw_cli.sql.expand
        if _lateral_srf(table) is not None and isinstance(table.parent, exp.Join):
            # `FROM t, generate_series(1, t.n)`, `FROM t, regexp_matches(t.s, p) m`: a set per
            # row of the items before it (an unnest of the set's list, as the binder reads it)
            table.replace(_set_as_unnest(fn, table.args.get("alias"), bool(table.args.get("ordinality"))))
            continue
        if isinstance(fn, exp.ExplodingGenerateSeries):
            name = "generate_series"
        before = None
        if isinstance(fn, exp.Anonymous) and name == "range" and len(fn.expressions) in (2, 3):
            fn, before = _range_as_series(fn)
        alias = table.args.get("alias")
        col = alias.columns[0].name if alias is not None and alias.columns else (alias.name if alias else name)
        sub_alias = exp.TableAlias(this=exp.to_identifier(alias.name if alias is not None else name))
        select = exp.select(exp.alias_(fn.copy(), col))
        if before is not None:  # range's series stops before its end
            select = exp.select(exp.column(col)).from_(select.subquery("_series")).where(
                exp.NEQ(this=exp.column(col), expression=before))
        table.replace(exp.Subquery(this=select, alias=sub_alias))
    for unnest in list(query.find_all(exp.Unnest)):
        # the first FROM item, of an array that reads no column (a correlated one stays with
        # the decorrelation rules; the items joined after it are sets of each row of it)
        if isinstance(unnest.parent, exp.From) and len(unnest.expressions) == 1 \
                and unnest.expressions[0].find(exp.Column) is None:
            unnest.replace(_unnest_source(unnest))
    return query


def _set_as_unnest(fn: exp.Expression, alias: exp.TableAlias | None, ordinality: bool) -> exp.Unnest:
    """A set function of a row in FROM (generate_series over its columns, regexp_matches,
    string_to_table) as the unnest of its list, under the item's alias (a function of one
    column: the alias names the column too), WITH ORDINALITY as unnest's. The binder then
    qualifies the columns its arguments read, as it does an unnest's."""
    from rw_cli.sql.dialect import WRITTEN_NAME

    unnest = exp.Unnest(expressions=[_srf_list(fn)])
    unnest.meta.update(fn.meta)  # regexp_matches: its rows are the arrays, not to be flattened
    # its column: named by the alias, else after the function as written (PostgreSQL's names)
    written = fn.meta.get(WRITTEN_NAME) or ("unnest" if isinstance(fn, exp.Explode) else "generate_series")
    alias = alias.copy() if alias is not None else exp.TableAlias(this=exp.to_identifier(written))
    if not alias.columns:
        alias.set("columns", [exp.to_identifier(alias.name or written)])
    if ordinality:
        cols = list(alias.columns) if alias is not None else []
        unnest.set("offset", cols[1].copy() if len(cols) > 1 else exp.to_identifier("ordinality"))
        if alias is not None and len(cols) > 1:
            alias.set("columns", [cols[0]])
    if alias is not None:
        unnest.set("alias", alias)
    return unnest


def _unnest_source(unnest: exp.Unnest) -> exp.Subquery:
    """`FROM unnest(array) [WITH ORDINALITY] [AS a(x [, n])]`, the only FROM item: the subquery
    `(SELECT unnest(arr) AS x [, generate_series(1, cardinality(arr)) AS n]) AS a`, whose
    set-returning select list the planner maintains (columns named as PostgreSQL names them:
    `unnest` / `ordinality`, or a bare alias for the one column)."""
    arr = unnest.expressions[0]
    alias = unnest.args.get("alias")
    columns = [c.name for c in alias.columns] if alias is not None else []
    value = columns[0] if columns else (alias.name if alias is not None and alias.name else "unnest")
    items = [exp.Alias(this=exp.Unnest(expressions=[arr.copy()]), alias=exp.to_identifier(value))]
    offset = unnest.args.get("offset")
    if offset:
        name = offset.name if isinstance(offset, exp.Identifier) else (columns[1] if len(columns) > 1 else "ordinality")
        count = exp.Cast(this=exp.Anonymous(this="cardinality", expressions=[arr.copy()]),
                         to=exp.DataType.build("BIGINT"))
        ordinal = exp.ExplodingGenerateSeries(start=exp.Literal.number(1), end=count)
        items.append(exp.Alias(this=ordinal, alias=exp.to_identifier(name)))
    table_alias = alias.name if alias is not None and alias.name else "unnest"
    return exp.Subquery(this=exp.select(*items), alias=exp.TableAlias(this=exp.to_identifier(table_alias)))


_WHOLE_PARTITION = (exp.CumeDist, exp.PercentRank, exp.Ntile)


def _frame_close(w: exp.Window) -> list[exp.Expression]:
    """For EMIT ON WINDOW CLOSE: the order keys that the watermark must have passed before
    window `w`'s value for a row is final (a row at the watermark is not late, and may still
    join its frame; RisingWave releases a row below the watermark too): the row's own
    key, the key N rows ahead for `N FOLLOWING` rows or lead(x, N), the key plus N for a
    RANGE frame `N FOLLOWING` (NULL while that row has not come: the row waits)."""
    order = w.args.get("order")
    keys = order.expressions if order is not None else []
    if len(keys) != 1 or keys[0].args.get("desc"):
        raise NotSupported("EMIT ON WINDOW CLOSE with a window function not ordered by one ascending key")
    key = keys[0].this
    fn = w.this
    spec = w.args.get("spec")
    if session_window.is_session(w):
        return [key.copy()]  # and the session's end (over_window)
    if isinstance(fn, _WHOLE_PARTITION) or (spec is not None and str(spec.args.get("end") or "").upper() == "UNBOUNDED"
                                            and str(spec.args.get("end_side") or "").lower() == "following"):
        raise NotSupported("EMIT ON WINDOW CLOSE with a window function over rows up to the end of the partition")
    ahead: exp.Expression | None = None
    if isinstance(fn, exp.Lead):
        ahead = fn.args.get("offset") or exp.Literal.number(1)
    closes = [key.copy()]
    if spec is not None and str(spec.args.get("end_side") or "").lower() == "following":
        end = spec.args["end"]
        if str(spec.args.get("kind") or "").lower() == "rows":
            ahead = end if ahead is None or _int_literal(end) > _int_literal(ahead) else ahead
        else:
            closes.append(exp.Add(this=key.copy(), expression=end.copy()))
    if ahead is not None:
        closes.append(exp.Window(this=exp.Lead(this=key.copy(), offset=ahead.copy()),
                                 partition_by=[p.copy() for p in w.args.get("partition_by") or []],
                                 order=order.copy()))
    return closes


# functions returning a set that the translation to DuckDB writes as unnest of a list
_SET_RETURNING_CALLS = frozenset({"generate_subscripts", "jsonb_populate_recordset"})


def _srf_nodes(e: exp.Expression) -> list[exp.Expression]:
    """The set-returning function calls in an expression of the select list."""
    return [n for n in e.walk() if isinstance(n, (exp.ExplodingGenerateSeries, exp.Explode, exp.Unnest,
                                                   exp.Posexplode))
            or isinstance(n, exp.Anonymous) and n.name.lower() in _SET_RETURNING_CALLS]


def _srf_list(srf: exp.Expression) -> exp.Expression:
    """The list a set-returning function's rows are the elements of (generate_series as a
    list, unnest's array)."""
    if isinstance(srf, (exp.ExplodingGenerateSeries, exp.GenerateSeries)):
        args = [srf.args.get(k) for k in ("start", "end", "step") if srf.args.get(k) is not None]
        return exp.Anonymous(this="generate_series", expressions=[a.copy() for a in args])
    inner = srf.this if not isinstance(srf, exp.Unnest) else srf.expressions[0]
    return inner.copy()


def _flattened(list_expr: exp.Expression, element: DataType) -> tuple[exp.Expression, DataType]:
    """A nested array's innermost elements are what unnest gives (PostgreSQL, RisingWave; the
    batch path: functions._unnest_nested): the list flattened once per level below the first."""
    while element.is_list:
        list_expr = exp.Anonymous(this="flatten", expressions=[list_expr])
        element = element.inner[0]
    return list_expr, element


def _lateral_srf(src: exp.Expression) -> exp.Expression | None:
    """The set-returning function of a join item `LATERAL f(...)` or `unnest(...)`, if it is
    one; also `f(...)` without LATERAL that reads a column (`generate_series(1, t.n)`,
    `regexp_matches(t.s, p)`: PostgreSQL makes a function in FROM lateral by itself)."""
    if isinstance(src, exp.Table) and isinstance(src.this, (exp.Explode, exp.ExplodingGenerateSeries,
                                                            exp.GenerateSeries)):
        return src.this if src.this.find(exp.Column) is not None else None
    fn = src.this if isinstance(src, exp.Lateral) else src
    return fn if isinstance(fn, (exp.Unnest, exp.Explode, exp.ExplodingGenerateSeries)) else None


def _series_of_project_set(table: exp.Table) -> bool:
    """A generate_series the planner crosses with the items before it (`FROM t,
    generate_series(1, 3)`): joined without a condition, constant bounds, no step. Any other
    series in FROM (the first item, joined ON / USING, with a step) is planned as a source
    of its own, a subquery."""
    fn, join = table.this, table.parent
    if not isinstance(fn, (exp.ExplodingGenerateSeries, exp.GenerateSeries)) or not isinstance(join, exp.Join):
        return False
    if join.args.get("on") is not None or join.args.get("using"):
        return False
    bounds = [fn.args.get("start"), fn.args.get("end")] + ([fn.args["step"]] if fn.args.get("step") else [])
    return all(_signed_int_literal(b) is not None for b in bounds)


def _signed_int_literal(e: exp.Expression | None) -> int | None:
    """The value of an integer constant written as `n` or `-n`, else None."""
    negative = isinstance(e, exp.Neg)
    lit = e.this if negative else e
    if not (isinstance(lit, exp.Literal) and lit.is_int):
        return None
    return -int(lit.this) if negative else int(lit.this)


def _range_as_series(fn: exp.Anonymous) -> tuple[exp.Expression, exp.Expression | None]:
    """range(a, b [, step]): the series a, a + step, ... before b. With no step or an integer
    step written as a constant, a series whose last element is b - 1 (b + 1 going down); with
    another step (an interval over timestamps, an expression), generate_series(a, b, step)
    and its end `b`, which the caller leaves out."""
    start, stop = fn.expressions[0].copy(), fn.expressions[1].copy()
    if len(fn.expressions) == 2:
        return exp.ExplodingGenerateSeries(start=start, end=exp.Sub(this=stop, expression=exp.Literal.number(1))), None
    step = fn.expressions[2]
    literal = step.this if isinstance(step, exp.Neg) else step
    if not (isinstance(literal, exp.Literal) and literal.is_int):
        return exp.ExplodingGenerateSeries(start=start, end=stop.copy(), step=step.copy()), stop
    down = isinstance(step, exp.Neg) != literal.this.startswith("-")
    end = exp.Add(this=stop, expression=exp.Literal.number(1)) if down else \
        exp.Sub(this=stop, expression=exp.Literal.number(1))
    return exp.ExplodingGenerateSeries(start=start, end=end, step=step.copy()), None


def _in_join_list(table: exp.Table) -> bool:
    """Whether a FROM item is one of several (`FROM t, f(...)` or a JOIN)."""
    return isinstance(table.parent, exp.Join) or (isinstance(table.parent, exp.From)
                                                   and bool(table.parent.parent.args.get("joins")))


def _table_column_aliases(tree: exp.Expression) -> exp.Expression:
    """`FROM t AS a(x, y)` (a relation's columns renamed by its alias): the subquery
    `(SELECT * FROM t) AS a(x, y)`, whose column aliases the planner reads as a view's."""
    for t in list(tree.find_all(exp.Table)):
        alias = t.args.get("alias")
        if alias is None or not alias.columns or not isinstance(t.this, exp.Identifier):
            continue
        inner = t.copy()
        inner.set("alias", None)
        t.replace(exp.Subquery(this=exp.select("*").from_(inner), alias=alias.copy()))
    return tree


def name_subquery_items(tree: exp.Expression) -> exp.Expression:
    """A scalar subquery as a select item gets an alias of its own, as sqlglot names the
    other items (its qualify expects one where `ORDER BY 1` names that item)."""
    for s in list(tree.find_all(exp.Select)):
        for i, e in enumerate(list(s.expressions)):
            if isinstance(e, exp.Subquery) and not e.alias:
                e.replace(exp.Alias(this=e.copy(), alias=exp.to_identifier(f"_col_{i}")))
    return tree


def inline_ctes(tree: exp.Expression) -> exp.Expression:
    """WITH x [(columns)] AS (q) ... FROM x  ->  ... FROM (q) AS x [(columns)] (stream plans
    share identical subplans when they are built); a CTE may read the ones before it."""
    for _ in range(32):
        with_ = next((w for w in tree.find_all(exp.With)), None)
        if with_ is None:
            return tree
        if with_.args.get("recursive"):
            raise NotSupported("WITH RECURSIVE in a materialized view")
        owner = with_.parent
        ctes: dict[str, tuple[exp.Expression, list]] = {}
        for c in with_.expressions:
            alias = c.args.get("alias")
            columns = list(alias.columns) if alias is not None else []
            ctes[c.alias] = (_inline_tables(c.this.copy(), ctes), columns)
        with_.pop()
        _inline_tables(owner, ctes)
    raise BindError("WITH nested too deeply")


def _inline_tables(tree: exp.Expression, ctes: dict[str, tuple[exp.Expression, list]]) -> exp.Expression:
    """Every reference to one of `ctes` in `tree` becomes its query as a subquery."""
    for t in list(tree.find_all(exp.Table)):
        if isinstance(t.this, exp.Identifier) and not t.text("db") and t.name in ctes:
            body, columns = ctes[t.name]
            own = t.args.get("alias")
            names = list(own.columns) if own is not None and own.columns else columns
            alias = exp.TableAlias(this=exp.to_identifier(t.alias_or_name), columns=[c.copy() for c in names])
            replacement = exp.Subquery(this=body.copy(), alias=alias)
            if t is tree:
                return replacement
            t.replace(replacement)
    return tree


def _is_now(n: exp.Expression) -> bool:
    return isinstance(n, exp.CurrentTimestamp) or (isinstance(n, exp.Anonymous) and n.name.lower() == "now")


def _reads_now(e: exp.Expression) -> bool:
    return any(_is_now(n) for n in e.walk())


def _check_now_clauses(s: exp.Select) -> None:
    """NOW() of a streaming query belongs to a temporal filter (WHERE, HAVING, ON) or FROM:
    in the select list or GROUP BY it would be frozen at the time each row went by, so
    RisingWave's binder refuses it there (its words)."""
    group = s.args.get("group")
    for part, clause in [(e, "None") for e in s.expressions] + \
            [(g, "Some(GroupBy)") for g in (group.expressions if group is not None else [])]:
        if any(_is_now(n) and n.find_ancestor(exp.Select) is s for n in part.walk()):
            raise BindError("Invalid input syntax: For streaming queries, `NOW()` function is only allowed in "
                            f"`WHERE`, `HAVING`, `ON` and `FROM`. Found in clause: {clause}. Please refer to "
                            "https://docs.risingwave.com/processing/sql/temporal-filters for more information")


def _aggs(e: exp.Expression) -> list[exp.Expression]:
    """Aggregate calls of a GROUP BY query (not window functions), each with its FILTER."""
    out = []
    for a in e.find_all(exp.AggFunc):
        w = a.find_ancestor(exp.Window)
        call = w.this if w is not None else None
        while isinstance(call, (exp.Filter, exp.IgnoreNulls, exp.RespectNulls)):
            call = call.this  # `f(x) FILTER (...)`, `f(x IGNORE NULLS)`: the window function is f
        if w is not None and call is a:
            continue  # the window function itself; aggregates in its arguments are group aggregates
        call = a.parent if isinstance(a.parent, exp.WithinGroup) else a  # `f(p) WITHIN GROUP (ORDER BY x)`
        out.append(call.parent if isinstance(call.parent, exp.Filter) else call)
    return out


def _distinct_on_match(items: list[exp.Expression], on: exp.Expression) -> int | None:
    """The select item a DISTINCT ON key names (the same expression, or an output name)."""
    name = on.name if isinstance(on, exp.Column) else None
    return next((i for i, e in enumerate(items) if e.sql() == on.sql() or (name and e.alias_or_name == name)), None)


def _hidden_distinct_on(items: list[exp.Expression], distinct: exp.Expression) -> list[exp.Expression]:
    """DISTINCT ON keys that no select item computes, in their order."""
    ons = distinct.args["on"]
    ons = ons.expressions if isinstance(ons, exp.Tuple) else [ons]
    return [o.copy() for o in ons if _distinct_on_match(items, o) is None]


def _filtered_agg(a: exp.Expression):
    """(kind, argument) of `count/sum/avg/min/max(x) FILTER (WHERE p)` as the plain aggregate
    of `CASE WHEN p THEN x END` (each ignores NULLs, so the two agree), or None."""
    if not isinstance(a, exp.Filter) or not isinstance(a.expression, exp.Where):
        return None
    inner = a.this
    kind = next((v for k, v in _AGGS.items() if type(inner) is k), None)
    if kind is None or isinstance(inner.this, exp.Distinct) or inner.find(exp.Order) is not None:
        return None
    if inner.args.get("expressions"):
        return None
    arg = inner.this
    if kind == "count" and (arg is None or isinstance(arg, exp.Star)):
        arg = exp.Literal.number(1)
    if arg is None:
        return None
    cond = a.expression.this.copy()
    return kind, exp.Case(ifs=[exp.If(this=cond, true=arg.copy())])


def grouping_set_keys(group: exp.Group, key_sql: list[str]) -> list[list[int]]:
    """GROUP BY's grouping sets as lists of key positions (`key_sql`: the keys' SQL): plain
    keys, GROUPING SETS, ROLLUP (its prefixes) and CUBE (its subsets), crossed in order."""
    def one(e: exp.Expression) -> list[int]:
        items = e.expressions if isinstance(e, exp.Tuple) else [e.this] if isinstance(e, exp.Paren) else [e]
        return [key_sql.index(x.sql()) for x in items]

    out: list[list[int]] = [[]]
    for item in group.expressions:
        if isinstance(item, exp.GroupingSets):
            choices = [one(e) for e in item.expressions]
        elif isinstance(item, exp.Rollup):
            parts = [one(e) for e in item.expressions]
            choices = [sum(parts[:n], []) for n in range(len(parts), -1, -1)]
        elif isinstance(item, exp.Cube):
            parts = [one(e) for e in item.expressions]
            choices = [sum((p for j, p in enumerate(parts) if mask >> (len(parts) - 1 - j) & 1), [])
                       for mask in range((1 << len(parts)) - 1, -1, -1)]
        else:
            choices = [one(item)]
        out = [a + b for a in out for b in choices]
    return out


def _grouping_values(agg: exp.Expression, key_sql: list[str], keep: list[int]) -> exp.Expression:
    """`agg` with each GROUPING(a, b, ...) the constant it has in a grouping set that keeps
    the keys `keep`: a bit per argument, the first the highest, set where it is not kept."""
    def repl(n: exp.Expression) -> exp.Expression:
        if not isinstance(n, exp.Grouping):
            return n
        bits = 0
        for x in n.expressions:
            bits = bits * 2 + (0 if x.sql() in key_sql and key_sql.index(x.sql()) in keep else 1)
        return exp.Cast(this=exp.Literal.number(bits), to=exp.DataType.build("INT"))
    return agg.transform(repl)


def _shift(e: exp.Expression, by: int) -> exp.Expression:
    """Positional column references moved by `by`."""
    def repl(n):
        if isinstance(n, exp.Column) and not n.table and n.name.startswith("_") and n.name[1:].isdigit():
            return exp.column(f"_{int(n.name[1:]) + by}")
        return n
    return e.transform(repl)


def _is_ref(e: exp.Expression) -> int | None:
    if isinstance(e, exp.Column) and not e.table and e.name.startswith("_") and e.name[1:].isdigit():
        return int(e.name[1:])
    return None


def conjuncts(e: exp.Expression | None) -> list[exp.Expression]:
    if e is None:
        return []
    if isinstance(e, exp.Paren):
        return conjuncts(e.this)
    if isinstance(e, exp.And):
        return conjuncts(e.this) + conjuncts(e.expression)
    return [e]


def top_n(node: PlanNode, pred: exp.Expression) -> None:
    """`WHERE rn <= N` over `row_number()`/`rank()` of an over window on an append-only
    input becomes a group top-N: the window keeps only its top rows as state."""
    from rw_cli.stream.plan import append_only

    refs = None
    if isinstance(node, StreamProject) and all(_is_ref(e) is not None for e in node.exprs):
        refs = [_is_ref(e) for e in node.exprs]  # a plain projection between filter and window
        node = node.inputs[0]
    if not (isinstance(node, StreamPartitionRecompute) and node.name == "StreamOverWindow"
            and node.partition_keys and append_only(node.inputs[0]) and node.sql.count(" OVER ") == 1
            and ("ROW_NUMBER()" in node.sql or "RANK()" in node.sql)):
        return
    width = len(node.inputs[0].types)
    for c in conjuncts(pred):
        ref = _is_ref(c.this) if isinstance(c, exp.Binary) else None
        if ref is not None and refs is not None:
            ref = refs[ref] if ref < len(refs) else None
        if isinstance(c, (exp.LTE, exp.LT, exp.EQ)) and ref == width \
                and isinstance(c.expression, exp.Literal) and not c.expression.is_string:
            op = {exp.LTE: "<=", exp.LT: "<", exp.EQ: "="}[type(c)]
            node.sql = f"SELECT * FROM ({node.sql}) AS __w WHERE __w._{width} {op} {c.expression.this}"
            node.name, node.prune_to_output = "StreamGroupTopN", True
            return


def used_columns(q: exp.Expression) -> dict[str, set[str]]:
    """Column names referenced per table alias, anywhere in a qualified query (a superset
    when nested scopes reuse an alias; a scan of an alias never referenced keeps all columns)."""
    used: dict[str, set[str]] = {}
    for col in q.find_all(exp.Column):
        if col.table:
            used.setdefault(col.table, set()).add(col.name)
    for t in q.find_all(exp.Table):
        used.setdefault(t.alias_or_name, set())
    return used


def prune_select(s: exp.Select, used: set[str] | None) -> bool:
    """Column pruning of a subquery in FROM: drop the select items the outer query never
    reads (`SELECT t.*, window_start ... FROM t, generate_series(...)` of HOP, a view's
    columns), so that the scans and operators below carry only what is used. Items whose
    presence changes the rows (DISTINCT, set-returning functions) or that ORDER BY, HAVING
    or a positional GROUP BY may refer to are kept. Returns whether anything was dropped."""
    if not used or s.args.get("distinct") or s.args.get("order") or s.args.get("having"):
        return False
    group = s.args.get("group")
    if group is not None and any(isinstance(g, exp.Literal) for g in group.expressions):
        return False
    items = list(s.expressions)
    if any(isinstance(e, exp.Star) or (isinstance(e, exp.Column) and isinstance(e.this, exp.Star))
           or _srf_nodes(e) for e in items):
        return False
    keep = [e for e in items if e.alias_or_name in used or output_name(e) in used]
    if not keep or len(keep) == len(items):
        return False
    s.set("expressions", keep)
    return True


# the result fields DuckDB gave expressions over input types: planning many views over the
# same tables asks for the same ones again and again, and each answer is a query
_RESULT_FIELDS: dict[tuple, list] = {}
_RESULT_FIELDS_MAX = 4096


def _duckdb_result_fields(sql: tuple[str, ...], types: tuple[DataType, ...], group_by: tuple[int, ...]) -> list:
    """The result fields of DuckDB expressions `sql` over columns `_0.._n` of `types` (grouped
    by `group_by`), learned by running them on an empty input; remembered, except for calls
    of the user's Python functions (a function may be dropped and made again with another
    return type under its name)."""
    key = (sql, types, group_by)
    fields = _RESULT_FIELDS.get(key)
    if fields is not None:
        return fields
    import pyarrow as pa

    empty = pa.schema([pa.field(f"_{i}", t.arrow()) for i, t in enumerate(types)]).empty_table()
    if group_by:
        select = ", ".join(f"{e} AS _{i}" for i, e in enumerate(sql))
        keys = ", ".join(f"_{k}" for k in group_by)
        out = duck.query(f"SELECT {select} FROM t GROUP BY {keys}", {"t": empty})
    else:
        out = duck.eval_exprs(empty, list(sql))
    fields = list(out.schema)
    if not any("rw_py_" in e.lower() for e in sql):
        if len(_RESULT_FIELDS) >= _RESULT_FIELDS_MAX:
            _RESULT_FIELDS.clear()
        _RESULT_FIELDS[key] = fields
    return fields


def _kept_type(e: exp.Expression, types: list[DataType]) -> DataType | None:
    """An input column passed through, or a field of one (`(_3).f1`), keeps its type
    (Arrow's alone may lose it: jsonb is text to Arrow)."""
    fields = []
    while isinstance(e, exp.Dot):
        fields.append(e.expression.name)
        e = e.this.unnest() if isinstance(e.this, exp.Paren) else e.this
    if not (isinstance(e, exp.Column) and not e.table and e.name.startswith("_") and e.name[1:].isdigit()):
        return None
    i = int(e.name[1:])
    t = types[i] if i < len(types) else None
    for name in reversed(fields):
        if t is None or not t.is_struct or name not in t.field_names:
            return None
        t = t.inner[t.field_names.index(name)]
    return t if t is not None and t.name == "jsonb" else None


def _check_expanded(items: list[exp.Expression], scope: list[tuple[str, str]]) -> None:
    """Binding expands `*`; it leaves one that would repeat a column name (`SELECT * FROM
    (SELECT * FROM t x JOIN t y ...) s`), which a view's columns may not do."""
    if not any(isinstance(e, exp.Star) or isinstance(e, exp.Column) and isinstance(e.this, exp.Star)
               for e in items):
        return
    seen: set[str] = set()
    for _, name in scope:
        if name in seen:
            raise BindError(f'column "{name}" specified more than once')
        seen.add(name)
    raise BindError("* could not be expanded over these sources")


# a comparison read with its operands swapped; the ASOF inequalities DuckDB writes
_FLIPPED = {exp.EQ: exp.EQ, exp.GTE: exp.LTE, exp.GT: exp.LT, exp.LTE: exp.GTE, exp.LT: exp.GT}
_ASOF_OPS = {exp.GTE: ">=", exp.GT: ">", exp.LTE: "<=", exp.LT: "<"}


def _asof_right_ties_broken(nl: int, rkeys: list[int], ineq: int, stream_key: list[int]) -> str:
    """The ASOF JOIN's right input (`in1`, columns `_{nl}..`) with one row per equality key and
    inequality value: the one of the smallest stream key. Several right rows equally close to
    a left row are a tie DuckDB breaks arbitrarily; RisingWave joins the one first in its
    state's order (the inequality column, then the stream key), so the MV does not depend on
    which row arrived first."""
    if not stream_key:
        return "in1"
    part = ", ".join([f"_{nl + k}" for k in rkeys] + [f"_{ineq}"])
    order = ", ".join(f"_{nl + k} ASC NULLS LAST" for k in stream_key)
    return (f"(SELECT * FROM in1 QUALIFY row_number() OVER (PARTITION BY {part} ORDER BY {order}) = 1)"
            " AS in1")


def join_kind(join: exp.Join) -> str:
    side = (join.side or "").lower()
    if (join.method or "").upper() == "ASOF":  # the closest match only: Planner.asof_join
        if side not in ("", "left"):
            raise NotSupported(f"ASOF {side.upper()} JOIN in a materialized view")
        return "asof_left" if side == "left" else "asof"
    kind = (join.kind or "").lower()
    if side in ("left", "right", "full"):
        return side
    if kind in ("semi", "anti"):
        return kind
    if kind in ("", "inner", "cross", "outer"):
        return "inner"
    raise NotSupported(f"{kind.upper()} JOIN in a materialized view")


def check_streaming_join(left: PlanNode, right: PlanNode, keys: list[int],
                         cond: exp.Expression | None) -> None:
    """RisingWave streams a join by hash on equal columns and refuses a cross product (a
    CROSS JOIN, a comma join whose WHERE links nothing of both sides): that needs a
    nested-loop join over the whole of both inputs. A side that holds at most one row (a
    global aggregate: empty stream key) or constant rows is a broadcast, not a cross product;
    a join on an inequality between both sides rw maintains by recomputing the touched
    partitions."""
    if keys or _broadcast(left) or _broadcast(right) or _links_both(cond, len(left.types)):
        return
    raise NotSupported(
        "streaming nested-loop join",
        hint="The non-equal join in the query requires a nested-loop join executor, which could be "
             "very expensive to run. Consider rewriting the query to use dynamic filter as a "
             "substitute if possible, or SET rw_streaming_allow_cross_join = true to maintain it "
             "anyway (every change on one side joins every row of the other).")


def _broadcast(node: PlanNode) -> bool:
    """Whether a join input is at most one row or constant rows (VALUES, SELECT without FROM)."""
    while isinstance(node, (StreamProject, StreamFilter)):
        node = node.inputs[0]
    return not node.stream_key or isinstance(node, StreamValues)


def _links_both(cond: exp.Expression | None, left_width: int) -> bool:
    """Whether a join condition (over `_i` input columns) reads a column of each side."""
    if cond is None:
        return False
    sides = {int(c.name[1:]) < left_width for c in cond.find_all(exp.Column) if c.name[1:].isdigit()}
    return len(sides) == 2


# the join kinds whose ON conditions over one input's columns only may filter that input
# before the join: a condition on the row-preserving side of an outer join keeps the row (with
# NULLs) when false, and an anti join keeps the left row when the condition fails
_PUSH_LEFT = frozenset({"inner", "semi", "right"})
_PUSH_RIGHT = frozenset({"inner", "semi", "anti", "left"})


def _push_side_conditions(left: PlanNode, right: PlanNode, rest: list[exp.Expression],
                          kind: str) -> tuple[PlanNode, PlanNode, list[exp.Expression]]:
    """A join's non-key conditions that read one input only, applied as a filter on that input
    (predicate pushdown, as RisingWave's optimizer does): a comma join's per-table WHERE terms
    end up in its ON, and checked after the join they would let the join hold and emit the
    product of the unfiltered inputs (eight small tables filtered per table: a product of
    10^12 rows instead of 10^4)."""
    nl = len(left.types)
    keep, on_left, on_right = [], [], []
    for c in rest:
        cols = [int(n.name[1:]) for n in c.find_all(exp.Column) if n.name[1:].isdigit()]
        volatile = _reads_now(c) or c.find(exp.Rand) is not None
        if cols and not volatile and all(i < nl for i in cols) and kind in _PUSH_LEFT:
            on_left.append(c)
        elif cols and not volatile and all(i >= nl for i in cols) and kind in _PUSH_RIGHT:
            on_right.append(_shift_columns(c, -nl))
        else:
            keep.append(c)
    return _filtered(left, on_left), _filtered(right, on_right), keep


def _push_where(node: PlanNode, preds: list[exp.Expression]) -> PlanNode:
    """`node` filtered by `preds`, each as far down a tree of joins as it may go: a WHERE term
    over one input of an inner join filters that input, and so does one over the preserved
    side of an outer join (its values are never the join's NULLs); the rest filter `node`."""
    if not preds or not isinstance(node, StreamHashJoin):
        return _filtered(node, preds)
    nl = len(node.inputs[0].types)
    keep, on_left, on_right = [], [], []
    for c in preds:
        cols = [int(n.name[1:]) for n in c.find_all(exp.Column) if n.name[1:].isdigit()]
        volatile = _reads_now(c) or c.find(exp.Rand) is not None
        if cols and not volatile and all(i < nl for i in cols) and node.kind in _WHERE_LEFT:
            on_left.append(c)
        elif cols and not volatile and all(i >= nl for i in cols) and node.kind in _WHERE_RIGHT:
            on_right.append(_shift_columns(c, -nl))
        else:
            keep.append(c)
    node.inputs[0] = _push_where(node.inputs[0], on_left)
    node.inputs[1] = _push_where(node.inputs[1], on_right)
    return _filtered(node, keep)


# the joins a WHERE term over one input's columns may go below (semi and anti joins output
# their left input's columns only)
_WHERE_LEFT = frozenset({"inner", "left", "semi", "anti"})
_WHERE_RIGHT = frozenset({"inner", "right"})


def _shift_columns(e: exp.Expression, by: int) -> exp.Expression:
    """`e` over input columns `_i` renumbered to `_{i + by}`."""
    def shift(n: exp.Expression) -> exp.Expression:
        if isinstance(n, exp.Column) and n.name[1:].isdigit() and not n.table:
            return exp.column(f"_{int(n.name[1:]) + by}")
        return n
    return e.transform(shift)


def _without_all_null_keys(node: PlanNode, keys: list[int]) -> PlanNode:
    """A full outer join's rows whose stream keys and join keys of both sides are all NULL
    dropped, as RisingWave does (its issue 8084): a NULL-keyed row of each side gives the same
    all-NULL key, and the view could hold only one of the two rows the query returns."""
    if not keys:
        return node
    all_null = exp.and_(*[exp.column(f"_{k}").is_(exp.null()) for k in keys])
    return _filtered(node, [exp.not_(exp.paren(all_null))])


def _filtered(node: PlanNode, preds: list[exp.Expression]) -> PlanNode:
    if not preds:
        return node
    pred = preds[0]
    for p in preds[1:]:
        pred = exp.and_(pred, p)
    return StreamFilter(node.types, node.stream_key, [node], predicate=pred)


def order_inner_joins(q: exp.Expression) -> exp.Expression:
    """Inner joins in an order where each has a condition on what came before: TPC-H's comma
    joins list tables with no condition between neighbours (part, supplier, partsupp), which
    in FROM order would start with a cross product the query does not have. sqlglot's
    optimize_joins reorders a SELECT whose joins are all inner; here also the inner joins
    before a SELECT's first outer, semi or anti join (decorrelation appends those)."""
    from sqlglot.optimizer.optimize_joins import optimize_joins

    q = optimize_joins(q)
    for select in list(q.find_all(exp.Select)):
        joins = select.args.get("joins") or []
        k = next((i for i, j in enumerate(joins) if j.side or j.kind in ("SEMI", "ANTI")), len(joins))
        if 2 <= k < len(joins):
            rest = joins[k:]
            select.set("joins", joins[:k])
            optimize_joins(select)
            select.set("joins", list(select.args.get("joins") or []) + rest)
        _connected_join_order(select)
    return q


def _connected_join_order(select: exp.Select) -> None:
    """The inner joins of a SELECT's FROM (up to its first outer, semi or anti join) in an
    order where each joins the items before it by a condition whenever the conditions connect
    them at all: greedily, the first item not yet joined that a condition links to the joined
    ones (`FROM t48, t57, t2, t30 WHERE b30 = a48 AND a44 = b2 ...` starts t48, t30, ..., not
    with the product t48 x t57). Each condition then goes to the first join where all the
    items it reads are in; RisingWave's join ordering avoids such products the same way."""
    joins = select.args.get("joins") or []
    from_ = select.args.get("from_")
    k = next((i for i, j in enumerate(joins) if j.side or j.kind in ("SEMI", "ANTI") or j.args.get("using")
              or j.method or not isinstance(j.this, (exp.Table, exp.Subquery))), len(joins))
    if k < 2 or from_ is None or not isinstance(from_.this, (exp.Table, exp.Subquery)):
        return
    items = [from_.this] + [j.this for j in joins[:k]]
    names = [i.alias_or_name for i in items]
    if len(set(names)) != len(names) or any(isinstance(i, exp.Table) and not isinstance(i.this, exp.Identifier)
                                            for i in items):
        return
    conds = [c for j in joins[:k] for c in conjuncts(j.args.get("on")) if not (isinstance(c, exp.Boolean) and c.this)]
    refs = [set(exp.column_table_names(c)) & set(names) for c in conds]
    order, joined = [0], {names[0]}
    remaining = list(range(1, len(items)))
    while remaining:
        linked = (i for i in remaining if any(names[i] in r and len(r) > 1 and r <= joined | {names[i]} for r in refs))
        pick = next(linked, remaining[0])
        order.append(pick)
        joined.add(names[pick])
        remaining.remove(pick)
    if order == list(range(len(items))):
        return
    taken = [False] * len(conds)
    avail, ordered = {names[0]}, []
    for i in order[1:]:
        avail.add(names[i])
        mine = [c for n, c in enumerate(conds) if not taken[n] and refs[n] <= avail]
        for n, c in enumerate(conds):
            taken[n] = taken[n] or refs[n] <= avail
        on = exp.and_(*[c.copy() for c in mine]) if mine else None
        ordered.append(exp.Join(this=items[i].copy(), on=on) if on is not None else exp.Join(this=items[i].copy()))
    select.set("joins", ordered + list(joins[k:]))


def _hidden_names(names: list[str], visible: int) -> list[str]:
    """An MV's hidden columns (group keys it does not output, stream keys) keep their names
    where no other column has them, as in RisingWave, where a query may name them
    (`SELECT v3 FROM mv` of an MV grouped by v3); a name taken is `_hidden_{name}_{i}`."""
    taken = set(names[:visible])
    out = list(names[:visible])
    for i, n in enumerate(names[visible:], start=visible):
        if n in taken or not n or n.startswith("_hidden_") or (n[:1] == "_" and n[1:].isdigit()) or names.count(n) > 1:
            n = f"_hidden_{n}_{i}"
        taken.add(n)
        out.append(n)
    return out


class StreamPlanner:
    def __init__(self, catalog: Catalog, allow_cross_join: bool = False):
        self.catalog = catalog
        # maintain a cross product (every row of one input against every row of the other)
        # instead of refusing it as RisingWave does (rw_streaming_allow_cross_join)
        self.allow_cross_join = allow_cross_join
        self.used: dict[str, set[str]] = {}
        self.eowc = False  # EMIT ON WINDOW CLOSE: a gap fill fills between released rows only
        # EMIT ON WINDOW CLOSE over window functions ordered by this table's watermark column:
        # a row is released once its frame has closed (see over_window)
        self.eowc_watermark: RelationCatalog | None = None

    def plan_mv(self, query: exp.Expression, name: str, column_aliases: list[str] | None = None,
                unique_names: bool = True):
        """`unique_names`: the visible columns are looked up by name later (an MV's, a
        table's); a sink into a table takes its columns by position, so it may repeat one."""
        q, rels = qualify_query(scalar_sources(gap_fill_sources(query)), self.catalog)
        for t in q.find_all(exp.Table):
            if t.args.get("version") is not None and not isinstance(t.parent, exp.Join):
                # time travel outside a temporal join: one past snapshot, which no stream keeps
                raise NotSupported("FOR SYSTEM_TIME AS OF outside a temporal join (JOIN t FOR SYSTEM_TIME AS OF "
                                   "PROCTIME()) in a materialized view")
        q = order_inner_joins(pushdown_predicates(decorrelate(q)))
        self.used = used_columns(q)
        for sub in list(q.find_all(exp.Subquery)):  # outer ones first
            if isinstance(sub.this, exp.Select) and prune_select(sub.this, self.used.get(sub.alias_or_name)):
                self.used = used_columns(q)  # the subquery's own sources may use fewer columns now
        planned = self.plan_query(q)
        names = planned.names
        if column_aliases:
            if len(column_aliases) > planned.visible:
                raise BindError("too many column aliases")
            names = column_aliases + names[len(column_aliases):]
        seen = set()
        for n in names[: planned.visible]:
            if n in seen and unique_names:
                raise BindError(f'column "{n}" specified more than once')
            seen.add(n)
        hidden = [i >= planned.visible for i in range(len(names))]
        names = _hidden_names(names, planned.visible)
        node = planned.node
        root = StreamMaterialize(node.types, node.stream_key, [node], names=names, hidden=hidden, name=name)
        return compile_plan(root), rels

    # -- SELECT -------------------------------------------------------------------------------
    def plan_query(self, q: exp.Expression) -> Planned:
        if isinstance(q, exp.Subquery):
            return self.plan_query(q.this)
        if isinstance(q, exp.Select):
            return self.plan_select(q)
        if isinstance(q, (exp.Union, exp.Except, exp.Intersect)):
            return self.plan_set_op(q)
        raise NotSupported(f"{type(q).__name__.upper()} in a materialized view")

    def plan_select(self, s: exp.Select) -> Planned:
        session_window.inline_named_windows(s)
        for key in ("windows", "qualify"):
            if s.args.get(key):
                raise NotSupported(f"{key.upper()} in a materialized view")
        _check_now_clauses(s)
        node, scope = self.plan_from(s)
        where = s.args.get("where")
        if where is not None:
            rest = [c for c in conjuncts(where.this) if not (isinstance(c, exp.Boolean) and c.this)]
            temporal = [c for c in rest if _reads_now(c)]
            rest = [c for c in rest if not _reads_now(c)]
            if rest:
                pred = rest[0]
                for c in rest[1:]:
                    pred = exp.and_(pred, c)
                pred = self.rewrite(pred, scope)
                top_n(node, pred)
                node = _push_where(node, conjuncts(pred))
            if temporal:
                node = self.temporal_filter(node, [self.rewrite(c, scope) for c in temporal])
        items = list(s.expressions)
        _check_expanded(items, scope)
        names = [output_name(e) for e in items]
        exprs = [e.this if isinstance(e, exp.Alias) else e for e in items]
        order = list(s.args["order"].expressions) if s.args.get("order") else []
        limit = s.args.get("limit")
        distinct_on = s.args.get("distinct") is not None and s.args["distinct"].args.get("on") is not None
        if limit is None and s.args.get("offset") is None and not distinct_on:
            order = []  # an MV has no order: ORDER BY without LIMIT means nothing there
        aliases = {e.alias: e.this for e in items if isinstance(e, exp.Alias)}
        order_exprs = [aliases[o.this.name].copy() if isinstance(o.this, exp.Column) and not o.this.table
                       and o.this.name in aliases else o.this for o in order]
        n_order = len(order_exprs)
        if distinct_on:  # DISTINCT ON keys outside the select list: planned with ORDER BY's
            order_exprs = order_exprs + _hidden_distinct_on(items, s.args["distinct"])
        having = s.args.get("having")
        group = s.args.get("group")
        has_agg = any(_aggs(e) for e in exprs + order_exprs) or (having is not None)
        # the names of hidden stream key columns: the source's (not a subquery's internal ones)
        # (a table's row id as RisingWave names it: `t._row_id`)
        key_names = {i: f"{alias}.{name}" if name == ROW_ID and alias else name
                     for i, (alias, name) in enumerate(scope) if not name.startswith("__")}
        if group is not None or has_agg:
            key_names = {i: g.name for i, g in enumerate(group.expressions if group is not None else [])
                         if isinstance(g, exp.Column)}
            node, post, having_expr = self.plan_agg(node, scope, exprs + order_exprs, group, having)
            exprs, order_exprs = post[: len(exprs)], post[len(exprs):]
            if having_expr is not None:
                node = StreamFilter(node.types, node.stream_key, [node], predicate=having_expr)
        else:
            exprs = [self.rewrite(e, scope) for e in exprs]
            order_exprs = [self.rewrite(e, scope) for e in order_exprs]
        if any(e.find(exp.Window) for e in exprs + order_exprs):
            node, rewritten = self.over_window(node, exprs + order_exprs)
            exprs, order_exprs = rewritten[: len(exprs)], rewritten[len(exprs):]
        if any(_srf_nodes(e) for e in exprs):
            node, exprs = self.project_set_srf(node, exprs)
            key_names = {}
        order_exprs, on_exprs = order_exprs[:n_order], order_exprs[n_order:]
        distinct = s.args.get("distinct")
        if limit is not None or s.args.get("offset") is not None:
            return self.top_n(node, exprs, names, [e.alias_or_name for e in items], order, order_exprs, s)
        if distinct is not None and distinct.args.get("on") is not None:
            return self.distinct_on(node, exprs, names, items, distinct, order, order_exprs, on_exprs)
        planned = self.project(node, exprs, names, [e.alias_or_name for e in items], key_names)
        if distinct is not None:
            planned = self.distinct(planned)
        return planned

    def plan_from(self, s: exp.Select) -> tuple[PlanNode, list[tuple[str, str]]]:
        from_ = s.args.get("from") or s.args.get("from_")
        if from_ is None:  # SELECT without FROM: one constant row
            return StreamValues([BIGINT_T], [0], [], sql="SELECT CAST(1 AS BIGINT) AS _0"), []
        node, scope = self.plan_source(from_.this)
        return self.plan_joins(node, scope, s.args.get("joins") or [])

    def plan_joins(self, node: PlanNode, scope: list[tuple[str, str]],
                   joins: list[exp.Join]) -> tuple[PlanNode, list[tuple[str, str]]]:
        for join in joins:
            series = join.this
            if isinstance(series, exp.Table) and isinstance(series.this, (exp.ExplodingGenerateSeries,
                                                                           exp.GenerateSeries)) \
                    and _lateral_srf(series) is None:
                node, scope = self.project_set(node, scope, series, join)
                continue
            if _lateral_srf(series) is not None:
                node, scope = self.lateral_set(node, scope, join)
                continue
            right, rscope = self.plan_source(join.this)
            if join.args.get("using"):
                raise NotSupported("JOIN ... USING in a materialized view")
            # a temporal join (FOR SYSTEM_TIME AS OF) looks each row up: no cross product
            temporal = isinstance(join.this, exp.Table) and join.this.args.get("version") is not None
            lscope = scope
            left = node
            node, scope = self.join(node, scope, right, rscope, join.args.get("on"), join_kind(join),
                                    cross_ok=temporal)
            if temporal and isinstance(node, StreamHashJoin) and node.kind in ("inner", "left"):
                # a lookup per left row (a left side that retracts: with a memo of what each
                # left row produced, so that its retraction matches what was emitted)
                node.lookup = True
                at = join.this.args["version"].expression
                if not (isinstance(at, exp.Anonymous) and at.name.lower() == "proctime"):
                    self.event_time_join(node, at, left, lscope, right, rscope, join.this)
        return node, scope

    def event_time_join(self, node: StreamHashJoin, at: exp.Expression, left: PlanNode,
                        lscope: list[tuple[str, str]], right: PlanNode, rscope: list[tuple[str, str]],
                        table: exp.Table) -> None:
        """`JOIN t FOR SYSTEM_TIME AS OF l.ts`: each left row joins the version of `t` its
        time falls in (the row of its key with the latest version time not after it), once
        both sides' watermarks have passed that time; the version time is `t`'s watermark
        column, and both sides must carry a watermark (sql/watermark_origin.py)."""
        from rw_cli.sql.watermark_origin import watermark_origin

        if not isinstance(at, exp.Column):
            raise NotSupported("FOR SYSTEM_TIME AS OF other than PROCTIME() or a column of the left side")
        if node.condition is not None or not node.left_keys:
            raise NotSupported("an event-time temporal join with a condition other than equal keys")
        lidx = [i for i, (a, n) in enumerate(lscope) if n == at.name and (not at.table or a == at.table)]
        if len(lidx) != 1:
            raise BindError(f'column "{at.sql()}" does not exist')
        rel = self.catalog.must_get(table.name)
        rorigin, rcol = None, None
        for c in rel.visible_columns:
            rorigin = watermark_origin(self.catalog, rel, c.name)
            if rorigin is not None:
                rcol = c.name
                break
        ridx = [i for i, (_, n) in enumerate(rscope) if n == rcol]
        lorigins = {o.id: o for s in _scans(left)
                    if (o := watermark_origin(self.catalog, s.relation, at.name)) is not None}
        if rorigin is None or len(ridx) != 1 or len(lorigins) != 1:
            raise NotSupported("an event-time temporal join needs a watermark on both sides' time columns")
        node.event_time = [lidx[0], ridx[0]]
        node.watermark_tables = [next(iter(lorigins)), rorigin.id]

    def prune(self, scan: PlanNode, scope: list[tuple[str, str]], alias: str):
        """Column pruning: a scan keeps only the columns the query uses (and its key), so the
        state of joins and other operators above holds no unused columns."""
        used = self.used.get(alias)
        if used is None:
            return scan, scope
        keep = [i for i, (_, name) in enumerate(scope) if name in used or i in scan.stream_key]
        if len(keep) == len(scope):
            return scan, scope
        proj = StreamProject([scan.types[i] for i in keep], [keep.index(k) for k in scan.stream_key], [scan],
                             exprs=[exp.column(f"_{i}") for i in keep])
        return proj, [scope[i] for i in keep]

    def project_set(self, node, scope, series: exp.Table, join: exp.Join):
        """`, generate_series(a, b) AS g(k)` with constant bounds: every row times the series."""
        if join.args.get("on") is not None or join_kind(join) != "inner":
            raise NotSupported("a join with generate_series other than a cross join in a materialized view")
        gen = series.this
        start, end = _signed_int_literal(gen.args.get("start")), _signed_int_literal(gen.args.get("end"))
        step = _signed_int_literal(gen.args.get("step")) if gen.args.get("step") is not None else 1
        if start is None or end is None or not step:
            raise NotSupported("generate_series with bounds or a step that are not integer constants "
                               "in a join of a materialized view")
        alias = series.args.get("alias")
        name = alias.this.name if alias is not None and alias.this else "generate_series"
        col = alias.columns[0].name if alias is not None and alias.columns else name
        width = len(node.types)
        stop = end + (1 if step > 0 else -1)  # range's end is exclusive
        args = (start, stop) if step == 1 else (start, stop, step)
        out = StreamProjectSet(list(node.types) + [BIGINT_T, BIGINT_T], list(node.stream_key) + [width + 1], [node],
                               list_sql=f"range({', '.join(map(str, args))})", list_expr=exp.Anonymous(
                                   this="range", expressions=[exp.Literal.number(v) for v in args]))
        return out, scope + [(name, col), (name, "__ordinality")]

    def project_set_srf(self, node: PlanNode, exprs: list[exp.Expression]):
        """Set-returning functions in the select list (generate_series, unnest, ...): rows times
        their elements, which the projection then refers to. Several are zipped, as in
        PostgreSQL: row i holds each one's i-th element, NULL where one has fewer."""
        srfs: dict[str, exp.Expression] = {}
        for e in exprs:
            for n in _srf_nodes(e):
                srfs.setdefault(n.sql(), n)
        width = len(node.types)
        lists, elements = zip(*(self._srf_list_and_element(node, srf) for srf in srfs.values()))
        if len(srfs) == 1:
            list_expr, element = lists[0], elements[0]
            refs = {key: exp.column(f"_{width}") for key in srfs}
        else:
            names = [f"f{i}" for i in range(len(srfs))]
            zipped = exp.Anonymous(this="list_zip", expressions=list(lists))
            x = exp.to_identifier("__x")
            fields = [exp.PropertyEQ(this=exp.to_identifier(n), expression=exp.Anonymous(
                this="struct_extract", expressions=[exp.column(x), exp.Literal.number(i + 1)])) for i, n in enumerate(names)]
            list_expr = exp.Anonymous(this="list_transform", expressions=[zipped, exp.Lambda(
                this=exp.Anonymous(this="struct_pack", expressions=fields), expressions=[x])])
            element = DataType(struct_type_name(names, elements),
                               inner=tuple(elements), field_names=tuple(names))
            refs = {key: exp.Dot(this=exp.Paren(this=exp.column(f"_{width}")), expression=exp.to_identifier(n))
                    for key, n in zip(srfs, names)}
        out = StreamProjectSet(list(node.types) + [element, BIGINT_T], list(node.stream_key) + [width + 1], [node],
                               list_sql=list_expr.sql(dialect=duckdb_dialect()), list_expr=list_expr)
        return out, [e.transform(lambda n: refs[n.sql()].copy() if n.sql() in refs else n) for e in exprs]

    def _srf_list_and_element(self, node: PlanNode, srf: exp.Expression) -> tuple[exp.Expression, DataType]:
        """A set-returning function's list (its DuckDB tree over the input) and element type."""
        if isinstance(srf, exp.Posexplode):
            raise NotSupported("unnest WITH ORDINALITY in the select list of a materialized view")
        if isinstance(srf, exp.Anonymous):  # its DuckDB form is unnest(list)
            unnest = expr_to_duckdb_tree(srf, node.types)
            if not (isinstance(unnest, (exp.Anonymous, exp.Unnest)) and unnest.name.lower() in ("unnest", "")):
                raise NotSupported(f"{srf.name} with these arguments in a materialized view")
            return (unnest.expressions[0] if unnest.expressions else unnest.this).copy(), self.expr_types(node, [srf])[0]
        lst = _srf_list(srf)
        element = self.expr_types(node, [exp.Anonymous(this="unnest", expressions=[lst])])[0]
        if srf.meta.get(ROWS_ARE_ARRAYS):
            return expr_to_duckdb_tree(lst, node.types), element
        return _flattened(expr_to_duckdb_tree(lst, node.types), element)

    def lateral_set(self, node: PlanNode, scope: list[tuple[str, str]], join: exp.Join):
        """`, LATERAL unnest(o.arr) AS u(x)` (also without LATERAL, or generate_series over
        columns): each row times the elements of its own list, a row whose list is empty or
        NULL giving none; an inner join's ON filters the rows. `LEFT JOIN LATERAL ... ON TRUE`
        keeps such a row, once, with a NULL element: its list is read as `[NULL]`."""
        kind = join_kind(join)
        on = [c for c in conjuncts(join.args.get("on")) if not (isinstance(c, exp.Boolean) and c.this)]
        if kind not in ("inner", "left") or (kind == "left" and on):
            raise NotSupported("a join with a set-returning function other than an inner join or LEFT JOIN "
                               "... ON TRUE in a materialized view")
        src = join.this
        srf = _lateral_srf(src)
        if isinstance(srf, exp.Unnest) and len(srf.expressions) != 1:
            raise NotSupported("unnest of several arrays in FROM of a materialized view")
        offset = srf.args.get("offset") if isinstance(srf, exp.Unnest) else None
        # WITH ORDINALITY: the element's 1-based position, which the project set keeps anyway
        ordinal = offset.name if isinstance(offset, exp.Identifier) else ("ordinality" if offset else "__ordinality")
        alias = src.args.get("alias")
        name = alias.name if alias is not None and alias.name else "unnest"
        col = alias.columns[0].name if alias is not None and alias.columns else name
        lst = self.rewrite(_srf_list(srf), scope)
        width = len(node.types)
        list_expr = expr_to_duckdb_tree(lst, node.types)
        element = self.expr_types(node, [exp.Anonymous(this="unnest", expressions=[lst])])[0]
        if not srf.meta.get(ROWS_ARE_ARRAYS):
            list_expr, element = _flattened(list_expr, element)
        if kind == "left":
            empty = exp.EQ(this=exp.Coalesce(this=exp.Anonymous(this="len", expressions=[list_expr.copy()]),
                                             expressions=[exp.Literal.number(0)]), expression=exp.Literal.number(0))
            nulls = exp.Array(expressions=[exp.Cast(this=exp.Null(), to=exp.DataType.build(
                element.duckdb(), dialect="duckdb"))])
            list_expr = exp.Case(ifs=[exp.If(this=empty, true=nulls)], default=list_expr)
        out = StreamProjectSet(list(node.types) + [element, BIGINT_T], list(node.stream_key) + [width + 1], [node],
                               list_sql=list_expr.sql(dialect=duckdb_dialect()), list_expr=list_expr)
        scope = scope + [(name, col), (name, ordinal)]
        if on:
            return _push_where(out, conjuncts(self.rewrite(exp.and_(*on), scope))), scope
        return out, scope

    def plan_source(self, src: exp.Expression) -> tuple[PlanNode, list[tuple[str, str]]]:
        if isinstance(src, exp.Table) and changelog_of(src.name) is not None:
            return self.plan_changelog(src)
        if isinstance(src, exp.Table):
            rel = self.catalog.must_get(src.name)
            alias = src.alias_or_name
            node = StreamTableScan([c.type for c in rel.columns], rel.stream_key, relation=rel)
            scope = [(alias, c.name) for c in rel.columns]
            if GAP_FILL in src.meta:  # GAP_FILL(t, ...): t's rows and the filled ones
                return gap_fill_node(node, rel, src.meta[GAP_FILL], self.eowc), scope
            return self.prune(node, scope, alias)
        if isinstance(src, exp.Subquery) and isinstance(src.this, (exp.Select, exp.Union, exp.Except, exp.Intersect)):
            inner = self.plan_query(src.this)
            alias = src.alias_or_name
            scope = [(alias, n) for _, n in inner.scope]
            return inner.node, scope
        if isinstance(src, exp.Subquery) and isinstance(src.this, exp.Table) and not src.alias:
            # FROM (a JOIN b ON ...) [JOIN c ...]: joins associate to the left, so the
            # parenthesized join is the same join unparenthesized; its columns keep their names
            first = src.this.copy()
            joins = first.args.get("joins") or []
            first.set("joins", None)
            node, scope = self.plan_source(first)
            return self.plan_joins(node, scope, joins)
        if isinstance(src, (exp.Values, exp.Subquery)) and isinstance(src.unalias() if isinstance(src, exp.Subquery)
                                                                     else src, exp.Values):
            return self.plan_values(src)
        raise NotSupported(f"{type(src).__name__} in FROM of a materialized view")

    def plan_changelog(self, src: exp.Table) -> tuple[PlanNode, list[tuple[str, str]]]:
        """`AS CHANGELOG FROM rel`: rel's every change as a row (its columns, `changelog_op`),
        numbered by a hidden row id, the stream key."""
        rel = self.catalog.must_get(changelog_of(src.name))
        alias = src.alias_or_name
        scan = StreamTableScan([c.type for c in rel.columns], rel.stream_key, relation=rel)
        width = len(rel.columns)
        node = StreamChangelog(scan.types + [DataType("smallint"), DataType("bigint")], [width + 1], [scan])
        scope = [(alias, c.name) for c in rel.columns] + [(alias, "changelog_op"), (alias, "_changelog_row_id")]
        return node, scope

    def plan_values(self, src: exp.Expression) -> tuple[PlanNode, list[tuple[str, str]]]:
        """VALUES rows in FROM: constant rows numbered by a hidden column (their stream key)."""
        values = src.this if isinstance(src, exp.Subquery) else src
        alias = src.args.get("alias")
        rows = values.expressions
        width = len(rows[0].expressions) if rows else 0
        names = [c.name for c in alias.columns] if alias is not None and alias.columns else \
            [f"column{i + 1}" for i in range(width)]
        rows_only = values.copy()
        rows_only.set("alias", None)  # `(VALUES ...) AS t(v)` parses as VALUES with t(v) on it
        body = to_duckdb(exp.select("*").from_(exp.Subquery(this=rows_only, alias=exp.TableAlias(
            this=exp.to_identifier("v"), columns=[exp.to_identifier(f"_{i}") for i in range(width)]))))
        sql = f"SELECT *, CAST(row_number() OVER () AS BIGINT) AS _{width} FROM ({body})"
        from rw_cli.engine import duck

        types = [DataType.from_arrow(f.type) for f in duck.query(f"SELECT * FROM ({sql}) LIMIT 0").schema]
        name = alias.this.name if alias is not None and alias.this else "values"
        node = StreamValues(types, [width], [], sql=sql)
        return node, [(name, n) for n in names] + [(name, "__values_row")]

    def _key_pairs(self, on, scope: list[tuple[str, str]], nl: int) -> list[tuple[exp.Expression, int, int]]:
        """The conjuncts of `on` that equate a left column with a right one: (conjunct, left
        index, right index into the right side)."""
        pairs = []
        for c in conjuncts(on):
            if isinstance(c, (exp.EQ, exp.NullSafeEQ)) and isinstance(c.this, exp.Column) \
                    and isinstance(c.expression, exp.Column):
                a, b = self.lookup(c.this, scope), self.lookup(c.expression, scope)
                if b < nl <= a:
                    a, b = b, a
                if a < nl <= b:
                    pairs.append((c, a, b - nl))
        return pairs

    def _cast_keys(self, left, lscope, right, rscope, on):
        """Equal keys of types that compare by a conversion (int = double, bigint = numeric, as
        PostgreSQL's operators convert them) become columns of their common type, appended to
        each side by a projection: a join partitions both sides by their keys' hashes, and 1
        and 1.0 of different types hash apart (and DuckDB cannot compare a numeric's struct
        with a number). Returns the sides, their scopes and {(side, column): cast column}."""
        casts: list[dict[tuple[int, str], int]] = [{}, {}]
        pending: list[list[tuple[int, DataType]]] = [[], []]
        sides = [left, right]
        for _, a, b in self._key_pairs(on, lscope + rscope, len(left.types)):
            common = join_key_type(left.types[a], right.types[b])
            for side, col in ((0, a), (1, b)):
                if common is not None and sides[side].types[col] != common \
                        and (col, common.name) not in casts[side]:
                    casts[side][(col, common.name)] = len(sides[side].types) + len(pending[side])
                    pending[side].append((col, common))
        scopes = [list(lscope), list(rscope)]
        for side in (0, 1):
            if not pending[side]:
                continue
            node = sides[side]
            n = len(node.types)
            exprs = [exp.column(f"_{i}") for i in range(n)] + \
                [exp.Cast(this=exp.column(f"_{col}"), to=exp.DataType.build(t.name, dialect="postgres"))
                 for col, t in pending[side]]
            sides[side] = StreamProject(node.types + [t for _, t in pending[side]], list(node.stream_key),
                                        [node], exprs=exprs)
            scopes[side] += [("", f"__join_key_{side}_{n + j}") for j in range(len(pending[side]))]
        return sides[0], scopes[0], sides[1], scopes[1], casts

    def join(self, left, lscope, right, rscope, on, kind: str = "inner", cross_ok: bool = False):
        if kind in ("asof", "asof_left"):
            return self.asof_join(left, lscope, right, rscope, on, kind == "asof_left")
        left, lscope, right, rscope, casts = self._cast_keys(left, lscope, right, rscope, on)
        nl = len(left.types)
        scope = lscope + rscope
        lkeys, rkeys, null_safe, rest = [], [], [], []
        pairs = {id(c): (a, b) for c, a, b in self._key_pairs(on, scope, nl)}
        for c in conjuncts(on):
            if id(c) in pairs:
                a, b = pairs[id(c)]
                common = join_key_type(left.types[a], right.types[b])
                if common is not None:
                    a = casts[0].get((a, common.name), a)
                    b = casts[1].get((b, common.name), b)
                lkeys.append(a), rkeys.append(b), null_safe.append(isinstance(c, exp.NullSafeEQ))
                continue
            if isinstance(c, exp.Boolean) and c.this:
                continue
            rest.append(self.rewrite(c, scope))
        left, right, rest = _push_side_conditions(left, right, rest, kind)
        cond = None
        for r in rest:
            cond = r if cond is None else exp.and_(cond, r)
        if not (cross_ok or self.allow_cross_join):
            check_streaming_join(left, right, lkeys, cond)
        if kind in ("semi", "anti"):
            types, sk, scope = list(left.types), list(left.stream_key), lscope
        else:
            types = left.types + right.types
            sk = left.stream_key + [nl + k for k in right.stream_key]
        node = StreamHashJoin(types, sk, [left, right], left_keys=lkeys, right_keys=rkeys, condition=cond,
                              kind=kind, null_safe=null_safe)
        if kind == "full":
            node = _without_all_null_keys(node, sorted(set(sk) | set(lkeys) | {nl + k for k in rkeys}))
        return node, scope

    def asof_join(self, left, lscope, right, rscope, on, outer: bool):
        """`l ASOF [LEFT] JOIN r ON l.k = r.k AND l.t >= r.t`: each left row with the right row
        of its key closest by the inequality (LEFT: also a left row without one). Which row
        is closest depends on all the rows of the key, so the join is maintained by
        recomputing the keys an epoch touched (DuckDB's ASOF JOIN over their rows)."""
        nl = len(left.types)
        scope = lscope + rscope
        lkeys, rkeys, inequalities, rest = [], [], [], []
        for c in conjuncts(on):
            if isinstance(c, exp.Boolean) and c.this:
                continue
            cols = (self.lookup(c.this, scope), self.lookup(c.expression, scope)) \
                if isinstance(c, (exp.EQ, exp.GTE, exp.GT, exp.LTE, exp.LT)) \
                and isinstance(c.this, exp.Column) and isinstance(c.expression, exp.Column) else None
            if cols is not None and (cols[0] < nl) != (cols[1] < nl):
                a, b = sorted(cols)
                op = type(c) if cols[0] == a else _FLIPPED[type(c)]
                if op is exp.EQ:
                    lkeys.append(a), rkeys.append(b - nl)
                else:
                    inequalities.append((a, op, b))
                continue
            rest.append(c)
        if rest:  # DuckDB's ASOF JOIN (and RisingWave's) takes these conditions only
            raise NotSupported(f"ASOF JOIN condition {rest[0].sql(dialect='postgres')} (only equalities of a left "
                               "and a right column and one inequality between them)")
        if not lkeys:
            raise BindError("AsOf join requires at least 1 equal condition")
        if len(inequalities) != 1:
            raise BindError("AsOf join requires exactly 1 inequality condition")
        a, op, b = inequalities[0]
        conds = [f"in0._{x} = in1._{nl + y}" for x, y in zip(lkeys, rkeys)]
        conds.append(f"in0._{a} {_ASOF_OPS[op]} in1._{b}")
        types = left.types + right.types
        cols = ", ".join([f"in0._{i}" for i in range(nl)] + [f"in1._{nl + i}" for i in range(len(right.types))])
        rhs = _asof_right_ties_broken(nl, rkeys, b, right.stream_key)
        sql = f"SELECT {cols} FROM in0 ASOF {'LEFT ' if outer else ''}JOIN {rhs} ON {' AND '.join(conds)}"
        # each left row meets one right row at most: the left's stream key is the output's
        node = StreamPartitionRecompute(types, list(left.stream_key), [left, right], name="StreamAsOfJoin",
                                        partition_keys=lkeys, sql=sql,
                                        detail=f"type: {'LeftOuter' if outer else 'Inner'}, predicate: "
                                               f"{' AND '.join(conds)}")
        node.right_partition_keys = rkeys
        return node, scope

    # -- aggregation ------------------------------------------------------------------------------
    def plan_agg(self, node, scope, exprs, group, having):
        grouping_sets = group is not None and any(
            isinstance(e, (exp.Rollup, exp.Cube, exp.GroupingSets)) for e in group.expressions)
        group_exprs = list(group.expressions) if group is not None else []
        if grouping_sets:
            # every column of every set is a group key of the output
            seen: dict[str, exp.Expression] = {}
            for e in group.expressions:
                for c in ([e] if not isinstance(e, (exp.Rollup, exp.Cube, exp.GroupingSets)) else
                          [x for x in e.find_all(exp.Column)]):
                    seen.setdefault(c.sql(), c)
            group_exprs = list(seen.values())
        pre: list[exp.Expression] = [self.rewrite(g, scope) for g in group_exprs]
        group_sql = [g.sql() for g in group_exprs]
        calls: list[AggCall] = []
        agg_nodes: list[exp.Expression] = []
        agg_sql: list[str] = []
        complex_agg = False

        def collect(e: exp.Expression) -> None:
            nonlocal complex_agg
            for a in _aggs(e):
                if a.sql() in agg_sql:
                    continue
                if any(x is not a and x.find_ancestor(exp.Window) is None for x in a.this.find_all(exp.AggFunc)) \
                        if isinstance(a, exp.AggFunc) and a.this is not None else False:
                    raise BindError("aggregate function calls cannot be nested")
                agg_nodes.append(a)
                agg_sql.append(a.sql())
                kind = next((v for k, v in _AGGS.items() if type(a) is k), None)
                arg = a.this if isinstance(a, exp.AggFunc) else None
                filtered = _filtered_agg(a)
                if filtered is not None:  # agg(x) FILTER (WHERE p) = agg(CASE WHEN p THEN x END)
                    kind, arg = filtered
                    a = a.this
                simple = (kind is not None and isinstance(a, exp.AggFunc) and not isinstance(arg, exp.Distinct)
                          and a.find(exp.Order) is None)
                if not simple:
                    complex_agg = True
                    calls.append(None)
                elif kind == "count" and (arg is None or isinstance(arg, exp.Star)):
                    calls.append(AggCall("count_star", None, None, agg_return_type("count_star", None)))
                else:
                    pre.append(self.rewrite(arg, scope))
                    calls.append(AggCall(kind, len(pre) - 1, None, None))  # types filled below

        for e in exprs:
            collect(e)
        if having is not None:
            collect(having.this)
        ng = len(group_exprs)
        if complex_agg or grouping_sets:
            agg = self.recompute_agg(node, scope, group_exprs, agg_nodes, group if grouping_sets else None)
        else:
            if not pre:
                pre = [exp.true()]  # count(*) alone: a chunk needs a column to carry its rows
            if not calls and not ng:
                # `SELECT 1 FROM t HAVING p`: one group of no aggregates, whose rows need a
                # column too (an unread count)
                calls.append(AggCall("count_star", None, None, agg_return_type("count_star", None)))
            pre_types = self.expr_types(node, pre)
            project = StreamProject(pre_types, [], [node], exprs=pre)
            for c in calls:
                if c.arg is not None:
                    c.arg_type = pre_types[c.arg]
                    c.return_type = agg_return_type(c.kind, c.arg_type)
            agg_types = pre_types[:ng] + [c.return_type for c in calls]
            agg = StreamHashAgg(agg_types, list(range(ng)), [project], group_keys=list(range(ng)), calls=calls)

        def post(e: exp.Expression) -> exp.Expression:
            def repl(n: exp.Expression):
                sql = n.sql()
                if sql in agg_sql and (isinstance(n, (exp.AggFunc, exp.Filter, exp.WithinGroup))):
                    return exp.column(f"_{ng + agg_sql.index(sql)}")
                if sql in group_sql and not isinstance(n, exp.Literal):
                    i = group_sql.index(sql)
                    if agg.types[i].name == "interval":
                        # RisingWave's hash key holds an interval normalized, and outputs it so
                        return exp.Anonymous(this="pg_interval_key", expressions=[exp.column(f"_{i}")])
                    return exp.column(f"_{i}")
                return n
            out = e.transform(repl)
            for col in out.find_all(exp.Column):
                if _is_ref(col) is None:
                    raise BindError(f'column "{col.sql()}" must appear in the GROUP BY clause '
                                    f"or be used in an aggregate function")
            return out

        return agg, [post(e) for e in exprs], post(having.this) if having is not None else None

    def recompute_agg(self, node, scope, group_exprs, agg_nodes, grouping_sets=None) -> PlanNode:
        """Aggregates without retractable state of their own (DISTINCT, FILTER, ORDER BY inside,
        string_agg, array_agg, stddev, ...): recomputed per touched group. GROUPING SETS,
        ROLLUP and CUBE are recomputed as one partition, with the grouping id as a hidden key."""
        ng = len(group_exprs)
        width = len(node.types)
        pre = [self.rewrite(g, scope) for g in group_exprs] + [exp.column(f"_{i}") for i in range(width)]
        pre_types = self.expr_types(node, pre)
        project = StreamProject(pre_types, [ng + k for k in node.stream_key], [node], exprs=pre)
        if grouping_sets is not None:
            key_sql = [g.sql() for g in group_exprs]
            sets = grouping_set_keys(grouping_sets, key_sql)
            clause = grouping_sets.transform(  # the clause over the key columns, as EXPLAIN shows it
                lambda n: exp.column(f"_{key_sql.index(n.sql())}") if isinstance(n, exp.Column) and n.sql() in key_sql
                else n)
            selects = []
            for idx, keep in enumerate(sets):
                # each set grouped on its own, its user GROUPING() calls constants; the set's
                # position is a hidden key, so equal sets stay apart (as RisingWave's Expand)
                set_aggs = [_shift(self.rewrite(_grouping_values(a, key_sql, keep), scope), ng) for a in agg_nodes]
                if idx == 0:
                    types = pre_types[:ng] + self.expr_types(project, set_aggs, group_by=list(range(ng)))
                set_cols = [f"_{i}" if i in keep else f"CAST(NULL AS {types[i].duckdb()})" for i in range(ng)] + \
                    [f"CAST({expr_to_duckdb(a, pre_types)} AS {t.duckdb()})" for a, t in zip(set_aggs, types[ng:])] + \
                    [f"CAST({idx} AS BIGINT)"]
                group_by = f" GROUP BY {', '.join(f'_{i}' for i in sorted(set(keep)))}" if keep else ""
                selects.append(f"SELECT {', '.join(f'{c} AS _{i}' for i, c in enumerate(set_cols))} FROM in0{group_by}")
            types.append(BIGINT_T)
            return StreamPartitionRecompute(types, list(range(ng)) + [len(types) - 1], [project],
                                            name="StreamHashAgg [recompute]", partition_keys=[],
                                            sql=" UNION ALL ".join(selects),
                                            detail=f"grouping_sets: {clause.sql()}")
        aggs = [_shift(self.rewrite(a, scope), ng) for a in agg_nodes]
        keys = [f"_{i}" for i in range(ng)]
        cols = keys + [expr_to_duckdb(a, pre_types) for a in aggs]
        types = pre_types[:ng] + self.expr_types(project, aggs, group_by=list(range(ng)))
        sql = f"SELECT {', '.join(f'{c} AS _{i}' for i, c in enumerate(cols))} FROM in0"
        if keys:
            sql += f" GROUP BY {', '.join(keys)}"
        detail = (f"group_key: [{', '.join(keys)}], " if keys else "") + \
            "aggs: [" + ", ".join(a.sql(dialect="postgres") for a in aggs) + "]"
        return StreamPartitionRecompute(types, list(range(ng)), [project],
                                        name="StreamHashAgg [recompute]" if ng else "StreamSimpleAgg [recompute]",
                                        partition_keys=list(range(ng)), sql=sql, detail=detail)

    def temporal_filter(self, node: PlanNode, conds: list[exp.Expression]) -> PlanNode:
        """A filter on now(): rows enter and leave the result as time passes."""
        pred = conds[0]
        for c in conds[1:]:
            pred = exp.and_(pred, c)
        marker = exp.column("__rw_now__")
        pred = pred.transform(lambda n: marker.copy() if _is_now(n) else n)
        where = expr_to_duckdb(pred, node.types + [DataType("timestamp with time zone")]
                               ).replace("__rw_now__", "{now}")
        sql = f"SELECT * FROM in0 WHERE {where}"
        return StreamPartitionRecompute(list(node.types), list(node.stream_key), [node],
                                        name="StreamDynamicFilter", partition_keys=[], sql=sql,
                                        detail=f"predicate: {pred.sql(dialect='postgres').replace('__rw_now__', 'now()')}",
                                        temporal=True)

    def over_window(self, node: PlanNode, exprs: list[exp.Expression]):
        """Window functions: the input plus one column per window, recomputed per partition."""
        windows: list[exp.Expression] = []
        wsql: list[str] = []
        for e in exprs:
            for w in e.find_all(exp.Window):
                if w.sql() not in wsql:
                    windows.append(w)
                    wsql.append(w.sql())
        width = len(node.types)
        parts = [tuple(p.sql() for p in (w.args.get("partition_by") or [])) for w in windows]
        pkeys: list[int] = []
        if len(set(parts)) == 1 and all(_is_ref(p) is not None for p in (windows[0].args.get("partition_by") or [])):
            pkeys = [_is_ref(p) for p in windows[0].args.get("partition_by") or []]
        table = self.eowc_watermark
        source, source_types, computed = "SELECT * FROM in0", list(node.types), []
        for w in windows:
            if session_window.is_session(w):
                if table is None:
                    raise NotSupported("Session frame is not supported in general streaming mode. "
                                       "Please consider using Emit-On-Window-Close mode.")
                # the rows numbered by session (one more column), the window over partition + session
                number = f"_{len(source_types)}"
                partition = [expr_to_duckdb(p, node.types) for p in w.args.get("partition_by") or []]
                key = expr_to_duckdb(session_window.session_key(w), node.types)
                gap = expr_to_duckdb(session_window.gap_of(w), node.types)
                source = session_window.session_numbers_sql(source, partition, key, gap, number)
                source_types.append(BIGINT)
                whole = w.copy()
                whole.set("partition_by", [*(p.copy() for p in w.args.get("partition_by") or []), exp.column(number)])
                whole.set("spec", exp.WindowSpec(kind="ROWS", start="UNBOUNDED", start_side="PRECEDING",
                                                 end="UNBOUNDED", end_side="FOLLOWING"))
                computed.append(expr_to_duckdb(whole, source_types))
                if table is not None:  # final once the watermark reaches the session's last key + gap
                    last = exp.Window(this=exp.Max(this=session_window.session_key(w).copy()),
                                      partition_by=whole.args["partition_by"])
                    w.meta["session_close"] = (f"{expr_to_duckdb(last, source_types)} + {gap}")
            else:
                computed.append(expr_to_duckdb(w, node.types))
        cols = [f"_{i}" for i in range(width)] + computed
        # a session window's type is its function's over any frame
        typed = [w if not session_window.is_session(w) else session_window.without_frame(w) for w in windows]
        types = list(node.types) + self.expr_types(node, typed)
        detail = "window_functions: [" + ", ".join(
            w.sql() if w.find(exp.IgnoreNulls) else w.sql(dialect="postgres", unsupported_level=ErrorLevel.IGNORE)
            for w in windows) + "]"
        if table is not None:
            closes = list(dict.fromkeys(
                (expr_to_duckdb(k, node.types), "<") for w in windows for k in _frame_close(w)))
            closes += [(w.meta["session_close"], "<=") for w in windows if "session_close" in w.meta]
            outs = ", ".join(f"_{i}" for i in range(len(cols)))
            sql = (f"SELECT {outs} FROM (SELECT {', '.join(f'{c} AS _{i}' for i, c in enumerate(cols))}, "
                   f"{', '.join(f'{c} AS __close{i}' for i, (c, _) in enumerate(closes))} FROM ({source})) "
                   f"WHERE {' AND '.join(f'__close{i} {op} {{now}}' for i, (_, op) in enumerate(closes))}")
        else:
            sql = f"SELECT {', '.join(f'{c} AS _{i}' for i, c in enumerate(cols))} FROM ({source})"
        out = StreamPartitionRecompute(types, list(node.stream_key), [node],
                                       name="StreamOverWindow" if table is None else "StreamEowcOverWindow",
                                       partition_keys=pkeys, sql=sql, detail=detail, temporal=table is not None,
                                       watermark_of=table.id if table is not None else None)

        def repl(n):
            if isinstance(n, exp.Window) and n.sql() in wsql:
                return exp.column(f"_{width + wsql.index(n.sql())}")
            return n
        return out, [e.transform(repl) for e in exprs]

    def top_n(self, node, exprs, names, aliases, order, order_exprs, s: exp.Select) -> Planned:
        """ORDER BY ... LIMIT / OFFSET in an MV: one partition, recomputed when it changes."""
        planned = self.project(node, list(exprs) + list(order_exprs), names + [f"__order_{i}" for i in range(len(order_exprs))],
                               aliases + [f"__order_{i}" for i in range(len(order_exprs))])
        planned = Planned(planned.node, planned.scope, planned.names, planned.visible)
        n_out = len(exprs)
        keys = self._order_keys(order, n_out) + [f"_{k} ASC" for k in planned.node.stream_key]
        limit = s.args.get("limit")
        offset = s.args.get("offset")
        count = None
        if limit is not None:  # LIMIT n, or FETCH FIRST n ROWS [ONLY | WITH TIES]
            count = limit.args.get("count") if isinstance(limit, exp.Fetch) else limit.expression
        n = _int_literal(count) if count is not None else (1 if isinstance(limit, exp.Fetch) else None)
        m = _int_literal(offset.expression if offset is not None else None) or 0
        options = limit.args.get("limit_options") if limit is not None else None
        with_ties = bool(options is not None and options.args.get("with_ties"))
        width = len(planned.node.types)
        sql = f"SELECT * FROM in0 ORDER BY {', '.join(keys)}"
        if with_ties:
            sql = (f"SELECT {', '.join(f'_{i}' for i in range(width))} FROM (SELECT *, rank() OVER "
                   f"(ORDER BY {', '.join(keys[: len(order)])}) AS __r FROM in0) WHERE __r <= {n + m} "
                   f"AND __r > {m}")
        else:
            if n is not None:
                sql += f" LIMIT {n}"
            if m:
                sql += f" OFFSET {m}"
        detail = f"order: [{', '.join(keys)}], limit: {n}, offset: {m}"
        top = StreamPartitionRecompute(list(planned.node.types), list(planned.node.stream_key), [planned.node],
                                       name="StreamTopN", partition_keys=[], sql=sql, detail=detail)
        # drop the ORDER BY helper columns again (keep hidden stream-key columns)
        keep = [i for i in range(width) if not (n_out <= i < n_out + len(order_exprs))
                or i in planned.node.stream_key]
        return self._select_columns(top, keep, planned, n_out)

    def _select_columns(self, node, keep, planned: Planned, visible: int) -> Planned:
        exprs = [exp.column(f"_{i}") for i in keep]
        sk = [keep.index(k) for k in node.stream_key]
        proj = StreamProject([node.types[i] for i in keep], sk, [node], exprs=exprs)
        return Planned(proj, [planned.scope[i] for i in keep], [planned.names[i] for i in keep], visible)

    def _order_keys(self, order, first: int) -> list[str]:
        keys = []
        for i, o in enumerate(order):
            desc = bool(o.args.get("desc"))
            nulls_first = o.args.get("nulls_first")
            if nulls_first is None:
                nulls_first = desc  # PostgreSQL: NULLs sort as larger than any value
            keys.append(f"_{first + i} {'DESC' if desc else 'ASC'} NULLS {'FIRST' if nulls_first else 'LAST'}")
        return keys

    def distinct_on(self, node, exprs, names, items, distinct, order, order_exprs, on_exprs) -> Planned:
        """DISTINCT ON (keys): the first row per key in ORDER BY order (a group top-1). A key
        that is not in the select list is computed as a hidden column (`on_exprs`, planned, in
        the order `_hidden_distinct_on` lists them)."""
        ons = distinct.args["on"]
        ons = ons.expressions if isinstance(ons, exp.Tuple) else [ons]
        aliases = [e.alias_or_name for e in items]
        n_out = len(exprs)
        hidden_at = n_out + len(order_exprs)
        keys, hidden_ons = [], []
        for o in ons:
            match = _distinct_on_match(items, o)
            if match is not None:
                keys.append(match)
            else:
                keys.append(hidden_at + len(hidden_ons))
                hidden_ons.append(on_exprs[len(hidden_ons)])
        extra = [f"__order_{i}" for i in range(len(order_exprs))] + [f"__on_{i}" for i in range(len(hidden_ons))]
        p = self.project(node, list(exprs) + list(order_exprs) + hidden_ons, names + extra, aliases + extra)
        width = len(p.node.types)
        order_sql = self._order_keys(order, n_out) + [f"_{k}" for k in p.node.stream_key]
        sql = (f"SELECT {', '.join(f'_{i}' for i in range(width))} FROM (SELECT *, row_number() OVER "
               f"(PARTITION BY {', '.join(f'_{k}' for k in keys)} ORDER BY {', '.join(order_sql)}) AS __rn "
               f"FROM in0) WHERE __rn = 1")
        top = StreamPartitionRecompute(list(p.node.types), keys, [p.node], name="StreamGroupTopN",
                                       partition_keys=keys, sql=sql,
                                       detail=f"limit: 1, group_key: [{', '.join(f'_{k}' for k in keys)}]")
        keep = [i for i in range(width) if not (n_out <= i < n_out + len(order_exprs)) or i in keys]
        return self._select_columns(top, keep, p, n_out)

    def _set_op_types(self, left: Planned, right: Planned, n: int) -> tuple[Planned, Planned]:
        """Both branches' columns of two number types cast to the wider (PostgreSQL's
        resolution of a set operation's column: int and numeric are numeric, numeric and real
        real), with PostgreSQL's casts: the branches are then cast to the first one's types,
        which made an integer of a double's 2.5 and could not make a numeric of an integer."""
        common = [set_op_type(a, b) for a, b in zip(left.node.types[:n], right.node.types[:n])]
        if all(c is None for c in common):
            return left, right
        out = []
        for first, side in ((True, left), (False, right)):
            # (the other branch is cast to the first one's types by the set operation itself,
            # which widens an integer exactly)
            casts = [c is not None and side.node.types[i] != c
                     and (first or not (side.node.types[i].name in INTEGERS and c.name in INTEGERS))
                     for i, c in enumerate(common)]
            if not any(casts):
                out.append(side)
                continue
            exprs = [exp.Cast(this=exp.column(f"_{i}"), to=exp.DataType.build(c.name, dialect="postgres"))
                     if cast else exp.column(f"_{i}") for i, (c, cast) in enumerate(zip(common, casts))]
            key_names = {k: side.names[k] for k in side.node.stream_key if k < len(side.names)}
            projected = self.project(side.node, exprs, side.names[:n], [a for _, a in side.scope[:n]], key_names)
            out.append(projected)
        return out[0], out[1]

    def plan_set_op(self, q) -> Planned:
        left, right = self.plan_query(q.this), self.plan_query(q.expression)
        pairs = corresponding(q, left.names[:left.visible], right.names[:right.visible])
        if pairs is not None:  # CORRESPONDING: both sides keep the named columns, in one order
            names = [left.names[i] for i, _ in pairs]
            left = self.project(left.node, [exp.column(f"_{i}") for i, _ in pairs], names)
            right = self.project(right.node, [exp.column(f"_{j}") for _, j in pairs], names)
        n = left.visible
        if right.visible != n:
            raise BindError(f"each {q.key.upper()} query must have the same number of columns")
        left, right = self._set_op_types(left, right, n)
        distinct = bool(q.args.get("distinct"))
        lt, rt = left.node.types, right.node.types
        types = list(lt[:n])
        if isinstance(q, exp.Union):
            lsk, rsk = left.node.stream_key, right.node.stream_key
            hidden_types = [BIGINT_T] + [lt[k] for k in lsk] + [rt[k] for k in rsk]
            def layout(side_sk, other_len, tag, mine_first) -> list[Expr]:
                """The output columns, the branch tag, then every branch's key (this one's
                columns, NULL for the other's), each cast to its output type."""
                cols = [Expr(f"CAST(_{i} AS {types[i].duckdb()})", (i,), types[i]) for i in range(n)]
                mine = [(f"_{k}", (k,)) for k in side_sk]
                nulls = [("NULL", ())] * other_len
                hidden = [(str(tag), ())] + (mine + nulls if mine_first else nulls + mine)
                return cols + [Expr(f"CAST({sql} AS {t.duckdb()})", used, t)
                               for (sql, used), t in zip(hidden, hidden_types)]
            lay_l = layout(lsk, len(rsk), 0, True)
            lay_r = layout(rsk, len(lsk), 1, False)
            out_types = types + hidden_types
            sk = list(range(n, len(out_types)))
            union = StreamUnion(out_types, sk, [left.node, right.node], layouts=[lay_l, lay_r])
            names = left.names[:n] + [f"__u{i}" for i in range(len(hidden_types))]
            scope = left.scope[:n] + [("", f"__hidden_u{i}") for i in range(len(hidden_types))]
            planned = Planned(union, scope, names, n)
            return self.distinct(planned) if distinct else planned
        op = "EXCEPT" if isinstance(q, exp.Except) else "INTERSECT"
        wl = len(lt)
        cols = ", ".join(f"_{i}" for i in range(n))
        rcols = ", ".join(f"CAST(_{wl + i} AS {types[i].duckdb()}) AS _{i}" for i in range(n))
        body = f"SELECT {cols} FROM in0 {op}{'' if distinct else ' ALL'} SELECT {rcols} FROM in1"
        if distinct:
            sql, out_types, sk = body, types, list(range(n))
        else:
            sql = f"SELECT *, row_number() OVER (PARTITION BY {cols}) AS _{n} FROM ({body})"
            out_types, sk = types + [BIGINT_T], list(range(n + 1))
        node = StreamPartitionRecompute(out_types, sk, [left.node, right.node], name=f"Stream{op.title()}",
                                        partition_keys=list(range(n)), sql=sql,
                                        detail=f"all: {str(not distinct).lower()}")
        node.right_partition_keys = list(range(n))
        names = left.names[:n] + ([] if distinct else ["__row"])
        scope = left.scope[:n] + ([] if distinct else [("", "__hidden_row")])
        return Planned(node, scope, names, n)

    def distinct(self, p: Planned) -> Planned:
        n = p.visible
        project = StreamProject(p.node.types[:n], [], [p.node], exprs=[exp.column(f"_{i}") for i in range(n)])
        agg = StreamHashAgg(p.node.types[:n], list(range(n)), [project], group_keys=list(range(n)), calls=[])
        if any(t.name == "interval" for t in agg.types):
            # equal intervals ('24 hours', '1 day') are one key, output normalized as RisingWave's
            # hash key holds it (and as GROUP BY outputs it), not as whichever came first
            exprs = [exp.Anonymous(this="pg_interval_key", expressions=[exp.column(f"_{i}")])
                     if t.name == "interval" else exp.column(f"_{i}") for i, t in enumerate(agg.types)]
            agg = StreamProject(list(agg.types), list(agg.stream_key), [agg], exprs=exprs)
        return Planned(agg, p.scope[:n], p.names[:n], n)

    # -- projection -------------------------------------------------------------------------------
    def project(self, node: PlanNode, exprs: list[exp.Expression], names: list[str],
                aliases: list[str] | None = None, key_names: dict[int, str] | None = None) -> Planned:
        """`names` are what users see; `aliases` what an outer query references (sqlglot's);
        `key_names`: the names of input columns, for the stream key columns added hidden."""
        exprs = list(exprs)
        aliases = list(aliases or names)
        visible = len(exprs)
        key = []
        for k in node.stream_key:
            ref = next((i for i, e in enumerate(exprs) if isinstance(e, exp.Column) and e.name == f"_{k}"), None)
            if ref is None:
                exprs.append(exp.column(f"_{k}"))
                name = (key_names or {}).get(k)
                names = names + [name or f"_{k}"]
                # an outer query sees a hidden key by its name where it has one of its own
                # (a change log's `_changelog_row_id`), as RisingWave's hidden columns
                aliases.append(name if name and name.isidentifier() and name not in aliases
                               else f"__hidden_{len(exprs) - 1}")
                ref = len(exprs) - 1
            key.append(ref)
        types = self.expr_types(node, exprs)
        proj = StreamProject(types, key, [node], exprs=exprs)
        scope = [("", n) for n in aliases]
        return Planned(proj, scope, names, visible)

    def expr_types(self, node: PlanNode, exprs: list[exp.Expression],
                   group_by: list[int] | None = None) -> list[DataType]:
        """Result types, learned by running the expressions on an empty input in DuckDB."""
        if not exprs:
            return []
        sql = [expr_to_duckdb(e, node.types) for e in exprs]
        fields = _duckdb_result_fields(tuple(sql), tuple(node.types), tuple(group_by or ()))
        return [_kept_type(e, node.types) or DataType.from_field(f) for e, f in zip(exprs, fields)]

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
            if isinstance(n, (exp.Subquery, exp.Exists, exp.Query)) or (isinstance(n, exp.In) and n.args.get("query")):
                raise NotSupported("subqueries in expressions of a materialized view")  # left by decorrelate
            return n
        return e.transform(repl)  # a copy


def _scans(node: PlanNode) -> list[StreamTableScan]:
    """The table scans under a plan node."""
    if isinstance(node, StreamTableScan):
        return [node] if node.relation is not None else []
    return [s for i in node.inputs for s in _scans(i)]
