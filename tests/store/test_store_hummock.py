import random

import pytest

from rw_cli.errors import StorageError
from rw_cli.store.hummock import MAX_EPOCH, HummockStorage
from rw_cli.store.object_store import LocalObjectStore, MemoryObjectStore
from rw_cli.store.version import CURRENT


class Model:
    """key -> list of (epoch, value|None), plus the committed epoch."""

    def __init__(self):
        self.hist: dict[bytes, list[tuple[int, bytes | None]]] = {}
        self.committed = 0

    def write(self, kvs, epoch):
        for k, v in dict(kvs).items():
            h = [x for x in self.hist.get(k, []) if x[0] != epoch]
            h.append((epoch, v))
            h.sort()
            self.hist[k] = h

    def get(self, k, epoch):
        best = None
        for e, v in self.hist.get(k, []):
            if e <= epoch:
                best = v
        return best

    def items(self, start, end, epoch):
        out = []
        for k in sorted(self.hist):
            if k < start or (end is not None and k >= end):
                continue
            v = self.get(k, epoch)
            if v is not None:
                out.append((k, v))
        return out

    def drop_uncommitted(self):
        for k in list(self.hist):
            self.hist[k] = [x for x in self.hist[k] if x[0] <= self.committed]


def _keyspace(r):
    keys = set()
    while len(keys) < 60:
        keys.add(bytes(r.choice(b"ab\x00\xff") for _ in range(r.randint(0, 4))))
    return sorted(keys)


@pytest.mark.parametrize("kind", ["memory", "local"])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_against_model(kind, seed, tmp_path):
    r = random.Random(seed)
    store = MemoryObjectStore() if kind == "memory" else LocalObjectStore(str(tmp_path / "s"))
    h = HummockStorage(store, block_size=r.choice([64, 512, 65536]), background_compaction=False)
    m = Model()
    keys = _keyspace(r)
    epoch = 1
    for step in range(250):
        op = r.random()
        if op < 0.35:
            kvs = [(r.choice(keys), None if r.random() < 0.3 else r.randbytes(r.randint(0, 12)))
                   for _ in range(r.randint(1, 15))]
            h.ingest_batch(kvs, epoch)
            m.write(kvs, epoch)
        elif op < 0.45:
            epoch += 1
        elif op < 0.55:
            # commit everything up to some epoch <= current
            ce = r.randint(max(m.committed, 1), epoch) if epoch >= max(m.committed, 1) else epoch
            ce = max(ce, m.committed)
            extra = r.choice([None, r.randbytes(5)])
            h.commit_epoch(ce, extra)
            m.committed = ce
            assert h.committed_epoch == ce
            if ce >= epoch:
                epoch = ce + 1
        elif op < 0.6 and m.committed:
            # reopen: only committed data survives
            prev_extra = h.extra
            h.close()
            h = HummockStorage(store, block_size=r.choice([64, 65536]), background_compaction=False)
            m.drop_uncommitted()
            assert h.committed_epoch == m.committed
            assert h.extra == prev_extra
            epoch = max(epoch, m.committed + 1)
        elif op < 0.8:
            e = r.choice([MAX_EPOCH, r.randint(0, epoch)])
            ks = [r.choice(keys) for _ in range(8)]
            assert h.multi_get(ks, e) == [m.get(k, e) for k in ks]
            assert h.get(ks[0], e) == m.get(ks[0], e)
        else:
            e = r.choice([MAX_EPOCH, r.randint(0, epoch), m.committed])
            a, b = sorted(r.sample(keys, 2))
            end = None if r.random() < 0.2 else b
            assert list(h.iter(a, end, e)) == m.items(a, end, e)
        if epoch <= m.committed:
            epoch = m.committed + 1
    assert list(h.iter(b"", None, MAX_EPOCH)) == m.items(b"", None, MAX_EPOCH)


def test_epoch_rules_and_extra():
    h = HummockStorage(MemoryObjectStore())
    assert h.committed_epoch == 0 and h.extra == b""
    h.ingest_batch([(b"k", b"1")], 5)
    h.commit_epoch(5, b"catalog-v1")
    assert h.extra == b"catalog-v1"
    with pytest.raises(StorageError):
        h.ingest_batch([(b"k", b"2")], 5)
    with pytest.raises(StorageError):
        h.commit_epoch(4)
    h.commit_epoch(6)  # nothing to write; extra kept
    assert h.extra == b"catalog-v1" and h.committed_epoch == 6
    h.commit_epoch(7, b"catalog-v2")
    assert h.extra == b"catalog-v2"
    assert h.get(b"k", MAX_EPOCH) == b"1"
    assert h.get(b"k", 4) is None


