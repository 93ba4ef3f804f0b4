"""The shared buffer: writes not yet committed, as immutable sorted batches.

Each `ingest` puts one immutable batch (Arrow keys and values) into the buffer, kept in
(epoch, seq) order; reads look at the batches newest first, above every SST. A checkpoint
takes the batches of its epochs (`take_for_commit` marks them uploading); they leave the
buffer when the version that holds their SSTs is installed (`remove`). Append logs' rows and
drops, and SSTs others (Spark tasks) wrote for an epoch, wait here for their commit too.
"""
from __future__ import annotations

import threading
from typing import Iterator

import numpy as np
import pyarrow as pa

from rw_cli.store.append_log import LogBatch, LogDrop
from rw_cli.store.keys import KeyForm, argsort_sortable, sortable_keys
from rw_cli.store.merge import dedup_same_epoch, merge_runs
from rw_cli.store.run import EMPTY_BINARY, Run, key_lengths
from rw_cli.store.version import LogSegment, SstInfo


class SharedBufferBatch:
    """An immutable batch of the shared buffer (one per ingest), sorted by key (the last
    write of a key wins) at its first read — usually by the uploader thread building its
    SSTs, so the sort runs beside the stream instead of in it."""

    __slots__ = ("epoch", "seq", "_raw", "_run", "_lock", "form", "uploading")

    def __init__(self, epoch: int, seq: int, keys: pa.Array, values: pa.Array, sorted_unique: bool = False):
        """`sorted_unique`: the keys are sorted and distinct already (a state table sorted
        its memtable for its cache): no sort at all."""
        self.epoch = epoch
        self.seq = seq
        self._raw: tuple[pa.Array, pa.Array] | None = (keys, values)
        self._run: Run | None = None
        if sorted_unique:
            self._run = Run(keys, np.full(len(keys), epoch, dtype=np.uint64), values, unique=True)
            self._raw = None
        self._lock = threading.Lock()
        self.form = KeyForm.of_lengths(key_lengths(keys))
        self.uploading = False

    @property
    def run(self) -> Run:
        if self._run is None:
            with self._lock:
                if self._run is None:
                    keys, values = sort_unique(*self._raw)
                    self._run = Run(keys, np.full(len(keys), self.epoch, dtype=np.uint64), values, unique=True)
                    self._raw = None
        return self._run

    @property
    def sorted(self) -> bool:
        """Whether the batch is sorted (by a read, or as it was given)."""
        return self._run is not None

    def arrays(self) -> tuple[pa.Array, pa.Array]:
        """The keys and values (sorted if a read sorted them already)."""
        with self._lock:
            if self._raw is not None:
                return self._raw
            return self._run.keys, self._run.values

    def range_run(self, start: bytes, end: bytes | None) -> Run:
        sk = self.run.skeys(self.form)
        r = self.run
        lo = _search(r, sk, self.form, start)
        hi = len(r) if end is None else _search(r, sk, self.form, end)
        return r.slice(lo, max(lo, hi))

    def lookup(self, q: pa.Array, forms: dict) -> tuple[np.ndarray, pa.Array]:
        """The positions in `q` (sorted, unique keys) of the keys this batch holds, and their
        values; `forms` caches the sortable forms of `q` by key form."""
        got = forms.get(self.form.key())
        if got is None:
            got = forms[self.form.key()] = sortable_keys(q, self.form)
        qsk, ok = got
        bsk = self.run.skeys(self.form)
        pos = np.searchsorted(bsk, qsk, "left")
        inb = pos < len(bsk)
        match = inb.copy()
        match[inb] = bsk[pos[inb]] == qsk[inb]
        if ok is not None:
            match &= ok
        idx = np.flatnonzero(match)
        if not len(idx):
            return idx, EMPTY_BINARY
        return idx, self.run.values.take(pa.array(pos[idx], pa.int64()))


def _search(run: Run, sk: np.ndarray, form: KeyForm, key: bytes) -> int:
    """Number of entries of `run` whose key < `key`."""
    from rw_cli.store.keys import sortable_one
    one = sortable_one(key, form)
    if one is not None:
        return int(np.searchsorted(sk, np.array(one, sk.dtype), "left"))
    import pyarrow.compute as pc
    return int(pc.sum(pc.less(run.keys, pa.scalar(key, pa.binary()))).as_py() or 0)


def sort_unique(keys: pa.Array, values: pa.Array) -> tuple[pa.Array, pa.Array]:
    """Sort a batch by key; of equal keys the last one wins."""
    idx = sort_unique_index(keys)
    if idx is None:
        return keys, values
    take = pa.array(idx, pa.int64())
    return keys.take(take), values.take(take)


def sort_unique_index(keys: pa.Array) -> np.ndarray | None:
    """The positions that sort `keys`, of equal keys the last one only; None when the keys
    are sorted and unique already."""
    n = len(keys)
    if n <= 1:
        return None
    form = KeyForm.of_lengths(key_lengths(keys))
    sk, _ = sortable_keys(keys, form)
    if bool((sk[1:] > sk[:-1]).all()):  # in order already (a load by key): no sort
        return None
    order = argsort_sortable(sk)
    s = sk[order]
    last = np.ones(n, dtype=bool)
    last[:-1] = s[1:] != s[:-1]
    if last.all() and bool((order[1:] > order[:-1]).all()):
        return None
    return order[last]


