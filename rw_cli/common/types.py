"""SQL data types and their one mapping to Arrow and DuckDB.

Every layer names types through `DataType`; this module is the only place that knows how a
RisingWave type is represented in Arrow (chunks, state) and in DuckDB (batch queries and
expression evaluation).
"""
from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa

# Numeric is arbitrary precision in PostgreSQL; RisingWave's (rust_decimal) is a 96-bit
# integer with its own scale per value (0..28), NaN, +Infinity and -Infinity. Ours is a fixed
# point decimal128(38, 10) ("unconstrained numeric"), or decimal128(38, s) where an
# expression's scale s is known (a literal, round(x, s), a product of such) — the rule:
# - arithmetic is exact to the 10th fraction digit: a product or quotient rounds half away
#   from zero to 10 digits (rw_cli.common.numeric_arith), a sum keeps its scale; a value
#   beyond 10^28 (RisingWave: 7.9 * 10^28) is `Numeric out of range`;
# - a column of unconstrained numeric prints each value without trailing zeros (1.50 stored
#   in a table prints `1.5`: a per-value scale is not kept), one of a known scale s with s
#   digits (round(x, 2) prints `5727.60`, '1.50'::numeric prints `1.50`, as RisingWave does:
#   a constant keeps the scale it is written with, so a constant may exceed 10^28 until it
#   is stored);
# - NaN and the infinities are the three decimal128(38, 10) values at the top of its range
#   (below), so they order as PostgreSQL orders them (-Infinity < x < Infinity < NaN) and
#   compare equal to themselves; casts from text and floats make them, casts to floats,
#   text output, round/floor/ceil/trunc keep them; other arithmetic on them is not defined.
NUMERIC_PRECISION = 38
NUMERIC_SCALE = 10
NUMERIC_NAN = "9999999999999999999999999999.9999999999"
NUMERIC_INF = "9999999999999999999999999999.9999999998"
NUMERIC_NEG_INF = "-" + NUMERIC_INF

# rw_int256 (RisingWave's 256-bit signed integer) is DuckDB's BIGNUM, in Arrow the opaque
# extension type DuckDB exports it as (its bytes: a header and the magnitude, big-endian,
# ordered as the numbers are, so keys and sorts need nothing of their own). Why not Arrow's
# decimal256: DuckDB reads no decimal wider than 38 digits, and 2^255 has 77; a fixed-size
# binary would need every operation written anew. BIGNUM adds, subtracts, negates, compares,
# sums and takes min/max exactly over the whole range; DuckDB multiplies and divides BIGNUM
# only in floating point, so `*`, `/`, `%` and abs() go through HUGEINT (exact, but an operand
# or result beyond 128 bits is an out-of-range error). The name in DuckDB's SQL is INT256, a
# type alias of BIGNUM that rw_cli.engine.duck_functions creates (sqlglot knows INT256).
INT256_ARROW = pa.opaque(pa.binary(), "bignum", "DuckDB")


def _field_name(name: str) -> str:
    """A struct field's name as a type's name writes it: quoted unless a plain lower-case
    identifier (`"A"`, `"b B"`, `c`), as RisingWave (and PostgreSQL's quote_ident) writes it."""
    if name and (name[0].isalpha() or name[0] == "_") and all(c.isalnum() or c == "_" for c in name) \
            and name == name.lower() and name.isascii():
        return name
    return '"' + name.replace('"', '""') + '"'


def struct_type_name(names, inner) -> str:
    """The name of the struct type of fields `names` of types `inner` (DataTypes)."""
    return "struct<" + ", ".join(f"{_field_name(n)} {t.name}" for n, t in zip(names, inner)) + ">"


