"""The partitioned operators' in-memory input cache and delta application."""
from __future__ import annotations

import random

import numpy as np
import pyarrow as pa

from rw_cli.common.vnode import hash_columns
from rw_cli.engine.chunk import DELETE, INSERT, UPDATE_DELETE, UPDATE_INSERT, StreamChunk
from rw_cli.engine.partition_cache import PartitionCache, _apply_sql, apply_chunk


def _rows(keys, parts, vals):
    return pa.table({"_0": pa.array(keys, pa.int64()), "_1": pa.array(parts, pa.string()),
                     "_2": pa.array(vals, pa.float64())})


def test_apply_matches_duckdb():
    """Valid change streams (a key is inserted only when absent, deleted only when present)."""
    rng = random.Random(7)
    for _ in range(40):
        keys = rng.sample(range(40), 15)
        rows = _rows(keys, [rng.choice(["a", "b", None]) for _ in keys], [rng.random() for _ in keys])
        present = {k: (p, v) for k, p, v in zip(keys, rows.column(1).to_pylist(), rows.column(2).to_pylist())}
        ops, dk, dp, dv = [], [], [], []

        def emit(op, k, p, v):
            ops.append(op)
            dk.append(k)
            dp.append(p)
            dv.append(v)
        for _ in range(rng.randint(1, 25)):
            k = rng.choice(range(45))
            if k in present:
                p, v = present.pop(k)
                if rng.random() < 0.5:
                    emit(DELETE, k, p, v)
                else:
                    emit(UPDATE_DELETE, k, p, v)
                    present[k] = (p, rng.random())
                    emit(UPDATE_INSERT, k, *present[k])
            else:
                present[k] = (rng.choice(["a", None]), rng.random())
                emit(INSERT, k, *present[k])
        delta = StreamChunk(_rows(dk, dp, dv), np.array(ops, dtype=np.int8))
        for key in (["_0"], ["_0", "_1"]):
            fast = apply_chunk(rows, delta, key)
            slow = _apply_sql(rows, delta, key)
            assert sorted(map(str, fast.to_pylist())) == sorted(map(str, slow.to_pylist()))
        got = {r["_0"]: (r["_1"], r["_2"]) for r in apply_chunk(rows, delta, ["_0"]).to_pylist()}
        assert got == present


def test_rows_runs_find_add_remove():
    rng = np.random.default_rng(3)
    schema = pa.schema([("_0", pa.int64()), ("_1", pa.int64())])
    cache = PartitionCache(schema, partitioned=True)
    model: dict[int, list[int]] = {}
    next_id = 0
    for epoch in range(150):  # past FANOUT**3 adds: a merged run whose segments were copied into one
        n = int(rng.integers(1, 30))
        parts = rng.integers(0, 20, n)
        ids = np.arange(next_id, next_id + n)
        next_id += n
        t = pa.table({"_0": pa.array(parts), "_1": pa.array(ids)}, schema=schema)
        cache.add(t, hash_columns([t.column(0)]))
        for p, i in zip(parts.tolist(), ids.tolist()):
            model.setdefault(p, []).append(i)
        touched_parts = sorted(set(rng.integers(0, 20, 3).tolist()))
        touched = hash_columns([pa.array(touched_parts, pa.int64())])
        remove = bool(epoch % 3 == 0)
        got = cache.take(touched, remove=remove)
        want = sorted(i for p in touched_parts for i in model.get(p, []))
        assert sorted(got.column(1).to_pylist()) == want
        if remove:
            for p in touched_parts:
                model.pop(p, None)
        assert cache.num_rows == sum(len(v) for v in model.values())
        assert sorted(cache.all().column(1).to_pylist()) == sorted(i for v in model.values() for i in v)
    assert len(cache.runs) < 20


