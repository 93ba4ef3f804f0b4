"""Binds a batch query (SELECT, VALUES, set operations) against the catalog.

What DuckDB cannot know is resolved here, before transpiling:
- views are expanded into subqueries (recursively);
- RisingWave's time-window table functions `tumble(t, col, size [, offset])` and
  `hop(t, col, slide, size [, offset])` become subqueries over `t`;
- `information_schema.*` and `pg_catalog.*` relations are materialized as small Arrow tables;
- every table or materialized view read is renamed to `__rel_<id>`, the name its committed
  snapshot is registered under in DuckDB.

The result is qualified by sqlglot when possible (unknown columns are errors, `*` expands to
visible columns, types can be annotated for the PostgreSQL fixes in `transpile`).
"""
from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

import pyarrow as pa
import sqlglot
from sqlglot import exp
from sqlglot.errors import OptimizeError
from sqlglot.optimizer.normalize_identifiers import normalize_identifiers
from sqlglot.optimizer.qualify import qualify

from rw_cli.common.types import TIMESTAMPTZ
from rw_cli.errors import BindError, CatalogError, NotSupported
from rw_cli.sql import session_window
from rw_cli.meta.catalog import RW_TIMESTAMP, Catalog, RelationCatalog
from rw_cli.sql.dialect import AS_WRITTEN, NORMALIZED, WRITTEN_NAME, RwDialect, hidden_columns_dialect
from rw_cli.sql.expand import corresponding, expand, known_database, schema_qualified_columns
from rw_cli.sql.output_name import name_derived_columns
from rw_cli.sql.transpile import mapping_schema, sqlglot_type
from rw_cli.sql.walk import nodes
from rw_cli.sql.bind_time_answers import answer_calls, answer_current_schemas, name_object_arguments

SYSTEM_SCHEMAS = ("information_schema", "pg_catalog", "rw_catalog")


@dataclass
class BoundQuery:
    tree: exp.Expression                      # qualified (if possible), tables renamed
    relations: dict[str, RelationCatalog] = field(default_factory=dict)  # registered name -> rel
    system: dict[str, pa.Table] = field(default_factory=dict)            # registered name -> rows
    schema: dict = field(default_factory=dict)                           # for type annotation
    qualified: bool = True
    # hidden columns the query names (`_row_id`, an MV's hidden group key): they resolve,
    # `*` does not expand to them, and the snapshots keep them
    named_hidden: frozenset[str] = frozenset()
    rw_timestamp: bool = False  # the query names `_rw_timestamp` (its snapshots carry it)
    # FOR SYSTEM_TIME AS OF expr (time travel): registered name -> the expression of the time
    # its relation is read as of (the handler evaluates it)
    as_of: dict[str, exp.Expression] = field(default_factory=dict)


class _Unqualified(Exception):
    """sqlglot could not qualify the query (it may have changed the tree half-way)."""


def bind_query(tree: exp.Expression, catalog: Catalog, hidden: bool = False, session=None,
               reparse: Callable[[], exp.Expression] | None = None) -> BoundQuery:
    """Bind `tree` (not modified, unless `reparse` is given). `hidden=True` makes hidden
    columns visible (DML).

    The bound copy is qualified in place; when sqlglot cannot qualify it (rare: sources whose
    columns it cannot know), it is bound again from `tree`, unqualified. That is cheaper than
    keeping a copy of every tree in case qualifying fails. A caller that owns `tree` and can
    parse it again (`reparse`: a fresh tree of the same statement) hands it over: it is bound
    in place, without a copy, and parsed again only if it must be bound again."""
    try:
        return _bind(tree if reparse is not None else tree.copy(), catalog, hidden, session,
                     qualify_columns=True)
    except _Unqualified as e:
        fresh = reparse() if reparse is not None else tree.copy()
        bound = _bind(fresh, catalog, hidden, session, qualify_columns=False)
        msg = str(e)
        if "could not be resolved" in msg and not _has_opaque_source(bound.tree):
            name = msg.split("'")[1] if "'" in msg else msg
            raise BindError(f'column "{name}" does not exist') from None
        return bound


