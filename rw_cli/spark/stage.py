"""What a task of an epoch's Spark job runs: one partition of one stage of a `JobGraph`.

A stage's input and output are (partition, record) pairs, partitioned by Spark's shuffle:
a record is (stage, node, side, phase, source, seq, payload), the payload an Arrow IPC chunk
for `node`'s input `side` (or, with phase META, the JSON metadata a task reports: the SSTs
it wrote, rows and bytes it read, actors built and reused). Metadata travels downstream
with the data, so the last stage's tasks return everything the driver needs, and only that.

An exchange into an aggregation that can merge deltas (`HashAggExecutor.combiner`) gets
none of a task's rows: the task sends one delta per group at its end (side DELTA), the
map-side combine that Spark's own aggregations do before a shuffle.

Input order inside a task is deterministic (by phase, producing task, sequence), so a task
that Spark runs again produces the same output and the same SSTs. Chunks an actor emits at
a barrier are applied retractions first, as the embedded exchange merges its actors' output.
"""
from __future__ import annotations

import base64
import json
import pickle
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

import numpy as np

from rw_cli.common.epoch import EpochPair
from rw_cli.common.vnode import compute_vnodes
from rw_cli.engine.chunk import StreamChunk
from rw_cli.engine.exchange import retractions_first, vnode_owners
from rw_cli.engine.source import SplitRange
from rw_cli.spark import worker
from rw_cli.spark.graph import EXCHANGE, MATERIALIZE, SCAN, SOURCE_STAGE, JobGraph

CHUNK, BARRIER, META = 0, 1, 2  # a record's phase: emitted on a chunk, on the barrier; metadata
SOURCE_RANK = 1 << 20  # a producing task's rank: stage * SOURCE_RANK + partition
DELTA = -2  # a record's input side when it holds deltas per group for a combining actor
EPOCH_INFO = "rw.epoch"  # the job property that holds the epoch's EpochInfo (encode_info)


@dataclass
class EpochInfo:
    """What changes per epoch (the job's EPOCH_INFO property; the stage functions ship only
    the graph, the same every epoch)."""
    curr: int
    prev: int
    version: bytes  # the committed version every task reads
    store_url: str
    endpoint: str | None
    tasks: dict[int, worker.EpochTask]  # exchange node -> its fragment's task description
    mat_ids: dict[int, list[int]]  # materialize partition -> reserved SST ids
    needed: dict[int, set[int] | None] = field(default_factory=dict)  # source -> columns read
    python_udfs: dict = field(default_factory=dict)
    cache_size: int = 64 << 20
    splits: list[tuple[int, SplitRange]] = field(default_factory=list)  # stage 0's task i reads splits[i]


