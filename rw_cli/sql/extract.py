"""extract(unit FROM x) and date_part('unit', x) as RisingWave computes them.

extract returns numeric, with the scale RisingWave gives each unit (PostgreSQL 14's rule):
whole units (year, hour, ...) have none, while the seconds of a time or a timestamp are
nanoseconds at scale 9 (`second` 57.123450000, `millisecond` 57123.450000, `microsecond`
57123450.000), those of an interval microseconds at scale 6, and an epoch is nanoseconds at
scale 9 for a time or a timestamp (microseconds at scale 6 past the nanoseconds' i64 range,
which ends in 1677 and 2262), microseconds at scale 6 for a timestamp with time zone or an
interval. date_part returns the same value as a double precision.

A timestamp with time zone has only its epoch: every other unit is the local time's in the
session's time zone (or the zone date_part names), plus the zone's offset (`timezone`,
`timezone_hour`, `timezone_minute`).

Each value is computed from DuckDB's integer fields (`date_part('microseconds', x)`: the
seconds in microseconds; `epoch_us`), so no double rounds it on the way.
"""
from __future__ import annotations

from sqlglot import exp

from rw_cli.errors import BindError
from rw_cli.sql import numeric_sql
from rw_cli.sql.dialect import DatePart

T = exp.DataType.Type

# RisingWave's unit names (its Debug spelling, which its errors print) by their lower case
_UNITS = {u.lower(): u for u in (
    "Millennium", "Century", "Decade", "Year", "IsoYear", "Quarter", "Month", "Week", "Day", "Doy", "Dow",
    "IsoDow", "Hour", "Minute", "Second", "Millisecond", "Microsecond", "Nanosecond", "Epoch", "Julian",
    "Timezone", "Timezone_Hour", "Timezone_Minute")}
# PostgreSQL's plural spellings (`seconds`), read as the unit
_ALIASES = {"millennia": "millennium", "centuries": "century", "decades": "decade", "years": "year",
            "months": "month", "weeks": "week", "days": "day", "hours": "hour", "minutes": "minute",
            "seconds": "second", "milliseconds": "millisecond", "microseconds": "microsecond",
            "nanoseconds": "nanosecond"}

_DATE_UNITS = {"millennium", "century", "decade", "year", "isoyear", "quarter", "month", "week", "day", "doy",
               "dow", "isodow"}
_TIME_UNITS = {"hour", "minute", "second", "millisecond", "microsecond", "nanosecond"}
_INTERVAL_UNITS = {"millennium", "century", "decade", "year", "quarter", "month", "day", "hour", "minute",
                   "second", "millisecond", "microsecond", "epoch"}
_ZONE_UNITS = {"timezone", "timezone_hour", "timezone_minute"}
# DuckDB's names of the date fields where they differ from RisingWave's
_DUCKDB_FIELD = {"doy": "dayofyear", "dow": "dayofweek", "isodow": "isodow", "isoyear": "isoyear"}
_TYPE_NAMES = {T.DATE: "date", T.TIME: "time", T.TIMESTAMP: "timestamp", T.TIMESTAMPTZ: "timestamp with time zone",
               T.INTERVAL: "interval"}
# the microseconds since 1970 whose nanoseconds an i64 holds (chrono's timestamp_nanos_opt)
_NANOS_RANGE = 9223372036854775


def _fn(name: str, *args: exp.Expression) -> exp.Expression:
    return exp.Anonymous(this=name, expressions=list(args))


def _int(value: int) -> exp.Expression:
    return exp.Literal.number(value)


def _field(name: str, x: exp.Expression) -> exp.Expression:
    return _fn("date_part", exp.Literal.string(name), x.copy())


def _unit_name(unit: exp.Expression | None) -> str | None:
    """The unit's lower-case name, None when it is not a constant; unknown names fail."""
    if isinstance(unit, exp.Var) or (isinstance(unit, exp.Literal) and unit.is_string):
        name = unit.name.lower()
    else:
        return None
    name = _ALIASES.get(name, name)
    if name not in _UNITS:
        raise BindError(f'Invalid parameter unit: unit "{unit.name.lower()}" not recognized')
    return name


def _unsupported(unit: str, t) -> BindError:
    return BindError(f'Invalid parameter unit: unit "{_UNITS[unit]}" not supported for type {_TYPE_NAMES[t]}')


# -- a unit's value as (integer mantissa, scale) ---------------------------------------------------

