"""StateTable: a relational view of one table's rows in Hummock, with a memtable for the
running epoch (read-your-writes) that `commit(epoch)` hands to the shared buffer.

The memtable is Arrow: the epoch's writes are kept as (keys, values) array pairs (a null
value is a delete) and only consolidated — sorted by key, the last write of a key winning —
when something reads them or the epoch commits; no per-row Python on the write path."""
from __future__ import annotations

from typing import Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rw_cli.common.byte_rows import UINT_WIDTHS, field_view, matrix_to_binary, uint_values
from rw_cli.common.hash_index import HashIndex
from rw_cli.common.op import DELETE as OP_DELETE  # noqa: F401 - write_chunk's ops, by the store's names
from rw_cli.common.op import INSERT as OP_INSERT
from rw_cli.common.op import UPDATE_DELETE as OP_UPDATE_DELETE  # noqa: F401
from rw_cli.common.op import UPDATE_INSERT as OP_UPDATE_INSERT
from rw_cli.common.vnode import (VNODE_COUNT, bool_values, compute_vnodes, fixed_values_u8, fixed_width, hash_array,
                                 normalize_array, null_mask, unique_hashes)
from rw_cli.store.hummock import MAX_EPOCH, HummockStorage
from rw_cli.store.keys import (NOT_NULL, encode_pk_array, make_fixed_keys_array, make_keys_array, next_key,
                               table_key_prefix, vnode_prefix)
from rw_cli.store.row_codec import (NUMERIC_WIDTHS, decode_rows_arrays, encode_rows_array, numeric_value_bytes,
                                    value_kind)
from rw_cli.store.keys import KeyForm
from rw_cli.store.run import Run, as_binary, key_lengths
from rw_cli.store.version_reader import restrict_to_ranges
from rw_cli.store.shared_buffer import sort_unique_index
from rw_cli.store.state_cache import StateCache

TABLE_HEAD = 6  # table id (4) + vnode (2)


def encode_values(batch: pa.RecordBatch) -> pa.Array:
    """`row_codec.encode_rows_array`'s bytes, built faster: the fixed-width fields between
    two strings (a string's own header too: NULL flag + u32 length) are written into one
    byte matrix, a field at a time, and Arrow concatenates the pieces of each row."""
    n = batch.num_rows
    pieces: list[pa.Array] = []
    group: list[tuple[int, Callable[[np.ndarray, int], None]]] = []  # (width, writer(mat, at))

    def flush() -> None:
        if group:
            mat = np.empty((n, sum(w for w, _ in group)), dtype=np.uint8)
            at = 0
            for w, write in group:
                write(mat, at)
                at += w
            pieces.append(matrix_to_binary(mat))
            group.clear()

    for col in batch.columns:
        arr = normalize_array(col)
        k = value_kind(arr.type)
        if k == "varlen":
            body = _varlen_body(arr)
            group.append((5, _varlen_head_writer(null_mask(arr), body)))
            flush()
            pieces.append(body)
        elif k == "null":
            group.append((1, _null_writer))
        elif k in ("bool", "fixed"):
            w = 1 if k == "bool" else fixed_width(arr.type)
            group.append((1 + w, _fixed_writer(arr, k == "bool", w)))
        elif k == "numeric":
            group.append((1 + sum(NUMERIC_WIDTHS), _numeric_writer(arr)))
        else:  # the slow path's bytes, from the codec itself
            flush()
            pieces.append(encode_rows_array(pa.record_batch([arr], names=["v"])))
    flush()
    if not pieces:
        return pa.array([b""] * n, type=pa.large_binary())
    if len(pieces) == 1:
        return pieces[0]
    return pc.binary_join_element_wise(*pieces, pa.scalar(b"", pa.large_binary()))


def _null_writer(mat: np.ndarray, at: int) -> None:
    mat[:, at] = 1


def _fixed_writer(arr: pa.Array, is_bool: bool, w: int) -> Callable[[np.ndarray, int], None]:
    """NULL flag, then the little-endian value (zeros for NULL)."""
    def write(mat: np.ndarray, at: int) -> None:
        nulls = null_mask(arr)
        mat[:, at] = nulls
        if is_bool:
            mat[:, at + 1] = bool_values(arr)
        elif w in UINT_WIDTHS:
            vals = uint_values(arr, w)
            if arr.null_count:
                vals = np.where(nulls, 0, vals).astype(vals.dtype)
            field_view(mat, at + 1, f"<u{w}")[:] = vals
        else:
            mat[:, at + 1:at + 1 + w] = fixed_values_u8(arr, w)
    return write


