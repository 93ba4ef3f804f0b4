"""HummockStorage.scan_ranges: many key ranges read in one pass over every source equal the
entries a scan of the whole store finds inside them, for fixed- and variable-width keys,
ranges inside, across, before and after blocks and SSTs, and open-ended ones."""
from __future__ import annotations

import random

import pytest

from rw_cli.store.hummock import MAX_EPOCH, HummockStorage
from rw_cli.store.keys import next_key
from rw_cli.store.object_store import MemoryObjectStore


def _store(rng: random.Random, width: int | None) -> tuple[HummockStorage, dict[bytes, bytes | None]]:
    """A store of several SSTs with small blocks, each epoch writing and deleting keys."""
    h = HummockStorage(MemoryObjectStore(), block_size=256, background_compaction=False)
    model: dict[bytes, bytes | None] = {}
    for epoch in range(1, 7):
        kvs = []
        for _ in range(300):
            n = rng.randrange(2000)
            k = n.to_bytes(4, "big") if width else n.to_bytes(4, "big")[: rng.randrange(1, 5)]
            v = None if rng.random() < 0.15 else b"v%d.%d" % (epoch, n)
            kvs.append((k, v))
            model[k] = v
        h.ingest_batch(kvs, epoch)
        h.commit_epoch(epoch)
    return h, model


@pytest.mark.parametrize("width", [4, None])
@pytest.mark.parametrize("seed", range(6))
def test_scan_ranges_equals_a_filtered_scan(width, seed):
    rng = random.Random(seed)
    h, model = _store(rng, width)
    assert len(h.version.levels[0]) > 1  # several overlapping SSTs
    for _ in range(20):
        points = sorted({rng.randrange(2100).to_bytes(4, "big")[: (4 if width else rng.randrange(1, 5))]
                         for _ in range(rng.randrange(1, 40))})
        starts, ends = [], []
        for i, p in enumerate(points):  # disjoint: each range ends before the next starts
            nxt = points[i + 1] if i + 1 < len(points) else None
            if rng.random() < 0.5:
                end = next_key(p)
            else:
                end = nxt if nxt is not None and rng.random() < 0.8 else None
            if end is not None and nxt is not None and end > nxt:
                end = nxt
            starts.append(p)
            ends.append(end)
            if end is None:
                break
        run = h.scan_ranges(starts, ends, MAX_EPOCH)
        got = dict(zip(run.keys.to_pylist(), run.values.to_pylist()))
        want = {k: v for k, v in model.items() if v is not None
                and any(s <= k and (e is None or k < e) for s, e in zip(starts, ends))}
        assert got == want
    h.close()


@pytest.mark.parametrize("last", [True, False])
@pytest.mark.parametrize("width", [4, None])
@pytest.mark.parametrize("seed", range(6))
def test_scan_range_edges_give_each_ranges_extreme_live_key(last, width, seed):
    """scan_range_edges reads a range's edge blocks only: what it returns of a range is
    exact (live, newest values), holds the range's extreme key whenever it holds any, is
    empty with no cut only for an empty range, and leaves few ranges unsure."""
    rng = random.Random(seed)
    h, model = _store(rng, width)
    unsure = total = 0
    for _ in range(20):
        points = sorted({rng.randrange(2100).to_bytes(4, "big")[: (4 if width else rng.randrange(1, 5))]
                         for _ in range(rng.randrange(2, 12))})
        starts, ends = points[:-1], points[1:]  # wide, adjacent ranges: many blocks each
        n = rng.choice([1, 2, 16])
        run, cuts = h.scan_range_edges(starts, ends, n, last)
        got = dict(zip(run.keys.to_pylist(), run.values.to_pylist()))
        for k, v in got.items():
            assert v is not None and model.get(k) == v, k
        for s, e, cut in zip(starts, ends, cuts.to_pylist()):
            live = sorted(k for k, v in model.items() if v is not None and s <= k < e)
            mine = sorted(k for k in got if s <= k < e)
            total += 1
            if not mine:
                assert cut is not None or not live, (s, e)
                unsure += cut is not None and bool(live)
                continue
            assert (mine[-1] if last else mine[0]) == (live[-1] if last else live[0])
            # what it gives is every live key from the cut to the edge
            beyond = [k for k in live if cut is None or (k >= cut if last else k <= cut)]
            assert mine == beyond
    assert unsure <= total // 4, (unsure, total)
    h.close()