def _cte_scopes(tree: exp.Expression) -> None:
    """In a WITH that is not RECURSIVE, an item sees only the items before it: a name of its
    own or of a later item means the relation of the catalog (PostgreSQL: `WITH orders AS
    (SELECT ... FROM orders)` reads the table), which DuckDB would take for a circular
    reference. Such a reference is marked as the catalog's."""
    for with_ in nodes(tree, exp.With):
        if with_.args.get("recursive"):
            continue
        ctes = list(with_.expressions)
        _shadowed_ctes(ctes)
        for i, cte in enumerate(ctes):
            unseen = {c.alias for c in ctes[i:]}
            for t in nodes(cte.this, exp.Table):
                if isinstance(t.this, exp.Identifier) and not t.text("db") and t.name in unseen \
                        and not _defined_between(t, cte) and not _defined_between(with_, None, t.name):
                    t.meta["rw_catalog"] = True


def _shadowed_ctes(ctes: list[exp.CTE]) -> None:
    """Two items of one WITH of the same name: the later one replaces the earlier from where
    it is defined on, as RisingWave binds them (one name -> relation map, filled in order);
    the items in between, and the later one itself, still read the earlier. The earlier is
    renamed apart (its readers keep the name as their alias)."""
    for i, cte in enumerate(ctes):
        name = cte.alias
        later = next((j for j in range(i + 1, len(ctes)) if ctes[j].alias == name), None)
        if later is None:
            continue
        hidden = f"{name}__shadowed_{i}"
        cte.args["alias"].set("this", exp.to_identifier(hidden))
        for reader in ctes[i + 1:later + 1]:
            for t in nodes(reader.this, exp.Table):
                if isinstance(t.this, exp.Identifier) and not t.text("db") and t.name == name \
                        and not _defined_between(t, reader):
                    if t.args.get("alias") is None:
                        t.set("alias", exp.TableAlias(this=exp.to_identifier(name)))
                    t.set("this", exp.to_identifier(hidden))


def _recursive_ctes(tree: exp.Expression) -> None:
    """RisingWave's rules for an item of WITH RECURSIVE that reads itself: an anchor and a
    recursive term joined by UNION ALL, no ORDER BY, LIMIT, OFFSET or FETCH around them, and as
    many columns in the recursive term as in the anchor. An item that does not read itself is
    an ordinary CTE."""
    for with_ in nodes(tree, exp.With):
        if not with_.args.get("recursive"):
            continue
        for cte in with_.expressions:
            body = cte.this
            if not any(isinstance(t.this, exp.Identifier) and not t.text("db") and t.name == cte.alias
                       for t in nodes(body, exp.Table)):
                continue
            if any(body.args.get(k) for k in ("order", "limit", "offset", "fetch")):
                raise BindError("ORDER BY, LIMIT, OFFSET, and FETCH are not allowed in recursive CTE")
            while isinstance(body, exp.Subquery):
                body = body.this
                if any(body.args.get(k) for k in ("order", "limit", "offset", "fetch")):
                    raise BindError("ORDER BY, LIMIT, OFFSET, and FETCH are not allowed in recursive CTE")
            if not isinstance(body, exp.Union) or body.args.get("distinct"):
                raise BindError(f'recursive CTE "{cte.alias}" must use UNION ALL to combine its '
                                "anchor and recursive term")
            anchor, step = body.left, body.right
            if isinstance(anchor, exp.Select) and isinstance(step, exp.Select) \
                    and not any(isinstance(e, exp.Star) or (isinstance(e, exp.Column) and e.is_star)
                                for e in [*anchor.expressions, *step.expressions]) \
                    and len(anchor.expressions) != len(step.expressions):
                raise BindError(f"anchor has {len(anchor.expressions)} columns but recursive term "
                                f"has {len(step.expressions)} columns")


def _cte_column_aliases(tree: exp.Expression) -> None:
    """`FROM cte AS a(x, y)`: read as `FROM (SELECT * FROM cte) AS a(x, y)`, whose renamed
    columns keep their types (sqlglot types a CTE's renamed columns as unknown, and a numeric
    cast of one would then be DuckDB's, not RisingWave's). Not within a WITH RECURSIVE."""
    if not any(w.args.get("recursive") for w in nodes(tree, exp.With)):
        for t in nodes(tree, exp.Table):
            alias = t.args.get("alias")
            if alias is None or not alias.columns or not isinstance(t.this, exp.Identifier) or t.text("db") \
                    or t.meta.get("rw_catalog") or t.args.get("version") is not None \
                    or not _defined_between(t, None):
                continue
            bare = exp.Table(this=t.this.copy())
            bare.meta.update(t.meta)
            t.replace(exp.Subquery(this=exp.select("*").from_(bare), alias=alias.copy()))


