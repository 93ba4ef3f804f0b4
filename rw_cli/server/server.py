"""The listener of `rw serve`: accepts PostgreSQL clients, one thread each, over one Session.

Design (the smallest sound thing): a data directory has one writer, and a `Session` is that
writer (its store, catalog and stream runtime). All connections share it. What PostgreSQL
keeps per connection — session parameters (`SET ...`), the transaction block, prepared
statements and portals — is the connection's own (`ClientState`), and is put in place on
the session for the duration of each statement, under the session's mutex, the lock the
pipeline driver's ticks and barriers take too. So:

- writes are serialized through the one writer, and a statement never interleaves with a
  barrier (each statement sees a committed epoch, as in the shell);
- plain queries go to a small pool of read-only Sessions over the same directory
  (`readers.py`): they read the newest committed version without the writer's mutex, so a
  long write, a barrier or a backfill does not hold them up. They do not add throughput
  beyond what the GIL allows (parsing and planning are Python), and a reader pays a
  version refresh per statement;
- a slow or dead client never holds a lock: results are computed under it and sent
  after it is released, and every socket has a timeout.
"""
from __future__ import annotations

import itertools
import os
import secrets
import socket
import ssl
import sys
import threading
import time
from dataclasses import dataclass, field

import pyarrow as pa

from rw_cli.common.session_config import SessionConfig
from rw_cli.common.types import BIGINT, VARCHAR
from rw_cli.result import Result

DEFAULT_PORT = 4566
STOP_WAIT_S = 10.0  # how long stop() waits for the queries it interrupted to end


@dataclass
class ClientState:
    """What PostgreSQL keeps per connection, swapped onto the shared session per statement."""

    pid: int
    secret: int
    user: str
    database: str
    address: str
    settings: SessionConfig = field(default_factory=SessionConfig)
    in_transaction: object = False  # False, or its read-only block (rw_cli.handler.transaction)
    cursors: dict = field(default_factory=dict)  # DECLAREd cursors: each connection's own
    query: str = ""  # the statement running now, or the last one
    state: str = "idle"  # idle | active
    started: float = field(default_factory=time.time)
    query_start: float | None = None
    query_thread: int | None = None  # the thread running its plain query now (CancelRequest stops it)


