#!/usr/bin/env python3
"""Tables and DML: rw maintaining an MV over a table that users load and change, against
DuckDB recomputing the MV's query after every epoch, in the same run (issue 21).

Workloads (the same data for both systems, from a deterministic generator in this file):

- A:     `SELECT auction, count(*), max(price), sum(price) FROM bid GROUP BY auction`
- B:     `SELECT a.category, count(*), avg(b.price) FROM bid b JOIN auction a ON b.auction = a.id
          GROUP BY a.category` (the auctions, rows/10 of them, are loaded before the clock starts)
- A_del: A, where every epoch after the first is 90% new bids and 10% deletes of earlier bids

Per epoch, rw loads the epoch's bids — `INSERT INTO bid SELECT * FROM read_parquet('<epoch
file>')` (`--load insert`), `COPY bid FROM '<epoch file>' (FORMAT parquet)` (`copy`), or
`session.insert("bid", <the file as an Arrow table>)` (`api`) — and for A_del
`DELETE FROM bid WHERE bid_id IN (...)`, then `FLUSH` (the MV's upkeep and a durable
checkpoint), through the Python API. DuckDB runs the same INSERT and DELETE, then the query,
fetching the whole result. `bid_id` is the primary key in both. Each workload runs in a
process of its own: rw first (its peak RSS is read before DuckDB runs), then DuckDB, `--repeat`
times alternately, fastest of each. Rows/s counts inserted plus deleted rows. At the end the
MV's contents are checked against DuckDB's last result.

    python bench/dml.py [--rows 1000000] [--epoch-rows 10000] [--workload A,B,A_del] [--repeat 1]
                        [--load insert,copy,api]
    python bench/dml.py --rows 10000000 --epoch-rows 100000      # the large run
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
sys.path.insert(0, os.path.dirname(HERE))

WORKLOADS = ("A", "B", "A_del")
LOADS = ("insert", "copy", "api")  # how rw loads an epoch's bids
BID = "bid_id BIGINT PRIMARY KEY, auction BIGINT, bidder BIGINT, price BIGINT, channel VARCHAR, date_time TIMESTAMP"
AUCTION = "id BIGINT PRIMARY KEY, seller BIGINT, category BIGINT, initial_bid BIGINT, date_time TIMESTAMP"
QUERY = {
    "A": "SELECT auction, count(*) AS n, max(price) AS max_price, sum(price) AS sum_price FROM bid GROUP BY auction",
    "B": "SELECT a.category, count(*) AS n, avg(b.price) AS avg_price FROM bid b JOIN auction a "
         "ON b.auction = a.id GROUP BY a.category",
}
QUERY["A_del"] = QUERY["A"]
DELETE_SHARE = 0.1  # of each A_del epoch after the first
CATEGORIES = 100
BASE_TIME_US = 1_700_000_000_000_000


# -- the generator ---------------------------------------------------------------------------------
def _bids(rng, ids, n_auctions: int):
    """Bids with the given ids: auctions Zipf-skewed (a few hot ones), prices uniform."""
    import pyarrow as pa

    n = len(ids)
    channels = pa.array(["apple", "google", "facebook", "baidu"])
    return pa.table({
        "bid_id": pa.array(ids, pa.int64()),
        "auction": pa.array(rng.zipf(1.3, n) % n_auctions, pa.int64()),  # a few hot auctions
        "bidder": pa.array(rng.integers(0, 1_000_000, n), pa.int64()),
        "price": pa.array(rng.integers(1, 100_000, n), pa.int64()),
        "channel": channels.take(pa.array(rng.integers(0, 4, n))),
        "date_time": pa.array(BASE_TIME_US + ids * 1000, pa.timestamp("us")),
    })


def generate(out_dir: str, rows: int, epoch_rows: int, workload: str, seed: int = 21) -> dict:
    """Write the epochs' files (`bid_<k>.parquet`, the ids each deletes) and the auctions.
    Returns the manifest: per epoch the file, the DELETE's ids and the epoch's row count."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(seed)
    n_auctions = max(1, rows // 10)
    auctions = pa.table({
        "id": pa.array(np.arange(n_auctions), pa.int64()),
        "seller": pa.array(rng.integers(0, 100_000, n_auctions), pa.int64()),
        "category": pa.array(rng.integers(0, CATEGORIES, n_auctions), pa.int64()),
        "initial_bid": pa.array(rng.integers(1, 1000, n_auctions), pa.int64()),
        "date_time": pa.array(BASE_TIME_US + np.arange(n_auctions) * 1000, pa.timestamp("us")),
    })
    auction_file = os.path.join(out_dir, "auction.parquet")
    pq.write_table(auctions, auction_file)
    deletes = workload == "A_del"
    alive = np.zeros(0, dtype=bool)  # alive[i]: bid i inserted and not deleted
    next_id, done, epochs = 0, 0, []
    while done < rows:
        size = min(epoch_rows, rows - done)
        n_del = int(size * DELETE_SHARE) if deletes and epochs else 0
        n_del = min(n_del, int(alive.sum()))
        ids = np.arange(next_id, next_id + size - n_del, dtype=np.int64)
        table = _bids(rng, ids, n_auctions)
        path = os.path.join(out_dir, f"bid_{len(epochs)}.parquet")
        pq.write_table(table, path)
        gone: list[int] = []
        if n_del:
            gone = sorted(rng.choice(np.flatnonzero(alive), n_del, replace=False).tolist())
            alive[gone] = False
        alive = np.concatenate([alive, np.ones(len(ids), dtype=bool)])
        next_id += len(ids)
        done += size
        epochs.append({"file": path, "delete": gone, "rows": size})
    return {"auction_file": auction_file, "epochs": epochs, "rows": done}


def _delete_sql(ids: list[int]) -> str | None:
    return f"DELETE FROM bid WHERE bid_id IN ({', '.join(map(str, ids))})" if ids else None


def _statements(manifest: dict) -> list[tuple[str, str | None]]:
    return [(f"INSERT INTO bid SELECT * FROM read_parquet('{e['file']}')", _delete_sql(e["delete"]))
            for e in manifest["epochs"]]


# -- rw --------------------------------------------------------------------------------------------
def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _loader(s, load: str):
    """How one epoch's bids get into rw's table `bid`: a function of the epoch's file."""
    if load == "copy":
        return lambda file: s.execute(f"COPY bid FROM '{file}' (FORMAT parquet)")
    if load == "api":
        import pyarrow.parquet as pq

        return lambda file: s.insert("bid", pq.read_table(file))
    return lambda file: s.execute(f"INSERT INTO bid SELECT * FROM read_parquet('{file}')")


def run_rw(workload: str, manifest: dict, profile: str | None, load: str = "insert") -> dict:
    import rw_cli

    data_dir = tempfile.mkdtemp(prefix=f"rw-dml-{workload}-")
    try:
        s = rw_cli.connect(data_dir)
        s.execute(f"CREATE TABLE bid ({BID})")
        if workload == "B":
            s.execute(f"CREATE TABLE auction ({AUCTION})")
            s.execute(f"INSERT INTO auction SELECT * FROM read_parquet('{manifest['auction_file']}')")
            s.execute("FLUSH")
        s.execute(f"CREATE MATERIALIZED VIEW mv AS {QUERY[workload]}")
        stmts = _statements(manifest)
        files = [e["file"] for e in manifest["epochs"]]
        load_epoch = _loader(s, load)
        prof = None
        if profile:
            import cProfile

            prof = cProfile.Profile()
            prof.enable()
        start = time.perf_counter()
        marks = [start]
        for file, (_, delete) in zip(files, stmts):
            load_epoch(file)
            if delete:
                s.execute(delete)
            s.execute("FLUSH")
            marks.append(time.perf_counter())
        elapsed = time.perf_counter() - start
        if prof is not None:
            prof.disable()
            prof.dump_stats(profile)
        result = s.execute("SELECT * FROM mv").arrow()
        s.close()
        return {"seconds": elapsed, "epochs": len(stmts), "epoch_growth": _growth(marks),
                "peak_rss_mb": peak_rss_mb(), "result": _canonical(result)}
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)