def _defined_between(node: exp.Expression, stop: exp.Expression | None, name: str | None = None) -> bool:
    """Whether a WITH enclosing `node` (below `stop`; up to the root when None; not `node`
    itself, a WITH) defines `name` (node's own name by default): that item, not the catalog,
    is what the name means."""
    name = name if name is not None else node.name
    start, node = node, node.parent
    while node is not None and node is not stop:
        if isinstance(node, (exp.Select, exp.Union, exp.Except, exp.Intersect)):
            inner = node.args.get("with_") or node.args.get("with")
            if inner is not None and inner is not start and any(c.alias == name for c in inner.expressions):
                return True
        node = node.parent
    return False


def _output_alias_references(selects: list[exp.Select]) -> list[exp.Column]:
    """The bare column references of a SELECT's list and WHERE that name one of its output
    columns (`SELECT a AS x, x + 1`, `... WHERE x > 0`): PostgreSQL binds them to the FROM
    items only, where DuckDB (and sqlglot's qualification) would fall back to the output."""
    refs = []
    for select in selects:
        aliases = {e.alias for e in select.expressions if isinstance(e, exp.Alias)}
        if not aliases:
            continue
        where = select.args.get("where")
        for part in [*select.expressions, *([where] if where is not None else [])]:
            for col in part.find_all(exp.Column):
                if not col.table and col.name in aliases and col.find_ancestor(exp.Select) is select:
                    refs.append(col)
    return refs


def _no_output_alias_references(tree: exp.Expression, refs: list[exp.Column]) -> None:
    """A reference of `refs` that qualification replaced by its output column's expression
    (none of the FROM items has such a column) is PostgreSQL's unknown column."""
    if not refs:
        return
    kept = {id(c) for c in tree.find_all(exp.Column)}
    for col in refs:
        if id(col) not in kept:
            raise BindError(f'column "{col.name}" does not exist')


def _unique_from_names(selects: list[exp.Select]) -> None:
    """Each FROM item of a SELECT is named once: `FROM t x, u x` and `FROM t, t` are refused.
    Tables of one name from two schemas (`FROM s1.t, s2.t`) are told apart by their schema, as
    RisingWave does (`s1.t.c`; a bare `t.c` names neither: `_schema_qualified_columns`)."""
    for select in selects:
        from_ = select.args.get("from_") or select.args.get("from")
        items = ([from_.this] if from_ is not None else []) + [j.this for j in select.args.get("joins") or []]
        seen: set[str] = set()
        for item in items:
            if not isinstance(item, (exp.Table, exp.Subquery)) or not item.alias_or_name:
                continue
            name = item.alias_or_name
            # (`s.t` is aliased by its qualified name for binding: that name tells it apart)
            if name in seen:
                raise BindError(f'table name "{name}" specified more than once')
            seen.add(name)