@dataclass(frozen=True)
class DataType:
    """A RisingWave/PostgreSQL type, named as `DESCRIBE` prints it."""

    name: str
    scale: int | None = None  # numeric only: the decimal scale of the Arrow representation
    # list: (element type,); struct: (field types,) with `field_names`
    inner: tuple["DataType", ...] | None = None
    field_names: tuple[str, ...] | None = None

    def __str__(self) -> str:
        return self.name

    # -- Arrow ---------------------------------------------------------------------------
    @property
    def is_list(self) -> bool:
        return self.name.endswith("[]") and self.inner is not None

    @property
    def is_struct(self) -> bool:
        return self.name.startswith("struct<") and self.inner is not None

    @property
    def is_vector(self) -> bool:
        """RisingWave's vector(n) (pgvector's): n reals, Arrow's fixed-size list, DuckDB's FLOAT[n]."""
        return self.name.startswith("vector(")

    @property
    def vector_size(self) -> int:
        return int(self.name[len("vector("):-1])

    @property
    def is_map(self) -> bool:
        """RisingWave's map(K,V) (`inner`: key, value): Arrow's map, DuckDB's MAP."""
        return self.name.startswith("map(") and self.name.endswith(")") and self.inner is not None

    @staticmethod
    def map_of(key: "DataType", value: "DataType") -> "DataType":
        if key.name not in MAP_KEY_TYPES:
            raise ValueError(f"invalid map key type: {key.name}")
        return DataType(f"map({key.name},{value.name})", inner=(key, value))

    def arrow(self) -> pa.DataType:
        if self.is_list:
            return pa.list_(self.inner[0].arrow())
        if self.is_struct:
            return pa.struct([pa.field(n, t.arrow()) for n, t in zip(self.field_names, self.inner)])
        if self.is_map:
            return pa.map_(self.inner[0].arrow(), self.inner[1].arrow())
        if self.is_vector:
            return pa.list_(pa.float32(), self.vector_size)
        if self.name == "numeric":
            return pa.decimal128(NUMERIC_PRECISION, NUMERIC_SCALE if self.scale is None else self.scale)
        if self.name == "rw_int256":
            return INT256_ARROW
        return _TO_ARROW[self.name]

    def duckdb(self) -> str:
        if self.is_list:
            return f"{self.inner[0].duckdb()}[]"
        if self.is_struct:
            return "STRUCT(" + ", ".join(f'"{n}" {t.duckdb()}' for n, t in zip(self.field_names, self.inner)) + ")"
        if self.is_map:
            return f"MAP({self.inner[0].duckdb()}, {self.inner[1].duckdb()})"
        if self.is_vector:
            return f"FLOAT[{self.vector_size}]"
        if self.name == "numeric":
            return f"DECIMAL({NUMERIC_PRECISION},{NUMERIC_SCALE if self.scale is None else self.scale})"
        return _TO_DUCKDB[self.name]

    @property
    def is_numeric(self) -> bool:
        return self.name in ("smallint", "integer", "bigint", "real", "double precision", "numeric", "rw_int256")

    @property
    def is_integer(self) -> bool:
        return self.name in ("smallint", "integer", "bigint")

    @staticmethod
    def from_field(f: pa.Field) -> "DataType":
        """The type of a result column: jsonb if marked so (Arrow holds jsonb as text)."""
        return JSONB if f.metadata == JSONB_FIELD_METADATA else DataType.from_arrow(f.type)

    @staticmethod
    def from_arrow(t: pa.DataType) -> "DataType":
        if isinstance(t, pa.OpaqueType) and t.type_name == "bignum":
            return INT256
        if pa.types.is_decimal(t):
            # Our default scale means "unconstrained numeric": printed without trailing zeros.
            return DataType("numeric", None if t.scale == NUMERIC_SCALE else t.scale)
        if pa.types.is_timestamp(t):
            return TIMESTAMPTZ if t.tz else TIMESTAMP
        if pa.types.is_large_string(t) or pa.types.is_string(t) or pa.types.is_string_view(t):
            return VARCHAR
        if pa.types.is_binary(t) or pa.types.is_large_binary(t):
            return BYTEA
        if pa.types.is_time(t):
            return TIME
        if pa.types.is_null(t):
            return VARCHAR
        if pa.types.is_fixed_size_list(t) and pa.types.is_float32(t.value_type):
            return DataType(f"vector({t.list_size})")
        if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t) \
                or pa.types.is_list_view(t):
            inner = DataType.from_field(t.value_field)
            return DataType(f"{inner.name}[]", inner=(inner,))
        if pa.types.is_map(t):
            return DataType.map_of(DataType.from_field(t.key_field), DataType.from_field(t.item_field))
        if pa.types.is_struct(t):
            fields = [t.field(i) for i in range(t.num_fields)]
            inner = tuple(DataType.from_field(f) for f in fields)
            name = struct_type_name([f.name for f in fields], inner)
            return DataType(name, inner=inner, field_names=tuple(f.name for f in fields))
        if pa.types.is_float16(t):
            return REAL
        if pa.types.is_duration(t):
            return INTERVAL
        if pa.types.is_date64(t):
            return DATE
        for name, at in _TO_ARROW.items():
            if at == t:
                return DataType(name)
        if pa.types.is_integer(t):  # DuckDB's unsigned / tiny integers
            return SMALLINT if t.bit_width <= 8 else (INTEGER if t.bit_width <= 16 else BIGINT)
        raise TypeError(f"no SQL type for Arrow type {t}")

    @staticmethod
    def from_sql(text: str) -> "DataType":
        """Parse a type name as written in SQL (`int4`, `double precision`, `varchar(10)`)."""
        key = " ".join(text.lower().replace('"', "").split())
        if key.endswith("[]"):
            inner = DataType.from_sql(key[:-2])
            return DataType(f"{inner.name}[]", inner=(inner,))
        base = key.split("(")[0].strip()
        if base in _ALIASES:
            return DataType(_ALIASES[base])
        raise KeyError(text)


