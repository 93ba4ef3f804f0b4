"""Queries per second through `rw serve` with psycopg (issue 26).

    PYTHONPATH=. .venv/bin/python bench/pgwire.py [--rows 100000] [--seconds 5] [--json]

Starts `rw serve` on a fresh data directory and a free port, loads a table `t(id bigint
primary key, g int, v double precision)` of `--rows` rows, then for 1, 8 and 32
connections (one thread each, autocommit, the extended protocol with a parameter) runs
for `--seconds`:

- point lookup: `select * from t where id = $1` (a random id each time);
- small aggregate: `select g, count(*), sum(v) from t where id < $1 group by g` over
  1,000 rows.

Prints a table and, with --json, one JSON object. The client threads share this process
with the GIL, so the client side is part of the figure: the single-connection number is
the round trip, the others show how the server's one statement-at-a-time lock scales.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "server"))

import psycopg  # noqa: E402

QUERIES = {
    "point lookup": ("select * from t where id = %s", lambda rows: [random.randrange(rows)]),
    "small aggregate": ("select g, count(*), sum(v) from t where id < %s group by g", lambda rows: [1000]),
}


def connect(port: int):
    return psycopg.connect(host="127.0.0.1", port=port, user="root", dbname="dev", autocommit=True)


def load(port: int, rows: int) -> None:
    with connect(port) as c:
        c.execute("create table t (id bigint primary key, g int, v double precision)")
        c.execute("insert into t select i, i %% 10, i * 0.5 from generate_series(0, %s) as s(i)", [rows - 1])
        c.execute("flush")
        assert c.execute("select count(*) from t").fetchone()[0] == rows


def measure(port: int, sql: str, params, rows: int, clients: int, seconds: float) -> dict:
    counts = [0] * clients
    errors: list[BaseException] = []
    start = threading.Barrier(clients + 1)
    stop = threading.Event()

    def worker(i: int) -> None:
        try:
            with connect(port) as c:
                c.execute(sql, params(rows)).fetchall()  # warm: the connection and the plan cache
                start.wait()
                while not stop.is_set():
                    c.execute(sql, params(rows)).fetchall()
                    counts[i] += 1
        except BaseException as e:  # noqa: BLE001
            errors.append(e)
            start.abort()

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(clients)]
    for t in threads:
        t.start()
    start.wait()
    t0 = time.perf_counter()
    time.sleep(seconds)
    stop.set()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - t0
    if errors:
        raise errors[0]
    return {"clients": clients, "queries": sum(counts), "qps": round(sum(counts) / elapsed, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--clients", default="1,8,32")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    from rw_server import rw_server

    results = {}
    with tempfile.TemporaryDirectory() as tmp, rw_server(Path(tmp) / "data") as port:
        load(port, args.rows)
        for name, (sql, params) in QUERIES.items():
            results[name] = [measure(port, sql, params, args.rows, n, args.seconds)
                             for n in (int(x) for x in args.clients.split(","))]
    print(f"rw serve, psycopg {psycopg.__version__}, {args.rows:,} rows, {args.seconds:g} s per run, "
          f"{os.cpu_count()} CPUs")
    print(f"{'query':<18}" + "".join(f"{r['clients']:>10} conn" for r in next(iter(results.values()))))
    for name, runs in results.items():
        print(f"{name:<18}" + "".join(f"{r['qps']:>11,.0f}/s" for r in runs))
    if args.json:
        print(json.dumps({"rows": args.rows, "seconds": args.seconds, "results": results}))


if __name__ == "__main__":
    main()
