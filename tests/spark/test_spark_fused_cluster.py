"""One Spark job per epoch on a standalone cluster with TWO workers on 127.0.0.1 and the
state in SeaweedFS S3: Nexmark queries equal the embedded engine's, and a worker killed
during an epoch loses and duplicates nothing (issue 23)."""
from __future__ import annotations

import uuid

import pytest

import rw_cli
from rw_cli.errors import EpochFailed
from rw_cli.session import Session
from rw_cli.stream.driver import sources_idle
from test_spark_cluster import _kill_during_job
from test_spark_fused import BID, PER_AUCTION, drive, nexmark, rows

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("spark-cluster")]


@pytest.fixture(scope="module")
def two_workers(cluster):
    if len(cluster.workers) < 2:
        cluster.add_worker(cores=1)
    return cluster


def s3_session(tmp_path, name: str, master: str, endpoint: str) -> Session:
    return Session(str(tmp_path / name), "spark", state_store=f"s3://rw-test/fused-{uuid.uuid4().hex}",
                   s3_endpoint=endpoint, spark_master=master)


def embedded(tmp_path, statements: list[str], tick: int) -> list[tuple]:
    with rw_cli.connect(str(tmp_path / "embedded"), "embedded") as s:
        s.execute("SET STREAMING_PARALLELISM = 2")
        for sql in statements:
            s.execute(sql)
        drive(s, tick)
        return rows(s)


@pytest.mark.parametrize("query", ["q4", "q5", "q7"])
def test_nexmark_on_two_workers_with_state_in_s3(tmp_path, two_workers, seaweedfs, query):
    statements = nexmark(query, 30_000)
    expected = embedded(tmp_path, statements, 6000)
    with s3_session(tmp_path, "spark", two_workers.url, seaweedfs) as s:
        s.execute("SET STREAMING_PARALLELISM = 2")
        for sql in statements:
            s.execute(sql)
        drive(s, 6000)
        assert rows(s) == expected and expected
        assert "fused" in s.runtime.fused_status.values()
        assert s.runtime.stats["fused_epochs"] > 0 and s.runtime.stats.get("driver_row_bytes", 0) == 0


def test_worker_killed_during_a_fused_epoch(tmp_path, two_workers, seaweedfs, monkeypatch):
    monkeypatch.setenv("RW_SPARK_EPOCH_TIMEOUT", "60")
    statements = [BID.format(events=60_000), PER_AUCTION]
    expected = embedded(tmp_path, statements, 5000)
    with s3_session(tmp_path, "killed", two_workers.url, seaweedfs) as s:
        s.execute("SET STREAMING_PARALLELISM = 2")
        for sql in statements:
            s.execute(sql)
        drive(s, 5000, max_epochs=2)
        watcher = _kill_during_job(s, two_workers, two_workers.workers[-1])
        s.tick(5000)
        try:
            s.barrier()  # Spark retries the lost tasks on the other worker, or the epoch fails
        except EpochFailed:
            pass
        watcher.join()
        two_workers.add_worker(cores=1)
        for _ in range(200):
            if sources_idle(s):
                break
            s.tick(5000)
            try:
                s.barrier()
            except EpochFailed:
                pass  # the loss noticed one epoch later: rolled back, read again
        s.execute("FLUSH")
        assert rows(s) == expected  # nothing lost, nothing twice


def test_rw_cli_is_shipped_to_the_executors(tmp_path, two_workers, seaweedfs):
    """The driver adds rw_cli to the Spark context: executors import the driver's code from it."""
    with s3_session(tmp_path, "shipped", two_workers.url, seaweedfs) as s:
        files = s.runtime.spark.sparkContext.parallelize(range(4), 4).map(lambda _: __import__("rw_cli").__file__).collect()
        assert all("rw_cli.zip" in f for f in files), files
