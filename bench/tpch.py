#!/usr/bin/env python3
"""TPC-H refresh benchmark: rw maintaining the 22 queries as MVs against DuckDB recomputing them.

The data comes from tpchgen-cli (Parquet, generated once per scale into --data-dir). In one
process, over the same files:

- rw: a fresh data directory (on-disk Hummock store); the 8 tables created and loaded in
  --load-parts epochs, then the 22 MVs created over them (backfill). Then --epochs refresh
  epochs: TPC-H's RF1 (new orders with their lineitems) and RF2 (old orders and their
  lineitems deleted), about 0.1% of ORDERS each, as INSERT ... SELECT FROM read_parquet and
  DELETE ... WHERE o_orderkey IN (...), then a FLUSH. Timed per epoch: the DML and the FLUSH,
  i.e. the maintenance of every MV.
- recompute: DuckDB holds the same tables and applies the same statements, then re-runs
  every query rw maintains, fetching each whole result. Timed per epoch: the DML and the
  queries.

After each epoch (outside the timings) each MV is compared with DuckDB's result of its query
(as tests/tpch does). Reported: rows changed per second of refresh (the base-table rows RF1
and RF2 insert and delete, over the time to bring every MV up to date), the same for the
recompute, and their ratio; the load and backfill times; the per-epoch times. A query rw
refuses is reported and left out of both sides.

    python bench/tpch.py [--scale 0.1] [--epochs 10] [--data-dir DIR] [--json FILE]
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)

from tests.tpch.workload import (QUERIES, TABLES, RefreshFunctions, Workload, compare,  # noqa: E402
                                 duck_connection, generate, load_sql, query_text)


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def load(w: Workload, parts: int) -> dict:
    """Tables created and loaded in `parts` epochs on both sides; rw's and DuckDB's times."""
    w.create_tables()
    rw_s = duck_s = 0.0
    for part in range(parts):
        for t in TABLES:
            sql = load_sql(t, w.data_dir, part, parts)
            t0 = time.perf_counter()
            w.session.execute(sql)
            rw_s += time.perf_counter() - t0
            t0 = time.perf_counter()
            w.duck.execute(sql)
            duck_s += time.perf_counter() - t0
        t0 = time.perf_counter()
        w.session.execute("FLUSH")
        rw_s += time.perf_counter() - t0
    rows = sum(w.duck.execute(f"SELECT count(*) FROM {t}").fetchall()[0][0] for t in TABLES)
    return {"rows": rows, "rw_seconds": rw_s, "duckdb_seconds": duck_s}


def create_views(w: Workload) -> dict:
    """The MVs created over the loaded tables (backfill), each timed."""
    seconds = {}
    for q in w.queries:
        t0 = time.perf_counter()
        w.create_view(q)
        seconds[q] = time.perf_counter() - t0
    t0 = time.perf_counter()
    w.session.execute("FLUSH")
    flush = time.perf_counter() - t0
    return {"seconds": seconds, "flush_seconds": flush, "total_seconds": sum(seconds.values()) + flush}


def idle_epoch_ms(w: Workload, n: int = 3) -> float:
    """The median time of a FLUSH with nothing to maintain: the fixed cost of an epoch."""
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        w.session.execute("FLUSH")
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e3


def refresh_epoch(w: Workload, rs, maintained: list[str]) -> dict:
    """One epoch on both sides: rw's DML + FLUSH, DuckDB's DML + every query recomputed."""
    stmts = rs.statements()
    t0 = time.perf_counter()
    for sql in stmts:
        w.session.execute(sql)
    w.session.execute("FLUSH")
    rw_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    for sql in stmts:
        w.duck.execute(sql)
    results = {q: w.duck.sql(query_text(q)).to_arrow_table() for q in maintained}
    duck_s = time.perf_counter() - t0
    different = {}
    for q in maintained:
        diff = compare(w.session.execute(f"SELECT * FROM {q}").arrow(), results[q])
        if diff is not None:
            different[q] = diff
    return {"rows": rs.rows, "rw_seconds": rw_s, "recompute_seconds": duck_s, "different": different}


def run(args) -> dict:
    import rw_cli

    data = generate(args.scale, args.data_dir or os.path.join(tempfile.gettempdir(), f"rw-tpch-sf{args.scale}"))
    work = tempfile.mkdtemp(prefix="rw-tpch-")
    queries = [q.strip() for q in args.queries.split(",") if q.strip()]
    try:
        duck = duck_connection(args.duckdb_threads)
        with rw_cli.connect(os.path.join(work, "rw")) as s:
            w = Workload(s, duck, data, queries=queries)
            loaded = load(w, args.load_parts)
            print(f"load: {loaded['rows']:,} rows in {args.load_parts} epochs; rw {loaded['rw_seconds']:.1f}s "
                  f"({loaded['rows'] / loaded['rw_seconds']:,.0f} rows/s), DuckDB {loaded['duckdb_seconds']:.1f}s",
                  flush=True)
            views = create_views(w)
            maintained = [q for q in queries if q not in w.refused]
            print(f"create {len(queries)} MVs (backfill): {views['total_seconds']:.1f}s; maintained "
                  f"{len(maintained)}; refused: " + (", ".join(f"{q} ({m})" for q, m in w.refused.items()) or "none"),
                  flush=True)
            start = {q: w.check(q) for q in maintained}
            bad = {q: o.detail for q, o in start.items() if o.state != "equal"}
            if bad:
                print("different after load: " + "; ".join(f"{q}: {d}" for q, d in bad.items()), flush=True)
            idle = idle_epoch_ms(w)
            print(f"an epoch without changes (a FLUSH): {idle:.0f} ms", flush=True)
            rf = RefreshFunctions(data, os.path.join(work, "refresh"), fraction=args.fraction)
            head = f"{'epoch':>5} {'rows':>7} {'rw ms':>9} {'recompute ms':>13} {'rw rows/s':>10} {'equal':>7}"
            print(head)
            print("-" * len(head))
            epochs = []
            for k in range(args.epochs):
                e = refresh_epoch(w, rf.epoch(k), maintained)
                epochs.append(e)
                print(f"{k + 1:>5} {e['rows']:>7,} {e['rw_seconds'] * 1e3:>9.0f} {e['recompute_seconds'] * 1e3:>13.0f} "
                      f"{e['rows'] / e['rw_seconds']:>10,.0f} {len(maintained) - len(e['different']):>4}/"
                      f"{len(maintained)}", flush=True)
                for q, d in e["different"].items():
                    print(f"      {q} different: {d}", flush=True)
        duck.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    rows = sum(e["rows"] for e in epochs)
    rw_s = sum(e["rw_seconds"] for e in epochs)
    rec_s = sum(e["recompute_seconds"] for e in epochs)
    return {"scale": args.scale, "epochs": args.epochs, "fraction": args.fraction, "load": loaded,
            "create_views": views, "refused": w.refused, "maintained": maintained,
            "different_after_load": bad, "idle_epoch_ms": idle, "refresh": epochs, "refresh_rows": rows,
            "rw_seconds": rw_s, "recompute_seconds": rec_s,
            "rw_rows_per_s": rows / rw_s, "recompute_rows_per_s": rows / rec_s, "rw_over_recompute": rec_s / rw_s,
            "rw_epoch_ms_median": statistics.median(e["rw_seconds"] for e in epochs) * 1e3,
            "recompute_epoch_ms_median": statistics.median(e["recompute_seconds"] for e in epochs) * 1e3,
            "equal_after_refresh": sum(1 for q in maintained if all(q not in e["different"] for e in epochs)),
            "peak_rss_mb": peak_rss_mb()}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--scale", type=float, default=0.1, help="TPC-H scale factor")
    p.add_argument("--epochs", type=int, default=10, help="refresh epochs (RF1 + RF2 + a FLUSH each)")
    p.add_argument("--fraction", type=float, default=0.001,
                   help="orders inserted (RF1) and deleted (RF2) per epoch, as a fraction of ORDERS")
    p.add_argument("--load-parts", type=int, default=3, help="epochs the initial load is split into")
    p.add_argument("--queries", default=",".join(QUERIES))
    p.add_argument("--data-dir", default=None, help="where the Parquet files are generated (kept for reuse)")
    p.add_argument("--duckdb-threads", type=int, default=0, help="DuckDB threads (0: DuckDB's default)")
    p.add_argument("--json", dest="json_out", default=None, help="also write the summary to this file")
    args = p.parse_args()
    print(f"TPC-H SF {args.scale}: {args.epochs} refresh epochs of RF1 + RF2 "
          f"({args.fraction:.2%} of ORDERS each), a FLUSH each", flush=True)
    summary = run(args)
    print(f"refresh: {summary['refresh_rows']:,} rows changed in {args.epochs} epochs; "
          f"rw {summary['rw_rows_per_s']:,.0f} rows/s ({summary['rw_seconds']:.1f}s, median epoch "
          f"{summary['rw_epoch_ms_median']:.0f} ms), DuckDB recompute of {len(summary['maintained'])} queries "
          f"{summary['recompute_rows_per_s']:,.0f} rows/s ({summary['recompute_seconds']:.1f}s, median epoch "
          f"{summary['recompute_epoch_ms_median']:.0f} ms); rw/recompute {summary['rw_over_recompute']:.2f}; "
          f"MVs equal after every refresh: {summary['equal_after_refresh']}/{len(summary['maintained'])}; "
          f"peak RSS {summary['peak_rss_mb']:.0f} MB")
    print(json.dumps(summary, default=str))
    if args.json_out:
        with open(args.json_out, "w") as f:
            json.dump(summary, f, indent=2, default=str)


if __name__ == "__main__":
    main()
