"""Retractable min/max find a group's new extreme from the edge of its materialized input
(HashAggExecutor._group_rows: the edge blocks of each SST, the memtable, whole-range reads
where the edges say nothing for sure). With groups of thousands of values spread over
many blocks and SSTs, deleting extremes epoch after epoch (and across a restart, with
cold caches) keeps every MV equal to its query."""
from __future__ import annotations

import random

import rw_cli

QUERY = ("select g, max(v) as hv, min(v) as lv, max(s) as hs, min(s) as ls, max(ts) as ht, min(ts) as lt, "
         "count(*) as c from t group by g")


def _check(s) -> None:
    got = sorted(map(str, s.execute("select * from m").fetchall()))
    want = sorted(map(str, s.execute(QUERY).fetchall()))
    assert got == want


def test_min_max_over_large_groups_under_deletes_of_extremes(tmp_path):
    rng = random.Random(5)
    s = rw_cli.connect(str(tmp_path))
    s.execute("create table t (id int primary key, g int, v int, s varchar, ts timestamp)")
    s.execute(f"create materialized view m as {QUERY}")
    next_id = 1

    def insert(n: int) -> None:
        nonlocal next_id
        lo, hi = next_id, next_id + n - 1
        next_id += n
        s.execute(f"insert into t select i, i % 3, (i * 7919 + {rng.randrange(1000)}) % 100003, "
                  f"'x' || lpad(((i * 31) % 99991)::text, 5, '0'), "
                  f"timestamp '2020-01-01' + ((i * 613) % 86400) * interval '1 second' "
                  f"from generate_series({lo}, {hi}) i")

    for _ in range(3):
        insert(8000)
        s.execute("flush")
    _check(s)
    for epoch in range(14):
        what = rng.choice(["top", "bottom", "both", "string", "time"])
        if what in ("top", "both"):
            s.execute(f"delete from t where v > (select max(v) - {rng.randrange(1, 400)} from t)")
        if what in ("bottom", "both"):
            s.execute(f"delete from t where v < (select min(v) + {rng.randrange(1, 400)} from t)")
        if what == "string":
            s.execute("delete from t where s >= (select max(s) from t where g = 1)")
        if what == "time":
            s.execute("delete from t where ts <= (select min(ts) + interval '20 seconds' from t)")
        if rng.random() < 0.5:
            insert(rng.randrange(1, 300))
        s.execute("flush")
        _check(s)
        if epoch == 6:  # state in SSTs only, caches cold
            s.close()
            s = rw_cli.connect(str(tmp_path))
            _check(s)
    s.close()
