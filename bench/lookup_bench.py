"""Primary-key point lookups on a materialized view, from rw's Python API.

    .venv/bin/python bench/lookup_bench.py --rows 10000000 [--lookups 1000] [--data-dir DIR] [--compact]

Builds (or reuses, with --data-dir) a table `t(id bigint primary key, v int, s varchar)` of
--rows rows and an MV `m` over it (pk `id`), then times `SELECT * FROM m WHERE id = <k>` for
random k and prints the median, p90 and p99 latency. For comparison it also times one full
scan (`SELECT count(*) FROM m`), which is what a lookup costs without the fast path.
With --compact the store is fully compacted first (as `rw compact` does).
"""
from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import rw_cli  # noqa: E402


def build(session, rows: int, chunk: int) -> float:
    t0 = time.perf_counter()
    session.execute("CREATE TABLE t (id bigint PRIMARY KEY, v int, s varchar)")
    session.execute("CREATE MATERIALIZED VIEW m AS SELECT id, v, s FROM t")
    done = 0
    while done < rows:
        n = min(chunk, rows - done)
        session.execute(f"INSERT INTO t SELECT g, (g % 1000)::int, 'row-' || g::varchar "
                        f"FROM generate_series({done + 1}, {done + n}) g")
        session.execute("FLUSH")
        done += n
        print(f"  loaded {done:,} rows ({time.perf_counter() - t0:.1f}s)", flush=True)
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--lookups", type=int, default=1000)
    ap.add_argument("--chunk", type=int, default=500_000)
    ap.add_argument("--data-dir", default=None, help="reuse (or create) this data directory")
    ap.add_argument("--scan", action="store_true", help="also time a full scan")
    ap.add_argument("--compact", action="store_true", help="compact the store fully before the lookups")
    args = ap.parse_args()

    data_dir = args.data_dir or tempfile.mkdtemp(prefix="rw-lookup-bench-")
    session = rw_cli.connect(data_dir)
    if session.catalog.get("m") is None:
        print(f"building {args.rows:,} rows in {data_dir}")
        secs = build(session, args.rows, args.chunk)
        print(f"built in {secs:.1f}s ({args.rows / secs:,.0f} rows/s)")
    if args.compact:
        t0 = time.perf_counter()
        session.store.compact(full=True)
        session.store.vacuum()
        print(f"compacted in {time.perf_counter() - t0:.1f}s: levels {[len(lv) for lv in session.store.version.levels]}")
    rows = int(session.execute("SELECT count(*) FROM t").fetchall()[0][0]) if args.scan else args.rows
    rng = random.Random(42)
    for k in range(20):  # warm up (DuckDB connection, caches)
        session.execute(f"SELECT * FROM m WHERE id = {rng.randint(1, rows)}")
    keys = [rng.randint(1, rows) for _ in range(args.lookups)]
    # pass 1: random keys over the whole MV (their blocks mostly not cached yet);
    # pass 2: the same keys again (blocks in the store's block cache)
    for label in ("cold (random keys)", "warm (same keys again)"):
        times = []
        misses = 0
        for k in keys:
            t0 = time.perf_counter()
            r = session.execute(f"SELECT * FROM m WHERE id = {k}")
            times.append((time.perf_counter() - t0) * 1000)
            misses += r.rowcount != 1
        times.sort()
        q = lambda p: times[min(len(times) - 1, int(p * len(times)))]  # noqa: E731
        print(f"point lookup on a {rows:,}-row MV, {label}: median {statistics.median(times):.2f} ms, "
              f"p90 {q(0.9):.2f} ms, p99 {q(0.99):.2f} ms over {len(times)} lookups ({misses} misses)")
    if args.scan:
        t0 = time.perf_counter()
        session.execute("SELECT count(*) FROM m")
        print(f"full scan (count(*)): {(time.perf_counter() - t0) * 1000:.0f} ms")
    session.close()


if __name__ == "__main__":
    main()
