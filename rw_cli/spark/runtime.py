"""The Spark runtime: the embedded runtime's job graph, with every partitioned (stateful)
fragment's actors running in Spark tasks.

What runs where: the driver (the `rw` process) holds the job graph, routes chunks, runs the
stateless executors and each job's materialize (the MV's table, which batch SELECTs read),
and commits epochs; hash joins, aggregations, over-window/top-N/set-operation fragments
(`SparkExchange`) run in Spark tasks, one Spark job per fragment and epoch, reading and
writing their state through the shared state store. The driver commits an epoch's version
only after every task of the epoch has finished, adding the SSTs the tasks wrote.
"""
from __future__ import annotations

import os
import threading
import uuid
import weakref
from collections import Counter

from rw_cli.engine.runtime import EmbeddedRuntime
from rw_cli.spark import context, worker
from rw_cli.spark.exchange import EpochFailed, SparkExchange, input_rows, output_of


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
        self.stats: Counter[str] = Counter()  # spark_jobs, actors built / reused in tasks
        # an epoch's Spark job that does not finish in time (no executors left) fails it
        self.epoch_timeout = float(os.environ.get("RW_SPARK_EPOCH_TIMEOUT", "600"))

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
            df = self.spark.createDataFrame(rows).repartition(n, "part")
            result = self._collect(df.mapInArrow(worker.task_function(task), worker.OUTPUT_DDL), epoch)
        except EpochFailed:
            raise
        except Exception as e:  # noqa: BLE001 - a Spark job failure of any kind fails the epoch
            first = next((ln for ln in str(e).splitlines() if ln.strip()), repr(e))
            raise EpochFailed(f"epoch {epoch.prev} failed on Spark in {ex.identity}: {first[:500]}",
                              hint="the last committed epoch is intact; uncommitted changes were rolled back") from None
        finally:
            snap.close()
        self.stats["spark_jobs"] += 1
        chunks, ssts = output_of(result, self.stats)
        used = {s.id for s in ssts}
        self.store.release_sst_ids([i for ids in reserved.values() for i in ids if i not in used])
        return [ex.conform(c) for c in chunks], ssts

    def _collect(self, df, epoch):
        """The job's result as Arrow; cancelled (and the epoch failed) after epoch_timeout."""
        spark, tag = self.spark, f"rw-epoch-{uuid.uuid4().hex}"
        box: dict = {}

        def run() -> None:
            try:
                if context.is_connect(spark):
                    spark.addTag(tag)
                else:
                    spark.sparkContext.setJobGroup(tag, f"rw epoch {epoch.prev}", interruptOnCancel=True)
                box["result"] = df.toArrow()
            except BaseException as e:  # noqa: BLE001 - handed to the caller
                box["error"] = e
            finally:
                if context.is_connect(spark):
                    spark.removeTag(tag)

        t = threading.Thread(target=run, name="rw-spark-epoch", daemon=True)
        t.start()
        t.join(self.epoch_timeout)
        if t.is_alive():
            context.cancel(spark, tag)
            t.join(60)
            raise EpochFailed(f"epoch {epoch.prev} did not finish on Spark within {self.epoch_timeout:g} s "
                              f"(no executors left?)",
                              hint="the last committed epoch is intact; uncommitted changes were rolled back")
        if "error" in box:
            raise box["error"]
        return box["result"]

    def stage_ssts(self, epoch: int, ssts) -> None:
        if ssts:
            self.store.adopt_ssts(epoch, ssts)

    def committed(self, epoch: int) -> None:
        for ex in list(self._exchanges):
            ex.committed(epoch)