def test_runs_merge_when_lookups_pay_for_it_and_past_max_runs_anyway():
    """Runs nothing looks up stay unmerged up to MAX_RUNS; runs looked up often merge into
    O(log n); lookups find the same rows either way."""
    from rw_cli.engine import partition_cache as pr

    schema = pa.schema([("_0", pa.int64()), ("_1", pa.int64())])
    quiet, busy = PartitionCache(schema, partitioned=True), PartitionCache(schema, partitioned=True)
    n = 0
    for epoch in range(pr.MAX_RUNS + 20):
        keys = np.arange(n, n + 50) % 97
        rows = pa.table({"_0": pa.array(keys, pa.int64()), "_1": pa.array(np.arange(n, n + 50), pa.int64())})
        h = hash_columns([rows.column(0)])
        n += 50
        for cache in (quiet, busy):
            cache.add(rows, h)
        busy.pairs(hash_columns([pa.array(np.arange(97), pa.int64())]))  # every partition, each epoch
        if epoch < pr.MAX_RUNS:
            assert len(quiet.runs) == epoch + 1
        assert len(quiet.runs) <= pr.MAX_RUNS + 1
    assert len(busy.runs) < 12
    assert {r.level for r in quiet.runs} != {0}  # past MAX_RUNS, the oldest groups merged
    probe = hash_columns([pa.array([5, 42], pa.int64())])
    for cache in (quiet, busy):
        owner, rows = cache.pairs(probe)
        assert sorted(rows.column(1).to_pylist()) == [i for i in range(n) if i % 97 in (5, 42)]
        assert cache.num_rows == n


def test_distinct_probes_by_hash_table_or_sort():
    """Probes with many repeats are deduplicated by Arrow's hash table, mostly distinct ones
    by a sort; either way every probe maps to its distinct hash."""
    from rw_cli.engine.partition_cache import _distinct

    rng = np.random.default_rng(5)
    repeats = rng.integers(0, 300, 20000).astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    distinct_ = rng.integers(0, 1 << 62, 20000).astype(np.uint64)
    for h in (repeats, distinct_, repeats[:10], np.zeros(0, dtype=np.uint64)):
        d, uid = _distinct(h)
        assert len(d) == len(np.unique(h)) and (d[uid] == h).all()


def _pairs_by_key(cache: PartitionCache, probe_keys: pa.Array, zoned: bool) -> list[tuple[int, int]]:
    """(probe number, matched row's id) of an equi-join's probes, keys compared."""
    h = hash_columns([probe_keys])
    owner, rows = cache.pairs(h, probe_keys if zoned else None)
    k = probe_keys.to_pylist()
    return sorted((int(o), i) for o, rk, i in zip(owner, rows.column(0).to_pylist(), rows.column(1).to_pylist())
                  if k[o] is not None and rk == k[o])


def test_zones_skip_runs_whose_key_range_the_probes_miss():
    """A stream of growing keys (ids, times): each run knows its key range, and probes of
    recent keys search only the recent runs — with the same pairs as searching them all,
    null keys (which match nothing) included."""
    import datetime

    for arrow_type, to_key in ((pa.int64(), lambda i: i),
                               (pa.date32(), lambda i: datetime.date(2020, 1, 1) + datetime.timedelta(days=i)),
                               (pa.timestamp("us", "UTC"),
                                lambda i: datetime.datetime(2020, 1, 1, tzinfo=datetime.timezone.utc)
                                + datetime.timedelta(seconds=i))):
        schema = pa.schema([("_0", arrow_type), ("_1", pa.int64())])
        zoned, plain = PartitionCache(schema, True, zone_column=0), PartitionCache(schema, True)
        rng = np.random.default_rng(11)
        n = 0
        for epoch in range(40):
            ks = [None if j % 17 == 0 else to_key(int(v)) for j, v in enumerate(rng.integers(epoch * 10, epoch * 10 + 12, 30))]
            rows = pa.table({"_0": pa.array(ks, arrow_type), "_1": pa.array(np.arange(n, n + 30), pa.int64())})
            n += 30
            for cache in (zoned, plain):
                cache.add(rows, hash_columns([rows.column(0)]))
            probes = pa.array([None] + [to_key(int(v)) for v in rng.integers(epoch * 10 - 5, epoch * 10 + 15, 25)],
                              arrow_type)
            assert _pairs_by_key(zoned, probes, True) == _pairs_by_key(plain, probes, False)
        assert all(r.zone is not None for r in zoned.runs)
        # probes of recent keys do not search the runs of older keys
        before = [r.probed for r in zoned.runs]
        old = [i for i, r in enumerate(zoned.runs) if r.zone[1] < _int(to_key(395), arrow_type)]
        assert old
        _pairs_by_key(zoned, pa.array([to_key(395), to_key(399)], arrow_type), True)
        assert all(zoned.runs[i].probed == before[i] for i in old)


