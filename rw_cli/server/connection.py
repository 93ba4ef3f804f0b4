"""One client connection: startup, authentication, then the simple and extended query loop.

Runs in its own thread. Statements go to `Server.execute` (the shared session, under its
mutex); their results are encoded and sent here, outside the lock. Output is buffered and
sent at ReadyForQuery, Flush, and whenever a result's rows are written.
"""
from __future__ import annotations

import socket
import struct
from collections.abc import Callable
from dataclasses import dataclass

from rw_cli.errors import RwError, SqlSyntaxError
from rw_cli.result import Result
from rw_cli.server import pgtypes, protocol
from rw_cli.server.auth import AuthFailed, scram_exchange
from rw_cli.sql.placeholders import parameter_count, substitute, substitute_mapped
from rw_cli.server.sqlstate import sqlstate

# ParameterStatus is sent for these at startup and whenever SET changes one (GUC_REPORT)
REPORTED = {"server_version": "server_version", "server_encoding": "server_encoding",
            "client_encoding": "client_encoding", "DateStyle": "datestyle", "TimeZone": "timezone",
            "IntervalStyle": "intervalstyle", "integer_datetimes": "integer_datetimes",
            "standard_conforming_strings": "standard_conforming_strings", "application_name": "application_name"}
FIXED_STATUS = {"is_superuser": "on", "session_authorization": "root"}
ROWS_PER_MESSAGE_BATCH = 4096  # rows encoded (vectorized, per column) and sent at a time


@dataclass
class Prepared:
    sql: str
    param_oids: list[int]


@dataclass
class Portal:
    sql: str
    result_formats: list[int]
    result: Result | None = None
    sent: int = 0  # rows already sent by Execute
    to_original: Callable[[int], int] | None = None  # a position in `sql` -> in the prepared text

    def format_of(self, i: int) -> int:
        if not self.result_formats:
            return 0
        return self.result_formats[0] if len(self.result_formats) == 1 else self.result_formats[i]


@dataclass
class _Failed(Exception):
    """An ErrorResponse to send (the extended protocol then skips to Sync)."""

    err: BaseException
    sql: str | None = None
    offset: int = 0