def test_commit_only_writes_epochs_up_to_the_commit():
    store = MemoryObjectStore()
    h = HummockStorage(store)
    h.ingest_batch([(b"a", b"1")], 1)
    h.ingest_batch([(b"b", b"2")], 2)
    h.commit_epoch(1)
    assert h.get(b"b", MAX_EPOCH) == b"2"  # still in the shared buffer
    h2 = HummockStorage(store, read_only=True)
    assert h2.get(b"a") == b"1" and h2.get(b"b") is None
    h.commit_epoch(2)
    assert HummockStorage(store, read_only=True).get(b"b") == b"2"


def test_same_key_same_epoch_later_write_wins():
    h = HummockStorage(MemoryObjectStore())
    h.ingest_batch([(b"a", b"1")], 1)
    h.ingest_batch([(b"a", b"2")], 1)
    assert h.get(b"a") == b"2"
    h.commit_epoch(1)
    assert h.get(b"a") == b"2"
    assert list(h.iter(b"", None, 1)) == [(b"a", b"2")]


def test_crash_leftovers_are_ignored_and_vacuumed(tmp_path):
    store = LocalObjectStore(str(tmp_path))
    h = HummockStorage(store)
    h.ingest_batch([(b"a", b"1")], 1)
    h.commit_epoch(1, b"x")
    # an SST uploaded by a commit that never wrote its version
    store.put("sst/99.sst", b"garbage")
    h.ingest_batch([(b"b", b"2")], 2)
    h.close()
    h2 = HummockStorage(store)  # vacuums the leftover on open
    assert h2.get(b"a") == b"1" and h2.get(b"b") is None
    assert not store.exists("sst/99.sst")
    h2.ingest_batch([(b"c", b"3")], 2)
    h2.commit_epoch(2)
    store.put("sst/98.sst", b"garbage")
    assert h2.vacuum() >= 1
    assert not store.exists("sst/98.sst")
    h2.close()
    h3 = HummockStorage(store)
    assert h3.get(b"a") == b"1" and h3.get(b"c") == b"3" and h3.extra == b"x"


def test_current_missing_or_corrupt_or_stale(tmp_path):
    store = LocalObjectStore(str(tmp_path))
    h = HummockStorage(store)
    for e in (1, 2, 3):
        h.ingest_batch([(b"k%d" % e, b"v")], e)
        h.commit_epoch(e, b"e%d" % e)
    h.close()
    store.put(CURRENT, b"not a number")
    assert HummockStorage(store, read_only=True).committed_epoch == 3
    store.delete(CURRENT)
    assert HummockStorage(store, read_only=True).extra == b"e3"
    # CURRENT lagging behind (crash between version write and CURRENT update): roll forward
    store.put(CURRENT, b"1")
    h2 = HummockStorage(store)
    assert h2.committed_epoch == 3 and h2.get(b"k3") == b"v"
    h2.ingest_batch([(b"k4", b"v")], 4)
    h2.commit_epoch(4)
    assert HummockStorage(store, read_only=True).committed_epoch == 4


def test_current_follows_commits_within_the_hint_interval_and_at_close(tmp_path):
    """CURRENT, a hint, is written at most every HINT_INTERVAL_S while commits follow one
    another, once the uploader is idle that long, and at close; a reader never needs it."""
    import time

    from rw_cli.store.uploader import HINT_INTERVAL_S

    store = LocalObjectStore(str(tmp_path))
    h = HummockStorage(store)
    for e in range(1, 21):
        h.ingest_batch([(b"k%d" % e, b"v")], e)
        h.commit_epoch(e)
        assert HummockStorage(store, read_only=True).committed_epoch == e
    deadline = time.monotonic() + 10 * HINT_INTERVAL_S + 5
    while int(store.get(CURRENT)) != h.version.id and time.monotonic() < deadline:
        time.sleep(HINT_INTERVAL_S / 5)
    assert int(store.get(CURRENT)) == h.version.id
    h.ingest_batch([(b"last", b"v")], 21)
    h.commit_epoch(21)
    h.close()
    assert int(store.get(CURRENT)) == HummockStorage(store, read_only=True).version.id