class Router:
    """Pushes chunks through a task's stateless executors and turns what reaches a boundary
    (an exchange or the materialize) into records for the stage that runs it."""

    def __init__(self, graph: JobGraph, stage: int, index: int):
        self.graph = graph
        self.rank = stage * SOURCE_RANK + index
        self.stage = stage
        self.local_mat = None  # the materialize when it runs in this stage's tasks
        self.out: list[tuple[int, tuple]] = []
        self.seq = 0
        self.owners = {n.stage: vnode_owners(n.parallelism) for n in graph.nodes if n.stage > 0}
        self.combining: dict[tuple[int, int, int], list[StreamChunk]] = {}  # (node, side, phase) -> chunks
        self.stats = {"combined_rows_in": 0, "combined_rows_out": 0}

    def push(self, node: int, chunk: StreamChunk, side: int, phase: int) -> None:
        spec = self.graph.nodes[node]
        if spec.kind == MATERIALIZE and spec.stage == self.stage:
            self.local_mat.on_chunk(chunk)
            return
        if spec.kind in (EXCHANGE, MATERIALIZE):
            self._route(node, chunk, side, phase)
            return
        outs = [chunk] if spec.kind == SCAN else spec.executor.on_chunk(chunk, side)
        for out in outs:
            if len(out):
                for down, down_side in spec.downstream:
                    self.push(down, out, down_side, phase)

    def forward(self, node: int, chunks: Iterable[StreamChunk], phase: int) -> None:
        """A boundary node's output: on to what follows it."""
        for c in chunks:
            if len(c):
                for down, side in self.graph.nodes[node].downstream:
                    self.push(down, c, side, phase)

    def _route(self, node: int, chunk: StreamChunk, side: int, phase: int) -> None:
        spec = self.graph.nodes[node]
        if spec.combiner is not None:  # sent as deltas per group when the task is done
            self.combining.setdefault((node, side, phase), []).append(chunk)
            return
        self._send(node, chunk, side, phase, spec.dist_keys[side] if spec.dist_keys else None)

    def _send(self, node: int, chunk: StreamChunk, side: int, phase: int, keys: list[int] | None) -> None:
        """`chunk` to the actors that own the vnodes of its `keys` columns."""
        spec = self.graph.nodes[node]
        if keys is None or spec.parallelism == 1:
            self._emit(0, spec.stage, node, side, phase, worker.encode_chunk(chunk))
            return
        vnodes = compute_vnodes([chunk.data.column(k) for k in keys], num_rows=len(chunk))
        owner = self.owners[spec.stage][vnodes]
        for a in np.unique(owner).tolist():
            mask = owner == a
            self._emit(a, spec.stage, node, side, phase, worker.encode_chunk(chunk if mask.all() else chunk.filter(mask)))

    def flush(self) -> None:
        """The task's rows for combining actors, as one delta per group and boundary (its
        group columns first: their vnodes are the rows')."""
        for (node, side, phase), chunks in self.combining.items():
            combiner = self.graph.nodes[node].combiner
            delta = combiner.of_chunks(chunks)
            self.stats["combined_rows_in"] += sum(len(c) for c in chunks)
            self.stats["combined_rows_out"] += delta.num_rows
            if delta.num_rows:
                self._send(node, combiner.as_chunk(delta), DELTA, phase, list(range(len(combiner.group_keys))))
        self.combining.clear()

    def _emit(self, part: int, stage: int, node: int, side: int, phase: int, payload: bytes) -> None:
        self.out.append((part, (stage, node, side, phase, self.rank, self.seq, payload)))
        self.seq += 1

    def meta(self, stage: int, payloads: list[bytes]) -> None:
        """Metadata to the first consumer's partition 0 (the last stage returns it)."""
        for p in payloads:
            self._emit(0, stage, -1, 0, META, p)


def encode_info(info: EpochInfo) -> str:
    """The epoch's info as the value of its job's EPOCH_INFO property."""
    from pyspark import cloudpickle

    return base64.b64encode(cloudpickle.dumps(info)).decode("ascii")


def task_info() -> EpochInfo:
    """The info of the epoch whose job runs this task (its job's EPOCH_INFO property)."""
    from pyspark import TaskContext

    value = TaskContext.get().getLocalProperty(EPOCH_INFO)
    if value is None:
        raise RuntimeError(f"a task of an epoch's job without its {EPOCH_INFO} property")
    return pickle.loads(base64.b64decode(value))


def stage_function(graph: bytes, stage: int):
    """The function `mapPartitionsWithIndex` runs for `stage` of the (pickled) `graph`, in
    any epoch: it finds the epoch's info in its job's property."""
    def run(index: int, records: Iterator) -> Iterator:
        return iter(run_stage(pickle.loads(graph), task_info(), stage, index, records))
    return run


def run_stage(graph: JobGraph, info: EpochInfo, stage: int, index: int, records: Iterable) -> list:
    from rw_cli.engine import eval_errors, python_udf

    t0 = time.perf_counter()
    python_udf.define(info.python_udfs)
    eval_errors.take_messages()  # an earlier task's in this worker are not this one's
    router = Router(graph, stage, index)
    spec = graph.stages[stage]
    if stage == SOURCE_STAGE:
        for _ in records:  # (none; a worker that leaves its input unread is not reused)
            pass
        metas = [_read_sources(graph, info, router, index)]
    else:
        inputs, metas = _sorted_input(records)
        node = graph.nodes[spec.node]
        if node.kind == EXCHANGE:
            if graph.nodes[-1].stage == stage:  # this stage materializes its actors' output too
                router.local_mat = graph.mat.executor(worker.task_store(info.tasks[spec.node]).state)
            metas.append(_run_actor(info, spec.node, index, inputs, router))
        else:
            metas.append(_run_materialize(graph, info, index, inputs))
    router.flush()
    # the task's own time (its input's shuffle read included), per stage, for the bench, and
    # the expressions that failed in it (the driver reports them: rw_cli.engine.eval_errors)
    metas.append(json.dumps({"stats": {f"task_ms_stage{stage}": int((time.perf_counter() - t0) * 1000),
                                       **{k: v for k, v in router.stats.items() if v}},
                             "eval_errors": eval_errors.take_messages()}).encode())
    worker.after_task()
    if spec.consumers:
        router.meta(spec.consumers[0], metas)
        return router.out
    return [(0, (-1, -1, 0, META, router.rank, i, m)) for i, m in enumerate(metas)]


