"""Hash agg's evaluation paths (Arrow, one fused DuckDB query, DuckDB with materialized input)
agree with the batch query after every flush."""
from __future__ import annotations

import random

import pytest

import rw_cli

QUERIES = {
    "ints": "select k, count(*) as c, count(v) as cv, sum(v) as s, avg(v) as a, sum(b) as sb, avg(b) as ab "
            "from {t} group by k",
    "keys": "select k, g, count(*) as c, sum(b) as sb from {t} group by k, g",
    "extremes": "select g, min(v) as lo, max(v) as hi, max(b) as hb, min(ts) as t0, max(ts) as t1, count(*) as c "
                "from {t} group by g",
    "filtered": "select k, count(*) filter (where v > 5) as c5, sum(b) filter (where v < 50) as s, "
                "max(v) filter (where b > 0) as hi from {t} group by k",
    "floats": "select k, sum(d) as sd, max(d) as hd, avg(d) as ad from {t} group by k",
}


def _row(rng: random.Random) -> str:
    k = rng.choice(["NULL", "1", "2", "3"])
    g = rng.choice(["NULL", "'a'", "'b'"])
    v = rng.choice(["NULL", "1", "7", "60", "-4"])
    b = rng.choice(["NULL", "900000", "-5", "12", "0"])
    ts = rng.choice(["NULL", "'2020-01-01 00:00:01'", "'2021-06-01 12:00:00'"])
    d = rng.choice(["NULL", "0.5", "-0.0", "2.25"])
    return f"({k}, {g}, {v}, {b}, {ts}, {d})"


@pytest.mark.parametrize("append_only", [True, False])
def test_agg_paths_match_batch(tmp_path, append_only):
    rng = random.Random(11 if append_only else 12)
    s = rw_cli.connect(str(tmp_path))
    t = "t"
    s.execute(f"create table {t} (k int, g varchar, v int, b bigint, ts timestamp, d double)"
              + (" append only" if append_only else ""))
    for name, q in QUERIES.items():
        s.execute(f"create materialized view {name} as {q.format(t=t)}")
    for _ in range(25):
        stmts = []
        for _ in range(rng.randint(1, 5)):
            x = rng.random()
            if append_only or x < 0.55:
                stmts.append(f"insert into {t} values " + ", ".join(_row(rng) for _ in range(rng.randint(1, 4))))
            elif x < 0.8:
                stmts.append(f"delete from {t} where v = {rng.choice([1, 7, 60, -4])}")
            else:
                stmts.append(f"update {t} set b = b - 1, v = v + 1 where k = {rng.choice([1, 2, 3])}")
        s.execute("; ".join(stmts) + "; flush")
        for name, q in QUERIES.items():
            got = sorted(map(str, s.execute(f"select * from {name}").fetchall()))
            want = sorted(map(str, s.execute(q.format(t=t)).fetchall()))
            assert got == want, name
    s.close()
