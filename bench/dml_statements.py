#!/usr/bin/env python3
"""DML as scripts and drivers send it: one statement per row (`executemany`), and
`INSERT ... VALUES` lists of many literal rows (dumps, psql scripts), through rw's Python API
with an MV maintained, against DuckDB running the same statements in the same process
(issue 21). The MV is `bench/dml.py`'s query A; DuckDB keeps no MV, so the ratio is what rw's
statement path and the MV's upkeep cost beside an engine that only stores the rows.

    python bench/dml_statements.py [--rows 2000] [--values-rows 100000] [--json FILE]

Each phase is timed in wall seconds: single-row INSERTs, UPDATEs and DELETEs by primary key
(FLUSH at the end, in the time), then one `INSERT ... VALUES` of `--values-rows` rows + FLUSH,
then UPDATEs and DELETEs of primary-key ranges of 10 rows (`bid_id >= a AND bid_id < b`,
`BETWEEN`, one `bid_id > c`) over those rows + FLUSH, then — after `CREATE INDEX ON bid
(auction)`, outside the clock, in both systems — UPDATEs and DELETEs of all the bids of one
auction each (`WHERE auction = a`, about 1,000 rows) + FLUSH.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

TABLE = "CREATE TABLE bid (bid_id BIGINT PRIMARY KEY, auction BIGINT, price BIGINT, channel VARCHAR)"
RANGE_ROWS = 10  # rows each statement of the range phase changes
INDEX_AUCTIONS = 20  # statements of the index phase: one auction's bids each
# run before a phase's clock starts, in both systems
SETUP = {"index": ["CREATE INDEX bid_by_auction ON bid (auction)"]}
MV = "CREATE MATERIALIZED VIEW mv AS SELECT auction, count(*) AS n, max(price) AS mx, sum(price) AS s " \
     "FROM bid GROUP BY auction"


def phases(rows: int, values_rows: int) -> dict[str, list[str]]:
    """The statements of each phase (deterministic)."""
    def row(i: int) -> str:
        return f"({i}, {i % 97}, {(i * 7919) % 100000}, '{('apple', 'google', 'baidu')[i % 3]}')"

    base = 10_000_000
    return {
        "insert": [f"INSERT INTO bid VALUES {row(i)}" for i in range(rows)],
        "update": [f"UPDATE bid SET price = price + 1 WHERE bid_id = {i}" for i in range(0, rows, 2)],
        "delete": [f"DELETE FROM bid WHERE bid_id = {i}" for i in range(1, rows, 2)],
        "values": ["INSERT INTO bid VALUES " + ", ".join(row(base + i) for i in range(values_rows))],
        # key ranges of RANGE_ROWS rows each over the rows just loaded: short integer ranges are
        # lists of keys, open-ended ones key ranges of every vnode
        "range": [q for j in range(min(200, values_rows // (2 * RANGE_ROWS)))
                  for q in (f"UPDATE bid SET price = price + 1 WHERE bid_id >= {base + 2 * RANGE_ROWS * j} "
                            f"AND bid_id < {base + 2 * RANGE_ROWS * j + RANGE_ROWS}",
                            f"DELETE FROM bid WHERE bid_id BETWEEN {base + (2 * j + 1) * RANGE_ROWS} "
                            f"AND {base + (2 * j + 2) * RANGE_ROWS - 1}")]
        + [f"DELETE FROM bid WHERE bid_id > {base + values_rows - 1 - RANGE_ROWS}"],
        # through the index on auction: every bid of one auction a statement
        "index": [f"UPDATE bid SET price = price + 1 WHERE auction = {a}" if a % 2 else
                  f"DELETE FROM bid WHERE auction = {a}" for a in range(INDEX_AUCTIONS)],
    }


def _timed(work: dict[str, list[str]], execute, flush=None) -> dict:
    """Each phase's wall seconds: its statements, then `flush` (rw's durable commit); and
    the rows each phase's statements changed (their statuses say, when `execute` returns
    rw's results)."""
    out = {}
    for name, stmts in work.items():
        for q in SETUP.get(name, []):
            execute(q)
        if flush is not None:
            flush()
        t = time.perf_counter()
        results = [execute(q) for q in stmts]
        if flush is not None:
            flush()
        out[name] = time.perf_counter() - t
        out[f"{name}_rows"] = sum(int(r.status.split()[-1]) for r in results if hasattr(r, "status"))
    return out


def run_rw(work: dict[str, list[str]]) -> dict[str, float]:
    import rw_cli

    d = tempfile.mkdtemp(prefix="rw-dml-stmt-")
    try:
        s = rw_cli.connect(d)
        s.execute(TABLE)
        s.execute(MV)
        out = _timed(work, s.execute, flush=lambda: s.execute("FLUSH"))
        out["check"] = sorted(s.execute("SELECT * FROM mv").fetchall())
        s.close()
        return out
    finally:
        shutil.rmtree(d, ignore_errors=True)


def run_duckdb(work: dict[str, list[str]]) -> dict[str, float]:
    import duckdb

    con = duckdb.connect(":memory:")
    con.execute(TABLE)
    out = _timed(work, con.execute)
    out["check"] = sorted(con.execute(MV.split(" AS ", 1)[1]).fetchall())
    con.close()
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rows", type=int, default=2000, help="single-row INSERTs (then UPDATE and DELETE half each)")
    p.add_argument("--values-rows", type=int, default=100_000, help="rows of the one INSERT ... VALUES")
    p.add_argument("--json", dest="json_out", default=None)
    args = p.parse_args()
    work = phases(args.rows, args.values_rows)
    rw, dk = run_rw(work), run_duckdb(work)
    print(f"DML statements: {args.rows:,} single-row INSERTs, {args.rows // 2:,} UPDATEs and DELETEs by pk, "
          f"one INSERT ... VALUES of {args.values_rows:,} rows")
    head = f"{'phase':<8} {'rw rows/s':>12} {'DuckDB rows/s':>14} {'rw/DuckDB':>10} {'rw ms/stmt':>11}"
    print(head)
    print("-" * len(head))
    summary = {}
    for name, stmts in work.items():
        n = {"values": args.values_rows, "range": RANGE_ROWS * len(stmts),
             "index": rw["index_rows"]}.get(name, len(stmts))
        summary[name] = {"rows": n, "rw_seconds": rw[name], "duckdb_seconds": dk[name],
                         "rw_over_duckdb": dk[name] / rw[name]}
        print(f"{name:<8} {n / rw[name]:>12,.0f} {n / dk[name]:>14,.0f} {dk[name] / rw[name]:>10.2f} "
              f"{rw[name] / len(stmts) * 1000:>11.2f}")
    same = [tuple(int(v) for v in r) for r in rw["check"]] == [tuple(int(v) for v in r) for r in dk["check"]]
    print("MV equal to DuckDB's query:", "ok" if same else "MISMATCH")
    summary["results_equal"] = same
    print(json.dumps(summary))
    if args.json_out:
        with open(args.json_out, "w") as f:
            json.dump(summary, f, indent=2)


if __name__ == "__main__":
    main()
