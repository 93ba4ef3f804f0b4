"""numeric in DuckDB SQL: every operation on a numeric value as a call of our UDFs.

numeric is a struct in DuckDB (rw_cli.common.numeric): DuckDB compares, sorts, groups and
joins it natively, by value, but computes nothing with it. So every node of a type-annotated
PostgreSQL tree that computes with numerics is rewritten here into calls of
rw_cli.engine.numeric_udfs (`rw_num_*`): arithmetic, casts into and out of numeric, sum and
avg, the math functions, and the operands of a comparison or a CASE that are other numbers
(an integer compared with a numeric becomes a numeric first). A replacement keeps the
annotation DECIMAL (sqlglot's name for numeric), so the rules of its parent see a numeric.

`lower(node)` is called for each node, children first, before the other rewrites of
rw_cli.sql.functions; `finish(tree)` lowers what those rewrites create afterwards (a cast of a
numeric to DOUBLE around an argument, say).
"""
from __future__ import annotations

from sqlglot import exp

from rw_cli.common.numeric import NUMERIC_DUCKDB
from rw_cli.errors import BindError

T = exp.DataType.Type
_INTS = {T.TINYINT, T.SMALLINT, T.INT, T.BIGINT}
_FLOATS = {T.FLOAT, T.DOUBLE}
_TEXT = {T.VARCHAR, T.TEXT, T.CHAR, T.NCHAR, T.NVARCHAR}
_COMPARISONS = (exp.EQ, exp.NEQ, exp.LT, exp.LTE, exp.GT, exp.GTE, exp.NullSafeEQ, exp.NullSafeNEQ)
_ARITHMETIC = {exp.Add: "rw_num_add", exp.Sub: "rw_num_sub", exp.Mul: "rw_num_mul", exp.Div: "rw_num_div",
               exp.Mod: "rw_num_mod"}
_TO_INT = {T.TINYINT: "rw_num_to_int2", T.SMALLINT: "rw_num_to_int2", T.INT: "rw_num_to_int4",
           T.BIGINT: "rw_num_to_int8"}
# aggregates DuckDB computes on numbers only: a numeric argument is a double precision
_DOUBLE_AGGREGATES = (exp.Stddev, exp.StddevPop, exp.StddevSamp, exp.Variance, exp.VariancePop, exp.Corr,
                      exp.CovarPop, exp.CovarSamp, exp.Median)
_DOUBLE_MATH = (exp.Sqrt, exp.Cbrt, exp.Exp, exp.Ln, exp.Log, exp.Pow)
# what RisingWave computes in numeric for a numeric argument (the rest in double precision)
_NUMERIC_MATH = {exp.Sqrt: "rw_num_sqrt", exp.Exp: "rw_num_exp", exp.Ln: "rw_num_ln", exp.Log: "rw_num_log10"}


def struct_type() -> exp.DataType:
    return exp.DataType.build(NUMERIC_DUCKDB, dialect="duckdb")


def _type(node: exp.Expression):
    t = getattr(node, "type", None)
    return t.this if t is not None else None


def is_numeric(node: exp.Expression) -> bool:
    return _type(node) == T.DECIMAL


def _number_literal(node: exp.Expression) -> bool:
    lit = node.this if isinstance(node, exp.Neg) else node
    return isinstance(lit, exp.Literal) and not lit.is_string


_PASS_THROUGH = (exp.Min, exp.Max, exp.First, exp.Last, exp.AnyValue, exp.Lag, exp.Lead, exp.FirstValue,
                 exp.LastValue, exp.NthValue, exp.Window, exp.Filter, exp.Paren, exp.Try, exp.Mode, exp.ArgMax,
                 exp.ArgMin)


def yields_struct(node: exp.Expression | None) -> bool:
    """Whether DuckDB gets a numeric struct for `node` (what it computes, not what sqlglot
    annotated before the rewrites: an avg annotated double is one of our calls now, a
    function's result annotated numeric may be DuckDB's double)."""
    if node is None:
        return False
    if isinstance(node, exp.Anonymous):
        return node.name.lower().startswith("rw_num_") and is_numeric(node)
    if isinstance(node, exp.Cast):
        return is_numeric(node) and node.to.this == T.STRUCT
    if isinstance(node, _PASS_THROUGH):
        return yields_struct(node.this)
    if isinstance(node, exp.Nullif):
        return yields_struct(node.this)
    if isinstance(node, (exp.Case, exp.If, exp.Coalesce, exp.Greatest, exp.Least)):
        if isinstance(node, exp.Case):  # (its operand, CASE x WHEN ..., is no result)
            branches = [i.args.get("true") for i in node.args.get("ifs") or []] + [node.args.get("default")]
        elif isinstance(node, exp.If):
            branches = [node.args.get("true"), node.args.get("false")]
        else:
            branches = [node.this, *node.expressions]
        return any(yields_struct(b) for b in branches if b is not None and not isinstance(b, exp.Null))
    if isinstance(node, exp.Subquery):
        select = node.this
        return isinstance(select, exp.Select) and len(select.selects) == 1 and yields_struct(select.selects[0])
    if isinstance(node, exp.Alias):
        return yields_struct(node.this)
    if isinstance(node, exp.WithinGroup):
        return isinstance(node.this, exp.PercentileDisc) and is_numeric(node)
    if isinstance(node, exp.Column) and _type(node) in (None, T.UNKNOWN):
        projection = _source_projection(node)
        return projection is not None and yields_struct(projection)
    if isinstance(node, (exp.Column, exp.Dot, exp.Bracket, exp.Unnest, exp.Explode)):
        return is_numeric(node)
    return False


