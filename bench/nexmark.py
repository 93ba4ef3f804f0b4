#!/usr/bin/env python3
"""Nexmark benchmark: rw's incremental engine against DuckDB recomputing from scratch.

For each query (q0 q1 q2 q3 q4 q5 q7 q8 q9 q17, as written in RisingWave's conformance suite,
`e2e_test/streaming/nexmark/sinks/`: a `blackhole` sink over the query, the way RisingWave's
own Nexmark benchmark runs it), over N events of the `nexmark` source (three sources,
`nexmark.table.type` = Person, Auction, Bid, reading the same event numbers):

- rw: a fresh data directory (on-disk Hummock store), the sources and the sink created by SQL,
  then `tick(--epoch-rows events)` + a barrier (a checkpoint) per epoch until the sources are
  exhausted. Timed end to end, event generation included. Runs in its own process, so its
  peak RSS is the query's alone; the store's upload and compactor processes are reported
  beside it.
- recompute: DuckDB, after every epoch, appends the epoch's events and re-runs the query over
  all events so far, fetching the whole result. Timed: appends + queries (event generation,
  done before the clock starts, is not counted).
- one-shot: DuckDB loads all N events and runs the query once. Timed: load + query.

The query text given to DuckDB is the same SQL, bound and transpiled by rw's batch layer
(time windows expanded, PostgreSQL semantics). Prints a table per query and a JSON summary.

    python bench/nexmark.py [--events 1000000] [--epoch-rows 10000] [--queries q0,q4]
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)

QUERIES = ["q0", "q1", "q2", "q3", "q4", "q5", "q7", "q8", "q9", "q17"]
SUITE = os.path.join(os.path.dirname(ROOT), "shared", "conformance", "e2e_test", "streaming", "nexmark")
TABLES = ("person", "auction", "bid")

SOURCES = {
    "person": "id BIGINT, name VARCHAR, email_address VARCHAR, credit_card VARCHAR, city VARCHAR, "
              "state VARCHAR, date_time TIMESTAMP, extra VARCHAR",
    "auction": "id BIGINT, item_name VARCHAR, description VARCHAR, initial_bid BIGINT, reserve BIGINT, "
               "date_time TIMESTAMP, expires TIMESTAMP, seller BIGINT, category BIGINT, extra VARCHAR",
    "bid": "auction BIGINT, bidder BIGINT, price BIGINT, channel VARCHAR, url VARCHAR, "
           "date_time TIMESTAMP, extra VARCHAR",
}


def _statement(path: str) -> str:
    with open(path, encoding="utf-8") as f:
        lines = [ln for ln in f.read().splitlines() if ln.strip() != "statement ok"]
    return "\n".join(lines).strip().rstrip(";")


def sink_sql(q: str, suite: str) -> str:
    return _statement(os.path.join(suite, "sinks", f"{q}.slt.part"))


def view_query(q: str, suite: str) -> str:
    """The SELECT of views/<q>: what DuckDB runs."""
    import re

    text = _statement(os.path.join(suite, "views", f"{q}.slt.part"))
    return re.split(r"\bAS\b", text, maxsplit=1, flags=re.IGNORECASE)[1].strip()


def source_sql(table: str, events: int, gap_ns: int) -> str:
    return (f"CREATE SOURCE {table} ({SOURCES[table]}) WITH (connector = 'nexmark', "
            f"nexmark.table.type = '{table.capitalize()}', nexmark.event.num = '{events}', "
            f"nexmark.split.num = '1', nexmark.min.event.gap.in.ns = '{gap_ns}')")


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


# -- rw ----------------------------------------------------------------------------------------
def run_rw(q: str, events: int, epoch_rows: int, gap_ns: int, suite: str, profile: str | None) -> dict:
    import rw_cli
    from rw_cli.stream.driver import sources_idle

    data_dir = tempfile.mkdtemp(prefix=f"rw-nexmark-{q}-")
    try:
        s = rw_cli.connect(data_dir)
        for t in TABLES:
            s.execute(source_sql(t, events, gap_ns))
        s.execute(sink_sql(q, suite))
        prof = None
        if profile:
            import cProfile

            prof = cProfile.Profile()
            prof.enable()
        start = time.perf_counter()
        epochs = 0
        marks = [start]
        while True:
            s.tick(epoch_rows)
            s.barrier()
            epochs += 1
            marks.append(time.perf_counter())
            if sources_idle(s):
                break
        s.settle()  # every epoch durable (the uploads of the last ones may still be running)
        elapsed = time.perf_counter() - start
        if prof is not None:
            prof.disable()
            prof.dump_stats(profile)
        rows = {ex.name: ex.rows_read for _, ex in _sources(s)}
        store = dict(s.store.stats)
        compactor_rss = _compactor_peak_rss_mb()
        uploader_rss = _uploader_peak_rss_mb()
        sink = s.execute("SHOW JOBS").fetchall()[-1][3]
        s.close()
        return {"seconds": elapsed, "epochs": epochs, "rows": rows, "sink": sink, "peak_rss_mb": peak_rss_mb(),
                "cpu_seconds": time.process_time(), "store": store, "epoch_growth": _growth(marks),
                "compactor_peak_rss_mb": compactor_rss, "uploader_peak_rss_mb": uploader_rss}
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)


def _growth(marks: list[float]) -> dict:
    """Median epoch time of the first and of the last tenth of the run: the cost of an epoch
    should not grow with the history."""
    import statistics

    d = [b - a for a, b in zip(marks, marks[1:])]
    k = max(1, len(d) // 10)
    first, last = statistics.median(d[:k]), statistics.median(d[-k:])
    return {"first_ms": round(first * 1e3, 1), "last_ms": round(last * 1e3, 1),
            "ratio": round(last / first, 2) if first else None}


def _compactor_peak_rss_mb() -> float:
    """The compactor process's peak RSS (0 when compaction ran in this process)."""
    from rw_cli.store import compactor_process

    return _helper_peak_rss_mb(compactor_process._compactor)


