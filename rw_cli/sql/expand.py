"""Rewrites that batch binding and stream planning share, before either qualifies a query:
views become subqueries (recursively), RisingWave's time-window table functions
`tumble(t, col, size [, offset])` and `hop(t, col, slide, size [, offset])` become subqueries
over `t`, SQL functions are inlined, `CORRESPONDING` set operations are resolved by name,
and set-returning functions nested in others (`unnest(regexp_matches(...))`,
`generate_series(1, unnest(a))`) are taken apart as PostgreSQL's stacked project-sets.
"""
from __future__ import annotations

from sqlglot import exp

from rw_cli.errors import BindError, CatalogError
from rw_cli.meta.catalog import DEFAULT_SCHEMA, VIEW, Catalog, RelationCatalog
from rw_cli.sql.walk import nodes

_MAX_VIEW_DEPTH = 32
# meta key of a view's subquery: the schema of the view, when no alias renamed it
VIEW_SCHEMA = "rw_view_schema"


def expand(tree: exp.Expression, catalog: Catalog) -> exp.Expression:
    for _ in range(_MAX_VIEW_DEPTH):
        found = nodes(tree, exp.CTE, exp.Table)
        ctes = {c.alias for c in found if isinstance(c, exp.CTE)}
        changed = False
        for t in [t for t in found if isinstance(t, exp.Table)]:
            fn = t.this
            if isinstance(fn, exp.Anonymous) and fn.name.lower() in ("tumble", "hop"):
                t.replace(_time_window(t, fn, catalog))
                changed = True
                continue
            if isinstance(fn, exp.Anonymous) and fn.name.lower() == "_pg_expandarray":
                t.replace(_expand_array(t, fn))
                changed = True
                continue
            if isinstance(t.this, exp.Identifier) and (t.name not in ctes or t.meta.get("rw_catalog")
                                                        or t.text("db")):
                rel = catalog.get(_catalog_name(t, catalog))
                if rel is not None and rel.kind == VIEW:
                    t.replace(_view_subquery(t, rel))
                    changed = True
        if not changed:
            from rw_cli.sql.functions import date_trunc_unit_columns, range_rows, row_id_casts
            from rw_cli.sql.jsonb import expand_jsonb_table_functions
            from rw_cli.sql.sql_udf import inline_sql_functions

            tree = inline_sql_functions(tree, getattr(catalog, "functions", None) or {}, catalog)
            tree = row_id_casts(range_rows(date_trunc_unit_columns(tree)))
            tree = nested_sets_lateral(unnest_of_set(expand_jsonb_table_functions(tree)))
            return name_ordinality(scalar_function_sources(tree))
    raise BindError("views nested too deeply (or recursive)")


def unnest_of_set(tree: exp.Expression) -> exp.Expression:
    """`unnest(f(...))` where f is itself a set of arrays (`unnest(regexp_matches(s, p, 'g'))`,
    the tags of a text; `unnest(unnest(a))`): each of f's arrays unnested in turn, in order,
    which is one unnest of f's list flattened (the inner set no longer keeps its arrays as
    rows). PostgreSQL and RisingWave evaluate the inner set in a project-set below the outer;
    DuckDB refuses an unnest inside an unnest."""
    from rw_cli.sql.dialect import ROWS_ARE_ARRAYS

    for outer in nodes(tree, exp.Explode, exp.Unnest):
        inner = _unnest_argument(outer)
        if inner is None or not isinstance(inner, (exp.Explode, exp.Unnest)) or _unnest_argument(inner) is None:
            continue
        flat = inner.copy()
        if flat.meta.get(ROWS_ARE_ARRAYS):  # its list holds the arrays: flattened once, its rows are their elements
            flat.set("this", exp.Anonymous(this="flatten", expressions=[flat.this]))
        outer.replace(flat)
    return tree


