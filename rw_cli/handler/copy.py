"""COPY table [(columns)] FROM STDIN: rows that arrived as text, cast to the table's columns
and inserted as one write (as INSERT does: one statement, one epoch's worth of changes).

The text of the rows is read by whoever received it (the wire protocol server); this
module only knows the table: which columns, and the casts (PostgreSQL's input rules, the
same as INSERT of text literals).
"""
from __future__ import annotations

import pyarrow as pa
from sqlglot import exp

from rw_cli.errors import BindError
from rw_cli.result import Result


def copy_in_width(session, table: str, columns: list[str] | None) -> int:
    """How many fields each row of a COPY FROM has (checks the table takes writes)."""
    from rw_cli.handler import dml

    rel = dml.target_table(session, exp.to_table(table))
    return len(columns) if columns else len([c for c in rel.columns if not c.hidden and not c.generated])


def copy_in(session, table: str, columns: list[str] | None, data: pa.Table) -> Result:
    """Insert `data` (text columns, one per target column) into `table`."""
    from rw_cli.handler import dml, utility

    utility.check_not_in_transaction(session, "COPY")
    session.catch_up()
    rel = dml.target_table(session, exp.to_table(table))
    if columns:
        for name in columns:
            if not any(c.name == name and not c.hidden for c in rel.columns):
                raise BindError(f'column "{name}" of relation "{rel.name}" does not exist')
        indices = [rel.column_index(n) for n in columns]
    else:
        indices = [i for i, c in enumerate(rel.columns) if not c.hidden and not c.generated]
    if data.num_columns != len(indices):
        raise BindError(f"COPY expects {len(indices)} column(s) per row, got {data.num_columns}")
    n = dml.insert_rows(session, rel, data, indices) if data.num_rows else 0
    return Result(f"COPY {n}")


def copy_out_columns(session, table: str, columns: list[str] | None) -> str:
    """COPY table [(columns)] TO: the query that reads it."""
    rel = session.catalog.must_get(table)
    names = columns or [c.name for c in rel.visible_columns]
    return "SELECT " + ", ".join(exp.to_identifier(n).sql("postgres") for n in names) + \
        " FROM " + exp.to_table(table).sql("postgres")
