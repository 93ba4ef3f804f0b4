"""The client side of the wire protocol: `rw --host H --port P` runs the shell and `-c`
against a running `rw serve` (or any PostgreSQL-protocol server) instead of a data directory.

`RemoteSession` has what the shell uses of a Session: `execute` / `execute_iter` (the simple
query protocol: several statements per call, errors with their position) and `close`. Rows
arrive as text, formatted by the server as the local CLI would format them; they are kept
as text (`RemoteResult.text_rows`), with each column's type from its OID, so the shell
aligns and exports them as it does locally. `catalog` reads the server's relations through
pg_catalog (again after a statement that may have changed them), so `\\d` and completion
work as they do locally.
"""
from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import socket
import struct
from collections.abc import Iterator
from dataclasses import dataclass, field

import pyarrow as pa

from rw_cli.common.types import VARCHAR, DataType
from rw_cli.errors import RwError
from rw_cli.result import Result
from rw_cli.server import protocol
from rw_cli.sql.pg_catalog import PG_TYPES

_TYPE_OF_OID = {oid: DataType(name) for name, (oid, _, _, _) in PG_TYPES.items()}


class RemoteError(RwError):
    """An ErrorResponse: its message, SQLSTATE (`code`), position and hint."""

    def __init__(self, message: str, *, code: str = "XX000", position: int | None = None, hint: str | None = None):
        super().__init__(message, position=position, hint=hint)
        self.code = code
        self.kind = {"42601": "syntax", "0A000": "not_supported"}.get(code, "remote")


class RemoteResult(Result):
    """A result whose rows are the server's text."""

    def __init__(self, status: str, columns: list[str] | None, types: list[DataType], rows: list[list[str | None]],
                 notices: list[str]):
        table = None
        if columns is not None:
            names = [c or f"?column{i}?" for i, c in enumerate(columns)]
            table = pa.table({f"c{i}": pa.array([r[i] for r in rows], pa.string()) for i in range(len(names))}) \
                .rename_columns(names) if names else pa.table({})
        super().__init__(status, table, types, notices)
        self._rows = rows

    def text_rows(self) -> list[list[str | None]]:
        return [list(r) for r in self._rows]


def _fields(body: bytes) -> dict[str, str]:
    """The fields of an ErrorResponse / NoticeResponse by their code letter."""
    out, pos = {}, 0
    while pos < len(body) and body[pos] != 0:
        end = body.index(b"\0", pos + 1)
        out[chr(body[pos])] = body[pos + 1:end].decode("utf-8", "replace")
        pos = end + 1
    return out


@dataclass
class RemoteColumn:
    name: str
    type: str
    hidden: bool = False


@dataclass
class RemoteRelation:
    id: int
    name: str
    kind: str
    columns: list[RemoteColumn] = field(default_factory=list)
    pk: list[int] = field(default_factory=list)
    definition: str = ""


@dataclass
class RemoteCatalog:
    """The server's relations, in the shape the shell reads a catalog (`relations` by id)."""

    relations: dict[int, RemoteRelation]

    @property
    def next_id(self) -> int:
        return max(self.relations, default=0) + 1


_KINDS = {"r": "table", "m": "materialized view", "v": "view"}
_CATALOG_QUERY = (
    "select c.oid, c.relname, c.relkind, a.attname, pg_catalog.format_type(a.atttypid, a.atttypmod), "
    "coalesce(v.definition, m.definition) from pg_catalog.pg_class c "
    "left join pg_catalog.pg_attribute a on a.attrelid = c.oid "
    "left join pg_catalog.pg_views v on v.viewname = c.relname "
    "left join pg_catalog.pg_matviews m on m.matviewname = c.relname order by c.oid, a.attnum")
_PK_QUERY = "select conrelid, conkey from pg_catalog.pg_constraint where contype = 'p'"