def _source_projection(col: exp.Column) -> exp.Expression | None:
    """The select-list expression a column of a WITH item or a subquery in FROM names (its
    first branch for a set operation), when sqlglot could not type the column."""
    table = col.table
    if not table:
        return None
    select = col.find_ancestor(exp.Select)
    while select is not None:
        for cte in (select.args.get("with_") or select.args.get("with") or exp.With()).expressions:
            if cte.alias == table:
                return _projection(cte.this, col.name, cte.args.get("alias"))
        sources = [select.args.get("from_") or select.args.get("from")] + list(select.args.get("joins") or [])
        for src in sources:
            sub = src.this if src is not None else None
            if isinstance(sub, exp.Subquery) and sub.alias == table:
                return _projection(sub.this, col.name, sub.args.get("alias"))
        select = select.find_ancestor(exp.Select)
    return None


def _projection(query: exp.Expression, name: str, alias: exp.TableAlias | None) -> exp.Expression | None:
    while isinstance(query, (exp.Union, exp.Except, exp.Intersect)):
        query = query.this
    if not isinstance(query, exp.Select):
        return None
    columns = [c.name for c in alias.columns] if alias is not None and alias.columns else []
    for i, e in enumerate(query.selects):
        if (columns[i] if i < len(columns) else e.alias_or_name) == name:
            return e
    return None


def numeric_operand(node: exp.Expression | None) -> exp.Expression | None:
    """`node` as one of our numerics if it is a numeric (ours, or a numeric constant), else
    None."""
    if node is None:
        return None
    if yields_struct(node):
        return node
    if _number_literal(node) and is_numeric(node):
        return to_numeric(node.copy())
    return None


def _typed(node: exp.Expression, t: str) -> exp.Expression:
    node.type = exp.DataType.build(t)
    return node


def call(name: str, *args: exp.Expression, t: str = "DECIMAL") -> exp.Expression:
    """A call of our UDF `name`, annotated with its result type."""
    return _typed(exp.Anonymous(this=name, expressions=list(args)), t)


def constant(text: str) -> exp.Expression:
    """A numeric constant written as `text` (its scale as written): DuckDB folds the call once."""
    out = call("rw_num_const", exp.Literal.string(text))
    out.meta["numeric_text"] = text
    return out


def _is_text_literal(node: exp.Expression) -> bool:
    return isinstance(node, exp.Literal) and node.is_string


def _null() -> exp.Expression:
    return _typed(exp.Cast(this=exp.Null(), to=struct_type()), "DECIMAL")


def to_numeric(node: exp.Expression) -> exp.Expression | None:
    """`node` (a number, text, NULL) as a numeric, as PostgreSQL coerces it; None when its
    type has no cast to numeric."""
    t = _type(node)
    if isinstance(node, exp.Literal) and not node.is_string:
        return constant(node.this)
    if isinstance(node, exp.Neg) and isinstance(node.this, exp.Literal) and not node.this.is_string:
        return constant("-" + node.this.this)
    if t == T.DECIMAL or yields_struct(node):
        # (a parenthesis keeps the annotation of what it held before its content became
        # one of our calls: `(x / pow(10.0, 2))` was a double to sqlglot)
        return node
    if isinstance(node, exp.Null) or t == T.NULL:
        return _null()
    if t in _INTS:
        return call("rw_num_from_int", node)
    if t in (T.INT128, T.UBIGINT, T.UINT128):
        return call("rw_num_from_hugeint", node)
    if _is_text_literal(node):
        return constant(node.this)
    if t in _TEXT:
        return call("rw_num_in", node)
    if t == T.DOUBLE:
        return call("rw_num_from_f64", node)
    if t == T.FLOAT:
        return call("rw_num_from_f32", node)
    if t in (T.JSON, T.JSONB):
        return call("rw_num_in", exp.Cast(this=node, to=exp.DataType.build("VARCHAR")))
    if t == T.BOOLEAN:
        raise BindError("cannot cast type boolean to numeric")
    return None


def to_double(node: exp.Expression) -> exp.Expression:
    """A numeric as a double precision (a constant folded here, when it is a numeric)."""
    text = node.meta.get("numeric_text")
    if isinstance(node, exp.Literal):
        text = node.this
    elif isinstance(node, exp.Neg) and isinstance(node.this, exp.Literal):
        text = "-" + node.this.this
    if text is not None and _parses(text):
        return _typed(exp.Cast(this=exp.Literal.string(text), to=exp.DataType.build("DOUBLE")), "DOUBLE")
    return call("rw_num_to_f64", to_numeric(node) if _number_literal(node) else node, t="DOUBLE")


def to_real(node: exp.Expression) -> exp.Expression:
    """A numeric as a real (where it meets a real in a VALUES column, an array, a CASE)."""
    return call("rw_num_to_f32", to_numeric(node) if _number_literal(node) else node, t="FLOAT")


def _parses(text: str) -> bool:
    """Whether `text` is a numeric (one that is not fails where it is evaluated, as RisingWave's)."""
    from rw_cli.common import rust_decimal

    try:
        rust_decimal.parse(text)
    except rust_decimal.NumericError:
        return False
    return True


