"""One Spark job per epoch (issue 23) on local[2]: MV jobs over nexmark/datagen sources read
their split ranges in tasks, shuffle by vnode owner, materialize in tasks; the driver sees
metadata only. Results must equal the embedded engine's, across restarts and failed epochs;
jobs of other shapes fall back to the driver path and say so."""
from __future__ import annotations

import contextlib
import os
import re
import sys

import pytest

import rw_cli
from rw_cli.engine.source import source_executors
from rw_cli.errors import EpochFailed
from rw_cli.stream.driver import sources_idle

from connector.kafka_broker import kafka_broker  # noqa: F401 - the fixture

pytestmark = pytest.mark.slow

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench"))

BID = ("CREATE SOURCE bid (auction BIGINT, bidder BIGINT, price BIGINT, channel VARCHAR, url VARCHAR, "
       "date_time TIMESTAMP, extra VARCHAR) WITH (connector = 'nexmark', nexmark.table.type = 'Bid', "
       "nexmark.event.num = '{events}', nexmark.split.num = '2')")
PER_AUCTION = ("CREATE MATERIALIZED VIEW r AS SELECT auction, count(*) AS bids, max(price) AS top, "
               "sum(price) AS total FROM bid GROUP BY auction")


def nexmark(query: str, events: int) -> list[str]:
    """The three Nexmark sources (two splits each) and `query` as the MV `r`."""
    import nexmark as nx

    if not os.path.isdir(nx.SUITE):
        pytest.skip("the conformance suite (../shared/conformance) is not here")
    out = [nx.source_sql(t, events, 10_000_000 if query == "q5" else 100_000)
           .replace("nexmark.split.num = '1'", "nexmark.split.num = '2'") for t in nx.TABLES]
    sql = nx.sink_sql(query, nx.SUITE)
    select = re.split(r"\bAS\b", sql, maxsplit=1, flags=re.IGNORECASE)[1]
    return out + [f"CREATE MATERIALIZED VIEW r AS {select[:select.rfind('WITH')]}"]


def rows(s, sql: str = "SELECT * FROM r") -> list[tuple]:
    return sorted(s.execute(sql).fetchall(), key=repr)


def drive(s, tick: int, max_epochs: int | None = None) -> int:
    epochs = 0
    while not sources_idle(s) and (max_epochs is None or epochs < max_epochs):
        s.tick(tick)
        s.barrier()
        epochs += 1
    return epochs


@contextlib.contextmanager
def started(path: str, engine: str, statements: list[str]):
    """A session at `path` on `engine` (parallelism 2) that ran `statements`."""
    with rw_cli.connect(path, engine) as s:
        s.execute("SET STREAMING_PARALLELISM = 2")
        for sql in statements:
            s.execute(sql)
        yield s


def run(path, engine: str, statements: list[str], tick: int = 8000):
    with started(str(path / engine), engine, statements) as s:
        drive(s, tick)
        result = rows(s)
        stats = dict(getattr(s.runtime, "stats", {}))
        status = dict(getattr(s.runtime, "fused_status", {}))
        source_bytes = sum(ex.bytes_read for _, ex in source_executors(s.runtime))
    return result, stats, status, source_bytes


