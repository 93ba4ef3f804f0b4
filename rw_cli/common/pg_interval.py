"""PostgreSQL interval input (`'1 year -2 mons +3 days 04:05:06.5'`, `'P1Y2M3DT4H5M6S'`, `'1.5 days'`,
`'@ 1 day ago'`, a bare number of seconds) and the justify_* functions, on (months, days, micros)."""
from __future__ import annotations

import re
from decimal import ROUND_DOWN, ROUND_HALF_EVEN, Decimal

_UNITS = {
    "microsecond": ("us", 1), "microseconds": ("us", 1), "us": ("us", 1), "usec": ("us", 1), "usecs": ("us", 1),
    "millisecond": ("us", 1000), "milliseconds": ("us", 1000), "ms": ("us", 1000), "msec": ("us", 1000),
    "msecs": ("us", 1000),
    "second": ("us", 1_000_000), "seconds": ("us", 1_000_000), "s": ("us", 1_000_000), "sec": ("us", 1_000_000),
    "secs": ("us", 1_000_000),
    "minute": ("us", 60_000_000), "minutes": ("us", 60_000_000), "m": ("us", 60_000_000), "min": ("us", 60_000_000),
    "mins": ("us", 60_000_000),
    "hour": ("us", 3_600_000_000), "hours": ("us", 3_600_000_000), "h": ("us", 3_600_000_000),
    "hr": ("us", 3_600_000_000), "hrs": ("us", 3_600_000_000),
    "day": ("d", 1), "days": ("d", 1), "d": ("d", 1),
    "week": ("d", 7), "weeks": ("d", 7), "w": ("d", 7),
    "month": ("m", 1), "months": ("m", 1), "mon": ("m", 1), "mons": ("m", 1),
    "year": ("m", 12), "years": ("m", 12), "y": ("m", 12), "yr": ("m", 12), "yrs": ("m", 12),
    "decade": ("m", 120), "decades": ("m", 120),
    "century": ("m", 1200), "centuries": ("m", 1200),
    "millennium": ("m", 12000), "millennia": ("m", 12000),
}
_TIME = re.compile(r"^([+-])?(\d+):(\d*)(?::(\d+(?:\.\d*)?))?$")  # '1:' is an hour
_ISO = re.compile(r"^P(?:(-?\d+(?:\.\d+)?)Y)?(?:(-?\d+(?:\.\d+)?)M)?(?:(-?\d+(?:\.\d+)?)W)?(?:(-?\d+(?:\.\d+)?)D)?"
                  r"(?:T(?:(-?\d+(?:\.\d+)?)H)?(?:(-?\d+(?:\.\d+)?)M)?(?:(-?\d+(?:\.\d+)?)S)?)?$", re.I)
MAX_MICROS = 2**63 - 1


class IntervalError(ValueError):
    pass


def _round_us(x: Decimal) -> int:
    return int(x.quantize(Decimal(1), rounding=ROUND_HALF_EVEN))


def _spill(months: Decimal, days: Decimal, micros: Decimal) -> tuple[int, int, int]:
    """Fractional months spill into days (30 per month), fractional days into time."""
    m = int(months)
    days += (months - m) * 30
    d = int(days)
    micros += (days - d) * 86_400_000_000
    return m, d, _round_us(micros)


