"""A stream job's fragment graph as the stages of one Spark job per epoch (issue 23).

RisingWave's picture maps onto Spark: actors are tasks, fragments are stages, the exchanges
between fragments are Spark's own shuffle, keyed by the vnode owner (the same vnode -> actor
mapping as the embedded runtime, so state keys are identical on both runtimes).

`compile_job` turns a job built for the Spark runtime (sources -> stateless executors ->
`SparkExchange` fragments -> ... -> materialize) into a picklable `JobGraph`:

- stage 0 reads the sources' splits: one partition per assigned split range; it runs the
  stateless executors after the scans up to the first exchange;
- one stage per partitioned fragment (a `SparkExchange`): partition i is actor i, which runs
  next to its state (cached in the Python worker) and then the stateless executors after it;
- one stage for the materialize, partitioned by the vnode owner of the MV's pk, so each task
  writes the SSTs of its own vnodes — unless the MV's pk holds the group key of the
  aggregation it materializes (through plain projections): a key then has exactly one actor,
  which materializes it in its own task, and the epoch saves a shuffle and a stage.

A job of another shape (a sink, a table's or index's job, an MV read by other jobs, DML or
table inputs, temporal or watermark-driven fragments) is not compiled: `compile_job` says why,
and the runtime runs that job the way it always did (the driver routes its chunks).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import pyarrow as pa

from rw_cli.connector.base import SourceReader
from rw_cli.engine.filter import FilterExecutor
from rw_cli.engine.materialize import MaterializeExecutor
from rw_cli.engine.project import ProjectExecutor
from rw_cli.engine.project_set import ProjectSetExecutor
from rw_cli.engine.runtime import PassThrough, StreamJob
from rw_cli.engine.source import SourceExecutor
from rw_cli.engine.union import UnionExecutor

SCAN, STATELESS, EXCHANGE, MATERIALIZE = range(4)
SOURCE_STAGE = 0
# executors that keep no state between chunks: every task runs its own copy
STATELESS_TYPES = (ProjectExecutor, FilterExecutor, ProjectSetExecutor, UnionExecutor)


@dataclass
class NodeSpec:
    kind: int
    downstream: list[tuple[int, int]]  # (node index, input side)
    executor: object = None  # a stateless executor
    stage: int = -1  # a boundary node (exchange, materialize): the stage that runs it
    dist_keys: list[list[int]] | None = None  # per input side: the columns whose vnode picks the actor
    parallelism: int = 1
    combiner: object = None  # an exchange whose producers send deltas per group (AggDelta)


@dataclass
class SourceSpec:
    """What a task needs to read a source's split ranges as the driver's SourceExecutor would."""
    rel_id: int
    reader: SourceReader
    types: list
    stream_key: list[int]
    row_id_index: int | None
    generated: list
    name: str
    scans: list[int] = field(default_factory=list)  # the job's scan nodes of this source

    def executor(self, reader: SourceReader | None = None) -> SourceExecutor:
        """The executor over `reader` (default: the one shipped with the spec)."""
        ex = SourceExecutor(self.types, self.stream_key, reader or self.reader, None, self.row_id_index, self.name)
        ex.generated = self.generated
        return ex


@dataclass
class MatSpec:
    """The MV's table, as each materialize task opens it on its own store."""
    table_id: int
    schema: pa.Schema
    pk: list[int]
    types: list
    by_key: bool = False  # an altered MV: changes resolved by key (MaterializeExecutor.by_key)
    dist: list[int] | None = None  # its distribution key (RelationCatalog.dist_key)

    def executor(self, store) -> MaterializeExecutor:
        from rw_cli.store.state_table import StateTable

        table = StateTable(store, self.table_id, self.schema, self.pk, dist_key_indices=self.dist)
        return MaterializeExecutor(self.types, self.pk, table, conflict="overwrite" if self.by_key else None,
                                   by_key=self.by_key)


@dataclass
class StageSpec:
    id: int
    node: int  # its boundary node (-1: the source stage)
    parallelism: int
    producers: list[int] = field(default_factory=list)
    consumers: list[int] = field(default_factory=list)


@dataclass
class JobGraph:
    key: str  # unique per job and runtime
    nodes: list[NodeSpec]
    sources: dict[int, SourceSpec]
    stages: list[StageSpec]
    mat: MatSpec

    @property
    def root_stage(self) -> StageSpec:
        return self.stages[-1]


