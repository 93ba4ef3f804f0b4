"""The Spark runtime: the embedded runtime's job graph, run by Spark.

An MV job over splittable sources (nexmark, datagen) whose shape `rw_cli.spark.graph`
compiles runs as ONE Spark job per epoch (`rw_cli.spark.epoch_job`): the driver assigns each
split's offset range at ticks and commits the version from the metadata the tasks return;
tasks read the sources, run every executor next to its state, shuffle by vnode owner and
write the MV's SSTs. `stats["driver_row_bytes"]` counts the row data that still passes
through the driver (the jobs of other shapes, DML); a job that cannot run fused says why
once in the Spark log (`fused_status` holds it too).

Every other job runs as before. What runs where then: the driver (the `rw` process) holds the job graph, routes chunks, runs the
stateless executors and each job's materialize (the MV's table, which batch SELECTs read),
and commits epochs; hash joins, aggregations, over-window/top-N/set-operation fragments
(`SparkExchange`) run in Spark tasks, one Spark job per fragment and epoch, reading and
writing their state through the shared state store. The driver commits an epoch's version
only after every task of the epoch has finished, adding the SSTs the tasks wrote.
"""
from __future__ import annotations

import concurrent.futures
import logging
import os
import queue
import threading
import uuid
import weakref
from collections import Counter

from rw_cli.engine.runtime import EmbeddedRuntime, StreamJob
from rw_cli.spark import context, worker
from rw_cli.spark.exchange import EpochFailed, SparkExchange, input_rows, output_of

log = logging.getLogger("rw_cli.spark")


def _log_to(path: str | None) -> None:
    """rw's own notes about the Spark runtime (which jobs run fused) go to the Spark log."""
    if path is None or any(getattr(h, "baseFilename", None) == os.path.abspath(path) for h in log.handlers):
        return
    handler = logging.FileHandler(path)
    handler.setFormatter(logging.Formatter("%(asctime)s rw %(levelname)s %(message)s"))
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    log.propagate = False


def _import_task_code(_rows):
    import pandas  # noqa: F401 - pyarrow imports it at its first conversion from numpy (0.26 s)

    import rw_cli.spark.stage  # noqa: F401 - executors, store, Arrow, DuckDB
    import rw_cli.store.hummock  # noqa: F401
    return [0]


class _ActionThread:
    """One daemon thread that runs the functions submitted to it in turn (a daemon: a Spark
    action that hangs must not keep the process from exiting)."""

    def __init__(self) -> None:
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        threading.Thread(target=self._loop, name="rw-spark-epoch", daemon=True).start()

    def submit(self, fn) -> concurrent.futures.Future:
        future: concurrent.futures.Future = concurrent.futures.Future()
        self._queue.put((fn, future))
        return future

    def stop(self) -> None:
        self._queue.put(None)

    def _loop(self) -> None:
        while (item := self._queue.get()) is not None:
            fn, future = item
            if future.set_running_or_notify_cancel():
                try:
                    future.set_result(fn())
                except BaseException as e:  # noqa: BLE001 - handed to the caller
                    future.set_exception(e)


