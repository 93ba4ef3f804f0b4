"""The DuckDB side of our SQL functions: macros and vectorized Python UDFs created on every
DuckDB connection, for the PostgreSQL / RisingWave functions DuckDB lacks or spells
differently. rw_cli.sql.functions maps PostgreSQL's names and argument types onto these.

- `MACROS`: SQL macros.
- `UDFS`: vectorized Python functions over Arrow arrays, for the few functions with no SQL
  form (bytea escape format, PostgreSQL float text, ...).
"""
from __future__ import annotations

import base64
import functools
import math
import re

import duckdb
import pyarrow as pa

from rw_cli.common.pg_json import jsonb_contains, jsonb_in, jsonb_object_of
from rw_cli.common.pg_template import parse_date
from rw_cli.engine import jsonpath_udfs, numeric_udfs

# DuckDB's type names (as typeof() writes them) -> PostgreSQL's, in this order (case
# sensitive: a name already rewritten is lower case and never matches again)
_PG_TYPE_NAMES = [
    (r'^"NULL"$', "unknown"), (r"^TUPLE\(.*$", "record"),
    (r"STRUCT\(n_int DECIMAL\(38,0\), n_frac DECIMAL\(38,0\), n_scale DOUBLE\)", "numeric"),
    (r"\bDECIMAL\(\d+,\d+\)", "numeric"), (r"\bHUGEINT\b", "numeric"),
    (r"\bBIGNUM\b", "rw_int256"),
    (r"\bTIMESTAMP WITH TIME ZONE\b", "timestamp with time zone"),
    (r"\bTIMESTAMP\b", "timestamp without time zone"), (r"\bTIME\b", "time without time zone"),
    (r"\b(?:SMALLINT|TINYINT)\b", "smallint"), (r"\bINTEGER\b", "integer"), (r"\bBIGINT\b", "bigint"),
    (r"\bDOUBLE\b", "double precision"), (r"\bFLOAT\b", "real"), (r"\bVARCHAR\b", "character varying"),
    (r"\bBOOLEAN\b", "boolean"), (r"\bDATE\b", "date"), (r"\bINTERVAL\b", "interval"),
    (r"\bBLOB\b", "bytea"), (r"\bJSON\b", "jsonb"), (r"\bSTRUCT\(", "struct<"), (r"\)", ">"),
]


def _pg_type_names(text: str) -> str:
    """SQL rewriting a DuckDB type name (the SQL `text`) into PostgreSQL's (pg_typeof)."""
    for pattern, name in _PG_TYPE_NAMES:
        text = f"regexp_replace({text}, '{pattern}', '{name}', 'g')"
    return text


_LOG_ARG_CHECKS = ("WHEN {x} = 0 THEN error('cannot take logarithm of zero') "
                   "WHEN {x} < 0 THEN error('cannot take logarithm of a negative number') ")
_OVERFLOW = "error('Numeric out of range: overflow')"
_UNDERFLOW = "error('Numeric out of range: underflow')"

# PostgreSQL's math functions raise where DuckDB's return NaN or an infinity
_JSON_OBJECT = "CAST({} AS MAP(VARCHAR, JSON))"
_JSON_ARRAY = "(CASE WHEN json_type({0}) = 'ARRAY' THEN CAST({0} AS JSON[]) ELSE [{0}] END)"

# jsonb's operators with no DuckDB counterpart (rw_cli.sql.jsonb maps them here)
_JSONB_MACROS = [
    # jsonb -> a number: the jsonb must be a number
    "CREATE OR REPLACE MACRO pg_jsonb_number(j) AS (CASE json_type(j) "
    "WHEN 'VARCHAR' THEN error('cannot cast jsonb string to type number') "
    "WHEN 'ARRAY' THEN error('cannot cast jsonb array to type number') "
    "WHEN 'OBJECT' THEN error('cannot cast jsonb object to type number') "
    "WHEN 'BOOLEAN' THEN error('cannot cast jsonb boolean to type number') "
    "WHEN 'NULL' THEN NULL ELSE j END)",  # jsonb null: SQL NULL
    # a || b: objects merged (b's keys win), otherwise arrays (a scalar as a one-element array)
    "CREATE OR REPLACE MACRO pg_jsonb_concat(a, b) AS (CASE "
    "WHEN json_type(a) = 'OBJECT' AND json_type(b) = 'OBJECT' "
    f"THEN to_json(map_concat({_JSON_OBJECT.format('a')}, {_JSON_OBJECT.format('b')})) "
    f"ELSE to_json(list_concat({_JSON_ARRAY.format('a')}, {_JSON_ARRAY.format('b')})) END)",
    # j - 'key': the member removed from an object, the equal strings from an array
    "CREATE OR REPLACE MACRO pg_jsonb_delete_key(j, k) AS (CASE json_type(j) "
    "WHEN 'OBJECT' THEN coalesce(to_json(map_from_entries(list_filter(map_entries("
    f"{_JSON_OBJECT.format('j')}), lambda e: e.key <> k))), '{{}}'::JSON) "
    "WHEN 'ARRAY' THEN to_json(list_filter(CAST(j AS JSON[]), lambda e: e IS DISTINCT FROM to_json(k))) "
    "ELSE error('cannot delete from scalar') END)",
    # j - n: the n-th element (from the end if negative) removed from an array
    "CREATE OR REPLACE MACRO pg_jsonb_delete_index(j, n) AS (CASE json_type(j) "
    "WHEN 'ARRAY' THEN to_json(list_filter(CAST(j AS JSON[]), lambda e, i: i - 1 <> "
    "(CASE WHEN n < 0 THEN json_array_length(j) + n ELSE n END))) "
    "WHEN 'OBJECT' THEN error('cannot delete from object using integer index') "
    "ELSE error('cannot delete from scalar') END)",
    # the lists the set-returning functions unnest: the elements of an array, the keys and
    # the members of an object (their values in key order), or PostgreSQL's error
    "CREATE OR REPLACE MACRO pg_jsonb_elements(j) AS (CASE WHEN j IS NULL THEN NULL "
    "WHEN json_type(j) = 'ARRAY' THEN json_extract(j, '$[*]') "
    "WHEN json_type(j) = 'OBJECT' THEN error('cannot extract elements from an object') "
    "ELSE error('cannot extract elements from a scalar') END)",
    "CREATE OR REPLACE MACRO pg_jsonb_keys(j) AS (CASE WHEN j IS NULL THEN NULL "
    "WHEN json_type(j) = 'OBJECT' THEN list_sort(json_keys(j)) "
    "WHEN json_type(j) = 'ARRAY' THEN error('cannot call jsonb_object_keys on an array') "
    "ELSE error('cannot call jsonb_object_keys on a scalar') END)",
    "CREATE OR REPLACE MACRO pg_jsonb_each_keys(j) AS (CASE WHEN j IS NULL THEN NULL "
    "WHEN json_type(j) = 'OBJECT' THEN list_sort(json_keys(j)) "
    "WHEN json_type(j) = 'ARRAY' THEN error('cannot deconstruct an array as an object') "
    "ELSE error('cannot deconstruct a scalar') END)",
    "CREATE OR REPLACE MACRO pg_jsonb_members(j) AS (CASE WHEN j IS NULL THEN NULL "
    "WHEN json_type(j) = 'OBJECT' THEN list_transform(list_sort(json_keys(j)), "
    "lambda k: json_extract(j, '/' || replace(replace(k, '~', '~0'), '/', '~1'))) "
    "WHEN json_type(j) = 'ARRAY' THEN error('cannot deconstruct an array as an object') "
    "ELSE error('cannot deconstruct a scalar') END)",
    # jsonb_each[_text] in the select list: records (key, value)
    "CREATE OR REPLACE MACRO pg_jsonb_each_records(j) AS (list_transform(pg_jsonb_each_keys(j), "
    "lambda k: struct_pack(key := k, value := json_extract(j, '/' || replace(replace(k, '~', '~0'), '/', '~1')))))",
    "CREATE OR REPLACE MACRO pg_jsonb_each_text_records(j) AS (list_transform(pg_jsonb_each_keys(j), "
    "lambda k: struct_pack(key := k, value := pg_jsonb_text(json_extract(j, "
    "'/' || replace(replace(k, '~', '~0'), '/', '~1'))))))",
    "CREATE OR REPLACE MACRO pg_jsonb_array_length(j) AS (CASE WHEN j IS NULL THEN NULL "
    "WHEN json_type(j) = 'ARRAY' THEN json_array_length(j) "
    "WHEN json_type(j) = 'OBJECT' THEN error('cannot get array length of a non-array') "
    "ELSE error('cannot get array length of a scalar') END)",
    # a jsonb value as text (->>, #>>, the _text table functions): a string unquoted, a
    # container in jsonb's text form
    "CREATE OR REPLACE MACRO pg_jsonb_text(e) AS (CASE WHEN json_type(e) IN ('OBJECT', 'ARRAY') "
    "THEN pg_jsonb_in(CAST(e AS VARCHAR)) ELSE json_extract_string(e, '$') END)",
    "CREATE OR REPLACE MACRO pg_jsonb_texts(l) AS (list_transform(l, lambda e: pg_jsonb_text(e)))",
    # j ? k: a key of an object, a string element of an array, or the string itself
    "CREATE OR REPLACE MACRO pg_jsonb_exists(j, k) AS (CASE json_type(j) "
    "WHEN 'OBJECT' THEN list_contains(json_keys(j), k) "
    "WHEN 'ARRAY' THEN list_contains(CAST(j AS JSON[]), to_json(k)) "
    "WHEN 'VARCHAR' THEN json_extract_string(j, '$') = k ELSE FALSE END)",
    "CREATE OR REPLACE MACRO pg_jsonb_exists_any(j, ks) AS "
    "(coalesce(list_bool_or(list_transform(ks, lambda k: pg_jsonb_exists(j, k))), FALSE))",
    "CREATE OR REPLACE MACRO pg_jsonb_exists_all(j, ks) AS "
    "(coalesce(list_bool_and(list_transform(ks, lambda k: pg_jsonb_exists(j, k))), TRUE))",
]