def nested_sets_lateral(tree: exp.Expression) -> exp.Expression:
    """A set-returning function whose argument is another (`generate_series(1, unnest(a))`):
    PostgreSQL evaluates the inner set in a project-set below the outer one, each of its
    rows then feeding the outer. That is the inner set as a lateral FROM item after the
    query's own (`FROM t, unnest(t.a) AS __set0(__set0)`) that the select list reads, which
    batch queries and materialized views both plan (DuckDB refuses nested unnests). Only in
    a SELECT without aggregation or window functions, whose sets come after them; and when
    every set of its select list is the inner one or reads it (other sets at the outer level
    would be zipped with the outer, not the inner, rows)."""
    for select in nodes(tree, exp.Select):
        items = select.expressions
        srfs = [n for e in items for n in _same_query(e) if _select_set(n)]
        inner = {n.sql(): n for n in srfs if any(_select_set(a) for a in _set_args(n))}
        if not inner:
            continue
        leaves = {}
        for outer in inner.values():
            for a in _set_args(outer):
                if _select_set(a) and not any(_select_set(x) for x in _set_args(a)):
                    leaves.setdefault(a.sql(), a)
        if len(leaves) != 1 or select.args.get("group") or select.args.get("having") \
                or any(n.find(exp.AggFunc, exp.Window) for n in items):
            continue
        key, leaf = next(iter(leaves.items()))
        if not all(n.sql() == key or any(_select_set(a) and a.sql() == key for a in _set_args(n)) for n in srfs):
            continue
        name = f"__set{sum(1 for _ in select.find_all(exp.Select))}"
        alias = exp.TableAlias(this=exp.to_identifier(name), columns=[exp.to_identifier(name)])
        source = _set_as_source(leaf, alias)
        if _from_item_count(select) == 0:
            select.set("from_" if "from_" in exp.Select.arg_types else "from", exp.From(this=source))
        else:
            select.append("joins", exp.Join(this=source))
        ref = exp.column(name, table=name)
        replaced = {id(n) for e in items for n in _same_query(e) if _select_set(n) and n.sql() == key}
        select.set("expressions", [item.transform(lambda n: ref.copy() if id(n) in replaced else n, copy=False)
                                   for item in items])
    return tree


def _select_set(node: exp.Expression) -> bool:
    """A set-returning function in the select list (an unnest of one list, or a series)."""
    return isinstance(node, exp.ExplodingGenerateSeries) or _unnest_argument(node) is not None


def _set_args(node: exp.Expression) -> list[exp.Expression]:
    """The nodes inside a set function's arguments (of its query: not inside a subquery)."""
    return [n for n in _same_query(node) if n is not node]


def _same_query(node: exp.Expression) -> list[exp.Expression]:
    """`node` and the nodes under it outside any subquery (whose sets are its own)."""
    return list(node.walk(prune=lambda n: n is not node and isinstance(n, (exp.Select, exp.Subquery, exp.Union))))


def _from_item_count(select: exp.Select) -> int:
    from_ = select.args.get("from") or select.args.get("from_")
    return 0 if from_ is None else 1 + len(select.args.get("joins") or [])


def _set_as_source(srf: exp.Expression, alias: exp.TableAlias) -> exp.Expression:
    """A select-list set function as a FROM item of one column (named by `alias`)."""
    if isinstance(srf, exp.ExplodingGenerateSeries):
        return exp.Table(this=srf.copy(), alias=alias)
    unnest = exp.Unnest(expressions=[_unnest_argument(srf).copy()], alias=alias)
    unnest.meta.update(srf.meta)  # regexp_matches: its rows are arrays, not to be flattened
    return unnest


def _unnest_argument(node: exp.Expression) -> exp.Expression | None:
    """The one list an unnest in the select list reads (None for unnest in FROM or of several)."""
    if isinstance(node, exp.Explode) and type(node) is exp.Explode:
        return node.this
    if isinstance(node, exp.Unnest) and len(node.expressions) == 1 and not isinstance(node.parent, (exp.From, exp.Join)):
        return node.expressions[0]
    return None


