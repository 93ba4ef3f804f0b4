"""ALTER TABLE t DROP [COLUMN] [IF EXISTS] c: the column and its values go.

A key column, a watermark's or version column, or one a generated column computes from
stays; so does one a downstream job reads (RisingWave's message). The rows are rewritten and
the jobs rebuilt from the catalog (as on a restart), as ADD COLUMN does.
"""
from __future__ import annotations

import pyarrow as pa
from sqlglot import exp

from rw_cli.errors import BindError, CatalogError, RwError
from rw_cli.meta.catalog import SINK, TABLE
from rw_cli.result import Result

_REFERENCED = "unable to drop or alter the column due to being referenced by downstream materialized views or sinks"


def handle(session, tree: exp.Alter, drop: exp.Drop) -> Result:
    from rw_cli.handler.access import find_relation
    from rw_cli.handler.alter_column_type import check_downstream, rewrite_table

    table = tree.this
    rel = find_relation(session.catalog, f"{table.text('db')}.{table.name}" if table.text("db") else table.name,
                        TABLE)
    if any(r.kind == SINK and r.target == rel.id for r in session.catalog.relations.values()):
        raise BindError("dropping columns in target table of sinks is not supported")
    name = drop.args["tables"][0].name
    idx = next((i for i, c in enumerate(rel.columns) if c.name == name and not c.hidden), None)
    if idx is None:
        if drop.args.get("exists"):
            return Result("ALTER_TABLE", notices=[f'column "{name}" of relation "{rel.name}" does not exist, skipping'])
        raise CatalogError(f'column "{name}" of table "{rel.name}" does not exist')
    if idx in rel.pk or idx in rel.version_columns or (rel.watermark and rel.watermark[0] == name):
        raise BindError(f'cannot drop column "{name}": it is in the primary key, a version column or the watermark')
    if any(c.generated and name in c.generated for c in rel.columns) or rel.connector:
        raise BindError(f'cannot drop column "{name}" of "{rel.name}": generated columns or a connector use it')
    old_columns, old_pk, old_versions = list(rel.columns), list(rel.pk), list(rel.version_columns)

    def change() -> None:
        rel.columns = old_columns[:idx] + old_columns[idx + 1:]
        rel.pk = [k - (k > idx) for k in old_pk]
        rel.version_columns = [k - (k > idx) for k in old_versions]

    def undo() -> None:
        rel.columns, rel.pk, rel.version_columns = old_columns, old_pk, old_versions

    try:
        check_downstream(session, rel, change, undo)
    except RwError as e:  # a downstream job reads it: it no longer plans, or its columns change
        raise BindError(_REFERENCED, hint=e.message) from None

    def rewrite(rows: pa.Table) -> pa.Table:
        change()
        return rows.remove_column(idx)
    rewrite_table(session, rel, rewrite)
    rel.comments.pop(name, None)
    return Result("ALTER_TABLE")