_MATH_MACROS = [
    "CREATE OR REPLACE MACRO pg_sqrt(x) AS (CASE WHEN x < 0 "
    "THEN error('cannot take square root of a negative number') ELSE sqrt(x) END)",
    f"CREATE OR REPLACE MACRO pg_ln(x) AS (CASE {_LOG_ARG_CHECKS.format(x='x')}ELSE ln(x) END)",
    f"CREATE OR REPLACE MACRO pg_log10(x) AS (CASE {_LOG_ARG_CHECKS.format(x='x')}ELSE log10(x) END)",
    f"CREATE OR REPLACE MACRO pg_log(b, x) AS (CASE {_LOG_ARG_CHECKS.format(x='b')}"
    f"{_LOG_ARG_CHECKS.format(x='x')}WHEN b = 1 THEN error('Division by zero') ELSE log(b, x) END)",
    "CREATE OR REPLACE MACRO pg_exp(x) AS (CASE "
    f"WHEN isfinite(CAST(x AS DOUBLE)) AND isinf(exp(x)) THEN {_OVERFLOW} "
    f"WHEN isfinite(CAST(x AS DOUBLE)) AND exp(x) = 0 THEN {_UNDERFLOW} ELSE exp(x) END)",
    "CREATE OR REPLACE MACRO pg_pow(x, y) AS (CASE "
    "WHEN x = 0 AND y < 0 THEN error('zero raised to a negative power is undefined') "
    "WHEN x < 0 AND CAST(y AS DOUBLE) <> floor(CAST(y AS DOUBLE)) "
    "THEN error('a negative number raised to a non-integer power yields a complex result') "
    "WHEN isfinite(CAST(x AS DOUBLE)) AND isfinite(CAST(y AS DOUBLE)) AND isinf(power(x, y)) "
    f"THEN {_OVERFLOW} "
    "WHEN isfinite(CAST(x AS DOUBLE)) AND isfinite(CAST(y AS DOUBLE)) AND x <> 0 AND power(x, y) = 0 "
    f"THEN {_UNDERFLOW} ELSE power(x, y) END)",
    # x << s wrapped around `bits` bits (two's complement), as C's shift of a signed integer
    # gives it: computed in HUGEINT, where a left shift of a negative number is no error
    "CREATE OR REPLACE MACRO pg_shl(x, s, bits) AS (((CAST(x AS HUGEINT) * (CAST(1 AS HUGEINT) << s)) "
    "% (CAST(1 AS HUGEINT) << bits) + (CAST(1 AS HUGEINT) << bits)) % (CAST(1 AS HUGEINT) << bits) "
    "- CASE WHEN ((CAST(x AS HUGEINT) * (CAST(1 AS HUGEINT) << s)) % (CAST(1 AS HUGEINT) << bits) "
    "+ (CAST(1 AS HUGEINT) << bits)) % (CAST(1 AS HUGEINT) << bits) >= (CAST(1 AS HUGEINT) << (bits - 1)) "
    "THEN CAST(1 AS HUGEINT) << bits ELSE CAST(0 AS HUGEINT) END)",
    # RisingWave's acos and asin are Rust's: NaN outside [-1, 1] (DuckDB's raise an error)
    "CREATE OR REPLACE MACRO pg_acos(x) AS (CASE WHEN x < -1 OR x > 1 THEN CAST('NaN' AS DOUBLE) "
    "ELSE acos(x) END)",
    "CREATE OR REPLACE MACRO pg_asin(x) AS (CASE WHEN x < -1 OR x > 1 THEN CAST('NaN' AS DOUBLE) "
    "ELSE asin(x) END)",
]

# The trigonometric functions in degrees, as RisingWave computes them (PostgreSQL's float.c
# algorithms): the argument reduced to the first quadrant, where sine and cosine are stitched
# from pieces that are exact at 0, 30, 45, 60 and 90 degrees (sind(30) is 0.5, tand(45) 1);
# NaN for a NaN or infinite argument (PostgreSQL raises), for asind / acosd outside [-1, 1].
_RAD = "0.017453292519943295"  # radians per degree
_NAN = "CAST('NaN' AS DOUBLE)"
_NOT_FINITE = "isnan(CAST(x AS DOUBLE)) OR isinf(CAST(x AS DOUBLE))"
_DEGREE_MACROS = [
    f"CREATE OR REPLACE MACRO pg_cosd_0_60(x) AS (1.0 - ((1.0 - cos(x * {_RAD})) / (1.0 - cos(60.0 * {_RAD}))) / 2.0)",
    f"CREATE OR REPLACE MACRO pg_sind_0_30(x) AS ((sin(x * {_RAD}) / sin(30.0 * {_RAD})) / 2.0)",
    "CREATE OR REPLACE MACRO pg_cosd_q1(x) AS (CASE WHEN x <= 60.0 THEN pg_cosd_0_60(x) ELSE pg_sind_0_30(90.0 - x) END)",
    "CREATE OR REPLACE MACRO pg_sind_q1(x) AS (CASE WHEN x <= 30.0 THEN pg_sind_0_30(x) ELSE pg_cosd_0_60(90.0 - x) END)",
    # sind: odd, and sind(180 - x) = sind(x)
    "CREATE OR REPLACE MACRO pg_sind_3(a) AS (CASE WHEN a > 90 THEN pg_sind_q1(180.0 - a) ELSE pg_sind_q1(a) END)",
    "CREATE OR REPLACE MACRO pg_sind_2(a) AS (CASE WHEN a > 180 THEN -pg_sind_3(360.0 - a) ELSE pg_sind_3(a) END)",
    "CREATE OR REPLACE MACRO pg_sind_1(a) AS (CASE WHEN a < 0 THEN -pg_sind_2(-a) ELSE pg_sind_2(a) END)",
    f"CREATE OR REPLACE MACRO pg_sind(x) AS (CASE WHEN {_NOT_FINITE} THEN {_NAN} "
    "ELSE pg_sind_1(CAST(x AS DOUBLE) % 360.0) END)",
    # cosd: even, and cosd(180 - x) = -cosd(x)
    "CREATE OR REPLACE MACRO pg_cosd_2(a) AS (CASE WHEN a > 90 THEN -pg_cosd_q1(180.0 - a) ELSE pg_cosd_q1(a) END)",
    "CREATE OR REPLACE MACRO pg_cosd_1(a) AS (pg_cosd_2(CASE WHEN a > 180 THEN 360.0 - a ELSE a END))",
    f"CREATE OR REPLACE MACRO pg_cosd(x) AS (CASE WHEN {_NOT_FINITE} THEN {_NAN} "
    "ELSE pg_cosd_1(abs(CAST(x AS DOUBLE) % 360.0)) END)",
    # tand and cotd: odd, and f(180 - x) = -f(x); exact at 45, 135, 225 and 315; no -0
    f"CREATE OR REPLACE MACRO pg_tand_q1(a) AS ((pg_sind_q1(a) / pg_cosd_q1(a)) / tan(45.0 * {_RAD}))",
    f"CREATE OR REPLACE MACRO pg_cotd_q1(a) AS ((pg_cosd_q1(a) / pg_sind_q1(a)) / (cos(45.0 * {_RAD}) / sin(45.0 * {_RAD})))",
    *[m for f in ("tand", "cotd") for m in (
        f"CREATE OR REPLACE MACRO pg_{f}_3(a) AS (CASE WHEN a > 90 THEN -pg_{f}_q1(180.0 - a) ELSE pg_{f}_q1(a) END)",
        f"CREATE OR REPLACE MACRO pg_{f}_2(a) AS (CASE WHEN a > 180 THEN -pg_{f}_3(360.0 - a) ELSE pg_{f}_3(a) END)",
        f"CREATE OR REPLACE MACRO pg_{f}_1(a) AS (CASE WHEN a IN (45.0, 225.0) THEN 1.0 WHEN a IN (135.0, 315.0) "
        f"THEN -1.0 WHEN a < 0 THEN -pg_{f}_2(-a) ELSE pg_{f}_2(a) END)",
        f"CREATE OR REPLACE MACRO pg_{f}_0(v) AS (CASE WHEN v = 0 THEN 0.0 ELSE v END)",
        f"CREATE OR REPLACE MACRO pg_{f}(x) AS (CASE WHEN {_NOT_FINITE} THEN {_NAN} "
        f"ELSE pg_{f}_0(pg_{f}_1(CAST(x AS DOUBLE) % 360.0)) END)")],
    # asind, acosd: exact at 0, 0.5 and 1
    "CREATE OR REPLACE MACRO pg_asind_q1(x) AS (CASE WHEN x <= 0.5 THEN (asin(x) / asin(0.5)) * 30.0 "
    "ELSE 90.0 - (acos(x) / acos(0.5)) * 60.0 END)",
    "CREATE OR REPLACE MACRO pg_acosd_q1(x) AS (CASE WHEN x <= 0.5 THEN 90.0 - (asin(x) / asin(0.5)) * 30.0 "
    "ELSE (acos(x) / acos(0.5)) * 60.0 END)",
    f"CREATE OR REPLACE MACRO pg_asind(x) AS (CASE WHEN {_NOT_FINITE} OR x < -1 OR x > 1 THEN {_NAN} "
    "WHEN x >= 0 THEN pg_asind_q1(CAST(x AS DOUBLE)) ELSE -pg_asind_q1(-CAST(x AS DOUBLE)) END)",
    f"CREATE OR REPLACE MACRO pg_acosd(x) AS (CASE WHEN {_NOT_FINITE} OR x < -1 OR x > 1 THEN {_NAN} "
    "WHEN x >= 0 THEN pg_acosd_q1(CAST(x AS DOUBLE)) ELSE 90.0 + pg_asind_q1(-CAST(x AS DOUBLE)) END)",
    f"CREATE OR REPLACE MACRO pg_atand(x) AS (CASE WHEN isnan(CAST(x AS DOUBLE)) THEN {_NAN} "
    "ELSE (atan(x) / atan(1.0)) * 45.0 END)",
    f"CREATE OR REPLACE MACRO pg_atan2d(y, x) AS (CASE WHEN isnan(CAST(y AS DOUBLE)) OR isnan(CAST(x AS DOUBLE)) "
    f"THEN {_NAN} ELSE (atan2(y, x) / atan(1.0)) * 45.0 END)",
]