def from_numeric(node: exp.Expression, to: exp.DataType) -> exp.Expression | None:
    """A numeric cast to the type `to`; None for a type DuckDB may cast it to itself."""
    t = to.this
    if t in _TO_INT:
        return call(_TO_INT[t], node, t=to.sql(dialect="duckdb"))
    if t == T.DOUBLE:
        return to_double(node)
    if t == T.FLOAT:
        return call("rw_num_to_f32", node, t="FLOAT")
    if t in _TEXT:
        return call("rw_num_out", node, t="VARCHAR")
    if t in (T.JSON, T.JSONB):
        return _typed(exp.Cast(this=to_double(node), to=to.copy()), "JSON")
    if t == T.BOOLEAN:
        raise BindError("cannot cast type numeric to boolean")
    if t == T.DECIMAL:
        return node
    return None


def _element(t: exp.DataType | None) -> exp.DataType | None:
    return t.expressions[0] if t is not None and t.this == T.ARRAY and t.expressions else None


def _list_cast(node: exp.Cast) -> exp.Expression | None:
    """An array cast into or out of numeric[]: each element cast, by list_transform."""
    src, dst = _element(getattr(node.this, "type", None)), _element(node.to)
    if isinstance(node.this, exp.Null) and dst is not None and dst.this == T.DECIMAL:
        # NULL::numeric[]: a NULL list of our structs
        return _typed(exp.Cast(this=exp.Null(), to=exp.DataType.build(f"{NUMERIC_DUCKDB}[]", dialect="duckdb")),
                      node.to.sql())
    if src is None or dst is None or (src.this == T.DECIMAL) == (dst.this == T.DECIMAL) and src.this != T.DECIMAL:
        return None
    if src.this == T.DECIMAL and dst.this == T.DECIMAL:
        return node.this
    e = exp.column("__e")
    e.type = src.copy()
    body = _cast(exp.Cast(this=e, to=dst.copy()))
    if body is None:
        return None
    lam = exp.Lambda(this=body, expressions=[exp.to_identifier("__e")])
    return _typed(exp.Anonymous(this="list_transform", expressions=[node.this, lam]), node.to.sql())


def _cast(node: exp.Cast) -> exp.Expression | None:
    inner = node.this
    while isinstance(inner, exp.Paren):
        inner = inner.this
    if inner is not node.this and _number_literal(inner):  # `CAST((1.5) AS int)`: a default's expression
        node.set("this", inner)
    src, dst = _type(node.this), node.to.this
    if dst == T.DECIMAL and node.meta.get("jsonb_number"):
        # a jsonb number (checked by rw_cli.sql.functions) is a double, as RisingWave's jsonb holds it
        return call("rw_num_from_f64", exp.Cast(this=node.this, to=exp.DataType.build("DOUBLE")))
    if dst == T.DECIMAL and src in (T.JSON, T.JSONB):
        return None  # rw_cli.sql.functions checks it is a number first
    if yields_struct(node.this):
        src = T.DECIMAL
    elif src == T.DECIMAL and not _number_literal(node.this):
        src = None  # annotated numeric, computed by DuckDB as a number: DuckDB casts it
    if dst == T.ARRAY and (src == T.ARRAY or isinstance(node.this, exp.Null)):
        return _list_cast(node)
    if dst == T.DECIMAL:
        value = node.this if src == T.DECIMAL else to_numeric(node.this)
        typmod = [e.this if isinstance(e, exp.DataTypeParam) else e for e in node.to.expressions]
        if value is not None and typmod and all(isinstance(x, exp.Literal) for x in typmod):
            # numeric(p[, s]): PostgreSQL's rounding to s digits
            scale = typmod[1].this if len(typmod) > 1 else "0"
            return call("rw_num_typmod", value, exp.Literal.number(typmod[0].this), exp.Literal.number(scale))
        return value
    if src == T.DECIMAL:
        return from_numeric(node.this, node.to)
    return None


def _items(node: exp.Expression, keys: tuple[str, ...]) -> list[exp.Expression]:
    out = []
    for key in keys:
        arg = node.args.get(key)
        out += [x for x in (arg if isinstance(arg, list) else [arg]) if x is not None]
    return out


def _operands_to_numeric(node: exp.Expression, keys: tuple[str, ...]) -> None:
    """Make each operand under `keys` (an argument or a list of them) a numeric, in place."""
    for item in _items(node, keys):
        if yields_struct(item):
            continue
        conv = to_numeric(item.copy())
        if conv is not None:
            item.replace(conv)


def _operands_to_double(node: exp.Expression, keys: tuple[str, ...], real: bool = False) -> None:
    """Numeric operands (and numeric constants) as doubles (as reals), in place."""
    for item in _items(node, keys):
        inner = item
        while isinstance(inner, exp.Paren):  # `(1.5)`: the constant it holds
            inner = inner.this
        if yields_struct(item) or _number_literal(inner) and is_numeric(inner):
            inner.replace((to_real if real else to_double)(inner.copy()))


def _unify(node: exp.Expression, keys: tuple[str, ...], kinds: set[str]) -> None:
    """The operands of a CASE, COALESCE, array... one type with their numerics: double
    precision beside a double, real beside only reals (PostgreSQL's resolution), else numeric."""
    if "double" in kinds:
        _operands_to_double(node, keys)
    elif "real" in kinds:
        _operands_to_double(node, keys, real=True)
    else:
        _operands_to_numeric(node, keys)


