"""SourceExecutor: the first node of a source's (or a connector table's) job.

It reads its connector's splits when the session ticks it (`poll`), and on every barrier
writes the offsets of the splits it advanced to its state table, so offsets commit in the
same version as every executor's state: after a crash the source resumes exactly at the
committed offsets — nothing lost, nothing read twice. Chunks of a table's DML pass through.
A source's stream is insert-only (an upsert connector table's also deletes by key); each
row gets a hidden `_row_id` made of the split's ordinal and the row's key within the split.
"""
from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from rw_cli.common import numeric
from rw_cli.common.types import DataType
from rw_cli.connector.base import OP_COLUMN, SourceReader, conform
from rw_cli.engine.chunk import StreamChunk, positional
from rw_cli.engine.executor import Executor
from rw_cli.common.epoch import EpochPair
from rw_cli.engine.expr import Expr, evaluate

ROW_ID_BASE = 1 << 62  # above the ids RowIdGenerator gives DML rows
ORDINAL_SHIFT = 40
OFFSETS_SCHEMA = pa.schema([pa.field("split", pa.string()), pa.field("ordinal", pa.int64()),
                            pa.field("offset", pa.int64())])
# the row of the offsets table that holds the source's counters (rows read in `offset`, bad
# records skipped in `ordinal`), committed with the offsets so SHOW JOBS in a new process and
# after a restart says what was read; no split has this name (it starts with a NUL)
COUNTERS_ROW = "\x00counters"
READ_PIECE = 1 << 16  # units read at a time from an assigned range (bounds a task's memory)


@dataclass(frozen=True)
class SplitRange:
    """The units [start, end) of a split that one epoch reads (assigned by the driver)."""
    split: str
    ordinal: int
    start: int
    end: int


