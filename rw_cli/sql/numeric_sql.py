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


def numeric_type() -> exp.DataType:
    return exp.DataType.build("DECIMAL")


def struct_type() -> exp.DataType:
    return exp.DataType.build(NUMERIC_DUCKDB, dialect="duckdb")


def _type(node: exp.Expression):
    t = getattr(node, "type", None)
    return t.this if t is not None else None


def is_numeric(node: exp.Expression) -> bool:
    return _type(node) == T.DECIMAL


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
    if t == T.DECIMAL:
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
    """A numeric as a double precision (a constant folded here)."""
    text = node.meta.get("numeric_text")
    if isinstance(node, exp.Literal):
        text = node.this
    elif isinstance(node, exp.Neg) and isinstance(node.this, exp.Literal):
        text = "-" + node.this.this
    if text is not None:
        return _typed(exp.Cast(this=exp.Literal.string(text), to=exp.DataType.build("DOUBLE")), "DOUBLE")
    return call("rw_num_to_f64", node, t="DOUBLE")


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
    src, dst = _type(node.this), node.to.this
    if src == T.ARRAY and dst == T.ARRAY:
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


def _operands_to_numeric(node: exp.Expression, keys: tuple[str, ...]) -> None:
    """Make each operand under `keys` (an argument or a list of them) a numeric, in place."""
    for key in keys:
        arg = node.args.get(key)
        items = arg if isinstance(arg, list) else [arg]
        for item in items:
            if item is None or is_numeric(item):
                continue
            conv = to_numeric(item.copy())
            if conv is not None:
                item.replace(conv)


def _operands_to_double(node: exp.Expression, keys: tuple[str, ...]) -> None:
    for key in keys:
        arg = node.args.get(key)
        for item in (arg if isinstance(arg, list) else [arg]):
            if item is not None and is_numeric(item):
                item.replace(to_double(item.copy()))


def _arithmetic(node: exp.Expression) -> exp.Expression | None:
    lt, rt = _type(node.this), _type(node.expression)
    if T.DECIMAL not in (lt, rt):
        return None
    other = rt if lt == T.DECIMAL else lt
    if other in _FLOATS:  # numeric op double: in double precision, as PostgreSQL does
        _operands_to_double(node, ("this", "expression"))
        node.type = exp.DataType.build("DOUBLE")
        return None
    a, b = to_numeric(node.this), to_numeric(node.expression)
    if a is None or b is None:
        return None  # an interval, a time: their own rules
    return call(_ARITHMETIC[type(node)], a, b)


def _comparison(node: exp.Expression, keys: tuple[str, ...]) -> None:
    """A comparison with a numeric operand: every operand numeric (a double compares the
    numerics as doubles, as RisingWave does)."""
    types = set()
    for key in keys:
        arg = node.args.get(key)
        for item in (arg if isinstance(arg, list) else [arg]):
            if item is not None:
                types.add(_type(item))
    if T.DECIMAL not in types:
        return
    if types & _FLOATS:
        _operands_to_double(node, keys)
        return
    _operands_to_numeric(node, keys)


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
    if isinstance(agg, (exp.Min, exp.Max)) and is_numeric(agg.this):
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
    if isinstance(node, exp.Abs) and is_numeric(node.this):
        return call("rw_num_abs", node.this)
    if isinstance(node, exp.Sign) and is_numeric(node.this):
        return call("rw_num_sign", node.this)
    if isinstance(node, (exp.Floor, exp.Ceil)) and is_numeric(node.this) and node.args.get("decimals") is None:
        return call("rw_num_floor" if isinstance(node, exp.Floor) else "rw_num_ceil", node.this)
    if isinstance(node, exp.Round) and is_numeric(node.this):
        digits = node.args.get("decimals")
        if digits is None:
            return call("rw_num_round", node.this)
        return call("rw_num_round_dp", node.this, digits)
    if isinstance(node, exp.Trunc) and is_numeric(node.this):
        digits = node.args.get("decimals")
        if digits is not None:  # PostgreSQL's (RisingWave has only trunc(numeric))
            return call("rw_num_trunc_dp", node.this, digits)
        return call("rw_num_trunc", node.this)
    numeric_fn = _NUMERIC_MATH.get(type(node))
    if numeric_fn is not None and is_numeric(node.this) and not (isinstance(node, exp.Log) and node.expression):
        return call(numeric_fn, node.this)
    if isinstance(node, exp.Pow) and T.DECIMAL in (_type(node.this), _type(node.expression)) \
            and not {_type(node.this), _type(node.expression)} & _FLOATS:
        a, b = to_numeric(node.this), to_numeric(node.expression)
        if a is not None and b is not None:
            return call("rw_num_pow", a, b)
    if isinstance(node, _DOUBLE_MATH):
        _operands_to_double(node, ("this", "expression"))
    return None