@pytest.mark.parametrize("query", ["per_auction", "q4", "q5", "q7"])
def test_nexmark_as_one_spark_job_per_epoch(tmp_path, query):
    statements = [BID.format(events=40_000), PER_AUCTION] if query == "per_auction" else nexmark(query, 40_000)
    expected, _, _, _ = run(tmp_path, "embedded", statements)
    got, stats, status, source_bytes = run(tmp_path, "spark", statements)
    assert got == expected and expected
    assert "fused" in status.values(), status
    assert stats["fused_epochs"] >= 3 and stats["spark_jobs"] == stats["fused_epochs"], stats
    # the sources were read in tasks: no row data passed through the driver
    assert source_bytes > 0 and stats.get("driver_row_bytes", 0) < 0.01 * source_bytes, (stats, source_bytes)
    # the epochs after the first two (the first reads nothing: its RDDs have no range to
    # read) ran on RDDs built while the one before ran (its info was a property of its
    # job), and the Python workers were reused: actors stayed cached
    assert stats["prebuilt_rdds"] >= stats["fused_epochs"] - 2 > 0 and stats["reused"] > 0, stats
    if query == "per_auction":  # each of the two workers builds each of the two actors once at
        # most: a copy whose last epochs ran in the other worker caught up from their SSTs
        assert stats["built"] <= 4 and stats["built"] + stats["reused"] == 2 * stats["fused_epochs"], stats
    if query == "per_auction":  # the source tasks shuffled deltas per auction, not their bids
        assert 0 < stats["combined_rows_out"] < stats["combined_rows_in"] == 40_000 - 40_000 // 50 * 4, stats


def test_the_next_epochs_ranges_are_read_ahead_and_dropped_when_the_tick_differs(tmp_path):
    """While an epoch's actors run, stage 0 of the next epoch reads the ranges its tick is
    expected to assign (each split's range again, after this one); an epoch whose tick
    assigned other ranges drops that read and reads its own. Same results as embedded."""
    statements = [BID.format(events=100_000), PER_AUCTION]
    expected, _, _, _ = run(tmp_path, "embedded", statements)
    with started(str(tmp_path / "ahead"), "spark", statements) as s:
        assert drive(s, 6000, max_epochs=4) == 4
        stats = s.runtime.stats
        # the first epoch expects nothing, the second confirms the pattern: the rest read ahead
        assert stats["read_ahead_epochs"] == 4 - 2, stats
        used = stats["read_ahead_epochs"]
        drive(s, 5000, max_epochs=1)  # another tick size: the read-ahead goes unused
        assert stats["read_ahead_epochs"] == used, stats
        drive(s, 5000)
        assert stats["read_ahead_epochs"] > used, stats
        assert rows(s) == expected


def test_restart_resumes_at_committed_offsets(tmp_path):
    statements = [BID.format(events=60_000), PER_AUCTION]
    expected, _, _, _ = run(tmp_path, "embedded", statements)
    d = str(tmp_path / "restarted")
    with started(d, "spark", statements) as s:
        assert drive(s, 8000, max_epochs=2) == 2
        partial = rows(s)
        assert partial and partial != expected
    with rw_cli.connect(d, "spark") as s:  # a new driver: actors rebuilt from the store
        assert rows(s) == partial
        drive(s, 8000)
        assert rows(s) == expected
        assert s.runtime.stats["fused_epochs"] > 0 and s.runtime.stats["built"] > 0


def test_failed_epoch_rolls_back_and_reads_its_ranges_again(tmp_path):
    statements = [BID.format(events=50_000), PER_AUCTION]
    expected, _, _, _ = run(tmp_path, "embedded", statements)
    with started(str(tmp_path / "failing"), "spark", statements) as s:
        drive(s, 8000, max_epochs=2)
        before = rows(s)
        s.tick(8000)
        s.runtime.epoch_timeout = 0.001  # the epoch's Spark job cannot finish in time
        with pytest.raises(EpochFailed, match="did not finish on Spark"):
            s.barrier()
        assert rows(s) == before  # nothing of the failed epoch, offsets included
        drive(s, 8000)
        assert rows(s) == expected


