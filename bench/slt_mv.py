"""The cost of `rw slt --mv` per query record, as a ratio to the batch run of the same records.

    .venv/bin/python bench/slt_mv.py [--queries 300] [--corpus DIR] [--folders random/aggregates,index/between]

For one file of each folder of SQLite's sqllogictest corpus (`../shared/sqllogictest/test`, the
first file in sorted order), a slice of it — its set-up and its first `--queries` query
records — runs twice in this process, each time over a fresh data directory: in batch
(`rw slt`) and in the differential mode (`rw slt --mv`: every query also created as a
materialized view, compared, kept through later statements and dropped). Each run is timed in
CPU seconds of this process, every thread included (the machine may be shared), and reported
as ms per query record; the figure to watch is the ratio of the two, what a view costs over
its query (before this benchmark existed: 7-12x on the random/ files, 9-14x on index/).
The MV outcomes are printed too: any `different` is a bug.
"""
from __future__ import annotations

import argparse
import io
import json
import os
import resource
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "sqllogictest" / "test"
DEFAULT_FOLDERS = ("random/aggregates", "random/expr", "random/groupby", "random/select", "index/between",
                   "index/commute", "index/delete", "index/orderby", "index/random", "select1.test")


def cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def first_file(corpus: Path, folder: str) -> Path | None:
    path = corpus / folder
    if path.is_file():
        return path
    files = sorted(path.rglob("*.test")) if path.is_dir() else []
    return files[0] if files else None


def sliced(src: Path, queries: int, dest: Path) -> tuple[Path, int]:
    """The file up to its `queries`-th query record (records: text up to a blank line)."""
    blocks = src.read_text(encoding="utf-8").split("\n\n")
    at = [i for i, b in enumerate(blocks) if any(ln.startswith("query") for ln in b.splitlines())]
    end = at[min(queries, len(at)) - 1] + 1 if at else len(blocks)
    dest.write_text("\n\n".join(blocks[:end]) + "\n", encoding="utf-8")
    return dest, min(queries, len(at))


def run(path: Path, mv: bool):
    from rw_cli.slt.runner import RunOptions, run_file

    start = cpu()
    outcome = run_file(str(path), keep_going=True, data_dir=None, engine="embedded", out=io.StringIO(),
                       options=RunOptions(keep_going=True, mv=mv))
    return cpu() - start, outcome


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--queries", type=int, default=300, help="query records of each file")
    ap.add_argument("--corpus", default=str(CORPUS))
    ap.add_argument("--folders", default=",".join(DEFAULT_FOLDERS))
    args = ap.parse_args()
    corpus = Path(args.corpus)
    if not corpus.is_dir():
        sys.exit(f"no corpus at {corpus}")
    import rw_cli.session  # noqa: F401 - imported before timing

    tmp = Path(tempfile.mkdtemp(prefix="rw-slt-mv-bench-"))
    print(f"{'file':<44} {'records':>7} {'batch ms':>9} {'--mv ms':>8} {'ratio':>6}  MV equal/refused/different")
    summary = []
    for folder in args.folders.split(","):
        src = first_file(corpus, folder)
        if src is None:
            print(f"{folder}: no .test file")
            continue
        path, _ = sliced(src, args.queries, tmp / f"{folder.replace('/', '_')}.test")
        run(path, mv=False)  # warm-up: imports, caches of the first statements
        batch_s, batch = run(path, mv=False)
        mv_s, out = run(path, mv=True)
        records = max(1, batch.passed + batch.failed)
        mv = out.mv
        row = {"file": str(src.relative_to(corpus)), "records": records,
               "batch_ms": 1000 * batch_s / records, "mv_ms": 1000 * mv_s / records,
               "ratio": mv_s / batch_s if batch_s else None,
               "equal": mv.equal, "refused": mv.refused_count, "different": len(mv.different)}
        summary.append(row)
        print(f"{row['file']:<44} {records:>7} {row['batch_ms']:>9.1f} {row['mv_ms']:>8.1f} "
              f"{row['ratio']:>5.1f}x  {mv.equal}/{mv.refused_count}/{len(mv.different)}", flush=True)
    if summary:
        total_batch = sum(r["batch_ms"] * r["records"] for r in summary)
        total_mv = sum(r["mv_ms"] * r["records"] for r in summary)
        print(f"{'all':<44} {sum(r['records'] for r in summary):>7} "
              f"{total_batch / sum(r['records'] for r in summary):>9.1f} "
              f"{total_mv / sum(r['records'] for r in summary):>8.1f} {total_mv / total_batch:>5.1f}x")
    print(json.dumps({"queries": args.queries, "files": summary}))


if __name__ == "__main__":
    main()
