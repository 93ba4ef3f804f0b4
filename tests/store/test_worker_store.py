"""A worker's store (a Spark task's): it reads the writer's version, writes SSTs under ids the
writer reserved, and never commits; the writer commits what it wrote."""
from __future__ import annotations

import pyarrow as pa
import pytest

from rw_cli.errors import StorageError
from rw_cli.store.hummock import HummockStorage
from rw_cli.store.object_store import LocalObjectStore
from rw_cli.store.worker_store import open_worker_store


def test_a_worker_writes_what_the_writer_commits(tmp_path):
    writer = HummockStorage(LocalObjectStore(str(tmp_path)), background_compaction=False)
    writer.ingest_batch([(b"a", b"1")], 1)
    writer.commit_epoch(1)
    worker = open_worker_store(str(tmp_path))
    assert worker.worker and worker.object_store.location() == writer.object_store.location()
    worker.follow_version(writer.version)
    assert worker.get(b"a") == b"1"
    worker.ingest_batch([(b"b", b"2")], 2)
    worker.append_rows(7, pa.table({"x": [1, 2]}), 2)
    assert worker.get(b"b") == b"2" and writer.get(b"b") is None  # its own writes only
    with pytest.raises(StorageError, match="never commits"):
        worker.commit_epoch(2)
    ids = [writer.alloc_sst_id() for _ in range(4)]
    written = worker.write_buffered(2, ids)
    assert len(written) == 2 and {s.id for s in written} <= set(ids)
    writer.adopt_ssts(2, written)
    writer.release_sst_ids(set(ids) - {s.id for s in written})
    writer.commit_epoch(2)
    assert writer.get(b"b") == b"2" and writer.read_log(7)[0].column("x").to_pylist() == [1, 2]
    assert writer.vacuum() >= 0 and writer.get(b"b") == b"2"  # committed: vacuum keeps them
    worker.follow_version(writer.version)  # the next epoch: a fresh view, no writes of its own
    assert worker.get(b"b") == b"2" and worker.write_buffered(3, []) == []
    worker.close()
    writer.close()


def test_a_worker_writes_no_more_ssts_than_it_has_ids_for(tmp_path):
    HummockStorage(LocalObjectStore(str(tmp_path))).close()
    worker = open_worker_store(str(tmp_path))
    worker.ingest_batch([(b"a", b"1")], 1)
    with pytest.raises(StorageError, match="more SSTs than the writer reserved"):
        worker.write_buffered(1, [])
    worker.close()