def name_ordinality(tree: exp.Expression) -> exp.Expression:
    """`FROM unnest(a) [WITH ORDINALITY] [AS t]`: PostgreSQL's column names, `unnest` (or the
    table alias) and `ordinality`, where the statement names none (sqlglot would leave the
    columns nameless, and `*` without them)."""
    for u in nodes(tree, exp.Unnest):
        if len(u.expressions) != 1 or not isinstance(u.parent, (exp.From, exp.Join)):
            continue
        if not u.args.get("offset") and u.args.get("alias") is None:
            # `FROM t, unnest(t.a)`: its column is `unnest`, as PostgreSQL names it
            u.set("alias", exp.TableAlias(this=exp.to_identifier("unnest"), columns=[exp.to_identifier("unnest")]))
            continue
        if u.args.get("offset") is not True:
            continue
        alias = u.args.get("alias")
        value = alias.name if alias is not None and alias.name else "unnest"
        u.set("alias", exp.TableAlias(this=exp.to_identifier(value), columns=[exp.to_identifier(value)]))
        u.set("offset", exp.to_identifier("ordinality"))
    for t in nodes(tree, exp.Table):
        _name_set_function_column(t)
    return tree


def _name_set_function_column(t: exp.Table) -> None:
    """`FROM regexp_matches(s, p) [m] [WITH ORDINALITY]` (and string_to_table,
    regexp_split_to_table: the unnest of a list in disguise): one column, named by the table
    alias, else after the function as written, as PostgreSQL names it (then `ordinality`)."""
    from rw_cli.sql.dialect import WRITTEN_NAME

    if not isinstance(t.this, exp.Explode) or type(t.this) is not exp.Explode:
        return
    alias = t.args.get("alias")
    if alias is not None and alias.columns:
        return
    name = alias.name if alias is not None and alias.name else (t.this.meta.get(WRITTEN_NAME) or "unnest")
    columns = [exp.to_identifier(name)] + ([exp.to_identifier("ordinality")] if t.args.get("ordinality") else [])
    t.set("alias", exp.TableAlias(this=exp.to_identifier(name), columns=columns))


# PostgreSQL's set-returning functions (some are scalar functions of other meanings in DuckDB)
_SET_RETURNING_NAMES = frozenset("""
    generate_series range unnest generate_subscripts regexp_matches regexp_split_to_table string_to_table
    jsonb_array_elements jsonb_array_elements_text jsonb_each jsonb_each_text jsonb_object_keys
    jsonb_path_query jsonb_populate_recordset jsonb_to_recordset json_each json_array_elements
    pg_get_keywords _pg_expandarray tumble hop
""".split())


def scalar_function_sources(tree: exp.Expression) -> exp.Expression:
    """A scalar function in FROM (`FROM abs(-1) [a [(c)]]`) as PostgreSQL reads it: one row
    of one column, named by the alias's column list, else by the table alias, else after the
    function (`SELECT abs.abs FROM abs(-1)`). Set-returning functions are left as they are."""
    from rw_cli.engine.duck import scalar_only_function_names

    for table in nodes(tree, exp.Table):
        fn = table.this
        if not isinstance(fn, exp.Func) or isinstance(fn, (exp.ExplodingGenerateSeries, exp.GenerateSeries,
                                                            exp.Unnest, exp.Explode, exp.Posexplode)):
            continue
        name = (fn.name if isinstance(fn, exp.Anonymous) else fn.sql_name()).lower()
        if name in _SET_RETURNING_NAMES or name not in scalar_only_function_names():
            continue
        alias = table.args.get("alias")
        col = alias.columns[0].name if alias is not None and alias.columns else (alias.name if alias else name)
        sub_alias = exp.TableAlias(this=exp.to_identifier(alias.name if alias is not None else name))
        table.replace(exp.Subquery(this=exp.select(exp.alias_(fn.copy(), col)), alias=sub_alias))
    return tree


def _catalog_name(t: exp.Table, catalog: Catalog) -> str:
    """The catalog name a table reference means (`s.name` in schema s; an unknown schema
    names nothing)."""
    db = t.text("db")
    if not db:
        return t.name
    try:
        return catalog.qualified(t.name, db)
    except CatalogError:
        return ""


