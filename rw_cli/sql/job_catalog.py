"""rw_catalog tables of job operations: rw_ddl_progress (the jobs created in the background
still backfilling, with their progress), rw_fragment_backfill_progress (the same per upstream
each scans), rw_rate_limit (the rate limits jobs run under) and
rw_streaming_job_config (each job's own config entries, ALTER ... SET CONFIG)."""
from __future__ import annotations

import pyarrow as pa

from rw_cli.meta.catalog import Catalog

# where RisingWave's rw_rate_limit says each kind of limit applies
_NODE = {"backfill": "STREAM_SCAN", "source": "SOURCE", "sink": "SINK", "dml": "DML"}
_FRAGMENT = {"backfill": "STREAM_SCAN", "source": "SOURCE", "sink": "SINK", "dml": "DML"}


def _table(cols: dict[str, tuple[pa.DataType, list]]) -> pa.Table:
    return pa.table({k: pa.array(v, t) for k, (t, v) in cols.items()})


def _short_name(rel) -> str:
    return rel.name.rpartition(".")[2]


def creating_progress(session, rel) -> str:
    """`12.50%` of a creating job's snapshot gone through (100% of nothing when it had none)."""
    from rw_cli.stream import background

    got = background.progress(session, rel.id) if session is not None else None
    if got is None:
        return "0.00%"
    done, total = got
    return f"{(100.0 * done / total) if total else 100.0:.2f}%"


def rw_ddl_progress(catalog: Catalog, session=None) -> pa.Table:
    """One row per job created in the background whose backfill has not finished."""
    rels = [r for r in catalog.in_creation_order() if r.creating]
    return _table({
        "ddl_id": (pa.int64(), [r.id for r in rels]),
        "ddl_statement": (pa.string(), [r.definition for r in rels]),
        "create_type": (pa.string(), ["BACKGROUND"] * len(rels)),
        "progress": (pa.string(), [creating_progress(session, r) for r in rels]),
        "initialized_at": (pa.timestamp("us", tz="UTC"),
                           [None if r.created_at is None else r.created_at * 1000 for r in rels]),
        "backfill_type": (pa.string(), [r.backfill_type or "ARRANGEMENT_BACKFILL" for r in rels]),
    })


def _qualified(rel) -> str:
    schema, _, name = rel.name.rpartition(".")
    return f"{schema or 'public'}.{name}"


def _percent(done: int, total: int) -> str:
    """RisingWave's `coalesce(done::numeric / total::numeric * 100, 0) || '%'`."""
    from decimal import Decimal

    if not total:
        return "0%"
    value = (Decimal(done) / Decimal(total) * 100).normalize()
    return f"{value:f}%"


def rw_fragment_backfill_progress(catalog: Catalog, session=None) -> pa.Table:
    """One row per upstream scan of a job still backfilling (a job is one fragment here):
    `12.5% (125/1000)` of that upstream's snapshot gone through."""
    from rw_cli.stream import background

    rows = []
    for rel in catalog.in_creation_order():
        if not rel.creating or session is None:
            continue
        for upstream_id, done, total in background.scan_progress(session, rel.id):
            upstream = catalog.relations.get(upstream_id)
            rows.append((rel, upstream, done, total))
    return _table({
        "job_id": (pa.int32(), [r.id for r, _, _, _ in rows]),
        "fragment_id": (pa.int32(), [r.id for r, _, _, _ in rows]),
        "job_name": (pa.string(), [_qualified(r) for r, _, _, _ in rows]),
        "upstream_table_name": (pa.string(), [None if u is None else _qualified(u) for _, u, _, _ in rows]),
        "progress": (pa.string(), [f"{_percent(d, t)} ({d}/{t})" for _, _, d, t in rows]),
    })


def rw_rate_limit(catalog: Catalog, session=None) -> pa.Table:
    """One row per rate limit a job runs under (rows per second per parallelism unit)."""
    rows = [(r, k, n) for r in catalog.in_creation_order() for k, n in sorted(r.rate_limits.items())]
    return _table({
        "fragment_id": (pa.int32(), [r.id for r, _, _ in rows]),
        "fragment_type": (pa.list_(pa.string()), [[_FRAGMENT[k]] for _, k, _ in rows]),
        "node_name": (pa.string(), [_NODE[k] for _, k, _ in rows]),
        "table_id": (pa.int32(), [r.id for r, _, _ in rows]),
        "rate_limit": (pa.int32(), [n for _, _, n in rows]),
    })


def rw_streaming_job_config(catalog: Catalog, session=None) -> pa.Table:
    """One row per config entry a job was given with ALTER ... SET CONFIG."""
    rows = [(r, k, v) for r in catalog.in_creation_order() for k, v in sorted(r.job_config.items())]
    return _table({
        "job_id": (pa.int32(), [r.id for r, _, _ in rows]),
        "name": (pa.string(), [_short_name(r) for r, _, _ in rows]),
        "key": (pa.string(), [k for _, k, _ in rows]),
        "value": (pa.string(), [v for _, _, v in rows]),
    })
