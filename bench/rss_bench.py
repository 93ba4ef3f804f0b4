#!/usr/bin/env python3
"""Peak RSS of `rw` with a bounded cache: a 10,000,000-row table and an aggregating MV over
it, created, updated and queried with `--cache-size 128MiB` (issue 3: under 1.5 GiB).

Each step runs `rw --data-dir DIR --cache-size SIZE -c SQL` in its own process; the peak
RSS of each process is read from its rusage (`os.wait4`, ru_maxrss). Steps:

1. load: `CREATE TABLE t (k bigint primary key, g int, v int)`, the MV
   `m = SELECT g, count(*), sum(v) FROM t GROUP BY g` (100,000 groups), then --rows rows
   inserted by `INSERT ... SELECT FROM generate_series` in chunks of --chunk, each flushed
   (one process for the whole load);
2. update: a tenth of the rows change their value, a hundredth are deleted (one process);
3. query: the MV checked against its defining query over the base table, a point lookup
   and a scan (one process, a restart: the MV's state is recovered from the store).

Prints one line per step (seconds, peak RSS) and ends with `peak RSS X MiB` (the largest)
and whether it is under the --limit.

    .venv/bin/python bench/rss_bench.py [--rows 10000000] [--cache-size 128MiB] [--data-dir DIR]
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
RW = [sys.executable, "-m", "rw_cli.cli"]
GROUPS = 100_000


def run_rw(data_dir: str, cache_size: str, sql: str) -> tuple[float, float, str]:
    """(seconds, peak RSS in MiB, stdout) of one `rw -c SQL` process."""
    env = dict(os.environ, PYTHONPATH=os.path.dirname(HERE) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(RW + ["--no-config", "--data-dir", data_dir, "--cache-size", cache_size,
                                      "--format", "csv", "-c", sql], stdout=out, stderr=err, env=env)
        _, status, usage = os.wait4(proc.pid, 0)  # this process's own rusage
        proc.returncode = code = os.waitstatus_to_exitcode(status)
        secs = time.perf_counter() - t0
        out.seek(0)
        err.seek(0)
        text, errors = out.read(), err.read()
    if code != 0:
        raise SystemExit(f"rw failed ({code}):\n{errors[-3000:]}")
    return secs, usage.ru_maxrss / 1024.0, text


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--chunk", type=int, default=1_000_000)
    ap.add_argument("--cache-size", default="128MiB")
    ap.add_argument("--limit-mib", type=float, default=1536.0)
    ap.add_argument("--data-dir", default=None, help="keep the data here (default: a temporary directory)")
    args = ap.parse_args()

    data_dir = args.data_dir or tempfile.mkdtemp(prefix="rw-rss-bench-")
    n = args.rows
    try:
        load = ["CREATE TABLE t (k bigint PRIMARY KEY, g int, v int)",
                "CREATE MATERIALIZED VIEW m AS SELECT g, count(*) AS c, sum(v) AS s FROM t GROUP BY g"]
        for lo in range(1, n + 1, args.chunk):
            hi = min(n, lo + args.chunk - 1)
            load.append(f"INSERT INTO t SELECT x, (x % {GROUPS})::int, (x % 1000)::int "
                        f"FROM generate_series({lo}, {hi}) x")
            load.append("FLUSH")
        update = ["UPDATE t SET v = v + 1 WHERE k % 10 = 0", "FLUSH",
                  "DELETE FROM t WHERE k % 100 = 1", "FLUSH"]
        check = ("SELECT (SELECT count(*) FROM t) AS rows, (SELECT sum(c) FROM m) AS mv_rows, "
                 "(SELECT count(*) FROM (SELECT g, count(*) AS c, sum(v) AS s FROM t GROUP BY g "
                 " EXCEPT SELECT g, c, s FROM m) d) AS mv_diff")
        query = [check, f"SELECT * FROM t WHERE k = {n // 2}", "SELECT max(s) FROM m"]
        steps = [("load", load), ("update", update), ("query (after a restart)", query)]
        peaks = []
        print(f"{n:,} rows, --cache-size {args.cache_size}, data in {data_dir}", flush=True)
        for name, stmts in steps:
            secs, peak, out = run_rw(data_dir, args.cache_size, ";\n".join(stmts) + ";")
            peaks.append(peak)
            print(f"{name:<26} {secs:8.1f} s   peak RSS {peak:8.1f} MiB", flush=True)
            if name.startswith("query"):
                lines = [ln for ln in out.splitlines() if ln.strip()]
                rows, mv_rows, diff = lines[1].split(",")
                want = n - len(range(1, n + 1, 100))
                print(f"  table rows {rows}, MV count {mv_rows}, MV groups differing from the query: {diff}")
                if int(rows) != want or int(mv_rows) != want or int(diff) != 0:
                    raise SystemExit("the MV does not match its query")
        peak = max(peaks)
        print(f"peak RSS {peak:.1f} MiB ({peak / 1024:.2f} GiB): "
              f"{'under' if peak < args.limit_mib else 'OVER'} the limit of {args.limit_mib:.0f} MiB")
        if peak >= args.limit_mib:
            sys.exit(1)
    finally:
        if args.data_dir is None:
            shutil.rmtree(data_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