def _date_field(unit: str, x: exp.Expression) -> exp.Expression:
    return _field(_DUCKDB_FIELD.get(unit, unit), x)


def _second_nanos(x: exp.Expression) -> exp.Expression:
    """A time's (or a timestamp's) seconds in nanoseconds."""
    return exp.Mul(this=_field("microseconds", x), expression=_int(1000))


def _time_of_day(unit: str, x: exp.Expression) -> tuple[exp.Expression, int]:
    if unit in ("hour", "minute"):
        return _field(unit, x), 0
    scale = {"second": 9, "millisecond": 6, "microsecond": 3, "nanosecond": 0}[unit]
    return _second_nanos(x), scale


def _date(unit: str, x: exp.Expression) -> tuple[exp.Expression, int]:
    days = exp.Sub(this=x.copy(), expression=exp.Cast(this=exp.Literal.string("1970-01-01"),
                                                       to=exp.DataType.build("DATE")))
    if unit == "epoch":
        return exp.Mul(this=exp.paren(days), expression=_int(86400)), 0
    if unit == "julian":
        return exp.Add(this=exp.paren(days), expression=_int(2440588)), 0
    if unit in _DATE_UNITS:
        return _date_field(unit, x), 0
    raise _unsupported(unit, T.DATE)


def _time(unit: str, x: exp.Expression) -> tuple[exp.Expression, int]:
    if unit == "epoch":
        minutes = exp.Add(this=exp.Mul(this=_field("hour", x), expression=_int(60)), expression=_field("minute", x))
        micros = exp.Add(this=exp.Mul(this=exp.paren(minutes), expression=_int(60_000_000)),
                         expression=_field("microseconds", x))
        return exp.Mul(this=exp.paren(micros), expression=_int(1000)), 9
    if unit in _TIME_UNITS:
        return _time_of_day(unit, x)
    raise _unsupported(unit, T.TIME)


def _interval(unit: str, x: exp.Expression) -> tuple[exp.Expression, int]:
    if unit not in _INTERVAL_UNITS:
        raise _unsupported(unit, T.INTERVAL)
    micros = _field("microseconds", x)  # the seconds field, in microseconds
    if unit == "second":
        return micros, 6
    if unit == "millisecond":
        return micros, 3
    if unit == "microsecond":
        return micros, 0
    if unit == "epoch":
        # PostgreSQL's: a year is 365.25 days, a month 30 days (in quarter-days, kept exact)
        quarter_days = exp.Add(
            this=exp.Add(this=exp.Mul(this=_field("year", x), expression=_int(1461)),
                         expression=exp.Mul(this=_field("month", x), expression=_int(120))),
            expression=exp.Mul(this=_field("day", x), expression=_int(4)))
        time = exp.Add(this=exp.Add(this=exp.Mul(this=_field("hour", x), expression=_int(3_600_000_000)),
                                    expression=exp.Mul(this=_field("minute", x), expression=_int(60_000_000))),
                       expression=micros)
        whole = exp.Mul(this=exp.Cast(this=exp.paren(quarter_days), to=exp.DataType.build("HUGEINT")),
                        expression=_int(86400 * 250_000))
        return exp.Add(this=whole, expression=exp.paren(time)), 6
    if unit == "quarter":
        return exp.Add(this=exp.IntDiv(this=_field("month", x), expression=_int(3)), expression=_int(1)), 0
    return _field(unit, x), 0


# -- extract / date_part --------------------------------------------------------------------------

class _Value:
    """A unit's value: an integer mantissa at a scale, or (julian of a timestamp) a numeric
    computed from the epoch."""

    def __init__(self, mantissa: exp.Expression, scale: int):
        self.mantissa, self.scale = mantissa, scale

    def numeric(self) -> exp.Expression:
        m = exp.Cast(this=self.mantissa, to=exp.DataType.build("DECIMAL(38,0)"))
        if self.scale == 0:
            return numeric_sql.call("rw_num_from_int", m)
        return numeric_sql.call("rw_num_scaled", m, _int(self.scale))

    def double(self) -> exp.Expression:
        out = exp.Cast(this=self.mantissa, to=exp.DataType.build("DOUBLE"))
        return out if self.scale == 0 else exp.Div(this=out, expression=exp.Literal.number(f"1e{self.scale}"))


