"""min and max over a table that rows leave (issue 21): every epoch inserts, deletes and
updates rows of a few groups, with values from a small range (a group's extreme is often held
by several rows, inserted and deleted in one epoch, or deleted while an equal value comes in),
and the MV must equal its own query after each epoch. The aggregation keeps each group's
extreme and reads the group's materialized input back only when the extreme left."""
from __future__ import annotations

import random

import pytest

import rw_cli

MV = "SELECT g, min(v) AS lo, max(v) AS hi, count(*) AS n, count(v) AS nv FROM t GROUP BY g"


def _rows(s, sql: str) -> list[tuple]:
    return sorted(s.execute(sql).fetchall(), key=repr)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_min_max_follow_inserts_deletes_and_updates(tmp_path, seed):
    r = random.Random(seed)
    s = rw_cli.connect(str(tmp_path / "d"))
    s.execute("CREATE TABLE t (k INT PRIMARY KEY, g INT, v INT)")
    s.execute(f"CREATE MATERIALIZED VIEW m AS {MV}")
    live: set[int] = set()
    next_k = 0
    for _ in range(30):
        rows = []
        for _ in range(r.randint(0, 40)):
            rows.append(f"({next_k}, {r.randint(0, 5)}, {'NULL' if r.random() < 0.1 else r.randint(0, 9)})")
            live.add(next_k)
            next_k += 1
        if rows:
            s.execute("INSERT INTO t VALUES " + ", ".join(rows))
        gone = r.sample(sorted(live), min(len(live), r.randint(0, 15)))
        if gone:
            s.execute(f"DELETE FROM t WHERE k IN ({', '.join(map(str, gone))})")
            live.difference_update(gone)
        if live and r.random() < 0.5:
            some = r.sample(sorted(live), min(len(live), 5))
            s.execute(f"UPDATE t SET v = {r.randint(0, 9)} WHERE k IN ({', '.join(map(str, some))})")
        if r.random() < 0.3:  # the group's every row goes: the group leaves the MV
            s.execute(f"DELETE FROM t WHERE g = {r.randint(0, 5)}")
        s.execute("FLUSH")
        live = {k for (k,) in s.execute("SELECT k FROM t").fetchall()}
        assert _rows(s, "SELECT * FROM m") == _rows(s, MV)
    s.close()
