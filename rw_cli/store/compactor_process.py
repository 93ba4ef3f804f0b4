"""Compaction in a separate process, as RisingWave runs it on dedicated compactor nodes.

The writer keeps the version: it picks a task, reserves the ids of the task's output SSTs,
and commits the version those outputs make. The compactor process only reads the input
SSTs from the object store and writes the outputs under the reserved ids. The merge is most
of the store's CPU under a stream of checkpoints; in a process of its own it runs beside the
stream (on another core) instead of taking turns with it for the interpreter lock.
A store no other process can open (memory://) compacts in a thread instead.
"""
from __future__ import annotations

import math

from rw_cli.store.compaction_merge import merge_task
from rw_cli.store.compaction_picker import CompactTask
from rw_cli.store.sstable_store import SstableStore
from rw_cli.store.version import SstInfo
from rw_cli.store.worker_process import Helper, serve, shared_sstable_store

_compactor = Helper("rw_cli.store.compactor_process", "compaction")


def reserve(sstables: SstableStore, task: CompactTask) -> list[int]:
    """Ids enough for the task's outputs: outputs are cut at the target size, so there are
    at most (input bytes / target) + 1 of them, with room for compressed inputs growing."""
    grow = 8 if sstables.compression else 2
    n = len(task.input_ids) + math.ceil(task.input_bytes * grow / max(1, sstables.sst_target_size)) + 2
    return [sstables.alloc_id() for _ in range(n)]


def merge_remote(sstables: SstableStore, task: CompactTask, watermark: int) -> tuple[list[SstInfo], int]:
    """`merge_task` run by the compactor process; the unused ids are released."""
    ids = reserve(sstables, task)
    outputs: list[SstInfo] = []
    try:
        outputs, dropped = _compactor.call(sstables, (task, watermark, ids))
        return outputs, dropped
    finally:
        sstables.release_ids(set(ids) - {s.id for s in outputs})


# -- in the compactor process -----------------------------------------------------------------
def _run(url: str, endpoint: str | None, env: dict, options: dict, task: CompactTask, watermark: int,
         ids: list[int]) -> tuple[list[SstInfo], int]:
    sstables = shared_sstable_store(url, endpoint, options, env)
    sstables.use_ids(ids)
    return merge_task(sstables, task, watermark)


if __name__ == "__main__":
    # compaction takes the CPU the stream leaves: it can fall behind for a while (L0 grows,
    # reads look at more files) but it never slows the checkpoints down
    serve(_run, nice=19)
