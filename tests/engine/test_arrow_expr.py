"""Window bounds by numpy (arrow_expr) against DuckDB evaluating the same expressions."""
from __future__ import annotations

import random

import numpy as np
import pyarrow as pa
import pytest

from rw_cli.common.types import DataType
from rw_cli.engine import arrow_expr, duck
from rw_cli.engine.chunk import StreamChunk
from rw_cli.engine.expr import Condition, condition_mask
from rw_cli.engine.project import ProjectExecutor
from rw_cli.sql.expr_compile import compile_condition, compile_expr

TS, BIGINT, INT = DataType.from_sql("timestamp"), DataType.from_sql("bigint"), DataType.from_sql("int")


def _exprs(width_s: int, slide_s: int, origin: str) -> list[str]:
    o = f"CAST('{origin}' AS TIMESTAMP)"
    w, s = f"INTERVAL '{width_s}' SECOND", f"INTERVAL '{slide_s}' SECOND"
    return [f"TIME_BUCKET({w}, _0, {o})",
            f"TIME_BUCKET({w}, _0, {o}) + {w}",
            f"TIME_BUCKET({s}, _0, {o}) - _1 * {s}",
            f"TIME_BUCKET({s}, _0, {o}) - _1 * {s} + {w}",
            f"_0 - {w}"]


def _data(r: random.Random, n: int) -> pa.Table:
    us = np.array([r.randint(-10**15, 10**15) if r.random() < 0.5 else r.randint(0, 10**11) for _ in range(n)])
    ts = pa.array(us, pa.int64(), mask=np.array([r.random() < 0.1 for _ in range(n)])).cast(pa.timestamp("us"))
    k = pa.array([r.randint(0, 4) if r.random() > 0.05 else None for _ in range(n)], pa.int64())
    return pa.table({"_0": ts, "_1": k})


@pytest.mark.parametrize("seed", range(6))
def test_window_bounds_match_duckdb(seed):
    r = random.Random(seed)
    data = _data(r, 500)
    origin = r.choice(["1970-01-01 00:00:00", "2001-02-03 04:05:06", "1900-01-01 00:00:00.5"])
    for sql in _exprs(r.choice([1, 2, 10, 3600]), r.choice([1, 2, 5]), origin):
        from sqlglot import parse_one

        tree = parse_one(sql, read="postgres")
        compiled = compile_expr(tree, [TS, BIGINT])
        duck_sql, form = compiled.sql, compiled.form
        assert form is not None, duck_sql
        got = arrow_expr.evaluate(form, data)
        want = duck.eval_exprs(data, [duck_sql]).column(0).combine_chunks().cast(pa.timestamp("us"))
        assert got.equals(want), (sql, got.to_pylist()[:5], want.to_pylist()[:5])


def test_not_compiled_when_not_plain():
    for sql, types in [("_0 + INTERVAL '1' MONTH", [TS]), ("TIME_BUCKET(INTERVAL '1' DAY, _0)", [TS]),
                       ("_0 * 2", [INT]), ("lower(_0)", [DataType.from_sql("varchar")])]:
        from sqlglot import parse_one

        assert compile_expr(parse_one(sql, read="postgres"), types).form is None, sql


def test_overflow_falls_back_to_duckdb():
    """Values near the ends of the range go to DuckDB, whose TRY gives NULL on overflow."""
    from sqlglot import parse_one

    compiled = compile_expr(parse_one("_0 + INTERVAL '10' SECOND", read="postgres"), [TS])
    duck_sql, form = compiled.sql, compiled.form
    big = pa.table({"_0": pa.array([2**62 + 5, 0], pa.int64()).cast(pa.timestamp("us"))})
    with pytest.raises(arrow_expr.Fallback):
        arrow_expr.evaluate(form, big)
    p = ProjectExecutor([compile_expr(parse_one("_0"), [TS]), compiled], [TS, TS], [0])
    out = p.on_chunk(StreamChunk(big, np.zeros(2, dtype=np.int8)))[0].data
    want = duck.eval_exprs(big, ["_0", duck_sql])
    as_int = lambda c: c.cast(pa.timestamp("us")).cast(pa.int64()).to_pylist()  # noqa: E731
    assert as_int(out.column(1)) == as_int(want.column(1))


@pytest.mark.parametrize("seed", range(4))
def test_join_conditions_match_duckdb(seed):
    """Conjunctions of comparisons between timestamps (± constant intervals) or integer
    columns, as join conditions are: numpy's mask is DuckDB's (NULL on either side: false)."""
    from sqlglot import parse_one

    r = random.Random(seed)
    n = 400
    types = [TS, BIGINT, TS, INT]
    us = [r.randint(0, 10**9) for _ in range(n)]
    data = pa.table({
        "_0": pa.array([u if r.random() > 0.1 else None for u in us], pa.int64()).cast(pa.timestamp("us")),
        "_1": pa.array([r.randint(0, 5) if r.random() > 0.1 else None for _ in range(n)], pa.int64()),
        "_2": pa.array([u + r.randint(-10**7, 10**7) for u in us], pa.int64()).cast(pa.timestamp("us")),
        "_3": pa.array([r.randint(0, 5) for _ in range(n)], pa.int32()),
    })
    for sql in ["_0 <= _2 AND _0 >= _2 - INTERVAL '5' SECOND", "_1 = _3", "_1 <> _3 AND _2 > _0",
                "_0 < _2 + INTERVAL '2' SECOND AND _1 >= _3 AND _0 <> _2",
                "TIME_BUCKET(INTERVAL '10' SECOND, _0, CAST('1970-01-01 00:00:00' AS TIMESTAMP)) = "
                "TIME_BUCKET(INTERVAL '10' SECOND, _2, CAST('1970-01-01 00:00:00' AS TIMESTAMP))"]:
        compiled = compile_condition(parse_one(sql, read="postgres"), types, strict=True, arrow_form=True)
        assert compiled.form is not None, compiled.sql
        got = arrow_expr.condition_mask(compiled.form, data)
        assert got.tolist() == condition_mask(Condition(compiled.conjuncts), data).tolist(), sql
    # what does not compile stays with DuckDB
    for sql in ["_1 < 5", "_0 < _2 OR _1 = _3", "_0 = _1"]:
        try:
            compiled = compile_condition(parse_one(sql, read="postgres"), types, strict=True, arrow_form=True)
        except Exception:
            continue
        assert compiled.form is None, sql
