"""avg into numeric computed by numpy equals DuckDB's `CAST(sum / n AS DECIMAL(38,10))`."""
from __future__ import annotations

import numpy as np
import pyarrow as pa

from rw_cli.engine import duck


def test_numpy_avg_matches_duckdb():
    import rw_cli.engine.hash_agg as ha

    rng = np.random.default_rng(7)
    n = 20000
    x = np.concatenate([rng.integers(-2**53 + 1, 2**53 - 1, n // 2), rng.integers(-10**6, 10**6, n // 2)])
    cnt = np.concatenate([rng.integers(0, 10, n // 2), rng.integers(0, 10**6, n // 2)])
    x[cnt == 0] = 0
    sums = pa.array(x, pa.int64()).cast(pa.decimal128(38, 10))
    nns = pa.array(cnt, pa.int64())
    want = duck.query("SELECT CASE WHEN n > 0 THEN CAST(s / n AS DECIMAL(38,10)) END AS d FROM t",
                      {"t": pa.table({"s": sums, "n": nns})}).column(0).combine_chunks()

    class Agg:  # just what _numpy_avg reads
        group_keys: list = []
        schema = pa.schema([pa.field("avg", pa.decimal128(38, 10))])

    outs = [[None]]
    states = [pa.table({"a0_sum": sums, "a0_nn": nns})]
    big = np.abs(x.astype(np.float64) / np.maximum(cnt, 1)) * 1e10 >= 2.0 ** 62
    if big.any():  # the fast path declines quotients that do not fit; check the ones that do
        keep = pa.array(~big)
        states = [states[0].filter(keep)]
        want = want.filter(keep)
    assert ha.HashAggExecutor._numpy_avg(Agg(), outs, states, 0, 0)
    assert outs[0][0].equals(want)
    # a sum with a fraction, and sums beyond a double's exact integers, are left to DuckDB
    half = [pa.table({"a0_sum": pa.array(["0.5"], pa.string()).cast(pa.decimal128(38, 10)), "a0_nn": pa.array([1])})]
    assert not ha.HashAggExecutor._numpy_avg(Agg(), [[None]], half, 0, 0)
    huge = [pa.table({"a0_sum": pa.array([2**60], pa.int64()), "a0_nn": pa.array([1])})]
    assert not ha.HashAggExecutor._numpy_avg(Agg(), [[None]], huge, 0, 0)
