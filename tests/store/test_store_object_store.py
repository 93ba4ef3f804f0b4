import threading

import pytest

from rw_cli.errors import StorageError
from rw_cli.store.object_store import LocalObjectStore, MemoryObjectStore, ObjectStore
from rw_cli.store.object_store_url import open_object_store


@pytest.fixture
def store(object_store) -> ObjectStore:
    """Every test of this module runs against memory, local and S3 (SeaweedFS)."""
    return object_store


def test_put_get_exists_delete(store):
    assert not store.exists("a/b.bin")
    store.put("a/b.bin", b"hello")
    assert store.exists("a/b.bin")
    assert store.get("a/b.bin") == b"hello"
    store.put("a/b.bin", b"world!")  # overwrite
    assert store.get("a/b.bin") == b"world!"
    store.delete("a/b.bin")
    assert not store.exists("a/b.bin")
    store.delete("a/b.bin")  # missing is fine
    with pytest.raises(StorageError):
        store.get("a/b.bin")


def test_put_new_writes_a_new_object(store):
    store.put_new("sst/1.sst", b"x" * 100_000)
    assert store.get("sst/1.sst") == b"x" * 100_000
    assert store.list("sst/") == ["sst/1.sst"]


def test_put_new_writes_an_object_given_in_parts(store):
    """An SST comes in parts (its blocks, meta, footer): more of them than one writev takes,
    empty ones and views among them."""
    import random
    r = random.Random(5)
    parts = [r.randbytes(r.choice([0, 1, 7, 4096])) for _ in range(1500)]
    parts[3] = memoryview(b"a view")
    store.put_new("sst/2.sst", parts)
    assert store.get("sst/2.sst") == b"".join(parts)


def test_local_put_new_leaves_nothing_when_it_fails(tmp_path):
    s = LocalObjectStore(str(tmp_path))
    (tmp_path / "sst").write_text("a file where the directory should be")
    with pytest.raises(StorageError, match="cannot write object"):
        s.put_new("sst/1.sst", b"data")
    s.put_new("other/2.sst", b"data")
    import os
    assert os.listdir(tmp_path / "other") == ["2.sst"]  # in place: no temporary file


def test_get_range(store):
    store.put("x", bytes(range(100)))
    assert store.get_range("x", 10, 5) == bytes(range(10, 15))
    assert store.get_range("x", 0, 0) == b""
    assert store.get_range("x", 95, 5) == bytes(range(95, 100))
    with pytest.raises(StorageError):
        store.get_range("x", 98, 5)
    with pytest.raises(StorageError):
        store.get_range("missing", 0, 1)


def test_list_sorted_with_prefix(store):
    for p in ["sst/10.sst", "sst/2.sst", "version/1.json", "CURRENT", "sst2/x"]:
        store.put(p, b"1")
    assert store.list("sst/") == ["sst/10.sst", "sst/2.sst"]
    assert store.list("sst") == ["sst/10.sst", "sst/2.sst", "sst2/x"]
    assert store.list("") == sorted(["sst/10.sst", "sst/2.sst", "version/1.json", "CURRENT", "sst2/x"])
    assert store.list("nothing/") == []


def test_put_if_absent(store):
    assert store.put_if_absent("v/1", b"first") is True
    assert store.put_if_absent("v/1", b"second") is False
    assert store.get("v/1") == b"first"


def test_put_if_absent_race(store):
    wins = []

    def worker(i):
        wins.append(store.put_if_absent("race", str(i).encode()))

    ts = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert wins.count(True) == 1
    assert store.get("race") in {str(i).encode() for i in range(8)}


def test_invalid_paths(store):
    for p in ["", "/abs", "a/../b", "a//b"]:
        with pytest.raises(StorageError):
            store.put(p, b"x")


def test_local_leaves_no_temp_files(tmp_path):
    s = LocalObjectStore(str(tmp_path))
    s.put("d/a", b"1")
    s.put_if_absent("d/a", b"2")
    s.put_if_absent("d/b", b"2")
    import os
    assert sorted(os.listdir(tmp_path / "d")) == ["a", "b"]
    assert s.list("d/") == ["d/a", "d/b"]


def test_local_persists_across_instances(tmp_path):
    LocalObjectStore(str(tmp_path)).put("k", b"v")
    assert LocalObjectStore(str(tmp_path)).get("k") == b"v"


def test_open_object_store(tmp_path):
    assert isinstance(open_object_store(str(tmp_path)), LocalObjectStore)
    assert isinstance(open_object_store("file://" + str(tmp_path)), LocalObjectStore)
    assert isinstance(open_object_store("memory://"), MemoryObjectStore)
    with pytest.raises(StorageError):
        open_object_store("gs://bucket/prefix")


def test_s3_url_and_prefix(seaweedfs):
    from rw_cli.store.s3 import S3ObjectStore

    a = open_object_store("s3://rw-test/pfx-a/deeper", endpoint=seaweedfs)
    b = open_object_store("s3://rw-test/pfx-b", endpoint=seaweedfs)
    assert isinstance(a, S3ObjectStore) and a.prefix == "pfx-a/deeper/"
    a.put("k", b"a")
    assert not b.exists("k") and a.list("") == ["k"]
    a.delete("k")


def test_s3_missing_bucket_is_a_clear_error(seaweedfs):
    with pytest.raises(StorageError, match="bucket 'no-such-bucket' does not exist"):
        open_object_store("s3://no-such-bucket/x", endpoint=seaweedfs)


def test_s3_unreachable_endpoint_fails_fast(monkeypatch):
    import socket
    import time

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "x")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "y")
    t0 = time.monotonic()
    with pytest.raises(StorageError, match="cannot reach the object store") as ei:
        open_object_store("s3://bucket/p", endpoint=f"http://127.0.0.1:{port}")
    assert time.monotonic() - t0 < 10
    assert getattr(ei.value, "retryable", False)


def test_s3_transient_errors_are_retried(seaweedfs):
    import botocore.exceptions as bexc

    from rw_cli.store.s3 import S3ObjectStore

    st = S3ObjectStore("rw-test", "retry/", endpoint=seaweedfs, backoff=0.001)
    real = st.client.put_object
    calls = []

    def flaky(**kw):
        calls.append(1)
        if len(calls) < 3:
            raise bexc.EndpointConnectionError(endpoint_url=seaweedfs)
        return real(**kw)

    st.client.put_object = flaky
    st.put("x", b"1")
    assert len(calls) == 3 and st.get("x") == b"1"
    calls.clear()
    st.client.put_object = lambda **kw: (_ for _ in ()).throw(bexc.EndpointConnectionError(endpoint_url=seaweedfs))
    with pytest.raises(StorageError, match="cannot reach"):
        st.put("y", b"1")
