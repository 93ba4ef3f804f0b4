"""StateCache against a dict: lookups after puts, rewrites and evictions; equal hashes."""
from __future__ import annotations

import random

import numpy as np
import pyarrow as pa
import pytest

from rw_cli.store import state_cache
from rw_cli.store.state_cache import StateCache


@pytest.mark.parametrize("seed,collide", [(0, False), (1, False), (2, True), (3, True)])
def test_cache_matches_model(seed, collide, monkeypatch):
    if collide:  # few distinct hashes: every lookup meets other keys with its hash
        real = state_cache.hash_array
        monkeypatch.setattr(state_cache, "hash_array", lambda a: real(a) % np.uint64(7))
    r = random.Random(seed)
    cache = StateCache(max_bytes=r.choice([1 << 30, 3000]))
    model: dict[bytes, bytes | None] = {}
    for _ in range(200):
        keys = list({b"k%d" % r.randint(0, 400) for _ in range(r.randint(1, 30))})
        vals = [None if r.random() < 0.2 else r.randbytes(r.randint(0, 12)) for _ in keys]
        cache.put(pa.array(keys, pa.binary()), pa.array(vals, pa.binary()))
        model.update(zip(keys, vals))
        probe = [b"k%d" % r.randint(0, 450) for _ in range(40)]
        got, known = cache.get(pa.array(probe, pa.binary()))
        for k, v, kn in zip(probe, got.to_pylist(), known):
            if kn:
                assert k in model and v == model[k]
            else:
                assert v is None and (cache.evicted or k not in model)
        assert cache.nbytes <= max(cache.max_bytes, 0) or cache.max_bytes >= 1 << 30
        assert len(cache) <= len(model)
    if cache.max_bytes >= 1 << 30:
        assert not cache.evicted
        got, known = cache.get(pa.array(list(model), pa.binary()))
        assert known.all() and got.to_pylist() == list(model.values())


def test_key_filter_has_no_false_negatives():
    from rw_cli.store.state_cache import KeyFilter

    rng = np.random.default_rng(3)
    f = KeyFilter()
    added = []
    for _ in range(12):  # grows by layers
        h = rng.integers(0, 2**63, rng.integers(1, 60000)).astype(np.uint64)
        f.add(h)
        added.append(h)
        assert f.may_contain(np.concatenate(added)).all()
    others = rng.integers(0, 2**63, 100000).astype(np.uint64)
    assert f.may_contain(others).mean() < 0.1
    assert len(f.layers) > 1


def test_replaced_entries_are_dropped_before_live_ones_are_evicted():
    """A newer value leaves the old one's bytes behind; over its budget the cache drops
    those first, and evicts nothing while that is enough."""
    keys = pa.array([b"k%04d" % i for i in range(400)], pa.binary())
    cache = StateCache(max_bytes=1 << 30)
    model = {}
    for r in range(11):  # keys rewritten: dead entries
        part = keys if r == 0 else keys.slice(0, 200)
        vals = [b"v%d-%04d" % (r, i) for i in range(len(part))]
        cache.put(part, pa.array(vals, pa.binary()))
        model.update(zip(part.to_pylist(), vals))
    fresh = StateCache(max_bytes=1 << 30)
    fresh.put(keys, pa.array([model[k] for k in keys.to_pylist()], pa.binary()))
    assert cache.nbytes > 3 * fresh.nbytes
    cache.max_bytes = 2 * fresh.nbytes
    cache.put(keys.slice(0, 1), pa.array([b"new"], pa.binary()))
    model[keys[0].as_py()] = b"new"
    assert not cache.evicted and cache.nbytes <= cache.max_bytes
    got, known = cache.get(keys)
    assert known.all() and got.to_pylist() == [model[k] for k in keys.to_pylist()]


