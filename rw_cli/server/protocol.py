"""PostgreSQL's frontend/backend protocol (version 3.0): reading and writing messages.

Pure framing: a backend message is a type byte, an int32 length that counts itself, then
the body; the startup packet has no type byte. Every `*_msg` function returns the bytes of
one backend message; `read_*` functions take a blocking socket-like object with `recv`.
Nothing here knows about sessions or SQL.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass

PROTOCOL_3 = 196608  # 3.0
SSL_REQUEST = 80877103
GSSENC_REQUEST = 80877104
CANCEL_REQUEST = 80877102
MAX_MESSAGE = 1 << 30  # a length beyond this is a broken or hostile client


class ProtocolError(Exception):
    """The client broke the protocol (a bad length, an unknown message): the connection ends."""


class ClientGone(Exception):
    """The client closed the connection (or it timed out)."""


def recv_exact(sock, n: int) -> bytes:
    """Exactly `n` bytes from the socket; ClientGone at end of stream."""
    chunks = []
    while n > 0:
        chunk = sock.recv(min(n, 1 << 20))
        if not chunk:
            raise ClientGone()
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


@dataclass
class Startup:
    """The first packet of a connection: a protocol version (or a request code) and body."""

    code: int
    body: bytes

    def params(self) -> dict[str, str]:
        """StartupMessage's key/value pairs (user, database, options, application_name...)."""
        parts = self.body.split(b"\0")
        out = {}
        for k, v in zip(parts[0::2], parts[1::2]):
            if k:
                out[k.decode("utf-8", "replace")] = v.decode("utf-8", "replace")
        return out

    def cancel_key(self) -> tuple[int, int]:
        """CancelRequest's (backend pid, secret key)."""
        return struct.unpack("!ii", self.body[:8])


def read_startup(sock) -> Startup:
    (length,) = struct.unpack("!i", recv_exact(sock, 4))
    if length < 8 or length > 10_000:
        raise ProtocolError(f"invalid startup packet length {length}")
    data = recv_exact(sock, length - 4)
    (code,) = struct.unpack("!i", data[:4])
    return Startup(code, data[4:])


def read_message(sock, kind: bytes | None = None) -> tuple[bytes, bytes]:
    """One frontend message: (type byte, body). `kind`: its type byte, already read."""
    head = (kind or recv_exact(sock, 1)) + recv_exact(sock, 4)
    kind = head[:1]
    (length,) = struct.unpack("!i", head[1:])
    if length < 4 or length > MAX_MESSAGE:
        raise ProtocolError(f"invalid message length {length}")
    return kind, recv_exact(sock, length - 4)


# -- reading message bodies ---------------------------------------------------------------------
class Reader:
    """Reads the fields of one message body in order."""

    def __init__(self, body: bytes):
        self.body = body
        self.pos = 0

    def cstring(self) -> str:
        end = self.body.index(b"\0", self.pos)
        text = self.body[self.pos:end].decode("utf-8")
        self.pos = end + 1
        return text

    def int16(self) -> int:
        (v,) = struct.unpack_from("!h", self.body, self.pos)
        self.pos += 2
        return v

    def int32(self) -> int:
        (v,) = struct.unpack_from("!i", self.body, self.pos)
        self.pos += 4
        return v

    def bytes_(self, n: int) -> bytes:
        out = self.body[self.pos:self.pos + n]
        if len(out) != n:
            raise ProtocolError("message body shorter than its fields")
        self.pos += n
        return out

    def byte(self) -> bytes:
        return self.bytes_(1)


@dataclass
class Bind:
    portal: str
    statement: str
    param_formats: list[int]
    params: list[bytes | None]
    result_formats: list[int]

    def param_format(self, i: int) -> int:
        """Bind's rule: no codes = all text, one code = for all, else one per parameter."""
        if not self.param_formats:
            return 0
        return self.param_formats[0] if len(self.param_formats) == 1 else self.param_formats[i]


def parse_parse(body: bytes) -> tuple[str, str, list[int]]:
    """Parse: (statement name, query, parameter type OIDs)."""
    r = Reader(body)
    name, query = r.cstring(), r.cstring()
    return name, query, [r.int32() for _ in range(r.int16())]


def parse_bind(body: bytes) -> Bind:
    r = Reader(body)
    portal, statement = r.cstring(), r.cstring()
    formats = [r.int16() for _ in range(r.int16())]
    params: list[bytes | None] = []
    for _ in range(r.int16()):
        n = r.int32()
        params.append(None if n < 0 else r.bytes_(n))
    results = [r.int16() for _ in range(r.int16())]
    return Bind(portal, statement, formats, params, results)


