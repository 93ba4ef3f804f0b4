"""jsonb's text form as RisingWave prints it: object keys sorted by their bytes (RisingWave's
jsonb; PostgreSQL's puts shorter keys first), `, ` between items and `: ` after a key,
numbers as RisingWave's jsonb holds them: an integer of 64 bits (signed or not) exactly,
any other number as a double, written as Rust writes one (`1.5`, `10.0`, `2e16`,
`1.1451419198101145e38`).

DuckDB's JSON functions write compact JSON in their own key order; values are stored in
either form and printed in this one (`rw_cli.common.pg_text`)."""
from __future__ import annotations

import json
from decimal import Decimal


_INT_RANGE = (-(2 ** 63), 2 ** 64 - 1)  # i64 and u64: what jsonb keeps of an integer exactly


def _double_text(d: float) -> str:
    """A double as Rust's `{:?}` writes it (RisingWave's jsonb): the shortest digits that read
    back, exponential below 1e-4 and from 1e16 on, the exponent without `+` or leading zeros
    (Python's repr, but for the exponent's spelling)."""
    r = repr(d)
    if "e" not in r:
        return r
    mantissa, exponent = r.split("e")
    return f"{mantissa}e{int(exponent)}"


def _number(text: str):
    """A JSON number as jsonb holds it: an int in the 64-bit ranges, else a double (a Decimal
    where a double would overflow, so the text still reads back)."""
    try:
        n = int(text)
        if _INT_RANGE[0] <= n <= _INT_RANGE[1]:
            return n
    except ValueError:
        pass
    d = float(text)
    return d if d not in (float("inf"), float("-inf")) else Decimal(text)


def _text(v) -> str:
    if isinstance(v, dict):
        keys = sorted(v, key=lambda k: k.encode())
        return "{" + ", ".join(f"{json.dumps(k, ensure_ascii=False)}: {_text(v[k])}" for k in keys) + "}"
    if isinstance(v, list):
        return "[" + ", ".join(_text(x) for x in v) + "]"
    if isinstance(v, bool) or v is None:
        return json.dumps(v)
    if isinstance(v, (int, Decimal)):
        return str(v)
    if isinstance(v, float):
        return _double_text(v)
    return json.dumps(v, ensure_ascii=False)


def jsonb_text(value) -> str:
    """A parsed JSON value (numbers as Decimal) in jsonb's text form."""
    return _text(value)


def jsonb_in(text: str) -> str:
    """jsonb input: the text parsed (numbers exact) and written in jsonb's text form."""
    try:
        return _text(json.loads(text, parse_float=_number, parse_int=_number))
    except ValueError:
        raise ValueError("invalid input syntax for type json") from None


def jsonb_object_of(keys: list, values: list) -> str:
    """jsonb_object_agg's result from its keys and its values (each jsonb text, or None for
    SQL NULL, which becomes JSON null): a later duplicate key replaces an earlier one, as in
    jsonb. A NULL key is an error, as in PostgreSQL."""
    obj = {}
    for k, v in zip(keys, values):
        if k is None:
            raise ValueError("field name must not be null")
        obj[k] = None if v is None else json.loads(v, parse_float=Decimal)
    return _text(obj)


def _contains(a, b, top: bool) -> bool:
    if isinstance(a, dict):
        return isinstance(b, dict) and all(k in a and _contains(a[k], v, False) for k, v in b.items())
    if isinstance(a, list):
        if isinstance(b, list):
            return all(any(_contains(x, y, False) for x in a) for y in b)
        # a top-level array contains a scalar that is one of its elements
        return top and not isinstance(b, dict) and any(not isinstance(x, (dict, list)) and _same(x, b) for x in a)
    return not isinstance(b, (dict, list)) and _same(a, b)


def _same(a, b) -> bool:
    return type(a) is type(b) and a == b if isinstance(a, (bool, str)) or a is None or isinstance(b, bool) \
        else not isinstance(b, (bool, str)) and b is not None and a == b


def jsonb_contains(a: str, b: str) -> bool:
    """PostgreSQL's jsonb `a @> b`: b's structure and values are found in a, at the top
    level (objects by key, arrays by any element, recursively)."""
    return _contains(json.loads(a, parse_float=Decimal), json.loads(b, parse_float=Decimal), True)
