"""ALTER TABLE t ADD [COLUMN] [IF NOT EXISTS] name type [DEFAULT expr]: a new column, after
the table's visible columns.

The rows already there take the default as it is computed once, now (RisingWave's snapshot
value: `DEFAULT now()` gives every existing row the time of the ALTER, and each later insert
its own time), or NULL. The rows are rewritten and the jobs rebuilt from the catalog (as on a
restart); a downstream job whose own columns would change (an MV over `SELECT *`) is in the
way, as the change would have to replan it.
"""
from __future__ import annotations

import pyarrow as pa
from sqlglot import exp

from rw_cli.common import numeric
from rw_cli.errors import BindError, NotSupported
from rw_cli.meta.catalog import TABLE, ColumnCatalog
from rw_cli.result import Result


def handle(session, tree: exp.Alter, column: exp.ColumnDef) -> Result:
    from rw_cli.handler.access import find_relation
    from rw_cli.handler.alter_column_type import check_downstream, rewrite_table
    from rw_cli.handler.create_table import column_type

    table = tree.this
    rel = find_relation(session.catalog, f"{table.text('db')}.{table.name}" if table.text("db") else table.name,
                        TABLE)
    name = column.name
    if any(c.name == name for c in rel.columns):
        if column.args.get("exists"):
            return Result("ALTER_TABLE", notices=[f'column "{name}" of relation "{rel.name}" already exists, skipping'])
        raise BindError(f'column "{name}" of table "{rel.name}" already exists')
    if column.args.get("kind") is None:
        raise BindError(f'column "{name}" needs a type')
    if rel.connector:
        raise NotSupported("ALTER TABLE ... ADD COLUMN of a table with a connector")
    new = ColumnCatalog(name, column_type(column.args["kind"]))
    for c in column.args.get("constraints") or []:
        if isinstance(c.kind, exp.DefaultColumnConstraint):
            new.default = c.kind.this.sql(dialect="postgres")
        elif isinstance(c.kind, exp.NotNullColumnConstraint) and not c.kind.args.get("allow_null"):
            new.not_null = True
        elif isinstance(c.kind, exp.PrimaryKeyColumnConstraint):
            raise NotSupported("alter primary key of a table (ADD COLUMN ... PRIMARY KEY)")
        elif not isinstance(c.kind, exp.NotNullColumnConstraint):
            raise NotSupported(f"{type(c.kind).__name__} in ALTER TABLE ... ADD COLUMN")
    if new.not_null and new.default is None:  # RisingWave refuses it even on an empty table
        raise BindError("alter table add NOT NULL columns must have default value")
    at = next((i for i, c in enumerate(rel.columns) if c.hidden), len(rel.columns))
    old_columns, old_pk, old_versions = list(rel.columns), list(rel.pk), list(rel.version_columns)

    def change() -> None:
        rel.columns = old_columns[:at] + [new] + old_columns[at:]
        rel.pk = [k + (k >= at) for k in old_pk]
        rel.version_columns = [k + (k >= at) for k in old_versions]

    def undo() -> None:
        rel.columns, rel.pk, rel.version_columns = old_columns, old_pk, old_versions

    check_downstream(session, rel, change, undo)
    fill = _default_value(session, new)
    if new.not_null and not fill.is_valid and _has_rows(session, rel):
        raise BindError(f'column "{name}" of relation "{rel.name}" contains null values')

    def rewrite(rows: pa.Table) -> pa.Table:
        change()
        values = pa.repeat(fill, rows.num_rows) if fill.is_valid else pa.nulls(rows.num_rows, new.type.arrow())
        return rows.add_column(at, name, numeric.cast(values, new.type.arrow()))
    rewrite_table(session, rel, rewrite)
    return Result("ALTER_TABLE")


def _has_rows(session, rel) -> bool:
    from rw_cli.handler.dml import relation_table
    from rw_cli.handler.query import run_query

    data, _ = run_query(session, exp.select("1").from_(relation_table(session.catalog, rel).copy()).limit(1))
    return data.num_rows > 0


def _default_value(session, column: ColumnCatalog) -> pa.Scalar:
    """The column's default, computed once (NULL without one)."""
    from rw_cli.handler.query import run_query
    from rw_cli.sql.dialect import parse_statement

    if column.default is None:
        return pa.scalar(None, column.type.arrow())
    data, _ = run_query(session, parse_statement(f"SELECT CAST(({column.default}) AS {column.type.name})"))
    return numeric.cast(data.column(0), column.type.arrow())[0]
