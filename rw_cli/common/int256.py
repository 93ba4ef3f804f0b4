"""rw_int256 values in DuckDB's BIGNUM encoding (rw_cli.common.types says why BIGNUM).

The encoding: a 3-byte header, then the magnitude big-endian; the header's top bit is set
for a number >= 0, and for a negative number every byte (header and magnitude) is inverted,
so the bytes order as the numbers do. Only printing and reading values outside DuckDB need
it: arithmetic runs in DuckDB."""
from __future__ import annotations

INT256_MIN = -(1 << 255)
INT256_MAX = (1 << 255) - 1


def bignum_to_int(b: bytes) -> int:
    """The integer a BIGNUM blob holds."""
    body = b[3:]
    if b[0] & 0x80:
        return int.from_bytes(body, "big")
    return -int.from_bytes(bytes(x ^ 0xFF for x in body), "big")


def int_to_bignum(v: int) -> bytes:
    """The BIGNUM blob of `v` (what DuckDB makes of the same number)."""
    mag = abs(v)
    body = mag.to_bytes(max(1, (mag.bit_length() + 7) // 8), "big")
    header = (0x800000 | len(body)).to_bytes(3, "big")
    if v >= 0:
        return header + body
    return bytes(x ^ 0xFF for x in header + body)
