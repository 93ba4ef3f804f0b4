"""A checkpoint's SSTs built in a separate process: the writer's upload process.

At every checkpoint the writer hands the epoch's writes (a batch of keys and values per state
table) to its uploader thread, which sorts them, builds the SSTs, writes them to the object
store and then commits the version. That is about as much CPU as the stream's own, and in a
thread it takes turns with the stream for the interpreter lock: the stream ran at about half
its speed beside it. Here the thread only ships the batches to an upload process, waits for
it without holding the lock, and commits the SSTs the process wrote under ids the writer
reserved — as compactor_process.py does for compaction. A store no other process can open
(memory://) builds its SSTs in the uploader thread.
"""
from __future__ import annotations

import math

from rw_cli.store.shared_buffer import SharedBufferBatch, merged_runs
from rw_cli.store.sstable_store import SstableStore
from rw_cli.store.version import SstInfo
from rw_cli.store.worker_process import Helper, serve, shared_sstable_store

_ENTRY_OVERHEAD = 32  # bytes an entry adds in an SST beyond its key and value (epoch, offsets)

_uploader = Helper("rw_cli.store.upload_process", "upload")


def start() -> None:
    """Start the upload process ahead of the first checkpoint (its imports take a while)."""
    _uploader.start()


def ready() -> bool:
    """Whether the upload process has started (until then a checkpoint's SSTs are built in
    the uploader thread, so the first checkpoints do not wait for its imports)."""
    return _uploader.ready()


def reserve(sstables: SstableStore, batches: list[SharedBufferBatch]) -> list[int]:
    """Ids enough for the SSTs of `batches`: SSTs are cut at the target size, so there are at
    most (encoded bytes / target) + 1 of them; room for compression making blocks bigger."""
    total = sum(len(k) * _ENTRY_OVERHEAD + k.nbytes + v.nbytes for k, v in (b.arrays() for b in batches))
    grow = 8 if sstables.compression else 2
    n = math.ceil(total * grow / max(1, sstables.sst_target_size)) + 2
    return [sstables.alloc_id() for _ in range(n)]


def upload_remote(sstables: SstableStore, batches: list[SharedBufferBatch]) -> list[SstInfo]:
    """`sstables.write_runs(merged_runs(batches))` run by the upload process: the SSTs, their
    metas in the store's meta cache; the unused ids are released. A process that died is
    replaced and the batches sent again once (their SSTs are not in any version yet)."""
    ids = reserve(sstables, batches)
    payload = [(b.epoch, b.seq, *b.arrays(), b.sorted) for b in batches]
    outputs: list[SstInfo] = []
    try:
        outputs, metas = _uploader.call(sstables, (payload, ids), attempts=2)
        sstables.adopt_uploaded(outputs, metas)
        return outputs
    finally:
        sstables.release_ids(set(ids) - {s.id for s in outputs})


# -- in the upload process ----------------------------------------------------------------------
def _run(url: str, endpoint: str | None, env: dict, options: dict, payload: list, ids: list[int]):
    sstables = shared_sstable_store(url, endpoint, options, env)
    sstables.use_ids(ids)
    batches = [SharedBufferBatch(epoch, seq, keys, values, done) for epoch, seq, keys, values, done in payload]
    infos = sstables.write_runs(merged_runs(batches))
    return infos, [sstables.meta_cache.get(info.id) for info in infos]


def _warm_up() -> None:
    """Build one small SST in memory: every module (and the lazy imports of Arrow) the first
    checkpoint needs is loaded before the process says it is ready."""
    import numpy as np
    import pyarrow as pa

    from rw_cli.store.sst import SstBuilder
    keys = pa.array([b"\x00\x00\x00\x01\x00\x00" + bytes([i]) for i in range(3)], pa.binary())
    builder = SstBuilder(4096, None)
    for run in merged_runs([SharedBufferBatch(1 << 16, 1, keys, keys)]):
        builder.add_run(run)
    builder.finish_with_meta()
    np.zeros(1)


if __name__ == "__main__":
    serve(_run, setup=_warm_up)