# rw_int256 (rw_cli.common.types): DuckDB's BIGNUM under the alias INT256. BIGNUM's own `*`,
# `/`, `%` and abs() answer in DOUBLE; these go through HUGEINT, exact (an operand or result
# beyond 128 bits is an out-of-range error, never a rounded value).
_HUGE = "CAST({} AS HUGEINT)"
_ACC16 = "(((acc + acc) + (acc + acc)) + ((acc + acc) + (acc + acc)))"
_ACC16 = f"({_ACC16} + {_ACC16})"  # acc * 16 by BIGNUM additions (exact)
_HEX_DIGITS = "lower(regexp_replace(h, '^0[xX]', ''))"
_INT256_MACROS = [
    f"CREATE OR REPLACE MACRO pg_int256_mul(a, b) AS (CAST({_HUGE.format('a')} * {_HUGE.format('b')} AS INT256))",
    "CREATE OR REPLACE MACRO pg_int256_div(a, b) AS (CASE WHEN b = 0 AND a IS NOT NULL THEN error('Division by zero') "
    f"ELSE CAST({_HUGE.format('a')} // {_HUGE.format('b')} AS INT256) END)",
    "CREATE OR REPLACE MACRO pg_int256_mod(a, b) AS (CASE WHEN b = 0 AND a IS NOT NULL THEN error('Division by zero') "
    f"ELSE CAST({_HUGE.format('a')} % {_HUGE.format('b')} AS INT256) END)",
    "CREATE OR REPLACE MACRO pg_int256_abs(a) AS (CASE WHEN a < 0 THEN -a ELSE a END)",
    # hex_to_int256('0x...'): up to 64 hex digits, two's complement when all 64 are given
    f"CREATE OR REPLACE MACRO hex_to_int256(h) AS (CASE "
    f"WHEN NOT regexp_full_match({_HEX_DIGITS}, '[0-9a-f]{{1,64}}') "
    "THEN error('invalid hexadecimal input for rw_int256: ' || h) "
    f"ELSE list_reduce(list_transform(string_split({_HEX_DIGITS}, ''), "
    "lambda c: CAST(strpos('0123456789abcdef', c) - 1 AS INT256)), "
    f"lambda acc, d: {_ACC16} + d, CAST(0 AS INT256)) "
    f"- CASE WHEN length({_HEX_DIGITS}) = 64 AND strpos('89abcdef', {_HEX_DIGITS}[1]) > 0 "
    f"THEN CAST('{2 ** 256}' AS INT256) ELSE CAST(0 AS INT256) END END)",
]

MAX_ARRAY_DEPTH = 6


def array_bound_macro(name: str, depth: int) -> str:
    """The name of our macro of array_lower / array_upper for arrays of `depth` levels."""
    return f"pg_{name}_{depth}"


def _longest(x: str, depth: int) -> str:
    """SQL of the longest length of the arrays `depth` levels inside the array `x` (0: its own)."""
    if depth == 0:
        return f"len({x})"
    var = f"d{depth}"
    return f"list_max(list_transform({x}, lambda {var}: {_longest(var, depth - 1)}))"


def _array_bound_macros() -> list[str]:
    """array_lower(a, d) and array_upper(a, d) as RisingWave computes them, one macro per
    depth of a's type (rw_cli.sql.array_dims): NULL for an array without a single element at
    its innermost level, or a dimension it has not; a lower bound of 1; the upper bound of a
    dimension is the longest of its (possibly ragged) arrays."""
    out = []
    for depth in range(1, MAX_ARRAY_DEPTH + 1):
        flat = "a"
        for _ in range(depth - 1):
            flat = f"flatten({flat})"
        for name in ("array_lower", "array_upper"):
            cases = " ".join(f"WHEN d = {level} THEN CAST({'1' if name == 'array_lower' else _longest('a', level - 1)}"
                             " AS INTEGER)" for level in range(1, depth + 1))
            out.append(f"CREATE OR REPLACE MACRO {array_bound_macro(name, depth)}(a, d) AS (CASE WHEN a IS NULL "
                       f"OR d IS NULL OR len({flat}) = 0 THEN NULL {cases} ELSE NULL END)")
    return out


# PostgreSQL's bytea bit and byte functions (rw_cli.sql.functions): bytes counted from 0,
# bits from the lowest of each byte, an index past the end an error
_BYTE_INDEX_CHECK = "WHEN n < 0 OR n >= {size} THEN pg_index_out_of_range(n, {size} - 1) "
_BYTEA_MACROS = [
    "CREATE OR REPLACE MACRO pg_index_out_of_range(n, last) AS "
    "(error('index ' || n || ' out of valid range, 0..' || last))",
    "CREATE OR REPLACE MACRO pg_get_byte(b, n) AS (CASE "
    + _BYTE_INDEX_CHECK.format(size="octet_length(b)")
    + "ELSE CAST('0x' || substr(hex(b), 2 * n + 1, 2) AS INTEGER) END)",
    "CREATE OR REPLACE MACRO pg_set_byte(b, n, v) AS (CASE "
    + _BYTE_INDEX_CHECK.format(size="octet_length(b)")
    + "ELSE unhex(substr(hex(b), 1, 2 * n) || printf('%02X', v & 255) || substr(hex(b), 2 * n + 3)) END)",
    "CREATE OR REPLACE MACRO pg_get_bit(b, n) AS (CASE "
    + _BYTE_INDEX_CHECK.format(size="octet_length(b) * 8")
    + "ELSE (pg_get_byte(b, n // 8) >> (n % 8)) & 1 END)",
    "CREATE OR REPLACE MACRO pg_set_bit(b, n, v) AS (CASE "
    + _BYTE_INDEX_CHECK.format(size="octet_length(b) * 8")
    + "WHEN v NOT IN (0, 1) THEN error('value ' || v || ' is invalid,new bit must be 0 or 1') "
    "WHEN v = 1 THEN pg_set_byte(b, n // 8, pg_get_byte(b, n // 8) | (1 << (n % 8))) "
    "ELSE pg_set_byte(b, n // 8, pg_get_byte(b, n // 8) & ~(1 << (n % 8))) END)",
    "CREATE OR REPLACE MACRO pg_bytea_bit_count(b) AS (bit_count(CAST(b AS BIT)))",
    # int8send / int8recv: a bigint's binary wire form (8 bytes, big-endian two's complement)
    "CREATE OR REPLACE MACRO pg_int8send(x) AS (unhex(lpad(hex(CAST(x AS BIGINT)), 16, '0')))",
    "CREATE OR REPLACE MACRO pg_int8recv(b) AS (CASE "
    "WHEN octet_length(b) <> 8 THEN error('could not convert slice to array') "
    "WHEN CAST('0x' || hex(b) AS UBIGINT) >= 9223372036854775808 "
    "THEN CAST(CAST(CAST('0x' || hex(b) AS UBIGINT) AS HUGEINT) - 18446744073709551616 AS BIGINT) "
    "ELSE CAST(CAST('0x' || hex(b) AS UBIGINT) AS BIGINT) END)",
]

# format_type's names of type oids (PostgreSQL's), each array type's too
_TYPE_OIDS = [(16, 1000, "boolean"), (17, 1001, "bytea"), (20, 1016, "bigint"), (21, 1005, "smallint"),
              (23, 1007, "integer"), (25, 1009, "text"), (700, 1021, "real"), (701, 1022, "double precision"),
              (1043, 1015, "character varying"), (1082, 1182, "date"), (1083, 1183, "time without time zone"),
              (1114, 1115, "timestamp without time zone"), (1184, 1185, "timestamp with time zone"),
              (1186, 1187, "interval"), (1700, 1231, "numeric"), (3802, 3807, "jsonb"),
              (2249, 2287, "record"), (26, 1028, "oid"), (19, 1003, "name"), (2205, 2210, "regclass")]
_FORMAT_TYPES = [(oid, name) for oid, _, name in _TYPE_OIDS] + [(oid, f"{name}[]") for _, oid, name in _TYPE_OIDS]