def _bind(tree: exp.Expression, catalog: Catalog, hidden: bool, session, qualify_columns: bool) -> BoundQuery:
    """Bind `tree` in place."""
    while isinstance(tree, exp.Subquery) and set(k for k, v in tree.args.items() if v) == {"this"}:
        tree = tree.this  # a parenthesized statement, `(VALUES ...)`: the query itself
    if not tree.meta.get(NORMALIZED):
        tree = normalize_identifiers(tree, dialect=RwDialect)
    tree = _pg_compat(tree)
    _cte_scopes(tree)
    _recursive_ctes(tree)
    _cte_column_aliases(tree)
    tree = expand(tree, catalog)
    # one walk for what the checks below need (renaming tables adds or removes no such node)
    found = nodes(tree, exp.CTE, exp.Column, exp.Table, exp.Select, exp.Union, exp.Except, exp.Intersect,
                  exp.Anonymous, exp.CurrentUser, exp.SessionUser, exp.Subquery, exp.CurrentSchemas)
    calls = [n for n in found if isinstance(n, exp.Anonymous)]
    answer_calls(calls, catalog, getattr(session, "store", None), getattr(session, "settings", None))
    for node in found:
        if isinstance(node, exp.CurrentSchemas):
            answer_current_schemas(node, catalog, getattr(session, "settings", None))
    _session_user(found, catalog, session)
    _schema_qualified_columns(found)
    _unique_from_names([n for n in found if isinstance(n, exp.Select)])
    ctes = {c.alias for c in found if isinstance(c, exp.CTE)}
    bound = BoundQuery(tree)
    named: set[str] = set()
    if not hidden:
        named = {c.name for c in found if isinstance(c, exp.Column)}
        bound.rw_timestamp = RW_TIMESTAMP in named
    rels: list[RelationCatalog] = []
    for t in [t for t in found if isinstance(t, exp.Table)]:
        if not isinstance(t.this, exp.Identifier):
            continue
        name = t.name
        db = t.text("db").lower()
        known_database(catalog, t)
        if db in SYSTEM_SCHEMAS or (not db and name not in ctes and catalog.get(name) is None
                                    and _is_system_name(name)):
            from rw_cli.sql.pg_catalog import system_table

            data = system_table(db or None, name, catalog, session)
            if data is None:
                shown = f"{db}.{name}" if db else name
                raise CatalogError(f'relation "{shown}" does not exist')
            reg = f"__sys_{(db or 'pg_catalog')}_{name}"
            bound.system[reg] = data
            _rename(t, reg)
            bound.schema[reg] = {f.name: sqlglot_type(_dt(f.type)) for f in data.schema}
            continue
        if name in ctes and not db and not t.meta.get("rw_catalog"):
            continue
        rel = catalog.get(catalog.qualified(name, db))
        if rel is None:
            raise CatalogError(f'relation "{name}" does not exist')
        reg = f"__rel_{rel.id}"
        as_of = _as_of(t)
        if as_of is not None:  # each time travel reads its own snapshot
            reg = f"__rel_{rel.id}_as_of_{len(bound.as_of)}"
            bound.as_of[reg] = as_of
        if rel not in rels:
            rels.append(rel)
        bound.relations[reg] = rel
        bound.schema[reg] = {c.name: sqlglot_type(c.type) for c in
                             (rel.columns if hidden else rel.visible_columns)}
        for c in rel.columns:
            if c.hidden and c.name in named and c.name not in bound.schema[reg]:
                bound.schema[reg][c.name] = sqlglot_type(c.type)
                bound.named_hidden |= {c.name}
        if bound.rw_timestamp:
            bound.schema[reg][RW_TIMESTAMP] = sqlglot_type(TIMESTAMPTZ)
        _rename(t, reg)
    for op in found:
        if isinstance(op, (exp.Union, exp.Except, exp.Intersect)):
            _check_set_operation_order(op)
    selects = [sel for sel in found if isinstance(sel, exp.Select)]
    for sel in selects:
        _check_star_except(sel, bound)
        _check_using(sel, bound)
        _alias_ordered_subqueries(sel)
    name_derived_columns(selects, tree)
    if qualify_columns:
        alias_refs = _output_alias_references(selects)
        tree = _qualify(tree, bound)
        _no_output_alias_references(tree, alias_refs)
        if any(session_window.is_session(w) for w in nodes(tree, exp.Window)):
            tree = session_window.rewrite_batch(tree)
    else:
        bound.qualified = False
        if any(session_window.is_session(w) for w in nodes(tree, exp.Window)):
            raise NotSupported("a session window in a query whose columns are unknown")
    # qualifying adds no set operation and no join: skip the walks that would find none
    if any(op.args.get("by_name") for op in found if isinstance(op, (exp.Union, exp.Except, exp.Intersect))):
        tree = _corresponding(tree)
    bound.tree = tree
    if bound.qualified and any(len(sel.args.get("joins") or ()) >= 2 for sel in selects):
        for sel in nodes(bound.tree, exp.Select):
            _check_join_scopes(sel)
    return bound


def _alias_ordered_subqueries(sel: exp.Select) -> None:
    """`SELECT (SELECT count(*) ...), a FROM t ORDER BY 1`: sqlglot's qualify names the
    scalar subquery `_col_0` on the subquery node itself, then fails to resolve the position
    (it wants an Alias node), and the whole query went unqualified (untyped: PostgreSQL's
    integer division, sum and avg types lost, and bound twice). The alias it would give is
    given first, as an Alias node; names and the generated SQL are the same."""
    order = sel.args.get("order")
    if order is None:
        return
    positions = {int(o.this.this) for o in order.expressions
                 if isinstance(o.this, exp.Literal) and o.this.is_int}
    for i, e in enumerate(sel.expressions):
        if i + 1 in positions and isinstance(e, exp.Subquery) and not e.args.get("alias"):
            alias = exp.Alias(alias=exp.to_identifier(f"_col_{i}"))
            e.replace(alias)
            alias.set("this", e)


def _check_set_operation_order(op: exp.Expression) -> None:
    """The ORDER BY of a UNION / INTERSECT / EXCEPT sorts by its result columns, named or
    numbered: an expression has no input to be computed from (PostgreSQL's error)."""
    order = op.args.get("order")
    for item in order.expressions if order is not None else ():
        key = item.this if isinstance(item, exp.Ordered) else item
        if isinstance(key, exp.Column) and not key.table:
            continue
        if isinstance(key, exp.Literal) and not key.is_string:
            continue
        raise BindError("invalid UNION/INTERSECT/EXCEPT ORDER BY clause",
                        hint="Only result column names can be used, not expressions or functions.")