class Server:
    """Shared state of every connection: the session, the open connections, the listener."""

    def __init__(self, session, host: str = "127.0.0.1", port: int = DEFAULT_PORT, *, password: str | None = None,
                 ssl_context: ssl.SSLContext | None = None, client_timeout_s: float = 60.0, readers: int = 4):
        from rw_cli.server.auth import ScramVerifier
        from rw_cli.server.readers import ReaderPool

        self.session = session
        self.host = host
        self.port = port
        self.verifier = ScramVerifier.of(password) if password else None
        self.ssl_context = ssl_context
        self.client_timeout_s = client_timeout_s
        self.clients: dict[int, ClientState] = {}
        self._clients_lock = threading.Lock()
        self._pids = itertools.count(os.getpid() * 1000 % 1_000_000_000 + 1)
        self._running_pid: int | None = None
        self._listener: socket.socket | None = None
        self._stop = threading.Event()
        self.readers = ReaderPool(self._open_reader, readers) if readers > 0 else None
        session.activity = self.activity  # pg_stat_activity reads it

    def activity(self) -> list[dict]:
        """Every connection as pg_stat_activity lists it."""
        import datetime

        def ts(t: float | None):
            return None if t is None else datetime.datetime.fromtimestamp(t, datetime.timezone.utc)

        with self._clients_lock:
            states = sorted(self.clients.values(), key=lambda s: s.pid)
        return [{"pid": s.pid, "usename": s.user, "application_name": s.settings.show("application_name"),
                 "client_addr": s.address.rsplit(":", 1)[0], "client_port": int(s.address.rsplit(":", 1)[1]),
                 "backend_start": ts(s.started), "query_start": ts(s.query_start), "state": s.state,
                 "query": s.query} for s in states]

    def _open_reader(self):
        """A read-only Session over the writer's data directory (its own small caches)."""
        s = self.session
        reader = type(s)(s.data_dir, s.engine, state_store=s.state_store_url, s3_endpoint=s.s3_endpoint,
                         cache_size="64MiB", read_only=True)
        reader.activity = self.activity
        return reader

    # -- listening --------------------------------------------------------------------------------
    def bind(self) -> int:
        """Open the listening socket; returns the port (the one chosen when 0 was asked)."""
        sock = socket.socket(socket.AF_INET6 if ":" in self.host else socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((self.host, self.port))
        sock.listen(128)
        sock.settimeout(0.5)  # so stop() is noticed
        self._listener = sock
        self.port = sock.getsockname()[1]
        return self.port

    def serve_forever(self) -> None:
        from rw_cli.server.connection import Connection

        if self._listener is None:
            self.bind()
        while not self._stop.is_set():
            try:
                client, addr = self._listener.accept()
            except socket.timeout:
                continue
            except OSError:
                if self._stop.is_set():
                    break
                raise
            client.settimeout(self.client_timeout_s)
            client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            client.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
            conn = Connection(self, client, f"{addr[0]}:{addr[1]}")
            threading.Thread(target=conn.run, name=f"pg-{addr[1]}", daemon=True).start()

    def stop(self) -> None:
        """Stop listening; the queries running now end at once (interrupted), so the
        readers' and the writer's sessions can close."""
        from rw_cli.common import progress

        self._stop.set()
        if self._listener is not None:
            self._listener.close()
        # wait for them: a thread still inside DuckDB when the interpreter exits aborts it
        deadline = time.monotonic() + STOP_WAIT_S
        while True:
            with self._clients_lock:
                running = [s.query_thread for s in self.clients.values() if s.query_thread is not None]
                for thread in running:
                    progress.interrupt(thread)
            if not running or time.monotonic() > deadline:
                break
            time.sleep(0.01)
        if self.readers is not None:
            self.readers.close()

    # -- connections ------------------------------------------------------------------------------
    def register(self, user: str, database: str, address: str) -> ClientState:
        state = ClientState(pid=next(self._pids), secret=secrets.randbits(31), user=user, database=database,
                            address=address)
        with self._clients_lock:
            self.clients[state.pid] = state
        return state

    def unregister(self, state: ClientState) -> None:
        with self._clients_lock:
            self.clients.pop(state.pid, None)
        end = getattr(state.in_transaction, "end", None)
        if end is not None:  # a client gone in a read-only block: its snapshot is unpinned
            with self.session.mutex:
                end()
            state.in_transaction = False

    def cancel(self, pid: int, secret: int) -> None:
        """A CancelRequest: a plain query of that backend stops at once (its DuckDB query is
        interrupted), another statement at its next cancellation point (backfill, DML, long
        work that reports progress); a wrong key is ignored, as in PostgreSQL."""
        from rw_cli.common import progress

        with self._clients_lock:
            state = self.clients.get(pid)
            if state is None or state.secret != secret:
                return
            if state.query_thread is not None:  # under the lock: only while that query runs
                progress.request_interrupt(state.query_thread)  # (not yet in DuckDB: when it gets there)
                progress.interrupt(state.query_thread)
        if self._running_pid == pid:
            progress.request_cancel()

    # -- statements -------------------------------------------------------------------------------
    def execute(self, state: ClientState, sql: str) -> Result:
        """Run one statement as `state`'s: a plain query on a reader (readers.py), anything
        else with its settings and transaction block on the writer, under its mutex."""
        from rw_cli.common import progress
        from rw_cli.server.readers import is_plain_query

        if not is_plain_query(sql):
            return self.run_as(state, sql, lambda session: session.execute(sql))
        state.query_thread = threading.get_ident()
        try:
            if self.readers is not None:
                return self._read(state, sql)
            return self.run_as(state, sql, lambda session: session.execute(sql))
        finally:
            with self._clients_lock:
                state.query_thread = None
                progress.clear_interrupt(threading.get_ident())

    def _read(self, state: ClientState, sql: str) -> Result:
        state.query, state.state, state.query_start = sql, "active", time.time()
        try:
            with self.readers.reader() as reader:
                reader.settings, reader.in_transaction = state.settings, state.in_transaction
                return reader.execute(sql)
        finally:
            state.state = "idle"

    def run_as(self, state: ClientState, what: str, work):
        """`work(session)` as `state`'s statement (`what` is what the processlist shows)."""
        from rw_cli.common import progress

        session = self.session
        state.query, state.state, state.query_start = what, "active", time.time()
        try:
            with session.mutex:
                shared = (session.settings, session.in_transaction, session.cursors)
                session.settings, session.in_transaction, session.cursors = \
                    state.settings, state.in_transaction, state.cursors
                self._running_pid = state.pid
                progress.clear_cancel()
                try:
                    return work(session)
                finally:
                    state.in_transaction, state.cursors = session.in_transaction, session.cursors
                    session.settings, session.in_transaction, session.cursors = shared
                    self._running_pid = None
                    progress.clear_cancel()
        finally:
            state.state = "idle"

    def processlist(self) -> Result:
        """SHOW PROCESSLIST: every connection, what it runs now or ran last."""
        with self._clients_lock:
            states = sorted(self.clients.values(), key=lambda s: s.pid)
        now = time.time()
        cols = {
            "Id": pa.array([str(s.pid) for s in states], pa.string()),
            "User": pa.array([s.user for s in states], pa.string()),
            "Host": pa.array([s.address for s in states], pa.string()),
            "Database": pa.array([s.database for s in states], pa.string()),
            "State": pa.array([s.state for s in states], pa.string()),
            "Time": pa.array([int((now - (s.query_start or s.started)) * 1000) for s in states], pa.int64()),
            "Info": pa.array([s.query for s in states], pa.string()),
        }
        types = [VARCHAR, VARCHAR, VARCHAR, VARCHAR, VARCHAR, BIGINT, VARCHAR]
        return Result(f"SHOW {len(states)}", pa.table(cols), types)


def ssl_context(cert: str, key: str) -> ssl.SSLContext:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    return ctx


def serve(session, host: str, port: int, *, password: str | None = None, ssl_ctx: ssl.SSLContext | None = None,
          out=sys.stderr) -> None:
    """`rw serve`: run the stream jobs in the background and serve clients until Ctrl-C."""
    from rw_cli.stream.driver import BackgroundDriver

    server = Server(session, host, port, password=password, ssl_context=ssl_ctx)
    server.bind()
    driver = BackgroundDriver(session).start()
    out.write(f"rw serve: listening on {host}:{server.port} (data directory {session.data_dir}); Ctrl-C stops\n")
    out.flush()
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
        driver.stop()
