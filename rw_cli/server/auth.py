"""Authentication: trust (no password configured) or SCRAM-SHA-256 (RFC 5802 / 7677, as
PostgreSQL does it).

The server keeps only SCRAM's salted keys of the password, made once at start; a client
proves it knows the password without sending it. Written out here (with hashlib and hmac)
rather than through a library: libpq sends an empty user name in its client-first
message (the user is the StartupMessage's), which general SCRAM libraries refuse.
"""
from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from dataclasses import dataclass

from rw_cli.server import protocol

MECHANISM = "SCRAM-SHA-256"
ITERATIONS = 4096  # PostgreSQL's default scram_iterations


class AuthFailed(Exception):
    """The client did not prove the password (the connection ends with 28P01)."""


def _hmac(key: bytes, msg: bytes) -> bytes:
    return hmac.new(key, msg, hashlib.sha256).digest()


@dataclass(frozen=True)
class ScramVerifier:
    """SCRAM's stored form of the password: salt, iterations, stored key, server key."""

    salt: bytes
    iterations: int
    stored_key: bytes
    server_key: bytes

    @staticmethod
    def of(password: str, iterations: int = ITERATIONS) -> "ScramVerifier":
        salt = secrets.token_bytes(16)
        salted = hashlib.pbkdf2_hmac("sha256", password.encode("utf-8"), salt, iterations)
        client_key = _hmac(salted, b"Client Key")
        return ScramVerifier(salt, iterations, hashlib.sha256(client_key).digest(), _hmac(salted, b"Server Key"))


def _attributes(text: str) -> dict[str, str]:
    out = {}
    for part in text.split(","):
        key, eq, value = part.partition("=")
        if eq:
            out[key] = value
    return out


def scram_exchange(sock, verifier: ScramVerifier, user: str) -> None:
    """Run SCRAM-SHA-256 over the socket (AuthenticationSASL, SASLInitialResponse,
    SASLContinue, SASLResponse, SASLFinal); AuthFailed when the proof is wrong."""
    failed = AuthFailed(f'password authentication failed for user "{user}"')
    sock.sendall(protocol.auth_sasl_msg([MECHANISM]))
    kind, body = protocol.read_message(sock)
    if kind != b"p":
        raise failed
    r = protocol.Reader(body)
    if r.cstring() != MECHANISM:
        raise AuthFailed("unsupported SASL mechanism")
    first = r.bytes_(r.int32()).decode("utf-8")
    if not first.startswith(("n,", "y,")):  # "p=...": channel binding, which is not offered
        raise AuthFailed("channel binding is not supported")
    parts = first.split(",", 2)  # gs2 header "n,," (or "y,,"), then the bare message
    if len(parts) < 3:
        raise failed
    first_bare = parts[2]
    gs2_header = first[: len(first) - len(first_bare)]
    client_nonce = _attributes(first_bare).get("r")
    if not client_nonce:
        raise failed
    nonce = client_nonce + base64.b64encode(secrets.token_bytes(18)).decode()
    server_first = f"r={nonce},s={base64.b64encode(verifier.salt).decode()},i={verifier.iterations}"
    sock.sendall(protocol.auth_sasl_continue_msg(server_first.encode()))
    kind, body = protocol.read_message(sock)
    if kind != b"p":
        raise failed
    final = body.decode("utf-8")
    without_proof, _, proof_text = final.rpartition(",p=")
    attrs = _attributes(without_proof)
    if attrs.get("r") != nonce or attrs.get("c") != base64.b64encode(gs2_header.encode()).decode():
        raise failed
    auth_message = f"{first_bare},{server_first},{without_proof}".encode()
    try:
        proof = base64.b64decode(proof_text, validate=True)
    except ValueError:
        raise failed from None
    signature = _hmac(verifier.stored_key, auth_message)
    if len(proof) != len(signature):
        raise failed
    client_key = bytes(a ^ b for a, b in zip(proof, signature))
    if not hmac.compare_digest(hashlib.sha256(client_key).digest(), verifier.stored_key):
        raise failed
    server_signature = base64.b64encode(_hmac(verifier.server_key, auth_message)).decode()
    sock.sendall(protocol.auth_sasl_final_msg(f"v={server_signature}".encode()))
