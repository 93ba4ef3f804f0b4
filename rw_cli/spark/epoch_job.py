"""One Spark job per epoch for a compiled stream job (`JobGraph`): the driver's side.

The driver (the `rw` process, RisingWave's meta) pins the committed version, reserves SST
ids for every task and runs the epoch's RDD graph (`EpochRDD`, built while the previous
epoch's job ran) with one action, the epoch's own values set as a property of the job. The
tasks read the sources, run every executor next to its state and write the SSTs of their
vnodes; what comes back is metadata only (SST infos, counters), which the driver adds to the
epoch's version. No row data passes through the driver.
"""
from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass

from rw_cli.common.epoch import EpochPair
from rw_cli.engine import eval_errors
from rw_cli.engine.runtime import StreamJob
from rw_cli.engine.source import SplitRange
from rw_cli.spark.graph import EXCHANGE, SOURCE_STAGE, JobGraph
from rw_cli.spark.stage import EPOCH_INFO, EpochInfo, encode_info, stage_function
from rw_cli.store.version import LogSegment, SstInfo

SST_IDS_PER_TASK = 16


def _partition(k: int) -> int:
    """partitionBy's function: a record's key is its partition (the actor index)."""
    return k


def shuffle_to(rdd, n: int):
    """Spark's shuffle of (partition, record) pairs into `n` partitions, each by its key.
    What it moves are a few large pickled batches per task, which Java's serialization
    writes as fast as Kryo; Spark would pick Kryo for them and build one anew in every
    task (a sixth of the JVM's CPU in an epoch job)."""
    out = rdd.partitionBy(n, _partition)
    shuffled = out._jrdd.rdd().dependencies().head().rdd()  # the ShuffledRDD, before it runs
    shuffled.setSerializer(_java_serializer(rdd.ctx))
    return out


_serializers: dict[int, object] = {}


def _java_serializer(sc):
    key = id(sc)
    if key not in _serializers:
        _serializers.clear()  # (another SparkContext's is no use any more)
        _serializers[key] = sc._jvm.org.apache.spark.serializer.JavaSerializer(sc._jsc.sc().conf())
    return _serializers[key]


def _to_stage(stage: int):
    return lambda kv: kv[1][0] == stage


_indexes: dict[tuple[int, int], object] = {}


def _indexes_rdd(sc, n: int):
    """An RDD of `n` empty partitions: stage 0's task i reads the epoch's split range i (by
    its partition index). It is the same RDD every epoch (no data goes to the JVM for it)."""
    key = (id(sc), n)
    if key not in _indexes:
        if len(_indexes) > 64 or any(k[0] != id(sc) for k in _indexes):
            _indexes.clear()
        _indexes[key] = sc.parallelize([], n)
    return _indexes[key]


_pickled: dict[int, tuple[JobGraph, bytes]] = {}


def pickled_graph(graph: JobGraph) -> bytes:
    """The graph pickled once: every epoch's stage functions ship these bytes (pickling
    the executors and readers again each epoch cost the driver ~9 ms)."""
    got = _pickled.get(id(graph))
    if got is None or got[0] is not graph:
        from pyspark import cloudpickle

        if len(_pickled) > 16:
            _pickled.clear()
        got = _pickled[id(graph)] = (graph, cloudpickle.dumps(graph))
    return got[1]


@dataclass
class EpochRDD:
    """An epoch job's RDD graph — stage 0 over the split ranges, then one `partitionBy`
    shuffle into each fragment's stage and into the materialize stage — ready to run for
    any epoch: what changes per epoch (`EpochInfo`) travels as a property of the job
    (`stage.EPOCH_INFO`), not in the stages' functions. So the next epoch's RDDs are built
    while this epoch's job runs, off its path (`run_epoch`); a shuffle's map output is its
    epoch's own, so an EpochRDD runs once."""
    graph: JobGraph
    splits: int  # stage 0's partitions
    sc_id: int
    root: object  # the last stage's RDD: the action collects its records (metadata only)
    persisted: list  # RDDs of stages read by two stages, persisted for the epoch

    def fits(self, graph: JobGraph, splits: int, sc) -> bool:
        """Whether these RDDs run an epoch of `graph` with `splits` ranges to read (a stage-0
        task past the last range reads nothing)."""
        return self.graph is graph and self.splits >= splits and self.sc_id == id(sc)


def build_rdd(sc, graph: JobGraph, splits: int) -> EpochRDD:
    """The RDDs of an epoch's job with `splits` split ranges to read. A stage whose output
    feeds two stages (q5's shared window count, q7's bid scan feeding an aggregation and a
    join) is persisted for the epoch, so its tasks run once."""
    from pyspark import StorageLevel

    shipped = pickled_graph(graph)
    rdds, persisted = {}, []
    src = _indexes_rdd(sc, max(1, splits))
    for st in graph.stages:
        if st.id == SOURCE_STAGE:
            rdd = src.mapPartitionsWithIndex(stage_function(shipped, st.id))
        else:
            parts = [rdds[p].filter(_to_stage(st.id)) for p in st.producers]
            union = parts[0] if len(parts) == 1 else sc.union(parts)
            rdd = shuffle_to(union, st.parallelism).mapPartitionsWithIndex(stage_function(shipped, st.id))
        if len(st.consumers) > 1:  # computed once, read by every consumer (before they pipeline)
            rdd = rdd.persist(StorageLevel.MEMORY_AND_DISK)
            persisted.append(rdd)
        rdds[st.id] = rdd
    root = rdds[graph.root_stage.id]
    root._jrdd  # noqa: B018 - the JVM's RDDs are made now, not when the job starts
    return EpochRDD(graph, splits, id(sc), root, persisted)


