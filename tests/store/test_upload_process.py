"""A checkpoint's SSTs built by the upload process (upload_process.py)."""
from __future__ import annotations

import os
import shutil
import time

import pytest

from rw_cli.errors import StorageError
from rw_cli.store import upload_process
from rw_cli.store.hummock import HummockStorage
from rw_cli.store.sstable_store import SstableStore
from rw_cli.store.object_store import LocalObjectStore, MemoryObjectStore


def _ready_store(path: str, **options) -> HummockStorage:
    h = HummockStorage(LocalObjectStore(path), uploader="process", background_compaction=False, **options)
    deadline = time.monotonic() + 60
    while not upload_process.ready() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert upload_process.ready()
    return h


def _write_epochs(h: HummockStorage, want: dict, first: int, n: int) -> None:
    for e in range(first, first + n):
        kvs = [(b"k%04d" % ((e * 37 + i) % 500), b"v%d" % e) for i in range(200)]
        h.ingest_batch(kvs, e)
        want.update(kvs)
        h.commit_epoch(e)


def test_checkpoints_are_built_by_the_upload_process(tmp_path, monkeypatch):
    h = _ready_store(str(tmp_path), sst_target_size=3000)

    def not_here(*_a, **_k):
        raise AssertionError("SSTs built in the writer's process")
    monkeypatch.setattr(SstableStore, "write_runs", not_here)  # (the helper has its own copy)
    want: dict = {}
    _write_epochs(h, want, 1, 5)
    assert upload_process._uploader.proc.pid != os.getpid()
    assert h.stats["sst_uploads"] >= 5  # several SSTs an epoch at this target size
    assert dict(h.iter(b"", None)) == want
    assert all(h.meta_cache.get(s.id) is not None for s in h.version.ssts())  # metas came back
    h.close()
    monkeypatch.undo()
    h2 = HummockStorage(LocalObjectStore(str(tmp_path)), background_compaction=False)
    assert h2.committed_epoch == 5
    assert dict(h2.iter(b"", None)) == want
    h2.close()


def test_a_dead_upload_process_is_replaced(tmp_path):
    h = _ready_store(str(tmp_path))
    want: dict = {}
    _write_epochs(h, want, 1, 3)
    pid = upload_process._uploader.proc.pid
    upload_process._uploader.proc.kill()
    upload_process._uploader.proc.wait()
    _write_epochs(h, want, 4, 3)  # the next checkpoint starts another one and goes through
    assert upload_process._uploader.proc.pid != pid
    assert dict(h.iter(b"", None)) == want
    h.close()


def test_a_failed_upload_is_the_commits_error_and_commits_nothing(tmp_path):
    h = _ready_store(str(tmp_path))
    want: dict = {}
    _write_epochs(h, want, 1, 2)
    sst_dir = os.path.join(str(tmp_path), "sst")
    shutil.rmtree(sst_dir)
    with open(sst_dir, "w") as f:  # the helper cannot create an SST any more
        f.write("not a directory")
    h.ingest_batch([(b"k9999", b"lost")], 3)
    with pytest.raises(StorageError, match="upload failed"):
        h.commit_epoch(3)
    h.close()
    os.remove(sst_dir)
    h2 = HummockStorage(LocalObjectStore(str(tmp_path)), background_compaction=False, read_only=True)
    assert h2.committed_epoch == 2  # epoch 3's version was never written
    h2.close()


def test_a_store_no_process_can_open_uploads_in_its_thread():
    h = HummockStorage(MemoryObjectStore(), uploader="process", background_compaction=False)
    assert not h.uploader.remote
    want: dict = {}
    _write_epochs(h, want, 1, 2)
    assert dict(h.iter(b"", None)) == want
    h.close()


def test_a_checkpoint_whose_upload_process_dies_is_sent_again(tmp_path, monkeypatch):
    from rw_cli.store.worker_process import WorkerProcess

    h = _ready_store(str(tmp_path))
    call = WorkerProcess.call
    died = []

    def dies_once(self, args, stop):  # the helper is gone when the checkpoint arrives
        if not died:
            died.append(self.proc.pid)
            self.proc.kill()
            self.proc.wait()
        return call(self, args, stop)
    monkeypatch.setattr(WorkerProcess, "call", dies_once)
    monkeypatch.setattr(SstableStore, "write_runs", lambda *a, **k: pytest.fail("SSTs built in the writer"))
    want: dict = {}
    _write_epochs(h, want, 1, 2)
    assert died and upload_process._uploader.proc.pid != died[0]
    assert h.stats["sst_uploads"] == 2  # both checkpoints built by a helper
    assert dict(h.iter(b"", None)) == want
    h.close()