# make_date / make_time / make_timestamp / make_timestamptz with PostgreSQL's years (-1 is
# 1 BC: DuckDB's year 0) and RisingWave's checks and messages (DuckDB would shift a
# negative year by one, or accept a negative minute or second)
_YEAR = "CASE WHEN y < 0 THEN y + 1 ELSE y END"
_MAKE_MACROS = [
    "CREATE OR REPLACE MACRO pg_invalid_date(y, m, d) AS "
    "(error('Invalid parameter year, month, day: invalid date: ' || y || '-' || m || '-' || d))",
    "CREATE OR REPLACE MACRO pg_make_date(y, m, d) AS (CASE WHEN y IS NULL OR m IS NULL OR d IS NULL THEN NULL "
    f"WHEN y = 0 OR TRY(make_date({_YEAR}, m, d)) IS NULL THEN pg_invalid_date(y, m, d) "
    f"ELSE make_date({_YEAR}, m, d) END)",
    "CREATE OR REPLACE MACRO pg_check_time(h, mi, s) AS (CASE WHEN h IS NULL OR mi IS NULL OR s IS NULL THEN NULL "
    "WHEN s < 0 THEN error('Invalid parameter sec: invalid sec: ' || s) "
    "WHEN h < 0 OR h > 23 OR mi < 0 OR mi > 59 OR s >= 60 "
    "THEN error('Invalid parameter hour, min, sec: invalid time: ' || h || ':' || mi || ':' || s) ELSE true END)",
    "CREATE OR REPLACE MACRO pg_make_time(h, mi, s) AS (CASE WHEN pg_check_time(h, mi, s) THEN make_time(h, mi, s) END)",
    "CREATE OR REPLACE MACRO pg_make_timestamp(y, m, d, h, mi, s) AS (pg_make_date(y, m, d) + pg_make_time(h, mi, s))",
    "CREATE OR REPLACE MACRO pg_make_timestamptz(y, m, d, h, mi, s) AS (CASE WHEN pg_check_time(h, mi, s) "
    "AND pg_make_date(y, m, d) IS NOT NULL THEN make_timestamptz(y, m, d, h, mi, s) END), "
    "(y, m, d, h, mi, s, tz) AS (CASE WHEN pg_check_time(h, mi, s) "
    "AND pg_make_date(y, m, d) IS NOT NULL THEN make_timestamptz(y, m, d, h, mi, s, tz) END)",
]

# timestamptz + interval as PostgreSQL adds it: the months, then the days, to the local time
# in the session's zone (the result read back in that zone: an ambiguous local time is the
# later instant, a skipped one moves forward), then the rest as elapsed time. DuckDB's own
# sum keeps the earlier UTC offset of an ambiguous local time.
_MONTHS = "(datepart('year', i) * 12 + datepart('month', i))"
_DAYS = "datepart('day', i)"
_LOCAL_STEP = ("CASE WHEN {n} = 0 THEN {v} ELSE timezone(current_setting('TimeZone'), "
               "timezone(current_setting('TimeZone'), {v}) + {f}({n})) END")
_TSTZ_MACROS = [
    "CREATE OR REPLACE MACRO pg_tstz_add(v, i) AS ("
    + _LOCAL_STEP.format(n=_DAYS, f="to_days", v=_LOCAL_STEP.format(n=_MONTHS, f="to_months", v="v"))
    + f" + (i - to_months({_MONTHS}) - to_days({_DAYS})))",
]

