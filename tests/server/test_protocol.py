"""The wire protocol message by message, with a raw socket client (what drivers do not
exercise: Describe of a statement, Execute with a row limit, Close, errors until Sync),
plus the pure parts: placeholders, parameter literals, SQLSTATEs, TLS and SCRAM."""
from __future__ import annotations

import socket
import struct

import pytest

from rw_cli.errors import BindError, CatalogError, ExecutionError, SqlSyntaxError
from rw_cli.server import pgtypes, protocol
from rw_cli.sql.placeholders import parameter_count, substitute
from rw_cli.server.sqlstate import sqlstate
from rw_server import rw_server

pytestmark = pytest.mark.xdist_group("pgwire")


# -- pure functions ---------------------------------------------------------------------------
def test_placeholders_outside_quotes_and_comments_only():
    sql = "select $1, '$2', \"$3\", $$ $4 $$, E'\\' $5', $tag$ $6 $tag$ -- $7\n /* $8 */ $2"
    assert parameter_count(sql) == 2
    out = substitute(sql, ["'a'", "'b'"])
    assert out.startswith("select ('a'), '$2'") and out.endswith("('b')")
    assert "$5" in out and "$6" in out and "$7" in out and "$8" in out


def test_parameter_literals_are_quoted():
    assert pgtypes.param_literal(b"it's", 0, 0) == "'it''s'"
    assert pgtypes.param_literal(b"5", 23, 0) == "CAST('5' AS integer)"
    assert pgtypes.param_literal(None, 20, 0) == "CAST(NULL AS bigint)"
    assert pgtypes.param_literal(struct.pack("!q", -7), 20, 1) == "CAST('-7' AS bigint)"
    assert pgtypes.param_literal(b"\x01", 16, 1) == "CAST('true' AS boolean)"
    with pytest.raises(Exception):
        pgtypes.param_literal(b"x", 1082, 1)  # binary date: refused, not misread


def test_sqlstates():
    assert sqlstate(SqlSyntaxError("x")) == "42601"
    assert sqlstate(CatalogError('relation "t" does not exist')) == "42P01"
    assert sqlstate(BindError('column "c" does not exist')) == "42703"
    assert sqlstate(ExecutionError("division by zero")) == "22012"
    assert sqlstate(ValueError("boom")) == "XX000"


def test_message_framing():
    msg = protocol.command_complete_msg("SELECT 1")
    assert msg[:1] == b"C" and struct.unpack("!i", msg[1:5])[0] == len(msg) - 1
    row = protocol.data_row_msg([b"1", None])
    assert row == b"D" + struct.pack("!ihi", 4 + 2 + 4 + 1 + 4, 2, 1) + b"1" + b"\xff\xff\xff\xff"


# -- a raw client -----------------------------------------------------------------------------
class Raw:
    def __init__(self, port: int):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=30)
        body = b"user\0root\0database\0dev\0\0"
        self.sock.sendall(struct.pack("!ii", len(body) + 8, protocol.PROTOCOL_3) + body)
        self.until_ready()

    def send(self, kind: bytes, body: bytes = b"") -> None:
        self.sock.sendall(protocol.message(kind, body))

    def until_ready(self) -> list[tuple[bytes, bytes]]:
        out = []
        while True:
            kind, body = protocol.read_message(self.sock)
            out.append((kind, body))
            if kind == b"Z":
                return out


def kinds(msgs) -> bytes:
    return b"".join(k for k, _ in msgs)


def test_ssl_request_is_refused_without_a_certificate(port):
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.sendall(struct.pack("!ii", 8, protocol.SSL_REQUEST))
    assert s.recv(1) == b"N"
    s.close()


def test_describe_statement_execute_with_row_limit_and_close(port):
    c = Raw(port)
    c.send(b"Q", protocol.cstr("create table nums (n int)"))
    c.until_ready()
    c.send(b"Q", protocol.cstr("insert into nums values (1), (2), (3); flush"))
    c.until_ready()
    c.send(b"P", protocol.cstr("s1") + protocol.cstr("select n from nums where n >= $1 order by n")
           + struct.pack("!hi", 1, 23))
    c.send(b"D", b"S" + protocol.cstr("s1"))
    c.send(b"B", protocol.cstr("p1") + protocol.cstr("s1") + struct.pack("!hh", 1, 0) + struct.pack("!h", 1)
           + struct.pack("!i", 1) + b"1" + struct.pack("!h", 0))
    c.send(b"E", protocol.cstr("p1") + struct.pack("!i", 2))
    c.send(b"E", protocol.cstr("p1") + struct.pack("!i", 2))
    c.send(b"C", b"S" + protocol.cstr("s1"))
    c.send(b"S")
    msgs = c.until_ready()
    assert kinds(msgs) == b"1tT2DDsDC3Z"
    assert msgs[1][1] == struct.pack("!hi", 1, 23)  # ParameterDescription: int4
    assert msgs[-2 - 1][1] == protocol.cstr("SELECT 3")


