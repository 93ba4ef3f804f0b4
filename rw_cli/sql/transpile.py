"""PostgreSQL semantics on DuckDB: the one place where their differences are fixed.

Both batch queries and stream executors' expressions are generated here, so an expression
means the same thing in a materialized view and in a SELECT.
"""
from __future__ import annotations

from sqlglot import exp
from sqlglot.optimizer.annotate_types import annotate_types
from sqlglot.schema import MappingSchema

from rw_cli.sql.duckdb_dialect import duckdb_dialect
from rw_cli.common.types import DataType
from rw_cli.sql.dialect import RwDialect, series_type
from rw_cli.sql.non_strict import non_strict
from rw_cli.sql import numeric_sql
from rw_cli.sql.variance import expand_variances
from rw_cli.sql.walk import nodes

_INTEGER_TYPES = {exp.DataType.Type.SMALLINT, exp.DataType.Type.INT, exp.DataType.Type.BIGINT,
                  exp.DataType.Type.TINYINT}
_SMALL_INTS = {exp.DataType.Type.SMALLINT, exp.DataType.Type.INT, exp.DataType.Type.TINYINT}


def _annotate_literal(self, e: exp.Literal) -> exp.Literal:
    """PostgreSQL's literal types: integers are int4, int8 or numeric by size; `1.5` and `1e3`
    are numeric (sqlglot would say DOUBLE)."""
    if e.is_string:
        self._set_type(e, exp.DataType.Type.VARCHAR)
    elif e.is_int:
        v = int(e.this)
        t = exp.DataType.Type.INT if -2**31 <= v < 2**31 else (
            exp.DataType.Type.BIGINT if -2**63 <= v < 2**63 else exp.DataType.Type.DECIMAL)
        self._set_type(e, t)
    else:
        self._set_type(e, exp.DataType.Type.DECIMAL)
    e.meta["nonnull"] = True
    return e


_METADATA = {**RwDialect.EXPRESSION_METADATA, exp.Literal: {"annotator": _annotate_literal}}


def sqlglot_type(t: DataType) -> str:
    """A type name sqlglot's schema understands."""
    if t.name == "numeric":
        return "DECIMAL"  # (DuckDB's is a struct: rw_cli.sql.numeric_sql lowers what sqlglot types DECIMAL)
    if t.is_list and t.inner[0].name == "numeric":
        return "DECIMAL[]"
    return t.duckdb()


_CACHE_LIMIT = 4096
_SCHEMAS: dict[tuple, MappingSchema] = {}


def mapping_schema(schema: dict, dialect=RwDialect) -> MappingSchema:
    """sqlglot's schema object for `{relation: {column: type}}` (memoized: building one
    normalizes every name, and queries over the same relations recur; sqlglot only reads it)."""
    key = (dialect, tuple((name, tuple(columns.items())) for name, columns in schema.items()))
    hit = _SCHEMAS.get(key)
    if hit is None:
        if len(_SCHEMAS) >= _CACHE_LIMIT:
            _SCHEMAS.clear()
        hit = _SCHEMAS[key] = MappingSchema(schema, dialect=dialect)
    return hit


_CACHE: dict[tuple, str] = {}
_TREES: dict[tuple, exp.Expression] = {}
_SQL: dict[tuple, str] = {}  # expr_to_duckdb's answers, by the same key


def to_duckdb(tree: exp.Expression, schema: dict | None = None, owned: bool = False, strict: bool = True) -> str:
    """DuckDB SQL for a (qualified) PostgreSQL expression or query (memoized: type
    annotation costs milliseconds, and the same queries and expressions recur).

    `owned=True` hands the tree over (it is rewritten in place and left changed): a batch
    query bound for this one statement, which is neither copied (a copy of a whole tree costs
    as much as its transpiling) nor memoized (its key, the tree's repr, costs milliseconds
    and distinct queries rarely recur). `strict=False`: a value an expression fails on gives
    NULL (rw_cli.sql.non_strict), as RisingWave's batch_expr_strict_mode = false does."""
    if owned:
        out = _to_duckdb(tree, schema, copy=False)
        return (out if strict else non_strict(out)).sql(dialect=duckdb_dialect(), copy=False)
    # repr, not tree.sql(): the generic SQL of some nodes is lossy (E'...' strings all print
    # alike), and two different trees must never share an entry
    key = (repr(tree), repr(schema), strict)
    hit = _CACHE.get(key)
    if hit is None:
        out = _to_duckdb(tree, schema)
        hit = (out if strict else non_strict(out)).sql(dialect=duckdb_dialect(), copy=False)
        if len(_CACHE) >= _CACHE_LIMIT:
            _CACHE.clear()
        _CACHE[key] = hit
    return hit


