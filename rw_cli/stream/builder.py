"""Turns a stream plan into a job of executors with their state tables.

State table ids are allocated in a fixed order while walking the plan, and recorded in the
catalog; on recovery the same plan walks in the same order and gets the same ids back, so
every executor finds its state.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import pyarrow as pa

from rw_cli.common.types import BIGINT, VARCHAR, DataType
from rw_cli.engine.exchange import ExchangeExecutor, owned_vnodes
from rw_cli.engine.filter import FilterExecutor
from rw_cli.engine.agg_call import state_types
from rw_cli.engine.hash_agg import HashAggExecutor
from rw_cli.engine.hash_join import HashJoinExecutor
from rw_cli.engine.materialize import MaterializeExecutor
from rw_cli.engine.partition_recompute import PartitionRecomputeExecutor
from rw_cli.engine.union import UnionExecutor
from rw_cli.engine.values import ValuesExecutor
from rw_cli.engine.watermark import WatermarkExecutor
from rw_cli.engine.project import ProjectExecutor
from rw_cli.engine.project_set import ProjectSetExecutor
from rw_cli.engine.runtime import Node, PassThrough, StreamJob
from rw_cli.meta.catalog import RelationCatalog
from rw_cli.stream.plan import (PlanNode, append_only, StreamFilter, StreamHashAgg, StreamHashJoin, StreamMaterialize,
                             StreamChangelog, StreamPartitionRecompute, StreamProject, StreamProjectSet,
                             StreamTableScan, StreamUnion, StreamValues)
from rw_cli.store.log_table import LogTable
from rw_cli.store.state_table import StateTable


def relation_schema(rel: RelationCatalog) -> pa.Schema:
    return pa.schema([pa.field(c.name, c.type.arrow()) for c in rel.columns])


def relation_state_table(store, rel: RelationCatalog) -> StateTable:
    return StateTable(store, rel.id, relation_schema(rel), list(rel.pk), dist_key_indices=rel.dist_key)


def table_job(store, rel: RelationCatalog, watermark: tuple[str, DataType] | None = None) -> StreamJob:
    """A table's job: DML chunks enter its materialize (which resolves pk conflicts), after
    the watermark tracker when the table declares one (`watermark`: its expression as DuckDB
    SQL over the positional columns, and its type)."""
    types = [c.type for c in rel.columns]
    mat = Node(MaterializeExecutor(types, list(rel.pk), relation_state_table(store, rel),
                                   conflict=rel.on_conflict if rel.user_pk else None,
                                   version_columns=rel.version_columns))
    if not rel.watermark:
        return StreamJob(rel.id, [mat], [])
    expr, expr_type = watermark
    wm = Node(WatermarkExecutor(expr, expr_type, types, rel.stream_key, mat.executor.table,
                                ttl_column=rel.ttl_column), [(mat, 0)])
    if rel.ttl_column is not None:
        mat.executor.ttl = wm.executor
    return StreamJob(rel.id, [wm, mat], [])




@dataclass(frozen=True)
class TableSpec:
    """A state table's identity and layout; each actor opens its own handle on its store.
    `log`: the rows are only ever inserted and read back whole, kept as an append log."""
    table_id: int
    schema: pa.Schema
    pk: tuple[int, ...]
    dist: tuple[int, ...] | None = None
    log: bool = False

    def open(self, store) -> StateTable | LogTable:
        if self.log:
            return LogTable(store, self.table_id, self.schema)
        return StateTable(store, self.table_id, self.schema, list(self.pk),
                          dist_key_indices=None if self.dist is None else list(self.dist))


@dataclass
class ActorFactory:
    """Builds one actor of a partitioned fragment on a given store. Picklable, so that a
    Spark task can build the same actor next to its data; `clock` (EMIT ON WINDOW CLOSE's
    watermark, read in the driver) is not shipped — the driver passes its value instead."""
    fn: Callable
    kwargs: dict
    temporal: bool = False
    clock: Callable | None = None

    def __call__(self, store, vnodes=None, fresh: bool = True, clock: Callable | None = None):
        return self.fn(store, vnodes, fresh, clock or self.clock, **self.kwargs)

    def __getstate__(self) -> dict:
        return {**self.__dict__, "clock": None}


def _join_actor(store, vnodes, fresh, clock, *, specs, **kw) -> HashJoinExecutor:
    return HashJoinExecutor(state_tables=tuple(s.open(store) for s in specs), fresh=fresh, vnodes=vnodes,
                            clock=clock, **kw)


def _recompute_actor(store, vnodes, fresh, clock, *, specs, now, **kw) -> PartitionRecomputeExecutor:
    return PartitionRecomputeExecutor(state_tables=[s.open(store) for s in specs], fresh=fresh, vnodes=vnodes,
                                      now_table=now.open(store) if now else None, clock=clock, **kw)


def _agg_actor(store, vnodes, fresh, clock, *, result, minput, **kw) -> HashAggExecutor:
    return HashAggExecutor(result_table=result.open(store), minput_tables={i: s.open(store) for i, s in minput.items()},
                           **kw)


def _compiled(p: PlanNode, value):
    """A node's compiled expression (the SQL layer compiles a plan before it is built)."""
    if value is None:
        raise TypeError(f"{type(p).__name__}'s expressions were not compiled (rw_cli.sql.expr_compile.compile_plan)")
    return value


