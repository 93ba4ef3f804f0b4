"""One Spark job per epoch for a compiled stream job (`JobGraph`): the driver's side.

The driver (the `rw` process, RisingWave's meta) pins the committed version, reserves SST
ids for every task and runs the epoch's RDD graph (`EpochRDD`, built while the previous
epoch's job ran) with one action, the epoch's own values set as a property of the job. The
tasks read the sources, run every executor next to its state and write the SSTs of their
vnodes; what comes back is metadata only (SST infos, counters), which the driver adds to the
epoch's version. No row data passes through the driver.

While an epoch's actors run, the next epoch's stage 0 reads the ranges its tick is expected
to assign (`next_ranges`, `read_ahead`; `epoch_rdd.ReadAhead`): Spark's fixed cost of a
stage then falls beside the actors' work instead of before it.
"""
from __future__ import annotations

import json
from collections import Counter

from rw_cli.common.epoch import EpochPair
from rw_cli.engine import eval_errors
from rw_cli.engine.runtime import StreamJob
from rw_cli.engine.source import SplitRange
from rw_cli.spark.graph import EXCHANGE, SOURCE_STAGE, JobGraph
from rw_cli.spark.epoch_rdd import EpochRDD, ReadAhead, build_rdd, run_rdd
from rw_cli.spark.stage import EPOCH_INFO, EpochInfo, encode_info
from rw_cli.store.version import LogSegment, SstInfo

SST_IDS_PER_TASK = 16


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
    reads = {s: needed.get(s) for s in graph.sources}
    udfs = python_udf.definitions()
    key = _read_key(assignments, reads, udfs)
    rdd = runtime.spare_rdd(job.relation_id)
    try:
        if rdd is not None and rdd.fits(graph, len(assignments), sc) and (rdd.ahead is None or rdd.ahead.key == key):
            runtime.stats["prebuilt_rdds"] += 1
            runtime.stats["read_ahead_epochs"] += rdd.ahead is not None
        else:
            if rdd is not None:
                rdd.discard()
            rdd = None
            rdd = build_rdd(sc, graph, len(assignments))
        version = snap.version.encode()
        tasks = {i: ex.task(epoch, version, {p: reserved[(graph.nodes[i].stage, p)] for p in range(ex.parallelism)})
                 for i, ex in exchanges.items()}
        root = graph.root_stage
        info = EpochInfo(epoch.curr, epoch.prev, version, runtime.store_url, runtime.endpoint, tasks,
                         {p: reserved[(root.id, p)] for p in range(root.parallelism)},
                         reads, udfs, splits=assignments)
        property_value = encode_info(info)
        steady = runtime.expected_ranges.get(job.relation_id) == assignments
        ahead = next_ranges(runtime, assignments)
        runtime.expected_ranges[job.relation_id] = ahead
        if steady and rdd.ahead is None and rdd.ahead_deps and assignments:
            # this epoch's stage 0 as map stages of their own too: the next epoch's read
            # waits for them, so that it never takes the slots this epoch's actors are due
            read_ahead(sc, rdd, _stage0_info(runtime, assignments, reads, udfs), key)

        def next_epochs_rdd(job_done) -> None:  # while this epoch's job runs
            spare = build_rdd(sc, graph, rdd.splits)
            runtime.keep_spare_rdd(job.relation_id, spare)
            if steady and ahead and len(ahead) <= spare.splits and spare.ahead_deps:
                if rdd.ahead is not None:
                    rdd.ahead.wait(job_done)
                read_ahead(sc, spare, _stage0_info(runtime, ahead, reads, udfs), _read_key(ahead, reads, udfs))

        results = runtime.run_job(lambda: collect(sc, rdd, property_value), epoch, f"job {job.relation_id}",
                                  meanwhile=next_epochs_rdd)
    except BaseException:
        # the epoch fails as a whole: what its tasks wrote is referenced by no version, and
        # with its ids released vacuum deletes it (orphans of failed attempts)
        store.release_sst_ids([i for ids in reserved.values() for i in ids])
        if rdd is not None and rdd.ahead is not None:
            rdd.ahead.cancel()
        spare = runtime.spare_rdd(job.relation_id)  # (read ahead from ranges that go back)
        if spare is not None:
            spare.discard()
        raise
    finally:
        snap.close()
        if rdd is not None:
            rdd.release()
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


def _read_key(assignments, reads: dict, udfs: dict) -> tuple:
    """What stage 0 reads and runs: an epoch may use a read-ahead of the same key only."""
    return (list(assignments), {s: None if c is None else sorted(c) for s, c in reads.items()}, udfs)


def next_ranges(runtime, assignments: list[tuple[int, SplitRange]]) -> list[tuple[int, SplitRange]]:
    """The ranges the next tick is expected to assign: each split's range again, right
    after this one, as far as its reader knows the units exist (`plan_ahead`); a split at
    its end drops out, as the tick's plan leaves it out."""
    out = []
    for src, r in assignments:
        end = runtime.source_reader(src).plan_ahead(r.split, r.end, r.end - r.start)
        if end is None:
            return []
        if end > r.end:
            out.append((src, SplitRange(r.split, r.ordinal, r.end, end)))
    return out


def _stage0_info(runtime, ranges: list, reads: dict, udfs: dict) -> EpochInfo:
    """What stage 0 needs of an epoch's info (its ranges, the columns read, the functions)."""
    return EpochInfo(0, 0, b"", runtime.store_url, runtime.endpoint, {}, {}, reads, udfs, splits=ranges)


def read_ahead(sc, rdd: EpochRDD, info: EpochInfo, key: tuple) -> None:
    """Submit stage 0 of `rdd` for `info`'s ranges now (`ReadAhead`): its map stages run as
    soon as the running epoch's tasks leave a slot free (Spark's FIFO order puts them after
    that epoch's), with `info` as their job's property."""
    sc.setLocalProperty(EPOCH_INFO, encode_info(info))
    try:
        rdd.ahead = ReadAhead(key, [])
        for dep in rdd.ahead_deps:
            rdd.ahead.futures.append(sc._jsc.sc().submitMapStage(dep))
    finally:
        sc.setLocalProperty(EPOCH_INFO, None)


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
