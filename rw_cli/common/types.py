"""SQL data types and their one mapping to Arrow and DuckDB.

Every layer names types through `DataType`; this module is the only place that knows how a
RisingWave type is represented in Arrow (chunks, state) and in DuckDB (batch queries and
expression evaluation).
"""
from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa

from rw_cli.common.numeric import NUMERIC_ARROW, NUMERIC_DUCKDB

# numeric is RisingWave's (rust_decimal: a 96-bit mantissa with its own scale per value, plus
# NaN and the infinities), held as the struct rw_cli.common.numeric describes: exact, compared
# and grouped by value natively, each value printing with its own scale. As in RisingWave, a
# declared numeric(p, s) is numeric.
NUMERIC_MAX_SCALE = 28

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
    scale: int | None = None  # unused: numeric keeps a scale per value (rw_cli.common.numeric)
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
            return NUMERIC_ARROW
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
            return NUMERIC_DUCKDB
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
        if pa.types.is_decimal(t) or t == NUMERIC_ARROW:  # (a decimal: DuckDB's, converted on arrival)
            return NUMERIC
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
# not a SQL type: an aggregate's exact sum of integers in its state (summed by Arrow and DuckDB
# natively; its result is a numeric)
INT128_STATE = DataType("rw_int128")
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
    "rw_int128": pa.decimal128(38, 0),
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
    "rw_int128": "HUGEINT",
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
