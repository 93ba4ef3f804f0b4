"""Python functions a user defines (CREATE FUNCTION ... LANGUAGE python AS $$ def f(...) $$),
run in this process as RisingWave's embedded Python UDFs run in its compute nodes.

Each definition becomes a DuckDB function of its own name (`rw_py_<name>_<digest>`, so a
function dropped and defined anew never meets a connection that holds the old one), called
a chunk at a time: the arguments' Arrow arrays become Python values (jsonb parsed, NULL as
None, as RisingWave passes them), the user's function runs on each row, and its results are
one Arrow array of the declared type (a struct from an object's attributes). Batch queries and materialized views call it alike.
"""
from __future__ import annotations

import hashlib
import json
import operator
import re
import threading

import pyarrow as pa

from rw_cli.common import numeric

_LOCK = threading.Lock()
# DuckDB name -> what register() was given: what another process (a Spark task) needs to make
# the same functions (`definitions`, `define`)
_DEFINITIONS: dict[str, tuple] = {}
# DuckDB name -> (the vectorized function, DuckDB parameter types, DuckDB return type, arity)
_REGISTRY: dict[str, tuple[object, tuple[str, ...], str, int]] = {}
_NAME = re.compile(r"\brw_py_[a-z0-9_]+\b", re.IGNORECASE)


class PythonUdfError(ValueError):
    """A Python function body that does not define the function it names."""


def duck_name(name: str, kind: str, source: str, params: list[str], ret: str) -> str:
    digest = hashlib.sha1("\0".join([name, kind, source, *params, ret]).encode()).hexdigest()[:12]
    return f"rw_py_{name}_{digest}"


def load(name: str, source: str, wanted: tuple[str, ...] | None = None):
    """The Python function `name` that `source` defines (with `wanted`: those functions, as
    a dict; an aggregate's create_state, accumulate, finish)."""
    namespace: dict = {}
    try:
        exec(compile(source, f"<function {name}>", "exec"), namespace)  # noqa: S102 - the user's own code
    except SyntaxError as e:
        raise PythonUdfError(f"failed to compile the Python function {name}: {e.msg} (line {e.lineno})") from None
    for fname in wanted or (name,):
        if not callable(namespace.get(fname)):
            raise PythonUdfError(f"the body does not define a Python function named {fname}")
    return {f: namespace[f] for f in wanted} if wanted else namespace[name]


def register(name: str, source: str, params: list[tuple[str, pa.DataType, bool]],
             ret: tuple[str, pa.DataType, bool], kind: str = "scalar") -> str:
    """Make the function callable from DuckDB SQL; its DuckDB name. `params` and `ret`:
    (DuckDB type, Arrow type, whether it is jsonb) of each argument and of the result.

    `kind`: "scalar"; "table" (a generator: the function gives the list of what it yields,
    which the caller unnests); "aggregate" (create_state / accumulate / finish: the function
    takes the list of a group's argument rows, as array_agg gathers them, which the stream
    engine keeps up to date under deletes, and gives the finished state)."""
    key = duck_name(name, kind, source, [p[0] for p in params], ret[0])
    with _LOCK:
        if key not in _REGISTRY:
            if kind == "aggregate":
                fns = load(name, source, ("create_state", "accumulate", "finish"))
                call = _with_arity(_aggregate(fns, len(params), [p[2] for p in params], ret[1], ret[2]), 1)
                duck_params = (params[0][0] + "[]",) if len(params) == 1 else (_row_list(params),)
            else:
                fn = load(name, source)
                if kind == "table":
                    fn = _collected(fn)
                call = _vectorized(fn, [p[2] for p in params], ret[1], ret[2]) if params else _scalar(fn, ret[2], ret[1])
                duck_params = tuple(p[0] for p in params)
            _REGISTRY[key] = (call, duck_params, ret[0], len(duck_params))
            _DEFINITIONS[key] = (name, source, params, ret, kind)
    return key


def _row_list(params) -> str:
    """The DuckDB type of a list of argument rows (ROW(a, b) gives fields v1, v2, ...)."""
    return "STRUCT(" + ", ".join(f"v{i + 1} {p[0]}" for i, p in enumerate(params)) + ")[]"


def _collected(fn):
    """A generator function as one that returns the list of what it yields."""
    def run(*args):
        out = []
        for item in fn(*args):
            out.append(item)
        return out

    return run


