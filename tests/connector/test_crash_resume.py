"""Kill `rw run` (SIGKILL) in the middle of a stream, run it again to the end: the MVs and the
file sink hold every event exactly once — offsets, state (the join's inputs as append logs)
and sink files commit together."""
import glob
import json
import os
import signal
import subprocess
import sys
import time

import duckdb
import numpy as np

from rw_cli.connector import nexmark

RW = [sys.executable, "-m", "rw_cli.cli"]
EVENTS = 120_000


def _rw(data, *args, timeout=300):
    return subprocess.run(RW + ["--data-dir", data, "--no-config", *args], capture_output=True, text=True,
                          timeout=timeout)


def _final_files(out):
    return sorted(glob.glob(os.path.join(out, "*.jsonl")))


def test_kill_mid_stream_then_resume(tmp_path):
    data, out = str(tmp_path / "data"), str(tmp_path / "out")
    r = _rw(data, "-c", f"""
        CREATE SOURCE bid (auction BIGINT, price BIGINT, date_time TIMESTAMP) WITH (connector = 'nexmark',
            nexmark.table.type = 'Bid', nexmark.event.num = '{EVENTS}', nexmark.split.num = '2');
        CREATE MATERIALIZED VIEW m AS SELECT count(*) AS c, count(DISTINCT date_time) AS d, sum(price) AS p FROM bid;
        CREATE SOURCE auction (id BIGINT, category BIGINT) WITH (connector = 'nexmark',
            nexmark.table.type = 'Auction', nexmark.event.num = '{EVENTS}', nexmark.split.num = '2');
        CREATE MATERIALIZED VIEW j AS SELECT count(*) AS n, sum(b.price + a.category) AS s
            FROM bid b JOIN auction a ON b.auction = a.id;
        CREATE SINK f AS SELECT date_time, price FROM bid WHERE auction % 10 = 3
            WITH (connector = 'file', path = '{out}') FORMAT PLAIN ENCODE JSON""")
    assert r.returncode == 0, r.stderr
    proc = subprocess.Popen(RW + ["--data-dir", data, "--no-config", "run", "--barrier-interval-ms", "50",
                                  "--tick-rows", "1500"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while len(_final_files(out)) < 4 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.02)
        assert proc.poll() is None, "rw run ended before it could be killed"
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    mid = _rw(data, "--format", "csv", "-c", "SELECT c FROM m")
    assert mid.returncode == 0, mid.stderr
    committed = int(mid.stdout.split()[-1])
    assert 0 < committed < EVENTS * 46 // 50, committed  # killed mid-stream

    r = _rw(data, "run", "--until-idle", "--barrier-interval-ms", "200")
    assert r.returncode == 0, r.stderr

    e = np.arange(EVENTS, dtype=np.int64)
    bids = nexmark.generate("bid", e, columns=["auction", "price", "date_time"])
    res = _rw(data, "--format", "csv", "-c", "SELECT c, d, p FROM m")
    assert res.stdout.split()[-1] == f"{bids.num_rows},{bids.num_rows},{sum(bids.column('price').to_pylist())}"

    auctions = nexmark.generate("auction", e, columns=["id", "category"])
    joined = duckdb.sql("SELECT count(*), sum(b.price + a.category) FROM bids b JOIN auctions a ON b.auction = a.id")
    n, s = joined.fetchall()[0]
    res = _rw(data, "--format", "csv", "-c", "SELECT n, s FROM j")
    assert n > 0 and res.stdout.split()[-1] == f"{n},{s}", res.stdout

    want = sorted((str(t), p) for a, p, t in zip(*(bids.column(c).to_pylist() for c in ("auction", "price", "date_time")))
                  if a % 10 == 3)
    got = []
    for f in _final_files(out):
        got += [(json.loads(line)["date_time"], json.loads(line)["price"]) for line in open(f) if line.strip()]
    assert len(got) == len(want)                 # nothing read twice
    assert len(set(g[0] for g in got)) == len(got)
    assert not glob.glob(os.path.join(out, ".staging", "*"))
    assert sorted(p for _, p in got) == sorted(p for _, p in want)  # nothing lost
