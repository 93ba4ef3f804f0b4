"""Run: a sorted batch of store entries as Arrow/numpy arrays — the unit every read path moves.

Entries are ordered by user key ascending, then epoch descending. `values` is a binary
array whose nulls are tombstones. A run never splits the versions of one user key
between itself and the next run of the same source (blocks, SSTs and merge steps are cut at
user-key boundaries), so per-run deduplication is exact.
"""
from __future__ import annotations

import numpy as np
import pyarrow as pa

from rw_cli.common.vnode import binary_parts
from rw_cli.store.keys import KeyForm, sortable_keys
from rw_cli.common.lazy_import import lazy_import

pc = lazy_import("pyarrow.compute")  # imported on first use: see rw_cli.common.lazy_import

EMPTY_BINARY = pa.nulls(0, pa.binary())  # (pa.array would import pandas at start-up)


def as_binary(arr) -> pa.Array:
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks() if arr.num_chunks != 1 else arr.chunk(0)
        if isinstance(arr, pa.ChunkedArray):
            arr = pa.array([], pa.binary())
    if not isinstance(arr, pa.Array):
        arr = pa.array(arr, pa.binary())
    if arr.type != pa.binary():
        arr = arr.cast(pa.binary())
    return arr


class Run:
    __slots__ = ("keys", "epochs", "values", "unique", "_sk", "_tomb", "raw")

    def __init__(self, keys: pa.Array, epochs: np.ndarray, values: pa.Array, unique: bool = False):
        self.keys = keys
        self.epochs = epochs
        self.values = values
        self.unique = unique  # known to hold one entry per user key
        self._sk: dict = {}
        self._tomb: bool | None = None
        # for decoded blocks: (block bytes, value bytes offset, value offsets, tombstone flags|None)
        self.raw = None

    def __len__(self) -> int:
        return len(self.keys)

    @staticmethod
    def empty() -> "Run":
        return Run(EMPTY_BINARY, np.zeros(0, np.uint64), EMPTY_BINARY, True)

    @property
    def has_tombstones(self) -> bool:
        if self._tomb is None:
            self._tomb = self.values.null_count > 0
        return self._tomb

    @property
    def nbytes(self) -> int:
        return self.keys.nbytes + self.values.nbytes + self.epochs.nbytes + sum(a.nbytes for a in self._sk.values())

    def skeys(self, form: KeyForm) -> np.ndarray:
        """The sortable form (every key of the run must fit it)."""
        sk = self._sk.get(form.key())
        if sk is None:
            sk, ok = sortable_keys(self.keys, form)
            if ok is not None:
                raise ValueError(f"keys do not fit {form}")
            self._sk[form.key()] = sk
        return sk

    def set_skeys(self, form: KeyForm, sk: np.ndarray) -> None:
        """Give the run its sortable form for `form`, known already (a block's fixed-width
        keys are their own: a zero-copy view)."""
        self._sk[form.key()] = sk

    def slice(self, start: int, stop: int) -> "Run":
        r = Run(self.keys.slice(start, stop - start), self.epochs[start:stop],
                self.values.slice(start, stop - start), self.unique)
        for k, v in self._sk.items():
            r._sk[k] = v[start:stop]
        return r

    def take(self, idx: np.ndarray) -> "Run":
        ia = pa.array(idx, pa.int64())
        r = Run(self.keys.take(ia), self.epochs[idx], self.values.take(ia), self.unique)
        for k, v in self._sk.items():
            r._sk[k] = v[idx]
        return r

    def filter(self, mask: np.ndarray) -> "Run":
        if mask.all():
            return self
        return self.take(np.flatnonzero(mask))

    def key_starts(self) -> np.ndarray:
        """True where an entry's user key differs from the previous entry's."""
        n = len(self)
        out = np.ones(n, dtype=bool)
        if n > 1 and not self.unique:
            sk = next(iter(self._sk.values()), None)
            if sk is not None:
                out[1:] = sk[1:] != sk[:-1]
            else:
                out[1:] = pc.not_equal(self.keys.slice(1), self.keys.slice(0, n - 1)).to_numpy(zero_copy_only=False)
        return out

    @staticmethod
    def concat(runs: list["Run"]) -> "Run":
        runs = [r for r in runs if len(r)]
        if not runs:
            return Run.empty()
        if len(runs) == 1:
            return runs[0]
        r = Run(pa.concat_arrays([x.keys for x in runs]), np.concatenate([x.epochs for x in runs]),
                pa.concat_arrays([x.values for x in runs]), False)
        common = set(runs[0]._sk).intersection(*(x._sk for x in runs[1:]))
        for k in common:
            r._sk[k] = np.concatenate([x._sk[k] for x in runs])
        return r

    def visible(self, epoch: int, include_tombstones: bool = False) -> "Run":
        """The newest entry of each user key with epoch <= `epoch`; tombstones dropped unless
        asked for. The result holds one entry per key."""
        r = self
        if len(r) and int(r.epochs.max()) > epoch:
            r = r.filter(r.epochs <= np.uint64(epoch))
        if not r.unique and len(r) > 1:
            r = r.filter(r.key_starts())
            r.unique = True
        if not include_tombstones and r.has_tombstones:
            r = r.filter(r.values.is_valid().to_numpy(zero_copy_only=False))
            r._tomb = False
        r.unique = True
        return r


def key_lengths(keys: pa.Array) -> np.ndarray:
    offs, _ = binary_parts(keys)
    return np.diff(offs)
