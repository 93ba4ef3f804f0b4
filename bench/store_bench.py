"""State store benchmark: this store (HummockStorage on the local object store) against RocksDB
(PyPI `rocksdict`), same keys and values, same run.

2,000,000 random 16-byte keys with 100-byte values are written in batches of 100,000 (each
batch is one epoch, committed: SSTs uploaded and a version written), then 100,000 random
point lookups are made as one batched call on each side, then one full scan. Prints rows/s
per side and ends with `ingest ratio X`, `lookup ratio X`, `scan ratio X` (this store /
rocksdict; above 1 means this store is faster). The whole comparison runs --repeat times
(default 3; each side in turn, fresh directories) and the medians are reported, so that a
busy machine's hiccups do not decide a ratio.

    .venv/bin/python bench/store_bench.py [--rows N] [--cache-size 256MiB]
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time

import numpy as np
import pyarrow as pa

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from rw_cli.store.hummock import HummockStorage  # noqa: E402
from rw_cli.store.object_store import LocalObjectStore  # noqa: E402

KEY_LEN = 16
VALUE_LEN = 100


def make_data(n: int, seed: int = 7):
    rng = np.random.default_rng(seed)
    keys = rng.integers(0, 256, size=(n, KEY_LEN), dtype=np.uint8)
    # distinct keys: 8 random bytes, then a random permutation of 0..n-1
    perm = rng.permutation(n).astype(">u8")
    keys[:, 8:] = perm.view(np.uint8).reshape(n, 8)
    values = rng.integers(0, 256, size=(n, VALUE_LEN), dtype=np.uint8)
    return keys.tobytes(), values.tobytes()


def binary_array(buf: bytes, n: int, width: int, start: int = 0) -> pa.Array:
    offs = np.arange(n + 1, dtype=np.int32) * width
    return pa.Array.from_buffers(pa.binary(), n, [None, pa.py_buffer(offs),
                                                  pa.py_buffer(buf)[start * width:(start + n) * width]])


def rate(n: int, secs: float) -> str:
    return f"{n / secs:>12,.0f} rows/s ({secs:.3f} s)"


def bench_hummock(kbuf: bytes, vbuf: bytes, n: int, batch: int, lookup_idx: np.ndarray, cache_size: str, path: str):
    out = {}
    store = HummockStorage(LocalObjectStore(path), cache_size=cache_size)
    t0 = time.perf_counter()
    for e, s in enumerate(range(0, n, batch), start=1):
        m = min(batch, n - s)
        store.ingest_arrays(binary_array(kbuf, m, KEY_LEN, s), binary_array(vbuf, m, VALUE_LEN, s), e)
        store.commit_epoch(e, wait=False)  # checkpoints upload in the background ...
    store.sync()  # ... and the clock stops when every one is durable
    out["ingest"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    store.wait_for_compaction()
    out["compaction wait"] = time.perf_counter() - t0
    lv = store.version.levels
    out["levels"] = [len(x) for x in lv]
    q = pa.array([kbuf[i * KEY_LEN:(i + 1) * KEY_LEN] for i in lookup_idx.tolist()], pa.binary())
    t0 = time.perf_counter()
    got = store.multi_get_array(q)
    out["lookup"] = time.perf_counter() - t0
    assert got.null_count == 0
    assert got[0].as_py() == vbuf[int(lookup_idx[0]) * VALUE_LEN:(int(lookup_idx[0]) + 1) * VALUE_LEN]
    t0 = time.perf_counter()
    count = 0
    for b in store.iter_batches(b"", None):
        count += b.num_rows
    out["scan"] = time.perf_counter() - t0
    assert count == n, count
    store.close()
    return out


def bench_rocksdb(kbuf: bytes, vbuf: bytes, n: int, batch: int, lookup_idx: np.ndarray, path: str):
    from rocksdict import Options, Rdict, WriteBatch

    out = {}
    opts = Options(raw_mode=True)
    db = Rdict(path, opts)
    keys = [kbuf[i * KEY_LEN:(i + 1) * KEY_LEN] for i in range(n)]
    values = [vbuf[i * VALUE_LEN:(i + 1) * VALUE_LEN] for i in range(n)]
    t0 = time.perf_counter()
    for s in range(0, n, batch):
        wb = WriteBatch(raw_mode=True)
        for i in range(s, min(n, s + batch)):
            wb.put(keys[i], values[i])
        db.write(wb)
    out["ingest"] = time.perf_counter() - t0
    q = [keys[i] for i in lookup_idx.tolist()]
    t0 = time.perf_counter()
    got = db[q]
    out["lookup"] = time.perf_counter() - t0
    assert all(v is not None for v in got)
    t0 = time.perf_counter()
    count = 0
    for _k, _v in db.items():
        count += 1
    out["scan"] = time.perf_counter() - t0
    assert count == n, count
    db.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=2_000_000)
    ap.add_argument("--batch", type=int, default=100_000)
    ap.add_argument("--lookups", type=int, default=100_000)
    ap.add_argument("--cache-size", default="256MiB")
    ap.add_argument("--repeat", type=int, default=3,
                    help="whole runs of both sides, alternating, in fresh directories; medians reported")
    args = ap.parse_args()
    n = args.rows
    kbuf, vbuf = make_data(n)
    lookup_idx = np.random.default_rng(11).integers(0, n, size=args.lookups)
    hs, rs = [], []
    for rep in range(max(1, args.repeat)):
        root = tempfile.mkdtemp(prefix="store-bench-")
        try:
            hs.append(bench_hummock(kbuf, vbuf, n, args.batch, lookup_idx, args.cache_size, os.path.join(root, "hummock")))
            rs.append(bench_rocksdb(kbuf, vbuf, n, args.batch, lookup_idx, os.path.join(root, "rocksdb")))
        finally:
            shutil.rmtree(root, ignore_errors=True)
        h, r = hs[-1], rs[-1]
        print(f"run {rep + 1}: ratios ingest {r['ingest'] / h['ingest']:.2f}, lookup {r['lookup'] / h['lookup']:.2f}, "
              f"scan {r['scan'] / h['scan']:.2f}", flush=True)
    med = statistics.median
    h = {k: med([x[k] for x in hs]) for k in ("ingest", "compaction wait", "lookup", "scan")}
    r = {k: med([x[k] for x in rs]) for k in ("ingest", "lookup", "scan")}
    print(f"{n:,} keys of {KEY_LEN} bytes, values of {VALUE_LEN} bytes, batches of {args.batch:,}, "
          f"{args.lookups:,} lookups in one call, cache {args.cache_size}; median of {len(hs)} run(s)")
    print(f"hummock  ingest  {rate(n, h['ingest'])}   (then {h['compaction wait']:.3f} s until background "
          f"compaction was done; levels {hs[-1]['levels']})")
    print(f"rocksdb  ingest  {rate(n, r['ingest'])}")
    print(f"hummock  lookup  {rate(args.lookups, h['lookup'])}")
    print(f"rocksdb  lookup  {rate(args.lookups, r['lookup'])}")
    print(f"hummock  scan    {rate(n, h['scan'])}")
    print(f"rocksdb  scan    {rate(n, r['scan'])}")
    print(f"ingest ratio {r['ingest'] / h['ingest']:.2f}")
    print(f"lookup ratio {r['lookup'] / h['lookup']:.2f}")
    print(f"scan ratio {r['scan'] / h['scan']:.2f}")


if __name__ == "__main__":
    main()
