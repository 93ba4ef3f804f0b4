"""What a Spark task runs: the actors of one fragment for one epoch, next to their state.

A task receives rows (actor, seq, side, payload): each payload an Arrow IPC chunk of that
actor's input (in arrival order), and one barrier row per actor so that every actor sees
the barrier even without input. For each actor it replays the chunks and the barrier through
the same executor code the embedded runtime uses, then uploads the state the actors wrote
as SSTs and returns the output chunks and the SSTs' metadata.

Actors stay cached in the (reused) Python worker between epochs: a cached actor is reused
when it processed the last committed epoch of its fragment with the same vnode assignment,
or an earlier one and it caught up with what the epochs since (run in another worker) wrote
(`HashAggExecutor.catch_up`); otherwise it is rebuilt and reloads its state from the store.
"""
from __future__ import annotations

import gc
import io
import json
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa

from rw_cli.engine.chunk import StreamChunk

OP_COLUMN = "__op"
INPUT_SCHEMA = pa.schema([("part", pa.int32()), ("actor", pa.int32()), ("seq", pa.int32()),
                          ("side", pa.int8()), ("payload", pa.binary())])
OUTPUT_SCHEMA = pa.schema([("actor", pa.int32()), ("kind", pa.int8()), ("payload", pa.binary())])
OUTPUT_DDL = "actor int, kind tinyint, payload binary"
OUT_CHUNK, OUT_SSTS, OUT_STATS = 0, 1, 2
BARRIER = -1  # `side` of an actor's barrier row


def encode_chunk(chunk: StreamChunk) -> bytes:
    t = chunk.data.append_column(OP_COLUMN, pa.array(chunk.ops, pa.int8()))
    sink = io.BytesIO()
    with pa.ipc.new_stream(sink, t.schema) as w:
        w.write_table(t)
    return sink.getvalue()


def decode_chunk(data: bytes) -> StreamChunk:
    t = pa.ipc.open_stream(pa.py_buffer(data)).read_all()
    ops = t.column(OP_COLUMN).to_numpy().astype(np.int8)
    return StreamChunk(t.drop_columns([OP_COLUMN]), ops)


@dataclass
class EpochTask:
    """Everything a task needs for one epoch of one fragment (pickled into the task)."""
    fragment: str  # unique per fragment and state store
    factory: object  # ActorFactory
    parallelism: int
    partitioned: bool
    store_url: str
    endpoint: str | None
    version: bytes  # the encoded version to read
    curr: int
    prev: int
    expect_last: int | None  # the fragment's last committed epoch that ran (None: never)
    fresh: bool
    clock_value: str | None
    sst_ids: dict[int, list[int]] = field(default_factory=dict)  # actor -> reserved SST ids
    cache_size: int = 64 << 20
    # the user's Python functions the driver registered (rw_cli.engine.python_udf.definitions)
    python_udfs: dict = field(default_factory=dict)


@dataclass
class _Cached:
    actor: object
    last_epoch: int
    parallelism: int


MAX_CACHED_ACTORS = 256
_ACTORS: dict[tuple[str, int], _Cached] = {}  # insertion order: oldest first
_STORES: dict[tuple[str, str | None], object] = {}
STATS: dict[str, int] = {}


# PySpark's daemon runs a full garbage collection in a reused worker after every task; over
# a worker's modules, actors and caches that costs tens of milliseconds, as much as a task's
# own work. What a task leaves alive is frozen out of those collections instead (gc.freeze),
# and every FULL_GC_EVERY tasks one full collection runs (reference cycles among objects
# dropped since, a rebuilt actor's, are freed then).
FULL_GC_EVERY = 16
_tasks_done = 0


def after_task() -> None:
    """A task's last step: freeze what it leaves alive, or let the full collection run."""
    global _tasks_done
    _tasks_done += 1
    if _tasks_done % FULL_GC_EVERY:
        gc.freeze()
    else:
        gc.unfreeze()


def task_store(task: EpochTask):
    from rw_cli.spark.task_store import TaskStore

    key = (task.store_url, task.endpoint)
    store = _STORES.get(key)
    if store is None:
        store = _STORES[key] = TaskStore(task.store_url, task.endpoint, task.cache_size)
    store.at_version(task.version)
    return store


_READERS: dict[tuple[str, int], object] = {}


def cached_reader(job_key: str, source_id: int, shipped):
    """A source's reader kept in this (reused) worker between epochs: the first one shipped
    to it, so that a client it opens (a Kafka consumer, with what it fetched ahead) serves
    the next epochs' ranges too rather than connecting again in every task."""
    return _READERS.setdefault((job_key, source_id), shipped)