_VEC = "CAST({} AS DOUBLE[])"
MACROS = [
    *_MAKE_MACROS,
    *_TSTZ_MACROS,
    *_array_bound_macros(),
    *_BYTEA_MACROS,
    *_INT256_MACROS,
    # pgvector's `a <-> b`, the L2 distance (vector(n) is FLOAT[n]; a text '[1,2,3]' casts too)
    "CREATE OR REPLACE MACRO pg_vector_l2(a, b) AS (sqrt(list_sum(list_transform("
    f"list_zip({_VEC.format('a')}, {_VEC.format('b')}), lambda p: (p[1] - p[2]) * (p[1] - p[2])))))",
    # RisingWave's map_from_key_values, with its checks and messages
    "CREATE OR REPLACE MACRO pg_map_from_key_values(k, v) AS (CASE WHEN k IS NULL OR v IS NULL THEN NULL "
    "WHEN len(k) <> len(v) THEN error('map keys and values have different length') "
    "WHEN list_contains(list_transform(k, lambda x: x IS NULL), true) THEN error('map keys must not be NULL') "
    "WHEN len(list_distinct(k)) <> len(k) THEN error('map keys must be unique') ELSE MAP(k, v) END)",
    # array_distinct as RisingWave's: the first of each value in the order they come, NULL
    # one of them (DuckDB's list_distinct drops NULLs and does not keep the order)
    "CREATE OR REPLACE MACRO pg_array_distinct(a) AS (list_filter(a, lambda x, i: list_position(a, x) = i))",
    # a[lo:hi] with PostgreSQL's bounds (rw_cli.sql.functions._array_slice)
    "CREATE OR REPLACE MACRO pg_array_slice(a, lo, hi) AS (CASE WHEN lo IS NULL OR hi IS NULL THEN NULL "
    "ELSE list_slice(a, greatest(lo, 1), CASE WHEN hi < 1 THEN 0 ELSE least(hi, len(a)) END) END)",
    # string_agg with a per-row delimiter (rw_cli.sql.functions): the first value, then each
    # later value with its delimiter in front, NULL values left out
    "CREATE OR REPLACE MACRO pg_string_agg(xs, pieces) AS (CASE WHEN len(list_filter(xs, lambda e: e IS NOT NULL)) = 0 "
    "THEN NULL ELSE list_filter(xs, lambda e: e IS NOT NULL)[1] || "
    "array_to_string(list_filter(pieces, lambda e: e IS NOT NULL)[2:], '') END)",
    # timestamptz input: PostgreSQL reads a UTC offset after a space (`07:30:00 -07:00`),
    # which DuckDB would take for a time zone name
    "CREATE OR REPLACE MACRO pg_timestamptz_in(s) AS "
    "(CAST(regexp_replace(s, '(\\d)\\s+([+-]\\d{1,2}(?::?\\d{2})?)\\s*$', '\\1\\2') AS TIMESTAMPTZ))",
    # array input syntax for DuckDB's text-to-list cast (rw_cli.common.pg_array, for a
    # constant): braces as brackets
    "CREATE OR REPLACE MACRO pg_array_brackets(s) AS (CASE WHEN ltrim(s) LIKE '{%' "
    "THEN translate(s, '{}', '[]') ELSE s END)",
    # a SIMILAR TO pattern that is not a constant as a regular expression (a constant one is
    # translated by rw_cli.sql.functions): % and _ are wildcards, `.` is literal, `\%` and `\_`
    # stand for themselves
    "CREATE OR REPLACE MACRO pg_similar_regex(p) AS (replace(replace(replace(replace(replace(replace(replace("
    "p, '\\%', chr(1)), '\\_', chr(2)), '.', '\\.'), '%', '.*'), '_', '.'), chr(1), '%'), chr(2), '_'))",
    # array_to_string of the elements' texts (rw_cli.sql.functions._array_join): NULLs skipped,
    # a delimiter of the row's own
    "CREATE OR REPLACE MACRO pg_array_join(texts, sep) AS (CASE WHEN sep IS NULL OR texts IS NULL THEN NULL "
    "WHEN len(list_filter(texts, lambda e: e IS NOT NULL)) = 0 THEN '' "
    "ELSE list_reduce(list_filter(texts, lambda e: e IS NOT NULL), lambda a, b: a || sep || b) END)",
    # to_char's TZH:TZM from strftime's %z (`+05:30`, but `+00` for a whole hour)
    "CREATE OR REPLACE MACRO pg_tzh_tzm(z) AS (CASE WHEN length(z) = 3 THEN z || ':00' ELSE z END)",
    # text as a date, as RisingWave reads it (speedate's YYYY-MM-DD: a four-digit year, two-digit
    # month and day; a time after it is allowed, as DuckDB reads it): `1900-1-1`, `02-02-1992`,
    # `infinity` are refused
    "CREATE OR REPLACE MACRO pg_date_in(s) AS (CASE WHEN s IS NULL THEN NULL "
    "WHEN regexp_full_match(s, '\\s*[0-9]{4}-[0-9]{2}-[0-9]{2}([ T].*)?') THEN CAST(s AS DATE) "
    "ELSE error('Can''t cast string to date (expected format is YYYY-MM-DD): \"' || s || '\"') END)",
    # a record's field as record_out writes it (rw_cli.sql.functions._struct_text_out):
    # NULL as nothing; quoted when empty or holding parentheses, a comma, quotes, backslashes
    # or spaces, a quote inside doubled and a backslash escaped
    "CREATE OR REPLACE MACRO pg_record_item(e) AS (CASE WHEN e IS NULL THEN '' "
    "WHEN e = '' OR regexp_matches(e, '[(),\"\\\\\\s]') "
    "THEN '\"' || replace(replace(e, '\\', '\\\\'), '\"', '\"\"') || '\"' ELSE e END)",
    # timestamptz as text, as RisingWave casts it (chrono's `%Y-%m-%d %H:%M:%S%.f%:z` in the
    # session's zone): fractions in 3 or 6 digits (none when whole), offset `-08:00`, the same
    # text its query results show (PostgreSQL's cast writes `-08`)
    "CREATE OR REPLACE MACRO pg_timestamptz_out(x) AS (CASE WHEN NOT isfinite(x) OR year(x) < 1 "
    "THEN CAST(x AS VARCHAR) ELSE strftime(x, '%Y-%m-%d %H:%M:%S') || pg_frac(microsecond(x) % 1000000) "
    "|| pg_tzh_tzm(strftime(x, '%z')) END)",
    # chrono's `%.f`: fractional seconds in 3 or 6 digits, none when whole
    "CREATE OR REPLACE MACRO pg_frac(us) AS (CASE WHEN us = 0 THEN '' "
    "WHEN us % 1000 = 0 THEN '.' || lpad(CAST(us // 1000 AS VARCHAR), 3, '0') "
    "ELSE '.' || lpad(CAST(us AS VARCHAR), 6, '0') END)",
    # timestamp and time as text, as RisingWave casts them (its text form, the one a query
    # shows: `2022-01-01 00:00:00.500`, where DuckDB's cast writes `.5`)
    "CREATE OR REPLACE MACRO pg_timestamp_out(x) AS (CASE WHEN NOT isfinite(x) OR year(x) < 1 "
    "THEN CAST(x AS VARCHAR) ELSE strftime(x, '%Y-%m-%d %H:%M:%S') || pg_frac(microsecond(x) % 1000000) END)",
    "CREATE OR REPLACE MACRO pg_time_out(x) AS "
    "(strftime(DATE '2000-01-01' + x, '%H:%M:%S') || pg_frac(microsecond(x) % 1000000))",
    # PostgreSQL's array output from its elements' text (NULL elements as NULL): elements
    # quoted where PostgreSQL quotes them (empty, `NULL`, or holding braces, quotes, commas,
    # backslashes or spaces); pg_array_out_nested for arrays of arrays (inner texts as they are)
    "CREATE OR REPLACE MACRO pg_array_out(texts) AS ('{' || array_to_string(list_transform(texts, lambda e: "
    "CASE WHEN e IS NULL THEN 'NULL' WHEN e = '' OR upper(e) = 'NULL' OR regexp_matches(e, '[{}\",\\\\\\s]') "
    "THEN '\"' || replace(replace(e, '\\', '\\\\'), '\"', '\\\"') || '\"' ELSE e END), ',') || '}')",
    "CREATE OR REPLACE MACRO pg_array_out_nested(texts) AS ('{' || array_to_string(list_transform(texts, "
    "lambda e: coalesce(e, 'NULL')), ',') || '}')",
    "CREATE OR REPLACE MACRO booleq(a, b) AS (a::BOOLEAN = b::BOOLEAN)",
    "CREATE OR REPLACE MACRO boolne(a, b) AS (a::BOOLEAN <> b::BOOLEAN)",
    # bool input: PostgreSQL trims whitespace and accepts unique prefixes of true/false/yes/no/on/off.
    "CREATE OR REPLACE MACRO pg_text_to_bool(s) AS (CASE "
    "WHEN s IS NULL THEN NULL "
    "WHEN lower(trim(s)) IN ('t','tr','tru','true','y','ye','yes','on','1') THEN TRUE "
    "WHEN lower(trim(s)) IN ('f','fa','fal','fals','false','n','no','of','off','0') THEN FALSE "
    "ELSE error('invalid input syntax for type boolean: \"' || s || '\"') END)",
    "CREATE OR REPLACE MACRO pg_bool_out(b) AS (CASE WHEN b THEN 't' WHEN NOT b THEN 'f' END)",
    "CREATE OR REPLACE MACRO pg_gamma(x) AS (CASE "
    "WHEN x IS NULL THEN NULL "
    "WHEN isnan(x) THEN x "
    "WHEN isinf(x) AND x < 0 THEN error('Numeric out of range: overflow') "
    "WHEN x = floor(x) AND x <= 0 THEN error('Numeric out of range: overflow') "
    "WHEN NOT isfinite(gamma(x)) AND isfinite(x) THEN error('Numeric out of range: overflow') "
    "WHEN gamma(x) = 0 AND isfinite(x) THEN error('Numeric out of range: underflow') "
    "ELSE gamma(x) END)",
    "CREATE OR REPLACE MACRO pg_lgamma(x) AS (CASE "
    "WHEN x IS NULL THEN NULL "
    "WHEN isnan(x) THEN x "
    "WHEN isinf(x) THEN CAST('inf' AS DOUBLE) "
    "WHEN x = floor(x) AND x <= 0 THEN error('Numeric out of range: overflow') "
    "WHEN NOT isfinite(lgamma(x)) AND isfinite(x) THEN error('Numeric out of range: overflow') "
    "ELSE lgamma(x) END)",
    # approx_percentile's answer from its chosen bucket key (rw_cli.sql.approx_percentile):
    # ±2 * base^id / (base + 1), base^id by __powidf2's multiplications of the squares base^(2^k)
    "CREATE OR REPLACE MACRO pg_powi_abs(n, squares) AS (list_reduce(list_transform(range(0, 32), "
    "lambda b: CASE WHEN (n >> b) & 1 = 1 THEN squares[b + 1] ELSE CAST(1 AS DOUBLE) END), lambda l, r: l * r))",
    "CREATE OR REPLACE MACRO pg_powi(i, squares) AS (CASE WHEN i < 0 THEN 1.0 / pg_powi_abs(-i, squares) "
    "ELSE pg_powi_abs(i, squares) END)",
    "CREATE OR REPLACE MACRO pg_ddsketch_value(k, squares, denom) AS (CASE WHEN k IS NULL THEN NULL "
    "WHEN k = 0 THEN CAST(0 AS DOUBLE) ELSE CAST(sign(k) * 2 AS DOUBLE) "
    "* pg_powi(CASE WHEN k > 0 THEN k - 4294967296 ELSE -(k + 4294967296) END, squares) / denom END)",
    # PostgreSQL's make_interval: seconds rounded to microseconds, the rest exact
    "CREATE OR REPLACE MACRO pg_make_interval(y, mo, w, d, h, mi, s) AS (to_months(CAST(y AS BIGINT) * 12 + mo) "
    "+ to_days(CAST(w AS BIGINT) * 7 + d) + to_microseconds(CAST(h AS BIGINT) * 3600000000 "
    "+ CAST(mi AS BIGINT) * 60000000 + CAST(round(CAST(s AS DOUBLE) * 1000000) AS BIGINT)))",
    # a NULL dividend is NULL even over zero (the operators are strict in PostgreSQL)
    "CREATE OR REPLACE MACRO pg_div(a, b) AS (CASE WHEN b = 0 AND a IS NOT NULL THEN error('Division by zero') "
    "ELSE a / b END)",
    "CREATE OR REPLACE MACRO pg_mod(a, b) AS (CASE WHEN b = 0 AND a IS NOT NULL THEN error('Division by zero') "
    "ELSE a % b END)",
    # streaming's non-strict forms: NULL instead of the error (RisingWave's non-strict mode)
    "CREATE OR REPLACE MACRO pg_div_or_null(a, b) AS (CASE WHEN b = 0 THEN NULL ELSE TRY(a / b) END)",
    "CREATE OR REPLACE MACRO pg_mod_or_null(a, b) AS (CASE WHEN b = 0 THEN NULL ELSE TRY(a % b) END)",
    "CREATE OR REPLACE MACRO quote_ident(s) AS (CASE WHEN regexp_full_match(s, '[a-z_][a-z0-9_$]*') THEN s "
    "ELSE '\"' || replace(s, '\"', '\"\"') || '\"' END)",
    "CREATE OR REPLACE MACRO quote_literal(s) AS (chr(39) || replace(s::VARCHAR, chr(39), chr(39) || chr(39)) "
    "|| chr(39))",
    # substr's count (RisingWave's error for a negative one), in 64 bits: start + count
    # may pass 2^31
    # (DuckDB's greatest / least skip a NULL argument: a NULL start or count is a NULL result)
    "CREATE OR REPLACE MACRO pg_substr(s, st, ln) AS (CASE WHEN st IS NULL OR ln IS NULL THEN NULL WHEN ln < 0 THEN "
    "error('length in substr should be non-negative') "
    "ELSE substring(s, greatest(CAST(st AS BIGINT), 1), "
    "greatest(CAST(ln AS BIGINT) + least(CAST(st AS BIGINT), 1) - 1, 0)) END)",
    "CREATE OR REPLACE MACRO pg_substr1(s, st) AS (CASE WHEN st IS NULL THEN NULL "
    "ELSE substring(s, greatest(st, 1)) END)",
    # the same over bytea, by its hex digits (two per byte; DuckDB has no substring of a BLOB)
    "CREATE OR REPLACE MACRO pg_bytea_substr(b, st, ln) AS (CASE WHEN st IS NULL OR ln IS NULL THEN NULL "
    "WHEN ln < 0 THEN error('length in substr should be non-negative') "
    "ELSE unhex(substring(hex(b), 2 * greatest(CAST(st AS BIGINT), 1) - 1, "
    "2 * greatest(CAST(ln AS BIGINT) + least(CAST(st AS BIGINT), 1) - 1, 0))) END)",
    "CREATE OR REPLACE MACRO pg_bytea_substr1(b, st) AS (CASE WHEN st IS NULL THEN NULL "
    "ELSE unhex(substring(hex(b), 2 * greatest(CAST(st AS BIGINT), 1) - 1)) END)",
    # a SQL NULL (not JSON null) has no JSON type: NULL
    "CREATE OR REPLACE MACRO jsonb_typeof(j) AS (CASE WHEN j IS NULL THEN NULL ELSE CASE json_type(j::JSON) "
    "WHEN 'OBJECT' THEN 'object' "
    "WHEN 'ARRAY' THEN 'array' WHEN 'VARCHAR' THEN 'string' WHEN 'BOOLEAN' THEN 'boolean' "
    "WHEN 'NULL' THEN 'null' ELSE 'number' END END)",
    # PostgreSQL's millennia start at years 1, 1001, 2001 (DuckDB's at 0, 1000, 2000)
    "CREATE OR REPLACE MACRO pg_date_trunc(u, t) AS (CASE WHEN lower(u) IN ('millennium', 'millennia') "
    "THEN date_trunc('year', t) - to_years(CAST(year(t) - ((year(t) - 1) // 1000 * 1000 + 1) AS INTEGER)) "
    "WHEN lower(u) IN ('century', 'centuries') "
    "THEN date_trunc('year', t) - to_years(CAST(year(t) - ((year(t) - 1) // 100 * 100 + 1) AS INTEGER)) "
    "ELSE date_trunc(u, t) END)",
    # sum(interval): months, days and time summed separately, as PostgreSQL does
    "CREATE OR REPLACE MACRO pg_sum_interval(i) AS ("
    "to_months(CAST(sum(datepart('year', i) * 12 + datepart('month', i)) AS INTEGER)) "
    "+ to_days(CAST(sum(datepart('day', i)) AS INTEGER)) "
    "+ to_microseconds(CAST(sum(epoch_us(i) - ((datepart('year', i) * 12 + datepart('month', i)) * 30 "
    "+ datepart('day', i)) * 86400000000) AS BIGINT)))",
    # an interval as RisingWave's hash key holds it (months of 30 days, days of 24 hours, one
    # sign): what DISTINCT and GROUP BY output for an interval key
    "CREATE OR REPLACE MACRO pg_justify_us(t) AS (to_months(CAST(t // 2592000000000 AS INTEGER)) "
    "+ to_days(CAST((t % 2592000000000) // 86400000000 AS INTEGER)) "
    "+ to_microseconds(CAST((t % 2592000000000) % 86400000000 AS BIGINT)))",
    "CREATE OR REPLACE MACRO pg_interval_key(i) AS (pg_justify_us(epoch_us(i)))",
    "CREATE OR REPLACE MACRO pg_table_is_visible(oid) AS (TRUE)",
    "CREATE OR REPLACE MACRO pg_type_is_visible(oid) AS (TRUE)",
    "CREATE OR REPLACE MACRO pg_get_userbyid(oid) AS ('root')",
    "CREATE OR REPLACE MACRO obj_description(oid, cls) AS (CAST('' AS VARCHAR))",
    "CREATE OR REPLACE MACRO col_description(oid, n) AS (CAST('' AS VARCHAR))",
    "CREATE OR REPLACE MACRO pg_encoding_to_char(e) AS ('UTF8')",
    # privilege checks over columns (BI tools list tables so); calls of literal arguments
    # are answered from the access catalog when bound (rw_cli.sql.privileges)
    *(f"CREATE OR REPLACE MACRO {f}(a, b) AS (TRUE), (u, a, b) AS (TRUE)"
      for f in ("has_table_privilege", "has_schema_privilege", "has_database_privilege", "has_function_privilege",
                "has_any_column_privilege", "has_sequence_privilege")),
    "CREATE OR REPLACE MACRO has_column_privilege(a, c, b) AS (TRUE), (u, a, c, b) AS (TRUE)",
    # RisingWave cancels no backend through these (its sessions are cancelled by the client's
    # cancel request): they answer false, as RisingWave's do
    "CREATE OR REPLACE MACRO pg_cancel_backend(pid) AS (FALSE)",
    "CREATE OR REPLACE MACRO pg_terminate_backend(pid) AS (FALSE)",
    # what drivers' reflection queries call: rw has no sequences, collations or stored
    # expressions of defaults, so these answer "none"
    "CREATE OR REPLACE MACRO pg_get_serial_sequence(t, c) AS (CAST(NULL AS VARCHAR))",
    # pg_proc holds no rows: psql's \df binds these and lists nothing
    "CREATE OR REPLACE MACRO pg_function_is_visible(oid) AS (TRUE)",
    "CREATE OR REPLACE MACRO pg_statistics_obj_is_visible(oid) AS (TRUE)",
    "CREATE OR REPLACE MACRO pg_ts_config_is_visible(oid) AS (TRUE)",
    "CREATE OR REPLACE MACRO pg_ts_parser_is_visible(oid) AS (TRUE)",
    "CREATE OR REPLACE MACRO pg_ts_dict_is_visible(oid) AS (TRUE)",
    "CREATE OR REPLACE MACRO pg_ts_template_is_visible(oid) AS (TRUE)",
    "CREATE OR REPLACE MACRO pg_conversion_is_visible(oid) AS (TRUE)",
    "CREATE OR REPLACE MACRO pg_operator_is_visible(oid) AS (TRUE)",
    "CREATE OR REPLACE MACRO pg_get_function_result(oid) AS (CAST(NULL AS VARCHAR))",
    "CREATE OR REPLACE MACRO pg_get_function_arguments(oid) AS (CAST(NULL AS VARCHAR))",
    "CREATE OR REPLACE MACRO pg_get_function_identity_arguments(oid) AS (CAST(NULL AS VARCHAR))",
    "CREATE OR REPLACE MACRO shobj_description(oid, cls) AS (CAST('' AS VARCHAR))",
    "CREATE OR REPLACE MACRO pg_tablespace_location(oid) AS ('')",
    "CREATE OR REPLACE MACRO getdatabaseencoding() AS ('UTF8')",
    "CREATE OR REPLACE MACRO pg_char_to_encoding(name) AS (CASE WHEN upper(name) IN ('UTF8', 'UTF-8') THEN 6 ELSE -1 END)",
    # PostgreSQL's pg_size_pretty(bigint): bytes below 10 kB, else kB, MB, GB, TB rounded half
    # away from zero (one extra bit kept for the rounding)
    "CREATE OR REPLACE MACRO pg_half_rounded(x) AS (CAST(trunc((x + CASE WHEN x < 0 THEN -1 ELSE 1 END) / 2) AS BIGINT))",
    "CREATE OR REPLACE MACRO pg_size_pretty(b) AS (CASE WHEN b IS NULL THEN NULL "
    "WHEN abs(b) < 10240 THEN CAST(b AS VARCHAR) || ' bytes' "
    "WHEN abs(b >> 9) < 20479 THEN CAST(pg_half_rounded(b >> 9) AS VARCHAR) || ' kB' "
    "WHEN abs(b >> 19) < 20479 THEN CAST(pg_half_rounded(b >> 19) AS VARCHAR) || ' MB' "
    "WHEN abs(b >> 29) < 20479 THEN CAST(pg_half_rounded(b >> 29) AS VARCHAR) || ' GB' "
    "ELSE CAST(pg_half_rounded(b >> 39) AS VARCHAR) || ' TB' END)",
    "CREATE OR REPLACE MACRO pg_collation_is_visible(oid) AS (TRUE)",
    "CREATE OR REPLACE MACRO pg_relation_is_publishable(oid) AS (FALSE)",
    "CREATE OR REPLACE MACRO pg_get_expr(e, r) AS (coalesce(CAST(e AS VARCHAR), '')), "
    "(e, r, pretty) AS (coalesce(CAST(e AS VARCHAR), ''))",
    "CREATE OR REPLACE MACRO pg_get_constraintdef(oid) AS (CAST(NULL AS VARCHAR)), "
    "(oid, pretty) AS (CAST(NULL AS VARCHAR))",
    "CREATE OR REPLACE MACRO pg_get_indexdef(oid) AS (CAST(NULL AS VARCHAR)), "
    "(oid, col, pretty) AS (CAST(NULL AS VARCHAR))",
    "CREATE OR REPLACE MACRO pg_format_type(oid, typmod) AS (CASE WHEN oid IS NULL THEN NULL "
    + " ".join(f"WHEN oid = {o} THEN '{n}'" for o, n in _FORMAT_TYPES) + " ELSE '???' END)",
    f"CREATE OR REPLACE MACRO pg_typeof_name(x) AS ({_pg_type_names('typeof(x)')})",
    # width_bucket(operand, low, high, count): the 1-based bucket of count equal ones between
    # low and high (either order), 0 below the range and count + 1 above, as PostgreSQL's
    "CREATE OR REPLACE MACRO pg_width_bucket(x, lo, hi, n) AS (CASE "
    "WHEN x IS NULL OR lo IS NULL OR hi IS NULL OR n IS NULL THEN NULL "
    "WHEN n <= 0 THEN error('count must be greater than zero') "
    "WHEN lo = hi THEN error('lower bound cannot equal upper bound') "
    "WHEN isnan(x) OR isnan(lo) OR isnan(hi) THEN error('operand, lower bound, and upper bound cannot be NaN') "
    "WHEN lo < hi AND x < lo THEN 0 WHEN lo < hi AND x >= hi THEN n + 1 "
    "WHEN lo < hi THEN CAST(floor((x - lo) / (hi - lo) * n) AS INT) + 1 "
    "WHEN x > lo THEN 0 WHEN x <= hi THEN n + 1 "
    "ELSE CAST(floor((lo - x) / (lo - hi) * n) AS INT) + 1 END)",
    *_MATH_MACROS,
    *_DEGREE_MACROS,
    *_JSONB_MACROS,
]

