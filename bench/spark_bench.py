#!/usr/bin/env python3
"""Spark runtime benchmark: a Nexmark-style aggregation at large epochs, local[N] Spark
against the embedded engine, in the same process and on the same events.

Both engines read the `nexmark` Bid source (`--events`, default 2,000,000) in epochs of
`--epoch-rows` (default 200,000) events into

    CREATE MATERIALIZED VIEW per_auction AS
      SELECT auction, count(*) AS bids, max(price) AS top, sum(price) AS total
      FROM bid GROUP BY auction

with a checkpoint per epoch and the on-disk state store. Prints per-epoch latency (median,
p95, max) and rows/s for each engine, the spark/embedded throughput ratio, and a JSON
summary; both MVs are checked to be equal at the end.

    python bench/spark_bench.py [--events 2000000] [--epoch-rows 200000] [--master local[2]]
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


def run(engine: str, events: int, epoch_rows: int, master: str, parallelism: int) -> dict:
    from rw_cli.stream.driver import sources_idle
    from rw_cli.session import Session

    d = tempfile.mkdtemp(prefix=f"rw-spark-bench-{engine}-")
    try:
        s = Session(d, engine, spark_master=master if engine == "spark" else None)
        s.execute(f"SET STREAMING_PARALLELISM = {parallelism}")
        s.execute("CREATE SOURCE bid (auction BIGINT, bidder BIGINT, price BIGINT, channel VARCHAR, url VARCHAR, "
                  "date_time TIMESTAMP, extra VARCHAR) WITH (connector = 'nexmark', nexmark.table.type = 'Bid', "
                  f"nexmark.event.num = '{events}', nexmark.split.num = '{parallelism}')")
        s.execute(MV)
        s.runtime  # noqa: B018 - start Spark before the clock
        latencies, rows = [], 0
        start = time.perf_counter()
        while not sources_idle(s):
            t = time.perf_counter()
            rows += s.tick(max(1, epoch_rows // parallelism))  # per split
            s.barrier()
            latencies.append(time.perf_counter() - t)
        s.store.sync()
        elapsed = time.perf_counter() - start
        result = sorted(s.execute("SELECT * FROM per_auction").fetchall())
        stats = dict(getattr(s.runtime, "stats", {}))
        s.close()
        lat = sorted(latencies)
        return {"engine": engine, "epochs": len(latencies), "rows": rows, "seconds": round(elapsed, 2),
                "rows_per_s": round(rows / elapsed), "epoch_p50_ms": round(statistics.median(lat) * 1000),
                "epoch_p95_ms": round(lat[int(0.95 * (len(lat) - 1))] * 1000), "epoch_max_ms": round(lat[-1] * 1000),
                "stats": stats, "result": result}
    finally:
        shutil.rmtree(d, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--events", type=int, default=2_000_000)
    ap.add_argument("--epoch-rows", type=int, default=200_000)
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--parallelism", type=int, default=2)
    args = ap.parse_args()
    results = [run(e, args.events, args.epoch_rows, args.master, args.parallelism) for e in ("embedded", "spark")]
    assert results[0]["result"] == results[1]["result"], "the engines disagree"
    print(f"{'engine':<10} {'epochs':>6} {'rows':>10} {'rows/s':>10} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8}")
    for r in results:
        print(f"{r['engine']:<10} {r['epochs']:>6} {r['rows']:>10} {r['rows_per_s']:>10} {r['epoch_p50_ms']:>8} "
              f"{r['epoch_p95_ms']:>8} {r['epoch_max_ms']:>8}")
    ratio = results[1]["rows_per_s"] / results[0]["rows_per_s"]
    print(f"spark/embedded throughput ratio {ratio:.2f}")
    print(json.dumps({"events": args.events, "epoch_rows": args.epoch_rows, "master": args.master,
                      "ratio": round(ratio, 3),
                      "engines": [{k: v for k, v in r.items() if k != "result"} for r in results]}))


if __name__ == "__main__":
    main()
