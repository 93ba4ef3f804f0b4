"""Embedded Python functions: a chunk at a time through DuckDB, kept across restarts (the MV
that calls one is planned again from the catalog), and a new body under a new DuckDB name."""
import pyarrow as pa

import rw_cli
from rw_cli.engine import python_udf

BODY = "def f(x):\n    return None if x is None else x * 2\n"


def test_register_vectorizes_over_chunks_and_passes_nulls_as_none():
    name = python_udf.register("f", BODY, [("INTEGER", pa.int32(), False)], ("INTEGER", pa.int32(), False))
    from rw_cli.engine import duck

    out = duck.query(f"SELECT {name}(x) AS y FROM t", {"t": pa.table({"x": pa.array([1, None, 3], pa.int32())})})
    assert out.column("y").to_pylist() == [2, None, 6]


def test_struct_results_from_objects_tuples_and_dicts():
    t = pa.struct([pa.field("k", pa.string()), pa.field("j", pa.string(), metadata={b"rw_type": b"jsonb"})])

    class KV:
        k, j = "a", {"x": 1}

    assert python_udf.conform([KV(), ("b", [1]), {"k": "c"}, None], t) == [
        {"k": "a", "j": '{"x": 1}'}, {"k": "b", "j": "[1]"}, {"k": "c", "j": None}, None]


def test_aggregate_folds_each_group_list():
    body = ("def create_state():\n    return 0\n"
            "def accumulate(s, v):\n    return s + (v or 0)\n"
            "def finish(s):\n    return s\n")
    name = python_udf.register("agg", body, [("INTEGER", pa.int32(), False)], ("BIGINT", pa.int64(), False),
                               "aggregate")
    from rw_cli.engine import duck

    out = duck.query(f"SELECT g, {name}(array_agg(x)) AS s FROM t GROUP BY g ORDER BY g",
                     {"t": pa.table({"g": [1, 1, 2], "x": pa.array([1, None, 5], pa.int32())})})
    assert out.column("s").to_pylist() == [1, 5]


def test_new_body_gets_new_name():
    a = python_udf.register("f", BODY, [("INTEGER", pa.int32(), False)], ("INTEGER", pa.int32(), False))
    b = python_udf.register("f", BODY.replace("2", "3"), [("INTEGER", pa.int32(), False)],
                            ("INTEGER", pa.int32(), False))
    assert a != b and {a, b} <= python_udf.names()


def test_mv_calling_python_function_survives_restart(tmp_path):
    d = str(tmp_path / "data")
    with rw_cli.connect(d) as s:
        s.execute("create function twice(x int) returns int language python as $$\ndef twice(x):\n    return 2 * x\n$$")
        s.execute("create table t (a int); insert into t values (1), (2); flush")
        s.execute("create materialized view m as select a, twice(a) as b from t")
    with rw_cli.connect(d) as s:
        s.execute("insert into t values (5); flush")
        assert sorted(s.execute("select * from m").fetchall()) == [(1, 2), (2, 4), (5, 10)]


def test_definitions_travel_to_other_processes_and_skip_failures():
    import pytest

    key = python_udf.register("g", "def g(x):\n    return x\n", [("INTEGER", pa.int32(), False)],
                              ("INTEGER", pa.int32(), False))
    with pytest.raises(python_udf.PythonUdfError):
        python_udf.register("h", "def other(x):\n    return x\n", [("INTEGER", pa.int32(), False)],
                            ("INTEGER", pa.int32(), False))
    defs = python_udf.definitions()
    assert key in defs and not any(args[0] == "h" for args in defs.values())
    import pickle

    python_udf.define(pickle.loads(pickle.dumps(defs)))  # what a Spark task does with them
