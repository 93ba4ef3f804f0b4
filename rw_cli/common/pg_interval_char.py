"""to_char(interval, template) as PostgreSQL computes it: the interval's fields (years and
months from its months, days, then hours, minutes, seconds and microseconds of its time,
each signed and truncated toward zero, hours past 24 kept) formatted field by field with
PostgreSQL's widths (one more digit's room for a negative value). Fields tied to calendar
dates (month and day names, time zones, day of year, week) are PostgreSQL's error.

The template arrives as rw's SQL dialect translated it for strftime (`YYYY` -> `%Y`, `am` ->
a mark, `IY` untranslated); `to_char_interval` reads that form."""
from __future__ import annotations

import re

INVALID = "invalid format specification for an interval value"
_TOKEN = re.compile(r"%[A-Za-z]|\x01.|IY|[Tt][Zz]")
_CALENDAR = {"%B", "%b", "%A", "%a", "%Z", "%z", "%j", "%u", "%V", "%U", "\x01z"}


def _tdiv(a: int, b: int) -> int:
    """C's integer division (toward zero)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _tmod(a: int, b: int) -> int:
    return a - b * _tdiv(a, b)


def _date2j(year: int, month: int, day: int) -> int:
    if month > 2:
        month += 1
        year += 4800
    else:
        month += 13
        year += 4799
    century = _tdiv(year, 100)
    julian = year * 365 - 32167
    julian += _tdiv(year, 4) - century + _tdiv(century, 4)
    julian += _tdiv(7834 * month, 256) + day
    return julian


def _j2day(date: int) -> int:
    date = _tmod(date + 1, 7)
    return date + 7 if date < 0 else date


def _iso_year(year: int, mon: int, mday: int) -> int:
    """PostgreSQL's date2isoyear, fed an interval's fields as a date."""
    dayn = _date2j(year, mon, mday)
    day4 = _date2j(year, 1, 4)
    day0 = _j2day(day4 - 1)
    if dayn < day4 - day0:
        day4 = _date2j(year - 1, 1, 4)
        day0 = _j2day(day4 - 1)
        year -= 1
    result = (dayn - (day4 - day0)) / 7 + 1
    if result >= 52:
        day4 = _date2j(year + 1, 1, 4)
        day0 = _j2day(day4 - 1)
        if dayn >= day4 - day0:
            year += 1
    return year


def _num(value: int, width: int) -> str:
    """C's `%0*d`: zero padded to `width` characters, the sign included."""
    return f"{value:0{width}d}"


def to_char_interval(months: int, days: int, micros: int, fmt: str) -> str:
    year, mon = _tdiv(months, 12), _tmod(months, 12)
    total_sec = _tdiv(micros, 1_000_000)
    fsec = micros - total_sec * 1_000_000
    hour = _tdiv(total_sec, 3600)
    minute = _tdiv(total_sec - hour * 3600, 60)
    sec = total_sec - hour * 3600 - minute * 60
    hh12 = 12 if _tmod(hour, 12) == 0 else _tmod(hour, 12)
    pm = _tmod(hour, 24) >= 12
    fields = {
        "%Y": lambda: _num(year, 4 if year >= 0 else 5),
        "%G": lambda: _num(_iso_year(year, mon, days), 4 if year >= 0 else 5),
        "%y": lambda: _num(_tmod(year, 100), 2 if year >= 0 else 3),
        "IY": lambda: _num(_tmod(_iso_year(year, mon, days), 100), 2 if year >= 0 else 3),
        "%m": lambda: _num(mon, 2 if mon >= 0 else 3),
        "%d": lambda: _num(days, 2),
        "%I": lambda: _num(hh12, 2 if hour >= 0 else 3),
        "%H": lambda: _num(hour, 2 if hour >= 0 else 3),
        "%M": lambda: _num(minute, 2 if minute >= 0 else 3),
        "%S": lambda: _num(sec, 2 if sec >= 0 else 3),
        "%g": lambda: _num(_tdiv(fsec, 1000), 3),
        "%f": lambda: _num(fsec, 6),
        "%p": lambda: "PM" if pm else "AM",
        "\x01p": lambda: "pm" if pm else "am",
    }
    out, pos = [], 0
    for m in _TOKEN.finditer(fmt):
        out.append(fmt[pos:m.start()])
        pos = m.end()
        tok = m.group(0)
        if tok in _CALENDAR or tok.lower() == "tz":
            raise ValueError(INVALID)
        fn = fields.get(tok)
        out.append(fn() if fn else tok)
    out.append(fmt[pos:])
    return "".join(out)
