"""The stream's avg into numeric is the exact quotient rounded to the stored scale (half away
from zero), the digits the batch avg (pg_numeric_quot over DuckDB) gives."""
from __future__ import annotations

import decimal

import numpy as np
import pyarrow as pa

from rw_cli.engine import duck

_STEP = decimal.Decimal("1e-10")
_CTX = decimal.Context(prec=80, rounding=decimal.ROUND_HALF_UP)


class _Agg:  # just what _exact_avg reads
    group_keys: list = []
    schema = pa.schema([pa.field("avg", pa.decimal128(38, 10))])


def _exact(s, n):
    if n == 0:
        return None
    return _CTX.divide(decimal.Decimal(s), decimal.Decimal(n)).quantize(_STEP, context=_CTX)


def test_exact_avg_matches_decimal_and_batch():
    import rw_cli.engine.hash_agg as ha

    rng = np.random.default_rng(7)
    n = 5000
    x = np.concatenate([rng.integers(-2**62, 2**62, n // 2), rng.integers(-10**6, 10**6, n // 2)])
    cnt = np.concatenate([rng.integers(0, 10, n // 2), rng.integers(0, 10**6, n // 2)])
    x[cnt == 0] = 0
    sums = pa.array(x, pa.int64()).cast(pa.decimal128(38, 10))
    nns = pa.array(cnt, pa.int64())
    outs = [[None]]
    assert ha.HashAggExecutor._exact_avg(_Agg(), outs, [pa.table({"a0_sum": sums, "a0_nn": nns})], 0, 0)
    got = outs[0][0].to_pylist()
    assert got == [_exact(int(s), int(c)) for s, c in zip(x, cnt)]
    batch = duck.query("SELECT CASE WHEN n > 0 THEN pg_numeric_quot(s, n) END AS d FROM t",
                       {"t": pa.table({"s": sums, "n": nns})}).column(0).to_pylist()
    assert got == batch


def test_exact_avg_of_fractions_and_wide_sums():
    import rw_cli.engine.hash_agg as ha

    vals = ["0.5", "12345678901234567890.123456789", "-0.0000000015", "99999999999999999999999999.5"]
    sums = pa.array([decimal.Decimal(v) for v in vals], pa.decimal128(38, 10))
    nns = pa.array([1, 3, 1, 7])
    outs = [[None]]
    assert ha.HashAggExecutor._exact_avg(_Agg(), outs, [pa.table({"a0_sum": sums, "a0_nn": nns})], 0, 0)
    assert outs[0][0].to_pylist() == [_exact(decimal.Decimal(v), c) for v, c in zip(vals, [1, 3, 1, 7])]