def _numeric_writer(arr: pa.Array) -> Callable[[np.ndarray, int], None]:
    """A numeric's NULL flag, then its fields' bytes (rw_cli.store.row_codec)."""
    def write(mat: np.ndarray, at: int) -> None:
        mat[:, at] = null_mask(arr)
        mat[:, at + 1:at + 1 + sum(NUMERIC_WIDTHS)] = numeric_value_bytes(arr)
    return write


def _varlen_head_writer(nulls: np.ndarray, body: pa.Array) -> Callable[[np.ndarray, int], None]:
    """A string's NULL flag and u32 length."""
    def write(mat: np.ndarray, at: int) -> None:
        mat[:, at] = nulls
        field_view(mat, at + 1, "<u4")[:] = pc.binary_length(body).to_numpy(zero_copy_only=False)
    return write


def _varlen_body(arr: pa.Array) -> pa.Array:
    """A string's bytes (none for NULL), as large_binary."""
    if arr.type != pa.large_binary():
        arr = arr.cast(pa.large_binary())
    if arr.null_count:
        arr = pc.fill_null(arr, pa.scalar(b"", arr.type))
    return arr


def _chunks(arr) -> list:
    return list(arr.chunks) if isinstance(arr, pa.ChunkedArray) else [arr]


MEM_PIECES = 4  # past this many writes since the memtable was last sorted, a lookup sorts it


