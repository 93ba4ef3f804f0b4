"""SQLSTATE codes for rw's errors, as PostgreSQL (and RisingWave) report them.

rw's errors carry a kind (syntax, bind, catalog, execution...) and PostgreSQL's message
text; the code follows from the kind and, within a kind, from the message PostgreSQL
words the same way (`relation "t" does not exist` is 42P01 in both).
"""
from __future__ import annotations

import re

from rw_cli.errors import RwError

# (kind, message pattern, code): the first match wins
_RULES: list[tuple[str | None, re.Pattern, str]] = [(kind, re.compile(pattern, re.I), code) for kind, pattern, code in (
    (None, r"^database .* does not exist|^database not found", "3D000"),
    (None, r"^relation .* does not exist|^(table|materialized view|view|source|sink|index) .* does not exist",
     "42P01"),
    # RisingWave's catalog errors: an object it cannot find (DROP of a missing one) is 42704,
    # one that is already there 42710
    (None, r"^(table|materialized view|view|source|sink|index|function|subscription) not found:", "42704"),
    (None, r"^column .* does not exist", "42703"),
    (None, r"^function .* does not exist", "42883"),
    (None, r"^operator does not exist", "42883"),
    (None, r"^schema not found", "3F000"),
    (None, r"already exists", "42710"),
    (None, r"division by zero", "22012"),
    (None, r"out of range|overflow", "22003"),
    (None, r"invalid input syntax", "22P02"),
    (None, r"^unrecognized configuration parameter", "42704"),
    (None, r"invalid value for parameter", "22023"),
    (None, r"null value in column", "23502"),
    (None, r"duplicate key|violates", "23505"),
    (None, r"is ambiguous", "42702"),
    (None, r"must appear in the GROUP BY", "42803"),
    (None, r"permission denied", "42501"),
)]

_BY_KIND = {
    "syntax": "42601",
    "bind": "42804",  # datatype mismatch, the commonest binder error left over
    "catalog": "42P01",
    "not_supported": "0A000",
    "execution": "22000",
    "canceled": "57014",
    "read_only": "25006",
    "locked": "55006",
    "storage": "58030",
    "internal": "XX000",
}


def sqlstate(err: BaseException) -> str:
    """The SQLSTATE of an error a statement raised."""
    if not isinstance(err, RwError):
        return "XX000"
    if err.kind in ("syntax", "not_supported", "canceled", "internal"):
        return _BY_KIND[err.kind]
    for kind, pattern, code in _RULES:
        if (kind is None or kind == err.kind) and pattern.search(err.message):
            return code
    return _BY_KIND.get(err.kind, "XX000")