class SparkRuntime(EmbeddedRuntime):
    def __init__(self, store, store_url: str, endpoint: str | None, master: str = context.DEFAULT_MASTER,
                 log_path: str | None = None):
        super().__init__()
        self.log_path = log_path  # where the Spark JVM's own output goes
        self.store = store
        self.store_url = store_url
        self.endpoint = endpoint
        self.master = master
        self._exchanges: weakref.WeakSet[SparkExchange] = weakref.WeakSet()
        self._keys: dict[int, list[int]] = {}
        # spark_jobs, fused_epochs, actors built / reused in tasks, driver_row_bytes (row data
        # through this process), driver_meta_bytes (the metadata fused epochs return),
        # prebuilt_rdds (fused epochs run on RDDs built while the epoch before ran)
        self.stats: Counter[str] = Counter()
        self._graphs: dict[int, object] = {}  # job -> its JobGraph, or why it has none
        self._spare_rdds: dict[int, object] = {}  # job -> an EpochRDD for its next epoch
        # job -> the ranges its next epoch is expected to read (epoch_job.next_ranges): a
        # job whose last epoch read what was expected reads its next one ahead
        self.expected_ranges: dict[int, list] = {}
        self.fused_status: dict[int, str] = {}  # job -> "fused" or why not (logged on change)
        self._ranges: dict[int, list] = {}  # source -> split ranges assigned for this epoch
        self._needed: dict[int, set[int] | None] = {}  # source -> the columns its readers use
        # a split's units per epoch at most: planning costs nothing, so without a cap a
        # driver loop that ticks until the barrier interval ends would assign without end
        self.max_epoch_units = int(os.environ.get("RW_SPARK_MAX_EPOCH_ROWS", "1000000"))
        _log_to(log_path)
        # an epoch's Spark job that does not finish in time (no executors left) fails it
        self.epoch_timeout = float(os.environ.get("RW_SPARK_EPOCH_TIMEOUT", "600"))
        self._jobs: _ActionThread | None = None  # the thread Spark actions run in

    def live_table_in_step(self, relation_id: int):
        """None: a job whose fragments run in Spark tasks catches up at its barrier, so a
        DML statement never reads a table's rows from an index here."""
        return None

    @property
    def spark(self):
        return context.spark_session(self.master, self.log_path)

    def default_parallelism(self) -> int:
        return context.default_parallelism(self.spark)

    def exchange(self, factory, parallelism: int, dist_keys, fresh: bool) -> SparkExchange:
        """The StreamBuilder's hook: a partitioned fragment becomes a SparkExchange."""
        ex = SparkExchange(self, factory, parallelism, dist_keys, fresh)
        self._exchanges.add(ex)
        return ex

    def _part_of(self, n: int):
        if n not in self._keys:
            self._keys[n] = context.partition_keys(self.spark, n)
        keys = self._keys[n]
        return lambda actor: keys[actor]

    def run_fragment(self, ex: SparkExchange, pending, epoch):
        """One Spark job: the fragment's actors over the epoch's input; (chunks, SSTs)."""
        self.store.sync()  # tasks read the last committed version, which must hold everything
        snap = self.store.pin_snapshot()
        n = ex.parallelism
        reserved = {a: [self.store.alloc_sst_id() for _ in range(8)] for a in range(n)}
        try:
            task = ex.task(epoch, snap.version.encode(), reserved)
            rows = input_rows(pending, n, self._part_of(n))
            self.stats["driver_row_bytes"] += rows.nbytes
            df = self.spark.createDataFrame(rows).repartition(n, "part")
            result = self._collect(df.mapInArrow(worker.task_function(task), worker.OUTPUT_DDL), epoch)
            self.stats["driver_row_bytes"] += result.nbytes
        except EpochFailed:
            raise
        except Exception as e:  # noqa: BLE001 - a Spark job failure of any kind fails the epoch
            raise _epoch_failed(e, epoch, ex.identity) from None
        finally:
            snap.close()
        self.stats["spark_jobs"] += 1
        chunks, ssts = output_of(result, self.stats)
        used = {s.id for s in ssts}
        self.store.release_sst_ids([i for ids in reserved.values() for i in ids if i not in used])
        return [ex.conform(c) for c in chunks], ssts

    def _collect(self, df, epoch):
        """The job's result as Arrow; cancelled (and the epoch failed) after epoch_timeout."""
        return self._run(df.toArrow, epoch)

    def run_job(self, action, epoch, what: str, meanwhile=None):
        """A fused epoch's Spark job (`action` runs it); any failure fails the epoch. The
        caller's `meanwhile(job_done)` runs while the job does (its failure only loses its
        work; `job_done()` tells whether the job has ended)."""
        try:
            return self._run(action, epoch, meanwhile)
        except EpochFailed:
            raise
        except Exception as e:  # noqa: BLE001 - a Spark job failure of any kind fails the epoch
            raise _epoch_failed(e, epoch, what) from None

    def _run(self, action, epoch, meanwhile=None):
        """Run `action` (a Spark action) in a job group; cancelled after epoch_timeout.

        Actions run in one long-lived thread, not a new one per epoch: Py4J gives each
        Python thread its own connection to the JVM (and a JVM thread to serve it), which a
        new thread would open, authenticate and tear down again in every epoch."""
        spark, tag = self.spark, f"rw-epoch-{uuid.uuid4().hex}"

        def run():
            try:
                if context.is_connect(spark):
                    spark.addTag(tag)
                else:
                    spark.sparkContext.setJobGroup(tag, f"rw epoch {epoch.prev}", interruptOnCancel=True)
                return action()
            finally:
                if context.is_connect(spark):
                    spark.removeTag(tag)

        if self._jobs is None:  # (its thread ends with this runtime, closed or dropped)
            self._jobs = _ActionThread()
            weakref.finalize(self, self._jobs.stop)
        future = self._jobs.submit(run)
        if meanwhile is not None:
            try:
                meanwhile(future.done)
            except Exception as e:  # noqa: BLE001 - an optimization lost, not the epoch
                log.warning("while epoch %s ran on Spark: %s", epoch.prev, e)
        try:
            return future.result(self.epoch_timeout)
        except concurrent.futures.TimeoutError:
            context.cancel(spark, tag)
            try:
                future.result(60)
            except BaseException:  # noqa: BLE001 - cancelled, as it should be
                pass
            if not future.done():  # stuck: later epochs get a thread of their own
                self._jobs.stop()
                self._jobs = None
            raise EpochFailed(f"epoch {epoch.prev} did not finish on Spark within {self.epoch_timeout:g} s "
                              f"(no executors left?)",
                              hint="the last committed epoch is intact; uncommitted changes were rolled back") from None

    def close(self) -> None:
        try:
            self._discard_spare_rdds()
        except Exception:  # noqa: BLE001 - its SparkContext is gone already
            pass
        super().close()
        if self._jobs is not None:
            self._jobs.stop()
            self._jobs = None

    def stage_ssts(self, epoch: int, ssts) -> None:
        if ssts:
            self.store.adopt_ssts(epoch, ssts)

    def committed(self, epoch: int) -> None:
        for ex in list(self._exchanges):
            ex.committed(epoch)

    def warm_up(self, jobs: int = 8) -> None:
        """Start the Python workers and import the task code in them, then run an epoch
        job's shape (two Python stages and a shuffle) `jobs` times (a few seconds, once): the
        first epochs' latency then is an epoch's, not the workers' and the JVM's start-up."""
        if context.is_connect(self.spark):
            return
        from rw_cli.spark.epoch_rdd import run_rdd, shuffle_to

        sc = self.spark.sparkContext
        n = 2 * self.default_parallelism()
        sc.parallelize(range(n), n).mapPartitions(_import_task_code).collect()
        for _ in range(jobs):
            pairs = sc.parallelize(range(n), n).mapPartitionsWithIndex(lambda i, _: [(p, bytes(4096)) for p in range(n)])
            run_rdd(sc, shuffle_to(pairs, n).mapPartitions(lambda records: [sum(1 for _ in records)]))

    # -- one Spark job per epoch for compiled jobs (rw_cli.spark.epoch_job) --------------------
    def add_job(self, job: StreamJob) -> None:
        super().add_job(job)
        self._graphs.clear()
        self._discard_spare_rdds()

    def spare_rdd(self, job_id: int):
        """The RDDs built for `job_id`'s next epoch while its last one ran (taken: an
        EpochRDD runs once), or None."""
        return self._spare_rdds.pop(job_id, None)

    def keep_spare_rdd(self, job_id: int, rdd) -> None:
        old = self._spare_rdds.pop(job_id, None)
        if old is not None:
            old.discard()
        self._spare_rdds[job_id] = rdd

    def _discard_spare_rdds(self) -> None:
        """The jobs changed: RDDs built (and ranges read ahead) for the old graphs go."""
        spares, self._spare_rdds = self._spare_rdds, {}
        for rdd in spares.values():
            rdd.discard()

    def source_reader(self, source_id: int):
        """The driver's reader of a source (what it plans the epochs' ranges with)."""
        return self.jobs[source_id].nodes[0].executor.reader

    def connect(self, job: StreamJob) -> None:
        super().connect(job)
        self._graphs.clear()
        self._discard_spare_rdds()

    def drop_job(self, relation_id: int) -> None:
        super().drop_job(relation_id)
        self._graphs.clear()
        self._discard_spare_rdds()
        self.expected_ranges.pop(relation_id, None)

    def _graph(self, job: StreamJob):
        """The job's JobGraph, or why it has none (Spark Connect has no RDDs: none there)."""
        if job.relation_id not in self._graphs:
            from rw_cli.spark.graph import compile_job

            if context.is_connect(self.spark):
                self._graphs[job.relation_id] = "Spark Connect runs no RDD jobs"
            else:
                self._graphs[job.relation_id] = compile_job(job, self)
        return self._graphs[job.relation_id]

    def reads_remotely(self, source_id: int) -> bool:
        """Whether the source's split ranges are read by tasks: every job reading it is
        compiled (the ranges of a job that falls back for an epoch are read here then)."""
        subs = self.subscribers.get(source_id)
        if not subs:
            return False
        from rw_cli.spark.graph import JobGraph

        owners = [self._owner(n) for n in subs]
        return all(isinstance(self._graph(j), JobGraph) and j.relation_id not in self.held for j in owners)

    def epoch_budget(self, source_id: int, max_rows: int) -> int:
        """How many units a tick may still assign to each split of the source this epoch."""
        per_split: dict[str, int] = {}
        for r in self._ranges.get(source_id, ()):
            per_split[r.split] = per_split.get(r.split, 0) + r.end - r.start
        return max(0, min(max_rows, self.max_epoch_units - max(per_split.values(), default=0)))

    def assign(self, source_id: int, ranges, needed) -> None:
        """The split ranges a tick planned: read in the epoch's Spark job (contiguous ranges
        of one split merge)."""
        from rw_cli.engine.source import SplitRange

        mine = self._ranges.setdefault(source_id, [])
        for r in ranges:
            last = next((i for i in range(len(mine) - 1, -1, -1) if mine[i].split == r.split), None)
            if last is not None and mine[last].end == r.start:
                mine[last] = SplitRange(r.split, r.ordinal, mine[last].start, r.end)
            else:
                mine.append(r)
        self._needed[source_id] = needed

    def push(self, relation_id: int, chunk) -> None:
        self.stats["driver_row_bytes"] += chunk.data.nbytes
        super().push(relation_id, chunk)

    def push_to(self, job: StreamJob, node, chunk) -> None:
        self.stats["driver_row_bytes"] += chunk.data.nbytes
        super().push_to(job, node, chunk)

    def barrier(self, epoch) -> None:
        """Compiled jobs run their epoch as one Spark job each; then every other job's
        barrier as before, after the driver read the ranges assigned to its sources."""
        from rw_cli.spark import epoch_job
        from rw_cli.spark.graph import JobGraph

        ranges, self._ranges = self._ranges, {}
        counted: set[int] = set()
        fused: set[int] = set()
        for rel_id in self.barrier_order():
            job = self.jobs[rel_id]
            graph = self._graph(job)
            status = graph if isinstance(graph, str) else "fused"
            if isinstance(graph, JobGraph) and (rel_id in self.held or self._pending(job)):
                graph, status = None, "its fragments hold input the driver routed (DML or a backfill)"
            if job.scans:
                self._report(rel_id, status)
            if not isinstance(graph, JobGraph):
                continue
            counts = epoch_job.run_epoch(self, job, graph, epoch, ranges, self._needed)
            for src, (rows, nbytes) in counts.items():
                if src not in counted:
                    counted.add(src)
                    ex = self.jobs[src].nodes[0].executor
                    ex.rows_read += rows
                    ex.bytes_read += nbytes
            fused.add(rel_id)
        for rel_id in self.barrier_order():
            if rel_id in fused:
                continue
            job = self.jobs[rel_id]
            self._read_here(job, ranges, counted)
            for node in job.nodes:
                for out in node.executor.on_barrier(epoch):
                    self._forward(job, node, out)

    def _pending(self, job: StreamJob) -> bool:
        return any(isinstance(n.executor, SparkExchange) and n.executor.pending for n in job.nodes)

    def _read_here(self, job: StreamJob, ranges: dict, counted: set[int]) -> None:
        """A job that runs through the driver this epoch: the driver reads the split ranges
        assigned to its sources and pushes them into its scans."""
        by_source: dict[int, list] = {}
        for upstream, node in job.scans:
            by_source.setdefault(upstream, []).append(node)
        for src, nodes in by_source.items():
            if not ranges.get(src):
                continue
            ex = self.jobs[src].nodes[0].executor
            rows, nbytes = ex.rows_read, ex.bytes_read
            for r in ranges[src]:
                for chunk in ex.read_range(r, self._needed.get(src)):
                    for node in nodes:
                        self.push_to(job, node, chunk)
            if src in counted:  # another job's read counted these rows already
                ex.rows_read, ex.bytes_read = rows, nbytes
            counted.add(src)

    def _report(self, rel_id: int, status: str) -> None:
        if self.fused_status.get(rel_id) != status:
            self.fused_status[rel_id] = status
            if status == "fused":
                log.info("job %s: one Spark job per epoch (sources read in tasks)", rel_id)
            else:
                log.info("job %s: runs through the driver: %s", rel_id, status)


def _epoch_failed(e: Exception, epoch, what: str) -> EpochFailed:
    """A Spark failure as the epoch's error: its first line (Spark's own run to pages)."""
    first = next((ln for ln in str(e).splitlines() if ln.strip()), repr(e))
    return EpochFailed(f"epoch {epoch.prev} failed on Spark in {what}: {first[:500]}",
                       hint="the last committed epoch is intact; uncommitted changes were rolled back")