def test_other_shapes_run_through_the_driver_and_say_so(tmp_path):
    """A job over a table, and an MV read by another MV, keep the driver path: same results
    as embedded; the log says why; the driver-bytes counter counts their rows."""
    statements = [BID.format(events=20_000), PER_AUCTION,
                  "CREATE MATERIALIZED VIEW top AS SELECT max(bids) AS m FROM r",
                  "CREATE TABLE t (k INT, v INT)",
                  "CREATE MATERIALIZED VIEW tv AS SELECT k, sum(v) AS s FROM t GROUP BY k",
                  "INSERT INTO t SELECT g % 7, g FROM generate_series(1, 500) g"]
    results = {}
    for engine in ("embedded", "spark"):
        with rw_cli.connect(str(tmp_path / engine), engine) as s:
            s.execute("SET STREAMING_PARALLELISM = 2")
            for sql in statements:
                s.execute(sql)
            drive(s, 5000)
            results[engine] = (rows(s), rows(s, "SELECT * FROM top"), rows(s, "SELECT * FROM tv"))
            if engine == "spark":
                status = s.runtime.fused_status
                assert all(v != "fused" for v in status.values()), status
                assert s.runtime.stats["driver_row_bytes"] > 0
                log = open(os.path.join(str(tmp_path / engine), "spark.log")).read()
                assert "runs through the driver: other jobs read its changes" in log
    assert results["spark"] == results["embedded"]


def datagen(rows: int, keys: int) -> str:
    """A datagen source `g` of two splits: ids 1..rows in sequence, k random in 0..keys."""
    return ("CREATE SOURCE g (id BIGINT, k INT, v DOUBLE) WITH (connector = 'datagen', "
            f"fields.id.kind = 'sequence', fields.id.start = '1', fields.id.end = '{rows}', "
            f"fields.k.min = '0', fields.k.max = '{keys}', datagen.split.num = '2', "
            "datagen.rows.per.second = '1000000')")


def test_datagen_source(tmp_path):
    """Also the map-side combine over two group keys, nulls, avg and extremes: the tasks send
    deltas per group, and the MV equals the embedded engine's."""
    statements = [datagen(30000, 50),
                  "CREATE MATERIALIZED VIEW r AS SELECT k, id % 3 AS m, count(*) AS n, sum(id) AS s, "
                  "count(CASE WHEN id % 5 = 0 THEN NULL ELSE id END) AS nn, avg(k) AS a, min(id) AS lo, "
                  "max(CASE WHEN id % 7 = 0 THEN NULL ELSE id END) AS hi FROM g GROUP BY k, id % 3"]
    expected, _, _, _ = run(tmp_path, "embedded", statements)
    got, stats, status, _ = run(tmp_path, "spark", statements)
    assert got == expected and expected
    assert list(status.values()) == ["fused"] and stats["fused_epochs"] > 0
    assert 0 < stats["combined_rows_out"] < stats["combined_rows_in"] == 30000, stats


def test_kafka_partitions_are_read_in_tasks(tmp_path, kafka_broker):
    """A Kafka source's partitions as split ranges: the driver learns each partition's end
    from a fetch at the listed end (next to no data) and assigns offset ranges; tasks read
    exactly them (their consumers kept in the worker between epochs); messages produced
    later arrive in later epochs. Results equal the embedded engine's."""
    import json

    from connector.kafka_broker import new_topic, produce

    topic = new_topic(kafka_broker, 2)
    first = [{"id": i, "grp": i % 7, "v": i * 3} for i in range(12_000)]
    produce(kafka_broker, topic, [json.dumps(r) for r in first])
    statements = [f"CREATE SOURCE s (id INT, grp INT, v BIGINT) INCLUDE partition AS p WITH (connector = 'kafka', "
                  f"topic = '{topic}', properties.bootstrap.server = '{kafka_broker}') FORMAT PLAIN ENCODE JSON",
                  "CREATE MATERIALIZED VIEW r AS SELECT grp, count(*) AS n, sum(v) AS sv, max(id) AS mx, "
                  "count(DISTINCT p) AS parts FROM s GROUP BY grp"]
    expected, _, _, _ = run(tmp_path, "embedded", statements, tick=5000)
    assert [r[1] for r in expected] and sum(r[1] for r in expected) == 12_000
    with rw_cli.connect(str(tmp_path / "spark"), "spark") as s:
        s.execute("SET STREAMING_PARALLELISM = 2")
        for sql in statements:
            s.execute(sql)
        drive(s, 5000)
        assert rows(s) == expected
        assert list(s.runtime.fused_status.values()) == ["fused"], s.runtime.fused_status
        stats = dict(s.runtime.stats)
        source_bytes = sum(ex.bytes_read for _, ex in source_executors(s.runtime))
        assert stats["fused_epochs"] >= 2 and source_bytes > 0, (stats, source_bytes)
        assert stats.get("driver_row_bytes", 0) < 0.01 * source_bytes, (stats, source_bytes)
        produce(kafka_broker, topic, [json.dumps({"id": 20_000 + i, "grp": 9, "v": 1}) for i in range(3000)])
        drive(s, 5000)
        assert rows(s, "SELECT grp, n, sv, mx FROM r WHERE grp = 9") == [(9, 3000, 3000, 22_999)]
        assert rows(s, "SELECT sum(n) FROM r") == [(15_000,)]