def test_error_skips_to_sync_and_the_connection_goes_on(port):
    c = Raw(port)
    c.send(b"P", protocol.cstr("") + protocol.cstr("select * from nowhere") + struct.pack("!h", 0))
    c.send(b"B", protocol.cstr("") + protocol.cstr("") + struct.pack("!hhh", 0, 0, 0))
    c.send(b"E", protocol.cstr("") + struct.pack("!i", 0))
    c.send(b"S")
    msgs = c.until_ready()
    assert kinds(msgs) == b"12EZ"  # Parse binds no names: the error comes at Execute, then Sync
    assert b"C42P01\0" in msgs[2][1]
    c.send(b"Q", protocol.cstr(""))
    assert kinds(c.until_ready()) == b"IZ"  # EmptyQueryResponse
    c.send(b"Q", protocol.cstr("select 1 as one"))
    msgs = c.until_ready()
    assert kinds(msgs) == b"TDCZ"


def test_scram_password(tmp_path):
    psycopg = pytest.importorskip("psycopg")
    with rw_server(tmp_path / "data", "--password", "s3cret") as p:
        with psycopg.connect(host="127.0.0.1", port=p, user="root", dbname="dev", password="s3cret") as c:
            assert c.execute("select 1").fetchone() == (1,)
        with pytest.raises(psycopg.OperationalError) as info:
            psycopg.connect(host="127.0.0.1", port=p, user="root", dbname="dev", password="wrong")
        assert "password authentication failed" in str(info.value)
        with pytest.raises(psycopg.OperationalError):
            psycopg.connect(host="127.0.0.1", port=p, user="root", dbname="dev", password="")


def test_tls(tmp_path):
    psycopg = pytest.importorskip("psycopg")
    import shutil
    import subprocess

    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(cert),
                    "-days", "1", "-subj", "/CN=localhost"], check=True, capture_output=True)
    with rw_server(tmp_path / "data", "--tls-cert", str(cert), "--tls-key", str(key)) as p:
        with psycopg.connect(host="127.0.0.1", port=p, user="root", dbname="dev", sslmode="require") as c:
            assert c.execute("select 1").fetchone() == (1,)
            assert c.pgconn.ssl_in_use


def test_which_statements_readers_run():
    from rw_cli.server.readers import is_plain_query

    assert is_plain_query("select * from t where id = 1")
    assert is_plain_query("  (select 1) union (select 2)")
    assert is_plain_query("with x as (select 1) select * from x")
    assert is_plain_query("values (1)")
    for sql in ("insert into t values (1)", "with x as (select 1) insert into t select * from x",
                "select 1 into t2", "show tables", "set timezone = 'UTC'", "flush", "begin",
                "create materialized view m as select 1", "explain select 1"):
        assert not is_plain_query(sql), sql


def _non_loopback_address() -> str | None:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        s.connect(("192.0.2.1", 9))  # no packet is sent: this only picks the outgoing interface
        address = s.getsockname()[0]
    except OSError:
        return None
    finally:
        s.close()
    return None if address.startswith("127.") else address


def test_trust_is_for_local_clients_only(tmp_path):
    psycopg = pytest.importorskip("psycopg")
    address = _non_loopback_address()
    if address is None:
        pytest.skip("this machine has no address but loopback")
    with rw_server(tmp_path / "data", "--host", "0.0.0.0") as p:
        with psycopg.connect(host="127.0.0.1", port=p, user="root", dbname="dev") as c:
            assert c.execute("select 1").fetchone() == (1,)
        with pytest.raises(psycopg.OperationalError) as info:
            psycopg.connect(host=address, port=p, user="root", dbname="dev")
        assert "no password is configured" in str(info.value)


def test_positions_map_back_to_the_prepared_text():
    from rw_cli.sql.placeholders import substitute_mapped

    sql = "select $1, $2 frm t"
    text, to_original = substitute_mapped(sql, ["'a long value'", "2"])
    assert text == "select ('a long value'), (2) frm t"
    assert to_original(text.index("frm")) == sql.index("frm")
    assert to_original(text.index("long")) == sql.index("$1")
    assert to_original(3) == 3