def _kind(node: exp.Expression) -> str:
    """What an operand is to the numeric rules: 'struct' (a numeric DuckDB holds as ours),
    'numeric' (a numeric constant), 'int', 'null' and 'text' (a quoted constant: both take
    the other operand's type), 'double' (also a type nobody knows, such as a DuckDB
    function's, or a number annotated numeric that an earlier rule gave to DuckDB), or
    'other' (an interval, a date: their own rules). A parenthesis is what it holds (an
    argument a SQL function's body reads is one)."""
    while isinstance(node, exp.Paren):
        node = node.this
    if yields_struct(node):
        return "struct"
    t = _type(node)
    if isinstance(node, exp.Null) or t == T.NULL:
        return "null"
    if _is_text_literal(node):
        return "text"
    if _number_literal(node):
        return "numeric" if t in (T.DECIMAL, None, T.UNKNOWN) else "int"
    if t in _INTS:
        return "int"
    if t == T.FLOAT:
        return "real"
    if t == T.DOUBLE or t in (None, T.UNKNOWN) or t == T.DECIMAL:
        return "double"
    return "other"


def _arithmetic(node: exp.Expression) -> exp.Expression | None:
    kinds = {_kind(node.this), _kind(node.expression)}
    if not kinds & {"struct", "numeric"} or "other" in kinds:
        return None  # (an interval times a numeric: their own rules, a double there)
    if kinds & {"double", "real"}:  # numeric op double (or real): in double precision, as PostgreSQL does
        _operands_to_double(node, ("this", "expression"))
        node.type = exp.DataType.build("DOUBLE")
        return None
    a, b = to_numeric(node.this.copy()), to_numeric(node.expression.copy())
    if a is None or b is None:
        return None
    return call(_ARITHMETIC[type(node)], a, b)


def _comparison(node: exp.Expression, keys: tuple[str, ...]) -> None:
    """A comparison with a numeric operand: every operand numeric (a double compares the
    numerics as doubles, as RisingWave does). Constants alone stay DuckDB's numbers."""
    kinds = {_kind(item) for item in _items(node, keys)}
    if "struct" not in kinds or "other" in kinds:
        return
    if kinds & {"double", "real"}:
        _operands_to_double(node, keys)
        return
    _operands_to_numeric(node, keys)


def _set_operation_columns(node: exp.Expression) -> None:
    """A UNION / EXCEPT / INTERSECT column of a numeric in one branch and another number type
    in another: every branch's value one type (numeric beside integers, double beside a
    float), as PostgreSQL resolves a set operation's column; DuckDB cannot unite a numeric's
    struct with a number. A converted item keeps its name."""
    leaves, todo = [], [node]
    while todo:
        q = todo.pop()
        if isinstance(q, (exp.Union, exp.Except, exp.Intersect)):
            todo += [q.expression, q.this]
        elif isinstance(q, exp.Subquery) and isinstance(q.this, (exp.Union, exp.Except, exp.Intersect, exp.Select)) \
                and not q.alias:
            todo.append(q.this)
        elif isinstance(q, exp.Select):
            leaves.append(q)
        else:
            return  # VALUES and the like: their own rules
    width = {len(leaf.expressions) for leaf in leaves}
    if len(width) != 1 or any(isinstance(e, exp.Star) for leaf in leaves for e in leaf.expressions):
        return
    for j in range(width.pop()):
        items = [leaf.expressions[j] for leaf in leaves]
        inners = [i.this if isinstance(i, exp.Alias) else i for i in items]
        kinds = {_kind(x) for x in inners}
        if "struct" not in kinds or "other" in kinds or kinds <= {"struct", "null"}:
            continue
        to_float = bool(kinds & {"double", "real"})
        for item, inner in zip(items, inners):
            if yields_struct(inner) != to_float or isinstance(inner, exp.Null):
                continue
            out = (to_double if to_float else to_numeric)(inner.copy())
            if out is None:
                continue
            if isinstance(item, exp.Alias):
                inner.replace(out)
            else:
                item.replace(exp.alias_(out, item.output_name or f"_col_{j}"))


def _subquery_operands(operand: exp.Expression, query: exp.Expression) -> None:
    """`x IN (SELECT y ...)`, `x op ANY|ALL (SELECT y ...)` with a numeric on one side: x and
    y one type, as `_comparison` makes a comparison's operands (DuckDB cannot compare a
    numeric's struct with a number)."""
    select = query.this if isinstance(query, exp.Subquery) else query
    if not isinstance(select, exp.Select) or len(select.expressions) != 1:
        return
    item = select.expressions[0]
    inner = item.this if isinstance(item, exp.Alias) else item
    kinds = {_kind(operand), _kind(inner)}
    if "struct" not in kinds or "other" in kinds:
        return
    to_float = bool(kinds & {"double", "real"})
    for side in (operand, inner):
        if yields_struct(side) == to_float:  # the numerics as doubles, or the others as numerics
            out = (to_double if to_float else to_numeric)(side.copy())
            if out is not None:
                side.replace(out)


def _quantified_array(node: exp.Expression) -> exp.Expression | None:
    """The array of `x op ANY|SOME|ALL (array)` (sqlglot reads some of these as calls)."""
    q = node.expression
    if isinstance(q, (exp.Any, exp.All)):
        inner = q.this
    elif isinstance(q, exp.Anonymous) and q.name.lower() in ("any", "some", "all") and len(q.expressions) == 1:
        inner = q.expressions[0]
    else:
        return None
    while isinstance(inner, exp.Paren):
        inner = inner.this
    return inner


