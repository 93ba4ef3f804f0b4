"""Append logs: the state of a table whose rows are only ever inserted, kept as columnar
segments instead of sorted key-value entries.

The materialized input of a join over an append-only stream (every bid of Nexmark) is most of
what a streaming job writes, yet nothing ever looks its rows up by key in the store: the
join keeps them in memory, indexed by its own hash index, and reads them back whole on
recovery. As SSTs each row would be encoded as a key and a value, sorted, built into blocks
and then rewritten by compaction level after level. As an append log, an epoch's rows are
one Arrow IPC object per table per checkpoint — about a copy of the Arrow buffers — listed
in the version like SSTs, so they commit atomically with the epoch and a crash leaves only
unreferenced objects that vacuum deletes. Segments are merged in tiers (LOG_FANOUT of one
level into one of the next) so that a long-running log is a few objects, each row copied
O(log n) times; merging keeps the rows' order.
"""
from __future__ import annotations

import pyarrow as pa

from rw_cli.errors import StorageError
from rw_cli.store.version import LogSegment

LOG_FANOUT = 8  # segments of one level merged into one of the next
LOG_STALL = 64  # a log this long is merged even while checkpoints keep coming

_IPC_CODECS = {None: None, "none": None, "lz4": "lz4", "zstd": "zstd"}


class LogBatch:
    """Rows one table appended at one epoch, buffered until their checkpoint."""

    __slots__ = ("epoch", "table_id", "rows", "uploading")

    def __init__(self, epoch: int, table_id: int, rows: pa.Table):
        self.epoch = epoch
        self.table_id = table_id
        self.rows = rows
        self.uploading = False


class LogDrop:
    """Every row a log holds goes at the commit of `epoch` (DROP)."""

    __slots__ = ("epoch", "table_id", "uploading")

    def __init__(self, epoch: int, table_id: int):
        self.epoch = epoch
        self.table_id = table_id
        self.uploading = False


def encode(rows: pa.Table, compression: str | None) -> pa.Buffer:
    """An Arrow IPC file of `rows` (its buffers compressed by the store's codec)."""
    options = pa.ipc.IpcWriteOptions(compression=_IPC_CODECS.get(compression))
    sink = pa.BufferOutputStream()
    with pa.ipc.new_file(sink, rows.schema, options=options) as writer:
        writer.write_table(rows)
    return sink.getvalue()


def decode(data: bytes, path: str) -> pa.Table:
    try:
        return pa.ipc.open_file(pa.py_buffer(data)).read_all()
    except (pa.ArrowInvalid, pa.ArrowIOError, OSError) as e:
        raise StorageError(f"corrupted object {path}: {e}") from e


def by_table(batches: list[LogBatch]) -> dict[int, list[LogBatch]]:
    """Batches grouped by table, in the order they were appended."""
    out: dict[int, list[LogBatch]] = {}
    for b in sorted(batches, key=lambda b: b.epoch):  # stable: appends of an epoch keep their order
        out.setdefault(b.table_id, []).append(b)
    return out


def concat(tables: list[pa.Table]) -> pa.Table:
    if len(tables) == 1:
        return tables[0]
    return pa.concat_tables(tables, promote_options="none")


def merge_candidate(segments: list[LogSegment], full: bool = False) -> list[LogSegment] | None:
    """The segments of a log to merge next: the oldest LOG_FANOUT consecutive ones of one
    level; with `full`, or when there are none such in a log of LOG_STALL segments, all."""
    if len(segments) < 2:
        return None
    if full:
        return list(segments)
    start = 0
    for i in range(1, len(segments) + 1):
        if i == len(segments) or segments[i].level != segments[start].level:
            if i - start >= LOG_FANOUT:
                return segments[start:start + LOG_FANOUT]
            start = i
    return list(segments) if len(segments) >= LOG_STALL else None


def replace(segments: list[LogSegment], old: list[LogSegment], new: LogSegment) -> list[LogSegment] | None:
    """`segments` with the run `old` replaced by `new` (None: `old` is no longer a run of it,
    the log was dropped or merged meanwhile)."""
    ids = [g.id for g in segments]
    want = [g.id for g in old]
    for i in range(len(ids) - len(want) + 1):
        if ids[i:i + len(want)] == want:
            return segments[:i] + [new] + segments[i + len(want):]
    return None
