"""Expressions that the catalog stores as PostgreSQL SQL text (a table's watermark, a
source's generated columns), compiled to DuckDB SQL over the relation's positional columns
when its job is built or rebuilt."""
from __future__ import annotations

import sqlglot
from sqlglot import exp

from rw_cli.common.types import DataType
from rw_cli.engine.expr import Expr
from rw_cli.errors import BindError
from rw_cli.meta.catalog import ROW_ID, RelationCatalog
from rw_cli.sql.dialect import parse_statement
from rw_cli.sql.expr_compile import compile_expr
from rw_cli.sql.transpile import expr_to_duckdb


def watermark_expr(rel: RelationCatalog) -> tuple[str, DataType] | None:
    """The table's watermark expression as DuckDB SQL over its positional columns, and the
    type of its column (None without a watermark)."""
    if not rel.watermark:
        return None
    col, text = rel.watermark[:2]
    tree = sqlglot.parse_one(text, read="postgres")
    names = [c.name for c in rel.columns]
    tree = tree.transform(lambda n: exp.column(f"_{names.index(n.name)}") if isinstance(n, exp.Column) else n)
    return expr_to_duckdb(tree, [c.type for c in rel.columns]), rel.columns[names.index(col)].type


def check_watermark_type(rel: RelationCatalog, expr: str, column_type: DataType) -> None:
    """The expression must have the column's type (RisingWave's check, made when the
    watermark is bound: CREATE TABLE makes it before any other check of the watermark)."""
    import pyarrow as pa

    from rw_cli.engine import duck

    empty = pa.schema([pa.field(f"_{i}", c.type.arrow()) for i, c in enumerate(rel.columns)]).empty_table()
    try:
        result = duck.query(f"SELECT {expr} AS w FROM t", {"t": empty})
    except Exception as e:  # noqa: BLE001 - DuckDB's binder says what is wrong with it
        raise BindError(f"invalid watermark expression: {e}") from None
    got = DataType.from_field(result.schema.field(0))
    if got != column_type:
        raise BindError("The return value type of the watermark expression must be identical to the "
                        f"watermark column data type. Current data type of watermark return value: `{got.name}`, "
                        f"column `{column_type.name}`")


def generated_exprs(rel: RelationCatalog) -> list[tuple[int, Expr]]:
    """(position, its compiled expression over the source's read columns `_0..`) per
    generated column (strict: a value that fails to compute is the row's error)."""
    generated = (rel.connector or {}).get("generated") or {}
    if not generated:
        return []
    read = [c for c in rel.columns if c.name not in generated and not (c.name == ROW_ID and c.hidden)]
    pos = {c.name: i for i, c in enumerate(read)}
    out = []
    for i, c in enumerate(rel.columns):
        if c.name not in generated:
            continue
        tree = parse_statement(f"SELECT {generated[c.name]}").expressions[0]

        def positional(n):
            if isinstance(n, exp.Column) and not n.table:
                if n.name not in pos:
                    raise BindError(f'column "{n.name}" does not exist')
                return exp.column(f"_{pos[n.name]}")
            return n
        tree = exp.Cast(this=tree.transform(positional), to=exp.DataType.build(c.type.duckdb()))
        out.append((i, compile_expr(tree, [x.type for x in read], c.type, strict=True)))
    return out