# the most a cache reads to begin complete (`StateTable.fill_cache`): a larger table's reading
# would cost an epoch more than the lookups of the groups it meets
FILL_MAX_BYTES = 64 << 20


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
        # the running epoch's writes: (keys, values) pairs in write order; null values delete
        self._mem_k: list[pa.Array] = []
        self._mem_v: list[pa.Array] = []
        # the keys' hashes (`hash_array`) per entry of _mem_k, where known: the cache's
        # segment at commit is sorted by them (None: to be computed)
        self._mem_h: list[np.ndarray | None] = []
        self._mem_sorted = True  # _mem_k is empty or one sorted, unique array
        # per entry of _mem_k, an index of its hashes (made when a lookup first needs it)
        self._mem_hs: list[HashIndex | None] = []
        # the last key array hashed for a lookup, and its hashes: an executor looks a
        # batch of keys up, then writes the same array (`pk_keys`), hashed once
        self._hashed: tuple[pa.Array, np.ndarray] | None = None
        self._cache: StateCache | None = None  # see enable_cache
        self._complete: bool | None = None

    # -- point-lookup cache --------------------------------------------------------------
    def enable_cache(self, max_bytes: int | None = None) -> None:
        """Keep the latest value (or absence) of the keys this handle reads and writes in
        memory, up to `max_bytes` (None: as the process's budget for every state cache
        allows, `state_cache.BUDGET`), for `get_rows` — an executor's cache of its own state (its
        vnodes are written by this handle only). For a table that was empty when the cache
        began, a key the cache has never seen (its Bloom filter says so) is absent, evictions
        or not; other misses are read from the store."""
        if self._cache is None:
            self._cache = StateCache(max_bytes)

    @property
    def _cache_bytes(self) -> int:
        return 0 if self._cache is None else self._cache.nbytes

    def _check_complete(self) -> None:
        """Whether the table was empty when the cache began: then every key in the store
        went through the cache (this handle is its vnodes' only writer). From the store's
        metadata, nothing read: a rebuilt actor asks this of a table that holds its whole
        state. A table of tombstones only counts as not empty: lookups, never wrong results."""
        if self._complete is None:
            self._complete = not self.store.holds_table(self.table_id)

    def fill_cache(self, vnodes: tuple[int, int] | None = None) -> bool:
        """Make a cache that has just begun complete: when the table is empty, as it is; when
        what it holds is small (an eighth of the cache's room, FILL_MAX_BYTES at most), by
        reading the handle's
        range whole into it. A handle opened on a table that holds rows otherwise reads every
        key its cache has not seen from the SSTs — a Spark actor built again in another
        worker looked every new group up there in each of its epochs. `vnodes`: the
        handle's [first, last) vnodes, the only keys it reads (None: all). Whether it did."""
        if self._cache is None or self._complete is not None or self._mem_k:
            return bool(self._complete)
        if not self.store.holds_table(self.table_id):
            self._complete = True
            return True
        room = min(b for b in (self._cache.max_bytes, self._cache.budget.max_bytes) if b is not None)
        if self.store.estimate_size(self.table_id) > min(room // 8, FILL_MAX_BYTES):
            return False
        start, end = (self._prefix, self._end) if vnodes is None else (
            vnode_prefix(self.table_id, vnodes[0]), vnode_prefix(self.table_id, vnodes[1]))
        rows = Run.concat(list(self.store.iter_runs(start, end, MAX_EPOCH)))
        if len(rows):
            self._cache.put(as_binary(rows.keys), as_binary(rows.values))
        self._complete = not self._cache.evicted
        return self._complete

    def refresh_cache(self, since: int, vnodes: tuple[int, int] | None = None) -> bool:
        """Bring the cache up to date with what another handle of the same vnodes wrote
        after epoch `since` — an actor's copy in a Spark worker whose last epochs ran in
        another worker — from the SSTs written since, not the table: its keys stay known
        (and a cache of a table that was empty when it began stays complete). `vnodes`:
        the handle's [first, last) vnodes (None: all). False when the store cannot tell
        what changed (`HummockStorage.writes_since`): the cache is then out of date."""
        if self._cache is None:
            return True
        if self._mem_k:
            return False  # (between epochs only)
        start, end = (self._prefix, self._end) if vnodes is None else (
            vnode_prefix(self.table_id, vnodes[0]), vnode_prefix(self.table_id, vnodes[1]))
        changed = self.store.writes_since(start, end, since)
        if changed is None:
            return False
        if len(changed):
            self._cache.put(as_binary(changed.keys), as_binary(changed.values))
        return True

    def _fetch(self, keys: pa.Array, qh: np.ndarray | None = None) -> pa.Array:
        """The committed values of `keys` (null: absent), through the cache when enabled.
        `qh`: the keys' hashes, when the caller has them."""
        if self._cache is None:
            return self.store.multi_get_array(keys, MAX_EPOCH)
        self._check_complete()
        n = len(keys)
        qh = hash_array(keys) if qh is None else qh
        self._hashed = (keys, qh)
        if self._complete:  # a key the cache never saw is absent: only the others are looked up
            seen = np.flatnonzero(self._cache.filter.may_contain(qh))
            if len(seen) < n:
                got = self._fetch_known(keys.take(pa.array(seen, pa.int64())), qh[seen])
                where = np.full(n, -1, dtype=np.int64)
                where[seen] = np.arange(len(seen))
                return got.take(pa.array(where, pa.int64(), mask=where < 0))
        return self._fetch_known(keys, qh)

    def _fetch_known(self, keys: pa.Array, qh: np.ndarray) -> pa.Array:
        """`_fetch` of keys the cache may know: from the cache, else from the store."""
        vals, known = self._cache.get(keys, qh)
        if known.all() or (self._complete and not self._cache.evicted):
            return vals
        miss = np.flatnonzero(~known)
        sub = keys.take(pa.array(miss, pa.int64()))
        got = as_binary(self.store.multi_get_array(sub, MAX_EPOCH))
        if len(unique_hashes(qh[miss])) == len(sub):  # (a key asked twice is cached once)
            self._cache.put(sub, got, qh[miss])
        where = np.full(len(keys), -1, dtype=np.int64)
        where[miss] = np.arange(len(miss))
        from_store = got.take(pa.array(where, pa.int64(), mask=where < 0))
        return pc.if_else(pc.is_valid(from_store), from_store, vals)

    # -- memtable ------------------------------------------------------------------------
    def _mem_put(self, keys: pa.Array, values: pa.Array) -> None:
        if len(keys):
            hashed = self._hashed
            self._mem_h.append(hashed[1] if hashed is not None and hashed[0] is keys else None)
            self._mem_k.append(as_binary(keys))
            self._mem_v.append(as_binary(values))
            self._mem_hs.append(None)
            self._mem_sorted = False

    def _mem_clear(self) -> None:
        self._mem_k, self._mem_v, self._mem_h, self._mem_sorted = [], [], [], True
        self._mem_hs = []
        self._hashed = None

    def _mem_may_hold(self, qh: np.ndarray) -> np.ndarray:
        """Per hashed key: may the memtable hold it (is its hash a memtable key's)? A load of
        new keys in pieces then neither sorts the memtable nor looks each key up in it."""
        out = np.zeros(len(qh), dtype=bool)
        for i, k in enumerate(self._mem_k):
            if self._mem_hs[i] is None:
                if self._mem_h[i] is None:
                    self._mem_h[i] = hash_array(k)
                self._mem_hs[i] = HashIndex(np.sort(self._mem_h[i]))
            out[self._mem_hs[i].lookup(qh)[0]] = True
        return out

    def _mem_arrays(self) -> tuple[pa.Array, pa.Array]:
        """The memtable as sorted unique keys and their values (null: deleted)."""
        if not self._mem_k:
            return pa.array([], pa.binary()), pa.array([], pa.binary())
        if not self._mem_sorted:
            k = pa.concat_arrays(self._mem_k) if len(self._mem_k) > 1 else self._mem_k[0]
            v = pa.concat_arrays(self._mem_v) if len(self._mem_v) > 1 else self._mem_v[0]
            h = None
            if all(x is not None for x in self._mem_h):
                h = np.concatenate(self._mem_h) if len(self._mem_h) > 1 else self._mem_h[0]
            idx = sort_unique_index(k)
            if idx is not None:
                take = pa.array(idx, pa.int64())
                k, v = k.take(take), v.take(take)
                h = None if h is None else h[idx]
            self._mem_k, self._mem_v, self._mem_h, self._mem_sorted = [k], [v], [h], True
            self._mem_hs = [None]
        return self._mem_k[0], self._mem_v[0]

    def _mem_pairs(self, pk_prefix: bytes | None = None) -> tuple[pa.Array, pa.Array]:
        """The memtable's (keys, values), only those whose pk starts with `pk_prefix`."""
        keys, values = self._mem_arrays()
        if pk_prefix is not None and len(keys):
            head = pc.binary_slice(keys, TABLE_HEAD, TABLE_HEAD + len(pk_prefix))
            keep = pc.equal(head, pa.scalar(pk_prefix, head.type))
            keys, values = keys.filter(keep), values.filter(keep)
        return keys, values

    # -- keys ----------------------------------------------------------------------------
    def keys_of_pk(self, pk_cols: list, n: int) -> pa.Array:
        """The store keys of `n` rows' pk columns (of the pk's own types)."""
        vnodes = compute_vnodes([pk_cols[j] for j in self._dist_in_pk], num_rows=n)
        keys = make_fixed_keys_array(self.table_id, vnodes, pk_cols, self.pk_descending)
        if keys is not None:
            return keys
        pk = encode_pk_array(pk_cols, self.pk_descending, num_rows=n)
        return make_keys_array(self.table_id, vnodes, pk)

    def _keys(self, batch: pa.RecordBatch) -> pa.Array:
        return self.keys_of_pk([batch.column(i) for i in self.pk_indices], batch.num_rows)

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
        self._mem_put(self._keys(batch), encode_values(batch))

    def delete(self, batch: pa.RecordBatch) -> None:
        batch = self._check(batch)
        if batch.num_rows == 0:
            return
        self._mem_put(self._keys(batch), pa.nulls(batch.num_rows, pa.binary()))

    def write_chunk(self, batch: pa.RecordBatch, ops: np.ndarray, keys: pa.Array | None = None) -> None:
        """Write rows (inserts and updates' new rows) or delete them, by `ops`. `keys`: the
        rows' `pk_keys`, when known."""
        batch = self._check(batch)
        n = batch.num_rows
        if n == 0:
            return
        ops = np.asarray(ops)
        if len(ops) != n:
            raise ValueError("ops and batch lengths differ")
        is_insert = (ops == OP_INSERT) | (ops == OP_UPDATE_INSERT)
        keys = self._keys(batch) if keys is None else keys
        if is_insert.all():
            values = encode_values(batch)
        elif not is_insert.any():
            values = pa.nulls(n, pa.binary())
        else:
            enc = as_binary(encode_values(batch))
            values = pc.if_else(pa.array(is_insert), enc, pa.scalar(None, enc.type))
        self._mem_put(keys, values)

    def truncate_all(self) -> None:
        t = self.store.scan_table(self._prefix, self._end, MAX_EPOCH)
        if self._cache is not None:
            self._cache, self._complete = StateCache(self._cache.max_bytes), None
        mem_keys, _ = self._mem_arrays()
        keys = pa.concat_arrays([as_binary(t["key"]), mem_keys])
        self._mem_clear()
        self._mem_put(keys, pa.nulls(len(keys), pa.binary()))

    def commit(self, epoch: int) -> None:
        if self._cache is not None:
            # (before this epoch's writes reach the store; an epoch that wrote nothing
            # decides it too: a Spark actor that began in an empty epoch and then caught up
            # with another worker's writes would find the table holding rows at its first
            # lookup, its cache complete all along)
            self._check_complete()
        if self._mem_k and self._cache is not None:
            keys, values = self._mem_arrays()
            self._cache.put(keys, values, self._mem_h[0])
        if self._mem_k:
            keys = pa.concat_arrays(self._mem_k) if len(self._mem_k) > 1 else self._mem_k[0]
            values = pa.concat_arrays(self._mem_v) if len(self._mem_v) > 1 else self._mem_v[0]
            # sorts, the last write of a key winning, unless the memtable is sorted already
            self.store.ingest_arrays(keys, values, epoch, sorted_unique=self._mem_sorted)
        self._mem_clear()

    @property
    def has_pending_writes(self) -> bool:
        return bool(self._mem_k)

    # -- reads ---------------------------------------------------------------------------
    def estimated_rows(self) -> int:
        """About how many rows the table holds (the store's metadata, nothing read): for
        choosing between reading key ranges one by one and one scan."""
        estimate = getattr(self.store, "estimate_rows", None)
        return estimate(self.table_id) if estimate is not None else 0

    def decode(self, values) -> pa.RecordBatch:
        """Rows from their encoded values (a batched get's result)."""
        return decode_rows_arrays(values, self.schema)

    def pk_keys(self, pk: pa.RecordBatch | list) -> pa.Array:
        """The store keys of the given pks: for `get_rows` and then `write_chunk` of the same
        rows (a group's state read, then written), computed once."""
        if isinstance(pk, (pa.RecordBatch, pa.Table)):
            cols = list(pk.columns)
            n = pk.num_rows
        else:
            cols = list(pk)
            n = len(cols[0]) if cols else 0
        if len(cols) != len(self.pk_indices):
            raise ValueError(f"expected {len(self.pk_indices)} pk columns, got {len(cols)}")
        if n == 0:
            return pa.array([], pa.binary())
        cols = [c if c.type == self.schema.field(i).type else c.cast(self.schema.field(i).type)
                for c, i in zip(cols, self.pk_indices)]
        return as_binary(self.keys_of_pk(cols, n))

    def get_rows(self, pk: pa.RecordBatch | list, keys: pa.Array | None = None) -> tuple[pa.RecordBatch, np.ndarray]:
        """The rows with the given pks (one batched lookup), with a found mask; missing rows
        are all-null. `keys`: the pks' `pk_keys`, when known."""
        if keys is None:
            keys = self.pk_keys(pk)
        n = len(keys)
        if n == 0:
            return self.decode([]), np.zeros(0, dtype=bool)
        pos = qh = None
        if self._mem_k:
            qh = hash_array(keys)
            if len(self._mem_k) > MEM_PIECES:  # (one statement's write each: one sorted piece)
                self._mem_arrays()
            if self._mem_may_hold(qh).any():
                mem_keys, mem_values = self._mem_arrays()
                pos = pc.index_in(keys, value_set=mem_keys)
                if not pos.null_count < n:
                    pos = None
        if pos is None:
            values = self._fetch(keys, qh)
        else:
            in_mem = pos.is_valid().to_numpy(zero_copy_only=False)
            todo = np.flatnonzero(~in_mem)
            from_mem = mem_values.take(pos)  # null where not in the memtable (or deleted there)
            if len(todo):
                got = as_binary(self._fetch(keys.take(pa.array(todo, pa.int64())), qh[todo]))
                idx = np.zeros(n, dtype=np.int64)
                idx[todo] = np.arange(len(todo))
                from_store = got.take(pa.array(idx))
                values = pc.if_else(pa.array(in_mem), from_mem, from_store)
            else:
                values = from_mem
        if values.null_count == n:  # none found (new keys): no decoding, no gathering
            return self._absent_rows(n), np.zeros(n, dtype=bool)
        valid = values.is_valid()
        found = valid.to_numpy(zero_copy_only=False)
        rows = self.decode(values.filter(valid)) if values.null_count else self.decode(values)
        if len(rows) == n:
            return rows, found
        idx = np.cumsum(found) - 1
        take = pa.array(idx, type=pa.int64(), mask=~found)
        return rows.take(take), found

    def _absent_rows(self, n: int) -> pa.RecordBatch:
        """`n` all-null rows of the table's schema (what get_rows gives for missing rows)."""
        return pa.RecordBatch.from_arrays([pa.nulls(n, f.type) for f in self.schema], schema=self.schema)

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
        if epoch is None and self._mem_k:
            keys, values = self._overlay(keys, values, self._mem_pairs(pk_prefix))
        if len(values) > 1 and not all(j < m for j in self._dist_in_pk):
            # rows of several vnodes: order them by pk
            longest = pc.max(pc.binary_length(keys)).as_py()
            order = pc.sort_indices(pc.binary_slice(keys, TABLE_HEAD, max(longest, TABLE_HEAD)))
            values = values.take(order)
        if len(values) == 0:
            return pa.Table.from_batches([self.decode([])])
        return pa.Table.from_batches([self.decode(values.combine_chunks() if isinstance(values, pa.ChunkedArray)
                                                   else values)])

    def scan_prefixes(self, prefix_cols: list) -> pa.Table:
        """The rows whose pk starts with any of the given prefixes (the first
        len(prefix_cols) pk columns' values, one prefix per row of `prefix_cols`), in key
        order, read in one pass over the store (HummockStorage.scan_ranges): the groups of
        an agg whose extremes must be found again. When the distribution key lies outside
        the prefix, a prefix is no key range: the table is scanned and filtered."""
        m = len(prefix_cols)
        if not 0 < m <= len(self.pk_indices):
            raise ValueError(f"prefix of {m} columns for a pk of {len(self.pk_indices)} columns")
        n = len(prefix_cols[0])
        if n == 0:
            return pa.Table.from_batches([self.decode([])])
        cols = [c if c.type == self.schema.field(i).type else c.cast(self.schema.field(i).type)
                for c, i in zip(prefix_cols, self.pk_indices[:m])]
        if not all(j < m for j in self._dist_in_pk):
            rows = self.scan()
            have = encode_pk_array([rows.column(i) for i in self.pk_indices[:m]], self.pk_descending[:m],
                                   num_rows=rows.num_rows)
            want = encode_pk_array(cols, self.pk_descending[:m], num_rows=n)
            return rows.filter(pc.is_in(have, value_set=want))
        vnodes = compute_vnodes([cols[j] for j in self._dist_in_pk], num_rows=n)
        pk = encode_pk_array(cols, self.pk_descending[:m], num_rows=n)
        starts = sorted(set(as_binary(make_keys_array(self.table_id, vnodes, pk)).to_pylist()))
        return self._read_ranges(starts, [next_key(k) for k in starts])

    def scan_pk_range(self, prefix_cols: list, lower: tuple | None, upper: tuple | None,
                      epoch: int | None = None) -> pa.Table:
        """The rows whose pk starts with one of the prefixes (the first m = len(prefix_cols)
        pk columns' values, a prefix per row; m may be 0) and whose pk column m, when there is
        one, lies within `lower` and `upper` (each None or (a one-value array, inclusive)),
        its NULLs excluded; in key order. A DELETE by `id < 100` or `(a, b)` keys by `a = 5`
        reads these key ranges, one per prefix and vnode it may lie in (every vnode when
        the distribution key is not within the prefix), not the table. At `epoch` (committed
        data only), or by default the latest state with this epoch's memtable."""
        m = len(prefix_cols)
        if m > len(self.pk_indices) or (m == len(self.pk_indices) and (lower or upper)):
            raise ValueError(f"a range past the pk's {len(self.pk_indices)} columns")
        n = len(prefix_cols[0]) if m else 1
        cols = [c if c.type == self.schema.field(i).type else c.cast(self.schema.field(i).type)
                for c, i in zip(prefix_cols, self.pk_indices[:m])]
        pk = encode_pk_array(cols, self.pk_descending[:m], num_rows=n).to_pylist() if m else [b""]
        if all(j < m for j in self._dist_in_pk):
            vnodes = compute_vnodes([cols[j] for j in self._dist_in_pk], num_rows=n).tolist()
            bases = {vnode_prefix(self.table_id, v) + p for v, p in zip(vnodes, pk)}
        else:
            bases = {vnode_prefix(self.table_id, v) + p for v in range(VNODE_COUNT) for p in pk}
        low, high = self._value_range(m, lower, upper)
        starts, ends = [], []
        for base in sorted(bases):
            start, end = base + low, (base + high if high is not None else next_key(base))
            if end is None or start < end:
                starts.append(start)
                ends.append(end)
        return self._read_ranges(starts, ends, epoch)

    def _value_range(self, m: int, lower: tuple | None, upper: tuple | None) -> tuple[bytes, bytes | None]:
        """The key suffixes (from, to: None, to the prefix's end) of pk column m's values
        within the bounds, past a prefix of the first m columns: a DESC column's byte order
        is its values' reversed, so its value bounds swap sides. Its NULLs (a marker of
        their own, after the values' when ASC, before when DESC) fall outside a bounded
        range; with no bound at all, the whole prefix is read, NULLs too (an MV's group key,
        an index's columns may be NULL)."""
        if m == len(self.pk_indices) or (lower is None and upper is None):
            return b"", None
        desc = self.pk_descending[m]
        marker = NOT_NULL ^ (0xFF if desc else 0)
        t = self.schema.field(self.pk_indices[m]).type

        def enc(bound: tuple) -> bytes:
            return encode_pk_array([bound[0].cast(t)], [desc], num_rows=1)[0].as_py()
        key_low, key_high = (upper, lower) if desc else (lower, upper)
        if key_low is None:
            low = bytes([marker])
        else:
            low = enc(key_low) if key_low[1] else next_key(enc(key_low))
        if key_high is None:
            high = bytes([marker + 1])
        else:
            high = next_key(enc(key_high)) if key_high[1] else enc(key_high)
        return low, high

    def _read_ranges(self, starts: list[bytes], ends: list, epoch: int | None = None) -> pa.Table:
        """The rows in the key ranges (sorted, disjoint), read in one pass over the store,
        with this epoch's memtable over them unless at a committed `epoch`."""
        run = self.store.scan_ranges(starts, ends, MAX_EPOCH if epoch is None else epoch)
        keys, values = run.keys, run.values
        if self._mem_k and epoch is None:
            mem_keys, mem_values = self._mem_arrays()
            mem = Run(mem_keys, np.zeros(len(mem_keys), np.uint64), mem_values, True)
            mem = restrict_to_ranges(mem, KeyForm.of_lengths(key_lengths(mem_keys)), starts, ends)
            keys, values = self._overlay(keys, values, (mem.keys, mem.values))
        if len(values) == 0:
            return pa.Table.from_batches([self.decode([])])
        return pa.Table.from_batches([self.decode(values.combine_chunks() if isinstance(values, pa.ChunkedArray)
                                                   else values)])

    def scan_prefix_edges(self, prefix_cols: list, n: int, last: bool) -> tuple[pa.Table, np.ndarray] | None:
        """For each prefix (as `scan_prefixes`), rows at the low end of its key range (`last`:
        the high end), the first (last) row of the range among them: what a min's (max's)
        materialized input needs to find a group's extreme again, read from the edge blocks
        of each source (HummockStorage.scan_range_edges) — the cost follows the groups, not
        their sizes. Also, per prefix, whether the edges said nothing for sure (the newest
        writes deleted every row they held): such a prefix must be read whole. None when a
        prefix is no key range (`scan_prefixes` scans then) or the store reads no edges."""
        m = len(prefix_cols)
        if not 0 < m <= len(self.pk_indices):
            raise ValueError(f"prefix of {m} columns for a pk of {len(self.pk_indices)} columns")
        if not all(j < m for j in self._dist_in_pk) or not hasattr(self.store, "scan_range_edges"):
            return None
        count = len(prefix_cols[0])
        if count == 0:
            return pa.Table.from_batches([self.decode([])]), np.zeros(0, dtype=bool)
        cols = [c if c.type == self.schema.field(i).type else c.cast(self.schema.field(i).type)
                for c, i in zip(prefix_cols, self.pk_indices[:m])]
        vnodes = compute_vnodes([cols[j] for j in self._dist_in_pk], num_rows=count)
        pk = encode_pk_array(cols, self.pk_descending[:m], num_rows=count)
        wanted = as_binary(make_keys_array(self.table_id, vnodes, pk)).to_pylist()
        starts = sorted(set(wanted))
        ends = [next_key(k) for k in starts]
        run, cuts = self.store.scan_range_edges(starts, ends, n, last)
        cut = cuts.to_pylist()
        keys, values = run.keys, run.values
        if self._mem_k:
            mem_keys, mem_values = self._mem_arrays()
            mem = Run(mem_keys, np.zeros(len(mem_keys), np.uint64), mem_values, True)
            mem = restrict_to_ranges(mem, KeyForm.of_lengths(key_lengths(mem_keys)), starts, ends)
            if len(mem) and any(c is not None for c in cut):
                # the memtable's rows beyond a cut are not known to lie at the edge
                mem_keys = mem.keys.to_pylist()
                known = [c is None or (k >= c if last else k <= c)
                         for k, c in zip(mem_keys, (cut[i] for i in _range_of(starts, mem_keys).tolist()))]
                mem = mem.filter(np.array(known, dtype=bool))
            keys, values = self._overlay(keys, values, (mem.keys, mem.values))
        have = np.zeros(len(starts), dtype=bool)
        if len(keys):
            have[_range_of(starts, as_binary(keys).to_pylist())] = True
        unknown = np.array([c is not None for c in cut], dtype=bool) & ~have
        where = {k: i for i, k in enumerate(starts)}
        unresolved = unknown[np.array([where[k] for k in wanted], dtype=np.int64)]
        if len(values) == 0:
            return pa.Table.from_batches([self.decode([])]), unresolved
        rows = self.decode(values.combine_chunks() if isinstance(values, pa.ChunkedArray) else values)
        return pa.Table.from_batches([rows]), unresolved

    @staticmethod
    def _overlay(keys, values, mem):
        """Merge memtable (keys, values|null) over sorted store rows, sorted by key."""
        mem_keys, mem_vals = mem
        if not len(mem_keys):
            return keys, values
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
        if epoch is not None or not self._mem_k:
            # stream: decode run by run, never holding the whole encoded table
            batches = [self.decode(r.values) for r in
                       self.store.iter_runs(self._prefix, self._end, read_epoch) if len(r)]
            return pa.Table.from_batches(batches or [self.decode([])])
        t = self.store.scan_table(self._prefix, self._end, read_epoch, include_tombstones=False)
        keys, values = self._overlay(t["key"], t["value"], self._mem_pairs())
        if len(values) == 0:
            return pa.Table.from_batches([self.decode([])])
        return pa.Table.from_batches([self.decode(values.combine_chunks() if isinstance(values, pa.ChunkedArray)
                                                   else values)])

    def content_token(self, epoch: int) -> tuple[int, ...] | None:
        """What the committed rows at `epoch` are read from, when that alone determines them
        (`HummockStorage.content_token`): the same token, the same rows."""
        return self.store.content_token(self._prefix, self._end, epoch)

    def iter_batches(self, epoch: int | None = None):
        """Decoded record batches of the committed rows at `epoch` (default: latest, without
        this epoch's memtable), streaming."""
        read_epoch = MAX_EPOCH if epoch is None else epoch
        for r in self.store.iter_runs(self._prefix, self._end, read_epoch):
            if len(r):
                yield self.decode(r.values)

    def iter_batches_with_epochs(self, epoch: int | None = None):
        """`iter_batches` with the epoch that wrote each row (uint64 array per batch): when a
        row was last written, which readers may show (RisingWave's `_rw_timestamp`)."""
        read_epoch = MAX_EPOCH if epoch is None else epoch
        for r in self.store.iter_runs(self._prefix, self._end, read_epoch):
            if len(r):
                yield self.decode(r.values), np.asarray(r.epochs, np.uint64)


def _range_of(starts: list[bytes], keys: list[bytes]) -> np.ndarray:
    """The range (by its start, `starts` sorted) each key lies in."""
    return np.searchsorted(np.array(starts, dtype=object), np.array(keys, dtype=object), "right") - 1
