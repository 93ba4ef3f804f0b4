"""Compaction keeps the recent versions of the tables time travel reads
(rw_cli.store.retention), and collapses the others' to the low watermark."""
import numpy as np
import pyarrow as pa

from rw_cli.store.merge import compaction_filter
from rw_cli.store.retention import Retention, compaction_watermark
from rw_cli.store.run import Run


def _run(table_ids, epochs):
    keys = pa.array([t.to_bytes(4, "big") + b"\x00\x00k" for t in table_ids], pa.binary())
    values = pa.array([b"v"] * len(table_ids), pa.binary())
    return Run(keys, np.array(epochs, dtype=np.uint64), values)


def test_retained_tables_keep_versions_above_their_watermark():
    # one key of table 7 (retained) and one of table 9, three versions each, newest first
    run = _run([7, 7, 7, 9, 9, 9], [30, 20, 10, 30, 20, 10])
    kept = compaction_filter(run, Retention(watermark=25, tables=frozenset({7}), retained=15), False)
    assert list(kept.epochs) == [30, 20, 10, 30, 20]  # 7: above 15, and the newest at or below


def test_plain_watermark_is_unchanged():
    run = _run([9, 9, 9], [30, 20, 10])
    assert list(compaction_filter(run, 25, False).epochs) == [30, 20]


def test_no_retention_is_the_low_watermark():
    assert compaction_watermark(100, frozenset(), 10) == 100
    assert compaction_watermark(100, frozenset({1}), 200) == 100
    assert compaction_watermark(100, frozenset({1}), 10) == Retention(100, frozenset({1}), 10)