def _check_join_scopes(sel: exp.Select) -> None:
    """`FROM a JOIN b ON ..., c JOIN d ON ...`: the comma separates FROM items, so the second
    ON sees only c and d (PostgreSQL's rule)."""
    from_ = sel.args.get("from_") or sel.args.get("from")
    joins = sel.args.get("joins") or []
    if from_ is None or len(joins) < 2:
        return
    own = {from_.this.alias_or_name} | {j.this.alias_or_name for j in joins}  # others are outer references
    visible = {from_.this.alias_or_name}
    for j in joins:
        comma = not any(j.args.get(k) for k in ("on", "using", "kind", "side", "method"))
        if comma:
            visible = set()
        visible.add(j.this.alias_or_name)
        on = j.args.get("on")
        if on is None:
            continue
        for col in on.find_all(exp.Column):
            if col.table in own and col.table not in visible and col.find_ancestor(exp.Select) is sel:
                raise BindError(f'invalid reference to FROM-clause entry for table "{col.table}"')


def _corresponding(tree: exp.Expression) -> exp.Expression:
    """`UNION [ALL] CORRESPONDING [BY (cols)]`: each side keeps the columns both sides name,
    in one order (a set operation by position over `SELECT cols FROM (side)`)."""
    ops = [n for n in tree.find_all(exp.Union, exp.Except, exp.Intersect, bfs=False) if n.args.get("by_name")]
    for q in reversed(ops):  # inner ones first: their output names are the outer ones' inputs
        sides = [q.this, q.expression]
        names = [s.named_selects for s in sides]
        if any("*" in ns for ns in names):
            raise BindError("CORRESPONDING over a query whose columns are unknown")
        pairs = corresponding(q, names[0], names[1])
        for key, side, ns, idx in (("this", sides[0], names[0], 0), ("expression", sides[1], names[1], 1)):
            cols = [exp.column(ns[p[idx]], quoted=True) for p in pairs]
            sub = exp.Subquery(this=side.unnest() if isinstance(side, exp.Subquery) else side,
                               alias=exp.TableAlias(this=exp.to_identifier(f"__corr_{idx}")))
            q.set(key, exp.select(*cols).from_(sub))
        for arg in ("by_name", "on", "kind", "side"):
            q.set(arg, None)
    return tree


def _source_columns(src: exp.Expression, bound: BoundQuery) -> list[str] | None:
    alias = src.args.get("alias")
    if alias is not None and alias.columns:
        return [c.name for c in alias.columns]
    if isinstance(src, exp.Table) and src.name in bound.schema:
        return list(bound.schema[src.name])
    return None


def _check_using(sel: exp.Select, bound: BoundQuery) -> None:
    """`JOIN ... USING (c)`: c must name one column of the left side, as in PostgreSQL."""
    from_ = sel.args.get("from_") or sel.args.get("from")
    joins = sel.args.get("joins") or []
    if from_ is None or not any(j.args.get("using") for j in joins):
        return
    left = [_source_columns(from_.this, bound)]
    merged: dict[str, int] = {}
    for j in joins:
        using = [u.name for u in j.args.get("using") or []]
        if using and all(cols is not None for cols in left):
            for name in using:
                count = sum(cols.count(name) for cols in left) - merged.get(name, 0)
                if count > 1:
                    raise BindError(f'common column name "{name}" appears more than once in left table')
        for name in using:
            merged[name] = merged.get(name, 0) + 1
        left.append(_source_columns(j.this, bound))


def _check_star_except(sel: exp.Select, bound: BoundQuery) -> None:
    """`SELECT * EXCEPT (cols)`: RisingWave's checks and messages."""
    for star in sel.expressions:
        if not isinstance(star, exp.Star):
            continue
        items = star.args.get("except_") or star.args.get("except") or []
        if not items:
            continue
        names = []
        for it in items:
            if not isinstance(it, exp.Column):
                raise BindError("Only support column name in except list")
            names.append((it.table, it.name))
        if len(set(names)) != len(names):
            raise BindError("Duplicate entry in except list")
        columns: list[tuple[str, str]] = []  # (source alias, column)
        from_ = sel.args.get("from_") or sel.args.get("from")
        sources = ([from_.this] if from_ is not None else []) + [j.this for j in sel.args.get("joins") or []]
        for src in sources:
            alias = src.args.get("alias")
            if alias is not None and alias.columns:
                columns += [(src.alias_or_name, c.name) for c in alias.columns]
            elif isinstance(src, exp.Table) and src.name in bound.schema:
                columns += [(src.alias_or_name, c) for c in bound.schema[src.name]]
            else:
                return  # a source whose columns we do not know here: DuckDB checks
        for table, n in names:
            count = sum(1 for t, c in columns if c == n and (not table or t == table))
            if count == 0:
                raise BindError(f"Item not found: Invalid column: {n}")
            if count > 1:
                raise BindError(f"Ambiguous column name: {n}")