def cached_actor(task: EpochTask, actor_id: int, store):
    from rw_cli.engine.exchange import owned_vnodes

    key = (task.fragment, actor_id)
    cached = _ACTORS.get(key)
    vnodes = owned_vnodes(actor_id, task.parallelism) if task.partitioned else None
    if cached is not None and _up_to_date(cached, task, vnodes):
        actor = cached.actor
        _ACTORS[key] = _ACTORS.pop(key)  # most recently used last
        STATS["reused"] += 1
    else:
        STATS["built"] += 1
        actor = task.factory(store.state, vnodes, task.fresh)
        if hasattr(actor, "fill_caches"):
            actor.fill_caches(_span(vnodes))
        _ACTORS.pop(key, None)
        while len(_ACTORS) >= MAX_CACHED_ACTORS:  # dropped jobs' actors go first (oldest)
            _ACTORS.pop(next(iter(_ACTORS)))
        _ACTORS[key] = cached = _Cached(actor, -1, task.parallelism)
    if task.clock_value is not None:
        value = task.clock_value
        actor.clock = lambda epoch: value
    return actor, cached


def _span(vnodes: np.ndarray | None) -> tuple[int, int] | None:
    """An actor's owned vnodes (a mask, one contiguous run) as [first, last)."""
    return None if vnodes is None else (int(np.argmax(vnodes)), len(vnodes) - int(np.argmax(vnodes[::-1])))


def _up_to_date(cached: _Cached, task: EpochTask, vnodes) -> bool:
    """Whether a cached actor may run the task's epoch: it ran the fragment's last committed
    epoch with the same vnodes — or an earlier one, and it caught up with the epochs another
    worker ran since (`catch_up`: an actor that can tell what they wrote)."""
    if task.expect_last is None or cached.parallelism != task.parallelism or task.fresh:
        return False
    if cached.last_epoch == task.expect_last:
        return True
    if not 0 <= cached.last_epoch < task.expect_last or not hasattr(cached.actor, "catch_up"):
        return False
    if not cached.actor.catch_up(cached.last_epoch, _span(vnodes)):
        return False
    STATS["caught_up"] += 1
    return True


def run_epoch(task: EpochTask, rows: pa.Table) -> list[pa.RecordBatch]:
    """Run this task's actors over their input rows; the output as OUTPUT_SCHEMA batches."""
    from rw_cli.common.epoch import EpochPair

    from rw_cli.engine import python_udf

    python_udf.define(task.python_udfs)
    store = task_store(task)
    STATS.clear()
    STATS.update(built=0, reused=0, caught_up=0)
    actors = rows.column("actor").to_numpy()
    order = np.lexsort((rows.column("seq").to_numpy(), actors))
    rows = rows.take(pa.array(order))
    actors = actors[order]
    sides = rows.column("side").to_numpy()
    payloads = rows.column("payload")
    out_actor, out_kind, out_payload = [], [], []
    ids: list[int] = []
    for actor_id in np.unique(actors).tolist():
        actor, cached = cached_actor(task, actor_id, store)
        cached.last_epoch = -1  # until this epoch's barrier went through
        outs: list[StreamChunk] = []
        for i in np.flatnonzero(actors == actor_id).tolist():
            if sides[i] != BARRIER:
                outs += actor.on_chunk(decode_chunk(payloads[i].as_py()), int(sides[i]))
        outs += actor.on_barrier(EpochPair(task.curr, task.prev))
        cached.last_epoch = task.prev
        for c in outs:
            if len(c):
                out_actor.append(actor_id)
                out_kind.append(OUT_CHUNK)
                out_payload.append(encode_chunk(c))
        ids += task.sst_ids.get(actor_id, [])
    ssts = store.upload(task.prev, ids)
    if ssts:
        out_actor.append(int(actors[0]) if len(actors) else 0)
        out_kind.append(OUT_SSTS)
        out_payload.append(json.dumps([s.to_json() for s in ssts]).encode())
    out_actor.append(int(actors[0]) if len(actors) else 0)
    out_kind.append(OUT_STATS)
    out_payload.append(json.dumps(STATS).encode())
    after_task()
    return [pa.record_batch([pa.array(out_actor, pa.int32()), pa.array(out_kind, pa.int8()),
                             pa.array(out_payload, pa.binary())], schema=OUTPUT_SCHEMA)]


def task_function(task: EpochTask):
    """The function handed to `mapInArrow`: all input batches of the partition, then the run."""
    def run(batches):
        got = list(batches)
        rows = pa.Table.from_batches(got) if got else INPUT_SCHEMA.empty_table()
        if rows.num_rows == 0:
            return iter([])
        return iter(run_epoch(task, rows.select(INPUT_SCHEMA.names)))
    return run