class RemoteSession:
    read_only = True  # the server runs the stream jobs; this process runs none

    def __init__(self, host: str, port: int, *, user: str = "root", database: str = "dev",
                 password: str | None = None, timeout_s: float = 30.0):
        self.data_dir = f"{host}:{port}"
        self.closed = False
        try:
            self.sock = socket.create_connection((host, port), timeout=timeout_s)
        except OSError as e:
            raise RwError(f'could not connect to server at "{host}", port {port}: {e.strerror or e}',
                          hint="is `rw serve` running there?") from None
        self.sock.settimeout(None)  # a long statement is not a dead server
        self.user, self.password = user, password
        self._catalog: RemoteCatalog | None = None
        body = protocol.cstr("user") + protocol.cstr(user) + protocol.cstr("database") + protocol.cstr(database) \
            + protocol.cstr("application_name") + protocol.cstr("rw") + b"\0"
        self.sock.sendall(struct.pack("!ii", len(body) + 8, protocol.PROTOCOL_3) + body)
        self._authenticate()
        self._until_ready([])

    # -- startup ----------------------------------------------------------------------------------
    def _authenticate(self) -> None:
        while True:
            kind, body = protocol.read_message(self.sock)
            if kind == b"E":
                f = _fields(body)
                raise RemoteError(f.get("M", "authentication failed"), code=f.get("C", "28000"))
            if kind != b"R":
                raise RwError(f"unexpected message {kind!r} during authentication")
            (code,) = struct.unpack("!i", body[:4])
            if code == 0:
                return
            if code == 3:  # cleartext password
                self.sock.sendall(protocol.message(b"p", protocol.cstr(self._need_password())))
            elif code == 10:
                self._scram(body[4:])
            else:
                raise RwError(f"unsupported authentication method {code}")

    def _need_password(self) -> str:
        if self.password is None:
            raise RwError("the server asks for a password", hint="set RW_PASSWORD (or PGPASSWORD)")
        return self.password

    def _scram(self, mechanisms: bytes) -> None:
        if b"SCRAM-SHA-256\0" not in mechanisms:
            raise RwError("the server offers no SASL mechanism rw knows (SCRAM-SHA-256)")
        password = self._need_password().encode("utf-8")
        nonce = base64.b64encode(secrets.token_bytes(18)).decode()
        first_bare = f"n=,r={nonce}"
        first = ("n,," + first_bare).encode()
        self.sock.sendall(protocol.message(b"p", protocol.cstr("SCRAM-SHA-256") + struct.pack("!i", len(first)) + first))
        kind, body = protocol.read_message(self.sock)
        if kind == b"E":
            raise RemoteError(_fields(body).get("M", "authentication failed"), code="28P01")
        server_first = body[4:].decode()
        attrs = dict(p.split("=", 1) for p in server_first.split(","))
        if not attrs["r"].startswith(nonce):
            raise RwError("the server's SCRAM nonce does not extend ours")
        salted = hashlib.pbkdf2_hmac("sha256", password, base64.b64decode(attrs["s"]), int(attrs["i"]))
        client_key = hmac.new(salted, b"Client Key", hashlib.sha256).digest()
        without_proof = f"c=biws,r={attrs['r']}"
        auth_message = f"{first_bare},{server_first},{without_proof}".encode()
        signature = hmac.new(hashlib.sha256(client_key).digest(), auth_message, hashlib.sha256).digest()
        proof = base64.b64encode(bytes(a ^ b for a, b in zip(client_key, signature))).decode()
        self.sock.sendall(protocol.message(b"p", f"{without_proof},p={proof}".encode()))
        kind, body = protocol.read_message(self.sock)
        if kind == b"E":
            raise RemoteError(_fields(body).get("M", "authentication failed"), code="28P01")
        server_key = hmac.new(salted, b"Server Key", hashlib.sha256).digest()
        expected = base64.b64encode(hmac.new(server_key, auth_message, hashlib.sha256).digest()).decode()
        if body[4:].decode() != f"v={expected}":
            raise RwError("the server did not prove it knows the password")

    def _until_ready(self, notices: list[str]) -> None:
        while True:
            kind, body = protocol.read_message(self.sock)
            if kind == b"Z":
                return
            if kind == b"N":
                notices.append(_fields(body).get("M", ""))
            elif kind == b"E":
                f = _fields(body)
                raise RemoteError(f.get("M", "error"), code=f.get("C", "XX000"))

    # -- the catalog ------------------------------------------------------------------------------
    @property
    def catalog(self) -> RemoteCatalog | None:
        """The server's relations, read when first asked and again after a statement that may
        have changed them; None when the server cannot say (not an rw, say)."""
        if self._catalog is None:
            try:
                self._catalog = self._read_catalog()
            except RwError:
                return None
        return self._catalog

    def _read_catalog(self) -> RemoteCatalog:
        rels: dict[int, RemoteRelation] = {}
        for oid, name, kind, column, type_name, definition in self._rows(_CATALOG_QUERY):
            rel = rels.setdefault(int(oid), RemoteRelation(int(oid), name, _KINDS.get(kind, "table"),
                                                           definition=definition or ""))
            if column is not None:
                rel.columns.append(RemoteColumn(column, type_name or ""))
        for relid, key in self._rows(_PK_QUERY):
            if int(relid) in rels and key:
                rels[int(relid)].pk = [int(k) - 1 for k in key.strip("{}").split(",") if k.strip()]
        return RemoteCatalog(rels)

    def _rows(self, sql: str) -> list[list[str | None]]:
        result = None
        for result in self._execute(sql):
            pass
        return result.text_rows() if result is not None else []

    # -- statements -------------------------------------------------------------------------------
    def execute(self, sql: str) -> Result:
        result: Result = Result("EMPTY")
        for result in self.execute_iter(sql):
            pass
        return result

    def execute_iter(self, sql: str) -> Iterator[Result]:
        """Each statement's result as it completes; an error after the statements before
        it, once the server is ready again."""
        try:
            for result in self._execute(sql):
                if not result.status.startswith(("SELECT", "SHOW", "FLUSH", "SET", "BEGIN", "COMMIT", "ROLLBACK")):
                    self._catalog = None  # DDL may have changed it
                yield result
        except RwError:
            self._catalog = None
            raise

    def _execute(self, sql: str) -> Iterator[Result]:
        if self.closed:
            raise RwError("the connection is closed")
        self.sock.sendall(protocol.message(b"Q", protocol.cstr(sql)))
        columns, types, rows, notices = None, [], [], []
        error: RemoteError | None = None
        done: list[Result] = []
        try:
            while True:
                kind, body = protocol.read_message(self.sock)
                if kind == b"T":
                    columns, types, rows = self._row_description(body)
                elif kind == b"D":
                    rows.append(self._data_row(body))
                elif kind == b"C":
                    done.append(RemoteResult(body.rstrip(b"\0").decode(), columns, types, rows, notices))
                    columns, types, rows, notices = None, [], [], []
                elif kind == b"I":
                    done.append(RemoteResult("", None, [], [], notices))
                elif kind == b"N":
                    notices.append(_fields(body).get("M", ""))
                elif kind == b"E":
                    f = _fields(body)
                    pos = int(f["P"]) - 1 if f.get("P", "").isdigit() else None
                    error = RemoteError(f.get("M", "error"), code=f.get("C", "XX000"), position=pos, hint=f.get("H"))
                elif kind == b"G":  # COPY FROM STDIN: nothing to send from here
                    self.sock.sendall(protocol.message(b"f", protocol.cstr("COPY FROM STDIN is not supported by rw's client")))
                elif kind == b"Z":
                    break
                while done:
                    yield done.pop(0)
        except (OSError, protocol.ClientGone) as e:
            self.closed = True
            raise RwError(f"the connection to the server was lost: {e}") from None
        if error is not None:
            raise error

    @staticmethod
    def _row_description(body: bytes) -> tuple[list[str], list[DataType], list]:
        r = protocol.Reader(body)
        names, types = [], []
        for _ in range(r.int16()):
            names.append(r.cstring())
            r.bytes_(6)  # table oid, column number
            oid = r.int32()
            r.bytes_(8)  # type size, type modifier, format
            types.append(_TYPE_OF_OID.get(oid, VARCHAR))
        return names, types, []

    @staticmethod
    def _data_row(body: bytes) -> list[str | None]:
        r = protocol.Reader(body)
        out: list[str | None] = []
        for _ in range(r.int16()):
            n = r.int32()
            out.append(None if n < 0 else r.bytes_(n).decode("utf-8", "replace"))
        return out

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        try:
            self.sock.sendall(protocol.message(b"X"))
            self.sock.close()
        except OSError:
            pass