def _quantified_comparison(node: exp.Expression) -> None:
    """`x op ANY|ALL (array)` with numerics on either side: x and the array's elements one
    type, as `_comparison` makes a comparison's operands (a subquery's are DuckDB's)."""
    arr = _quantified_array(node)
    if isinstance(arr, (exp.Subquery, exp.Select)):
        _subquery_operands(node.this, arr)
        return
    if _type(arr) != T.ARRAY:
        return
    kinds = {_kind(node.this), _element_kind(arr)}
    if "struct" not in kinds and not ("numeric" in kinds and kinds & {"int"}) or "other" in kinds:
        return
    target = "DOUBLE" if kinds & {"double", "real"} else "DECIMAL"
    if target == "DOUBLE":
        _operands_to_double(node, ("this",))
    elif not yields_struct(node.this):
        conv = to_numeric(node.this.copy())
        if conv is not None:
            node.this.replace(conv)
    if _element_kind(arr) != ("struct" if target == "DECIMAL" else "double"):
        cast = _typed(exp.Cast(this=arr.copy(), to=exp.DataType.build(f"{target}[]")), f"{target}[]")
        arr.replace(_list_cast(cast) or cast)


def _sum_parts(agg_of, arg: exp.Expression, fn: str, extra: tuple = ()) -> exp.Expression:
    """sum or avg of a numeric from DuckDB's native aggregates of its parts (`agg_of` wraps an
    aggregate in the FILTER / OVER of the original call)."""
    parts = [agg_of(exp.Sum(this=exp.Dot.build([arg.copy(), exp.to_identifier("n_int")]))),
             agg_of(exp.Sum(this=exp.Dot.build([arg.copy(), exp.to_identifier("n_frac")]))),
             agg_of(exp.Max(this=call("rw_num_scale_of", arg.copy(), t="TINYINT"))),
             agg_of(exp.Max(this=exp.Dot.build([arg.copy(), exp.to_identifier("n_int")]))),
             agg_of(exp.Min(this=exp.Dot.build([arg.copy(), exp.to_identifier("n_int")])))]
    return call(fn, *parts, *(agg_of(e) for e in extra))


def parts(x: exp.Expression) -> exp.Expression:
    """A numeric as a struct of its value and its scale as numbers: DuckDB's min and max keep
    that whole, where they lose a NaN's payload (rw_cli.common.numeric)."""
    def field(name: str, value: exp.Expression) -> exp.Expression:
        return exp.PropertyEQ(this=exp.to_identifier(name), expression=value)
    packed = exp.Anonymous(this="struct_pack", expressions=[
        field("i", exp.Dot.build([x.copy(), exp.to_identifier("n_int")])),
        field("f", exp.Dot.build([x.copy(), exp.to_identifier("n_frac")])),
        field("s", call("rw_num_scale_of", x.copy(), t="TINYINT"))])
    # (a NULL numeric must stay NULL: a struct of NULL fields would be the greatest value)
    return exp.Case(ifs=[exp.If(this=exp.Is(this=x.copy(), expression=exp.Null()), true=exp.Null())], default=packed)


def _aggregate(node: exp.Expression) -> exp.Expression | None:
    """sum and avg of numerics and integers (numeric results), min and max of numerics (the
    outermost FILTER / OVER around them, `node`, applies to each aggregate that computes them)."""
    agg = node
    while isinstance(agg, (exp.Window, exp.Filter)):
        agg = agg.this
    if isinstance(agg, (exp.Min, exp.Max)) and yields_struct(agg.this):
        inner = type(agg)(this=parts(agg.this))
        if node is not agg:
            wrapped = node.copy()
            holder = wrapped
            while isinstance(holder.this, (exp.Window, exp.Filter)):
                holder = holder.this
            holder.set("this", inner)
            inner = wrapped
        return call("rw_num_from_parts", inner)
    if not isinstance(agg, (exp.Sum, exp.Avg)):
        return None
    arg = agg.this
    distinct = isinstance(arg, exp.Distinct)
    value = arg.expressions[0] if distinct and len(arg.expressions) == 1 else arg
    t = _type(value)
    if not (t == T.DECIMAL or t in _INTS):
        return None
    if isinstance(agg, exp.Sum) and t in _INTS and t != T.BIGINT:
        return None  # sum(int) is a bigint (rw_cli.sql.transpile)

    def agg_of(inner: exp.Expression) -> exp.Expression:
        if node is agg:
            return inner
        out = node.copy()
        holder = out
        while isinstance(holder.this, (exp.Window, exp.Filter)):
            holder = holder.this
        holder.set("this", inner)
        return out

    if distinct:
        listed = agg_of(exp.ArrayAgg(this=exp.Distinct(expressions=[to_numeric(value.copy())])))
        return call("rw_num_sum_list" if isinstance(agg, exp.Sum) else "rw_num_avg_list", listed)
    if t == T.DECIMAL:
        if isinstance(agg, exp.Sum):
            return _sum_parts(agg_of, value, "rw_num_sum_parts")
        return _sum_parts(agg_of, value, "rw_num_avg_parts", (exp.Count(this=value.copy()),))
    if isinstance(agg, exp.Sum):  # of bigints: DuckDB's HUGEINT sum
        return call("rw_num_from_hugeint", agg_of(exp.Sum(this=value.copy())))
    return call("rw_num_avg_int", agg_of(exp.Sum(this=exp.Cast(this=value.copy(), to=exp.DataType.build("HUGEINT")))),
                agg_of(exp.Count(this=value.copy())))