def _uploader_peak_rss_mb() -> float:
    """The upload process's peak RSS (0 when uploads ran in this process)."""
    from rw_cli.store import upload_process

    return _helper_peak_rss_mb(upload_process._uploader)


def _helper_peak_rss_mb(helper) -> float:
    try:
        with open(f"/proc/{helper.proc.pid}/status") as f:
            return next(int(ln.split()[1]) for ln in f if ln.startswith("VmHWM")) / 1024.0
    except (AttributeError, OSError, StopIteration):
        return 0.0


def _sources(s):
    from rw_cli.engine.source import source_executors

    return source_executors(s.runtime)


# -- DuckDB ----------------------------------------------------------------------------------------
def duck_connection(threads: int):
    from rw_cli.engine import duck, duck_functions

    con = duck.open_connection(threads)
    duck_functions.install(con)
    return con


def duck_sql(q: str, suite: str) -> tuple[str, dict[str, str]]:
    """The query as DuckDB SQL over tables `__rel_<id>`, and the names of those tables."""
    from rw_cli.common.types import DataType
    from rw_cli.meta.catalog import TABLE, Catalog, ColumnCatalog, RelationCatalog
    from rw_cli.sql.batch import bind_query
    from rw_cli.sql.dialect import parse_statement
    from rw_cli.sql.transpile import to_duckdb

    catalog = Catalog()
    names = {}
    for t in TABLES:
        cols = []
        for part in SOURCES[t].split(", "):
            n, ty = part.split(" ", 1)
            cols.append(ColumnCatalog(n, DataType.from_sql(ty)))
        rel = RelationCatalog(catalog.alloc_id(), t, TABLE, cols, [0])
        catalog.add(rel)
        names[t] = f"__rel_{rel.id}"
    bound = bind_query(parse_statement(view_query(q, suite)), catalog)
    return to_duckdb(bound.tree, bound.schema), names