def compile_job(job: StreamJob, runtime) -> JobGraph | str:
    """The job as stages, or why it cannot run as one Spark job per epoch."""
    from rw_cli.spark.exchange import SparkExchange

    root = job.root.executor
    if not isinstance(root, MaterializeExecutor) or root.conflict or root.ttl is not None or root.version_columns:
        return "its root is not a materialized view"
    if job.into is not None or runtime.subscribers.get(job.relation_id):
        return "other jobs read its changes"
    if not job.scans:
        return "it reads no source"
    index = {id(n): i for i, n in enumerate(job.nodes)}
    sources: dict[int, SourceSpec] = {}
    for upstream, node in job.scans:
        src = runtime.jobs.get(upstream)
        ex = src.nodes[0].executor if src is not None and len(src.nodes) == 1 else None
        if not isinstance(ex, SourceExecutor) or type(ex.reader).plan is SourceReader.plan:
            return "it reads a table, an MV or a source whose splits the driver cannot assign"
        spec = sources.setdefault(upstream, SourceSpec(upstream, ex.reader, ex.types, ex.stream_key,
                                                       ex.row_id_index, list(ex.generated), ex.name))
        spec.scans.append(index[id(node)])
    parallelism = 1
    nodes: list[NodeSpec] = []
    for n in job.nodes:
        ex = n.executor
        down = [(index[id(d)], side) for d, side in n.downstream]
        if isinstance(ex, PassThrough):
            nodes.append(NodeSpec(SCAN, down))
        elif isinstance(ex, STATELESS_TYPES):
            nodes.append(NodeSpec(STATELESS, down, executor=ex))
        elif isinstance(ex, SparkExchange):
            if ex.factory.temporal or ex.factory.clock is not None:
                return f"{ex.identity} depends on the time or a watermark"
            nodes.append(NodeSpec(EXCHANGE, down, dist_keys=ex.dist_keys, parallelism=ex.parallelism,
                                  combiner=ex.combiner))
            parallelism = max(parallelism, ex.parallelism)
        elif n is job.root:
            nodes.append(NodeSpec(MATERIALIZE, down, dist_keys=[list(root.stream_key)]))
        else:
            return f"{ex.identity} has no stage form yet"
    nodes[-1].parallelism = parallelism
    inline = _keyed_by_its_aggregation(job)
    stages = [StageSpec(SOURCE_STAGE, -1, 0)]
    for i, spec in enumerate(nodes):
        if spec.kind in (EXCHANGE, MATERIALIZE) and not (spec.kind == MATERIALIZE and inline is not None):
            spec.stage = len(stages)
            stages.append(StageSpec(spec.stage, i, spec.parallelism))
    if inline is not None:
        nodes[-1].stage = nodes[inline].stage
    _link(nodes, stages, sources)
    table = root.table
    mat = MatSpec(table.table_id, table.schema, list(table.pk_indices), list(root.types),
                  by_key=getattr(root, "by_key", False), dist=list(table.dist_key_indices))
    return JobGraph(f"{runtime.store_url}#{job.relation_id}#{id(job)}", nodes, sources, stages, mat)


def _keyed_by_its_aggregation(job: StreamJob) -> int | None:
    """The index of the partitioned aggregation whose output the materialize receives
    through plain projections only, when the MV's pk holds every group key column (so each
    MV row belongs to exactly one of its actors); else None."""
    from rw_cli.spark.exchange import SparkExchange

    preds: dict[int, list[int]] = {}
    for i, n in enumerate(job.nodes):
        for d, _ in n.downstream:
            preds.setdefault(id(d), []).append(i)
    cols = list(job.root.executor.stream_key)
    at = len(job.nodes) - 1
    while True:
        p = preds.get(id(job.nodes[at]), [])
        if len(p) != 1:
            return None
        at = p[0]
        ex = job.nodes[at].executor
        if isinstance(ex, ProjectExecutor):
            if any(ex.refs[c] is None for c in cols):
                return None
            cols = [ex.refs[c] for c in cols]
            continue
        if not isinstance(ex, SparkExchange) or ex.dist_keys is None or ex.factory.fn.__name__ != "_agg_actor":
            return None
        groups = len(ex.factory.kwargs["group_keys"])
        parallelism = max(n.executor.parallelism for n in job.nodes if isinstance(n.executor, SparkExchange))
        return at if groups and set(range(groups)) <= set(cols) and ex.parallelism == parallelism else None


def _link(nodes: list[NodeSpec], stages: list[StageSpec], sources: dict[int, SourceSpec]) -> None:
    """Each stage's producers and consumers: the boundaries its stateless nodes lead to."""
    for st in stages:
        starts = [s for spec in sources.values() for s in spec.scans] if st.id == SOURCE_STAGE \
            else [d for d, _ in nodes[st.node].downstream]
        seen: set[int] = set()
        while starts:
            i = starts.pop()
            if i in seen:
                continue
            seen.add(i)
            if nodes[i].kind in (EXCHANGE, MATERIALIZE) and nodes[i].stage == st.id:
                continue  # runs in this stage's own tasks
            if nodes[i].kind in (EXCHANGE, MATERIALIZE):
                if nodes[i].stage not in st.consumers:
                    st.consumers.append(nodes[i].stage)
                    stages[nodes[i].stage].producers.append(st.id)
            else:
                starts += [d for d, _ in nodes[i].downstream]