def _text_operands(node: exp.Expression, keys: tuple[str, ...]) -> None:
    """Numeric operands of a text operation (||, concat) as their text."""
    for key in keys:
        arg = node.args.get(key)
        for item in (arg if isinstance(arg, list) else [arg]):
            if item is not None and is_numeric(item):
                item.replace(call("rw_num_out", item.copy(), t="VARCHAR"))


def _numeric_result(node: exp.Expression, keys: tuple[str, ...]) -> None:
    """A CASE, COALESCE, GREATEST... of numeric type: its other operands become numerics."""
    if is_numeric(node):
        _operands_to_numeric(node, keys)


def lower(node: exp.Expression) -> exp.Expression | None:
    """The numeric form of `node` (its children lowered already), or None (possibly after
    changing operands in place)."""
    if isinstance(node, exp.Literal) or node.find_ancestor(*_RAW_CONTEXTS):
        return None  # a constant stays one until its use says what it must be (see `finish`)
    if isinstance(node, exp.Neg) and is_numeric(node.this):
        if isinstance(node.this, exp.Literal):
            return None
        return call("rw_num_neg", node.this)
    if isinstance(node, exp.Cast):
        return _cast(node)
    if type(node) in _ARITHMETIC:
        return _arithmetic(node)
    if isinstance(node, _COMPARISONS):
        _comparison(node, ("this", "expression"))
    elif isinstance(node, exp.Between):
        _comparison(node, ("this", "low", "high"))
    elif isinstance(node, exp.In) and not node.args.get("query"):
        _comparison(node, ("this", "expressions"))
    elif isinstance(node, (exp.Sum, exp.Avg, exp.Min, exp.Max, exp.Window, exp.Filter)) \
            and not isinstance(node.parent, (exp.Window, exp.Filter)):
        return _aggregate(node)
    elif isinstance(node, exp.WithinGroup) and isinstance(node.this, exp.PercentileCont):
        for ordered in node.expression.expressions if isinstance(node.expression, exp.Order) else []:
            _operands_to_double(ordered, ("this",))  # an interpolation of doubles (PostgreSQL's too)
    elif isinstance(node, _DOUBLE_AGGREGATES):
        _operands_to_double(node, ("this", "expression"))
    elif isinstance(node, exp.DPipe):
        _text_operands(node, ("this", "expression"))
    elif isinstance(node, (exp.Concat, exp.ConcatWs)):
        _text_operands(node, ("expressions",))
    elif isinstance(node, exp.Case):
        if is_numeric(node):
            for branch in node.args.get("ifs") or []:
                _operands_to_numeric(branch, ("true",))
            _operands_to_numeric(node, ("default",))
    elif isinstance(node, (exp.Coalesce, exp.Greatest, exp.Least)):
        _numeric_result(node, ("this", "expressions"))
    elif isinstance(node, exp.If):
        _numeric_result(node, ("true", "false"))
    elif isinstance(node, exp.Nullif):
        _comparison(node, ("this", "expression"))
    elif isinstance(node, exp.Array):
        if any(is_numeric(e) for e in node.expressions):
            _operands_to_numeric(node, ("expressions",))
    elif isinstance(node, exp.Values):
        _values_columns(node)
    else:
        return _math(node)
    return None


def _values_columns(node: exp.Values) -> None:
    """A VALUES column with a numeric cell: its other cells numerics too."""
    rows = [r for r in node.expressions if isinstance(r, exp.Tuple)]
    if not rows or len({len(r.expressions) for r in rows}) != 1:
        return
    for j in range(len(rows[0].expressions)):
        if any(is_numeric(r.expressions[j]) for r in rows):
            for r in rows:
                cell = r.expressions[j]
                if not is_numeric(cell) and (_type(cell) in _INTS or isinstance(cell, exp.Null)
                                             or _is_text_literal(cell) or _type(cell) == T.NULL):
                    cell.replace(to_numeric(cell.copy()))


