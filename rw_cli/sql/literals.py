"""SQL literals of values from outside: a client's bound parameters and Python's own values
(`Session.execute(sql, params)`). Each is quoted and cast to its type, so a value never
becomes SQL syntax."""
from __future__ import annotations

import datetime as dt
import decimal
import json
import math
import uuid

from rw_cli.errors import RwError


def quote_literal(text: str) -> str:
    """A PostgreSQL string literal of `text` (standard_conforming_strings is on: only `'`
    is special)."""
    if "\0" in text:
        raise RwError("invalid byte sequence for encoding \"UTF8\": 0x00")
    return "'" + text.replace("'", "''") + "'"


def python_literal(value: object) -> str:
    """The SQL literal of a Python value, typed as a driver types its parameters: int ->
    bigint (an int literal), float -> double precision, Decimal -> numeric, str -> an untyped
    literal (coerced to the column or operand, as PostgreSQL does), bytes -> bytea, date /
    datetime (aware: timestamptz) / time / timedelta, list -> an array, dict -> jsonb."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        text = "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity") \
            if math.isinf(value) else repr(value)
        return f"CAST('{text}' AS DOUBLE PRECISION)"
    if isinstance(value, decimal.Decimal):
        return f"CAST('{value}' AS NUMERIC)"
    if isinstance(value, str):
        return quote_literal(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return f"CAST('\\x{bytes(value).hex()}' AS BYTEA)"
    if isinstance(value, dt.datetime):
        kind = "TIMESTAMPTZ" if value.tzinfo is not None else "TIMESTAMP"
        return f"CAST('{value.isoformat(sep=' ')}' AS {kind})"
    if isinstance(value, dt.date):
        return f"CAST('{value.isoformat()}' AS DATE)"
    if isinstance(value, dt.time):
        return f"CAST('{value.isoformat()}' AS TIME)"
    if isinstance(value, dt.timedelta):
        return f"CAST('{value.days} days {value.seconds} seconds {value.microseconds} microseconds' AS INTERVAL)"
    if isinstance(value, uuid.UUID):
        return quote_literal(str(value))
    if isinstance(value, (list, tuple)):
        if not value:
            raise RwError("cannot tell the type of an empty list parameter",
                          hint="write the array in the statement, e.g. '{}'::int[]")
        return "ARRAY[" + ", ".join(python_literal(v) for v in value) + "]"
    if isinstance(value, dict):
        return f"CAST({quote_literal(json.dumps(value))} AS JSONB)"
    raise RwError(f"cannot pass a {type(value).__name__} as a parameter",
                  hint="pass None, bool, int, float, Decimal, str, bytes, date/time values, a list or a dict")
