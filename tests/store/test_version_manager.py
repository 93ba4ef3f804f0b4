"""The version manager on its own, over an in-memory object store: claims, commits, pins, the
low watermark and vacuum."""
from __future__ import annotations

import threading

import pytest

from rw_cli.errors import StorageError
from rw_cli.store.object_store import MemoryObjectStore
from rw_cli.store.version import SstInfo, sst_path, version_path
from rw_cli.store.version_manager import VersionManager


def sst(sid: int) -> SstInfo:
    return SstInfo(sid, 10, 0, 0, 0, b"a", b"b", 1, 1, 1)


def manager(store: MemoryObjectStore, claim: bool = True) -> VersionManager:
    return VersionManager(store, threading.RLock(), claim=claim)


def add_l0(epoch: int, *ssts: SstInfo):
    def make(v):
        nv = v.copy(id=v.id + 1, max_committed_epoch=epoch)
        nv.levels[0] = list(ssts) + nv.levels[0]
        return nv
    return make


def test_a_writable_open_claims_the_next_version_and_fences_the_older_writer():
    store = MemoryObjectStore()
    a = manager(store)
    assert a.claim == a.current.id == 1 and store.exists(version_path(1))
    b = manager(store)
    assert b.claim == 2
    with pytest.raises(StorageError, match="another writer"):
        a.commit(add_l0(1, sst(1)))
    assert b.commit(add_l0(1, sst(1))).id == 3
    reader = manager(store, claim=False)
    assert reader.claim == 3 and reader.current.max_committed_epoch == 1 and not store.exists(version_path(4))


def test_commit_installs_the_version_then_tells_installed():
    m = manager(MemoryObjectStore())
    seen = []
    v = m.commit(add_l0(5, sst(7)), lambda v: seen.append((v.id, m.current is v)))
    assert m.current is v and v.max_committed_epoch == 5 and seen == [(v.id, True)]
    assert m.commit(lambda cur: None) is None and m.current is v  # nothing to commit


def test_pinned_epochs_hold_the_low_watermark_and_older_pins_are_refused():
    m = manager(MemoryObjectStore())
    m.commit(add_l0(10))
    v10 = m.pin_epoch(10)
    m.commit(add_l0(20))
    assert m.low_watermark() == 10
    m.unpin_epoch(10, v10)
    assert m.low_watermark() == 20
    with pytest.raises(StorageError, match="no longer readable"):
        m.pin_epoch(15)
    m.unpin(m.pin_epoch(20))


def test_vacuum_keeps_what_a_version_references_pins_or_has_in_flight():
    store = MemoryObjectStore()
    for sid in (1, 2, 3, 4):
        store.put(sst_path(sid), b"x")
    m = manager(store)
    m.commit(add_l0(1, sst(1), sst(2)))
    pinned = m.pin()  # holds SSTs 1 and 2
    m.commit(lambda v: v.copy(id=v.id + 1, levels=[[sst(2)]]))
    deleted = []
    n = m.vacuum(lambda: {3}, deleted.append)
    assert sorted(deleted) == [4]  # 1: pinned, 2: current, 3: in flight
    assert n == 1 + 2 and [v for v in range(1, 4) if store.exists(version_path(v))] == [3]
    m.unpin(pinned)
    deleted.clear()
    m.vacuum(set, deleted.append)
    assert sorted(deleted) == [1, 3]
    assert store.exists(sst_path(2))


def test_follow_reads_a_version_without_committing_it():
    store = MemoryObjectStore()
    writer = manager(store)
    worker = manager(store, claim=False)
    v = writer.commit(add_l0(3, sst(9)))
    same = v.copy()
    worker.follow(v)
    assert worker.current is v
    worker.follow(same)  # the same version: the object read so far is kept
    assert worker.current is v
    assert [i for i in range(1, 5) if store.exists(version_path(i))] == [1, 2]
