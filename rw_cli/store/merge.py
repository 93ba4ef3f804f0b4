"""Merge iterator over sorted sources, and the filters applied on top of it.

`merge_runs` consumes sources (iterators of Runs, ordered newest source first) and yields
Runs sorted by (user key, epoch descending), streaming: each step takes, from every source,
the entries up to the smallest "last key" among the sources' current runs, so a step holds
about one run per source and no user key is ever split between two steps.

On top: `Run.visible(epoch)` is the user iterator (newest version at or below the read epoch,
tombstones hidden); `compaction_filter` keeps what the low watermark says must stay.
"""
from __future__ import annotations

from typing import Iterable, Iterator

import numpy as np

from rw_cli.store.keys import KeyForm, argsort_sortable
from rw_cli.store.run import Run

SCAN_BATCH_BYTES = 1 << 20


def _next_nonempty(it: Iterator[Run]) -> Run | None:
    for r in it:
        if len(r):
            return r
    return None


def merge_runs(sources: list[Iterable[Run]], form: KeyForm) -> Iterator[Run]:
    its = [iter(s) for s in sources]
    heads = [_next_nonempty(it) for it in its]
    while True:
        active = [i for i, h in enumerate(heads) if h is not None]
        if not active:
            return
        if len(active) == 1:
            i = active[0]
            yield heads[i]
            for r in its[i]:
                if len(r):
                    yield r
            return
        bound = min(heads[i].skeys(form)[-1] for i in active)
        pieces: list[Run] = []
        for i in active:
            h = heads[i]
            sk = h.skeys(form)
            cut = int(np.searchsorted(sk, bound, "right"))
            if cut >= len(h):
                pieces.append(h)
                heads[i] = _next_nonempty(its[i])
            elif cut > 0:
                pieces.append(h.slice(0, cut))
                heads[i] = h.slice(cut, len(h))
        if len(pieces) == 1:
            yield pieces[0]
            continue
        r = Run.concat(pieces)
        order = argsort_sortable(r.skeys(form))
        out = r.take(order)
        out.unique = False
        yield out


def dedup_same_epoch(run: Run, form: KeyForm) -> Run:
    """Drop later duplicates of (key, epoch) (the first one is the newest write)."""
    n = len(run)
    if n < 2 or run.unique:
        return run
    sk = run.skeys(form)
    dup = np.zeros(n, dtype=bool)
    dup[1:] = (sk[1:] == sk[:-1]) & (run.epochs[1:] == run.epochs[:-1])
    return run.filter(~dup) if dup.any() else run


def compaction_filter(run: Run, watermark, drop_tombstones: bool, dropped: list[int] | None = None) -> Run:
    """Keep every version above the watermark and the newest version at or below it (dropped
    too if it is a tombstone and nothing older can exist below: then the newest epoch of the
    tombstones dropped is appended to `dropped`, when given)."""
    n = len(run)
    if n == 0:
        return run
    e = run.epochs
    # an int, or per entry (rw_cli.store.retention: time travel keeps relations' versions)
    wm = np.uint64(watermark) if isinstance(watermark, int) else watermark.per_entry(run.keys)
    le = e <= wm
    starts = run.key_starts()
    prev_gt = np.ones(n, dtype=bool)
    prev_gt[1:] = e[:-1] > (wm if isinstance(watermark, int) else wm[:-1])
    first_le = le & (starts | prev_gt)
    keep = ~le | first_le
    if drop_tombstones and run.has_tombstones:
        gone = first_le & run.values.is_null().to_numpy(zero_copy_only=False)
        keep &= ~gone
        if dropped is not None and gone.any():
            dropped.append(int(e[gone].max()))
    return run.filter(keep)


def coalesce(runs: Iterable[Run], target: int = SCAN_BATCH_BYTES) -> Iterator[Run]:
    """A source's runs joined into steps of about `target` bytes: a merge of several sources
    then takes steps of about a megabyte per source rather than one block."""
    pending: list[Run] = []
    size = 0
    for r in runs:
        pending.append(r)
        size += r.keys.nbytes + r.values.nbytes
        if size >= target:
            yield Run.concat(pending)
            pending, size = [], 0
    if pending:
        yield Run.concat(pending)
