"""Compaction against a dict model: every pinned snapshot stays readable, reads at or above the
low watermark never change, old versions and tombstones are collected."""
import random

import pytest

from rw_cli.store.hummock import MAX_EPOCH, HummockStorage
from rw_cli.store.object_store import MemoryObjectStore

from test_store_hummock import Model, _keyspace


def _open(store, r):
    return HummockStorage(store, block_size=r.choice([64, 256, 4096]), sst_target_size=r.choice([300, 2000, 1 << 20]),
                          l0_trigger=r.choice([1, 2, 3]), level_base_size=r.choice([500, 4000]),
                          level_multiplier=2, max_levels=r.choice([3, 5]), background_compaction=r.random() < 0.5)


@pytest.mark.parametrize("seed", range(6))
def test_compaction_keeps_pinned_snapshots(seed):
    r = random.Random(seed)
    store = MemoryObjectStore()
    h = _open(store, r)
    m = Model()
    keys = _keyspace(r)
    epoch = 1
    snaps = []
    for step in range(300):
        op = r.random()
        if op < 0.4:
            kvs = [(r.choice(keys), None if r.random() < 0.3 else r.randbytes(r.randint(0, 30)))
                   for _ in range(r.randint(1, 25))]
            h.ingest_batch(kvs, epoch)
            m.write(kvs, epoch)
        elif op < 0.55:
            h.commit_epoch(epoch)
            m.committed = epoch
            epoch += 1
        elif op < 0.6:
            snaps.append(h.pin_snapshot())
        elif op < 0.65 and snaps:
            snaps.pop(r.randrange(len(snaps))).close()
        elif op < 0.72:
            h.compact(full=r.random() < 0.3)
            h.vacuum()
        elif op < 0.75:
            h.close()
            for s in snaps:
                s.pinned = False
            snaps = []
            h = _open(store, r)
            m.drop_uncommitted()
        else:
            for s in snaps:
                ks = [r.choice(keys) for _ in range(6)]
                assert s.multi_get(ks) == [m.get(k, s.epoch) for k in ks], (step, s.epoch)
                assert list(s.iter()) == m.items(b"", None, s.epoch)
            ks = [r.choice(keys) for _ in range(10)]
            for e in (MAX_EPOCH, m.committed):
                assert h.multi_get(ks, e) == [m.get(k, e) for k in ks], step
            a, b = sorted(r.sample(keys, 2))
            assert list(h.iter(a, b, MAX_EPOCH)) == m.items(a, b, MAX_EPOCH)
            assert list(h.iter(b"", None, m.committed)) == m.items(b"", None, m.committed)
    h.commit_epoch(epoch)
    m.committed = epoch
    for s in snaps:
        s.close()
    h.compact(full=True)
    h.vacuum()
    v = h.version
    assert not v.levels[0] and sum(1 for lv in v.levels if lv) == 1
    # one version per key, no tombstones left
    t = h.scan_table(b"", None, MAX_EPOCH, include_tombstones=True)
    assert t["value"].null_count == 0
    assert list(h.iter(b"", None)) == m.items(b"", None, MAX_EPOCH)
    live = {s.path for s in v.ssts()}
    assert set(store.list("sst/")) == live
    h.close()
