"""One behaviour suite for HummockStorage, run over every object store (memory, local, S3)."""
import pytest

from rw_cli.errors import StorageError
from rw_cli.store.hummock import MAX_EPOCH, HummockStorage

KINDS = ["memory", "local", "s3"]


@pytest.fixture(params=KINDS)
def reopen(request, object_store_factory):
    """A function opening HummockStorage over the same objects each time."""
    make_store = object_store_factory(request.param)

    def open_(**kw):
        kw.setdefault("block_size", 256)
        return HummockStorage(make_store(), **kw)

    open_.objects = make_store
    return open_


def _kvs(lo, hi, tag=b"v"):
    return [(b"k%05d" % i, tag + b"%d" % i) for i in range(lo, hi)]


def test_write_commit_reopen_read(reopen):
    h = reopen()
    h.ingest_batch(_kvs(0, 300), 1)
    h.commit_epoch(1, b"catalog")
    h.ingest_batch([(b"k00005", None), (b"k00006", b"new")], 2)
    h.commit_epoch(2)
    h.ingest_batch([(b"k00007", b"uncommitted")], 3)
    assert h.get(b"k00007") == b"uncommitted"  # read-your-writes from the shared buffer
    h.close()
    h = reopen()
    assert h.committed_epoch == 2 and h.extra == b"catalog"
    assert h.get(b"k00005") is None and h.get(b"k00006") == b"new" and h.get(b"k00007") == b"v7"
    assert h.get(b"k00005", 1) == b"v5"
    assert h.multi_get([b"k00001", b"zz", b"k00006"], 1) == [b"v1", None, b"v6"]
    got = list(h.iter(b"k00003", b"k00008"))
    assert got == [(b"k00003", b"v3"), (b"k00004", b"v4"), (b"k00006", b"new"), (b"k00007", b"v7")]
    h.close()


def test_compaction_vacuum_and_snapshots(reopen):
    h = reopen(l0_trigger=2, background_compaction=False, sst_target_size=4000)
    for e in range(1, 6):
        h.ingest_batch(_kvs(e * 10, e * 10 + 200, b"e%d-" % e), e)
        h.commit_epoch(e)
    snap = h.pin_snapshot(3)
    expect3 = list(h.iter(b"", None, 3))
    h.ingest_batch([(k, None) for k, _ in _kvs(0, 100)], 6)
    h.commit_epoch(6)
    assert h.compact(full=True) >= 1
    h.vacuum()
    assert list(snap.iter()) == expect3
    assert list(h.iter(b"", None, 3)) == expect3  # the pinned epoch stays readable
    snap.close()
    h.compact(full=True)
    h.vacuum()
    live = {s.path for s in h.version.ssts()}
    assert set(h.object_store.list("sst/")) == live
    assert h.get(b"k00050") is None and h.get(b"k00150") == b"e5-150"
    h.close()
    h = reopen()
    assert h.get(b"k00150") == b"e5-150" and len(list(h.iter(b"", None))) == 150
    h.close()


def _rewrite_lease(objects, **changes):
    """Edit the newest lease record in place (what another host's or a dead holder's looks like)."""
    from rw_cli.store.lease import LeaseRecord, WriterLease, lease_path

    gen, rec = WriterLease(objects).current()
    for k, v in changes.items():
        setattr(rec, k, v)
    objects.put(lease_path(gen), rec.encode())


def test_second_writer_is_refused(reopen):
    a = reopen()
    a.ingest_batch(_kvs(0, 3), 1)
    a.commit_epoch(1)
    with pytest.raises(StorageError, match=r"in use by another writer: process \d+ on host .* since "):
        reopen()
    ro = reopen(read_only=True)  # readers take no lease
    assert ro.get(b"k00001") == b"v1"
    a.ingest_batch(_kvs(3, 6), 2)
    a.commit_epoch(2)  # the refused open fenced nothing
    a.close()  # releases the lease
    b = reopen()
    assert b.get(b"k00004") == b"v4"
    b.close()


