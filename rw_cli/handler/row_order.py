"""The order a scan of a relation answers in: its primary key's (or an MV's ORDER BY ahead of
it), as RisingWave answers a query without ORDER BY. Snapshots, pk lookups and key-range
reads all give their rows in it."""
from __future__ import annotations

import numpy as np
import pyarrow as pa

from rw_cli.meta.catalog import RelationCatalog


def pk_order(rows: pa.Table, rel: RelationCatalog) -> pa.Table:
    """Storage order is (vnode, pk); a scan answers in pk order, as a single RisingWave
    compute node does for a query without ORDER BY (NULLs last, as in PostgreSQL). An MV
    created with ORDER BY keeps that order ahead of its pk (RisingWave's order key)."""
    if rows.num_rows < 2 or not (rel.pk or rel.order_key):
        return rows
    if not rel.order_key and len(rel.pk) == 1:
        by_one = order_by_integer_key(rows, rel.columns[rel.pk[0]].name)
        if by_one is not None:
            return by_one
    keys = [(rel.columns[k].name, "descending" if desc else "ascending", "at_start" if first else "at_end")
            for k, desc, first in rel.order_key]
    keys += [(rel.columns[k].name, "ascending", "at_end") for k in rel.pk
             if all(k != o[0] for o in rel.order_key)]
    try:
        return rows.sort_by(keys)
    except (pa.ArrowNotImplementedError, pa.ArrowTypeError):  # a pk type Arrow cannot sort: keep storage order
        return rows


def order_by_integer_key(rows: pa.Table, name: str) -> pa.Table | None:
    """`rows` in the order of their integer (or date, timestamp) key column without NULLs, by
    numpy's stable sort, which merges the runs the storage order leaves (one sorted run per
    vnode) in a few passes: a fifth of Arrow's sort at 2,000,000 rows. None for other keys."""
    col = rows.column(name)
    t = col.type
    if col.null_count or not (pa.types.is_integer(t) or pa.types.is_date(t) or pa.types.is_timestamp(t)):
        return None
    values = col.to_numpy() if pa.types.is_integer(t) else col.cast(pa.int64() if t.bit_width == 64 else pa.int32()).to_numpy()
    order = np.argsort(values, kind="stable")
    return rows.combine_chunks().take(pa.array(order, pa.int64()))
