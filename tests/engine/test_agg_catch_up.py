"""Two copies of one hash agg actor (on Spark: in two Python workers) take turns running its
epochs on one store. A copy whose last epoch ran in the other one catches up from the SSTs
written since (`catch_up`), and goes on exactly as a single copy would: the same output,
the same state — and a copy that began on an empty table never reads the store."""
from __future__ import annotations

import random

import pyarrow as pa
import pytest

from rw_cli.common.epoch import EpochPair
from rw_cli.common.types import BIGINT, INTEGER, VARCHAR
from rw_cli.engine.agg_call import AggCall, agg_return_type, state_types
from rw_cli.engine.hash_agg import HashAggExecutor
from rw_cli.store.hummock import HummockStorage
from rw_cli.store.object_store import MemoryObjectStore
from rw_cli.store.state_table import StateTable

from test_agg_delta import _chunks, _sorted

TYPES = [INTEGER, BIGINT, VARCHAR]
KINDS = [("count_star", None), ("sum", 1), ("max", 1), ("min", 1)]  # retractable: materialized input


def _agg(store: HummockStorage) -> HashAggExecutor:
    """An actor of the agg: tables 1 (result) and 2, 3 (max's and min's input) of `store`."""
    calls = [AggCall(k, a, TYPES[a] if a is not None else None, agg_return_type(k, TYPES[a] if a is not None else None))
             for k, a in KINDS]

    def table(table_id, types, pk):
        return StateTable(store, table_id, pa.schema([(f"_{i}", t.arrow()) for i, t in enumerate(types)]), pk)

    state = [INTEGER, BIGINT] + [t for c in calls for _, t in state_types(c)]
    minput = {i: table(2 + j, [INTEGER, BIGINT, BIGINT], [0, 1])
              for j, i in enumerate(i for i, c in enumerate(calls) if c.needs_minput)}
    return HashAggExecutor(TYPES, [0], calls, table(1, state, [0]), minput)


class _Counting(HummockStorage):
    reads = 0

    def multi_get_array(self, *a, **kw):
        self.reads += 1
        return super().multi_get_array(*a, **kw)


def _store(kind):
    """A store that compacts only when told: a background compaction that took the epochs a
    copy missed below L0 would make it say it cannot catch up (then, on Spark, it is rebuilt:
    `test_no_catch_up_when_the_store_cannot_tell`), at whatever moment the machine allows."""
    return kind(MemoryObjectStore(), background_compaction=False)


@pytest.mark.parametrize("seed", range(4))
def test_a_copy_that_caught_up_goes_on_as_one_copy_would(seed):
    shared, alone = _store(_Counting), _store(HummockStorage)
    copies, reference = [_agg(shared), None], _agg(alone)
    last = [0, -1]  # the epoch each copy ran last (-1: not built yet)
    rng, live = random.Random(seed), []
    caught_up = 0
    for n in range(1, 16):
        chunks = _chunks(rng, live, append_only=False)
        epoch = EpochPair((n + 1) << 16, n << 16)
        i = 0 if n == 1 else rng.randrange(2)
        if copies[i] is None:
            copies[i], last[i] = _agg(shared), (n - 1) << 16  # built on a table that is not empty
        elif last[i] != (n - 1) << 16 and n > 1:
            assert copies[i].catch_up(last[i], None)
            caught_up += 1
        for c in chunks:
            copies[i].on_chunk(c)
            reference.on_chunk(c)
        reads = shared.reads
        assert _sorted(copies[i].on_barrier(epoch)) == _sorted(reference.on_barrier(epoch)), n
        if i == 0:  # began on an empty table: every key it may read went through its cache
            assert shared.reads == reads, n
        last[i] = epoch.prev
        for s in (shared, alone):
            s.commit_epoch(epoch.prev)
            s.sync()
    assert caught_up > 2
    mine = [copies[0].result_table, *copies[0].minput_tables.values()]
    theirs = [reference.result_table, *reference.minput_tables.values()]
    for t, r in zip(mine, theirs):
        assert sorted(t.scan().to_pylist(), key=repr) == sorted(r.scan().to_pylist(), key=repr)

def test_no_catch_up_when_the_store_cannot_tell():
    """A compaction took the writes since below L0: the copy says so (it is rebuilt)."""
    store = HummockStorage(MemoryObjectStore(), l0_trigger=1)
    a, b = _agg(store), None
    rng, live = random.Random(3), []
    for n in range(1, 5):
        runner = a if n in (1, 2) else (b := b or _agg(store))
        for c in _chunks(rng, live, append_only=False):
            runner.on_chunk(c)
        runner.on_barrier(EpochPair((n + 1) << 16, n << 16))
        store.commit_epoch(n << 16)
        store.sync()
    store.compact(full=True)
    assert not a.catch_up(2 << 16, None)


@pytest.mark.parametrize("seed", range(3))
def test_a_copy_built_on_stored_state_reads_it_whole_once(seed):
    """A copy built where the state is stored already (a Spark worker's copy of an actor
    whose first epochs ran in the other worker) fills its caches from the store once
    (`fill_caches`): from then on, as the copy that began on an empty table, neither copy
    reads the store for a key — a new group is new without a lookup."""
    shared, alone = _store(_Counting), _store(HummockStorage)
    copies, reference = [_agg(shared), None], _agg(alone)
    last = [0, -1]
    rng, live = random.Random(seed), []
    for n in range(1, 14):
        epoch = EpochPair((n + 1) << 16, n << 16)
        i = 0 if n < 3 else rng.randrange(2)
        if copies[i] is None:
            copies[i] = _agg(shared)
            copies[i].fill_caches(None)
        elif last[i] not in (-1, (n - 1) << 16):
            assert copies[i].catch_up(last[i], None)
        for c in _chunks(rng, live, append_only=False):
            copies[i].on_chunk(c)
            reference.on_chunk(c)
        reads = shared.reads
        assert _sorted(copies[i].on_barrier(epoch)) == _sorted(reference.on_barrier(epoch)), n
        assert shared.reads == reads, (n, i)
        last[i] = epoch.prev
        for s in (shared, alone):
            s.commit_epoch(epoch.prev)
            s.sync()
    assert copies[1] is not None


def test_an_epoch_without_rows_decides_that_the_cache_began_on_an_empty_table():
    """A copy whose first epoch had no rows (Spark's first epoch of a job reads nothing), then
    caught up with what the other copy wrote: its cache began on an empty table and is
    complete, so its next epoch reads nothing from the store."""
    store = _store(_Counting)
    a, b = _agg(store), _agg(store)
    rng, live = random.Random(5), []
    a.on_barrier(EpochPair(2 << 16, 1 << 16))  # epoch 1: no rows
    store.commit_epoch(1 << 16)
    store.sync()
    for n in (2, 3):  # the other copy runs two epochs of rows
        for c in _chunks(rng, live, append_only=False):
            b.on_chunk(c)
        b.on_barrier(EpochPair((n + 1) << 16, n << 16))
        store.commit_epoch(n << 16)
        store.sync()
    assert a.catch_up(1 << 16, None)
    for c in _chunks(rng, live, append_only=False):
        a.on_chunk(c)
    reads = store.reads
    a.on_barrier(EpochPair(5 << 16, 4 << 16))
    assert store.reads == reads