def merged_runs(batches: list[SharedBufferBatch]) -> Iterator[Run]:
    """Buffered batches as one sorted stream of runs: the newest version of a key first,
    one entry per key and epoch."""
    bs = sorted(batches, key=lambda b: (b.epoch, b.seq), reverse=True)
    form = KeyForm.common([b.form for b in bs])
    return (dedup_same_epoch(r, form) for r in merge_runs([[b.run] for b in bs], form))


class SharedBuffer:
    """The uncommitted writes of a store. `lock` is the store's state lock (see
    version_manager.VersionManager)."""

    def __init__(self, lock: threading.RLock):
        self._lock = lock
        self.batches: list[SharedBufferBatch] = []  # sorted by (epoch, seq)
        self.logs: list[LogBatch] = []  # append logs' rows not yet committed, in append order
        self.log_drops: list[LogDrop] = []
        self._seq = 0
        # SSTs and log segments written elsewhere (Spark tasks), by epoch
        self._adopted: list[tuple[int, list[SstInfo | LogSegment]]] = []

    def add(self, keys: pa.Array, values: pa.Array, epoch: int, sorted_unique: bool = False) -> None:
        with self._lock:
            self._seq += 1
            b = SharedBufferBatch(epoch, self._seq, keys, values, sorted_unique)  # else sorted at its first read
            pos = len(self.batches)
            while pos > 0 and self.batches[pos - 1].epoch > epoch:
                pos -= 1
            self.batches.insert(pos, b)

    def append_rows(self, table_id: int, rows: pa.Table, epoch: int) -> None:
        with self._lock:
            self.logs.append(LogBatch(epoch, table_id, rows))

    def drop_log(self, table_id: int, epoch: int) -> None:
        with self._lock:
            self.logs = [b for b in self.logs if b.table_id != table_id or b.uploading or b.epoch > epoch]
            self.log_drops.append(LogDrop(epoch, table_id))

    def adopt(self, epoch: int, ssts: list[SstInfo | LogSegment]) -> None:
        with self._lock:
            self._adopted.append((epoch, list(ssts)))

    def view(self) -> list[SharedBufferBatch]:
        """The batches now (a reader's copy)."""
        with self._lock:
            return list(self.batches)

    def log_rows(self, table_id: int, epoch: int) -> tuple[bool, list[pa.Table]]:
        """Whether the table's log was dropped at an epoch <= `epoch`, and its buffered rows
        from the latest such drop to `epoch`."""
        with self._lock:
            dropped = [d.epoch for d in self.log_drops if d.table_id == table_id and d.epoch <= epoch]
            floor = max(dropped, default=-1)
            return bool(dropped), [b.rows for b in self.logs if b.table_id == table_id and floor <= b.epoch <= epoch]

    def take_for_commit(self, epoch: int) -> tuple[list[SharedBufferBatch], list[LogBatch], list[LogDrop],
                                                   list[SstInfo | LogSegment]]:
        """What the commit of `epoch` uploads: the batches, log rows and drops of epochs <=
        `epoch` not yet handed to a commit (now marked uploading), and the adopted SSTs."""
        with self._lock:
            batches = [b for b in self.batches if b.epoch <= epoch and not b.uploading]
            logs = [b for b in self.logs if b.epoch <= epoch and not b.uploading]
            drops = [d for d in self.log_drops if d.epoch <= epoch and not d.uploading]
            for b in [*batches, *logs, *drops]:
                b.uploading = True
            adopted = [s for e, ss in self._adopted if e <= epoch for s in ss]
            self._adopted = [(e, ss) for e, ss in self._adopted if e > epoch]
            return batches, logs, drops, adopted

    def remove(self, done: list) -> None:
        """Forget the batches, log rows and drops a committed version now holds."""
        ids = {id(b) for b in done}
        with self._lock:
            self.batches = [b for b in self.batches if id(b) not in ids]
            self.logs = [b for b in self.logs if id(b) not in ids]
            self.log_drops = [d for d in self.log_drops if id(d) not in ids]

    def discard_unsent(self) -> list[int]:
        """Forget every write not yet handed to a commit; the ids of the adopted SSTs."""
        with self._lock:
            ids = [s.id for _, ss in self._adopted for s in ss]
            self._adopted = []
            self.batches = [b for b in self.batches if b.uploading]
            self.logs = [b for b in self.logs if b.uploading]
            self.log_drops = [d for d in self.log_drops if d.uploading]
            return ids

    def take_upto(self, epoch: int) -> tuple[list[SharedBufferBatch], list[LogBatch], list[LogDrop]]:
        """Remove and return every batch, log row and drop of epochs <= `epoch` (a Spark task
        writes them itself)."""
        with self._lock:
            batches = [b for b in self.batches if b.epoch <= epoch]
            self.batches = [b for b in self.batches if b.epoch > epoch]
            logs = [b for b in self.logs if b.epoch <= epoch]
            self.logs = [b for b in self.logs if b.epoch > epoch]
            return batches, logs, list(self.log_drops)

    def clear(self) -> None:
        with self._lock:
            self.batches = []
            self.logs, self.log_drops = [], []
