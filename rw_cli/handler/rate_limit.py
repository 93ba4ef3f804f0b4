"""Rate limits of streaming jobs: SET {SOURCE|BACKFILL|SINK|DML}_RATE_LIMIT in a session (taken
by the jobs it creates), WITH (backfill_rate_limit = n) on CREATE, and ALTER <job> SET
..._RATE_LIMIT = n | DEFAULT on a running (or creating) job.

As in RisingWave a limit is rows per second per parallelism unit, 0 pauses, DEFAULT removes
it; the limits are kept in the catalog (`RelationCatalog.rate_limits`) and shown in
rw_catalog.rw_rate_limit. The background backfill (rw_cli.stream.background) and the source
executors read them.
"""
from __future__ import annotations

from rw_cli.errors import BindError
from rw_cli.meta.catalog import INDEX, MATERIALIZED_VIEW, SINK, SOURCE, TABLE, RelationCatalog

KINDS = ("source", "backfill", "sink", "dml")
# which limits ALTER may set on which kind of job (RisingWave's ALTER statements)
_ALTERABLE = {MATERIALIZED_VIEW: ("backfill",), INDEX: ("backfill",), SINK: ("sink", "backfill"),
              SOURCE: ("source",), TABLE: ("source", "dml")}
# which session limits a new job of each kind takes
_AT_CREATE = {MATERIALIZED_VIEW: ("backfill",), INDEX: ("backfill",), SINK: ("backfill", "sink"),
              SOURCE: ("source",), TABLE: ("source", "dml")}


def parse_limit(key: str, value) -> int | None:
    """`n` (rows per second, >= 0) or None for DEFAULT; anything else is an error."""
    if value is None or (isinstance(value, str) and value.lower() == "default"):
        return None
    try:
        n = int(str(value))
    except ValueError:
        raise BindError(f'invalid value "{value}" for {key}: expected a non-negative integer or DEFAULT') from None
    if n < 0:
        return None  # RisingWave reads a negative limit as "no limit"
    return n


def limits_at_create(settings, kind: str, options: dict | None = None) -> dict:
    """The limits a new job starts with: its WITH options, else the session's settings."""
    out = {}
    for k in _AT_CREATE.get(kind, ()):
        name = f"{k}_rate_limit"
        raw = (options or {}).get(name, settings.get(name))
        n = parse_limit(name, raw)
        if n is not None:
            out[k] = n
    return out


def alter(rel: RelationCatalog, key: str, value) -> None:
    """ALTER <job> SET <kind>_RATE_LIMIT = value: checked as RisingWave checks it, then kept."""
    kind = key.removesuffix("_rate_limit")
    if kind not in _ALTERABLE.get(rel.kind, ()):
        raise BindError(f"{key.upper()} cannot be altered on {rel.kind} \"{rel.name}\"")
    if kind == "sink":
        if rel.target is not None:
            raise BindError(f'cannot alter the sink rate limit of sink "{rel.name}" into a table',
                            hint="a sink into a table has no log store to throttle")
        if not rel.sink_decouple:
            raise BindError(f'cannot alter the sink rate limit of sink "{rel.name}": it was created '
                            "without sink_decouple", hint="SET sink_decouple = true before CREATE SINK")
    if kind == "source" and rel.kind == TABLE and not rel.connector:
        raise BindError(f'table "{rel.name}" has no connector: it has no source rate limit')
    n = parse_limit(key, value)
    if n is None:
        rel.rate_limits.pop(kind, None)
    else:
        rel.rate_limits[kind] = n
