"""LogTable: a state table whose rows are only ever inserted, kept as an append log.

The materialized input of a join over an append-only stream is written every epoch and read
back only whole (on recovery), never by key: as an append log (store/append_log.py) an
epoch's rows go to the store as they are, with no keys to encode, no sort and no
compaction. The interface is the part of StateTable such an input uses: writes of inserts,
commit, and scans (in append order, not pk order).
"""
from __future__ import annotations

import numpy as np
import pyarrow as pa

from rw_cli.errors import StorageError
from rw_cli.store.hummock import MAX_EPOCH, HummockStorage
from rw_cli.store.state_table import OP_INSERT, OP_UPDATE_INSERT


class LogTable:
    def __init__(self, store: HummockStorage, table_id: int, schema: pa.Schema):
        self.store = store
        self.table_id = table_id
        self.schema = schema
        self._mem: list[pa.RecordBatch] = []  # the running epoch's rows
        self._truncated = False

    def _check(self, batch: pa.RecordBatch | pa.Table) -> pa.Table:
        t = batch if isinstance(batch, pa.Table) else pa.Table.from_batches([batch])
        if t.num_columns != len(self.schema):
            raise ValueError(f"batch has {t.num_columns} columns, table {self.table_id} has {len(self.schema)}")
        if not t.schema.equals(self.schema, check_metadata=False):
            t = pa.Table.from_arrays([c if c.type == f.type else c.cast(f.type) for c, f in zip(t.columns, self.schema)],
                                     schema=self.schema)
        return t

    # -- writes --------------------------------------------------------------------------
    def insert(self, batch: pa.RecordBatch | pa.Table) -> None:
        t = self._check(batch)
        if t.num_rows:
            self._mem.extend(t.to_batches())

    def write_chunk(self, batch: pa.RecordBatch | pa.Table, ops: np.ndarray, keys=None) -> None:
        ops = np.asarray(ops)
        if not ((ops == OP_INSERT) | (ops == OP_UPDATE_INSERT)).all():
            raise StorageError(f"state table {self.table_id} is append-only, but a change deletes rows from it")
        self.insert(batch)

    def truncate_all(self) -> None:
        self._mem = []
        self._truncated = True

    def commit(self, epoch: int) -> None:
        if self._truncated:
            self.store.drop_log(self.table_id, epoch)
            self._truncated = False
        if self._mem:
            self.store.append_rows(self.table_id, pa.Table.from_batches(self._mem, schema=self.schema), epoch)
            self._mem = []

    @property
    def has_pending_writes(self) -> bool:
        return bool(self._mem) or self._truncated

    # -- reads ---------------------------------------------------------------------------
    def scan(self, epoch: int | None = None) -> pa.Table:
        """Every row in append order: at `epoch` (committed and buffered rows at epochs up
        to it) or, by default, including this epoch's writes."""
        parts = [] if self._truncated and epoch is None else \
            self.store.read_log(self.table_id, MAX_EPOCH if epoch is None else epoch)
        parts = [self._check(p) for p in parts]
        if epoch is None and self._mem:
            parts.append(pa.Table.from_batches(self._mem, schema=self.schema))
        if not parts:
            return self.schema.empty_table()
        return pa.concat_tables(parts) if len(parts) > 1 else parts[0]

    def iter_batches(self, epoch: int | None = None):
        """The committed rows at `epoch` (default: latest, without this epoch's writes)."""
        for t in self.store.read_log(self.table_id, MAX_EPOCH if epoch is None else epoch):
            yield from self._check(t).to_batches()
