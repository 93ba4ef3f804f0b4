"""A stand-in for rw_cli.session.Session in tests: DuckDB in memory, Result objects out."""
from __future__ import annotations

import re
import warnings

import duckdb

from rw_cli.common.types import DataType
from rw_cli.errors import RwError
from rw_cli.result import Result
from rw_cli.sql.split import split_statements

_ROWS = re.compile(r"^\s*(select|values|with|show|describe|table)\b", re.I)


class FakeSession:
    instances: list["FakeSession"] = []

    def __init__(self, data_dir: str, engine: str = "embedded"):
        self.data_dir = data_dir
        self.engine = engine
        self.con = duckdb.connect()
        self.closed = False
        self.executed: list[str] = []
        FakeSession.instances.append(self)

    def _one(self, stmt: str, offset: int) -> Result:
        self.executed.append(stmt)
        if stmt.lower().startswith("flush"):
            return Result("FLUSH")
        if stmt.lower().startswith("fail"):
            raise RwError("forced failure", position=offset + 5 if len(stmt) > 5 else None, hint="test hint")
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                cur = self.con.execute(stmt)
                table = cur.to_arrow_table()
        except duckdb.Error as e:
            raise RwError(str(e).split("\n")[0]) from None
        if _ROWS.match(stmt):
            return Result(f"SELECT {table.num_rows}", table, [DataType.from_arrow(f.type) for f in table.schema])
        words = stmt.split()
        if words[0].lower() == "insert":
            return Result(f"INSERT 0 {table.column(0)[0].as_py() if table.num_rows else 0}")
        return Result("_".join(w.upper() for w in words[:2]))

    def execute_iter(self, sql: str):
        for stmt, off in split_statements(sql):
            yield self._one(stmt, off)

    def execute(self, sql: str) -> Result:
        last = Result("EMPTY")
        for r in self.execute_iter(sql):
            last = r
        return last

    def close(self):
        self.closed = True
        self.con.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def factory(data_dir, engine):
    return FakeSession(data_dir, engine)
