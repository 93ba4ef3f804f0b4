"""The stream's avg of integers is RisingWave's: the sum divided by the count with rust_decimal's
division (`7420517.50`, 28-digit quotients), the digits the batch avg (rw_num_avg_int) gives."""
from __future__ import annotations

import numpy as np
import pyarrow as pa

from rw_cli.common import numeric
from rw_cli.common import rust_decimal as rd
from rw_cli.engine import duck


class _Agg:  # just what _exact_avg reads
    group_keys: list = []
    schema = pa.schema([pa.field("avg", numeric.NUMERIC_ARROW)])


def _stream_avg(sums: list[int], counts: list[int]) -> list[str | None]:
    import rw_cli.engine.hash_agg as ha

    table = pa.table({"a0_sum": numeric.int128_array(sums), "a0_nn": pa.array(counts, pa.int64())})
    outs = [[None]]
    assert ha.HashAggExecutor._exact_avg(_Agg(), outs, [table], 0, 0)
    return numeric.texts(outs[0][0])


def test_avg_of_integers_matches_rust_decimal_and_batch():
    rng = np.random.default_rng(7)
    n = 2000
    sums = [int(v) for v in np.concatenate([rng.integers(-2**62, 2**62, n // 2), rng.integers(-10**6, 10**6, n // 2)])]
    sums[:3] = [3 * 2**62 * 1000, -(2**90), 14841035]  # beyond 64 bits; the q17 average
    counts = [int(c) for c in rng.integers(0, 10, n)]
    counts[2] = 2
    got = _stream_avg(sums, counts)
    assert got == [None if c == 0 else rd.to_text(rd.avg_int(s, c)) for s, c in zip(sums, counts)]
    assert got[2] == "7420517.50"
    batch = duck.query("SELECT CASE WHEN n > 0 THEN rw_num_out(rw_num_avg_int(s, n)) END AS d FROM t",
                       {"t": pa.table({"s": numeric.int128_array(sums), "n": pa.array(counts, pa.int64())})})
    assert batch.column(0).to_pylist() == got


def test_avg_of_few_integers_keeps_rust_decimals_digits():
    assert _stream_avg([789590, 25407484, 3, 10], [3, 3, 2, 2]) == [
        "263196.66666666666666666666667", "8469161.333333333333333333333", "1.50", "5"]