# where a numeric stays a numeric: our rewrites and UDFs, and what DuckDB does with any value
# (select lists, VALUES, CASE, COALESCE, comparisons, grouping, sorting, min/max, lists...)
_STRUCT_CONTEXTS = (exp.Alias, exp.Select, exp.Tuple, exp.Values, exp.Paren, exp.Case, exp.If, exp.Coalesce,
                    exp.Greatest, exp.Least, exp.Nullif, exp.Array, exp.Struct, exp.PropertyEQ, exp.Distinct,
                    exp.Ordered, exp.Group, exp.Order, exp.Window, exp.PartitionedByProperty, exp.Between, exp.In,
                    exp.Is, exp.Count, exp.ArrayAgg, exp.AnyValue, exp.First, exp.Last, exp.Min, exp.Max,
                    exp.Lag, exp.Lead, exp.FirstValue, exp.LastValue, exp.NthValue, exp.Dot, exp.Cast, exp.TryCast,
                    exp.Mode, exp.ArgMax, exp.ArgMin, exp.Filter, exp.Unnest, exp.Subquery, exp.Union, exp.Except,
                    exp.Intersect, exp.Bracket, exp.Explode, exp.Try, exp.Limit, exp.Offset, *_COMPARISONS)
# DuckDB's functions of a struct or list value, and ours
_STRUCT_FUNCTIONS = {"struct_pack", "list_value", "row", "list", "array_agg", "typeof", "pg_typeof_name",
                     "list_transform", "list_filter", "list_sort", "list_reverse_sort", "list_distinct",
                     "array_distinct", "unnest", "hash", "error"}
# where a constant must stay a constant (a percentile's fraction, a row count)
_RAW_CONTEXTS = (exp.PercentileCont, exp.PercentileDisc, exp.ApproxQuantile, exp.Quantile, exp.Limit, exp.Offset,
                 exp.Fetch)


def _keeps_struct(parent: exp.Expression | None) -> bool:
    if parent is None or isinstance(parent, _STRUCT_CONTEXTS):
        return True
    if isinstance(parent, exp.Anonymous):
        name = parent.name.lower()
        return name.startswith("rw_num_") or name in _STRUCT_FUNCTIONS or name.startswith("pg_array")
    return not isinstance(parent, (exp.Func, exp.Binary, exp.Unary)) or isinstance(parent, (exp.And, exp.Or, exp.Not))


def finish(tree: exp.Expression) -> exp.Expression:
    """What the other rewrites left: casts into or out of numeric they made, numeric
    constants still written as numbers (a numeric where a value is kept, the number itself
    where it must stay a constant), and numerics given to DuckDB's own functions of numbers
    (as doubles, PostgreSQL's other numeric type)."""
    for node in list(tree.walk()):
        if isinstance(node, exp.Cast):
            if node.meta.get("numeric_done"):
                continue
            if is_numeric(node.this) != (node.to.this == T.DECIMAL):
                new = _cast(node)
                if new is not None and new is not node:
                    node.replace(new)
            elif node.to.this == T.DECIMAL:
                node.replace(node.this)
            continue
        if not is_numeric(node) or isinstance(node, exp.Column) and isinstance(node.parent, exp.Dot):
            continue
        parent = node.parent
        if isinstance(node, exp.Literal) or isinstance(node, exp.Neg) and isinstance(node.this, exp.Literal):
            if isinstance(parent, exp.Neg) or isinstance(parent, _RAW_CONTEXTS) or \
                    isinstance(parent, exp.Anonymous) and "quantile" in parent.name.lower():
                continue
            if _keeps_struct(parent):
                text = node.this if isinstance(node, exp.Literal) else "-" + node.this.this
                node.replace(constant(text))
                continue
        if not _keeps_struct(parent) and not isinstance(parent, _RAW_CONTEXTS):
            node.replace(to_double(node.copy()))
    return tree