def _to_duckdb(tree: exp.Expression, schema: dict | None, copy: bool = True) -> exp.Expression:
    """The tree rewritten to mean in DuckDB what it means in PostgreSQL (in place when
    `copy=False`)."""
    if copy:
        tree = tree.copy()
    _type_values_literals(tree)
    if schema is not None:
        _typed_series_sources(tree)
        try:
            tree = annotate_types(tree, schema=mapping_schema(schema), dialect=RwDialect,
                                  expression_metadata=_METADATA)
        except Exception:  # annotation is best effort; fixes that need types are skipped
            pass
        _type_series_columns(tree)
        tree = expand_variances(tree)
    return numeric_sql.finish(_transform_post(tree, _fix))


def _type_values_literals(tree: exp.Expression) -> None:
    """In `VALUES ('1 month'::interval, 1), ('3 days', 2)` the untyped string literals of a
    column take the type the other rows give it, as in PostgreSQL (sqlglot would call the
    column VARCHAR)."""
    for values in nodes(tree, exp.Values):
        rows = [r for r in values.expressions if isinstance(r, exp.Tuple)]
        if len(rows) < 2 or len({len(r.expressions) for r in rows}) != 1:
            continue
        for i in range(len(rows[0].expressions)):
            cells = [r.expressions[i] for r in rows]
            types = {c.to.sql() for c in cells if isinstance(c, exp.Cast)}
            if not types and any(_is_number_literal(c) and not c.is_int for c in cells):
                to = exp.DataType.build("DECIMAL")  # ('1.5'), ('nan'): text cells of a numeric column
            elif len(types) != 1:
                continue
            else:
                to = next(c.to for c in cells if isinstance(c, exp.Cast))
            if to.this in (exp.DataType.Type.VARCHAR, exp.DataType.Type.TEXT, exp.DataType.Type.CHAR):
                continue
            for c in cells:
                if isinstance(c, exp.Literal) and c.is_string:
                    c.replace(exp.Cast(this=c.copy(), to=to.copy()))


def _is_number_literal(node: exp.Expression) -> bool:
    lit = node.this if isinstance(node, exp.Neg) else node
    return isinstance(lit, exp.Literal) and not lit.is_string


def _typed_series_sources(tree: exp.Expression) -> None:
    """`FROM generate_series(a, b) AS s(i)` (or range) over integer constants becomes `FROM
    (SELECT CAST(i AS integer) AS i FROM generate_series(a, b) AS s(i)) AS s`: its rows are of
    the type PostgreSQL gives them (DuckDB's are bigints) and that type reaches every query
    over them — `i / 2` in a derived table over the series divides as integers, and
    pg_typeof(i) is integer. Series over columns (LATERAL), WITH ORDINALITY or without a
    column alias stay as they are (`_type_series_columns` types their columns where the
    series is)."""
    for t in nodes(tree, exp.Table):
        gen = t.this
        if not isinstance(gen, (exp.GenerateSeries, exp.ExplodingGenerateSeries, exp.Anonymous)) \
                or t.args.get("ordinality") or gen.find(exp.Column, exp.Subquery, exp.Select):
            continue
        try:
            kind = series_type(annotate_types(gen.copy(), dialect=RwDialect, expression_metadata=_METADATA))
        except Exception:  # noqa: BLE001 - best effort, as the annotation below
            kind = None
        if kind is None or kind.this not in (exp.DataType.Type.INT, exp.DataType.Type.BIGINT):
            continue
        alias = t.args.get("alias")
        if alias is None or not alias.this or len(alias.columns) != 1:
            continue  # (its column's name is the binder's, after the function or the alias)
        col = alias.columns[0].name
        inner = exp.select(exp.Cast(this=exp.column(col, quoted=True), to=kind).as_(col, quoted=True)).from_(t.copy())
        t.replace(exp.Subquery(this=inner, alias=exp.TableAlias(this=exp.to_identifier(alias.this.name, quoted=True))))