def run_epoch(runtime, job: StreamJob, graph: JobGraph, epoch: EpochPair,
              ranges: dict[int, list[SplitRange]], needed: dict[int, set[int] | None]) -> dict[int, tuple[int, int]]:
    """Run the job's epoch as one Spark job and stage the SSTs its tasks wrote for the
    commit of `epoch.prev`; the rows and bytes each source read. Nothing runs when no
    source has data and no fragment is new (nothing can change)."""
    from rw_cli.engine import python_udf

    exchanges = {i: job.nodes[i].executor for i, n in enumerate(graph.nodes) if n.kind == EXCHANGE}
    assignments = [(s, r) for s in sorted(graph.sources) for r in ranges.get(s, [])]
    if not assignments and not any(ex.fresh for ex in exchanges.values()):
        return {}
    store = runtime.store
    store.sync()  # tasks read the last committed version, which must hold everything
    snap = store.pin_snapshot()
    reserved = {(st.id, p): [store.alloc_sst_id() for _ in range(SST_IDS_PER_TASK)]
                for st in graph.stages if st.id != SOURCE_STAGE for p in range(st.parallelism)}
    sc = runtime.spark.sparkContext
    rdd = runtime.spare_rdd(job.relation_id)
    try:
        if rdd is not None and rdd.fits(graph, len(assignments), sc):
            runtime.stats["prebuilt_rdds"] += 1
        else:
            rdd = None
            rdd = build_rdd(sc, graph, len(assignments))
        version = snap.version.encode()
        tasks = {i: ex.task(epoch, version, {p: reserved[(graph.nodes[i].stage, p)] for p in range(ex.parallelism)})
                 for i, ex in exchanges.items()}
        root = graph.root_stage
        info = EpochInfo(epoch.curr, epoch.prev, version, runtime.store_url, runtime.endpoint, tasks,
                         {p: reserved[(root.id, p)] for p in range(root.parallelism)},
                         {s: needed.get(s) for s in graph.sources}, python_udf.definitions(), splits=assignments)
        property_value = encode_info(info)

        def next_epochs_rdd() -> None:  # while this epoch's job runs
            runtime.keep_spare_rdd(job.relation_id, build_rdd(sc, graph, rdd.splits))

        results = runtime.run_job(lambda: collect(sc, rdd, property_value), epoch, f"job {job.relation_id}",
                                  meanwhile=next_epochs_rdd)
    except BaseException:
        # the epoch fails as a whole: what its tasks wrote is referenced by no version, and
        # with its ids released vacuum deletes it (orphans of failed attempts)
        store.release_sst_ids([i for ids in reserved.values() for i in ids])
        raise
    finally:
        snap.close()
        for r in rdd.persisted if rdd is not None else []:
            r.unpersist(blocking=False)
    ssts, counts = _metadata(results, runtime.stats)
    used = {s.id for s in ssts}
    store.release_sst_ids([i for ids in reserved.values() for i in ids if i not in used])
    runtime.stage_ssts(epoch.prev, ssts)
    for ex in exchanges.values():
        ex.fresh = False
        ex._ran = epoch.prev
    runtime.stats["spark_jobs"] += 1
    runtime.stats["fused_epochs"] += 1
    return counts


def collect(sc, rdd: EpochRDD, info: str) -> list:
    """Run the epoch's job: its info set as the job's property, every partition of the last
    stage collected through `PythonRDD.runJob` (as `SparkContext.runJob` does, without
    adding a Python function to the RDDs: Spark's closure cleaner then parses PythonRDD's
    class for the job's function, not RDD's, four times larger)."""
    sc.setLocalProperty(EPOCH_INFO, info)
    try:
        return run_rdd(sc, rdd.root)
    finally:
        sc.setLocalProperty(EPOCH_INFO, None)


def run_rdd(sc, rdd) -> list:
    """Every record of `rdd`, through `PythonRDD.runJob`."""
    from pyspark.util import _load_from_socket

    sock_info = sc._jvm.PythonRDD.runJob(sc._jsc.sc(), rdd._jrdd, list(range(rdd.getNumPartitions())))
    with _load_from_socket(sock_info, rdd._jrdd_deserializer) as stream:
        return list(stream)


def _metadata(results: list, stats: Counter) -> tuple[list[SstInfo | LogSegment], dict[int, tuple[int, int]]]:
    """The SSTs the tasks wrote and the rows/bytes read per source, from their metadata."""
    ssts: list[SstInfo | LogSegment] = []
    counts: dict[int, tuple[int, int]] = {}
    for _, rec in results:
        payload = rec[6]
        stats["driver_meta_bytes"] += len(payload)
        m = json.loads(payload)
        ssts += [LogSegment.from_json(d) if "log" in d else SstInfo.from_json(d) for d in m.get("ssts", [])]
        for k, v in m.get("stats", {}).items():
            stats[k] += v
        for message in m.get("eval_errors", []):
            eval_errors.record(message)
        for src, (rows, nbytes) in m.get("sources", {}).items():
            r, b = counts.get(int(src), (0, 0))
            counts[int(src)] = (r + rows, b + nbytes)
    return ssts, counts