# an error() call of a macro body (its message: literals and concatenations, no parentheses)
_ERROR_CALL = re.compile(r"error\((?:'(?:[^']|'')*'|[^()'])*\)")


def non_strict_name(name: str) -> str:
    """The name of the NULL-returning form of the raising macro `name`."""
    return f"{name}_or_null"


def _macro_name(macro: str) -> str:
    return macro.split()[4].split("(")[0]  # CREATE OR REPLACE MACRO name(...)


def _raising_macros(macros: list[str]) -> frozenset[str]:
    """The macros that raise a PostgreSQL error through DuckDB's error(), or call one that
    does. DuckDB counts error() as volatile, so no TRY may enclose a call of one: read from
    the bodies, so that a new macro cannot be missed."""
    bodies = {_macro_name(m): m.split(" AS ", 1)[1] for m in macros}
    raising = {name for name, body in bodies.items() if _ERROR_CALL.search(body)}
    while True:
        calls = re.compile(r"\b(" + "|".join(sorted(raising)) + r")\(")
        more = {name for name, body in bodies.items() if name not in raising and calls.search(body)}
        if not more:
            return frozenset(raising)
        raising |= more


RAISING_MACROS = _raising_macros(MACROS)


def _non_strict_macros() -> list[str]:
    """Each raising macro's non-strict form (streaming: NULL for the row instead of the
    error): the same body with its error() calls replaced by NULL and its calls of raising
    macros by their non-strict forms. A form written by hand (division's TRY of the
    quotient) is kept."""
    written = {_macro_name(m) for m in MACROS}
    calls = re.compile(r"\b(" + "|".join(sorted(RAISING_MACROS)) + r")\(")
    out = []
    for macro in MACROS:
        name = _macro_name(macro)
        if name in RAISING_MACROS and non_strict_name(name) not in written:
            head, body = macro.split(" AS ", 1)
            body = calls.sub(lambda m: non_strict_name(m.group(1)) + "(", _ERROR_CALL.sub("NULL", body))
            out.append(head.replace(f"MACRO {name}(", f"MACRO {non_strict_name(name)}(", 1) + " AS " + body)
    return out