class SourceExecutor(Executor):
    identity = "StreamSource"

    def __init__(self, types: list[DataType], stream_key: list[int], reader: SourceReader, state_table,
                 row_id_index: int | None, name: str = ""):
        super().__init__(types, stream_key)
        self.reader = reader
        self.offsets_table = state_table
        self.row_id_index = row_id_index
        self.name = name
        self.offsets: dict[str, int] | None = None  # loaded from the committed state on first use
        self.ordinals: dict[str, int] = {}
        self.dirty: set[str] = set()
        self.rows_read = 0
        self.bytes_read = 0  # Arrow bytes of the rows read (this process's, or its tasks')
        self.bad_records = 0
        self._counted = (0, 0)  # the counters as last written to the offsets table
        self.warnings: list[str] = []
        self._tokens = 0.0
        self._last = None
        self.throttled = False  # the last poll read less than asked because of the rate limit
        self.rate_limit: float | None = None  # SOURCE_RATE_LIMIT of its job, rows/s (0 pauses)
        self.generated: list[tuple[int, Expr]] = []  # (position, its expression over the read columns)

    # -- state ---------------------------------------------------------------------------
    def load_offsets(self) -> None:
        """The committed offset of every split, read once (SHOW JOBS reads them too)."""
        if self.offsets is not None:
            return
        self.offsets = {}
        rows = self.offsets_table.scan()
        for split, ordinal, offset in zip(rows.column(0).to_pylist(), rows.column(1).to_pylist(),
                                          rows.column(2).to_pylist()):
            if split == COUNTERS_ROW:
                self.rows_read, self.bad_records = self.rows_read + offset, self.bad_records + ordinal
                self._counted = (offset, ordinal)
                continue
            self.offsets[split] = offset
            self.ordinals[split] = ordinal

    def on_barrier(self, epoch: EpochPair) -> list[StreamChunk]:
        counters = (self.rows_read, self.bad_records)
        if self.dirty or (self.offsets is not None and counters != self._counted):
            splits = sorted(self.dirty)
            names = splits + [COUNTERS_ROW]
            batch = pa.RecordBatch.from_arrays([
                pa.array(names, pa.string()),
                pa.array([self.ordinals[s] for s in splits] + [self.bad_records], pa.int64()),
                pa.array([self.offsets[s] for s in splits] + [self.rows_read], pa.int64())], schema=OFFSETS_SCHEMA)
            self.offsets_table.insert(batch)
            self.dirty.clear()
            self._counted = counters
        self.offsets_table.commit(epoch.prev)
        return []

    # -- reading -------------------------------------------------------------------------
    def _budget(self, max_rows: int) -> int:
        rate = self.reader.rate
        if self.rate_limit is not None:
            rate = self.rate_limit if not rate else min(rate, self.rate_limit)
            if rate <= 0:
                return 0  # paused
        if not rate:
            return max_rows
        now = time.monotonic()
        if self._last is None:
            self._last = now
            self._tokens = min(rate, max_rows)  # the first second's rows at once
        else:
            self._tokens = min(self._tokens + (now - self._last) * rate, max(rate, 1.0))
            self._last = now
        n = int(min(self._tokens, max_rows))
        self._tokens -= n
        return n

    def _open_splits(self) -> Iterator[tuple[str, int]]:
        """(split, offset) of every split with more to read; a split seen for the first time
        starts where the reader says (`discovered`: it appeared after the first ones)."""
        started = bool(self.offsets)
        for split in self.reader.list_splits():
            if split not in self.offsets:
                self.offsets[split] = self.reader.start_offset(split, discovered=started)
                self.ordinals[split] = len(self.ordinals)
                self.dirty.add(split)
            offset = self.offsets[split]
            if not self.reader.exhausted(split, offset):
                yield split, offset

    def poll(self, max_rows: int, needed: set[int] | None = None) -> list[StreamChunk]:
        """Read up to `max_rows` from each split (fewer under a rate limit). `needed`: the
        column positions any consumer reads (None: all); the others may be left NULL."""
        self.load_offsets()
        budget = self._budget(max_rows)
        self.throttled = budget < max_rows
        out: list[StreamChunk] = []
        if budget <= 0:
            return out
        for split, offset in self._open_splits():
            if needed is None:
                table, keys, new_offset = self.reader.read(split, offset, budget)
            else:
                names = [n for i, (n, _) in enumerate(self.reader.columns) if self._position(i) in needed]
                table, keys, new_offset = self.reader.read(split, offset, budget, names)
            for msg in self.reader.take_errors():
                self.bad_records += 1
                self.warnings.append(f'source "{self.name}": skipped a bad record: {msg}')
            if new_offset != offset:
                self.offsets[split] = new_offset
                self.dirty.add(split)
            if table is None or table.num_rows == 0:
                continue
            out.append(self._chunk(table, keys, self.ordinals[split]))
            self.rows_read += table.num_rows
            self.bytes_read += out[-1].data.nbytes
        return out

    def plan(self, max_rows: int) -> list[SplitRange] | None:
        """Advance each split's offset by up to `max_rows` without reading, as `poll` would:
        the ranges to read (elsewhere) in this epoch. None when the reader cannot tell
        where a read would end without reading."""
        if type(self.reader).plan is SourceReader.plan:
            return None
        self.load_offsets()
        budget = self._budget(max_rows)
        self.throttled = budget < max_rows
        out: list[SplitRange] = []
        if budget <= 0:
            return out
        for split, offset in self._open_splits():
            end = self.reader.plan(split, offset, budget)
            if end > offset:
                self.offsets[split] = end
                self.dirty.add(split)
                out.append(SplitRange(split, self.ordinals[split], offset, end))
        return out

    def read_range(self, r: SplitRange, needed: set[int] | None = None):
        """The chunks of an assigned range, read in pieces of at most READ_PIECE units;
        counts what it read (`rows_read`, `bytes_read`)."""
        names = None if needed is None else \
            [n for i, (n, _) in enumerate(self.reader.columns) if self._position(i) in needed]
        offset = r.start
        while offset < r.end:
            table, keys, new_offset = self.reader.read_to(r.split, offset, r.end, READ_PIECE, names)
            if new_offset <= offset:
                break
            offset = new_offset
            if table is None or table.num_rows == 0:
                continue
            chunk = self._chunk(table, keys, r.ordinal)
            self.rows_read += len(chunk)
            self.bytes_read += chunk.data.nbytes
            yield chunk

    def _position(self, i: int) -> int:
        """The chunk position of the reader's i-th column (after the hidden row id, if before)."""
        return i + 1 if self.row_id_index is not None and self.row_id_index <= i else i

    def _chunk(self, table: pa.Table, keys: np.ndarray, ordinal: int) -> StreamChunk:
        if OP_COLUMN in table.column_names:  # an upsert source: inserts and deletes by key
            ops = table.column(OP_COLUMN).to_numpy().astype(np.int8)
        else:
            ops = np.zeros(table.num_rows, dtype=np.int8)
        data = conform(table, self.reader.columns)
        if self.generated:
            values = evaluate([e for _, e in self.generated], positional(data))
            for j, (i, _) in enumerate(self.generated):
                data = data.add_column(i, f"_g{i}", numeric.cast(values.column(j), self.types[i].arrow()))
        if self.row_id_index is not None:
            ids = ROW_ID_BASE | (ordinal << ORDINAL_SHIFT) | np.asarray(keys, dtype=np.int64)
            data = data.add_column(self.row_id_index, "_row_id", pa.array(ids, pa.int64()))
        return StreamChunk(positional(data), ops)

    def on_chunk(self, chunk: StreamChunk, side: int = 0) -> list[StreamChunk]:
        return [chunk] if len(chunk) else []

    def close(self) -> None:
        self.reader.close()

    # -- progress ------------------------------------------------------------------------
    @property
    def exhausted(self) -> bool:
        """Bounded and every split read to its end."""
        if not self.reader.bounded:
            return False
        self.load_offsets()
        return all(self.reader.exhausted(s, self.offsets.get(s, 0)) for s in self.reader.list_splits())

    @property
    def idle(self) -> bool:
        """Nothing left to read now: every split that exists is read to its end (files), or
        the bounded generator is exhausted; an unbounded generator is never waited for."""
        if self.reader.bounded:
            return self.exhausted
        if not getattr(self.reader, "discovers_splits", False):
            return True
        self.load_offsets()
        return all(self.reader.exhausted(s, self.offsets.get(s, 0)) for s in self.reader.list_splits())

    def backlog(self) -> int | None:
        """Units (events, rows, records) not read yet, where the source knows its size."""
        self.load_offsets()
        total = getattr(self.reader, "total_units", None)
        if total is not None:
            t = total()
            return None if t is None or t < 0 else max(0, t - sum(self.offsets.values()))
        if getattr(self.reader, "discovers_splits", False):
            lags = self._lags()
            return None if lags is None else sum(lags.values())
        return None

    def _lags(self) -> dict[str, int] | None:
        """Units not read yet per split; None while a split's size is not known (a Kafka
        partition's end before its first fetch)."""
        out = {}
        for s in self.reader.list_splits():
            size = self.reader.split_size(s)
            if size is None:
                return None
            out[s] = max(0, size - self.offsets.get(s, 0))
        return out

    def split_lags(self) -> dict[str, int] | None:
        """Per split, for readers whose splits are few and lag matters (Kafka's partitions)."""
        if not getattr(self.reader, "lag_per_split", False):
            return None
        self.load_offsets()
        return self._lags()

    def take_warnings(self) -> list[str]:
        w, self.warnings = self.warnings, []
        return w


