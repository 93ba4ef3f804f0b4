"""Authentication: trust (no password configured) or SCRAM-SHA-256 (RFC 7677, as PostgreSQL
does it) through `scramp`.

The server keeps only SCRAM's salted keys of the password, made once at start; a client
proves it knows the password without sending it.
"""
from __future__ import annotations

from dataclasses import dataclass

from rw_cli.server import protocol

MECHANISM = "SCRAM-SHA-256"


class AuthFailed(Exception):
    """The client did not prove the password (the connection ends with 28P01)."""


@dataclass(frozen=True)
class ScramVerifier:
    """SCRAM's stored form of the password: salt, stored key, server key, iterations."""

    auth_info: tuple

    @staticmethod
    def of(password: str) -> "ScramVerifier":
        from scramp import ScramMechanism

        return ScramVerifier(ScramMechanism(MECHANISM).make_auth_info(password, iteration_count=4096))


def scram_exchange(sock, verifier: ScramVerifier, user: str) -> None:
    """Run SCRAM-SHA-256 over the socket (AuthenticationSASL, SASLInitialResponse,
    SASLContinue, SASLResponse, SASLFinal); AuthFailed when the proof is wrong."""
    from scramp import ScramException, ScramMechanism

    server = ScramMechanism(MECHANISM).make_server(lambda _user: verifier.auth_info)
    sock.sendall(protocol.auth_sasl_msg([MECHANISM]))
    kind, body = protocol.read_message(sock)
    if kind != b"p":
        raise AuthFailed("expected a SASL initial response")
    r = protocol.Reader(body)
    mechanism = r.cstring()
    if mechanism != MECHANISM:
        raise AuthFailed(f"unsupported SASL mechanism {mechanism}")
    first = r.bytes_(r.int32()).decode("utf-8")
    try:
        server.set_client_first(first)
        sock.sendall(protocol.auth_sasl_continue_msg(server.get_server_first().encode()))
        kind, body = protocol.read_message(sock)
        if kind != b"p":
            raise AuthFailed("expected a SASL response")
        server.set_client_final(body.decode("utf-8"))
    except ScramException as e:
        raise AuthFailed(f'password authentication failed for user "{user}"') from e
    sock.sendall(protocol.auth_sasl_final_msg(server.get_server_final().encode()))