def _growth(marks: list[float]) -> dict:
    """Median epoch time of the first and of the last tenth: an epoch's cost should follow
    its changes, not the table's size."""
    d = [b - a for a, b in zip(marks, marks[1:])]
    k = max(1, len(d) // 10)
    first, last = statistics.median(d[:k]), statistics.median(d[-k:])
    return {"first_ms": round(first * 1e3, 1), "last_ms": round(last * 1e3, 1),
            "ratio": round(last / first, 2) if first else None}


# -- DuckDB ----------------------------------------------------------------------------------------
def run_duckdb(workload: str, manifest: dict, threads: int) -> dict:
    import duckdb

    con = duckdb.connect(":memory:", config={"threads": threads} if threads else {})
    con.execute(f"CREATE TABLE bid ({BID})")
    if workload == "B":
        con.execute(f"CREATE TABLE auction ({AUCTION})")
        con.execute(f"INSERT INTO auction SELECT * FROM read_parquet('{manifest['auction_file']}')")
    stmts = _statements(manifest)
    start = time.perf_counter()
    marks = [start]
    result = None
    for insert, delete in stmts:
        con.execute(insert)
        if delete:
            con.execute(delete)
        result = con.sql(QUERY[workload]).fetch_arrow_table()
        marks.append(time.perf_counter())
    elapsed = time.perf_counter() - start
    con.close()
    return {"seconds": elapsed, "epoch_growth": _growth(marks), "result": _canonical(result)}


def _canonical(table) -> list:
    """Sorted rows, floats rounded: the MV and DuckDB's answer compare equal when right."""
    if table is None:
        return []
    rows = []
    for r in table.to_pylist():
        rows.append(tuple(round(float(v), 6) if isinstance(v, float) or type(v).__name__ == "Decimal" else v
                          for v in r.values()))
    return sorted(rows, key=repr)


# -- driver ----------------------------------------------------------------------------------------
def worker(args) -> None:
    """One workload in this process: rw, then DuckDB, `--repeat` times alternately."""
    with open(args.manifest) as f:
        manifest = json.load(f)
    rws, dks, rss = [], [], None
    for i in range(max(1, args.repeat)):
        rws.append(run_rw(args.worker, manifest, args.profile if i == 0 else None, args.load_mode))
        if rss is None:
            rss = rws[-1]["peak_rss_mb"]  # before DuckDB ran in this process
        dks.append(run_duckdb(args.worker, manifest, args.duckdb_threads))
    rw = min(rws, key=lambda r: r["seconds"])
    dk = min(dks, key=lambda r: r["seconds"])
    same = all(r["result"] == dks[-1]["result"] for r in rws)
    out = {"rw_seconds": rw["seconds"], "recompute_seconds": dk["seconds"],
           "rw_all_seconds": [r["seconds"] for r in rws], "recompute_all_seconds": [d["seconds"] for d in dks],
           "rw_epoch_growth": rw["epoch_growth"], "recompute_epoch_growth": dk["epoch_growth"],
           "rw_peak_rss_mb": rss, "epochs": rw["epochs"], "result_rows": len(dk["result"]),
           "results_equal": same}
    print(json.dumps(out))


def _spawn(workload: str, load: str, manifest_path: str, args) -> dict:
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", workload, "--manifest", manifest_path,
           "--repeat", str(args.repeat), "--duckdb-threads", str(args.duckdb_threads), "--load-mode", load]
    if args.profile:
        cmd += ["--profile", f"{args.profile}.{workload}.prof"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        return {"error": (proc.stderr.strip().splitlines() or ["failed"])[-1]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rows", type=int, default=1_000_000, help="rows changed in all (bids inserted + deleted)")
    p.add_argument("--epoch-rows", type=int, default=10_000, help="rows per epoch (one FLUSH each)")
    p.add_argument("--workload", default=",".join(WORKLOADS), help="comma-separated: A, B, A_del")
    p.add_argument("--repeat", type=int, default=1,
                   help="run rw and DuckDB N times each, alternately, and keep each one's fastest run")
    p.add_argument("--duckdb-threads", type=int, default=0, help="DuckDB threads (0: DuckDB's default)")
    p.add_argument("--profile", default=None, help="write a cProfile of rw's first run to PREFIX.<workload>.prof")
    p.add_argument("--json", dest="json_out", default=None, help="also write the summary to this file")
    p.add_argument("--load", default="insert,copy,api",
                   help="how rw loads each epoch, comma-separated: insert (INSERT ... SELECT read_parquet), "
                        "copy (COPY ... FROM), api (Session.insert of an Arrow table); a row each")
    p.add_argument("--worker", choices=WORKLOADS, help=argparse.SUPPRESS)
    p.add_argument("--load-mode", choices=LOADS, default="insert", help=argparse.SUPPRESS)
    p.add_argument("--manifest", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.worker:
        worker(args)
        return
    workloads = [w.strip() for w in args.workload.split(",") if w.strip()]
    for w in workloads:
        if w not in WORKLOADS:
            p.error(f"unknown workload {w!r} (one of {', '.join(WORKLOADS)})")
    loads = [x.strip() for x in args.load.split(",") if x.strip()]
    for x in loads:
        if x not in LOADS:
            p.error(f"unknown load {x!r} (one of {', '.join(LOADS)})")
    print(f"DML: {args.rows:,} rows, {args.epoch_rows:,} rows per epoch (a FLUSH each)"
          + (f", fastest of {args.repeat} runs each" if args.repeat > 1 else ""))
    head = f"{'workload':<16} {'rw rows/s':>11} {'recompute rows/s':>17} {'rw/recompute':>13} " \
           f"{'rw epoch ms first/last':>23} {'recompute ms first/last':>24} {'rw peak RSS':>12}  check"
    print(head)
    print("-" * len(head))
    summary = {"rows": args.rows, "epoch_rows": args.epoch_rows, "repeat": args.repeat, "workloads": {}}
    for w in workloads:
        tmp = tempfile.mkdtemp(prefix=f"rw-dml-data-{w}-")
        try:
            manifest = generate(tmp, args.rows, args.epoch_rows, w)
            path = os.path.join(tmp, "manifest.json")
            with open(path, "w") as f:
                json.dump(manifest, f)
            results = {load: _spawn(w, load, path, args) for load in loads}
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        for load, res in results.items():
            _report(w if load == "insert" else f"{w} ({load})", res, manifest, summary)
    print(json.dumps(summary))
    if args.json_out:
        with open(args.json_out, "w") as f:
            json.dump(summary, f, indent=2)


def _report(name: str, res: dict, manifest: dict, summary: dict) -> None:
    summary["workloads"][name] = res
    if "error" in res:
        print(f"{name:<16} ERROR {res['error']}", flush=True)
        return
    rw_rps = manifest["rows"] / res["rw_seconds"]
    rec_rps = manifest["rows"] / res["recompute_seconds"]
    res.update(rw_rows_per_s=rw_rps, recompute_rows_per_s=rec_rps, rw_over_recompute=rw_rps / rec_rps)
    g, h = res["rw_epoch_growth"], res["recompute_epoch_growth"]
    print(f"{name:<16} {rw_rps:>11,.0f} {rec_rps:>17,.0f} {rw_rps / rec_rps:>13.2f} "
          f"{g['first_ms']:>14.0f} /{g['last_ms']:>7.0f} {h['first_ms']:>15.0f} /{h['last_ms']:>7.0f} "
          f"{res['rw_peak_rss_mb']:>9.0f} MB  {'ok' if res['results_equal'] else 'MISMATCH'}", flush=True)


if __name__ == "__main__":
    main()
