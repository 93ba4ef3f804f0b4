"""Per-statement cost: N distinct batch SELECTs, INSERTs (with implicit flush) and CREATE MVs
through rw's Python API, against DuckDB running the same SELECTs in the same process.

    .venv/bin/python bench/statements.py [--selects 300] [--inserts 100] [--mvs 20] [--data-dir DIR]

The workload is the shape of SQLite's sqllogictest corpus (issue 19): a few small tables
(`tab0..tab2`, 7 columns, ~100 rows) and many distinct short queries over them. Each kind is
timed in CPU seconds of this process (user + sys: the machine may be shared), and reported as
statements/s; the SELECTs also as the ratio of rw's CPU time to DuckDB's for the same SQL.
"""
from __future__ import annotations

import argparse
import os
import random
import resource
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import rw_cli  # noqa: E402

_COLUMNS = "pk INTEGER PRIMARY KEY, col0 INTEGER, col1 FLOAT, col2 TEXT, col3 INTEGER, col4 FLOAT, col5 TEXT"


def cpu() -> float:
    """This process's CPU seconds (children excluded: the compactor's are not a statement's)."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def rows(n: int, rnd: random.Random) -> list[str]:
    return [f"({i},{rnd.randint(0, 999)},{rnd.randint(0, 9999) / 10},'{rnd.choice('abcde') * 3}',"
            f"{rnd.randint(0, 999)},{rnd.randint(0, 9999) / 10},'{rnd.choice('vwxyz') * 3}')" for i in range(n)]


def selects(n: int, rnd: random.Random) -> list[str]:
    """Distinct queries in the corpus's styles: filters, BETWEEN, IN, arithmetic, aggregates,
    ORDER BY, subqueries."""
    shapes = [
        "SELECT pk FROM tab{t} WHERE col0 > {a} ORDER BY 1",
        "SELECT pk, col0 FROM tab{t} WHERE col3 BETWEEN {a} AND {b} OR col0 < {c} ORDER BY pk",
        "SELECT col0 * {a} + col3 FROM tab{t} WHERE col4 > {a}.5 AND col2 = 'aaa' ORDER BY 1",
        "SELECT count(*), sum(col0), max(col1) FROM tab{t} WHERE col0 IN ({a}, {b}, {c})",
        "SELECT pk FROM tab{t} WHERE (col0 < {a} AND col3 >= {b}) OR col1 IS NULL ORDER BY 1 DESC",
        "SELECT col3 / {k}, avg(col0) FROM tab{t} WHERE col0 > {a} GROUP BY col3 / {k} ORDER BY 1",
        "SELECT pk FROM tab{t} WHERE col0 IN (SELECT col3 FROM tab{u} WHERE col4 > {a}) ORDER BY 1",
        "SELECT DISTINCT - col0 AS c FROM tab{t} WHERE NOT col3 <= {a} ORDER BY c",
    ]
    out = []
    for i in range(n):
        a, b, c = rnd.randint(0, 999), rnd.randint(0, 999), rnd.randint(0, 999)
        out.append(shapes[i % len(shapes)].format(t=i % 3, u=(i + 1) % 3, a=a, b=b, c=c, k=rnd.randint(2, 9)))
    return out


def timed(label: str, stmts: list[str], run) -> float:
    start = cpu()
    for s in stmts:
        run(s)
    secs = cpu() - start
    print(f"  {label:<28} {len(stmts):>5} stmts  {secs:7.2f} CPU s  {len(stmts) / secs:8.1f} stmts/s  "
          f"{1000 * secs / len(stmts):7.2f} ms/stmt", flush=True)
    return secs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--selects", type=int, default=300)
    ap.add_argument("--inserts", type=int, default=100)
    ap.add_argument("--mvs", type=int, default=20)
    ap.add_argument("--rows", type=int, default=100, help="rows per table")
    ap.add_argument("--data-dir", default=None)
    ap.add_argument("--seed", type=int, default=19)
    args = ap.parse_args()

    import duckdb

    rnd = random.Random(args.seed)
    data_dir = args.data_dir or tempfile.mkdtemp(prefix="rw-statements-bench-")
    session = rw_cli.connect(data_dir)
    session.execute("SET rw_implicit_flush = true")  # as the classic sqllogictest files run
    duck = duckdb.connect(":memory:", config={"threads": 1})
    for t in range(3):
        data = ", ".join(rows(args.rows, rnd))
        for run in (session.execute, duck.execute):
            run(f"CREATE TABLE tab{t}({_COLUMNS})")
            run(f"INSERT INTO tab{t} VALUES {data}")
    queries = selects(args.selects, rnd)
    print(f"rw {data_dir}")
    rw_secs = timed("SELECT (rw)", queries, session.execute)
    duck_secs = timed("SELECT (duckdb)", queries, lambda q: duck.execute(q).fetchall())
    print(f"  SELECT rw / duckdb CPU ratio: {rw_secs / duck_secs:.1f}x")
    inserts = [f"INSERT INTO tab{i % 3} VALUES {rows(1, rnd)[0].replace('(0,', f'({args.rows + i},', 1)}"
               for i in range(args.inserts)]
    timed("INSERT + implicit flush", inserts, session.execute)
    mvs = [f"CREATE MATERIALIZED VIEW mv{i} AS SELECT col0, count(*) AS n FROM tab{i % 3} "
           f"WHERE col3 > {rnd.randint(0, 999)} GROUP BY col0" for i in range(args.mvs)]
    timed("CREATE MATERIALIZED VIEW", mvs, session.execute)
    session.close()
    if args.data_dir is None:
        shutil.rmtree(data_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
