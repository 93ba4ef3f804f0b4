"""The embedded runtime: every stream job's executors in this process, driven synchronously.

A job is a tree of nodes (executor + where its output goes); its leaves are scans that
receive the change stream of an upstream table or MV, its root materializes. Chunks are
pushed through immediately; a barrier visits jobs in creation order (a topological order:
a job is created after everything it reads) and each job's nodes leaves-first, so every
executor has seen all chunks of the epoch before it sees the barrier — the alignment the
design asks of multi-input executors comes from that order.

A sink into a table (`StreamJob.into`) feeds that table's job as its DML does; such a table
is visited after the sinks feeding it (the order is the dataflow's topological order, by
creation where nothing constrains it), so what a sink emits on a barrier still belongs to
the epoch that barrier closes.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from rw_cli.engine.chunk import StreamChunk
from rw_cli.engine.executor import Executor
from rw_cli.common.epoch import EpochPair


class PassThrough(Executor):
    """A job's entry point: the upstream's changes (and the backfill snapshot) arrive here."""

    identity = "StreamTableScan"

    def on_chunk(self, chunk: StreamChunk, side: int = 0) -> list[StreamChunk]:
        return [chunk] if len(chunk) else []


@dataclass
class Node:
    executor: Executor
    downstream: list[tuple["Node", int]] = field(default_factory=list)


@dataclass
class StreamJob:
    relation_id: int
    nodes: list[Node]  # leaves first, root last
    scans: list[tuple[int, Node]]  # (upstream relation id, entry node)
    into: int | None = None  # a sink into a table: the table whose job its output enters

    @property
    def root(self) -> Node:
        return self.nodes[-1]


class EmbeddedRuntime:
    exchange = None  # partitioned fragments run in this process (ExchangeExecutor)

    def __init__(self) -> None:
        self.jobs: dict[int, StreamJob] = {}
        self.subscribers: dict[int, list[Node]] = {}
        self._order: list[int] | None = None  # barrier order, recomputed after a change
        # jobs backfilling in the background: the upstream changes each has been sent since
        # its snapshot, held until the snapshot has gone through (rw_cli.stream.background)
        self.held: dict[int, list[tuple[Node, StreamChunk]]] = {}

    def default_parallelism(self) -> int:
        return 1

    def committed(self, epoch: int) -> None:
        """The driver committed `epoch` (runtimes with remote actors track it)."""

    def add_job(self, job: StreamJob) -> None:
        self.jobs[job.relation_id] = job
        self.subscribers.setdefault(job.relation_id, [])
        self._order = None

    def connect(self, job: StreamJob) -> None:
        """Start delivering upstream changes to the job (after its backfill)."""
        for upstream, node in job.scans:
            self.subscribers.setdefault(upstream, []).append(node)

    def live_table(self, relation_id: int):
        """The state table a job materializes into, with its uncommitted writes (or None)."""
        job = self.jobs.get(relation_id)
        return getattr(job.root.executor, "table", None) if job is not None else None

    def live_table_in_step(self, relation_id: int):
        """`live_table`, when the job's state holds every change its upstreams were given so
        far (none held back while a backfill runs): a DML statement may read a table's rows
        from its index then."""
        return None if relation_id in self.held else self.live_table(relation_id)

    def watermark(self, relation_id: int):
        """A table's watermark tracker (its job's first executor), or None."""
        job = self.jobs.get(relation_id)
        first = job.nodes[0].executor if job is not None else None
        return first if hasattr(first, "literal") else None

    def drop_job(self, relation_id: int) -> None:
        job = self.jobs.pop(relation_id)
        self.held.pop(relation_id, None)
        self._order = None
        for node in job.nodes:
            node.executor.close()
        for upstream, node in job.scans:
            subs = self.subscribers.get(upstream, [])
            if node in subs:
                subs.remove(node)
        self.subscribers.pop(relation_id, None)

    def close(self) -> None:
        """The session closes: every executor lets go of its clients (the jobs stay defined)."""
        for job in self.jobs.values():
            for node in job.nodes:
                node.executor.close()

    def push(self, relation_id: int, chunk: StreamChunk) -> None:
        """A table's DML: the chunk enters the table's job at its first node."""
        job = self.jobs[relation_id]
        self._deliver(job, job.nodes[0], chunk, 0)

    def push_to(self, job: StreamJob, node: Node, chunk: StreamChunk) -> None:
        self._deliver(job, node, chunk, 0)

    def barrier_order(self) -> list[int]:
        """Job ids with every job after the jobs it reads from (scans) and after the sinks
        feeding it; by id (creation) among jobs nothing orders."""
        if self._order is None:
            feeds: dict[int, list[int]] = {}
            for job in self.jobs.values():
                if job.into is not None:
                    feeds.setdefault(job.into, []).append(job.relation_id)
            order: list[int] = []
            seen: set[int] = set()

            def visit(rel_id: int) -> None:
                if rel_id in seen or rel_id not in self.jobs:
                    return
                seen.add(rel_id)
                for up in sorted({u for u, _ in self.jobs[rel_id].scans} | set(feeds.get(rel_id, []))):
                    visit(up)
                order.append(rel_id)

            for rel_id in sorted(self.jobs):
                visit(rel_id)
            self._order = order
        return self._order

    def barrier(self, epoch: EpochPair) -> None:
        for rel_id in self.barrier_order():
            job = self.jobs[rel_id]
            for node in job.nodes:
                for out in node.executor.on_barrier(epoch):
                    self._forward(job, node, out)

    def _deliver(self, job: StreamJob, node: Node, chunk: StreamChunk, side: int) -> None:
        for out in node.executor.on_chunk(chunk, side):
            self._forward(job, node, out)

    def _forward(self, job: StreamJob, node: Node, chunk: StreamChunk) -> None:
        for down, side in node.downstream:
            self._deliver(job, down, chunk, side)
        if node is job.root:
            for entry in list(self.subscribers.get(job.relation_id, [])):
                owner = self._owner(entry)
                held = self.held.get(owner.relation_id)
                if held is not None:
                    held.append((entry, chunk))
                else:
                    self._deliver(owner, entry, chunk, 0)
            target = self.jobs.get(job.into) if job.into is not None else None
            if target is not None:
                self._deliver(target, target.nodes[0], chunk, 0)

    def _owner(self, node: Node) -> StreamJob:
        for job in self.jobs.values():
            if any(n is node for _, n in job.scans):
                return job
        raise KeyError("orphan scan node")