class StreamBuilder:
    def __init__(self, store, alloc_table_id: Callable[[], int], fresh: bool = True, parallelism: int = 1,
                 watermark_of: Callable[[int], object] | None = None, exchange: Callable | None = None,
                 share: bool = False, logs: bool = False):
        self.store = store
        self.fresh = fresh  # False when rebuilding a recovered job
        self.alloc = alloc_table_id
        self.parallelism = max(1, parallelism)
        self.watermark_of = watermark_of  # relation id -> its WatermarkExecutor (EMIT ON WINDOW CLOSE)
        # the runtime's way to run a partitioned fragment's actors (None: in this process)
        self.exchange = exchange
        self.nodes: list[Node] = []
        self.scans: list[tuple[int, Node]] = []
        # share: a subplan identical to one already built is that node again, its output going
        # to both parents (Nexmark q5 counts the same HOP windows twice in its SQL)
        self._built: dict[str, Node] | None = {} if share else None
        # logs: the materialized inputs that only ever insert are append logs
        self.logs = logs

    def build(self, root: StreamMaterialize, rel: RelationCatalog) -> StreamJob:
        child = self.build_node(root.inputs[0])
        mat = MaterializeExecutor(root.types, root.stream_key, relation_state_table(self.store, rel),
                                  conflict="overwrite" if rel.altered else None, by_key=rel.altered)
        return self.finish(child, mat, rel)

    def finish(self, child: Node, root_executor, rel: RelationCatalog) -> StreamJob:
        """The job whose root executor (a materialize or a sink) takes `child`'s output."""
        node = Node(root_executor)
        child.downstream.append((node, 0))
        self.nodes.append(node)
        return StreamJob(rel.id, self.nodes, self.scans)

    def _table_spec(self, types: list[DataType], pk: list[int], names: list[str] | None = None,
                    dist: list[int] | None = None) -> TableSpec:
        """Allocates a state table id now (in plan order, so recovery gets the same ids)."""
        names = names or [f"_{i}" for i in range(len(types))]
        schema = pa.schema([pa.field(n, t.arrow()) for n, t in zip(names, types)])
        return TableSpec(self.alloc(), schema, tuple(pk), None if dist is None else tuple(dist))

    def build_node(self, p: PlanNode) -> Node:
        if self._built is None:
            return self._build_node(p)
        key = repr(p)  # the whole subplan: node fields and inputs
        node = self._built.get(key)
        if node is None:
            node = self._built[key] = self._build_node(p)
        return node

    def _build_node(self, p: PlanNode) -> Node:
        if isinstance(p, StreamValues):
            from rw_cli.engine import duck

            node = Node(ValuesExecutor(duck.query(p.sql), p.types, p.stream_key, fresh=self.fresh))
            self.nodes.append(node)
            return node
        if isinstance(p, StreamTableScan):
            node = Node(PassThrough(p.types, p.stream_key))
            self.scans.append((p.relation.id, node))
            self.nodes.append(node)
            return node
        children = [self.build_node(c) for c in p.inputs]
        ex = self._executor(p)
        node = Node(ex)
        for side, c in enumerate(children):
            c.downstream.append((node, side))
        self.nodes.append(node)
        return node

    def _parallel(self, make: ActorFactory, dist_keys: list[list[int]]):
        """One executor, or N actors behind a hash exchange when the operator is partitioned
        (an unpartitioned one is a single actor)."""
        n = self.parallelism if all(dist_keys) else 1
        if self.exchange is not None:
            return self.exchange(make, n, dist_keys if all(dist_keys) else None, self.fresh)
        if n == 1:
            return make(self.store, None, self.fresh)
        return ExchangeExecutor([make(self.store, owned_vnodes(i, n), self.fresh) for i in range(n)], dist_keys)

    def _executor(self, p: PlanNode):
        if isinstance(p, StreamChangelog):
            from rw_cli.engine.changelog import ChangelogExecutor

            return ChangelogExecutor(p.types, p.stream_key)
        if isinstance(p, StreamProject):
            inp = p.inputs[0].types
            return ProjectExecutor(_compiled(p, p.compiled), p.types, p.stream_key)
        if isinstance(p, StreamFilter):
            return FilterExecutor(_compiled(p, p.compiled), p.types, p.stream_key)
        if isinstance(p, StreamProjectSet):
            lists, constant = _compiled(p, p.compiled)
            return ProjectSetExecutor(lists, p.types, p.stream_key, constant)
        if isinstance(p, StreamUnion):
            return UnionExecutor(p.layouts, p.types, p.stream_key)
        if isinstance(p, StreamHashJoin):
            lt, rt = p.inputs[0].types, p.inputs[1].types
            cond = _compiled(p, p.compiled_condition) if p.condition is not None else None
            lsk, rsk = p.inputs[0].stream_key, p.inputs[1].stream_key
            specs = tuple(self._input_table(i.types, k, i.stream_key, log=append_only(i, strict=True))
                          for i, k in zip(p.inputs, (p.left_keys, p.right_keys)))
            # a temporal join over a left side that retracts remembers the rows each left row
            # produced (its memo, keyed by the left stream key, then the right one), in place
            # of the left rows
            # (an event-time one keeps its pending left rows instead)
            memo = p.lookup and not append_only(p.inputs[0]) and p.event_time is None
            if memo:
                specs = (self._input_table(lt + rt, p.left_keys, lsk + [len(lt) + k for k in rsk]), specs[1])
            return self._parallel(ActorFactory(_join_actor, dict(
                kind=p.kind, left_types=lt, right_types=rt, left_keys=p.left_keys, right_keys=p.right_keys,
                null_safe=p.null_safe, condition=cond, left_sk=lsk, right_sk=rsk, specs=specs, lookup=p.lookup,
                memo=memo, event_time=p.event_time), temporal=p.event_time is not None,
                clock=self._watermarks_clock(p.watermark_tables)), [p.left_keys, p.right_keys])
        if isinstance(p, StreamPartitionRecompute):
            keys = [p.partition_keys, p.right_partition_keys][: len(p.inputs)]
            # (a pruned top-N deletes the input rows that leave its output)
            specs = [self._input_table(i.types, k, i.stream_key,
                                       log=append_only(i, strict=True) and not p.prune_to_output)
                     for i, k in zip(p.inputs, keys)]
            now = self._table_spec([VARCHAR], [], ["now"]) if p.temporal else None
            offsets = [0, len(p.inputs[0].types)][: len(p.inputs)]
            return self._parallel(ActorFactory(_recompute_actor, dict(
                identity=p.name, input_types=[i.types for i in p.inputs], input_keys=[i.stream_key for i in p.inputs],
                partition_keys=keys, sql=p.sql, types=p.types, stream_key=p.stream_key, specs=specs,
                column_offsets=offsets, now=now, prune_to_output=p.prune_to_output),
                temporal=bool(p.temporal), clock=self._clock(p)), keys)
        if isinstance(p, StreamHashAgg):
            inp = p.inputs[0].types
            keys = [inp[k] for k in p.group_keys]
            gk = list(range(len(keys)))
            names = [f"_{i}" for i in gk] + ["_rc"]
            types = keys + [BIGINT]
            for i, c in enumerate(p.calls):
                for n, t in state_types(c):
                    names.append(f"a{i}_{n}")
                    types.append(t)
            result = self._table_spec(types, gk, names)
            # min/max over an append-only input never retract: no materialized input needed
            minput = {} if append_only(p.inputs[0]) else \
                {i: self._table_spec(keys + [c.arg_type, BIGINT], gk + [len(keys)], dist=gk)
                 for i, c in enumerate(p.calls) if c.needs_minput}
            return self._parallel(ActorFactory(_agg_actor, dict(
                input_types=inp, group_keys=p.group_keys, calls=p.calls, result=result, minput=minput)),
                [list(p.group_keys)])
        raise TypeError(f"no executor for {type(p).__name__}")

    def _watermarks_clock(self, tables: list[int]):
        """The lowest of some tables' watermarks, as a SQL literal (an event-time temporal
        join releases a left row once both its sides' watermarks have passed it)."""
        if not tables or self.watermark_of is None:
            return None
        trackers = [self.watermark_of(t) for t in tables]
        if any(t is None for t in trackers):
            return None
        return lambda epoch: f"LEAST({', '.join(t.literal() for t in trackers)})"

    def _clock(self, p):
        """EMIT ON WINDOW CLOSE reads the watermark of a table instead of the time."""
        if p.watermark_of is None:
            return None
        tracker = self.watermark_of(p.watermark_of)
        return lambda epoch: tracker.literal()

    def _input_table(self, types: list[DataType], partition_keys: list[int], stream_key: list[int],
                     log: bool = False):
        """Materialized input of a partitioned operator: pk = partition key + stream key, so a
        partition's rows are contiguous and its vnode comes from the partition key. An input
        that only ever inserts is an append log (in jobs that record `append_logs`)."""
        pk = list(dict.fromkeys(list(partition_keys) + list(stream_key)))
        spec = self._table_spec(types, pk, dist=list(partition_keys))
        return replace(spec, log=True) if log and self.logs else spec
