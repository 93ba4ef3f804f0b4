"""Append logs (append_log.py, log_table.py): rows that are only ever inserted, kept as
columnar segments that commit with the checkpoints."""
from __future__ import annotations

import os

import numpy as np
import pyarrow as pa
import pytest

from rw_cli.errors import StorageError
from rw_cli.store import append_log
from rw_cli.store.hummock import HummockStorage
from rw_cli.store.log_table import LogTable
from rw_cli.store.object_store import LocalObjectStore
from rw_cli.store.state_table import OP_DELETE, OP_INSERT

SCHEMA = pa.schema([("k", pa.int64()), ("s", pa.string())])


def _rows(lo: int, hi: int) -> pa.Table:
    return pa.table({"k": pa.array(range(lo, hi), pa.int64()), "s": [f"r{i}" for i in range(lo, hi)]}, schema=SCHEMA)


def _store(path, **kw) -> HummockStorage:
    return HummockStorage(LocalObjectStore(str(path)), background_compaction=False, **kw)


def _keys(tables: list[pa.Table]) -> list[int]:
    return [k for t in tables for k in t.column("k").to_pylist()]


def test_rows_commit_with_the_checkpoint_and_survive_a_reopen(tmp_path):
    h = _store(tmp_path)
    for e in range(1, 4):
        h.append_rows(7, _rows(e * 10, e * 10 + 3), e)
        h.commit_epoch(e)
    h.append_rows(7, _rows(100, 102), 4)  # never committed: gone after a crash
    assert _keys(h.read_log(7)) == [10, 11, 12, 20, 21, 22, 30, 31, 32, 100, 101]
    assert _keys(h.read_log(7, epoch=2)) == [10, 11, 12, 20, 21, 22]
    assert h.read_log(8) == []
    segs = h.version.logs[7]
    assert [g.rows for g in segs] == [3, 3, 3] and all(os.path.exists(tmp_path / g.path) for g in segs)
    h._lease.release()  # a crash: nothing closed, nothing synced
    h2 = _store(tmp_path)
    assert _keys(h2.read_log(7)) == [10, 11, 12, 20, 21, 22, 30, 31, 32]
    assert h2.committed_epoch == 3
    h2.close()


def test_segments_merge_in_tiers_keeping_their_order_and_vacuum_deletes_the_old(tmp_path):
    h = _store(tmp_path)
    n = append_log.LOG_FANOUT * 2 + 3
    for e in range(1, n + 1):
        h.append_rows(7, _rows(e * 10, e * 10 + 2), e)
        h.commit_epoch(e)
    before = [g.path for g in h.version.logs[7]]
    assert len(before) == n
    merged = 0
    while h.merge_logs_once():
        merged += 1
    assert merged == 2  # two runs of LOG_FANOUT level-0 segments (the last 3 wait)
    levels = [g.level for g in h.version.logs[7]]
    assert levels == [1, 1, 0, 0, 0]
    want = [k for e in range(1, n + 1) for k in (e * 10, e * 10 + 1)]
    assert _keys(h.read_log(7)) == want
    h.vacuum()
    assert sum(os.path.exists(tmp_path / p) for p in before) == 3
    assert h.compact(full=True) >= 1
    assert len(h.version.logs[7]) == 1 and _keys(h.read_log(7)) == want
    h.close()
    h2 = _store(tmp_path)
    assert _keys(h2.read_log(7)) == want
    h2.close()


def test_background_merges_run_in_the_compactor_thread(tmp_path):
    h = HummockStorage(LocalObjectStore(str(tmp_path)))
    for e in range(1, append_log.LOG_FANOUT + 1):
        h.append_rows(3, _rows(e, e + 1), e)
        h.commit_epoch(e)
    h.wait_for_compaction(timeout=60)
    assert [g.level for g in h.version.logs[3]] == [1]
    assert _keys(h.read_log(3)) == list(range(1, append_log.LOG_FANOUT + 1))
    h.close()