def _int(value, arrow_type) -> int:
    from rw_cli.engine.partition_cache import _int64

    return _int64(pa.array([value], arrow_type)).to_pylist()[0]


def test_zones_fall_back_on_a_hash_of_two_keys():
    """Two probe keys with one hash (a collision): the zones cannot say which run to search,
    so every run is searched."""
    schema = pa.schema([("_0", pa.int64()), ("_1", pa.int64())])
    cache = PartitionCache(schema, True, zone_column=0)
    for base in (0, 100):
        rows = pa.table({"_0": pa.array([base, base + 1], pa.int64()), "_1": pa.array([base, base + 1], pa.int64())})
        cache.add(rows, hash_columns([rows.column(0)]))
    keys = pa.array([1, 100], pa.int64())
    same = np.array([7, 7], dtype=np.uint64)  # as if both keys hashed alike
    from rw_cli.engine.partition_cache import _distinct_keys

    assert _distinct_keys(*cache._key_values(keys), np.array([0, 0]), 1) is None
    cache.runs[0].hashes[:] = 7
    cache.runs[1].hashes[:] = 7
    for r in cache.runs:
        r._index = None
    owner, rows = cache.pairs(same, keys)
    assert sorted(rows.column(1).to_pylist()) == [0, 0, 1, 1, 100, 100, 101, 101]


def test_pairs_of_a_unique_key_and_of_repeated_keys_agree_with_a_nested_loop():
    """A cache holding one row per key (a join on the other side's primary key) and one with
    several: each probe gets exactly the rows of its key."""
    rng = np.random.default_rng(8)
    schema = pa.schema([("_0", pa.int64()), ("_1", pa.int64())])
    for keys in (np.arange(500), rng.integers(0, 200, 500)):
        cache = PartitionCache(schema, True, zone_column=0)
        for part in np.array_split(np.arange(500), 7):
            rows = pa.table({"_0": pa.array(keys[part]), "_1": pa.array(part)}, schema=schema)
            cache.add(rows, hash_columns([rows.column(0)]))
        probes = pa.array(rng.integers(-10, 520, 3000), pa.int64())
        want = sorted((p, i) for p, k in enumerate(probes.to_pylist()) for i in np.flatnonzero(keys == k).tolist())
        assert _pairs_by_key(cache, probes, True) == want == _pairs_by_key(cache, probes, False)
        # probes mostly outside every run's keys (a big side probing a small one)
        far = pa.array(np.concatenate([rng.integers(10_000, 20_000, 900), [5, 7, 499]]), pa.int64())
        want = sorted((p, i) for p, k in enumerate(far.to_pylist()) for i in np.flatnonzero(keys == k).tolist())
        assert _pairs_by_key(cache, far, True) == want == _pairs_by_key(cache, far, False)
    empty = PartitionCache(schema, True, zone_column=0)
    assert _pairs_by_key(empty, pa.array([1, 2], pa.int64()), True) == []


def test_a_run_is_scanned_for_a_few_probes_and_sorted_past_them():
    """A new run is not sorted until lookups have asked for more than LINEAR_PROBES hashes;
    removed rows stay removed when it is sorted; lookups agree before and after."""
    from rw_cli.engine import partition_cache as pr

    schema = pa.schema([("_0", pa.int64()), ("_1", pa.int64())])
    cache = PartitionCache(schema, True)
    keys = np.arange(300) % 50
    rows = pa.table({"_0": pa.array(keys), "_1": pa.array(np.arange(300))}, schema=schema)
    cache.add(rows, hash_columns([rows.column(0)]))
    run = cache.runs[0]
    assert not run.sorted

    def ids(ks):
        return sorted(cache.take(hash_columns([pa.array(ks, pa.int64())])).column(1).to_pylist())

    assert ids([3, 7]) == sorted(i for i in range(300) if i % 50 in (3, 7))
    cache.take(hash_columns([pa.array([3], pa.int64())]), remove=True)
    assert not run.sorted and run.probed <= pr.LINEAR_PROBES
    assert ids(list(range(pr.LINEAR_PROBES))) == sorted(i for i in range(300) if i % 50 < pr.LINEAR_PROBES
                                                        and i % 50 != 3)
    assert run.sorted
    assert ids([3, 7]) == sorted(i for i in range(300) if i % 50 == 7)