def test_stale_leases_are_taken_over(reopen):
    import os
    import time

    a = reopen()
    a.ingest_batch(_kvs(0, 3), 1)
    a.commit_epoch(1)
    a._lease._stop.set()  # a writer that stopped renewing (hung, or killed)
    a._lease._thread.join()
    objects = reopen.objects()
    # this host, a process that is gone (a restart after kill -9): stale at once
    _rewrite_lease(objects, pid=2 ** 22 + 12345)
    b = reopen()
    b.ingest_batch(_kvs(3, 6), 2)
    b.commit_epoch(2)
    b._lease._stop.set()
    b._lease._thread.join()
    # another host with a fresh heartbeat: live; with one older than its TTL: stale
    _rewrite_lease(objects, host="elsewhere", pid=os.getpid(), heartbeat=time.time())
    with pytest.raises(StorageError, match="process .* on host elsewhere"):
        reopen()
    _rewrite_lease(objects, heartbeat=time.time() - 60, ttl=15)
    c = reopen()
    assert c.get(b"k00004") == b"v4"
    # the writers that lost their lease are fenced off by the version claim
    b.ingest_batch(_kvs(6, 9), 3)
    with pytest.raises(StorageError, match="another writer"):
        b.commit_epoch(3)
    b._lease.renew()  # notices the newer lease
    assert "lost the writer lease" in str(b._lease.lost)
    a.ingest_batch(_kvs(6, 9), 2)
    with pytest.raises(StorageError, match="another writer"):
        a.commit_epoch(2)  # even though vacuum deleted the version objects it would collide with
    a2 = reopen(read_only=True)
    assert a2.get(b"k00007") is None and a2.get(b"k00004") == b"v4"
    a._lease.renew()
    assert "lost the writer lease" in str(a._lease.lost)
    c.close()
    assert reopen(read_only=True).get(b"k00007") is None


def test_lost_lease_stops_writes(reopen):
    a = reopen(lease_heartbeat_secs=0.05)
    a.ingest_batch(_kvs(0, 3), 1)
    a.commit_epoch(1)
    from rw_cli.store.lease import WriterLease, lease_path

    # another writer took the lease over (as if this one had hung for longer than its TTL)
    gen, rec = WriterLease(reopen.objects()).current()
    rec.token, rec.host = "someone-else", "elsewhere"
    reopen.objects().put_if_absent(lease_path(gen + 1), rec.encode())
    import time
    deadline = time.monotonic() + 10
    while a.failed is None and time.monotonic() < deadline:
        time.sleep(0.02)
    with pytest.raises(StorageError, match="lost the writer lease.*host elsewhere"):
        a.ingest_batch(_kvs(3, 6), 2)
    a.close()


def test_torn_sst_is_reported(reopen):
    h = reopen()
    h.ingest_batch(_kvs(0, 200), 1)
    h.commit_epoch(1)
    h.close()
    objs = reopen.objects()
    (path,) = objs.list("sst/")
    data = objs.get(path)
    objs.put(path, data[: len(data) // 2] + bytes(len(data) - len(data) // 2))  # torn write
    h = reopen(cache_size=0)
    with pytest.raises(StorageError, match="corrupted object"):
        list(h.iter(b"", None))
    with pytest.raises(StorageError, match="corrupted object"):
        h.multi_get([b"k00001", b"k00150"])
    h.close()


def test_uncommitted_ssts_are_invisible_and_vacuumed(reopen):
    h = reopen()
    h.ingest_batch(_kvs(0, 10), 1)
    h.commit_epoch(1)
    h.close()
    objs = reopen.objects()
    objs.put("sst/12345.sst", b"an upload whose version was never written")
    h = reopen()  # opening vacuums it
    assert not objs.exists("sst/12345.sst")
    assert h.get(b"k00003") == b"v3" and h.committed_epoch == 1
    h.close()
