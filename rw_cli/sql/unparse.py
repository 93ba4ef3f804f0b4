"""A stored definition as RisingWave shows it (SHOW CREATE): its parser's rendering of the
statement, where keywords and type names are upper case, tokens are separated by one space,
a comma is followed by one, parentheses hug what they enclose, and a call or a column list
follows its name directly (`count(*)`, `ON t(v1, v2)`). Names and function names keep the
case they were written in; string literals are kept as they are.
"""
from __future__ import annotations

import re

_KEYWORDS = frozenset("""
select from where as join on order by group having limit offset create materialized view index table
sink source and or not in is null left right full outer inner cross union all distinct case when then
else end with include distributed asc desc exists between like ilike interval into values insert
emit window close append only primary key watermark for using natural lateral except intersect
filter over partition rows range preceding following unbounded current row nulls first last
format encode if replace true false cast array struct map at time zone subscription
int integer smallint bigint real double precision numeric decimal varchar character varying text
boolean bool date timestamp timestamptz bytea jsonb serial float
""".split())
_TOKEN = re.compile(r"""\s*("(?:[^"]|"")*"|'(?:[^']|'')*'|[A-Za-z_][A-Za-z0-9_$]*|\d+(?:\.\d+)?"""
                    r"""|::|<=|>=|<>|!=|\|\||->>|->|\S)""")
_NO_SPACE_BEFORE = {",", ")", ".", "::", "[", "]"}
_NO_SPACE_AFTER = {"(", ".", "::", "["}


def format_definition(sql: str) -> str:
    """`sql` (one statement, as the user wrote it) in RisingWave's SHOW CREATE layout."""
    tokens = _TOKEN.findall(sql.strip().rstrip(";"))
    out: list[str] = []
    for i, tok in enumerate(tokens):
        prev = tokens[i - 1] if i else None
        after = tokens[i + 1] if i + 1 < len(tokens) else None
        # a keyword is upper case, unless it is part of a dotted name (`datagen.rows.per.second`)
        keyword = re.fullmatch(r"[A-Za-z_]\w*", tok) and tok.lower() in _KEYWORDS and "." not in (prev, after)
        keyword = keyword or _interval_unit(tokens, i) or _format_name(prev, tok, after)
        if prev is not None and not _joined(tokens, i):
            out.append(" ")
        out.append(tok.upper() if keyword else tok)
    return "".join(out)


_INTERVAL_UNITS = frozenset("year month week day hour minute second millisecond microsecond".split())


def _format_name(prev: str | None, tok: str, after: str | None) -> bool:
    """`ROW FORMAT JSON`, `FORMAT PLAIN ENCODE JSON (...)`: a source's format and encoding
    are keywords (RisingWave shows them in upper case)."""
    return prev is not None and prev.lower() in ("format", "encode") and re.fullmatch(r"[A-Za-z_]\w*", tok) \
        is not None and (after is None or after.lower() in ("encode", "(", "row", "key"))


def _interval_unit(tokens: list[str], i: int) -> bool:
    """`INTERVAL '10' SECOND`: the unit after an interval's string is a keyword."""
    return (i >= 2 and tokens[i].lower().rstrip("s") in _INTERVAL_UNITS and tokens[i - 1].startswith("'")
            and tokens[i - 2].lower() == "interval")


def _joined(tokens: list[str], i: int) -> bool:
    """Whether token `i` follows the one before it without a space."""
    prev, tok = tokens[i - 1], tokens[i]
    if tok in _NO_SPACE_BEFORE or prev in _NO_SPACE_AFTER:
        return True
    if tok == "(":  # a call or an index's column list follows its name; a keyword is followed by a space
        created = i >= 2 and tokens[i - 2].lower() in ("table", "source", "view", "sink")
        return bool(re.fullmatch(r'[A-Za-z_]\w*|"(?:[^"]|"")*"', prev)) and prev.lower() not in _KEYWORDS \
            and not created
    return False
