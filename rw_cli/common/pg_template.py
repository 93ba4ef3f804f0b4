"""PostgreSQL's datetime templates (`to_date(text, 'YYYY-MM-DD')`) read row by row, for a
format that is not a constant (a constant one DuckDB's strptime reads): the template as a
regular expression, its fields as a proleptic Gregorian date (years 0 and below are BC, as
in PostgreSQL: 0 and -1 are 1 BC, -2022 is 2022 BC)."""
from __future__ import annotations

import re
from functools import lru_cache

_MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
# template field -> (name, regex), longest patterns first
_FIELDS = [
    ("YYYY", "year", r"-?\d{1,}"), ("Month", "month_name", r"[A-Za-z]+"), ("MONTH", "month_name", r"[A-Za-z]+"),
    ("month", "month_name", r"[A-Za-z]+"), ("Mon", "mon", r"[A-Za-z]{3}"), ("MON", "mon", r"[A-Za-z]{3}"),
    ("mon", "mon", r"[A-Za-z]{3}"), ("HH24", None, r"\d{1,2}"), ("HH12", None, r"\d{1,2}"),
    ("MM", "month", r"\d{1,2}"), ("DD", "day", r"\d{1,2}"), ("HH", None, r"\d{1,2}"), ("MI", None, r"\d{1,2}"),
    ("SS", None, r"\d{1,2}"), ("MS", None, r"\d{1,3}"), ("US", None, r"\d{1,6}"),
]


@lru_cache(maxsize=64)
def template_regex(template: str) -> re.Pattern:
    out, i, n = [], 0, 0
    while i < len(template):
        for token, name, rx in _FIELDS:
            if template.startswith(token, i):
                out.append(f"(?P<{name}_{n}>{rx})" if name else f"(?:{rx})")
                n += 1
                i += len(token)
                break
        else:
            out.append(re.escape(template[i]))
            i += 1
    return re.compile("".join(out))


def days_from_civil(y: int, m: int, d: int) -> int:
    """Days since 1970-01-01 of a proleptic Gregorian date (astronomical year: 0 is 1 BC)."""
    y -= m <= 2
    era = y // 400  # floor division: the formula holds for years before 0 too
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def parse_date(text: str, template: str) -> int:
    """`text` read by `template`, as days since 1970-01-01; ValueError when it does not fit."""
    m = template_regex(template).match(text.strip())
    if m is None:
        raise ValueError(f'invalid input for to_date: "{text}" does not match "{template}"')
    year, month, day = 1, 1, 1
    for key, value in m.groupdict().items():
        name = key.rsplit("_", 1)[0]
        if name == "year":
            y = int(value)
            year = y if y > 0 else y + 1 if y < 0 else 0  # PostgreSQL: 0 and -1 are both 1 BC
        elif name == "month":
            month = int(value)
        elif name == "day":
            day = int(value)
        elif name in ("mon", "month_name"):
            key3 = value[:3].lower()
            if key3 not in _MONTHS:
                raise ValueError(f'invalid value "{value}" for "Mon"')
            month = _MONTHS.index(key3) + 1
    if not 1 <= month <= 12 or not 1 <= day <= 31:
        raise ValueError(f'date field value out of range: "{text}"')
    return days_from_civil(year, month, day)
