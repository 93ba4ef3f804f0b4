"""Python functions a user defines (CREATE FUNCTION ... LANGUAGE python AS $$ def f(...) $$),
run in this process as RisingWave's embedded Python UDFs run in its compute nodes.

Each definition becomes a DuckDB function of its own name (`rw_py_<name>_<digest>`, so a
function dropped and defined anew never meets a connection that holds the old one), called
a chunk at a time: the arguments' Arrow arrays become Python values (jsonb parsed), the
user's function runs on each row whose arguments are not NULL (a NULL argument gives NULL),
and its results are one Arrow array of the declared type. Batch queries and materialized views call it alike.
"""
from __future__ import annotations

import hashlib
import json
import re
import threading

import pyarrow as pa

_LOCK = threading.Lock()
# DuckDB name -> (the vectorized function, DuckDB parameter types, DuckDB return type, arity)
_REGISTRY: dict[str, tuple[object, tuple[str, ...], str, int]] = {}
_NAME = re.compile(r"\brw_py_[a-z0-9_]+\b", re.IGNORECASE)


class PythonUdfError(ValueError):
    """A Python function body that does not define the function it names."""


def duck_name(name: str, source: str, params: list[str], ret: str) -> str:
    digest = hashlib.sha1("\0".join([name, source, *params, ret]).encode()).hexdigest()[:12]
    return f"rw_py_{name}_{digest}"


def load(name: str, source: str):
    """The Python function `name` that `source` defines."""
    namespace: dict = {}
    try:
        exec(compile(source, f"<function {name}>", "exec"), namespace)  # noqa: S102 - the user's own code
    except SyntaxError as e:
        raise PythonUdfError(f"failed to compile the Python function {name}: {e.msg} (line {e.lineno})") from None
    fn = namespace.get(name)
    if not callable(fn):
        raise PythonUdfError(f"the body does not define a Python function named {name}")
    return fn


def register(name: str, source: str, params: list[tuple[str, pa.DataType, bool]],
             ret: tuple[str, pa.DataType, bool]) -> str:
    """Make the function callable from DuckDB SQL; its DuckDB name. `params` and `ret`:
    (DuckDB type, Arrow type, whether it is jsonb) of each argument and of the result."""
    key = duck_name(name, source, [p[0] for p in params], ret[0])
    with _LOCK:
        if key not in _REGISTRY:
            fn = load(name, source)
            call = _vectorized(fn, [p[2] for p in params], ret[1], ret[2]) if params else _scalar(fn, ret[2])
            _REGISTRY[key] = (call, tuple(p[0] for p in params), ret[0], len(params))
    return key


def _vectorized(fn, json_args: list[bool], ret_type: pa.DataType, json_ret: bool):
    def run(*arrays):
        columns = [_values(a, is_json) for a, is_json in zip(arrays, json_args)]
        # NULL on NULL input (the function runs on rows whose arguments are all non-NULL)
        out = [None if None in row else fn(*row) for row in zip(*columns)]
        if json_ret:
            out = [None if v is None else json.dumps(v) for v in out]
        return pa.array(out, type=ret_type)

    return _with_arity(run, len(json_args))


def _with_arity(run, n: int):
    """`run` as a function of exactly n parameters (DuckDB counts them)."""
    names = ", ".join(f"a{i}" for i in range(n))
    namespace = {"run": run}
    exec(f"def call({names}):\n    return run({names})\n", namespace)  # noqa: S102 - our own text
    return namespace["call"]


def _scalar(fn, json_ret: bool):
    """A function of no arguments, called once per row (no array tells a chunk's length)."""
    def run():
        v = fn()
        return json.dumps(v) if json_ret and v is not None else v

    return run


def _values(array, is_json: bool) -> list:
    values = array.to_pylist()
    if is_json:
        return [None if v is None else json.loads(v) for v in values]
    return values


def names() -> frozenset[str]:
    return frozenset(_REGISTRY)


def install_used(con, sql: str, installed: set[str]) -> None:
    """Create on `con` the user's Python functions `sql` calls that `con` lacks."""
    if "rw_py_" not in sql.lower():
        return
    import duckdb

    for found in _NAME.findall(sql):
        key = found.lower()
        if key in installed or key not in _REGISTRY:
            continue
        fn, params, ret, arity = _REGISTRY[key]
        if arity == 0:
            con.create_function(key, fn, [], duckdb.sqltype(ret), type="native", null_handling="special",
                                side_effects=True)
        else:
            con.create_function(key, fn, [duckdb.sqltype(p) for p in params], duckdb.sqltype(ret),
                                type="arrow", null_handling="special", side_effects=False)
        installed.add(key)