def source_executors(runtime) -> list[tuple[int, SourceExecutor]]:
    out = []
    for rel_id in sorted(runtime.jobs):
        job = runtime.jobs[rel_id]
        if job.nodes and isinstance(job.nodes[0].executor, SourceExecutor):
            out.append((rel_id, job.nodes[0].executor))
    return out


def idle(runtime) -> bool:
    """Every running source (one that something reads) has nothing left to read now."""
    for rel_id, ex in source_executors(runtime):
        needed = needed_columns(runtime, rel_id, ex)
        if (needed is None or needed) and not ex.idle:
            return False
    return True


def _needed_by(node) -> set[int] | None:
    """Columns of the input that `node` and what follows it read (None: any of them)."""
    from rw_cli.engine.filter import FilterExecutor
    from rw_cli.engine.hash_agg import HashAggExecutor
    from rw_cli.engine.project import ProjectExecutor
    from rw_cli.engine.project_set import ProjectSetExecutor
    from rw_cli.engine.runtime import PassThrough

    ex = node.executor
    if isinstance(ex, ProjectExecutor):
        used = _downstream_needs(node)  # the outputs read further on: only their inputs matter
        exprs = ex.exprs if used is None else [e for i, e in enumerate(ex.exprs) if i in used]
        return {i for e in exprs for i in e.columns}
    if isinstance(ex, HashAggExecutor):
        return set(ex.group_keys) | {c.arg for c in ex.calls if c.arg is not None}
    if isinstance(ex, ProjectSetExecutor):  # the input's columns, then the element and its ordinal
        used = _downstream_needs(node)
        width = len(ex.types) - 2
        if used is None:
            return None
        return {c for c in used if c < width} | set(ex.lists.columns)
    if isinstance(ex, (FilterExecutor, PassThrough)) and node.downstream:
        more = _downstream_needs(node)
        if more is None:
            return None
        return (set(ex.condition.columns) if isinstance(ex, FilterExecutor) else set()) | more
    return None