def epoch_data(events: int, epoch_rows: int, gap_ns: int):
    """The events of each epoch as Arrow tables, generated as the sources generate them."""
    import numpy as np

    from rw_cli.connector.nexmark import generate

    out = []
    for lo in range(0, events, epoch_rows):
        e = np.arange(lo, min(events, lo + epoch_rows), dtype=np.int64)
        out.append({t: generate(t, e, gap_ns) for t in TABLES})
    return out


def run_duckdb(q: str, events: int, epoch_rows: int, gap_ns: int, suite: str, threads: int,
               skip_recompute: bool) -> dict:
    sql, names = duck_sql(q, suite)
    data = epoch_data(events, epoch_rows, gap_ns)
    out: dict = {}
    if not skip_recompute:
        con = duck_connection(threads)
        _create(con, names, data[0])
        start = time.perf_counter()
        result_rows = 0
        for epoch in data:
            for t in TABLES:
                con.register("__chunk", epoch[t])
                con.execute(f"INSERT INTO {names[t]} SELECT * FROM __chunk")
                con.unregister("__chunk")
            result_rows = con.sql(sql).to_arrow_table().num_rows
        out["recompute_seconds"] = time.perf_counter() - start
        out["result_rows"] = result_rows
        con.close()
    con = duck_connection(threads)
    _create(con, names, data[0])
    import pyarrow as pa

    full = {t: pa.concat_tables([d[t] for d in data]) for t in TABLES}
    start = time.perf_counter()
    for t in TABLES:
        con.register("__chunk", full[t])
        con.execute(f"INSERT INTO {names[t]} SELECT * FROM __chunk")
        con.unregister("__chunk")
    n = con.sql(sql).to_arrow_table().num_rows
    out["oneshot_seconds"] = time.perf_counter() - start
    out.setdefault("result_rows", n)
    con.close()
    return out


def _create(con, names, sample) -> None:
    for t in TABLES:
        con.register("__chunk", sample[t])
        con.execute(f"CREATE TABLE {names[t]} AS SELECT * FROM __chunk LIMIT 0")
        con.unregister("__chunk")


# -- driver ----------------------------------------------------------------------------------------
def worker(args) -> None:
    if args.worker == "rw":
        res = run_rw(args.queries, args.events, args.epoch_rows, args.gap_ns, args.suite, args.profile)
    else:
        res = run_duckdb(args.queries, args.events, args.epoch_rows, args.gap_ns, args.suite,
                         args.duckdb_threads, args.skip_recompute)
    print(json.dumps(res))