def test_dead_entries_are_dropped_once_they_outweigh_the_live_ones(monkeypatch):
    """Rewriting the same keys epoch after epoch (an aggregation's hot groups) does not
    grow the cache without end."""
    monkeypatch.setattr(state_cache, "COMPACT_MIN_BYTES", 4096)
    keys = pa.array([b"g%03d" % i for i in range(100)], pa.binary())
    cache = StateCache(max_bytes=1 << 30)
    sizes = []
    for r in range(200):
        cache.put(keys, pa.array([b"%d" % (r * 1000 + i) for i in range(100)], pa.binary()))
        sizes.append(cache.nbytes)
    assert max(sizes) < 4 * sizes[0] + 8192 and not cache.evicted and len(cache) == 100
    got, known = cache.get(keys)
    assert known.all() and got.to_pylist() == [b"%d" % (199 * 1000 + i) for i in range(100)]


def test_caches_share_one_budget_the_largest_shrinks_first():
    """Caches without a limit of their own grow until all of them together pass the budget;
    then the largest shrinks (evicting its oldest entries), and what every cache still says
    it knows is right."""
    from rw_cli.store.state_cache import CacheBudget

    budget = CacheBudget(60_000)
    big, small = StateCache(budget=budget), StateCache(budget=budget)
    model_big, model_small = {}, {}
    for r in range(40):
        keys = [b"b%05d" % (r * 50 + i) for i in range(50)]
        big.put(pa.array(keys, pa.binary()), pa.array([b"x" * 40] * 50, pa.binary()))
        model_big.update(dict.fromkeys(keys, b"x" * 40))
        if r % 8 == 0:
            keys = [b"s%05d" % (r * 5 + i) for i in range(5)]
            small.put(pa.array(keys, pa.binary()), pa.array([b"y"] * 5, pa.binary()))
            model_small.update(dict.fromkeys(keys, b"y"))
        assert big.nbytes + small.nbytes <= budget.max_bytes
    assert big.evicted and not small.evicted  # the small one kept everything
    for cache, model in ((big, model_big), (small, model_small)):
        got, known = cache.get(pa.array(list(model), pa.binary()))
        assert all(v == model[k] for k, v, kn in zip(model, got.to_pylist(), known) if kn)
    assert known.all()
    assert budget.nbytes == big.nbytes + small.nbytes


def test_the_budget_is_a_share_of_the_machines_memory(monkeypatch):
    """As RisingWave sizes its executors' caches from the compute node's memory: a quarter of
    what the process may use (a 1M-row aggregation's state past a fixed 1 GiB read SSTs for
    every epoch's groups), at least MIN_BUDGET_BYTES; `RW_STATE_CACHE_SIZE` overrides it."""
    from rw_cli.common import memory

    monkeypatch.delenv("RW_STATE_CACHE_SIZE", raising=False)
    monkeypatch.setattr(memory, "machine_memory", lambda: 24 << 30)
    assert state_cache._budget_bytes() == 6 << 30
    monkeypatch.setattr(memory, "machine_memory", lambda: 512 << 20)
    assert state_cache._budget_bytes() == state_cache.MIN_BUDGET_BYTES
    monkeypatch.setattr(memory, "machine_memory", lambda: None)
    assert state_cache._budget_bytes() == state_cache.FALLBACK_BUDGET_BYTES
    monkeypatch.setenv("RW_STATE_CACHE_SIZE", "512MiB")
    assert state_cache._budget_bytes() == 512 << 20


def test_machine_memory_is_read_on_linux():
    from rw_cli.common.memory import machine_memory

    total = machine_memory()
    assert total is not None and total >= 64 << 20


def test_arenas_grow_in_place_and_never_under_a_live_view():
    """An arena grows by realloc (no copy of what it holds) unless a view of it is alive,
    which then keeps the values it saw: growth copies instead of moving the memory."""
    g = state_cache._Growable(np.int64)
    for i in range(40):
        g.append(np.arange(i * 1000, (i + 1) * 1000))
    assert g.data.flags.owndata and np.array_equal(g.view, np.arange(40_000))
    held = g.view  # a numpy view, and an Arrow buffer over the data
    buffer = pa.py_buffer(g.data)
    for i in range(40, 400):
        g.append(np.arange(i * 1000, (i + 1) * 1000))
    assert np.array_equal(g.view, np.arange(400_000))
    assert np.array_equal(held, np.arange(40_000))
    assert np.array_equal(np.frombuffer(buffer, np.int64)[:40_000], np.arange(40_000))