def _downstream_needs(node) -> set[int] | None:
    """The output columns of `node` that its downstream reads (None: all, or not known)."""
    if not node.downstream:
        return None
    out: set[int] = set()
    for down, _side in node.downstream:
        more = _needed_by(down)
        if more is None:
            return None
        out |= more
    return out


def needed_columns(runtime, rel_id: int, ex: SourceExecutor) -> set[int] | None:
    """What the jobs reading a source use of it: None for all columns (a table keeps every
    column); an empty set when nothing reads the source, which then does not run at all —
    as in RisingWave, a source without consumers reads nothing and its offsets stay put."""
    job = runtime.jobs[rel_id]
    if len(job.nodes) > 1:
        return None  # a connector table materializes everything
    out: set[int] = set()
    subscribers = runtime.subscribers.get(rel_id, [])
    if not subscribers:
        return set()
    for entry in subscribers:
        more = _needed_by(entry)
        if more is None:
            return None
        out |= more
    return out | set(ex.stream_key)


def tick_sources(runtime, max_rows: int) -> tuple[int, bool]:
    """Poll every running source once and push what it read through its job: (rows read,
    whether any offset moved)."""
    n, advanced = 0, False
    remote = getattr(runtime, "reads_remotely", None)
    for rel_id, ex in source_executors(runtime):
        needed = needed_columns(runtime, rel_id, ex)
        if needed is not None and not needed:
            continue
        if needed is not None and (len(needed) >= len(ex.types) or ex.generated):
            needed = None
        ranges = ex.plan(runtime.epoch_budget(rel_id, max_rows)) if remote is not None and remote(rel_id) else None
        if ranges is not None:  # the runtime reads them where they are processed
            runtime.assign(rel_id, ranges, needed)
            n += sum(r.end - r.start for r in ranges)
            advanced = advanced or bool(ex.dirty)
            continue
        for chunk in ex.poll(max_rows, needed):
            n += len(chunk)
            runtime.push(rel_id, chunk)
        advanced = advanced or bool(ex.dirty)
    return n, advanced
