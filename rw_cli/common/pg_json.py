"""jsonb's text form as PostgreSQL prints it: object keys sorted as jsonb stores them (by
length, then bytes), `, ` between items and `: ` after a key, numbers as written.

DuckDB's JSON functions write compact JSON in their own key order; values are stored in
either form and printed in this one (`rw_cli.common.pg_text`)."""
from __future__ import annotations

import json
from decimal import Decimal


def _text(v) -> str:
    if isinstance(v, dict):
        keys = sorted(v, key=lambda k: (len(k.encode()), k.encode()))
        return "{" + ", ".join(f"{json.dumps(k, ensure_ascii=False)}: {_text(v[k])}" for k in keys) + "}"
    if isinstance(v, list):
        return "[" + ", ".join(_text(x) for x in v) + "]"
    if isinstance(v, bool) or v is None:
        return json.dumps(v)
    if isinstance(v, (int, Decimal)):
        return str(v)
    return json.dumps(v, ensure_ascii=False)


def jsonb_in(text: str) -> str:
    """jsonb input: the text parsed (numbers exact) and written in jsonb's text form."""
    try:
        return _text(json.loads(text, parse_float=Decimal))
    except ValueError:
        raise ValueError("invalid input syntax for type json") from None
