"""Committed snapshots kept between batch queries.

A relation's rows at a committed epoch never change (an epoch is committed once, and later
writes go to later epochs), and neither do the rows read from one set of SSTs that hold no
newer entry, so a query that reads the same relation at the same committed epoch, or from
the same SSTs at a later one (the epochs between did not write it), reuses an earlier
query's Arrow table (`rw_cli.handler.query._snapshot_key`): sqllogictest-style workloads run
thousands of queries over a few small tables between two writes, and reading a snapshot
from the store (and registering it in DuckDB anew) cost as much as running the query.

Snapshots are kept up to a share of the machine's memory (a sixteenth, per store; a quarter
of that for one table): a dashboard's query over a table of millions of rows, run again before
the table changes, costs what DuckDB takes to answer it, not a read of the table. Per store:
two stores in one process may hold the same table id at the same epoch.
"""
from __future__ import annotations

import weakref
from collections import OrderedDict

import pyarrow as pa

from rw_cli.common.memory import memory_share

MEMORY_SHARE = 16  # of the machine's (or the container's) memory, for all snapshots of a store
MIN_BYTES = 64 << 20
TABLE_SHARE = 4  # one snapshot: at most this share of the whole


MAX_BYTES = memory_share(MEMORY_SHARE, MIN_BYTES, MIN_BYTES)  # all snapshots kept, per store
MAX_TABLE_BYTES = MAX_BYTES // TABLE_SHARE  # one snapshot kept


class SnapshotCache:
    """Least recently used snapshots of one store, keyed by what determines their rows."""

    def __init__(self, max_bytes: int | None = None) -> None:
        self.max_bytes = MAX_BYTES if max_bytes is None else max_bytes
        self.max_table_bytes = self.max_bytes // TABLE_SHARE
        self.tables: OrderedDict[tuple, pa.Table] = OrderedDict()
        self.nbytes = 0

    def get(self, key: tuple) -> pa.Table | None:
        table = self.tables.get(key)
        if table is not None:
            self.tables.move_to_end(key)
        return table

    def put(self, key: tuple, table: pa.Table) -> bool:
        """Keep `table` under `key` if it is small enough; says whether it was kept."""
        size = table.nbytes
        if size > self.max_table_bytes or key in self.tables:
            return False
        self.tables[key] = table
        self.nbytes += size
        while self.nbytes > self.max_bytes:
            _, old = self.tables.popitem(last=False)
            self.nbytes -= old.nbytes
        return True


_CACHES: "weakref.WeakKeyDictionary[object, SnapshotCache]" = weakref.WeakKeyDictionary()


def cache_for(store) -> SnapshotCache:
    """The snapshot cache of `store` (made on first use, gone with the store)."""
    cache = _CACHES.get(store)
    if cache is None:
        cache = _CACHES[store] = SnapshotCache()
    return cache