class Connection:
    def __init__(self, server, sock: socket.socket, address: str):
        self.server = server
        self.sock = sock
        self.address = address
        self.state = None
        self.out: list[bytes] = []
        self.prepared: dict[str, Prepared] = {}
        self.portals: dict[str, Portal] = {}
        self.skip_to_sync = False

    # -- I/O --------------------------------------------------------------------------------------
    def send(self, data: bytes) -> None:
        self.out.append(data)

    def flush(self) -> None:
        if self.out:
            data, self.out = b"".join(self.out), []
            self.sock.sendall(data)

    # -- life -------------------------------------------------------------------------------------
    def run(self) -> None:
        try:
            if self.startup():
                self.loop()
        except (protocol.ClientGone, ConnectionError, socket.timeout, OSError, protocol.ProtocolError):
            pass
        finally:
            if self.state is not None:
                self.server.unregister(self.state)
            try:
                self.sock.close()
            except OSError:
                pass

    def startup(self) -> bool:
        """The startup packets up to the first ReadyForQuery; False when the connection ends
        there (a CancelRequest, failed authentication)."""
        while True:
            packet = protocol.read_startup(self.sock)
            if packet.code in (protocol.SSL_REQUEST, protocol.GSSENC_REQUEST):
                if packet.code == protocol.SSL_REQUEST and self.server.ssl_context is not None:
                    self.sock.sendall(b"S")
                    self.sock = self.server.ssl_context.wrap_socket(self.sock, server_side=True)
                else:
                    self.sock.sendall(b"N")
                continue
            if packet.code == protocol.CANCEL_REQUEST:
                self.server.cancel(*packet.cancel_key())
                return False
            if packet.code >> 16 != 3:
                self.sock.sendall(protocol.error_msg("0A000", f"unsupported frontend protocol {packet.code >> 16}."
                                                              f"{packet.code & 0xFFFF}", severity="FATAL"))
                return False
            break
        params = packet.params()
        user = params.get("user", "root")
        if self.server.verifier is None and not self.from_loopback():
            self.sock.sendall(protocol.error_msg(
                "28000", f'no password is configured: connections from "{self.address}" are refused',
                severity="FATAL", hint="start rw serve with --password (or RW_PASSWORD) to accept other hosts"))
            return False
        if self.server.verifier is not None:
            try:
                scram_exchange(self.sock, self.server.verifier, user)
            except AuthFailed as e:
                self.sock.sendall(protocol.error_msg("28P01", str(e), severity="FATAL"))
                return False
        self.state = self.server.register(user, params.get("database", "dev"), self.address)
        self.send(protocol.auth_ok_msg())
        for name, value in self._startup_settings(params):
            try:
                self.state.settings.set(name, value)
            except RwError as e:
                self.send(protocol.notice_msg(e.message, severity="WARNING", code="22023"))
        for name, key in REPORTED.items():
            self.send(protocol.parameter_status_msg(name, self.state.settings.show(key)))
        for name, value in FIXED_STATUS.items():
            self.send(protocol.parameter_status_msg(name, value))
        self.send(protocol.backend_key_data_msg(self.state.pid, self.state.secret))
        self.ready()
        return True

    def from_loopback(self) -> bool:
        """Trust (no password) is for this machine only, as PostgreSQL's default pg_hba."""
        import ipaddress

        host = self.address.rsplit(":", 1)[0].strip("[]")
        try:
            address = ipaddress.ip_address(host)
        except ValueError:
            return False
        mapped = getattr(address, "ipv4_mapped", None)
        return address.is_loopback or (mapped is not None and mapped.is_loopback)

    @staticmethod
    def _startup_settings(params: dict[str, str]) -> list[tuple[str, str]]:
        """Settings a StartupMessage carries: its own keys and `options` (`-c name=value`)."""
        out = [(k, v) for k, v in params.items() if k not in ("user", "database", "options", "replication")]
        words = params.get("options", "").replace("--", "-c ").split()
        for i, w in enumerate(words):
            if w == "-c" and i + 1 < len(words) and "=" in words[i + 1]:
                name, _, value = words[i + 1].partition("=")
                out.append((name, value))
        return out

    def ready(self) -> None:
        self.send(protocol.ready_for_query_msg("T" if self.state.in_transaction else "I"))
        self.flush()

    def loop(self) -> None:
        handlers = {b"Q": self.on_query, b"P": self.on_parse, b"B": self.on_bind, b"D": self.on_describe,
                    b"E": self.on_execute, b"C": self.on_close}
        while True:
            kind, body = self._next_message()
            if kind == b"X":
                return
            if kind == b"S":
                self.skip_to_sync = False
                self.portals.pop("", None)
                self.ready()
                continue
            if kind == b"H":
                self.flush()
                continue
            if kind in (b"d", b"c", b"f"):  # COPY data outside COPY: ignored, as PostgreSQL does
                continue
            handler = handlers.get(kind)
            if handler is None:
                self.send(protocol.error_msg("08P01", f"invalid frontend message type {kind!r}", severity="FATAL"))
                self.flush()
                return
            if self.skip_to_sync and kind != b"Q":
                continue
            try:
                handler(body)
            except _Failed as f:
                self.send_error(f.err, f.sql, f.offset)
                if kind == b"Q":
                    self.ready()
                else:
                    self.skip_to_sync = True

    def _next_message(self) -> tuple[bytes, bytes]:
        """The next message: an idle client may wait as long as it likes before sending one
        (TCP keepalive notices a dead peer); once it sends, the rest must come in time."""
        self.sock.settimeout(None)
        first = protocol.recv_exact(self.sock, 1)
        self.sock.settimeout(self.server.client_timeout_s)
        return protocol.read_message(self.sock, first)

    def send_error(self, err: BaseException, sql: str | None = None, offset: int = 0) -> None:
        if not isinstance(err, RwError):
            from rw_cli.errors import InternalError

            err = InternalError.of(err)
        position = None
        if err.position is not None and sql is not None:
            position = offset + err.position + 1
        self.send(protocol.error_msg(sqlstate(err), err.message, position=position, hint=err.hint))

    # -- statements -------------------------------------------------------------------------------
    def execute(self, sql: str) -> Result:
        """One statement, with the statements the server answers itself."""
        from rw_cli.server.copy import copy_kind

        words = sql.split()
        if [w.lower() for w in words[:2]] == ["show", "processlist"] and len(words) == 2:
            self.state.query = sql  # it lists itself running it
            return self.server.processlist()
        if copy_kind(sql) is not None:
            from rw_cli.server.copy import run_copy

            return run_copy(self, sql)
        before = {name: self.state.settings.show(key) for name, key in REPORTED.items()}
        result = self.server.execute(self.state, sql)
        for note in result.notices:
            self.send(protocol.notice_msg(note))
        for name, key in REPORTED.items():
            if (value := self.state.settings.show(key)) != before[name]:
                self.send(protocol.parameter_status_msg(name, value))
        return result

    def row_description(self, result: Result, formats: Portal | None = None) -> bytes:
        fields = []
        for i, (name, t) in enumerate(zip(result.columns, result.types)):
            fields.append(protocol.Field(name, pgtypes.type_oid(t), pgtypes.type_size(t),
                                         formats.format_of(i) if formats else 0))
        return protocol.row_description_msg(fields)

    def send_rows(self, result: Result, start: int, stop: int, portal: Portal | None = None) -> None:
        """DataRow messages of rows [start, stop), encoded column by column."""
        table = result.table
        for lo in range(start, stop, ROWS_PER_MESSAGE_BATCH):
            part = table.slice(lo, min(stop, lo + ROWS_PER_MESSAGE_BATCH) - lo)
            cols = [pgtypes.encode_column(part.column(i), t, portal.format_of(i) if portal else 0)
                    for i, t in enumerate(result.types)]
            rows = zip(*cols) if cols else ([] for _ in range(part.num_rows))
            self.out.extend(protocol.data_row_msg(list(row)) for row in rows)
            self.flush()

    # -- simple query -----------------------------------------------------------------------------
    def on_query(self, body: bytes) -> None:
        from rw_cli.sql.split import split_statements

        query = protocol.Reader(body).cstring()
        statements = split_statements(query)
        if not statements:
            self.send(protocol.empty_query_msg())
        for text, offset in statements:
            try:
                result = self.execute(text)
            except _Failed:
                raise
            except Exception as e:  # noqa: BLE001 - every failure is an ErrorResponse
                raise _Failed(e, text, offset) from e
            if result.has_rows:
                self.send(self.row_description(result))
                self.send_rows(result, 0, result.rowcount)
            self.send(protocol.command_complete_msg(result.status))
        self.ready()

    # -- extended query ---------------------------------------------------------------------------
    def on_parse(self, body: bytes) -> None:
        from rw_cli.sql.split import split_statements

        name, query, oids = protocol.parse_parse(body)
        if len(split_statements(query)) > 1:
            raise _Failed(SqlSyntaxError("cannot insert multiple commands into a prepared statement"))
        if name and name in self.prepared:
            raise _Failed(RwError(f'prepared statement "{name}" already exists'))
        n = max(parameter_count(query), len(oids))
        oids = oids + [0] * (n - len(oids))
        if 0 in oids:
            oids = self._inferred_oids(query, oids)
        self.prepared[name] = Prepared(query, oids)
        self.send(protocol.parse_complete_msg())

    def _inferred_oids(self, query: str, oids: list[int]) -> list[int]:
        """The client's parameter types, each one it left unspecified (0) inferred from where
        the parameter stands (rw_cli.sql.param_types), when PostgreSQL has that type."""
        from rw_cli.sql.param_types import infer_parameter_types, object_identifier_parameters

        inferred = self.server.run_as(self.state, query,
                                      lambda session: infer_parameter_types(query, session.catalog, len(oids)))
        identifiers = object_identifier_parameters(query)
        out = []
        for number, (oid, t) in enumerate(zip(oids, inferred), start=1):
            if oid:
                out.append(oid)
            elif number in identifiers:
                out.append(pgtypes.OID_ARRAY_OID if identifiers[number] else pgtypes.OID_OID)
            else:
                out.append(pgtypes.param_oid(t))
        return out

    def on_bind(self, body: bytes) -> None:
        bind = protocol.parse_bind(body)
        prepared = self._prepared(bind.statement)
        if len(bind.params) != len(prepared.param_oids):
            raise _Failed(RwError(f"bind message supplies {len(bind.params)} parameters, but prepared statement "
                                  f'"{bind.statement}" requires {len(prepared.param_oids)}'))
        try:
            literals = [pgtypes.param_literal(v, oid, bind.param_format(i))
                        for i, (v, oid) in enumerate(zip(bind.params, prepared.param_oids))]
            sql, to_original = substitute_mapped(prepared.sql, literals)
        except (RwError, ValueError, struct.error) as e:
            raise _Failed(e if isinstance(e, RwError) else RwError(f"invalid parameter: {e}")) from e
        self.portals[bind.portal] = Portal(sql, bind.result_formats, to_original=to_original)
        self.send(protocol.bind_complete_msg())

    def _prepared(self, name: str) -> Prepared:
        if name not in self.prepared:
            raise _Failed(RwError(f'prepared statement "{name}" does not exist'))
        return self.prepared[name]

    def _portal(self, name: str) -> Portal:
        if name not in self.portals:
            raise _Failed(RwError(f'portal "{name}" does not exist'))
        return self.portals[name]

    def _run_portal(self, portal: Portal) -> Result:
        if portal.result is None:
            from rw_cli.sql.split import split_statements

            if not split_statements(portal.sql):
                portal.result = Result("")
            else:
                try:
                    portal.result = self.execute(portal.sql)
                except Exception as e:  # noqa: BLE001 - every failure is an ErrorResponse
                    if isinstance(e, RwError) and e.position is not None and portal.to_original is not None:
                        e.position = portal.to_original(e.position)  # into the text the client prepared
                    raise _Failed(e, portal.sql) from e
        return portal.result

    def on_describe(self, body: bytes) -> None:
        kind, name = protocol.parse_describe_or_close(body)
        if kind == "S":
            prepared = self._prepared(name)
            self.send(protocol.parameter_description_msg(
                [oid or pgtypes.TEXT_OID for oid in prepared.param_oids]))
            result = self._describe_statement(prepared)
            self.send(self.row_description(result) if result is not None and result.has_rows
                      else protocol.no_data_msg())
            return
        if name not in self.portals:  # a cursor DECLAREd in SQL is a portal too (drivers' server-side cursors)
            shape = self.server.run_as(self.state, f"DESCRIBE {name}", lambda session: session.cursor_shape(name))
            if shape is not None:
                self.send(self.row_description(shape))
                return
        portal = self._portal(name)
        result = self._run_portal(portal)
        self.send(self.row_description(result, portal) if result.has_rows else protocol.no_data_msg())

    def _describe_statement(self, prepared: Prepared) -> Result | None:
        """The columns a prepared statement returns, without running it for real: a query
        runs with NULL parameters and no rows (LIMIT 0); SHOW runs; anything else has none."""
        from rw_cli.sql.split import split_statements

        statements = split_statements(prepared.sql)
        if not statements:
            return None
        text = statements[0][0].rstrip().rstrip(";")
        first = text.lstrip("( \n\t").split(None, 1)[0].lower() if text.strip() else ""
        literals = [pgtypes.param_literal(None, oid, 0) for oid in prepared.param_oids]
        if first in ("select", "with", "values", "table"):
            sql = f"SELECT * FROM ({substitute(text, literals)}) AS _rw_describe LIMIT 0"
        elif first == "show":
            sql = substitute(text, literals)
        else:
            return None
        try:
            return self.execute(sql)
        except Exception as e:  # noqa: BLE001
            raise _Failed(e, None) from e

    def on_execute(self, body: bytes) -> None:
        name, max_rows = protocol.parse_execute(body)
        portal = self._portal(name)
        result = self._run_portal(portal)
        if result.status == "":
            self.send(protocol.empty_query_msg())
            return
        if result.has_rows:
            stop = result.rowcount if max_rows <= 0 else min(result.rowcount, portal.sent + max_rows)
            self.send_rows(result, portal.sent, stop, portal)
            portal.sent = stop
            if stop < result.rowcount:
                self.send(protocol.portal_suspended_msg())
                return
            status = f"SELECT {result.rowcount}" if result.status.startswith("SELECT") else result.status
            self.send(protocol.command_complete_msg(status))
            return
        self.send(protocol.command_complete_msg(result.status))

    def on_close(self, body: bytes) -> None:
        kind, name = protocol.parse_describe_or_close(body)
        (self.prepared if kind == "S" else self.portals).pop(name, None)
        self.send(protocol.close_complete_msg())
