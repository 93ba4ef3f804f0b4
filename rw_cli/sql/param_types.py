"""The types of a prepared statement's parameters that the client left unspecified, inferred
from where each `$n` stands, as PostgreSQL's parser infers them.

Drivers that encode parameters in binary (asyncpg) ask the server for the types in a
Describe and encode by the answer: `insert into t (id) values ($1)` must say integer, or the
driver refuses an int. The rules are PostgreSQL's for the common places:

- `$n::type` / `CAST($n AS type)`: the type;
- `INSERT INTO t [(cols)] VALUES (..., $n, ...)`: the target column's type;
- `UPDATE t SET c = $n`: c's type;
- `expr op $n` (comparison, arithmetic, LIKE, IN, BETWEEN): the other operand's type when it is
  a column of a relation in scope or a typed literal;
- `LIMIT $n` / `OFFSET $n`: bigint.

Anything else stays unknown (the caller reports text, PostgreSQL's resolution of an unknown).
"""
from __future__ import annotations

import re

import sqlglot
from sqlglot import exp

from rw_cli.common.types import DataType
from rw_cli.meta.catalog import Catalog
from rw_cli.sql.dialect import RwDialect
from rw_cli.sql.placeholders import placeholder_spans

_OPERATORS = (exp.EQ, exp.NEQ, exp.LT, exp.LTE, exp.GT, exp.GTE, exp.NullSafeEQ, exp.NullSafeNEQ,
              exp.Add, exp.Sub, exp.Mul, exp.Div, exp.Mod, exp.Like, exp.ILike)
_BIGINT = DataType.from_sql("bigint")


def infer_parameter_types(sql: str, catalog: Catalog, count: int) -> list[DataType | None]:
    """One entry per parameter $1..$count: its inferred type, or None."""
    out: list[DataType | None] = [None] * count
    try:
        tree = sqlglot.parse_one(sql, read=RwDialect)
    except (sqlglot.errors.ParseError, sqlglot.errors.TokenError):
        return out
    if tree is None:
        return out
    for param in tree.find_all(exp.Parameter):
        number = _number(param)
        if number is None or not 1 <= number <= count or out[number - 1] is not None:
            continue
        try:
            out[number - 1] = _type_at(param, catalog)
        except Exception:  # noqa: BLE001 - an inference that fails leaves the type unknown
            out[number - 1] = None
    return out


# a cast to an object identifier type right after a placeholder: `::oid`, `::pg_catalog.regclass[]`
_OID_CAST = re.compile(r"\s*::\s*(?:pg_catalog\.)?(?:oid|regclass|regtype|regproc|regnamespace)\b(\s*\[\s*\])?",
                       re.IGNORECASE)


def object_identifier_parameters(sql: str) -> dict[int, bool]:
    """Parameters cast to an object identifier type (`$1::oid[]`, asyncpg's type
    introspection), by number: whether it is an array. Their type is PostgreSQL's oid (or
    oid[]), which the parser reads as an integer (rw_cli.sql.dialect), but a driver encodes
    by the OID the server describes. Placeholders are found as the binder finds them (not in
    quotes or comments)."""
    out = {}
    for _, end, number in placeholder_spans(sql):
        m = _OID_CAST.match(sql, end)
        if m is not None:
            out[number] = m.group(1) is not None
    return out


def _number(param: exp.Parameter) -> int | None:
    inner = param.this
    if isinstance(inner, exp.Literal) and not inner.is_string and str(inner.this).isdigit():
        return int(inner.this)
    return None