def test_second_writer_fences_the_first():
    store = MemoryObjectStore()
    a = HummockStorage(store)
    a.ingest_batch([(b"k", b"a")], 1)
    a.commit_epoch(1)
    with pytest.raises(StorageError, match="in use by another writer"):
        HummockStorage(store)  # refused at open: a holds the writer lease
    # a writer whose lease went stale (a hung process): the next one takes over and
    # claims the next version number, which fences a off
    a._lease._stop.set()
    a._lease._thread.join()
    from rw_cli.store.lease import WriterLease, lease_path
    gen, rec = WriterLease(store).current()
    rec.heartbeat -= 3600
    store.put(lease_path(gen), rec.encode())
    b = HummockStorage(store)
    with pytest.raises(StorageError, match="another writer"):
        a.commit_epoch(2)
    with pytest.raises(StorageError):
        a.commit_epoch(3)  # stays failed
    b.ingest_batch([(b"k", b"b")], 2)
    b.commit_epoch(2)
    assert HummockStorage(store, read_only=True).get(b"k") == b"b"


def test_corrupted_sst_raises_on_read():
    store = MemoryObjectStore()
    h = HummockStorage(store, block_size=64)
    h.ingest_batch([(b"k%03d" % i, b"v" * 20) for i in range(100)], 1)
    h.commit_epoch(1)
    (path,) = store.list("sst/")
    data = bytearray(store.get(path))
    data[30] ^= 0xFF
    store.put(path, bytes(data))
    h.close()
    h2 = HummockStorage(store, cache_size=0)
    with pytest.raises(StorageError, match="corrupted object"):
        list(h2.iter(b"", None, MAX_EPOCH))


def test_large_commit_splits_into_several_ssts():
    store = MemoryObjectStore()
    h = HummockStorage(store, block_size=1024, sst_target_size=20_000, background_compaction=False)
    kvs = [(b"k%05d" % i, b"x" * 100) for i in range(1000)]
    h.ingest_batch(kvs, 1)
    h.ingest_batch([(b"k%05d" % i, None) for i in range(0, 1000, 7)], 2)
    h.commit_epoch(2)
    assert len(store.list("sst/")) > 3
    h.close()
    h2 = HummockStorage(store, background_compaction=False)
    expect = [(k, v) for i, (k, v) in enumerate(kvs) if i % 7]
    assert list(h2.iter(b"", None, MAX_EPOCH)) == expect
    assert h2.multi_get([b"k00007", b"k00008"], 1) == [b"x" * 100] * 2
    assert h2.multi_get([b"k00007", b"k00008"], 2) == [None, b"x" * 100]


def test_background_upload_reads_and_sync():
    store = MemoryObjectStore()
    h = HummockStorage(store, compression="zstd")
    for e in range(1, 8):
        h.ingest_batch([(b"k%03d" % i, b"e%d" % e) for i in range(e * 10)], e)
        h.commit_epoch(e, b"x%d" % e, wait=False)  # returns before the upload
        assert h.get(b"k000") == b"e%d" % e  # served by the shared buffer meanwhile
    h.sync()
    assert h.committed_epoch == 7 and h.extra == b"x7"
    with pytest.raises(StorageError):
        h.ingest_batch([(b"a", b"1")], 7)
    h.close()
    h2 = HummockStorage(store)
    assert h2.get(b"k069") == b"e7" and len(list(h2.iter(b"", None))) == 70
    h2.close()


def test_pinning_an_epoch_compaction_collapsed_is_refused():
    h = HummockStorage(MemoryObjectStore(), background_compaction=False)
    for e in (1, 2, 3):
        h.ingest_batch([(b"k", b"%d" % e)], e)
        h.commit_epoch(e)
    with h.pin_snapshot(2) as s:  # before any compaction: fine
        assert s.get(b"k") == b"2"
    h.compact(full=True)
    with pytest.raises(StorageError, match="no longer readable"):
        h.pin_snapshot(1)
    assert h.pin_snapshot().get(b"k") == b"3"


def test_point_lookup_opens_only_the_ssts_holding_the_key():
    store = MemoryObjectStore()
    h = HummockStorage(store, block_size=256, sst_target_size=4000, background_compaction=False)
    for e in range(1, 4):
        h.ingest_batch([(b"k%05d" % i, b"e%d-%d" % (e, i)) for i in range(e, 3000, 3)], e)
        h.commit_epoch(e)
    h.compact(full=True)
    bottom = h.version.levels[-1]
    assert len(bottom) >= 5 and not any(h.version.levels[:-1])
    h.close()
    h = HummockStorage(store, background_compaction=False)
    assert h.get(b"k01234") == b"e1-1234" and h.get(b"k01235") == b"e2-1235"
    assert h.meta_cache.misses <= 2  # one SST each, not every SST of the level
    assert h.get(b"k99999") is None and h.get(b"a") is None and h.meta_cache.misses <= 2
    assert h.multi_get([b"k00001", b"k02999", b"k01500"]) == [b"e1-1", b"e2-2999", b"e3-1500"]
    h.close()