_OPERATORS = {"~": exp.RegexpLike, "=": exp.EQ, "<>": exp.NEQ, "!=": exp.NEQ, "<": exp.LT, "<=": exp.LTE,
              ">": exp.GT, ">=": exp.GTE, "~~": exp.Like, "~~*": exp.ILike}


def _expand_array_rows(call: exp.Anonymous) -> exp.Expression:
    """`_pg_expandarray(a)` in a select list (what JDBC drivers send for a primary key's
    columns): a set of rows (x, n), one per element x of `a` at position n, as the unnest of
    an array of such rows; in FROM it is a subquery (rw_cli.sql.expand)."""
    from rw_cli.sql.dialect import parse_statement

    if len(call.expressions) != 1:
        raise BindError(f"_pg_expandarray expects 1 argument, got {len(call.expressions)}")
    arr = call.expressions[0].sql(dialect="postgres")
    rows = parse_statement(
        f"SELECT unnest(array(SELECT __ea_row FROM (SELECT ({arr})[__ea_n] AS x, __ea_n AS n "
        f"FROM generate_series(1, array_length({arr}, 1)) AS __ea_g(__ea_n)) AS __ea_row "
        f"ORDER BY __ea_row.n))").expressions[0]
    rows.meta[WRITTEN_NAME] = "_pg_expandarray"
    return rows


def _pg_compat(tree: exp.Expression) -> exp.Expression:
    """What psql and drivers send: `pg_catalog.f(...)`, `OPERATOR(pg_catalog.~)`,
    `COLLATE pg_catalog.default`."""
    def fix(node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.Dot) and isinstance(node.this, exp.Identifier) \
                and node.this.name in ("pg_catalog", "information_schema") and isinstance(node.expression, exp.Func):
            node = node.expression
        if isinstance(node, exp.Table) and not isinstance(node.this, exp.Identifier) \
                and node.text("db").lower() == "pg_catalog":
            node.set("db", None)  # FROM pg_catalog.unnest(...): the function itself
        if isinstance(node, exp.Operator):
            op = str(node.args.get("operator") or "").split(".")[-1].strip()
            cls = _OPERATORS.get(op)
            if cls is not None:
                return cls(this=node.this, expression=node.expression)
        if isinstance(node, exp.Collate):
            coll = node.expression
            if isinstance(coll, exp.Column) and coll.name == "default":
                return node.this
        if isinstance(node, exp.Anonymous) and not node.expressions and node.name.lower() in _SESSION_FUNCTIONS:
            return _SESSION_FUNCTIONS[node.name.lower()]()  # `pg_catalog.version()` is version()
        if isinstance(node, exp.Anonymous) and node.name.lower() in ("to_regtype", "to_regclass") \
                and len(node.expressions) == 1:  # NULL for a name that is not there, as a cast would fail
            return _object_identifier(node.name.lower()[3:], node.expressions[0]) or node
        if isinstance(node, exp.Cast):
            _unqualify_type(node)
            if (cast := _object_identifier_cast(node)) is not None:
                return cast
        if isinstance(node, exp.Anonymous) and node.name.lower() == "_pg_expandarray" \
                and not isinstance(node.parent, exp.Table):
            return _expand_array_rows(node)
        return node
    def walk(node: exp.Expression) -> exp.Expression:  # bottom-up: replaced nodes' children too
        if isinstance(node, exp.Anonymous):
            name_object_arguments(node)
        for child in list(node.iter_expressions()):
            new = walk(child)
            if new is not child:
                child.replace(new)
        return fix(node)
    return walk(tree)


_SESSION_FUNCTIONS = {"version": exp.CurrentVersion, "current_schema": exp.CurrentSchema,
                      "current_database": exp.CurrentDatabase, "current_user": exp.CurrentUser,
                      "session_user": exp.SessionUser}