def _aggregate(fns: dict, arity: int, json_args: list[bool], ret_type: pa.DataType, json_ret: bool):
    """The finished state of each row's list of argument rows (NULLs given as None, as
    RisingWave gives them to accumulate)."""
    create, accumulate, finish = fns["create_state"], fns["accumulate"], fns["finish"]

    def run(lists):
        out = []
        for rows in numeric.python_values(lists):
            state = create()
            for row in rows or ():
                args = list(row.values()) if arity > 1 else [row]
                args = [json.loads(a) if j else a for a, j in zip(args, json_args)]
                state = accumulate(state, *args)
            value = finish(state)
            out.append(json.dumps(value) if json_ret and value is not None else value)
        return _array(out, ret_type)

    return run


def _vectorized(fn, json_args: list[bool], ret_type: pa.DataType, json_ret: bool):
    def run(*arrays):
        columns = [_values(a, is_json) for a, is_json in zip(arrays, json_args)]
        out = [fn(*row) for row in zip(*columns)]
        if json_ret:
            out = [None if v is None else json.dumps(v) for v in out]
        return _array(out, ret_type)

    return _with_arity(run, len(json_args))


def _array(values: list, t: pa.DataType) -> pa.Array:
    """Python results as an Arrow array of `t` (a numeric from Decimals, ints, floats)."""
    if numeric.is_numeric_arrow(t):
        return numeric.pack([None if v is None else numeric.from_python(v) for v in values])
    if pa.types.is_integer(t):  # a float is refused as RisingWave refuses it, not truncated
        values = [None if v is None else operator.index(v) for v in values]
    return pa.array(conform(values, t), type=t)


def conform(values: list, t: pa.DataType) -> list:
    """Python results as Arrow takes them for `t`: a struct from an object's attributes (as
    RisingWave's Python UDFs return structs), a tuple's items or a dict."""
    if not _has_struct(t):
        return values
    return [_conform(v, t) for v in values]


def _has_struct(t: pa.DataType) -> bool:
    """Whether values of `t` need conforming (structs from objects, nested jsonb as text)."""
    if pa.types.is_struct(t):
        return True
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return _has_struct(t.value_type)
    return False


def _conform(v, t: pa.DataType):
    if v is None:
        return None
    if numeric.is_numeric_arrow(t):  # (itself a struct: of the number's parts)
        return numeric.struct_value(v)
    if pa.types.is_struct(t):
        fields = [t.field(i) for i in range(t.num_fields)]
        if isinstance(v, dict):
            items = [v.get(f.name) for f in fields]
        elif isinstance(v, (tuple, list)):
            items = list(v)
        else:
            items = [getattr(v, f.name, None) for f in fields]
        return {f.name: _field_value(x, f) for f, x in zip(fields, items)}
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return [_field_value(x, t.value_field) for x in v]
    return v


def _field_value(v, f: pa.Field):
    """A nested value; a jsonb field's (marked by its metadata) as JSON text."""
    if f.metadata and f.metadata.get(b"rw_type") == b"jsonb":
        return None if v is None else json.dumps(v)
    return _conform(v, f.type)


def _with_arity(run, n: int):
    """`run` as a function of exactly n parameters (DuckDB counts them)."""
    names = ", ".join(f"a{i}" for i in range(n))
    namespace = {"run": run}
    exec(f"def call({names}):\n    return run({names})\n", namespace)  # noqa: S102 - our own text
    return namespace["call"]


def _scalar(fn, json_ret: bool, ret_type: pa.DataType | None = None):
    """A function of no arguments, called once per row (no array tells a chunk's length)."""
    integer = ret_type is not None and pa.types.is_integer(ret_type)

    def run():
        v = fn()
        if integer and v is not None:
            v = operator.index(v)  # a float is refused, as _array refuses it
        return json.dumps(v) if json_ret and v is not None else v

    return run


def _values(array, is_json: bool) -> list:
    values = numeric.python_values(array)
    if is_json:
        return [None if v is None else json.loads(v) for v in values]
    return values


def definitions() -> dict[str, tuple]:
    """Every function registered here, as register()'s arguments (picklable)."""
    return dict(_DEFINITIONS)


def define(defs: dict[str, tuple]) -> None:
    """Register in this process the functions another one registered (`definitions()`)."""
    for key, args in defs.items():
        if key not in _REGISTRY:
            register(*args)


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