def test_the_ssts_of_a_failed_epoch_are_vacuumed(tmp_path, monkeypatch):
    """The tasks of an epoch wrote their SSTs, then the epoch failed (the driver lost the
    job's answer): no version references them, and vacuum deletes them — the store holds
    exactly what the current version lists; the epoch then runs again and the MV is right."""
    from rw_cli.store.version import SST_PREFIX, sst_path

    statements = [BID.format(events=40_000), PER_AUCTION]
    expected, _, _, _ = run(tmp_path, "embedded", statements)
    with rw_cli.connect(str(tmp_path / "vacuumed"), "spark") as s:
        s.execute("SET STREAMING_PARALLELISM = 2")
        for sql in statements:
            s.execute(sql)
        drive(s, 8000, max_epochs=2)
        store = s.runtime.store
        answered, reserve = s.runtime.run_job, store.alloc_sst_id
        reserved: list[int] = []  # the ids the driver reserved for the epoch's tasks
        written: set[str] = set()

        def reserved_id() -> int:
            reserved.append(reserve())
            return reserved[-1]

        def lost_answer(action, epoch, what, **kw):
            answered(action, epoch, what, **kw)  # the tasks ran and uploaded their SSTs
            objects = set(store.sstables.object_store.list(SST_PREFIX))
            written.update(p for p in map(sst_path, reserved) if p in objects)
            raise EpochFailed(f"epoch {epoch.prev} failed on Spark in {what}: the answer was lost")

        monkeypatch.setattr(store, "alloc_sst_id", reserved_id)
        monkeypatch.setattr(s.runtime, "run_job", lost_answer)
        s.tick(8000)
        with pytest.raises(EpochFailed, match="the answer was lost"):
            s.barrier()
        monkeypatch.undo()
        assert written, "the failed epoch's tasks wrote no SST"
        store.sync()
        assert not written & {info.path for info in store.version.ssts()}  # no version has them
        store.vacuum()
        assert not written & set(store.sstables.object_store.list(SST_PREFIX))
        drive(s, 8000)
        assert rows(s) == expected


def test_expressions_failing_in_tasks_are_reported_by_the_driver(tmp_path, monkeypatch):
    from rw_cli.engine import eval_errors

    seen: list[str] = []
    record = eval_errors.record
    monkeypatch.setattr(eval_errors, "record", lambda m: (seen.append(m), record(m)))
    statements = [datagen(3000, 5),
                  "CREATE MATERIALIZED VIEW r AS SELECT k, count(*) AS n, sum(700 / (id % 7)) AS s FROM g GROUP BY k"]
    expected, _, _, _ = run(tmp_path, "embedded", statements)
    assert "Division by zero" in seen
    seen.clear()
    got, stats, status, _ = run(tmp_path, "spark", statements)
    assert got == expected and expected
    assert list(status.values()) == ["fused"] and stats["fused_epochs"] > 0
    assert "Division by zero" in seen  # from the tasks' metadata, recorded by the driver
