"""RisingWave's cast map: which base type casts to which, and in what context (i: implicitly,
a: on assignment, e: only explicitly) — what pg_cast lists and what an INSERT's or UPDATE's
value must allow to go into its column (an integer never goes into a boolean column without
an explicit cast, as in PostgreSQL)."""
from __future__ import annotations

# each source type (in the order of RisingWave's type enum) with the types it casts to;
# int256 (rw_int256) and serial are RisingWave's own
_TABLE = (
    ("boolean", "integer e, varchar a"),
    ("smallint", "integer i, bigint i, real i, double i, numeric i, varchar a, bytea e, int256 i"),
    ("integer", "boolean e, smallint a, bigint i, real i, double i, numeric i, varchar a, bytea e, int256 i"),
    ("bigint", "smallint a, integer a, real i, double i, numeric i, varchar a, bytea e, serial e, int256 i"),
    ("real", "smallint a, integer a, bigint a, double i, numeric a, varchar a"),
    ("double", "smallint a, integer a, bigint a, real a, numeric a, varchar a"),
    ("numeric", "smallint a, integer a, bigint a, real i, double i, varchar a"),
    ("date", "varchar a, timestamp i, timestamptz i"),
    ("varchar", "boolean e, smallint e, integer e, bigint e, real e, double e, numeric e, date e, time e, "
                "timestamp e, timestamptz e, interval e, bytea e, jsonb e, int256 e"),
    ("time", "varchar a, interval i"),
    ("timestamp", "date a, varchar a, time a, timestamptz i"),
    ("timestamptz", "date a, varchar a, time a, timestamp a"),
    ("interval", "varchar a, time a"),
    ("bytea", "smallint e, integer e, bigint e, varchar a"),
    ("jsonb", "boolean e, smallint e, integer e, bigint e, real e, double e, numeric e, varchar a"),
    ("serial", "bigint e, timestamptz e"),
    ("int256", "double e, varchar a"),
)

# (source, target) -> context, by the map's names
CASTS: dict[tuple[str, str], str] = {
    (src, dst): ctx for src, targets in _TABLE for dst, ctx in (t.split() for t in targets.split(", "))}

# rw's type names -> the map's
_NAMES = {"boolean": "boolean", "smallint": "smallint", "integer": "integer", "bigint": "bigint", "real": "real",
          "double precision": "double", "numeric": "numeric", "date": "date", "character varying": "varchar",
          "time without time zone": "time", "timestamp without time zone": "timestamp",
          "timestamp with time zone": "timestamptz", "interval": "interval", "bytea": "bytea", "jsonb": "jsonb",
          "serial": "serial", "rw_int256": "int256"}


def assignable(source: str, target: str) -> bool | None:
    """Whether a value of type `source` goes into a column of type `target` (rw's type
    names): the same type, or an implicit or assignment cast. None when the map knows one of
    them not (arrays, structs, maps: their own rules)."""
    src, dst = _NAMES.get(source), _NAMES.get(target)
    if src is None or dst is None:
        return None
    return src == dst or CASTS.get((src, dst)) in ("i", "a")