MACROS += _non_strict_macros()


# -- Python UDFs (vectorized over Arrow) ---------------------------------------------------------

def _map(arr: pa.Array, fn, out_type: pa.DataType) -> pa.Array:
    return pa.array([None if v is None else fn(v) for v in arr.to_pylist()], type=out_type)


def bytea_in(text: str) -> bytes:
    """PostgreSQL's bytea input: `\\x` hex, or escape format (`\\\\`, `\\ooo`)."""
    if text.startswith("\\x"):
        try:
            return bytes.fromhex(text[2:])
        except ValueError:
            raise ValueError(f'invalid hexadecimal data: "{text}"') from None
    out = bytearray()
    i = 0
    raw = text.encode()
    while i < len(raw):
        c = raw[i]
        if c == 0x5C:
            if raw[i + 1: i + 2] == b"\\":
                out.append(0x5C)
                i += 2
                continue
            digits = raw[i + 1: i + 4]
            if len(digits) == 3 and all(0x30 <= d <= 0x37 for d in digits):
                out.append(int(digits, 8))
                i += 4
                continue
            raise ValueError("invalid input syntax for type bytea")
        out.append(c)
        i += 1
    return bytes(out)


def _escape_out(b: bytes) -> str:
    parts = []
    for c in b:
        if c == 0x5C:
            parts.append("\\\\")
        elif 0x20 <= c < 0x7F:
            parts.append(chr(c))
        else:
            parts.append(f"\\{c:03o}")
    return "".join(parts)


def _encode(b: bytes, fmt: str) -> str:
    fmt = fmt.lower()
    if fmt == "hex":
        return b.hex()
    if fmt == "base64":
        text = base64.b64encode(b).decode()
        return "\n".join(text[i:i + 76] for i in range(0, len(text), 76))
    if fmt == "escape":
        return _escape_out(b)
    raise ValueError(f'unrecognized encoding: "{fmt}"')


def _decode(s: str, fmt: str) -> bytes:
    fmt = fmt.lower()
    if fmt == "hex":
        return bytes.fromhex(s)
    if fmt == "base64":
        return base64.b64decode("".join(s.split()), validate=False)
    if fmt == "escape":
        return bytea_in(s) if "\\" in s else s.encode()
    raise ValueError(f'unrecognized encoding: "{fmt}"')


def udf_bytea_in(a: pa.Array) -> pa.Array:
    return _map(a, bytea_in, pa.binary())


def udf_encode(b: pa.Array, fmt: pa.Array) -> pa.Array:
    return pa.array([None if x is None or f is None else _encode(x, f)
                     for x, f in zip(b.to_pylist(), fmt.to_pylist())], pa.string())


def udf_decode(s: pa.Array, fmt: pa.Array) -> pa.Array:
    return pa.array([None if x is None or f is None else _decode(x, f)
                     for x, f in zip(s.to_pylist(), fmt.to_pylist())], pa.binary())


def _string_to_array(s, d, n):
    if s is None:
        return None
    if d is None:
        parts = list(s)
    elif d == "":
        parts = [s] if s != "" else []
    else:
        parts = s.split(d) if s != "" else []
    return [None if (n is not None and p == n) else p for p in parts]


def udf_string_to_array(s: pa.Array, d: pa.Array, n: pa.Array) -> pa.Array:
    return pa.array([_string_to_array(a, b, c) for a, b, c in zip(s.to_pylist(), d.to_pylist(), n.to_pylist())],
                    pa.list_(pa.string()))


def udf_float8_out(a: pa.Array) -> pa.Array:
    from rw_cli.common.pg_text import format_float8

    return _map(a, format_float8, pa.string())


def udf_float4_out(a: pa.Array) -> pa.Array:
    from rw_cli.common.pg_text import format_float4

    return _map(a, format_float4, pa.string())


def _mdn(v) -> tuple[int, int, int]:
    return v.months, v.days, v.nanoseconds // 1000


def _to_mdn(t: tuple[int, int, int]):
    return pa.MonthDayNano([t[0], t[1], t[2] * 1000])


def udf_interval_in(a: pa.Array) -> pa.Array:
    from rw_cli.common.pg_interval import parse_interval

    return pa.array([None if v is None else _to_mdn(parse_interval(v)) for v in a.to_pylist()],
                    pa.month_day_nano_interval())


def _interval_udf(name: str):
    def udf(a: pa.Array) -> pa.Array:
        from rw_cli.common import pg_interval

        fn = getattr(pg_interval, name)
        return pa.array([None if v is None else _to_mdn(fn(*_mdn(v))) for v in a.to_pylist()],
                        pa.month_day_nano_interval())
    return udf


def _interval_scale_udf(divide: bool):
    def udf(a: pa.Array, f: pa.Array) -> pa.Array:
        from rw_cli.common.pg_interval import scale_interval

        return pa.array([None if v is None or x is None else _to_mdn(scale_interval(*_mdn(v), x, divide))
                         for v, x in zip(a.to_pylist(), f.to_pylist())], pa.month_day_nano_interval())
    return udf


def udf_jsonb_in(a: pa.Array) -> pa.Array:
    return _map(a, jsonb_in, pa.string())


def udf_jsonb_contains(a: pa.Array, b: pa.Array) -> pa.Array:
    return pa.array([None if x is None or y is None else jsonb_contains(x, y)
                     for x, y in zip(a.to_pylist(), b.to_pylist())], pa.bool_())


def _regexp_flags(flags: str, allow_global: bool) -> tuple[int, bool]:
    """PostgreSQL's regexp flags: `i` / `c` turn case-insensitivity on / off (the last wins),
    `g` finds every match (regexp_matches only)."""
    case, glob = 0, False
    for f in flags:
        if f == "i":
            case = re.IGNORECASE
        elif f == "c":
            case = 0
        elif f == "g" and allow_global:
            glob = True
        elif f == "g":
            raise ValueError('regexp_match() does not support the "global" option')
        else:
            raise ValueError(f"invalid regular expression option: \"{f}\"")
    return case, glob


def _groups(m: re.Match) -> list:
    return list(m.groups()) if m.groups() else [m.group(0)]


def _regexp_match(s, p, flags=""):
    if s is None or p is None or flags is None:
        return None
    case, _ = _regexp_flags(flags, False)
    m = re.search(p, s, case)
    return None if m is None else _groups(m)


def _regexp_matches(s, p, flags=""):
    """regexp_matches' rows: every match's groups (RisingWave finds every match with or
    without `g`; PostgreSQL without it stops at the first)."""
    if s is None or p is None or flags is None:
        return []
    case, _ = _regexp_flags(flags, True)
    return [_groups(m) for m in re.finditer(p, s, case)]


def udf_jsonb_object_agg(keys: pa.Array, values: pa.Array) -> pa.Array:
    """jsonb_object_agg's object, built once per group from the group's keys and values."""
    return pa.array([None if k is None else jsonb_object_of(k, v)
                     for k, v in zip(keys.to_pylist(), values.to_pylist())], pa.string())


def udf_to_char_interval(a: pa.Array, fmt: pa.Array) -> pa.Array:
    """to_char(interval, template) (rw_cli.common.pg_interval_char)."""
    from rw_cli.common.pg_interval_char import to_char_interval

    return pa.array([None if v is None or f is None else to_char_interval(*_mdn(v), f)
                     for v, f in zip(a.to_pylist(), fmt.to_pylist())], pa.string())


def udf_regexp_match(s: pa.Array, p: pa.Array, f: pa.Array) -> pa.Array:
    return pa.array([_regexp_match(a, b, c) for a, b, c in zip(s.to_pylist(), p.to_pylist(), f.to_pylist())],
                    pa.list_(pa.string()))


def udf_regexp_matches(s: pa.Array, p: pa.Array, f: pa.Array) -> pa.Array:
    return pa.array([_regexp_matches(a, b, c) for a, b, c in zip(s.to_pylist(), p.to_pylist(), f.to_pylist())],
                    pa.list_(pa.list_(pa.string())))


def udf_to_date(texts: pa.Array, templates: pa.Array) -> pa.Array:
    """to_date(text, template) with a template that is not a constant (rw_cli.common.pg_template)."""
    out = [None if s is None or f is None else parse_date(s, f)
           for s, f in zip(texts.to_pylist(), templates.to_pylist())]
    return pa.array(out, pa.int32()).cast(pa.date32())


