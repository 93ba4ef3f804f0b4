"""Inner joins over append-only inputs (pairs from the partition cache's index, plus the
condition) agree with the batch query after every flush."""
from __future__ import annotations

import random

import rw_cli

QUERIES = {
    "eq": "select a.k, a.v, b.w, b.id from a join b on a.k = b.k",
    "cond": "select a.k, a.v, b.w from a join b on a.k = b.k and a.v <= b.w",
    "cond2": "select a.k, b.w from a join b on a.k = b.k and a.v < b.w and a.v + 1 > b.id and a.s <> b.s",
    "two_keys": "select a.v, b.w from a join b on a.k = b.k and a.s = b.s where b.w > 3",
    "str_key": "select a.v, b.id from a join b on a.s = b.s",
}


def test_append_only_inner_joins_match_batch(tmp_path):
    rng = random.Random(21)
    s = rw_cli.connect(str(tmp_path))
    s.execute("create table a (k int, v int, s varchar) append only")
    s.execute("create table b (id int, k int, w int, s varchar) append only")
    for name, q in QUERIES.items():
        s.execute(f"create materialized view {name} as {q}")
    n = 0
    for _ in range(20):
        stmts = []
        for _ in range(rng.randint(1, 4)):
            k = rng.choice(["NULL", "1", "2", "3"])
            sv = rng.choice(["NULL", "'x'", "'y'"])
            if rng.random() < 0.5:
                stmts.append(f"insert into a values ({k}, {rng.randint(0, 9)}, {sv})")
            else:
                n += 1
                stmts.append(f"insert into b values ({n}, {k}, {rng.randint(0, 9)}, {sv})")
        s.execute("; ".join(stmts) + "; flush")
        for name, q in QUERIES.items():
            got = sorted(map(str, s.execute(f"select * from {name}").fetchall()))
            want = sorted(map(str, s.execute(q).fetchall()))
            assert got == want, name
    s.close()


def test_condition_split():
    from sqlglot import parse_one

    from rw_cli.sql.expr_compile import conjuncts_of

    def split(sql):
        return [c.sql(dialect="duckdb") for c in conjuncts_of(parse_one(sql, read="duckdb"))]

    assert split("(_1 <= _7 AND _2 >= _7)") == ["_1 <= _7", "_2 >= _7"]
    assert split("(_8 = ' AND ') AND (_1 < _2)") == ["_8 = ' AND '", "_1 < _2"]
    assert split("_3 BETWEEN _1 AND _2") == ["_3 BETWEEN _1 AND _2"]
    assert split("(_1 < _2) OR (_3 > _4)") == ["(_1 < _2) OR (_3 > _4)"]
    assert split("_1 = 0 AND _2 = 0 OR _1 > 0") == ["_1 = 0 AND _2 = 0 OR _1 > 0"]
    assert split("NOT (_1 = 0 AND _2 = 0) AND CASE WHEN _1 AND _2 THEN _3 END") == \
        ["NOT (_1 = 0 AND _2 = 0)", "CASE WHEN _1 AND _2 THEN _3 END"]


def test_condition_mask_matches_duckdb():
    import pyarrow as pa
    from sqlglot import parse_one

    from rw_cli.common.types import BIGINT, DOUBLE, VARCHAR
    from rw_cli.engine import duck
    from rw_cli.engine.expr import condition_mask
    from rw_cli.sql.expr_compile import compile_duckdb_condition

    t = pa.table({"_0": [1, None, 3, 4], "_1": [2, 2, None, 4], "_2": ["a", "b", None, "d"],
                  "_3": [1.0, float("nan"), 3.0, None]})
    types = [BIGINT, BIGINT, VARCHAR, DOUBLE]
    for c in ["NOT _1 IS NULL", "_1 IS NOT NULL", "_1 IS NULL", "NOT (_1 IS NULL)", "NOT _1 IS NOT NULL",
              "_0 IS NULL AND _1 IS NOT NULL", "_0 = 1 OR _1 IS NULL", "_0 <= _1", "(_0 < _1 AND _2 <> 'b')",
              "_0 >= 2 AND _3 < 4", "_3 = _3", "_0 = -1 OR _1 = 2", "_0 <> 4", "_1 > 1 AND _0 != 3",
              "1 < _0 AND -2 <= _1", "_0 = 1 AND _1 = 2 OR _1 > 3"]:
        compiled = compile_duckdb_condition(parse_one(c, read="duckdb"), types, strict=True)
        want = duck.eval_exprs(t, [f"COALESCE(({c}), FALSE)"]).column(0).to_pylist()
        assert condition_mask(compiled, t).tolist() == want, c


def test_append_only_joins_with_colliding_partition_hashes(tmp_path, monkeypatch):
    """The cache index pairs rows by the hash of the join key: keys whose hashes collide are
    told apart by comparing the keys (forced here: only 3 distinct hashes)."""
    import numpy as np

    from rw_cli.engine.partition_recompute import PartitionRecomputeExecutor

    real = PartitionRecomputeExecutor._hash

    def colliding(self, side, rows):
        h = real(self, side, rows)
        return None if h is None else h % np.uint64(3)
    monkeypatch.setattr(PartitionRecomputeExecutor, "_hash", colliding)
    test_append_only_inner_joins_match_batch(tmp_path)


def test_rows_pairs_are_the_rows_of_each_probes_partition():
    import numpy as np
    import pyarrow as pa

    from rw_cli.engine.partition_cache import PartitionCache

    rng = np.random.default_rng(4)
    schema = pa.schema([("_0", pa.int64()), ("_1", pa.int64())])
    cache = PartitionCache(schema, partitioned=True)
    model: dict[int, list[int]] = {}
    for epoch in range(40):
        parts = rng.integers(0, 30, int(rng.integers(1, 20)))
        ids = rng.integers(0, 10**9, len(parts))
        t = pa.table({"_0": pa.array(parts), "_1": pa.array(ids)}, schema=schema)
        cache.add(t, parts.astype(np.uint64))  # the partition number as its own hash
        for p, i in zip(parts.tolist(), ids.tolist()):
            model.setdefault(p, []).append(i)
        if epoch % 5 == 4:
            gone = np.array([int(rng.integers(0, 30))], dtype=np.uint64)
            cache.take(gone, remove=True)
            model.pop(int(gone[0]), None)
        probes = rng.integers(0, 35, 12).astype(np.uint64)  # repeats, and partitions never seen
        probe, rows = cache.pairs(probes)
        got = sorted(zip(probe.tolist(), rows.column(0).to_pylist(), rows.column(1).to_pylist()))
        want = sorted((j, int(p), i) for j, p in enumerate(probes.tolist()) for i in model.get(int(p), []))
        assert got == want