def _spawn(kind: str, q: str, args) -> dict:
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", kind, "--queries", q,
           "--events", str(args.events), "--epoch-rows", str(args.epoch_rows), "--gap-ns", str(args.gap_ns),
           "--suite", args.suite, "--duckdb-threads", str(args.duckdb_threads)]
    if args.skip_recompute:
        cmd.append("--skip-recompute")
    if args.profile and kind == "rw":
        cmd += ["--profile", f"{args.profile}.{q}.prof"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        return {"error": (proc.stderr.strip().splitlines() or ["failed"])[-1]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _fastest(q: str, args) -> tuple[dict, dict]:
    """rw's and DuckDB's runs of query `q`, `--repeat` times each, alternately: the fastest
    rw run, and DuckDB's fastest recompute and one-shot times (with every run's times)."""
    rws, dks = [], []
    for _ in range(max(1, args.repeat)):
        rws.append(_spawn("rw", q, args))
        dks.append(_spawn("duckdb", q, args))
        if "error" in rws[-1] or "error" in dks[-1]:
            return rws[-1], dks[-1]
    rw = dict(min(rws, key=lambda r: r["seconds"]))
    dk = dict(dks[0])
    for k in ("recompute_seconds", "oneshot_seconds"):
        if k in dk:
            dk[k] = min(d[k] for d in dks)
    if len(rws) > 1:
        rw["all_seconds"] = [r["seconds"] for r in rws]
        dk["all_recompute_seconds"] = [d.get("recompute_seconds") for d in dks]
    return rw, dk


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--events", type=int, default=1_000_000)
    p.add_argument("--epoch-rows", type=int, default=10_000, help="events per epoch (one checkpoint each)")
    p.add_argument("--queries", default=",".join(QUERIES))
    p.add_argument("--gap-ns", type=int, default=100_000, help="nexmark.min.event.gap.in.ns")
    p.add_argument("--suite", default=SUITE, help="the conformance suite's streaming/nexmark directory")
    p.add_argument("--duckdb-threads", type=int, default=0, help="DuckDB threads (0: DuckDB's default)")
    p.add_argument("--skip-recompute", action="store_true", help="only rw and one-shot")
    p.add_argument("--profile", default=None, help="write a cProfile of each rw run to PREFIX.<q>.prof")
    p.add_argument("--json", dest="json_out", default=None, help="also write the summary to this file")
    p.add_argument("--repeat", type=int, default=1,
                   help="run rw and DuckDB N times each, alternately, and keep each one's fastest run "
                        "(a shared machine's speed drifts)")
    p.add_argument("--worker", choices=["rw", "duckdb"], help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.worker:
        worker(args)
        return
    queries = [q.strip() for q in args.queries.split(",") if q.strip()]
    print(f"Nexmark: {args.events:,} events, {args.epoch_rows:,} events per epoch "
          f"({-(-args.events // args.epoch_rows)} epochs, a checkpoint each), gap {args.gap_ns} ns"
          + (f", fastest of {args.repeat} runs each" if args.repeat > 1 else ""))
    head = f"{'query':<6} {'rw ev/s':>12} {'recompute ev/s':>15} {'one-shot ev/s':>14} {'rw/recompute':>13} " \
           f"{'rw peak RSS':>12} {'uploader':>9} {'compactor':>10} {'epoch ms first/last':>20}  rw time"
    print(head)
    print("-" * len(head))
    summary = {"events": args.events, "epoch_rows": args.epoch_rows, "gap_ns": args.gap_ns, "repeat": args.repeat,
               "queries": {}}
    for q in queries:
        rw, dk = _fastest(q, args)
        row = {"rw": rw, "duckdb": dk}
        if "error" in rw or "error" in dk:
            print(f"{q:<6} ERROR {rw.get('error') or dk.get('error')}")
            summary["queries"][q] = row
            continue
        rw_eps = args.events / rw["seconds"]
        rec_eps = args.events / dk["recompute_seconds"] if "recompute_seconds" in dk else None
        one_eps = args.events / dk["oneshot_seconds"]
        ratio = rw_eps / rec_eps if rec_eps else None
        row.update(rw_events_per_s=rw_eps, recompute_events_per_s=rec_eps, oneshot_events_per_s=one_eps,
                   rw_over_recompute=ratio, rw_peak_rss_mb=rw["peak_rss_mb"])
        summary["queries"][q] = row
        print(f"{q:<6} {rw_eps:>12,.0f} {(rec_eps or 0):>15,.0f} {one_eps:>14,.0f} "
              f"{(ratio or 0):>13.2f} {rw['peak_rss_mb']:>9.0f} MB {rw['uploader_peak_rss_mb']:>6.0f} MB "
              f"{rw['compactor_peak_rss_mb']:>7.0f} MB "
              f"{rw['epoch_growth']['first_ms']:>10.0f} /{rw['epoch_growth']['last_ms']:>7.0f}  "
              f"{rw['seconds']:.1f}s", flush=True)
    print(json.dumps(summary, indent=None))
    if args.json_out:
        with open(args.json_out, "w") as f:
            json.dump(summary, f, indent=2)


if __name__ == "__main__":
    main()