def _math(node: exp.Expression) -> exp.Expression | None:
    x = numeric_operand(node.this) if isinstance(node, (exp.Abs, exp.Sign, exp.Floor, exp.Ceil, exp.Round,
                                                         exp.Trunc, *_NUMERIC_MATH)) else None
    if x is None:
        if isinstance(node, exp.Pow):
            kinds = {_kind(node.this), _kind(node.expression)}
            if kinds & {"struct", "numeric"} and kinds <= {"struct", "numeric", "int", "null", "text"}:
                a, b = to_numeric(node.this.copy()), to_numeric(node.expression.copy())
                if a is not None and b is not None:
                    return call("rw_num_pow", a, b)
        if isinstance(node, _DOUBLE_MATH):
            _operands_to_double(node, ("this", "expression"))
        return None
    if isinstance(node, exp.Abs):
        return call("rw_num_abs", x)
    if isinstance(node, exp.Sign):
        return call("rw_num_sign", x)
    if isinstance(node, (exp.Floor, exp.Ceil)) and node.args.get("decimals") is None:
        return call("rw_num_floor" if isinstance(node, exp.Floor) else "rw_num_ceil", x)
    if isinstance(node, exp.Round):
        digits = node.args.get("decimals")
        return call("rw_num_round", x) if digits is None else call("rw_num_round_dp", x, digits)
    if isinstance(node, exp.Trunc):
        digits = node.args.get("decimals")  # (trunc(x, n) is PostgreSQL's: RisingWave has trunc(x) only)
        return call("rw_num_trunc", x) if digits is None else call("rw_num_trunc_dp", x, digits)
    if type(node) in _NUMERIC_MATH and not (isinstance(node, exp.Log) and node.expression):
        return call(_NUMERIC_MATH[type(node)], x)
    if isinstance(node, _DOUBLE_MATH):
        _operands_to_double(node, ("this", "expression"))
    return None


def _text_operands(node: exp.Expression, keys: tuple[str, ...]) -> None:
    """Numeric operands of a text operation (||, concat) as their text."""
    for key in keys:
        arg = node.args.get(key)
        for item in (arg if isinstance(arg, list) else [arg]):
            if item is not None and yields_struct(item):
                item.replace(call("rw_num_out", item.copy(), t="VARCHAR"))


def _numeric_result(node: exp.Expression, keys: tuple[str, ...]) -> None:
    """A CASE, COALESCE, GREATEST... of a numeric: its other operands become numerics (a
    double among them: all doubles)."""
    items = _items(node, keys)
    kinds = {_kind(x) for x in items}
    if "struct" not in kinds and not ("numeric" in kinds and is_numeric(node)) or "other" in kinds:
        return
    _unify(node, keys, kinds)


def lower(node: exp.Expression) -> exp.Expression | None:
    """The numeric form of `node` (its children lowered already), or None (possibly after
    changing operands in place)."""
    if isinstance(node, exp.Literal) or node.find_ancestor(*_RAW_CONTEXTS):
        return None  # a constant stays one until its use says what it must be (see `finish`)
    if isinstance(node, exp.Neg) and yields_struct(node.this):
        return call("rw_num_neg", node.this)
    if isinstance(node, exp.Cast):
        return _cast(node)
    if type(node) in _ARITHMETIC:
        return _arithmetic(node)
    if isinstance(node, _COMPARISONS) and _quantified_array(node) is not None:
        _quantified_comparison(node)
    elif isinstance(node, _COMPARISONS):
        _comparison(node, ("this", "expression"))
    elif isinstance(node, exp.Between):
        _comparison(node, ("this", "low", "high"))
    elif isinstance(node, exp.In) and not node.args.get("query"):
        _comparison(node, ("this", "expressions"))
    elif isinstance(node, exp.In):
        _subquery_operands(node.this, node.args["query"])
    elif isinstance(node, (exp.Union, exp.Except, exp.Intersect)):
        _set_operation_columns(node)
    elif isinstance(node, (exp.Lag, exp.Lead)) and node.args.get("default") is not None:
        _numeric_result(node, ("this", "default"))  # lag(n, 1, 0): the default a numeric too
    elif isinstance(node, exp.ArraySum) and _element_kind(node.this) == "struct":
        return call("rw_num_sum_list", node.this)
    elif isinstance(node, (exp.Sum, exp.Avg, exp.Min, exp.Max, exp.Window, exp.Filter)) \
            and not isinstance(node.parent, (exp.Window, exp.Filter)):
        return _aggregate(node)
    elif isinstance(node, exp.WithinGroup) and isinstance(node.this, exp.PercentileCont):
        for ordered in node.expression.expressions if isinstance(node.expression, exp.Order) else []:
            _operands_to_double(ordered, ("this",))  # an interpolation of doubles (PostgreSQL's too)
    elif isinstance(node, _DOUBLE_AGGREGATES):
        _operands_to_double(node, ("this", "expression"))
    elif isinstance(node, _ARRAY_JOINS) and _array_join_operands(node):
        pass
    elif isinstance(node, exp.DPipe):
        _text_operands(node, ("this", "expression"))
    elif isinstance(node, (exp.Concat, exp.ConcatWs)):
        _text_operands(node, ("expressions",))
    elif isinstance(node, exp.Case):
        if node.this is not None:  # CASE x WHEN v ...: x is compared with each v
            _simple_case_operands(node)
        branches = [i.args.get("true") for i in node.args.get("ifs") or []] + [node.args.get("default")]
        kinds = {_kind(b) for b in branches if b is not None}
        if ("struct" in kinds or "numeric" in kinds and is_numeric(node)) and "other" not in kinds:
            for branch in node.args.get("ifs") or []:
                _unify(branch, ("true",), kinds)
            _unify(node, ("default",), kinds)
    elif isinstance(node, (exp.Coalesce, exp.Greatest, exp.Least)):
        _numeric_result(node, ("this", "expressions"))
    elif isinstance(node, exp.If):
        _numeric_result(node, ("true", "false"))
    elif isinstance(node, exp.Nullif):
        _comparison(node, ("this", "expression"))
    elif isinstance(node, exp.Array):
        kinds = {_kind(e) for e in node.expressions}
        if ("struct" in kinds or "numeric" in kinds) and "other" not in kinds:
            _unify(node, ("expressions",), kinds)
    elif isinstance(node, exp.Values):
        _values_columns(node)
    else:
        return _math(node)
    return None