def _type_at(param: exp.Expression, catalog: Catalog) -> DataType | None:
    node: exp.Expression = param
    while isinstance(node.parent, exp.Paren):
        node = node.parent
    parent = node.parent
    if isinstance(parent, exp.Cast) and node.arg_key == "this":
        return _sql_type(parent.to)
    if isinstance(parent, (exp.Limit, exp.Offset, exp.Fetch)):
        return _BIGINT
    if isinstance(parent, exp.Tuple) and isinstance(parent.parent, exp.Values):
        return _insert_target_type(parent, node, catalog)
    if isinstance(parent, exp.EQ) and node.arg_key == "expression" and isinstance(parent.parent, exp.Update) \
            and parent.arg_key == "expressions":
        return _column_type(parent.this, catalog)
    if isinstance(parent, _OPERATORS):
        other = parent.expression if node.arg_key == "this" else parent.this
        return _operand_type(other, catalog)
    if isinstance(parent, exp.In) and node.arg_key == "expressions":
        return _operand_type(parent.this, catalog)
    if isinstance(parent, exp.Between) and node.arg_key in ("low", "high"):
        return _operand_type(parent.this, catalog)
    return None


def _sql_type(to: exp.DataType) -> DataType | None:
    try:
        return DataType.from_sql(to.sql(dialect="postgres"))
    except Exception:  # noqa: BLE001 - a type rw does not know: unknown here, the binder says why
        return None


def _operand_type(other: exp.Expression, catalog: Catalog) -> DataType | None:
    while isinstance(other, exp.Paren):
        other = other.this
    if isinstance(other, exp.Cast):
        return _sql_type(other.to)
    if isinstance(other, exp.Column):
        return _column_type(other, catalog)
    if isinstance(other, exp.Literal) and not other.is_string:
        return DataType.from_sql("integer" if str(other.this).lstrip("-").isdigit() else "numeric")
    return None


def _column_type(column: exp.Expression, catalog: Catalog) -> DataType | None:
    """The type of a column of a relation the column's scope reads (FROM, joins, the
    target of UPDATE / DELETE), found by qualifier or as the one relation with that name."""
    if not isinstance(column, exp.Column):
        return None
    name = column.name
    qualifier = column.table
    for table in _tables_in_scope(column):
        if qualifier and qualifier not in (table.alias_or_name, table.name):
            continue
        rel = _relation(table, catalog)
        if rel is None:
            continue
        for c in rel.columns:
            if c.name == name and not c.hidden:
                return c.type
    return None


def _tables_in_scope(node: exp.Expression) -> list[exp.Table]:
    """The relations of the innermost statement around `node` (its own FROM and joins, not
    its subqueries')."""
    scope = node.find_ancestor(exp.Select, exp.Update, exp.Delete, exp.Insert)
    if scope is None:
        return []
    tables = []
    for key in ("this", "from", "from_", "joins", "using"):
        value = scope.args.get(key)
        for item in (value if isinstance(value, list) else [value]):
            if isinstance(item, exp.Table):
                tables.append(item)
            elif isinstance(item, (exp.From, exp.Join)) and isinstance(item.this, exp.Table):
                tables.append(item.this)
    return tables


def _relation(table: exp.Table, catalog: Catalog):
    if not isinstance(table.this, exp.Identifier):
        return None
    return catalog.get(catalog.qualified(table.name, table.db or None))


def _insert_target_type(row: exp.Tuple, node: exp.Expression, catalog: Catalog) -> DataType | None:
    """`INSERT INTO t [(cols)] VALUES (...)`: the type of the column the value goes to."""
    insert = row.find_ancestor(exp.Insert)
    if insert is None or row.find_ancestor(exp.Select) is not None:
        return None
    target = insert.this
    columns: list[str] | None = None
    if isinstance(target, exp.Schema):
        columns = [c.name for c in target.expressions]
        target = target.this
    if not isinstance(target, exp.Table):
        return None
    rel = _relation(target, catalog)
    if rel is None:
        return None
    visible = [c for c in rel.columns if not c.hidden]
    position = row.expressions.index(node)
    if columns is not None:
        if position >= len(columns):
            return None
        return next((c.type for c in visible if c.name == columns[position]), None)
    return visible[position].type if position < len(visible) else None