class _TimestampEpoch(_Value):
    """A timestamp's epoch: nanoseconds at scale 9 within their i64 range, else microseconds."""

    def __init__(self, x: exp.Expression):
        super().__init__(_fn("epoch_us", x.copy()), 6)

    def numeric(self) -> exp.Expression:
        micros = self.mantissa
        in_range = exp.Between(this=micros.copy(), low=_int(-_NANOS_RANGE), high=_int(_NANOS_RANGE))
        nanos = _Value(exp.Mul(this=exp.Cast(this=micros.copy(), to=exp.DataType.build("HUGEINT")),
                               expression=_int(1000)), 9)
        return exp.Case(ifs=[exp.If(this=in_range, true=nanos.numeric())], default=_Value(micros, 6).numeric())


class _Julian(_Value):
    """A timestamp's Julian day: its epoch over 86400 seconds, plus 2440588 (numeric division)."""

    def __init__(self, x: exp.Expression):
        super().__init__(_fn("epoch_us", x.copy()), 6)
        self.epoch = _TimestampEpoch(x)

    def numeric(self) -> exp.Expression:
        days = numeric_sql.call("rw_num_div", self.epoch.numeric(), numeric_sql.constant("86400"))
        return numeric_sql.call("rw_num_add", days, numeric_sql.constant("2440588"))

    def double(self) -> exp.Expression:
        return numeric_sql.call("rw_num_to_f64", self.numeric(), t="DOUBLE")


def _timestamp(unit: str, x: exp.Expression) -> _Value:
    if unit == "epoch":
        return _TimestampEpoch(x)
    if unit == "julian":
        return _Julian(x)
    if unit in _DATE_UNITS:
        return _Value(_date_field(unit, x), 0)
    if unit in _TIME_UNITS:
        return _Value(*_time_of_day(unit, x))
    raise _unsupported(unit, T.TIMESTAMP)


def _timestamptz(unit: str, x: exp.Expression, zone: exp.Expression | None) -> _Value:
    if unit == "epoch":
        return _Value(_fn("epoch_us", x.copy()), 6)
    local = _fn("timezone", zone.copy(), x.copy()) if zone is not None \
        else exp.Cast(this=x.copy(), to=exp.DataType.build("TIMESTAMP"))
    if unit in _ZONE_UNITS:
        # the zone's offset at that instant: the local time less the instant, in seconds
        # (DuckDB's integer division truncates, as RisingWave's does)
        east = exp.IntDiv(this=exp.paren(exp.Sub(this=_fn("epoch_us", local), expression=_fn("epoch_us", x.copy()))),
                          expression=_int(1_000_000))
        if unit == "timezone_hour":
            east = exp.IntDiv(this=exp.paren(east), expression=_int(3600))
        elif unit == "timezone_minute":
            east = exp.IntDiv(this=exp.paren(exp.Mod(this=exp.paren(east), expression=_int(3600))), expression=_int(60))
        return _Value(east, 0)
    return _timestamp(unit, local)


def _value(unit: str, x: exp.Expression, zone: exp.Expression | None) -> _Value | None:
    t = x.type.this if getattr(x, "type", None) is not None else None
    if t == T.TIMESTAMPTZ:
        return _timestamptz(unit, x, zone)
    if zone is not None:
        return None
    if unit in _ZONE_UNITS and t in _TYPE_NAMES:
        raise _unsupported(unit, t)
    if t == T.TIMESTAMP:
        return _timestamp(unit, x)
    if t == T.DATE:
        return _Value(*_date(unit, x))
    if t == T.TIME:
        return _Value(*_time(unit, x))
    if t == T.INTERVAL:
        return _Value(*_interval(unit, x))
    return None


def rewrite_extract(node: exp.Expression) -> exp.Expression | None:
    """extract / date_part in DuckDB's SQL, or None to leave the node to DuckDB (a unit that
    is not a constant, a source of another type)."""
    if not isinstance(node, (exp.Extract, DatePart)):
        return None
    unit = _unit_name(node.this)
    if unit is None:
        return None
    value = _value(unit, node.expression, node.args.get("zone"))
    if value is None:
        if isinstance(node, DatePart):
            return None
        # a source of a type not known here: DuckDB's value, still a numeric (as annotated)
        duck = exp.Cast(this=_fn("date_part", exp.Literal.string(unit), node.expression.copy()),
                        to=exp.DataType.build("DOUBLE"))
        return numeric_sql.call("rw_num_from_f64", duck)
    return value.double() if isinstance(node, DatePart) else value.numeric()
