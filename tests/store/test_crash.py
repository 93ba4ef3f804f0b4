"""Crash safety: `rw` ingesting in a subprocess is killed with SIGKILL at random moments (during
start-up and recovery, ingestion, checkpoints, background compaction); after each kill the data
directory is reopened and every MV must equal its defining query, and no committed batch (one
whose FLUSH was printed) may be missing."""
from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import threading
import time

import pytest

import rw_cli

RW = os.path.join(os.path.dirname(sys.executable), "rw")
ROWS_PER_BATCH = 40
KILLS = 22


def batch_rows(b: int) -> list[tuple[int, int]]:
    return [((b * 7 + i) % 23, b * 1000 + i) for i in range(ROWS_PER_BATCH)]


def batch_sql(b: int) -> str:
    values = ", ".join(f"({k}, {v})" for k, v in batch_rows(b))
    sql = f"insert into t values {values};\n"
    if b % 4 == 3:  # deletes of an older batch's rows, so tombstones reach the SSTs too
        sql += f"delete from t where v >= {(b - 2) * 1000} and v < {(b - 2) * 1000 + 10};\n"
    return sql + "flush;\n"


def model(upto: int) -> list[tuple[int, int]]:
    rows = set()
    for b in range(upto + 1):
        rows.update(batch_rows(b))
        if b % 4 == 3:
            rows -= {r for r in rows if (b - 2) * 1000 <= r[1] < (b - 2) * 1000 + 10}
    return sorted(rows)


MVS = {
    "m_agg": "select k, sum(v) as s, count(*) as c from t group by k",
    "m_filter": "select k, v from t where v % 3 = 0",
}


def check(data_dir: str, printed: int) -> int:
    """Verify the reopened directory; return the last committed batch."""
    with rw_cli.connect(data_dir) as s:
        got = sorted(tuple(d.values()) for d in s.execute("select k, v from t").arrow().to_pylist())
        candidates = [c for c in (printed, printed + 1) if model(c) == got]
        assert candidates, f"table t matches no committed prefix (last FLUSH printed: batch {printed})"
        for name, q in MVS.items():
            mv = sorted(tuple(d.values()) for d in s.execute(f"select * from {name}").arrow().to_pylist())
            want = sorted(tuple(d.values()) for d in s.execute(q).arrow().to_pylist())
            assert mv == want, f"MV {name} differs from its query after a crash"
        return candidates[-1]


@pytest.mark.slow
def test_kill_9_during_ingestion(tmp_path):
    rng = random.Random(int(os.environ.get("RW_CRASH_SEED", "20261122")))
    d = str(tmp_path / "data")
    setup = "create table t (k int, v int);\n" + "".join(
        f"create materialized view {n} as {q};\n" for n, q in MVS.items())
    subprocess.run([RW, "--data-dir", d, "-c", setup], check=True, capture_output=True, timeout=60)
    committed = -1
    # a fixed number of kills, not as many as fit a time budget: on a loaded machine (parallel
    # test workers) the test takes longer but checks as much, instead of failing
    for kills in range(1, KILLS + 1):
        script = tmp_path / "batches.sql"
        first = committed + 1
        script.write_text("".join(batch_sql(b) for b in range(first, first + 400)))
        proc = subprocess.Popen([RW, "--data-dir", d, "-f", str(script)], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        flushes = []
        started = threading.Event()

        def reader():
            for line in proc.stdout:
                if line.strip() == "FLUSH":
                    flushes.append(1)
                    started.set()

        t = threading.Thread(target=reader, daemon=True)
        t.start()
        if rng.random() < 0.25:
            time.sleep(rng.uniform(0.05, 1.5))  # during start-up and recovery
        else:
            started.wait(timeout=30)  # during ingestion
            time.sleep(rng.uniform(0.0, 1.5))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        t.join(timeout=10)
        printed = first + len(flushes) - 1
        committed = check(d, max(printed, committed))
    print(f"{kills} kills, {committed + 1} batches committed")
    assert committed > 10, "too little was ingested between the kills"