def _unqualify_type(node: exp.Cast) -> None:
    """`x::pg_catalog.text` is `x::text` (psql writes its casts so)."""
    to = node.args.get("to")
    kind = to.args.get("kind") if isinstance(to, exp.DataType) else None
    if isinstance(kind, exp.Dot) and isinstance(kind.this, exp.Identifier) and kind.this.name == "pg_catalog":
        name = kind.expression.name
        try:
            node.set("to", exp.DataType.build(name, dialect="postgres"))
        except sqlglot.errors.ParseError:
            node.set("to", exp.DataType.build(name, dialect="postgres", udt=True))


def _object_identifier_cast(node: exp.Cast) -> exp.Expression | None:
    """`x::regclass` and `x::regtype`, as drivers and psql write them: a name is looked up
    in pg_class / pg_type (its OID), an OID stays an integer, and an OID cast to regtype
    reads as the type's name. None for any other cast."""
    to = node.args.get("to")
    return _object_identifier((to.sql() if to is not None else "").lower().rsplit(".", 1)[-1], node.this)


def _object_identifier(kind: str, value: exp.Expression) -> exp.Expression | None:
    if kind not in ("regclass", "regtype", "regproc", "regnamespace"):
        return None
    while isinstance(value, exp.Paren) or (isinstance(value, exp.Cast) and isinstance(value.this, exp.Literal)
                                           and value.this.is_string and value.to.is_type(*exp.DataType.TEXT_TYPES)):
        value = value.this  # a bound parameter: ('name') or ('name'::text)
    if isinstance(value, exp.Literal) and value.is_string and kind == "regproc":
        # a function by its name, as the regproc columns of the catalogs hold it
        return exp.Literal.string(value.this.rsplit(".", 1)[-1].strip('"'))
    if isinstance(value, exp.Literal) and value.is_string:
        name = value.this.rsplit(".", 1)[-1].strip('"')
        table, column = {"regclass": ("pg_class", "relname"), "regtype": ("pg_type", "typname"),
                         "regnamespace": ("pg_namespace", "nspname"), "regproc": ("pg_proc", "proname")}[kind]
        return exp.Subquery(this=sqlglot.parse_one(
            f"SELECT oid FROM pg_catalog.{table} WHERE {column} = {exp.Literal.string(name).sql()} LIMIT 1",
            read="postgres"))
    if kind == "regtype":
        return exp.Anonymous(this="pg_format_type", expressions=[value, exp.Literal.number(-1)])
    return exp.Cast(this=value, to=exp.DataType.build("int"))


def _dt(t: pa.DataType):
    from rw_cli.common.types import DataType

    return DataType.from_arrow(t)


def _session_user(found: list, catalog: Catalog, session) -> None:
    """current_user and session_user: the user the session acts as (SET SESSION AUTHORIZATION)."""
    calls = [n for n in found if isinstance(n, (exp.CurrentUser, exp.SessionUser)) and not n.args.get("this")]
    if not calls:
        return
    settings = getattr(session, "settings", None)
    user = catalog.access.acting_user(settings.get("session_authorization") if settings is not None else None)
    for call in calls:
        value = exp.Literal.string(user)
        if isinstance(call.parent, exp.Select) and call.arg_key == "expressions":
            # a select item keeps PostgreSQL's name for it: current_user, not ?column?
            value = exp.alias_(value, "current_user" if isinstance(call, exp.CurrentUser) else "session_user")
            value.meta[AS_WRITTEN] = True
        call.replace(value)


def _schema_qualified_columns(found: list[exp.Expression]) -> None:
    """`schema.table.column` names (expand.schema_qualified_columns), over the nodes of the
    one walk that binding makes."""
    schema_qualified_columns(found)


_INTERVAL_UNITS = frozenset("year years month months week weeks day days hour hours minute minutes "
                            "second seconds".split())


def _as_of(t: exp.Table) -> exp.Expression | None:
    """`t FOR SYSTEM_TIME AS OF expr`: expr, taken off the table (None without one).
    RisingWave reads `now() - '5' second` as an interval of 5 seconds: sqlglot leaves the
    unit as the table's alias, which goes back into the expression here."""
    version = t.args.get("version")
    if version is None:
        return None
    t.set("version", None)
    expr = version.expression
    alias = t.args.get("alias")
    unit = alias.name.lower() if alias is not None and not alias.columns else ""
    if unit in _INTERVAL_UNITS and isinstance(expr, (exp.Sub, exp.Add)) \
            and isinstance(expr.expression, exp.Literal) and expr.expression.is_string:
        expr = expr.copy()
        expr.set("expression", exp.Interval(this=expr.expression.copy(), unit=exp.Var(this=unit.upper())))
        t.set("alias", None)
    return expr