def schema_qualified_columns(found: list[exp.Expression]) -> None:
    """`schema.table.column` names the column of the FROM item `schema.table` (its schema
    written or `public`); the schema is dropped once checked, since FROM items are renamed.
    `found`: the query's columns and tables (batch binding and the MV planner both: the
    planner read `s2.t.c` as `t.c`, the nearest `t`, in a subquery that correlates
    `s1.t` with `s2.t`)."""
    qualified = [c for c in found if isinstance(c, exp.Column) and c.args.get("db") is not None]
    # a view is a subquery by now: it keeps the schema it was named with (`_view_subquery`)
    tables = [t for t in found if isinstance(t, exp.Table)
              or (isinstance(t, exp.Subquery) and VIEW_SCHEMA in t.meta)]
    if not qualified and len({_item_schema(t) for t in tables}) < 2:
        return
    items: dict[str, set] = {}
    for t in tables:
        items.setdefault(t.alias_or_name, set()).add(_item_schema(t))
    # tables of one name from two schemas (`s1.a`, `s2.a`): each is named `schema.name`, so
    # that `s1.a.x` and `s2.a.y` tell them apart and a bare `a.x` is no longer either
    clashing = {n for n, schemas in items.items() if len(schemas - {None}) > 1}
    for t in tables:
        schema = _item_schema(t)
        if t.alias_or_name in clashing and schema is not None:
            name = exp.to_identifier(f"{schema}.{t.alias_or_name}", quoted=True)
            if isinstance(t, exp.Subquery):
                t.args["alias"].set("this", name)
            else:
                t.set("alias", exp.TableAlias(this=name))
    for col in qualified:
        db = col.text("db")
        if db not in items.get(col.table, ()):
            raise BindError(f'missing FROM-clause entry for table "{db}.{col.table}"')
        if col.table in clashing:
            col.set("table", exp.to_identifier(f"{db}.{col.table}", quoted=True))
        col.set("db", None)
        col.set("catalog", None)


def _item_schema(item: exp.Expression) -> str | None:
    """The schema a FROM item is named with, or None when an alias names it (an aliased item
    is named by its alias alone)."""
    if isinstance(item, exp.Subquery):
        return item.meta.get(VIEW_SCHEMA)
    return (item.text("db") or DEFAULT_SCHEMA) if item.args.get("alias") is None else None


def known_database(catalog: Catalog, t: exp.Table) -> None:
    """A three-part name's database (`db.schema.t`) must exist: RisingWave resolves the
    database before the schema, so `a.b.c` fails on `a` even when `b` is unknown too."""
    database = t.text("catalog")
    if database and database not in catalog.access.databases:
        raise CatalogError(f"database not found: {database}")


def qualify_schema_names(tree: exp.Expression, catalog: Catalog) -> exp.Expression:
    """Each reference to a relation of a schema other than public named by its catalog name
    (`s.t` as one quoted name, aliased `t` as it was written), so that a plan keyed by
    catalog names finds it; `public.t` becomes `t`."""
    ctes = {c.alias for c in tree.find_all(exp.CTE)}
    for t in list(tree.find_all(exp.Table)):
        db = t.text("db")
        known_database(catalog, t)
        if not db or not isinstance(t.this, exp.Identifier) or (t.name in ctes and not t.meta.get("rw_catalog")):
            continue
        name = catalog.qualified(t.name, db)
        if "." not in name:
            t.set("db", None)
            t.set("catalog", None)
            continue
        alias = t.args.get("alias") or exp.TableAlias(this=exp.to_identifier(t.name))
        renamed = exp.Table(this=exp.to_identifier(name, quoted=True), alias=alias)
        renamed.meta.update(t.meta)  # marks (a gap fill's arguments) stay with the table
        t.replace(renamed)
    return tree


