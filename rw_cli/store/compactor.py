"""Leveled compaction.

L0 holds overlapping SSTs (one or a few per checkpoint, newest first); L1.. hold
non-overlapping SSTs sorted by key, each level `level_multiplier` times larger than the one
above. A task merges its inputs (all of L0 when it holds more than `l0_trigger` files, or one
SST of an oversized level) with the overlapping SSTs of the target level, streaming through
the merge iterator. Versions above the low watermark (the lowest pinned epoch, or the
committed epoch when nothing is pinned) are kept, older ones collapse into the newest, and
tombstones are dropped when nothing lies below the target level.
"""
from __future__ import annotations

from dataclasses import dataclass

from rw_cli.store.keys import KeyForm
from rw_cli.store.merge import compaction_filter, merge_runs
from rw_cli.store.version import HummockVersion, SstInfo


@dataclass
class CompactTask:
    inputs: list[tuple[int, list[SstInfo]]]  # (level, ssts), newest level first
    target_level: int
    bottom: bool
    trivial_move: bool = False

    @property
    def input_ids(self) -> set[int]:
        return {s.id for _, ssts in self.inputs for s in ssts}


def _overlapping(level: list[SstInfo], lo: bytes, hi: bytes) -> list[SstInfo]:
    return [s for s in level if not (s.largest_key < lo or s.smallest_key > hi)]


def _is_bottom(v: HummockVersion, target: int) -> bool:
    return all(not lv for lv in v.levels[target + 1:])


def pick_task(store, v: HummockVersion) -> CompactTask | None:
    levels = v.levels
    if len(levels[0]) > store.l0_trigger:
        l0 = list(levels[0])
        lo = min(s.smallest_key for s in l0)
        hi = max(s.largest_key for s in l0)
        l1 = _overlapping(levels[1], lo, hi) if len(levels) > 1 else []
        return CompactTask([(0, l0), (1, l1)], 1, _is_bottom(v, 1))
    for i in range(1, min(len(levels), store.max_levels - 1)):
        if v.level_size(i) > store._level_target(i):
            cursor = store.__dict__.setdefault("_compact_cursor", {}).get(i, b"")
            cands = [s for s in levels[i] if s.smallest_key > cursor] or levels[i]
            pick = cands[0]
            store._compact_cursor[i] = pick.largest_key
            nxt = _overlapping(levels[i + 1], pick.smallest_key, pick.largest_key) if len(levels) > i + 1 else []
            return CompactTask([(i, [pick]), (i + 1, nxt)], i + 1, _is_bottom(v, i + 1), trivial_move=not nxt)
    return None


def _sources(store, task: CompactTask):
    sources, forms = [], []
    for level, ssts in task.inputs:
        if not ssts:
            continue
        readers = [store._reader(s) for s in ssts]
        forms.extend(r.meta.form for r in readers)
        if level == 0:
            sources.extend(r.runs() for r in readers)
        else:
            sources.append(r for rd in readers for r in rd.runs())
    from rw_cli.store.hummock import _coalesce
    return [_coalesce(src) for src in sources], KeyForm.common(forms)


def merge_task(store, task: CompactTask, watermark: int) -> list[SstInfo]:
    """The task's output SSTs (written, not yet in any version)."""
    sources, form = _sources(store, task)
    runs = (compaction_filter(r, watermark, task.bottom) for r in merge_runs(sources, form))
    return store._write_ssts(runs)


def run_task(store, task: CompactTask, remote: bool = False) -> bool:
    """Run one task and commit its version. False when the version changed under it.
    `remote`: the merge runs in a compactor process (see compactor_process.py)."""
    if task.trivial_move:
        outputs = [s for _, ssts in task.inputs for s in ssts]
    elif remote:
        from rw_cli.store.compactor_process import merge_remote
        outputs = merge_remote(store, task, store.low_watermark())
    else:
        outputs = merge_task(store, task, store.low_watermark())

    def make(v):
        if not task.input_ids <= v.sst_ids():
            return None
        nv = v.copy(id=v.id + 1)
        while len(nv.levels) <= task.target_level:
            nv.levels.append([])
        ids = task.input_ids
        nv.levels = [[s for s in lv if s.id not in ids] for lv in nv.levels]
        nv.levels[task.target_level] = sorted(nv.levels[task.target_level] + outputs, key=lambda s: s.smallest_key)
        return nv

    def installed(_nv) -> None:
        store._inflight.difference_update(s.id for s in outputs)
        store.stats["compactions"] += 1
        store.stats["compaction_input_bytes"] += sum(s.file_size for _, ssts in task.inputs for s in ssts)

    if store._commit_version(make, installed) is None:
        with store._lock:
            store._inflight.difference_update(s.id for s in outputs)
        return False
    return True


def compact_once(store, remote: bool = False) -> bool:
    """Run the next due task, if any."""
    with store._compact_lock:
        with store._lock:
            task = pick_task(store, store._version)
        if task is None:
            return False
        run_task(store, task, remote)
        return True


def compact_full(store) -> int:
    """Merge every SST into the bottom level (tombstones and old versions below the low
    watermark dropped)."""
    with store._compact_lock:
        with store._lock:
            v = store._version
            if not v.ssts():
                return 0
            deepest = max([i for i, lv in enumerate(v.levels) if lv] + [1])
            inputs = [(i, list(lv)) for i, lv in enumerate(v.levels) if lv]
            task = CompactTask(inputs, deepest, True)
        return 1 if run_task(store, task) else 0