BOOLEAN = DataType("boolean")
SMALLINT = DataType("smallint")
INTEGER = DataType("integer")
BIGINT = DataType("bigint")
REAL = DataType("real")
DOUBLE = DataType("double precision")
NUMERIC = DataType("numeric")
VARCHAR = DataType("character varying")
BYTEA = DataType("bytea")
DATE = DataType("date")
TIME = DataType("time without time zone")
TIMESTAMP = DataType("timestamp without time zone")
TIMESTAMPTZ = DataType("timestamp with time zone")
INTERVAL = DataType("interval")
JSONB = DataType("jsonb")
INT256 = DataType("rw_int256")
# what a map's key may be (RisingWave refuses floats, numeric, and anything not hashed as is)
MAP_KEY_TYPES = frozenset(("smallint", "integer", "bigint", "character varying", "boolean", "date",
                           "time without time zone", "timestamp without time zone", "timestamp with time zone",
                           "rw_int256", "bytea"))
# field metadata marking a text column of Arrow as jsonb (DuckDB's JSON in a query's result)
JSONB_FIELD_METADATA = {b"rw_type": b"jsonb"}

_TO_ARROW: dict[str, pa.DataType] = {
    "boolean": pa.bool_(),
    "smallint": pa.int16(),
    "integer": pa.int32(),
    "bigint": pa.int64(),
    "real": pa.float32(),
    "double precision": pa.float64(),
    "character varying": pa.string(),
    "bytea": pa.binary(),
    "date": pa.date32(),
    "time without time zone": pa.time64("us"),
    "timestamp without time zone": pa.timestamp("us"),
    "timestamp with time zone": pa.timestamp("us", tz="UTC"),
    "interval": pa.month_day_nano_interval(),
    "jsonb": pa.string(),
}

_TO_DUCKDB: dict[str, str] = {
    "boolean": "BOOLEAN",
    "smallint": "SMALLINT",
    "integer": "INTEGER",
    "bigint": "BIGINT",
    "real": "REAL",
    "double precision": "DOUBLE",
    "character varying": "VARCHAR",
    "bytea": "BLOB",
    "date": "DATE",
    "time without time zone": "TIME",
    "timestamp without time zone": "TIMESTAMP",
    "timestamp with time zone": "TIMESTAMPTZ",
    "interval": "INTERVAL",
    "jsonb": "JSON",
    "rw_int256": "INT256",
}

_ALIASES: dict[str, str] = {
    "boolean": "boolean", "bool": "boolean",
    "smallint": "smallint", "int2": "smallint",
    "int": "integer", "integer": "integer", "int4": "integer",
    "bigint": "bigint", "int8": "bigint",
    "real": "real", "float4": "real",
    "double precision": "double precision", "float8": "double precision", "double": "double precision",
    "float": "double precision",
    "numeric": "numeric", "decimal": "numeric", "rw_int256": "rw_int256", "int256": "rw_int256",
    "varchar": "character varying", "character varying": "character varying", "text": "character varying",
    "string": "character varying", "char": "character varying", "character": "character varying",
    "bytea": "bytea",
    "date": "date",
    "time": "time without time zone", "time without time zone": "time without time zone",
    "timestamp": "timestamp without time zone", "timestamp without time zone": "timestamp without time zone",
    "timestamptz": "timestamp with time zone", "timestamp with time zone": "timestamp with time zone",
    "interval": "interval",
    "jsonb": "jsonb",
}
