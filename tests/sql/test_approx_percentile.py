"""approx_percentile against a line-by-line port of RisingWave's DDSketch aggregate
(src/expr/impl/src/aggregate/approx_percentile.rs): random doubles of both signs, zeros and
NULLs, several quantiles and relative errors, in a SELECT and in a view kept through deletes."""
from __future__ import annotations

import math
import random
import tempfile

import pytest

import rw_cli


def _powi(a: float, b: int) -> float:
    """compiler-rt's __powidf2, which Rust's f64::powi calls."""
    recip, r = b < 0, 1.0
    while True:
        if b & 1:
            r *= a
        b = int(b / 2)
        if b == 0:
            break
        a *= a
    return 1 / r if recip else r


def reference(values: list[float | None], q: float, e: float) -> float | None:
    base = (1.0 + e) / (1.0 - e)
    pos: dict[int, int] = {}
    neg: dict[int, int] = {}
    zeros = count = 0
    for v in values:
        if v is None:
            continue
        count += 1
        if v == 0:
            zeros += 1
            continue
        bucket = math.ceil(math.log(abs(v)) / math.log(base))
        side = pos if v > 0 else neg
        side[bucket] = side.get(bucket, 0) + 1
    wanted = math.floor(max(count - 1, 0) * q)
    acc = 0
    for b in sorted(neg, reverse=True):
        acc += neg[b]
        if acc > wanted:
            return -2.0 * _powi(base, b) / (base + 1.0)
    acc += zeros
    if acc > wanted:
        return 0.0
    for b in sorted(pos):
        acc += pos[b]
        if acc > wanted:
            return 2.0 * _powi(base, b) / (base + 1.0)
    return None


CASES = [(0.5, 0.01), (0.01, 0.01), (0.99, 0.05), (0.3, 0.001), (0.0, 0.2), (1.0, 0.01)]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_matches_risingwave_sketch(seed):
    rng = random.Random(seed)
    rows = [(None if rng.random() < 0.05 else 0.0 if rng.random() < 0.05
             else rng.choice([-1, 1]) * 10 ** rng.uniform(-3, 6), rng.randrange(3)) for _ in range(400)]
    calls = ", ".join(f"approx_percentile({q}, {e}) within group (order by v) as p{i}"
                      for i, (q, e) in enumerate(CASES))
    with tempfile.TemporaryDirectory() as d:
        s = rw_cli.connect(d)
        s.execute("create table t (v double precision, g int)")
        s.insert("t", {"v": [v for v, _ in rows], "g": [g for _, g in rows]})
        s.execute(f"create materialized view m as select g, {calls} from t group by g")
        s.execute("delete from t where v > 100000; flush")
        kept = [(v, g) for v, g in rows if v is None or v <= 100000]
        for g in range(3):
            values = [v for v, k in kept if k == g]
            want = [reference(values, q, e) for q, e in CASES]
            assert s.execute(f"select {calls} from t where g = {g}").fetchall()[0] == tuple(want)
            assert s.execute(f"select * from m where g = {g}").fetchall()[0][1:] == tuple(want)
        s.close()