def _simple_case_operands(node: exp.Case) -> None:
    """CASE x WHEN v1 ... WHEN vn: x and the v's compared as one type (as `_comparison`)."""
    operands = [node.this] + [i.this for i in node.args.get("ifs") or [] if i.this is not None]
    kinds = {_kind(x) for x in operands}
    # (an integer beside a numeric constant too: `CASE i WHEN 1.0`, whose constant becomes
    # one of our numerics as a CASE's operand)
    if "struct" not in kinds and not ("numeric" in kinds and kinds & {"int"}) or "other" in kinds:
        return
    for x in operands:
        if kinds & {"double", "real"}:
            if yields_struct(x) or _number_literal(x) and is_numeric(x):
                x.replace(to_double(x.copy()))
        elif not yields_struct(x):
            conv = to_numeric(x.copy())
            if conv is not None:
                x.replace(conv)


_ARRAY_JOINS = (exp.DPipe, exp.ArrayConcat, exp.ArrayAppend, exp.ArrayPrepend)


def _element_kind(node: exp.Expression) -> str:
    """What an array operand's elements are to the numeric rules (`_kind`'s names)."""
    t = _element(getattr(node, "type", None))
    if t is None or t.this == T.ARRAY:
        return "other"
    if t.this == T.DECIMAL:
        return "struct"
    return {T.FLOAT: "real", T.DOUBLE: "double"}.get(t.this, "int" if t.this in _INTS else "other")


def _array_join_operands(node: exp.Expression) -> bool:
    """`a || b`, array_cat, array_append, array_prepend with an array of numerics or a numeric
    on one side and other numbers on the other: both sides' numbers one type (`_unify`'s
    choice), as PostgreSQL resolves anyarray || anyelement. True when it is such an
    operation (so that `||` is not read as a text concatenation)."""
    keys = ("this", "expressions") if isinstance(node, exp.ArrayConcat) else ("this", "expression")
    items = _items(node, keys)
    arrays = [x for x in items if _type(x) == T.ARRAY]
    if len(items) != 2 or not arrays:
        return False
    kinds = {_element_kind(x) if _type(x) == T.ARRAY else _kind(x) for x in items}
    if not kinds & {"struct", "numeric"} or "other" in kinds or len(kinds - {"null"}) < 2:
        return True
    target = "DOUBLE" if "double" in kinds else "FLOAT" if "real" in kinds else "DECIMAL"
    for item in items:
        if _type(item) == T.ARRAY:
            if _element_kind(item) != ("struct" if target == "DECIMAL" else target.lower().replace("float", "real")):
                cast = _typed(exp.Cast(this=item.copy(), to=exp.DataType.build(f"{target}[]")), f"{target}[]")
                item.replace(_list_cast(cast) or cast)
        elif target == "DECIMAL":
            if not yields_struct(item):
                conv = to_numeric(item.copy())
                if conv is not None:
                    item.replace(conv)
        elif yields_struct(item) or _number_literal(item) and is_numeric(item):
            item.replace((to_real if target == "FLOAT" else to_double)(item.copy()))
    return True


def _values_columns(node: exp.Values) -> None:
    """A VALUES column with a numeric cell: one type for all its cells, as `_unify` chooses."""
    rows = [r for r in node.expressions if isinstance(r, exp.Tuple)]
    if not rows or len({len(r.expressions) for r in rows}) != 1:
        return
    for j in range(len(rows[0].expressions)):
        cells = [r.expressions[j] for r in rows]
        kinds = {_kind(c) for c in cells}
        if not (kinds & {"struct"} or "numeric" in kinds and any(is_numeric(c) for c in cells)) or "other" in kinds:
            continue
        for cell in cells:
            if kinds & {"double", "real"}:
                if yields_struct(cell) or _number_literal(cell) and is_numeric(cell):
                    cell.replace(to_double(cell.copy()) if "double" in kinds else to_real(cell.copy()))
            elif not yields_struct(cell):
                conv = to_numeric(cell.copy())
                if conv is not None:
                    cell.replace(conv)


