"""The jsonb_path_* functions as DuckDB UDFs over jsonb's text: each row's path (compiled once
per text) evaluated over its decoded value (rw_cli.common.jsonpath).

Each takes (target, path, vars, silent), as PostgreSQL's do with their defaults filled in
(vars `{}`, silent false; the `@?` and `@@` operators pass silent true). A NULL argument
gives NULL (no rows for jsonb_path_query). `silent` turns evaluation errors into NULL (no
items); a path that does not parse fails whatever `silent` says, as a bad jsonpath literal does.
"""
from __future__ import annotations

import json
from decimal import Decimal

import pyarrow as pa

from rw_cli.common.jsonpath import JsonPathError, compile_path
from rw_cli.common.pg_json import jsonb_text

_FAILED = object()  # an error `silent` suppressed


def _rows(targets: pa.Array, paths: pa.Array, variables: pa.Array, silent: pa.Array):
    """(items or None for a NULL argument or _FAILED, the compiled path) per row."""
    for t, p, v, s in zip(targets.to_pylist(), paths.to_pylist(), variables.to_pylist(), silent.to_pylist()):
        if t is None or p is None or v is None or s is None:
            yield None, None
            continue
        path = compile_path(p)  # a syntax error is never silenced
        try:
            bound = json.loads(v, parse_float=Decimal)
            if not isinstance(bound, dict):
                raise JsonPathError('"vars" argument is not an object')
            yield path.query(json.loads(t, parse_float=Decimal), bound), path
        except JsonPathError:
            if not s:
                raise
            yield _FAILED, path


def udf_path_exists(t: pa.Array, p: pa.Array, v: pa.Array, s: pa.Array) -> pa.Array:
    return pa.array([None if items is None or items is _FAILED else bool(items)
                     for items, _ in _rows(t, p, v, s)], pa.bool_())


def udf_path_match(t: pa.Array, p: pa.Array, v: pa.Array, s: pa.Array) -> pa.Array:
    out = []
    for (items, path), silent in zip(_rows(t, p, v, s), s.to_pylist()):
        if items is None or items is _FAILED:
            out.append(None)
        elif len(items) == 1 and (items[0] is None or isinstance(items[0], bool)):
            out.append(items[0])
        elif silent:
            out.append(None)
        else:
            raise JsonPathError("single boolean result is expected")
    return pa.array(out, pa.bool_())


def udf_path_query(t: pa.Array, p: pa.Array, v: pa.Array, s: pa.Array) -> pa.Array:
    """jsonb_path_query: the items as a list (unnested into rows by the caller)."""
    return pa.array([None if items is None else [] if items is _FAILED else [jsonb_text(x) for x in items]
                     for items, _ in _rows(t, p, v, s)], pa.list_(pa.string()))


def udf_path_query_array(t: pa.Array, p: pa.Array, v: pa.Array, s: pa.Array) -> pa.Array:
    return pa.array([None if items is None else "[]" if items is _FAILED else jsonb_text(items)
                     for items, _ in _rows(t, p, v, s)], pa.string())


def udf_path_query_first(t: pa.Array, p: pa.Array, v: pa.Array, s: pa.Array) -> pa.Array:
    return pa.array([jsonb_text(items[0]) if items and items is not _FAILED else None
                     for items, _ in _rows(t, p, v, s)], pa.string())


_ARGS = ["VARCHAR", "VARCHAR", "VARCHAR", "BOOLEAN"]
UDFS = {
    "pg_jsonb_path_exists": (udf_path_exists, _ARGS, "BOOLEAN"),
    "pg_jsonb_path_match": (udf_path_match, _ARGS, "BOOLEAN"),
    # jsonb as its text: the caller casts to JSON (an Arrow UDF cannot return DuckDB's JSON)
    "pg_jsonb_path_query": (udf_path_query, _ARGS, "VARCHAR[]"),
    "pg_jsonb_path_query_array": (udf_path_query_array, _ARGS, "VARCHAR"),
    "pg_jsonb_path_query_first": (udf_path_query_first, _ARGS, "VARCHAR"),
}