def udf_casefold(a: pa.Array) -> pa.Array:
    """casefold(text): Unicode's full case folding (`ß` -> `ss`, `ﬁ` -> `fi`); ASCII text, the
    usual case, is Arrow's lower case."""
    import pyarrow.compute as pc

    if pc.all(pc.string_is_ascii(a)).as_py() is not False:
        return pc.utf8_lower(a)
    return _map(a, str.casefold, pa.string())


def _crc32c_table() -> list[int]:
    table = []
    for n in range(256):
        c = n
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


_CRC32C = _crc32c_table()


def _crc32c(data: bytes) -> int:
    """CRC-32C (Castagnoli), which zlib has not."""
    c = 0xFFFFFFFF
    for byte in data:
        c = _CRC32C[(c ^ byte) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def _digest_udf(algorithm: str):
    """The digest of each bytea by hashlib's `algorithm`, as its bytes."""
    import hashlib

    def digest(a: pa.Array) -> pa.Array:
        return _map(a, lambda v: hashlib.new(algorithm, v).digest(), pa.binary())
    return digest


def udf_crc32(a: pa.Array) -> pa.Array:
    import zlib

    return _map(a, zlib.crc32, pa.int64())


def udf_le_bytes(values: pa.Array, widths: pa.Array) -> pa.Array:
    """Each integer as its `width` little-endian bytes (two's complement): what Rust's `Hash`
    writes for it (rw_cli.sql.vnode)."""
    return pa.array([None if v is None or w is None else int(v).to_bytes(int(w), "little", signed=True)
                     for v, w in zip(values.to_pylist(), widths.to_pylist())], type=pa.binary())


def udf_interval_out(a: pa.Array) -> pa.Array:
    """An interval as PostgreSQL's interval output writes it (`1 year 2 mons 3 days`), the
    text a query shows; DuckDB's cast writes `1 year 2 months 3 days`."""
    from rw_cli.common.pg_text import format_interval

    return _map(a, format_interval, pa.string())


def udf_crc32c(a: pa.Array) -> pa.Array:
    return _map(a, _crc32c, pa.int64())


def _strip_nulls(v):
    """jsonb_strip_nulls(j, true): null object members and null array elements, at any depth."""
    if isinstance(v, dict):
        return {k: _strip_nulls(x) for k, x in v.items() if x is not None}
    if isinstance(v, list):
        return [_strip_nulls(x) for x in v if x is not None]
    return v


def udf_jsonb_strip_all_nulls(a: pa.Array) -> pa.Array:
    import json
    from decimal import Decimal

    from rw_cli.common.pg_json import jsonb_text

    return _map(a, lambda t: jsonb_text(_strip_nulls(json.loads(t, parse_float=Decimal))), pa.string())


def _pretty(v, depth: int) -> str:
    """jsonb_pretty's layout (PostgreSQL's): one member or element a line, four spaces an
    indent level; an empty container still breaks its line."""
    from rw_cli.common.pg_json import jsonb_text

    pad, inner = "    " * depth, "    " * (depth + 1)
    if isinstance(v, dict) and v:
        # keys in jsonb's order (a literal's text may not be): RisingWave's, by their bytes
        items = [f"{inner}{jsonb_text(k)}: {_pretty(x, depth + 1)}"
                 for k, x in sorted(v.items(), key=lambda kv: kv[0].encode())]
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if isinstance(v, list) and v:
        return "[\n" + ",\n".join(inner + _pretty(x, depth + 1) for x in v) + "\n" + pad + "]"
    if isinstance(v, (dict, list)):
        return ("{" if isinstance(v, dict) else "[") + "\n" + pad + ("}" if isinstance(v, dict) else "]")
    return jsonb_text(v)


def udf_jsonb_pretty(a: pa.Array) -> pa.Array:
    import json
    from decimal import Decimal

    return _map(a, lambda t: _pretty(json.loads(t, parse_float=Decimal), 0), pa.string())


# name -> (function, parameter types, return type) in DuckDB type names
UDFS = {
    "pg_to_date": (udf_to_date, ["VARCHAR", "VARCHAR"], "DATE"),
    "pg_casefold": (udf_casefold, ["VARCHAR"], "VARCHAR"),
    "pg_crc32": (udf_crc32, ["BLOB"], "BIGINT"),
    **{f"pg_sha{n}": (_digest_udf("sha1" if n == 1 else f"sha{n}"), ["BLOB"], "BLOB") for n in (1, 224, 256, 384, 512)},
    "pg_crc32c": (udf_crc32c, ["BLOB"], "BIGINT"),
    "rw_le_bytes": (udf_le_bytes, ["BIGINT", "INTEGER"], "BLOB"),
    "pg_interval_out": (udf_interval_out, ["INTERVAL"], "VARCHAR"),
    "pg_jsonb_strip_all_nulls": (udf_jsonb_strip_all_nulls, ["VARCHAR"], "VARCHAR"),
    "pg_jsonb_pretty": (udf_jsonb_pretty, ["VARCHAR"], "VARCHAR"),
    "pg_bytea_in": (udf_bytea_in, ["VARCHAR"], "BLOB"),
    "pg_encode": (udf_encode, ["BLOB", "VARCHAR"], "VARCHAR"),
    "pg_decode": (udf_decode, ["VARCHAR", "VARCHAR"], "BLOB"),
    "pg_string_to_array": (udf_string_to_array, ["VARCHAR", "VARCHAR", "VARCHAR"], "VARCHAR[]"),
    "pg_float8_out": (udf_float8_out, ["DOUBLE"], "VARCHAR"),
    "pg_float4_out": (udf_float4_out, ["FLOAT"], "VARCHAR"),
    "pg_cbrt": (lambda a: _map(a, lambda v: math.cbrt(v) if hasattr(math, "cbrt") else
                               math.copysign(abs(v) ** (1 / 3), v), pa.float64()), ["DOUBLE"], "DOUBLE"),
    "pg_interval_in": (udf_interval_in, ["VARCHAR"], "INTERVAL"),
    "justify_hours": (_interval_udf("justify_hours"), ["INTERVAL"], "INTERVAL"),
    "justify_days": (_interval_udf("justify_days"), ["INTERVAL"], "INTERVAL"),
    "justify_interval": (_interval_udf("justify_interval"), ["INTERVAL"], "INTERVAL"),
    "pg_jsonb_in": (udf_jsonb_in, ["VARCHAR"], "VARCHAR"),
    # jsonb's containment (DuckDB's json_contains finds b anywhere inside a)
    "pg_jsonb_contains": (udf_jsonb_contains, ["VARCHAR", "VARCHAR"], "BOOLEAN"),
    "pg_interval_mul": (_interval_scale_udf(False), ["INTERVAL", "DOUBLE"], "INTERVAL"),
    "pg_interval_div": (_interval_scale_udf(True), ["INTERVAL", "DOUBLE"], "INTERVAL"),
    "pg_to_char_interval": (udf_to_char_interval, ["INTERVAL", "VARCHAR"], "VARCHAR"),
    "pg_regexp_match": (udf_regexp_match, ["VARCHAR", "VARCHAR", "VARCHAR"], "VARCHAR[]"),
    "pg_regexp_matches": (udf_regexp_matches, ["VARCHAR", "VARCHAR", "VARCHAR"], "VARCHAR[][]"),
    "pg_jsonb_object_agg": (udf_jsonb_object_agg, ["VARCHAR[]", "VARCHAR[]"], "VARCHAR"),
    **numeric_udfs.UDFS,
    **jsonpath_udfs.UDFS,
}


# a call in SQL text: a name and its opening parenthesis
_CALL = re.compile(r"\b([A-Za-z_][A-Za-z0-9_]*)\s*\(")


@functools.cache
def _catalog() -> dict[str, tuple[str | None, tuple[str, ...]]]:
    """Each of our function names -> (its macro's SQL, None for a UDF; the names of ours that
    the macro calls, which must exist first)."""
    macros = {_macro_name(m): m for m in MACROS}
    ours = set(macros) | set(UDFS)
    out: dict[str, tuple[str | None, tuple[str, ...]]] = {name: (None, ()) for name in UDFS}
    for name, macro in macros.items():
        calls = dict.fromkeys(c.lower() for c in _CALL.findall(macro.split(" AS ", 1)[1]))
        out[name] = (macro, tuple(c for c in calls if c in ours and c != name))
    return out


def names() -> frozenset[str]:
    """Every function name ours give DuckDB, installed on a connection or not."""
    return frozenset(_catalog())


def install(con: duckdb.DuckDBPyConnection) -> None:
    """Every macro and UDF of ours on `con`: a connection of its own outside the engine's
    (a benchmark's DuckDB baseline running our transpiled SQL)."""
    catalog, installed = _catalog(), set()
    for name in catalog:
        if name not in installed:
            _install(con, name, catalog, installed)


def install_used(con: duckdb.DuckDBPyConnection, sql: str, installed: set[str]) -> None:
    """Create on `con` the macros and UDFs that `sql` calls, and those they call, unless
    `installed` (what `con` has) already holds them. Creating all ~100 of them when a
    connection opens cost 45 ms, a seventh of `rw -c "select 1"`; most statements call none."""
    catalog = _catalog()
    for call in _CALL.findall(sql):
        name = call.lower()
        if name in catalog and name not in installed:
            _install(con, name, catalog, installed)


def _install(con, name: str, catalog: dict, installed: set[str]) -> None:
    installed.add(name)  # first: a macro that (through others) calls itself ends here
    macro, calls = catalog[name]
    for callee in calls:
        if callee not in installed:
            _install(con, callee, catalog, installed)
    if macro is not None:
        con.execute(macro)
        return
    fn, params, ret = UDFS[name]
    con.create_function(name, fn, [duckdb.sqltype(p) for p in params], duckdb.sqltype(ret),
                        type="arrow", null_handling="special", side_effects=False)