def test_drop_empties_a_log_at_its_epoch(tmp_path):
    h = _store(tmp_path)
    h.append_rows(7, _rows(0, 3), 1)
    h.commit_epoch(1)
    h.append_rows(7, _rows(3, 5), 2)
    h.drop_log(7, 2)
    h.append_rows(7, _rows(50, 52), 2)  # written after the drop, in its epoch: kept
    assert _keys(h.read_log(7)) == [50, 51]
    h.commit_epoch(2)
    assert _keys(h.read_log(7)) == [50, 51]
    h.close()
    h2 = _store(tmp_path)
    assert _keys(h2.read_log(7)) == [50, 51]
    h2.close()


def test_a_failed_epoch_discards_its_appends(tmp_path):
    h = _store(tmp_path)
    h.append_rows(7, _rows(0, 2), 1)
    h.commit_epoch(1)
    h.append_rows(7, _rows(2, 4), 2)
    h.discard_uncommitted()
    assert _keys(h.read_log(7)) == [0, 1]
    h.close()


def test_a_corrupted_segment_is_a_storage_error(tmp_path):
    h = _store(tmp_path)
    h.append_rows(7, _rows(0, 2), 1)
    h.commit_epoch(1)
    path = tmp_path / h.version.logs[7][0].path
    path.write_bytes(path.read_bytes()[:20])
    with pytest.raises(StorageError, match="corrupted object log/"):
        h.read_log(7)
    h.close()


def test_log_table_reads_its_own_writes_and_refuses_deletes(tmp_path):
    h = _store(tmp_path)
    t = LogTable(h, 9, SCHEMA)
    t.write_chunk(_rows(0, 3).to_batches()[0], np.full(3, OP_INSERT))
    assert t.scan().column("k").to_pylist() == [0, 1, 2]
    assert t.scan(epoch=1).num_rows == 0  # committed rows only
    t.commit(1)
    h.commit_epoch(1)
    t.insert(_rows(3, 4))
    assert t.scan().column("k").to_pylist() == [0, 1, 2, 3]
    assert [b.num_rows for b in t.iter_batches()] == [3]
    with pytest.raises(StorageError, match="append-only"):
        t.write_chunk(_rows(0, 1).to_batches()[0], np.full(1, OP_DELETE))
    t.truncate_all()
    assert t.scan().num_rows == 0
    t.insert(_rows(8, 9))
    t.commit(2)
    h.commit_epoch(2)
    assert LogTable(h, 9, SCHEMA).scan().column("k").to_pylist() == [8]
    h.close()


def test_a_log_is_written_without_the_upload_process_or_sst_keys(tmp_path):
    """A checkpoint of only log rows writes log segments, no SST."""
    h = _store(tmp_path, uploader="process")
    h.append_rows(1, _rows(0, 1000), 1)
    h.commit_epoch(1)
    assert h.version.ssts() == [] and len(h.version.logs[1]) == 1
    assert h.stats["sst_uploads"] == 0 and h.stats["log_uploads"] == 1
    h.close()


def test_a_long_log_merges_a_group_at_a_time():
    """Under a stream of checkpoints a log grows to LOG_STALL segments; then its oldest group
    of one level merges, not the whole log."""
    from rw_cli.store.version import LogSegment

    segs = [LogSegment(i, 1, i, i, 1, 10, 0) for i in range(append_log.LOG_STALL)]
    assert [g.id for g in append_log.merge_candidate(segs)] == list(range(append_log.LOG_FANOUT))
    mixed = [LogSegment(i, 1, i, i, 1, 10, i % 2) for i in range(append_log.LOG_STALL)]
    assert len(append_log.merge_candidate(mixed)) == append_log.LOG_STALL  # no group: all
    assert append_log.merge_candidate(mixed[:10]) is None
    assert len(append_log.merge_candidate(mixed[:10], full=True)) == 10
