"""RisingWave's e2e_test/extended_mode files (they need a client speaking the extended
protocol, so they are not in visible.tsv) run through psycopg against `rw serve`, with the
slt runner's own checks: one server per file, each statement sent with Parse/Bind/Execute."""
from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pytest

psycopg = pytest.importorskip("psycopg")

from rw_cli.errors import RwError  # noqa: E402
from rw_cli.result import Result  # noqa: E402
from rw_cli.slt.runner import run_file  # noqa: E402
from rw_server import rw_server  # noqa: E402

pytestmark = [pytest.mark.xdist_group("pgwire"), pytest.mark.slow]

FOLDER = Path(__file__).resolve().parents[3] / "shared" / "conformance" / "e2e_test" / "extended_mode"
FILES = ("basic.slt", "type.slt", "issue_21949.slt")


class TextResult(Result):
    def __init__(self, status: str, rows: list[tuple] | None, ncols: int):
        import pyarrow as pa

        table = None if rows is None else pa.table({f"c{i}": pa.array([r[i] for r in rows], pa.string())
                                                    for i in range(ncols)})
        super().__init__(status, table, [])
        self._rows = rows or []

    def text_rows(self):
        return [list(r) for r in self._rows]


class PsycopgSession:
    """What the slt runner needs of a session, over psycopg's extended protocol; every
    value is loaded as the server's text."""

    def __init__(self, data_dir: str):
        self._server = rw_server(Path(data_dir))
        port = self._server.__enter__()
        self.conn = psycopg.connect(host="127.0.0.1", port=port, user="root", dbname="dev", autocommit=True)
        from psycopg.types.string import TextLoader

        for oid in (16, 17, 20, 21, 23, 25, 700, 701, 1043, 1082, 1083, 1114, 1184, 1186, 1700, 3802, 2249,
                    1000, 1005, 1007, 1009, 1015, 1016, 1021, 1022, 1182, 1183, 1115, 1185, 1187, 1231, 3807):
            self.conn.adapters.register_loader(oid, TextLoader)

    def execute(self, sql: str) -> Result:
        try:
            cur = self.conn.execute(sql.strip().rstrip(";"))
        except psycopg.Error as e:
            raise RwError(e.diag.message_primary or str(e)) from None
        rows = cur.fetchall() if cur.description is not None else None
        return TextResult(cur.statusmessage or "", rows, len(cur.description or []))

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.conn.close()
        self._server.__exit__(None, None, None)


@pytest.mark.skipif(not FOLDER.is_dir(), reason="the conformance files are not here")
@pytest.mark.parametrize("name", FILES)
def test_extended_mode_files(name, tmp_path):
    """Through the wire every record does what it does in-process (the failures left are
    the engine's: EXPLAIN CREATE INDEX, DESCRIBE's serial, extreme intervals...)."""
    wire, local = io.StringIO(), io.StringIO()
    over_wire = run_file(str(FOLDER / name), keep_going=True, data_dir=str(tmp_path / "wire"), engine="embedded",
                         out=wire, session_factory=lambda data_dir, engine: PsycopgSession(data_dir))
    in_process = run_file(str(FOLDER / name), keep_going=True, data_dir=str(tmp_path / "local"), engine="embedded",
                          out=local)
    print(f"{name}: {over_wire.passed} passed, {over_wire.failed} failed through psycopg; "
          f"{in_process.passed} passed, {in_process.failed} failed in-process")
    assert (over_wire.passed, over_wire.failed) == (in_process.passed, in_process.failed), wire.getvalue()[-3000:]
    assert over_wire.passed + over_wire.failed > 0