# where a numeric stays a numeric: our rewrites and UDFs, and what DuckDB does with any value
# (select lists, VALUES, CASE, COALESCE, comparisons, grouping, sorting, min/max, lists...)
_STRUCT_CONTEXTS = (exp.Alias, exp.Select, exp.Tuple, exp.Values, exp.Paren, exp.Case, exp.If, exp.Coalesce,
                    exp.Greatest, exp.Least, exp.Nullif, exp.Array, exp.Struct, exp.PropertyEQ, exp.Distinct,
                    exp.Ordered, exp.Group, exp.Order, exp.Window, exp.PartitionedByProperty, exp.Between, exp.In,
                    exp.Is, exp.Count, exp.ArrayAgg, exp.AnyValue, exp.First, exp.Last, exp.Min, exp.Max,
                    exp.Lag, exp.Lead, exp.FirstValue, exp.LastValue, exp.NthValue, exp.Dot, exp.Cast, exp.TryCast,
                    exp.Mode, exp.ArgMax, exp.ArgMin, exp.Filter, exp.Unnest, exp.Subquery, exp.Union, exp.Except,
                    exp.Intersect, exp.Bracket, exp.Explode, exp.Try, exp.Limit, exp.Offset, exp.ArrayAppend,
                    exp.ArrayPrepend, exp.ArrayConcat, *_COMPARISONS)
# DuckDB's functions of a struct or list value, and ours
_STRUCT_FUNCTIONS = {"struct_pack", "list_value", "row", "list", "array_agg", "typeof", "pg_typeof_name",
                     "list_transform", "list_filter", "list_sort", "list_reverse_sort", "list_distinct",
                     "array_distinct", "unnest", "hash", "error", "list_append", "list_prepend", "list_concat"}
# where a constant must stay a constant (a percentile's fraction, a row count)
_RAW_CONTEXTS = (exp.PercentileCont, exp.PercentileDisc, exp.ApproxQuantile, exp.Quantile, exp.Limit, exp.Offset,
                 exp.Fetch)


def _keeps_struct(parent: exp.Expression | None) -> bool:
    if parent is None or isinstance(parent, _STRUCT_CONTEXTS):
        return True
    if isinstance(parent, exp.Anonymous):
        name = parent.name.lower()
        # (a user's Python function, rw_py_*, takes our numerics as they are: rw_cli.engine.python_udf)
        return name.startswith(("rw_num_", "rw_py_", "pg_array")) or name in _STRUCT_FUNCTIONS
    return not isinstance(parent, (exp.Func, exp.Binary, exp.Unary)) or isinstance(parent, (exp.And, exp.Or, exp.Not))


def _constant_is_numeric(lit: exp.Expression, parent: exp.Expression | None) -> bool:
    """Whether a numeric constant must be one of our numerics where it stands: beside a
    numeric it is compared with or chosen among, or as a value kept (a select list, VALUES);
    not beside DuckDB's own numbers, nor where it must stay a constant."""
    if parent is None or isinstance(parent, _RAW_CONTEXTS) or \
            isinstance(parent, exp.Anonymous) and "quantile" in parent.name.lower():
        return False
    if isinstance(parent, (*_COMPARISONS, exp.Between, exp.In, exp.Nullif)):
        return any(yields_struct(x) for x in parent.iter_expressions() if x is not lit)
    if isinstance(parent, (exp.Cast, exp.TryCast)):
        return parent.to.this in (T.DECIMAL, T.STRUCT)
    if isinstance(parent, (exp.Case, exp.If, exp.Coalesce, exp.Greatest, exp.Least, exp.Array)):
        others = [x for x in parent.iter_expressions() if x is not lit and not isinstance(x, exp.Null)]
        if isinstance(parent, exp.Case):
            others = [i.args.get("true") for i in parent.args.get("ifs") or []] + [parent.args.get("default")]
            others = [x for x in others if x is not None and x is not lit and not isinstance(x, exp.Null)]
        if any(_kind(x) in ("double", "real") for x in others if not yields_struct(x)):
            return False
        return True
    return _keeps_struct(parent)


def finish(tree: exp.Expression) -> exp.Expression:
    """What the other rewrites left: casts into or out of numeric they made, numeric
    constants still written as numbers (a numeric where a value is kept, the number itself
    where DuckDB computes with it), and numerics given to DuckDB's own functions of numbers
    (as doubles, PostgreSQL's other numeric type)."""
    for node in list(tree.walk()):
        if isinstance(node, exp.Cast):
            if yields_struct(node.this) or node.to.this == T.DECIMAL:
                new = _cast(node)
                if new is not None and new is not node:
                    node.replace(new)
            continue
        if not (is_numeric(node) or yields_struct(node)) or isinstance(node, exp.Column) and isinstance(node.parent, exp.Dot):
            continue
        parent = node.parent
        if _number_literal(node):
            if isinstance(node, exp.Literal) and isinstance(parent, exp.Neg):
                continue
            if _constant_is_numeric(node, parent):
                text = node.this if isinstance(node, exp.Literal) else "-" + node.this.this
                node.replace(constant(text))
            continue
        if yields_struct(node) and not _keeps_struct(parent) and not isinstance(parent, _RAW_CONTEXTS):
            node.replace(to_double(node.copy()))
    return tree
