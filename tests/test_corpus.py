"""The shared corpora, time-boxed, through the real `rw` command (issue 19).

- SQLite's sqllogictest corpus in `--mv` mode: a slice of the first file of every folder
  (select1-5, evidence, random/*, index/*): its set-up and its first queries. Every query runs
  as a batch SELECT and again as a materialized view kept through the file's later DML; no MV
  may differ from its query and nearly every batch record passes. Files whose set-up alone
  is over `MAX_SETUP_RECORDS` statements (select4/5 and index/random/1000 insert their rows
  one statement at a time) are left to the full runs.
- RisingWave's own e2e files: every 10th listed file of every tier.

Neither may print a Python traceback or an internal error: every failure a user can meet is
an `ERROR:` with a message. The corpora live in `../shared` beside the checkout; the tests
skip when it is not there.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

SHARED = Path(__file__).resolve().parents[2] / "shared"
CORPUS = SHARED / "sqllogictest" / "test"
CONFORMANCE = SHARED / "conformance"
RW = [sys.executable, "-m", "rw_cli.cli"]
ROOT = Path(__file__).resolve().parents[1]

QUERIES = 40  # queries of each corpus file, after its tables and rows
MAX_SETUP_RECORDS = 130
FILE_TIMEOUT_S = 40
CONFORMANCE_EVERY = 10

# what RisingWave refuses in a materialized view too
CRASH = re.compile(r"Traceback \(most recent call last\)|internal error", re.IGNORECASE)


def _run_rw(args: list[str], timeout: float) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run(RW + args, capture_output=True, text=True, timeout=timeout, env=env, cwd=str(ROOT))


def _first_file_of_every_folder() -> list[Path]:
    """One file per folder holding .test files, the first in sorted order: every kind of
    SQL the corpus has (hand-written, evidence, random, index) once."""
    by_folder: dict[Path, Path] = {}
    for path in sorted(CORPUS.rglob("*.test")):
        by_folder.setdefault(path.parent if path.parent != CORPUS else path, path)
    return sorted(by_folder.values())


def _is_query(block: str) -> bool:
    return any(line.startswith("query") for line in block.splitlines())


def _slice(src: Path, queries: int, dest: Path) -> Path | None:
    """A corpus file up to its first `queries` queries (a record: text up to a blank line),
    or None when its set-up is too long for a time-boxed run."""
    blocks = src.read_text(encoding="utf-8").split("\n\n")
    at = [i for i, block in enumerate(blocks) if _is_query(block)]
    if not at or at[0] > MAX_SETUP_RECORDS:
        return None
    end = at[min(queries, len(at)) - 1] + 1
    dest.write_text("\n\n".join(blocks[:end]) + "\n", encoding="utf-8")
    return dest


_FILE_LINE = re.compile(r"^(?P<path>\S+): batch (?P<passed>\d+)/(?P<total>\d+) passed; "
                        r"MV (?P<equal>\d+) equal, (?P<refused>\d+) refused, (?P<different>\d+) different")


@pytest.mark.slow
@pytest.mark.skipif(not CORPUS.is_dir(), reason="the shared sqllogictest corpus is not beside the checkout")
def test_sqllogictest_corpus_slices_in_mv_mode(tmp_path):
    sources = _first_file_of_every_folder()
    sliced = [_slice(src, QUERIES, tmp_path / f"{i:02d}_{src.stem}.test") for i, src in enumerate(sources)]
    files = [str(path) for path in sliced if path is not None]
    assert len(files) >= 10, sources
    proc = _run_rw(["slt", "--mv", "-v", "--timeout", str(FILE_TIMEOUT_S),
                    *files], timeout=FILE_TIMEOUT_S * len(files) + 120)
    text = proc.stdout + proc.stderr
    assert not CRASH.search(text), text[-5000:]
    lines = {m["path"]: m for m in map(_FILE_LINE.match, text.splitlines()) if m}
    assert set(lines) == set(files), text[-5000:]
    passed = sum(int(m["passed"]) for m in lines.values())
    total = sum(int(m["total"]) for m in lines.values())
    equal = sum(int(m["equal"]) for m in lines.values())
    refused = sum(int(m["refused"]) for m in lines.values())
    different = sum(int(m["different"]) for m in lines.values())
    assert different == 0 and proc.returncode == 0, text[-5000:]
    # evidence/ holds SQLite-only statements (triggers, REPLACE, REINDEX) that must fail here
    assert passed >= 0.97 * total, text[-5000:]
    # --mv maintains cross products too (rw_streaming_allow_cross_join), so every query the
    # batch engine answers should be a view
    assert equal >= 0.99 * (equal + refused), text[-5000:]


def _conformance_sample() -> list[str]:
    rows = []
    for line in (CONFORMANCE / "visible.tsv").read_text().splitlines():
        parts = line.split("\t")
        if len(parts) == 2 and parts[1].isdigit():
            rows.append(parts[0])
    return rows[::CONFORMANCE_EVERY]


def _conformance_target(rel: str, work: Path) -> Path:
    """The file as RisingWave runs it: a `.slt.part` after `SET RW_IMPLICIT_FLUSH TO true`."""
    path = CONFORMANCE / rel
    if not rel.endswith(".slt.part"):
        return path
    wrapper = work / "part.slt"
    wrapper.write_text(f"statement ok\nSET RW_IMPLICIT_FLUSH TO true;\n\ninclude {path}\n")
    return wrapper


@pytest.mark.slow
@pytest.mark.skipif(not (CONFORMANCE / "visible.tsv").is_file(), reason="the conformance files are not beside the checkout")
@pytest.mark.parametrize("rel", _conformance_sample() if (CONFORMANCE / "visible.tsv").is_file() else [])
def test_conformance_sample_has_no_crash(tmp_path, rel):
    target = _conformance_target(rel, tmp_path)
    proc = _run_rw(["--data-dir", str(tmp_path / "data"), "slt", "--keep-going", "--timeout", "120", str(target)],
                   timeout=240)
    text = proc.stdout + proc.stderr
    assert not CRASH.search(text), text[-5000:]
    assert re.search(r"^\d+ passed, \d+ failed$", text, re.MULTILINE), text[-5000:]