def _rename(t: exp.Table, reg: str) -> None:
    alias = t.alias_or_name
    t.set("this", exp.to_identifier(reg))
    t.set("db", None)
    t.set("catalog", None)
    old = t.args.get("alias")
    if old is not None and old.columns:
        old.set("this", exp.to_identifier(alias))
    else:
        t.set("alias", exp.TableAlias(this=exp.to_identifier(alias)))


_SYSTEM_NAMES = {"pg_class", "pg_namespace", "pg_attribute", "pg_type", "pg_index", "pg_tables",
                 "pg_views", "pg_matviews", "pg_settings", "pg_database", "pg_roles", "pg_user",
                 "pg_description", "pg_am", "pg_proc", "pg_constraint", "pg_attrdef",
                 "pg_inherits", "pg_depend", "pg_collation", "pg_indexes", "pg_enum",
                 "pg_tablespace", "pg_stat_activity", "pg_shdescription", "pg_keywords",
                 "pg_partitioned_table", "pg_policy", "pg_rewrite", "pg_trigger", "pg_extension",
                 "pg_range", "pg_sequence", "pg_statistic_ext", "pg_publication", "pg_cast",
                 "pg_conversion", "pg_language", "pg_opclass", "pg_operator", "pg_event_trigger",
                 "pg_foreign_table", "pg_foreign_server", "pg_foreign_data_wrapper",
                 "pg_user_mapping", "pg_auth_members", "pg_shadow", "pg_settings", "pg_locks",
                 "pg_largeobject_metadata", "pg_subscription", "pg_db_role_setting", "pg_default_acl",
                 "pg_ts_config", "pg_ts_parser", "pg_ts_dict", "pg_ts_template",
                 "pg_aggregate", "pg_stat_user_tables"}


def _is_system_name(name: str) -> bool:
    from rw_cli.sql.pg_catalog import is_pg_catalog_name, is_rw_catalog_name

    return name in _SYSTEM_NAMES or is_pg_catalog_name(name) or is_rw_catalog_name(name)


def referenced_relations(tree: exp.Expression, catalog: Catalog) -> list[RelationCatalog]:
    """Catalog relations (tables, MVs, views) a query names directly."""
    ctes = {c.alias for c in tree.find_all(exp.CTE)}
    out: list[RelationCatalog] = []
    for t in tree.find_all(exp.Table):
        if isinstance(t.this, exp.Identifier):
            names = [(t.name, t.text("db"))]
        elif isinstance(t.this, exp.Anonymous):  # tumble(t, ...): its relation
            names = [(a.name, a.text("table")) for a in t.this.find_all(exp.Column)][:1]
        else:
            names = []
        for n, db in names:
            try:
                rel = catalog.get(catalog.qualified(n, db)) if db or n not in ctes else None
            except CatalogError:
                rel = None
            if rel is not None and rel not in out:
                out.append(rel)
    return out


# -- views and table functions ------------------------------------------------------------------

_PLAIN_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_$]*")


def quote_unsafe(tree: exp.Expression) -> exp.Expression:
    """Quote identifiers that are not plain names (`?column?` of an MV expanded from `*`)."""
    for ident in nodes(tree, exp.Identifier):
        if not ident.quoted and not _PLAIN_NAME.fullmatch(ident.name or "_"):
            ident.set("quoted", True)
    return tree


def _qualify(tree: exp.Expression, bound: BoundQuery) -> exp.Expression:
    """`tree` qualified in place, or _Unqualified (with sqlglot's message, if it gave one)."""
    try:
        dialect = hidden_columns_dialect(bound.named_hidden) if bound.named_hidden or bound.rw_timestamp \
            else RwDialect
        return quote_unsafe(qualify(tree, schema=mapping_schema(bound.schema, dialect), dialect=dialect,
                                    quote_identifiers=False,
                                    identify=False, validate_qualify_columns=True))
    except OptimizeError as e:
        raise _Unqualified(str(e).split(". Line:")[0]) from None
    except Exception:
        raise _Unqualified("") from None


def _has_opaque_source(tree: exp.Expression) -> bool:
    """Sources whose columns sqlglot cannot know (table functions, unnest, ...)."""
    for t in nodes(tree, exp.Table):
        if not isinstance(t.this, exp.Identifier):
            return True
    return bool(nodes(tree, exp.Unnest))