def _read_sources(graph: JobGraph, info: EpochInfo, router: Router, index: int) -> bytes:
    """Stage 0's task `index`: read split range `index`, run the stateless chain after the
    scans. (A task past the epoch's last range reads nothing.)"""
    counts: dict[str, list[int]] = {}
    for i in [index] if index < len(info.splits) else []:
        src_id, r = info.splits[i]
        src = graph.sources[src_id]
        ex = src.executor(worker.cached_reader(graph.key, src_id, src.reader))
        rows, nbytes = ex.rows_read, ex.bytes_read
        for chunk in ex.read_range(r, info.needed.get(src_id)):
            for scan in src.scans:
                router.push(scan, chunk, 0, CHUNK)
        c = counts.setdefault(str(src_id), [0, 0])
        c[0] += ex.rows_read - rows
        c[1] += ex.bytes_read - nbytes
    return json.dumps({"sources": counts}).encode()


def _sorted_input(records: Iterable) -> tuple[list[tuple[int, int, StreamChunk]], list[bytes]]:
    """(node, side, chunk) in a deterministic order — chunk-phase records first, then the
    barrier outputs of each producing stage retractions first — and the metadata."""
    data, metas = [], []
    for _, rec in records:
        (metas if rec[3] == META else data).append(rec)
    data.sort(key=lambda r: (r[3], r[4], r[5]))
    out: list[tuple[int, int, StreamChunk]] = []
    groups: dict[tuple[int, int, int], list[StreamChunk]] = {}
    for _stage, node, side, phase, rank, _seq, payload in data:
        chunk = worker.decode_chunk(payload)
        if phase == CHUNK or side == DELTA:  # (deltas: any order, each has inserts only)
            out.append((node, side, chunk))
        else:
            groups.setdefault((rank // SOURCE_RANK, node, side), []).append(chunk)
    for (_, node, side), chunks in groups.items():
        out += [(node, side, c) for c in retractions_first(chunks)]
    return out, [rec[6] for rec in metas]


def _run_actor(info: EpochInfo, node: int, index: int, inputs, router: Router) -> bytes:
    """An exchange stage's partition: actor `index` of the fragment, cached in this worker
    while it stays the one that ran the fragment's last committed epoch."""
    task = info.tasks[node]
    store = worker.task_store(task)
    worker.STATS.clear()
    worker.STATS.update(built=0, reused=0, caught_up=0)
    actor, cached = worker.cached_actor(task, index, store)
    cached.last_epoch = -1  # until this epoch's barrier went through
    for _, side, chunk in inputs:
        if side == DELTA:
            actor.on_delta(chunk.data)
        else:
            router.forward(node, actor.on_chunk(chunk, side), CHUNK)
    router.forward(node, actor.on_barrier(EpochPair(task.curr, task.prev)), BARRIER)
    if router.local_mat is not None:
        router.local_mat.on_barrier(EpochPair(task.curr, task.prev))
    cached.last_epoch = task.prev
    ssts = store.upload(task.prev, task.sst_ids.get(index, []))
    return json.dumps({"ssts": [s.to_json() for s in ssts], "stats": dict(worker.STATS)}).encode()


@dataclass
class _StoreRef:
    store_url: str
    endpoint: str | None
    version: bytes
    cache_size: int


def _run_materialize(graph: JobGraph, info: EpochInfo, index: int, inputs) -> bytes:
    """The materialize stage's partition: writes the MV rows of its vnodes as SSTs."""
    store = worker.task_store(_StoreRef(info.store_url, info.endpoint, info.version, info.cache_size))
    mat = graph.mat.executor(store.state)
    for _, _, chunk in inputs:
        mat.on_chunk(chunk)
    mat.on_barrier(EpochPair(info.curr, info.prev))
    ssts = store.upload(info.prev, info.mat_ids.get(index, []))
    return json.dumps({"ssts": [s.to_json() for s in ssts]}).encode()
