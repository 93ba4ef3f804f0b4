"""One Spark job per epoch for a compiled stream job (`JobGraph`): the driver's side.

The driver (the `rw` process, RisingWave's meta) pins the committed version, reserves SST
ids for every task, builds the RDD graph — stage 0 over the epoch's split ranges, then one
`partitionBy` shuffle into each fragment's stage and into the materialize stage — and runs
it with one action. The tasks read the sources, run every executor next to its state and
write the SSTs of their vnodes; what comes back is metadata only (SST infos, counters),
which the driver adds to the epoch's version. No row data passes through the driver.

A stage whose output feeds two stages (q5's shared window count, q7's bid scan feeding an
aggregation and a join) is persisted for the epoch, so its tasks run once.
"""
from __future__ import annotations

import json
from collections import Counter

from rw_cli.common.epoch import EpochPair
from rw_cli.engine import eval_errors
from rw_cli.engine.runtime import StreamJob
from rw_cli.engine.source import SplitRange
from rw_cli.spark.graph import EXCHANGE, SOURCE_STAGE, JobGraph
from rw_cli.spark.stage import EpochInfo, stage_function
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
    """An RDD of `n` partitions, partition i holding i: stage 0's tasks find their split
    range in the epoch's info by it. It is the same RDD every epoch (no data goes to the
    JVM for it, as `parallelize` would write for each epoch's ranges)."""
    key = (id(sc), n)
    if key not in _indexes:
        if len(_indexes) > 64 or any(k[0] != id(sc) for k in _indexes):
            _indexes.clear()
        _indexes[key] = sc.parallelize(range(n), n)
    return _indexes[key]


def build_rdd(sc, graph: JobGraph, info: EpochInfo):
    """The epoch's RDD graph; (the last stage's RDD, RDDs persisted for the epoch)."""
    from pyspark import StorageLevel

    rdds, persisted = {}, []
    src = _indexes_rdd(sc, max(1, len(info.splits)))
    for st in graph.stages:
        if st.id == SOURCE_STAGE:
            rdd = src.mapPartitionsWithIndex(stage_function(graph, info, st.id))
        else:
            parts = [rdds[p].filter(_to_stage(st.id)) for p in st.producers]
            union = parts[0] if len(parts) == 1 else sc.union(parts)
            rdd = shuffle_to(union, st.parallelism).mapPartitionsWithIndex(stage_function(graph, info, st.id))
        if len(st.consumers) > 1:  # computed once, read by every consumer (before they pipeline)
            rdd = rdd.persist(StorageLevel.MEMORY_AND_DISK)
            persisted.append(rdd)
        rdds[st.id] = rdd
    return rdds[graph.root_stage.id], persisted


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
    persisted: list = []
    try:
        version = snap.version.encode()
        tasks = {i: ex.task(epoch, version, {p: reserved[(graph.nodes[i].stage, p)] for p in range(ex.parallelism)})
                 for i, ex in exchanges.items()}
        root = graph.root_stage
        info = EpochInfo(epoch.curr, epoch.prev, version, runtime.store_url, runtime.endpoint, tasks,
                         {p: reserved[(root.id, p)] for p in range(root.parallelism)},
                         {s: needed.get(s) for s in graph.sources}, python_udf.definitions(), splits=assignments)
        sc = runtime.spark.sparkContext
        rdd, persisted = build_rdd(sc, graph, info)
        results = runtime.run_job(lambda: collect(sc, rdd), epoch, f"job {job.relation_id}")
    except BaseException:
        # the epoch fails as a whole: what its tasks wrote is referenced by no version, and
        # with its ids released vacuum deletes it (orphans of failed attempts)
        store.release_sst_ids([i for ids in reserved.values() for i in ids])
        raise
    finally:
        snap.close()
        for r in persisted:
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


def collect(sc, rdd) -> list:
    """`rdd.collect()` through `SparkContext.runJob`: Spark's closure cleaner then parses
    PythonRDD's class for the job's function, not RDD's (four times larger), every epoch."""
    return sc.runJob(rdd, _all, range(rdd.getNumPartitions()))


def _all(records):
    return records


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