def _type_series_columns(tree: exp.Expression) -> None:
    """Columns of `generate_series(a, b) AS s(i)` and `range(a, b) AS s(i)` over integers are
    integers, over numeric numeric (`series_type`: sqlglot cannot type a table function's
    columns), so `i / 10` divides as integers, as in PostgreSQL: the columns of the query
    whose FROM has the series (an outer query may name another relation `s`)."""
    series: dict[tuple[int, str], tuple[set[str], exp.DataType]] = {}
    for t in nodes(tree, exp.Table):
        gen = t.this
        kind = series_type(gen) or _literal_series_type(gen)
        alias = t.args.get("alias")
        if kind is not None and alias is not None and alias.this:
            scope = id(t.find_ancestor(exp.Select))
            # (without a column alias the column is named after the alias or the function)
            names = {c.name for c in alias.columns} or {alias.this.name, _function_name(gen)}
            series[(scope, alias.this.name)] = (names, kind)
    if not series:
        return
    for col in nodes(tree, exp.Column):
        names, kind = series.get((id(col.find_ancestor(exp.Select)), col.table), (None, None))
        if names and col.name in names and (col.type is None or col.type.this == exp.DataType.Type.UNKNOWN):
            col.type = kind.copy()


def _function_name(gen: exp.Expression) -> str:
    return gen.this.lower() if isinstance(gen, exp.Anonymous) and isinstance(gen.this, str) else "generate_series"


def _literal_series_type(gen: exp.Expression) -> exp.DataType | None:
    """generate_series over integer literals where the annotation did not run: integer."""
    if isinstance(gen, (exp.GenerateSeries, exp.ExplodingGenerateSeries)) and all(
            _is_number_literal(a) and (a.this if isinstance(a, exp.Neg) else a).is_int
            for a in (gen.args.get("start"), gen.args.get("end")) if a is not None):
        return exp.DataType.build("INT")
    return None


_SOURCE_ARGS = frozenset(("with_", "with", "from_", "from", "joins"))


def _transform_post(node: exp.Expression, fn) -> exp.Expression:
    """Apply `fn` bottom-up (children first), so a rewritten node's arguments are rewritten
    too; a replacement keeps the annotated type of the node it replaces. Identifiers (a
    quarter of a qualified tree's nodes) are names, which no rule rewrites: skipped. A
    query's sources (WITH, FROM, joins) go first, so that a column of one is read as what
    its rewritten query gives (rw_cli.sql.numeric_sql)."""
    children = list(node.iter_expressions())
    if isinstance(node, exp.Select):
        first = [c for c in children if c.arg_key in _SOURCE_ARGS]
        children = first + [c for c in children if c.arg_key not in _SOURCE_ARGS]
    for child in children:
        if isinstance(child, exp.Identifier):
            continue
        new = _transform_post(child, fn)
        if new is not child:
            child.replace(new)
    out = fn(node)
    if out is None:
        return node
    if out is not node and getattr(out, "type", None) is None and getattr(node, "type", None) is not None \
            and not isinstance(out, exp.Cast):
        out.type = node.type
    return out


def expr_to_duckdb(tree: exp.Expression, input_types: list[DataType]) -> str:
    """DuckDB SQL for an expression over positional input columns `_0.._n`."""
    key = _tree_key(tree, input_types)
    sql = _SQL.get(key)
    if sql is None:
        sql = _duckdb_tree(tree, input_types, key).sql(dialect=duckdb_dialect())
        if len(_SQL) >= _CACHE_LIMIT:
            _SQL.clear()
        _SQL[key] = sql
    return sql


