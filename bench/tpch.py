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

rw's time is also split: the DML statements (INSERT ... SELECT, DELETE ... IN) and the FLUSH
(the MVs' maintenance proper), whose rate is reported as "FLUSH rows/s".

After each epoch (outside the timings) each MV is compared with DuckDB's result of its query
(as tests/tpch does). Reported: rows changed per second of refresh (the base-table rows RF1
and RF2 insert and delete, over the time to bring every MV up to date), the same for the
recompute, and their ratio; the load and backfill times; the per-epoch times. A query rw
refuses is reported and left out of both sides.

With --each, every query runs alone in its own process (its own rw session and DuckDB, so the
peak RSS is that query's), and a table shows each query's maintenance rate against its
recompute.

Memory: today q2, q8 and q9 plan a cross join of PART and SUPPLIER (the FROM list's order; no
join reordering), so all 22 together at SF 0.1 peak near 16 GB of RSS; --each, or --queries
without them, keeps a run within a few GB.

    python bench/tpch.py [--scale 0.1] [--epochs 10] [--each] [--queries q3,q5] [--data-dir DIR] [--json FILE]
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
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
    t1 = time.perf_counter()
    w.session.execute("FLUSH")
    rw_s = time.perf_counter() - t0
    dml_s = t1 - t0
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
    return {"rows": rs.rows, "rw_seconds": rw_s, "rw_dml_seconds": dml_s, "recompute_seconds": duck_s,
            "different": different}


def run(args, log=print) -> dict:
    import rw_cli

    data = generate(args.scale, args.data_dir or os.path.join(tempfile.gettempdir(), f"rw-tpch-sf{args.scale}"))
    work = tempfile.mkdtemp(prefix="rw-tpch-")
    queries = [q.strip() for q in args.queries.split(",") if q.strip()]
    epochs: list[dict] = []
    try:
        duck = duck_connection(args.duckdb_threads)
        with rw_cli.connect(os.path.join(work, "rw")) as s:
            w = Workload(s, duck, data, queries=queries)
            loaded = load(w, args.load_parts)
            log(f"load: {loaded['rows']:,} rows in {args.load_parts} epochs; rw {loaded['rw_seconds']:.1f}s "
                f"({loaded['rows'] / loaded['rw_seconds']:,.0f} rows/s), DuckDB {loaded['duckdb_seconds']:.1f}s")
            views = create_views(w)
            maintained = [q for q in queries if q not in w.refused]
            log(f"create {len(queries)} MVs (backfill): {views['total_seconds']:.1f}s; maintained "
                f"{len(maintained)}; refused: " + (", ".join(f"{q} ({m})" for q, m in w.refused.items()) or "none"))
            start = {q: w.check(q) for q in maintained}
            bad = {q: o.detail for q, o in start.items() if o.state != "equal"}
            if bad:
                log("different after load: " + "; ".join(f"{q}: {d}" for q, d in bad.items()))
            idle = idle_epoch_ms(w)
            log(f"an epoch without changes (a FLUSH): {idle:.0f} ms")
            rf = RefreshFunctions(data, os.path.join(work, "refresh"), fraction=args.fraction)
            head = (f"{'epoch':>5} {'rows':>7} {'rw ms':>9} {'(DML ms':>8} {'FLUSH ms)':>9} {'recompute ms':>13} "
                    f"{'rw rows/s':>10} {'equal':>7}")
            log(head)
            log("-" * len(head))
            for k in range(args.epochs if maintained else 0):
                e = refresh_epoch(w, rf.next(), maintained)
                epochs.append(e)
                log(f"{k + 1:>5} {e['rows']:>7,} {e['rw_seconds'] * 1e3:>9.0f} {e['rw_dml_seconds'] * 1e3:>8.0f} "
                    f"{(e['rw_seconds'] - e['rw_dml_seconds']) * 1e3:>9.0f} {e['recompute_seconds'] * 1e3:>13.0f} "
                    f"{e['rows'] / e['rw_seconds']:>10,.0f} {len(maintained) - len(e['different']):>4}/"
                    f"{len(maintained)}")
                for q, d in e["different"].items():
                    log(f"      {q} different: {d}")
        duck.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    out = {"scale": args.scale, "epochs": args.epochs, "fraction": args.fraction, "load": loaded,
           "create_views": views, "refused": w.refused, "maintained": maintained,
           "different_after_load": bad, "idle_epoch_ms": idle, "refresh": epochs, "peak_rss_mb": peak_rss_mb()}
    if epochs:
        rows = sum(e["rows"] for e in epochs)
        rw_s = sum(e["rw_seconds"] for e in epochs)
        rec_s = sum(e["recompute_seconds"] for e in epochs)
        out.update(refresh_rows=rows, rw_seconds=rw_s, recompute_seconds=rec_s,
                   rw_dml_seconds=sum(e["rw_dml_seconds"] for e in epochs),
                   rw_flush_rows_per_s=rows / (rw_s - sum(e["rw_dml_seconds"] for e in epochs)),
                   rw_rows_per_s=rows / rw_s, recompute_rows_per_s=rows / rec_s, rw_over_recompute=rec_s / rw_s,
                   rw_epoch_ms_median=statistics.median(e["rw_seconds"] for e in epochs) * 1e3,
                   recompute_epoch_ms_median=statistics.median(e["recompute_seconds"] for e in epochs) * 1e3,
                   equal_after_refresh=sum(1 for q in maintained if all(q not in e["different"] for e in epochs)))
    return out


def run_each(args) -> dict:
    """Each query alone, in its own process (its own rw session, DuckDB and peak RSS)."""
    queries = [q.strip() for q in args.queries.split(",") if q.strip()]
    head = (f"{'query':<6} {'rw rows/s':>10} {'recompute rows/s':>17} {'rw/recompute':>13} {'FLUSH rows/s':>13} "
            f"{'backfill s':>11} {'rw epoch ms':>12} {'peak RSS':>9}  equal")
    print(head)
    print("-" * len(head))
    out = {}
    for q in queries:
        with tempfile.NamedTemporaryFile(suffix=".json") as f:
            cmd = [sys.executable, os.path.abspath(__file__), "--queries", q, "--json", f.name, "--quiet",
                   "--scale", str(args.scale), "--epochs", str(args.epochs), "--fraction", str(args.fraction),
                   "--load-parts", str(args.load_parts), "--duckdb-threads", str(args.duckdb_threads)]
            if args.data_dir:
                cmd += ["--data-dir", args.data_dir]
            proc = subprocess.run(cmd, capture_output=True, text=True)
            if proc.returncode != 0:
                out[q] = {"error": (proc.stderr.strip().splitlines() or ["failed"])[-1]}
                print(f"{q:<6} ERROR {out[q]['error']}", flush=True)
                continue
            with open(f.name) as g:
                r = json.load(g)
        out[q] = r
        if q in r["refused"]:
            print(f"{q:<6} refused: {r['refused'][q]}", flush=True)
            continue
        equal = "yes" if not r["different_after_load"] and r.get("equal_after_refresh") == 1 else "NO"
        print(f"{q:<6} {r['rw_rows_per_s']:>10,.0f} {r['recompute_rows_per_s']:>17,.0f} "
              f"{r['rw_over_recompute']:>13.3f} {r['rw_flush_rows_per_s']:>13,.0f} "
              f"{r['create_views']['total_seconds']:>11.1f} "
              f"{r['rw_epoch_ms_median']:>12,.0f} {r['peak_rss_mb']:>6,.0f} MB  {equal}", flush=True)
    return {"scale": args.scale, "epochs": args.epochs, "fraction": args.fraction, "queries": out}


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
    p.add_argument("--each", action="store_true",
                   help="each query alone in its own process: a table of per-query maintenance rates")
    p.add_argument("--quiet", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.quiet:
        _write(args.json_out, run(args, log=lambda *a: None))
        return
    print(f"TPC-H SF {args.scale}: {args.epochs} refresh epochs of RF1 + RF2 "
          f"({args.fraction:.2%} of ORDERS each), a FLUSH each", flush=True)
    if args.each:
        summary = run_each(args)
        print(json.dumps(summary, default=str))
        _write(args.json_out, summary)
        return
    summary = run(args, log=lambda *a: print(*a, flush=True))
    if "rw_seconds" not in summary:
        print("no refresh ran (every query refused)")
        _write(args.json_out, summary)
        return
    print(f"refresh: {summary['refresh_rows']:,} rows changed in {args.epochs} epochs; "
          f"rw {summary['rw_rows_per_s']:,.0f} rows/s ({summary['rw_seconds']:.1f}s, median epoch "
          f"{summary['rw_epoch_ms_median']:.0f} ms; the DML statements {summary['rw_dml_seconds']:.1f}s of it, "
          f"the FLUSHes alone {summary['rw_flush_rows_per_s']:,.0f} rows/s), "
          f"DuckDB recompute of {len(summary['maintained'])} queries "
          f"{summary['recompute_rows_per_s']:,.0f} rows/s ({summary['recompute_seconds']:.1f}s, median epoch "
          f"{summary['recompute_epoch_ms_median']:.0f} ms); rw/recompute {summary['rw_over_recompute']:.2f}; "
          f"MVs equal after every refresh: {summary['equal_after_refresh']}/{len(summary['maintained'])}; "
          f"peak RSS {summary['peak_rss_mb']:.0f} MB")
    print(json.dumps(summary, default=str))
    _write(args.json_out, summary)


def _write(path: str | None, summary: dict) -> None:
    if path:
        with open(path, "w") as f:
            json.dump(summary, f, indent=2, default=str)


if __name__ == "__main__":
    main()
