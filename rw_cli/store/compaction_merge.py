"""The merge of a picked compaction task: the same code in the writer (compaction in a
thread) and in the compactor process (compactor_process.py).

The task's inputs stream through the merge iterator: versions above the low watermark (the
lowest pinned epoch, or the committed epoch when nothing is pinned) are kept, older ones
collapse into the newest, and tombstones are dropped when nothing lies below the target
level. The outputs are written as new SSTs; committing them is the writer's business.
"""
from __future__ import annotations

from typing import Iterator

from rw_cli.store.compaction_picker import CompactTask
from rw_cli.store.keys import KeyForm
from rw_cli.store.merge import coalesce, compaction_filter, merge_runs
from rw_cli.store.run import Run
from rw_cli.store.sstable_store import SstableStore
from rw_cli.store.version import SstInfo


def _sources(sstables: SstableStore, task: CompactTask) -> tuple[list[Iterator[Run]], KeyForm]:
    sources, forms = [], []
    for level, ssts in task.inputs:
        if not ssts:
            continue
        readers = [sstables.reader(s) for s in ssts]
        forms.extend(r.meta.form for r in readers)
        if level == 0:
            sources.extend(r.runs() for r in readers)
        else:
            sources.append(r for rd in readers for r in rd.runs())
    return [coalesce(src) for src in sources], KeyForm.common(forms)


def merge_task(sstables: SstableStore, task: CompactTask, watermark: int) -> tuple[list[SstInfo], int]:
    """The task's output SSTs (written, not yet in any version), and the newest epoch of
    the tombstones it dropped (0: none; `HummockVersion.tombstones_dropped_through`)."""
    sources, form = _sources(sstables, task)
    dropped: list[int] = []
    runs = (compaction_filter(r, watermark, task.bottom, dropped) for r in merge_runs(sources, form))
    return sstables.write_runs(runs), max(dropped, default=0)
