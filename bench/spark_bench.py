#!/usr/bin/env python3
"""Spark runtime benchmark: a Nexmark-style aggregation at large epochs, local[N] Spark
against the embedded engine, in the same process and on the same events.

Both engines read the `nexmark` Bid source (`--events`, default 2,000,000) in epochs of
`--epoch-rows` (default 200,000) events into

    CREATE MATERIALIZED VIEW per_auction AS
      SELECT auction, count(*) AS bids, max(price) AS top, sum(price) AS total
      FROM bid GROUP BY auction

with a checkpoint per epoch and the on-disk state store. Prints per-epoch latency (median,
p95, max) and rows/s for each engine, the spark/embedded throughput ratio, the bytes of row
data read from the source beside the bytes of row data that passed through the driver
(`driver_row_bytes`: on Spark, the tasks read the splits and write the MV, so only metadata
should), and a JSON summary; both MVs are checked to be equal at the end.

With `--queries q4,q5,q7` it also runs those Nexmark queries (as MVs over the Person,
Auction and Bid sources) on both engines and prints their epoch p50/p95.

    python bench/spark_bench.py [--events 2000000] [--epoch-rows 200000] [--master local[2]]
                                [--queries q4,q5,q7] [--query-events 500000] [--repeat 3]

The main query runs `--repeat` times per engine, the engines alternately, and the fastest run
of each is reported (as bench/dml.py does): one run takes a second or two, and on a shared
machine the embedded engine alone moved between 1.3 and 2.0 M rows/s from run to run.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

MV = ("CREATE MATERIALIZED VIEW per_auction AS SELECT auction, count(*) AS bids, max(price) AS top, "
      "sum(price) AS total FROM bid GROUP BY auction")


BID = ("CREATE SOURCE bid (auction BIGINT, bidder BIGINT, price BIGINT, channel VARCHAR, url VARCHAR, "
       "date_time TIMESTAMP, extra VARCHAR) WITH (connector = 'nexmark', nexmark.table.type = 'Bid', "
       "nexmark.event.num = '{events}', nexmark.split.num = '{splits}')")


def nexmark_statements(query: str, events: int, splits: int) -> list[str]:
    """The sources of a Nexmark query and the query as an MV named `result`."""
    import re

    sys.path.insert(0, os.path.join(ROOT, "bench"))
    import nexmark as nx

    out = [nx.source_sql(t, events, 100_000).replace("nexmark.split.num = '1'", f"nexmark.split.num = '{splits}'")
           for t in nx.TABLES]
    sql = nx.sink_sql(query, nx.SUITE)
    select = re.split(r"\bAS\b", sql, maxsplit=1, flags=re.IGNORECASE)[1]
    return out + [f"CREATE MATERIALIZED VIEW result AS {select[:select.rfind('WITH')]}"]


def run(engine: str, statements: list[str], epoch_rows: int, master: str, parallelism: int,
        view: str = "per_auction") -> dict:
    from rw_cli.engine.source import source_executors
    from rw_cli.stream.driver import sources_idle
    from rw_cli.session import Session

    d = tempfile.mkdtemp(prefix=f"rw-spark-bench-{engine}-")
    try:
        s = Session(d, engine, spark_master=master if engine == "spark" else None)
        s.execute(f"SET STREAMING_PARALLELISM = {parallelism}")
        for sql in statements:
            s.execute(sql)
        s.runtime  # noqa: B018 - build the jobs (and start Spark) before the clock
        if engine == "spark":  # ... and Spark's Python workers, with the task code imported
            s.runtime.warm_up()
        stats0 = dict(getattr(s.runtime, "stats", {}))
        latencies = []
        start = time.perf_counter()
        while not sources_idle(s):
            t = time.perf_counter()
            s.tick(max(1, epoch_rows // parallelism))  # per split
            s.barrier()
            latencies.append(time.perf_counter() - t)
        s.store.sync()
        elapsed = time.perf_counter() - start
        sources = [ex for _, ex in source_executors(s.runtime)]
        rows = sum(ex.rows_read for ex in sources)
        source_bytes = sum(ex.bytes_read for ex in sources)
        result = sorted(s.execute(f"SELECT * FROM {view}").fetchall(), key=repr)
        stats = {k: v - stats0.get(k, 0) for k, v in getattr(s.runtime, "stats", {}).items()}
        s.close()
        lat = sorted(latencies)
        return {"engine": engine, "epochs": len(latencies), "rows": rows, "seconds": round(elapsed, 2),
                "rows_per_s": round(rows / elapsed), "epoch_p50_ms": round(statistics.median(lat) * 1000),
                "epoch_p95_ms": round(lat[int(0.95 * (len(lat) - 1))] * 1000), "epoch_max_ms": round(lat[-1] * 1000),
                "source_bytes": source_bytes,
                "driver_row_bytes": stats.get("driver_row_bytes", source_bytes if engine == "embedded" else 0),
                "stats": stats, "result": result}
    finally:
        shutil.rmtree(d, ignore_errors=True)


def report(results: list[dict]) -> None:
    print(f"{'engine':<10} {'epochs':>6} {'rows':>10} {'rows/s':>10} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8} "
          f"{'source MB':>10} {'driver MB':>10}")
    for r in results:
        print(f"{r['engine']:<10} {r['epochs']:>6} {r['rows']:>10} {r['rows_per_s']:>10} {r['epoch_p50_ms']:>8} "
              f"{r['epoch_p95_ms']:>8} {r['epoch_max_ms']:>8} {r['source_bytes'] / 1e6:>10.1f} "
              f"{r['driver_row_bytes'] / 1e6:>10.3f}")


# C1 only and the serial collector: on a machine of a few cores the JVM's JIT and GC threads
# otherwise take the CPU the Python tasks need (see README, RW_SPARK_JAVA_OPTIONS)
JAVA_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--events", type=int, default=2_000_000)
    ap.add_argument("--epoch-rows", type=int, default=200_000)
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--parallelism", type=int, default=2)
    ap.add_argument("--queries", default="", help="also run these Nexmark queries, e.g. q4,q5,q7")
    ap.add_argument("--query-events", type=int, default=500_000)
    ap.add_argument("--repeat", type=int, default=3,
                    help="runs of each engine, alternately; the fastest of each is reported (a run is ~1-3 s, "
                         "shorter than a shared machine's slow spells)")
    args = ap.parse_args()
    os.environ.setdefault("RW_SPARK_JAVA_OPTIONS", JAVA_OPTIONS)
    print(f"RW_SPARK_JAVA_OPTIONS={os.environ['RW_SPARK_JAVA_OPTIONS']!r}")
    bid = [BID.format(events=args.events, splits=args.parallelism), MV]
    runs = {"embedded": [], "spark": []}
    for _ in range(args.repeat):  # alternately, so that a slow spell of the machine hits both
        for e in runs:
            runs[e].append(run(e, bid, args.epoch_rows, args.master, args.parallelism))
    every = runs["embedded"] + runs["spark"]
    assert all(r["result"] == every[0]["result"] for r in every), "the engines disagree"
    results = [max(runs[e], key=lambda r: r["rows_per_s"]) for e in runs]  # the fastest run of each
    report(results)
    if args.repeat > 1:
        print("rows/s of each run: " + "; ".join(f"{e} {', '.join(str(r['rows_per_s']) for r in rs)}"
                                                for e, rs in runs.items()))
    ratio = results[1]["rows_per_s"] / results[0]["rows_per_s"]
    spark = results[1]
    print(f"spark/embedded throughput ratio {ratio:.2f} (fastest of {args.repeat} runs each); row bytes through the Spark driver "
          f"{spark['driver_row_bytes']:,} = {100 * spark['driver_row_bytes'] / max(1, spark['source_bytes']):.3f}% "
          f"of {spark['source_bytes']:,} source bytes")
    summary = {"events": args.events, "epoch_rows": args.epoch_rows, "master": args.master, "ratio": round(ratio, 3),
               "repeat": args.repeat, "engines": [{k: v for k, v in r.items() if k != "result"} for r in results],
               "rows_per_s_of_each_run": {e: [r["rows_per_s"] for r in rs] for e, rs in runs.items()}, "queries": {}}
    for q in [q for q in args.queries.split(",") if q]:
        statements = nexmark_statements(q, args.query_events, args.parallelism)
        qr = [run(e, statements, args.epoch_rows, args.master, args.parallelism, view="result")
              for e in ("embedded", "spark")]
        assert qr[0]["result"] == qr[1]["result"], f"the engines disagree on {q}"
        print(f"-- {q} ({args.query_events:,} events)")
        report(qr)
        summary["queries"][q] = [{k: v for k, v in r.items() if k != "result"} for r in qr]
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