def _view_subquery(t: exp.Table, rel: RelationCatalog) -> exp.Expression:
    from rw_cli.sql.dialect import parse_statement

    body = parse_statement(rel.definition)
    if isinstance(body, exp.Create):
        body = body.expression
    while isinstance(body, exp.Subquery) and not body.alias:  # `AS (SELECT ...)`: the query itself
        body = body.this
    # the view's own relations were resolved when it was created: a CTE of the outer query
    # with the same name must not capture them
    inner_ctes = {c.alias for c in body.find_all(exp.CTE)}
    for inner in body.find_all(exp.Table):
        if isinstance(inner.this, exp.Identifier) and inner.name not in inner_ctes:
            inner.meta["rw_catalog"] = True
    names = [c.name for c in rel.columns]
    alias = exp.TableAlias(this=exp.to_identifier(t.alias_or_name))
    old = t.args.get("alias")
    cols = old.columns if old is not None and old.columns else [exp.to_identifier(n) for n in names]
    alias.set("columns", cols)
    sub = exp.Subquery(this=body, alias=alias)
    if old is None or not old.name:  # `s.v.c` names a column of the unaliased view `s.v`
        sub.meta[VIEW_SCHEMA] = t.text("db") or DEFAULT_SCHEMA
    return sub


def _expand_array(t: exp.Table, fn: exp.Anonymous) -> exp.Expression:
    """information_schema._pg_expandarray(a): a row (x, n) per element x of array `a` at
    position n, as a subquery over its subscripts (RisingWave finds it without the schema)."""
    if len(fn.expressions) != 1:
        raise BindError(f"_pg_expandarray expects 1 argument, got {len(fn.expressions)}")
    arr = fn.expressions[0]
    query = exp.select(exp.alias_(exp.Bracket(this=arr.copy(), expressions=[exp.column("n", table="__ea")]), "x"),
                       exp.alias_(exp.column("n", table="__ea"), "n")) \
        .from_(exp.Table(this=exp.Anonymous(this="generate_series", expressions=[
            exp.Literal.number(1), exp.Anonymous(this="array_length", expressions=[arr.copy(), exp.Literal.number(1)])]),
            alias=exp.TableAlias(this=exp.to_identifier("__ea"), columns=[exp.to_identifier("n")])))
    alias = t.args.get("alias") or exp.TableAlias(this=exp.to_identifier("_pg_expandarray"))
    return exp.Subquery(this=query, alias=alias.copy())


def _time_window(t: exp.Table, fn: exp.Anonymous, catalog: Catalog) -> exp.Expression:
    kind = fn.name.lower()
    args = list(fn.expressions)
    need = (3, 4) if kind == "tumble" else (4, 5)
    if len(args) not in need:
        raise BindError(f"{kind} expects {need[0]} or {need[1]} arguments, got {len(args)}")
    src = args[0]
    if isinstance(src, exp.Column):  # `t` or `schema.t`
        db = src.args.get("table")
        src = exp.Table(this=src.this.copy(), db=db.copy() if db is not None else None)
    elif not isinstance(src, (exp.Table, exp.Subquery)):
        raise BindError(f"the first argument of {kind} must be a relation")
    col = exp.column(args[1].name, table="__tw")
    size = args[2]
    offset = args[3] if kind == "tumble" and len(args) == 4 else (args[4] if kind == "hop" and len(args) == 5 else None)
    if isinstance(offset, exp.Literal) and offset.is_string:  # '+6 HOURS': an interval
        offset = exp.Cast(this=offset.copy(), to=exp.DataType.build("INTERVAL"))
    src_alias = src.copy()
    src_alias.set("alias", exp.TableAlias(this=exp.to_identifier("__tw")))
    origin = _origin(src, args[1].name, catalog, offset)
    alias = exp.TableAlias(this=exp.to_identifier(t.alias_or_name if t.args.get("alias") else src.name or "__tw"))
    if kind == "tumble":
        start = exp.Anonymous(this="time_bucket", expressions=[size.copy(), col, origin])
        sel = exp.select(exp.column(exp.Star(), table="__tw"),
                         exp.alias_(start, "window_start"),
                         exp.alias_(exp.Add(this=start.copy(), expression=size.copy()), "window_end"))
        return exp.Subquery(this=sel.from_(src_alias), alias=alias)
    slide, size = args[2], args[3]
    n = _interval_ratio(size, slide)
    k = exp.column("__k", table="__hop")
    start = exp.Sub(this=exp.Anonymous(this="time_bucket", expressions=[slide.copy(), col, origin]),
                    expression=exp.Mul(this=k, expression=slide.copy()))
    gen = exp.Table(this=exp.ExplodingGenerateSeries(start=exp.Literal.number(0), end=exp.Literal.number(n - 1)),
                    alias=exp.TableAlias(this=exp.to_identifier("__hop"), columns=[exp.to_identifier("__k")]))
    sel = exp.select(exp.column(exp.Star(), table="__tw"), exp.alias_(start, "window_start"),
                     exp.alias_(exp.Add(this=start.copy(), expression=size.copy()), "window_end"))
    sel = sel.from_(src_alias).join(gen).where(exp.Not(this=exp.Is(this=col.copy(), expression=exp.Null())))
    return exp.Subquery(this=sel, alias=alias)