def parse_describe_or_close(body: bytes) -> tuple[str, str]:
    """Describe / Close: ('S' or 'P', name)."""
    r = Reader(body)
    return r.byte().decode(), r.cstring()


def parse_execute(body: bytes) -> tuple[str, int]:
    r = Reader(body)
    return r.cstring(), r.int32()


# -- backend messages ---------------------------------------------------------------------------
def message(kind: bytes, body: bytes = b"") -> bytes:
    return kind + struct.pack("!i", len(body) + 4) + body


def cstr(text: str) -> bytes:
    return text.encode("utf-8") + b"\0"


def auth_ok_msg() -> bytes:
    return message(b"R", struct.pack("!i", 0))


def auth_sasl_msg(mechanisms: list[str]) -> bytes:
    return message(b"R", struct.pack("!i", 10) + b"".join(cstr(m) for m in mechanisms) + b"\0")


def auth_sasl_continue_msg(data: bytes) -> bytes:
    return message(b"R", struct.pack("!i", 11) + data)


def auth_sasl_final_msg(data: bytes) -> bytes:
    return message(b"R", struct.pack("!i", 12) + data)


def parameter_status_msg(name: str, value: str) -> bytes:
    return message(b"S", cstr(name) + cstr(value))


def backend_key_data_msg(pid: int, secret: int) -> bytes:
    return message(b"K", struct.pack("!ii", pid, secret))


def ready_for_query_msg(status: str) -> bytes:
    """status: 'I' idle, 'T' in a transaction block, 'E' in a failed one."""
    return message(b"Z", status.encode())


@dataclass(frozen=True)
class Field:
    """A RowDescription column."""

    name: str
    type_oid: int
    type_size: int
    format: int = 0
    table_oid: int = 0
    column: int = 0
    type_modifier: int = -1


def row_description_msg(fields: list[Field]) -> bytes:
    body = [struct.pack("!h", len(fields))]
    for f in fields:
        body.append(cstr(f.name) + struct.pack("!ihihih", f.table_oid, f.column, f.type_oid, f.type_size,
                                                f.type_modifier, f.format))
    return message(b"T", b"".join(body))


def data_row_msg(values: list[bytes | None]) -> bytes:
    body = [struct.pack("!h", len(values))]
    for v in values:
        body.append(b"\xff\xff\xff\xff" if v is None else struct.pack("!i", len(v)) + v)
    return message(b"D", b"".join(body))


def command_complete_msg(tag: str) -> bytes:
    return message(b"C", cstr(tag))


def empty_query_msg() -> bytes:
    return message(b"I")


def parse_complete_msg() -> bytes:
    return message(b"1")


def bind_complete_msg() -> bytes:
    return message(b"2")


def close_complete_msg() -> bytes:
    return message(b"3")


def no_data_msg() -> bytes:
    return message(b"n")


def portal_suspended_msg() -> bytes:
    return message(b"s")


def parameter_description_msg(oids: list[int]) -> bytes:
    return message(b"t", struct.pack(f"!h{len(oids)}i", len(oids), *oids))


def _fields_msg(kind: bytes, severity: str, code: str, text: str, *, position: int | None = None,
                hint: str | None = None, detail: str | None = None) -> bytes:
    """ErrorResponse / NoticeResponse: typed fields, each a code byte and a string."""
    parts = [b"S" + cstr(severity), b"V" + cstr(severity), b"C" + cstr(code), b"M" + cstr(text)]
    if detail:
        parts.append(b"D" + cstr(detail))
    if hint:
        parts.append(b"H" + cstr(hint))
    if position is not None:
        parts.append(b"P" + cstr(str(position)))
    return message(kind, b"".join(parts) + b"\0")


def error_msg(code: str, text: str, *, severity: str = "ERROR", position: int | None = None,
              hint: str | None = None, detail: str | None = None) -> bytes:
    """`position` is 1-based in characters, as PostgreSQL reports it."""
    return _fields_msg(b"E", severity, code, text, position=position, hint=hint, detail=detail)


def notice_msg(text: str, *, severity: str = "NOTICE", code: str = "00000") -> bytes:
    return _fields_msg(b"N", severity, code, text)


def copy_in_response_msg(columns: int, binary: bool = False) -> bytes:
    code = int(binary)
    return message(b"G", struct.pack("!bh", code, columns) + struct.pack(f"!{columns}h", *([code] * columns)))


def copy_out_response_msg(columns: int) -> bytes:
    return message(b"H", struct.pack("!bh", 0, columns) + struct.pack(f"!{columns}h", *([0] * columns)))


def copy_data_msg(data: bytes) -> bytes:
    return message(b"d", data)


def copy_done_msg() -> bytes:
    return message(b"c")