def expr_to_duckdb_tree(tree: exp.Expression, input_types: list[DataType]) -> exp.Expression:
    """The DuckDB tree of an expression over positional input columns `_0.._n` (a fresh copy:
    the caller may change it)."""
    return _duckdb_tree(tree, input_types, _tree_key(tree, input_types)).copy()


def _tree_key(tree: exp.Expression, input_types: list[DataType]) -> tuple:
    return repr(tree), tuple(input_types)


def _duckdb_tree(tree: exp.Expression, input_types: list[DataType], key: tuple) -> exp.Expression:
    """The cached DuckDB tree (not to be changed)."""
    hit = _TREES.get(key)
    if hit is not None:
        return hit
    schema = {"__in": {f"_{i}": sqlglot_type(t) for i, t in enumerate(input_types)}}
    qualified = tree.copy()
    for col in qualified.find_all(exp.Column):
        col.set("table", exp.to_identifier("__in"))
    hit = _to_duckdb(exp.select(qualified).from_("__in"), schema, copy=False).expressions[0]
    if isinstance(hit, exp.Alias) and not isinstance(tree, exp.Alias):
        hit = hit.this
    hit.pop()
    for col in hit.find_all(exp.Column):
        col.set("table", None)
    if len(_TREES) >= _CACHE_LIMIT:
        _TREES.clear()
    _TREES[key] = hit
    return hit


def _is_int(node: exp.Expression) -> bool:
    t = getattr(node, "type", None)
    return t is not None and t.this in _INTEGER_TYPES


def _pg_agg_type(agg: exp.Expression) -> str | None:
    """PostgreSQL's result type where DuckDB's differs: sum(int) is bigint (DuckDB: int128);
    sums and averages into numeric are rw_cli.sql.numeric_sql's."""
    t = getattr(agg.this, "type", None)
    if t is None:
        return None
    if isinstance(agg, exp.Sum) and t.this in _SMALL_INTS:
        return "BIGINT"
    return None


def _fix(node: exp.Expression) -> exp.Expression:
    from rw_cli.sql.functions import rewrite_function

    new = rewrite_function(node)
    if new is not None:
        return new
    if isinstance(node, exp.Dot) and isinstance(node.expression, exp.Star) and isinstance(node.parent, exp.Select) \
            and node.arg_key == "expressions":
        # `(expr).*` of a composite that is not a column (a function's struct): its fields as
        # columns, which DuckDB's unnest of a struct gives (a column's are expanded by name)
        inner = node.this.this if isinstance(node.this, exp.Paren) else node.this
        return exp.Unnest(expressions=[inner.copy()])
    if isinstance(node, exp.In) and not node.expressions \
            and not any(node.args.get(k) for k in ("query", "unnest", "field")):
        # `x IN ()` (SQLite's empty list, accepted here): membership in an empty set is false
        # even for NULL, as `x = ANY('{}')` is in PostgreSQL; DuckDB would answer NULL.
        return exp.false()
    if isinstance(node, exp.Div) and _is_int(node.this) and _is_int(node.expression):
        return exp.IntDiv(this=node.this, expression=node.expression)
    if isinstance(node, (exp.Window, exp.Filter)) and isinstance(node.this, (exp.Sum, exp.Avg)) \
            and not isinstance(node.parent, (exp.Cast, exp.Window)):
        target = _pg_agg_type(node.this)
        if target is not None:
            return exp.Cast(this=node.copy(), to=exp.DataType.build(target))
    if isinstance(node, (exp.Sum, exp.Avg)) and not isinstance(node.parent, (exp.Cast, exp.Window, exp.Filter)):
        target = _pg_agg_type(node)
        if target is not None:
            return exp.Cast(this=node.copy(), to=exp.DataType.build(target))
    if isinstance(node, exp.Cast) and node.to.this in (exp.DataType.Type.VARCHAR, exp.DataType.Type.TEXT):
        t = getattr(node.this, "type", None)
        if t is not None and t.this == exp.DataType.Type.DOUBLE:
            return exp.Anonymous(this="pg_float8_out", expressions=[node.this])
        if t is not None and t.this == exp.DataType.Type.FLOAT:
            return exp.Anonymous(this="pg_float4_out", expressions=[node.this])
    return node