def _origin(src, col_name: str, catalog: Catalog, offset) -> exp.Expression:
    tz = False
    rel = catalog.get(_catalog_name(src, catalog)) if isinstance(src, exp.Table) else None
    if rel is not None:
        for c in rel.columns:
            if c.name == col_name:
                tz = c.type.name == "timestamp with time zone"
    lit = exp.Cast(this=exp.Literal.string("1970-01-01 00:00:00" + ("+00" if tz else "")),
                   to=exp.DataType.build("TIMESTAMPTZ" if tz else "TIMESTAMP"))
    if offset is None:
        return lit
    return exp.Add(this=lit, expression=offset.copy())


def _interval_ratio(size: exp.Expression, slide: exp.Expression) -> int:
    from rw_cli.engine import duck

    sql = f"SELECT epoch({size.sql(dialect='duckdb')}), epoch({slide.sql(dialect='duckdb')})"
    a, b = duck.query(sql).to_pylist()[0].values()
    if not b or b <= 0:
        raise BindError("hop slide must be positive")
    if not a or a <= 0:
        raise BindError("hop size must be positive")
    if a % b:
        raise BindError("hop size must be a multiple of its slide")
    return int(a // b)


# -- qualification ------------------------------------------------------------------------------


def corresponding(q: exp.Expression, left: list[str], right: list[str]) -> list[tuple[int, int]] | None:
    """`UNION [ALL] CORRESPONDING [BY (cols)]` (also EXCEPT / INTERSECT): the (left, right)
    output positions it keeps, by name: the BY list's order, or else the left side's order of
    the names both sides have. None for a set operation by position."""
    if not q.args.get("by_name"):
        return None
    op = q.key.upper()
    by = [c.name for c in q.args.get("on") or []]
    for side in (left, right):
        for n in (by or [n for n in side if n in left and n in right]):
            if side.count(n) > 1:
                raise BindError(f"Duplicated column name `{n}` in a column list of the query in a {op} "
                                "operation. Duplicated column names are not allowed.")
    if by:
        for n in by:
            if n not in left or n not in right:
                raise BindError(f"Column name `{n}` in CORRESPONDING BY is not found in a side of the {op} "
                                "operation. It shall be included in both sides.")
        if len(set(by)) != len(by):
            raise BindError(f"Duplicated column name in CORRESPONDING BY of the {op} operation")
        names = by
    else:
        names = [n for n in left if n in right]
        if not names:
            quote = lambda ns: "(" + ", ".join(f'"{n}"' for n in ns) + ")"  # noqa: E731
            raise BindError(f"When CORRESPONDING is specified, at least one column of the left side shall have "
                            f"a column name that is the column name of some column of the right side in a {op} "
                            f"operation. Left side query column list: {quote(left)}. Right side query column "
                            f"list: {quote(right)}.")
    return [(left.index(n), right.index(n)) for n in names]