def parse_interval(text: str) -> tuple[int, int, int]:
    s = text.strip()
    if not s:
        raise IntervalError(f'invalid input syntax for type interval: "{text}"')
    m = _ISO.match(s)
    if m and len(s) > 1:
        y, mo, w, d, h, mi, sec = (Decimal(g) if g else Decimal(0) for g in m.groups())
        # RisingWave truncates ISO 8601 seconds to the microsecond
        sec = sec.quantize(Decimal("0.000001"), rounding=ROUND_DOWN)
        return _spill(y * 12 + mo, w * 7 + d, h * 3_600_000_000 + mi * 60_000_000 + sec * 1_000_000)
    low = s.lower()
    ago = False
    if low.startswith("@"):
        low = low[1:].strip()
    if low.endswith(" ago"):
        ago, low = True, low[:-4].strip()
    # a unit written against its number ('1year 2days') is read as two tokens, as in PostgreSQL
    low = re.sub(r"(\d)([a-z])", r"\1 \2", low)
    tokens = low.replace(",", " ").split()
    # join a lone sign with the number after it: '- 1 year'
    joined: list[str] = []
    for tok in tokens:
        if joined and joined[-1] in ("+", "-"):
            joined[-1] += tok
        else:
            joined.append(tok)
    months, days, micros = Decimal(0), Decimal(0), Decimal(0)
    i = 0
    seen_time = False
    while i < len(joined):
        tok = joined[i]
        t = _TIME.match(tok)
        if t:
            if seen_time:
                raise IntervalError(f'invalid input syntax for type interval: "{text}"')
            seen_time = True
            sign = -1 if t.group(1) == "-" else 1
            h, mi = int(t.group(2)), int(t.group(3) or 0)
            sec = Decimal(t.group(4)) if t.group(4) else Decimal(0)
            micros += sign * (h * 3_600_000_000 + mi * 60_000_000 + sec * 1_000_000)
            i += 1
            continue
        try:
            num = Decimal(tok)
        except Exception:
            raise IntervalError(f'invalid input syntax for type interval: "{text}"') from None
        unit = joined[i + 1] if i + 1 < len(joined) else None
        if unit is None or unit not in _UNITS:
            if unit is None:
                micros += num * 1_000_000  # a bare number is seconds
                i += 1
                continue
            raise IntervalError(f'invalid input syntax for type interval: "{text}"')
        kind, mult = _UNITS[unit]
        if kind == "m":
            months += num * mult
        elif kind == "d":
            days += num * mult
        else:
            micros += num * mult
        i += 2
    out = _spill(months, days, micros)
    if ago:
        out = (-out[0], -out[1], -out[2])
    if abs(out[2]) > MAX_MICROS + 1 or not (-2**31 <= out[0] < 2**31) or not (-2**31 <= out[1] < 2**31):
        raise IntervalError(f'interval field value out of range: "{text}"')
    return out


_DAY_US = 86_400_000_000


def _tdiv(a: int, b: int) -> int:
    """a / b truncated toward zero, as C's (and Rust's) integer division."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def justify_hours(months: int, days: int, micros: int) -> tuple[int, int, int]:
    extra = _tdiv(micros, _DAY_US)
    days, micros = _one_sign(days + extra, micros - extra * _DAY_US, _DAY_US)
    return months, days, micros


def _one_sign(big: int, small: int, unit: int) -> tuple[int, int]:
    """Moves one `unit` between two fields of opposite signs so that both have `big`'s sign
    (PostgreSQL's justify functions keep every field of an interval on one side of zero)."""
    if big > 0 and small < 0:
        return big - 1, small + unit
    if big < 0 and small > 0:
        return big + 1, small - unit
    return big, small


def justify_days(months: int, days: int, micros: int) -> tuple[int, int, int]:
    extra = _tdiv(days, 30)
    months, days = _one_sign(months + extra, days - extra * 30, 30)
    return months, days, micros


def justify_interval(months: int, days: int, micros: int) -> tuple[int, int, int]:
    """Whole days out of the time, whole months out of the days, then one sign for all
    three fields (PostgreSQL's interval_justify_interval)."""
    extra = _tdiv(micros, _DAY_US)
    days += extra
    micros -= extra * _DAY_US
    extra = _tdiv(days, 30)
    days -= extra * 30
    months += extra
    if months > 0 and (days < 0 or (days == 0 and micros < 0)):
        days += 30
        months -= 1
    elif months < 0 and (days > 0 or (days == 0 and micros > 0)):
        days -= 30
        months += 1
    days, micros = _one_sign(days, micros, _DAY_US)
    return months, days, micros


def _tsround(x: float) -> float:
    return round(x * 1_000_000) / 1_000_000


def scale_interval(months: int, days: int, micros: int, factor: float, divide: bool = False):
    """PostgreSQL's interval_mul / interval_div: fractional months spill into days (30 each) and
    fractional days into time, rounded to the microsecond (half to even)."""
    if divide:
        if factor == 0:
            raise IntervalError("Division by zero")
        m_d, d_d, t_d = months / factor, days / factor, micros / factor
    else:
        m_d, d_d, t_d = months * factor, days * factor, micros * factor
    rm, rd = int(m_d), int(d_d)
    month_rem_days = (m_d - rm) * 30
    sec_rem = _tsround((d_d - rd + month_rem_days - int(month_rem_days)) * 86400)
    if abs(sec_rem) >= 86400:
        rd += int(sec_rem / 86400)
        sec_rem -= int(sec_rem / 86400) * 86400
    rd += int(month_rem_days)
    rt = round(t_d + sec_rem * 1_000_000)
    if not (-2**31 <= rm < 2**31 and -2**31 <= rd < 2**31 and -2**63 <= rt < 2**63):
        raise IntervalError("interval out of range")
    return rm, rd, rt
