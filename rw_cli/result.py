"""The result of one statement: rows as an Arrow table, plus the command tag."""
from __future__ import annotations

from dataclasses import dataclass, field

import pyarrow as pa

from rw_cli.common import numeric
from rw_cli.common.types import DataType


@dataclass
class Result:
    """What `Session.execute` returns.

    `table` is None for statements that return no rows (DDL, DML without RETURNING);
    `status` is PostgreSQL's command tag (`CREATE_TABLE`, `INSERT 0 3`, `SELECT 2`, `FLUSH`).
    """

    status: str
    table: pa.Table | None = None
    types: list[DataType] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    copy_out: str | None = None  # COPY ... TO STDOUT: the data, in COPY's text or csv format

    @property
    def has_rows(self) -> bool:
        return self.table is not None

    @property
    def columns(self) -> list[str]:
        return list(self.table.column_names) if self.table is not None else []

    @property
    def rowcount(self) -> int:
        return self.table.num_rows if self.table is not None else 0

    def arrow(self) -> pa.Table:
        """The rows as Arrow; numerics as Arrow decimals (rw_cli.common.numeric.plain)."""
        if self.table is None:
            return pa.table({})
        return numeric.plain_table(self.table)

    def df(self):
        """The rows as a pandas DataFrame."""
        return self.arrow().to_pandas()

    def pl(self):
        """The rows as a polars DataFrame (zero-copy from Arrow where polars can)."""
        try:
            import polars
        except ImportError:
            from rw_cli.errors import NotSupported

            raise NotSupported("Result.pl() without polars", hint="pip install polars") from None
        return polars.from_arrow(self.arrow())

    def fetchall(self) -> list[tuple]:
        if self.table is None:
            return []
        cols = [numeric.python_values(c) for c in self.table.columns]
        return list(zip(*cols)) if cols else []

    def text_rows(self) -> list[list[str | None]]:
        """Rows as PostgreSQL prints them (None for NULL), column by column, vectorized."""
        from rw_cli.common.pg_text import format_column

        if self.table is None:
            return []
        cols = [format_column(self.table.column(i), t) for i, t in enumerate(self.types)]
        return [list(r) for r in zip(*cols)] if cols else [[] for _ in range(self.table.num_rows)]
