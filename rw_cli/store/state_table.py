"""StateTable: a relational view of one table's rows in Hummock, with a memtable for the
running epoch (read-your-writes) that `commit(epoch)` hands to the shared buffer."""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rw_cli.common.vnode import compute_vnodes
from rw_cli.store.hummock import MAX_EPOCH, HummockStorage
from rw_cli.store.keys import encode_pk_array, make_keys_array, next_key, table_key_prefix, vnode_prefix
from rw_cli.store.row_codec import decode_rows_arrays, encode_rows_array

OP_INSERT = 0
OP_DELETE = 1
OP_UPDATE_DELETE = 2
OP_UPDATE_INSERT = 3
TABLE_HEAD = 6  # table id (4) + vnode (2)


def _chunks(arr) -> list:
    return list(arr.chunks) if isinstance(arr, pa.ChunkedArray) else [arr]


class StateTable:
    def __init__(self, store: HummockStorage, table_id: int, schema: pa.Schema, pk_indices: list[int],
                 pk_descending: list[bool] | None = None, dist_key_indices: list[int] | None = None):
        self.store = store
        self.table_id = table_id
        self.schema = schema
        self.pk_indices = list(pk_indices)
        self.pk_descending = list(pk_descending) if pk_descending is not None else [False] * len(self.pk_indices)
        if len(self.pk_descending) != len(self.pk_indices):
            raise ValueError("pk_descending must have one entry per pk column")
        self.dist_key_indices = list(self.pk_indices if dist_key_indices is None else dist_key_indices)
        missing = [i for i in self.dist_key_indices if i not in self.pk_indices]
        if missing:
            raise ValueError(f"distribution key columns {missing} are not part of the pk {self.pk_indices}")
        # positions of the dist key columns inside the pk
        self._dist_in_pk = [self.pk_indices.index(i) for i in self.dist_key_indices]
        self._prefix = table_key_prefix(table_id)
        self._end = next_key(self._prefix)
        self._mem: dict[bytes, bytes | None] = {}

    # -- keys ----------------------------------------------------------------------------
    def _keys_from_pk(self, pk_cols: list, n: int) -> pa.Array:
        vnodes = compute_vnodes([pk_cols[j] for j in self._dist_in_pk], num_rows=n)
        pk = encode_pk_array(pk_cols, self.pk_descending, num_rows=n)
        return make_keys_array(self.table_id, vnodes, pk)

    def _keys(self, batch: pa.RecordBatch) -> pa.Array:
        return self._keys_from_pk([batch.column(i) for i in self.pk_indices], batch.num_rows)

    def _check(self, batch: pa.RecordBatch | pa.Table) -> pa.RecordBatch:
        if isinstance(batch, pa.Table):
            batch = batch.combine_chunks().to_batches()[0] if batch.num_rows else \
                pa.RecordBatch.from_pylist([], schema=batch.schema)
        if batch.num_columns != len(self.schema):
            raise ValueError(f"batch has {batch.num_columns} columns, table {self.table_id} has {len(self.schema)}")
        if not batch.schema.equals(self.schema, check_metadata=False):
            cols = [c if c.type == f.type else c.cast(f.type) for c, f in zip(batch.columns, self.schema)]
            batch = pa.RecordBatch.from_arrays(cols, schema=self.schema)
        return batch

    # -- writes --------------------------------------------------------------------------
    def insert(self, batch: pa.RecordBatch) -> None:
        batch = self._check(batch)
        if batch.num_rows == 0:
            return
        keys = self._keys(batch).to_pylist()
        self._mem.update(zip(keys, encode_rows_array(batch).to_pylist()))

    def delete(self, batch: pa.RecordBatch) -> None:
        batch = self._check(batch)
        if batch.num_rows == 0:
            return
        self._mem.update(dict.fromkeys(self._keys(batch).to_pylist()))

    def write_chunk(self, batch: pa.RecordBatch, ops: np.ndarray) -> None:
        batch = self._check(batch)
        n = batch.num_rows
        if n == 0:
            return
        ops = np.asarray(ops)
        if len(ops) != n:
            raise ValueError("ops and batch lengths differ")
        is_insert = (ops == OP_INSERT) | (ops == OP_UPDATE_INSERT)
        keys = self._keys(batch).to_pylist()
        if is_insert.all():
            values = encode_rows_array(batch).to_pylist()
        else:
            enc = encode_rows_array(batch)
            values = pc.if_else(pa.array(is_insert), enc, pa.scalar(None, enc.type)).to_pylist()
        self._mem.update(zip(keys, values))

    def truncate_all(self) -> None:
        t = self.store.scan_table(self._prefix, self._end, MAX_EPOCH)
        self._mem.update(dict.fromkeys(t["key"].to_pylist()))
        for k in list(self._mem):
            self._mem[k] = None

    def commit(self, epoch: int) -> None:
        if self._mem:
            kvs = list(self._mem.items())
            self.store.ingest_batch(kvs, epoch)
        self._mem = {}

    @property
    def has_pending_writes(self) -> bool:
        return bool(self._mem)

    # -- reads ---------------------------------------------------------------------------
    def _decode(self, values) -> pa.RecordBatch:
        return decode_rows_arrays(values, self.schema)

    def get_rows(self, pk: pa.RecordBatch | list) -> tuple[pa.RecordBatch, np.ndarray]:
        """The rows with the given pks (one batched lookup), with a found mask; missing rows
        are all-null."""
        if isinstance(pk, (pa.RecordBatch, pa.Table)):
            cols = list(pk.columns)
            n = pk.num_rows
        else:
            cols = list(pk)
            n = len(cols[0]) if cols else 0
        if len(cols) != len(self.pk_indices):
            raise ValueError(f"expected {len(self.pk_indices)} pk columns, got {len(cols)}")
        cols = [c if c.type == self.schema.field(i).type else c.cast(self.schema.field(i).type)
                for c, i in zip(cols, self.pk_indices)]
        if n == 0:
            return self._decode([]), np.zeros(0, dtype=bool)
        keys = self._keys_from_pk(cols, n)
        if self._mem:
            klist = keys.to_pylist()
            mem = self._mem
            in_mem = np.fromiter((k in mem for k in klist), dtype=bool, count=n)
        else:
            in_mem = None
        if in_mem is None or not in_mem.any():
            values = self.store.multi_get_array(keys, MAX_EPOCH)
        else:
            todo = np.flatnonzero(~in_mem)
            got = self.store.multi_get_array(keys.take(pa.array(todo, pa.int64())), MAX_EPOCH).to_pylist() \
                if len(todo) else []
            merged: list[bytes | None] = [mem[k] if m else None for k, m in zip(klist, in_mem)]
            for i, v in zip(todo.tolist(), got):
                merged[i] = v
            values = pa.array(merged, pa.binary())
        valid = values.is_valid()
        found = valid.to_numpy(zero_copy_only=False)
        rows = self._decode(values.filter(valid)) if values.null_count else self._decode(values)
        if len(rows) == n:
            return rows, found
        idx = np.cumsum(found) - 1
        take = pa.array(idx, type=pa.int64(), mask=~found)
        return rows.take(take), found

    def scan_prefix(self, prefix: list, epoch: int | None = None) -> pa.Table:
        """Rows whose pk starts with the values `prefix` (for the first len(prefix) pk
        columns), in pk order. When the distribution key lies within the prefix only its
        vnode's key range is read; otherwise the table is scanned and filtered."""
        m = len(prefix)
        if m > len(self.pk_indices):
            raise ValueError(f"prefix of {m} values for a pk of {len(self.pk_indices)} columns")
        if m == 0:
            return self.scan(epoch)
        cols = [pa.array([v], self.schema.field(i).type) for v, i in zip(prefix, self.pk_indices[:m])]
        pk_prefix = encode_pk_array(cols, self.pk_descending[:m], num_rows=1)[0].as_py()
        read_epoch = MAX_EPOCH if epoch is None else epoch
        if all(j < m for j in self._dist_in_pk):
            vnode = int(compute_vnodes([cols[j] for j in self._dist_in_pk], num_rows=1)[0])
            start = vnode_prefix(self.table_id, vnode) + pk_prefix
            t = self.store.scan_table(start, next_key(start), read_epoch)
            keys, values = t["key"], t["value"]
        else:
            t = self.store.scan_table(self._prefix, self._end, read_epoch)
            keys, values = t["key"], t["value"]
            if t.num_rows:
                plen = len(pk_prefix)
                head = pc.binary_slice(keys, TABLE_HEAD, TABLE_HEAD + plen)
                keep = pc.equal(head, pa.scalar(pk_prefix, head.type))
                keys, values = keys.filter(keep), values.filter(keep)
        if epoch is None and self._mem:
            pairs = [(k, v) for k, v in self._mem.items() if k[TABLE_HEAD:TABLE_HEAD + len(pk_prefix)] == pk_prefix]
            keys, values = self._overlay(keys, values, pairs)
        if len(values) > 1 and not all(j < m for j in self._dist_in_pk):
            # rows of several vnodes: order them by pk
            longest = pc.max(pc.binary_length(keys)).as_py()
            order = pc.sort_indices(pc.binary_slice(keys, TABLE_HEAD, max(longest, TABLE_HEAD)))
            values = values.take(order)
        if len(values) == 0:
            return pa.Table.from_batches([self._decode([])])
        return pa.Table.from_batches([self._decode(values.combine_chunks() if isinstance(values, pa.ChunkedArray)
                                                   else values)])

    @staticmethod
    def _overlay(keys, values, pairs):
        """Merge memtable (key, value|None) pairs over sorted store rows, sorted by key."""
        if not pairs:
            return keys, values
        mem_keys = pa.array([k for k, _ in pairs], pa.binary())
        mem_vals = pa.array([v for _, v in pairs], pa.binary())
        if len(keys):
            keep = pc.invert(pc.is_in(keys, value_set=mem_keys))
            keys, values = keys.filter(keep), values.filter(keep)
        live = pc.is_valid(mem_vals)
        merged = pa.table({
            "key": pa.chunked_array(_chunks(keys) + [mem_keys.filter(live)], pa.binary()),
            "value": pa.chunked_array(_chunks(values) + [mem_vals.filter(live)], pa.binary()),
        }).sort_by([("key", "ascending")])
        return merged["key"], merged["value"]

    def scan(self, epoch: int | None = None) -> pa.Table:
        """Every row in pk order: at `epoch` (committed data only), or, by default, the
        latest state including this epoch's memtable."""
        read_epoch = MAX_EPOCH if epoch is None else epoch
        if epoch is not None or not self._mem:
            # stream: decode run by run, never holding the whole encoded table
            batches = [self._decode(r.values) for r in
                       self.store.iter_runs(self._prefix, self._end, read_epoch) if len(r)]
            return pa.Table.from_batches(batches or [self._decode([])])
        t = self.store.scan_table(self._prefix, self._end, read_epoch, include_tombstones=False)
        keys, values = self._overlay(t["key"], t["value"], list(self._mem.items()))
        if len(values) == 0:
            return pa.Table.from_batches([self._decode([])])
        return pa.Table.from_batches([self._decode(values.combine_chunks() if isinstance(values, pa.ChunkedArray)
                                                   else values)])

    def iter_batches(self, epoch: int | None = None):
        """Decoded record batches of the committed rows at `epoch` (default: latest, without
        this epoch's memtable), streaming."""
        read_epoch = MAX_EPOCH if epoch is None else epoch
        for r in self.store.iter_runs(self._prefix, self._end, read_epoch):
            if len(r):
                yield self._decode(r.values)
