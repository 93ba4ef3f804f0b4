"""`rw compact` and the store options of the CLI (--state-store, --s3-endpoint, --cache-size)."""
import os
import subprocess
import sys
import uuid

RW = os.path.join(os.path.dirname(sys.executable), "rw")


def rw(*args, env=None):
    return subprocess.run([RW, *args], capture_output=True, text=True, timeout=120, env=env)


def test_compact_command(tmp_path):
    d = str(tmp_path / "d")
    r = rw("--data-dir", d, "-c", "create table t (k int, v int); "
           "create materialized view m as select k, sum(v) as s from t group by k;")
    assert r.returncode == 0, r.stderr
    # six epochs, one SST each (one process: the store is the same as after six runs of rw)
    batches = "".join(f"insert into t values ({i % 3}, {i}); delete from t where v = {i - 2}; flush; "
                      for i in range(6))
    r = rw("--data-dir", d, "--cache-size", "1MiB", "-c", batches)
    assert r.returncode == 0, r.stderr
    r = rw("--data-dir", d, "compact")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("COMPACT ") and "after (per level [0, 1])" in r.stdout
    assert len(os.listdir(os.path.join(d, "store", "sst"))) == 1
    assert len(os.listdir(os.path.join(d, "store", "version"))) == 1
    r = rw("--data-dir", d, "-c", "select k, s from m order by k")
    assert r.stdout.split("\n")[2:4] == [" 1 | 4", " 2 | 5"], r.stdout  # rows v=4 and v=5 remain


def test_compact_merges_append_logs(tmp_path):
    """A join over append-only tables keeps its inputs as append logs: `rw compact` merges
    each into one segment, and the join's results are the same after."""
    d = str(tmp_path / "d")
    r = rw("--data-dir", d, "-c", "create table a (k int, v int) append only; "
           "create table b (k int, w int) append only; "
           "create materialized view m as select a.k, v, w from a join b on a.k = b.k;")
    assert r.returncode == 0, r.stderr
    batches = "".join(f"insert into a values ({i % 2}, {i}); insert into b values ({i % 2}, {10 * i}); flush; "
                      for i in range(4))
    r = rw("--data-dir", d, "-c", batches)
    assert r.returncode == 0, r.stderr
    r = rw("--data-dir", d, "compact")
    assert r.returncode == 0, r.stderr
    assert "8 append log segment(s) before, 2 after" in r.stdout, r.stdout
    assert len(os.listdir(os.path.join(d, "store", "log"))) == 2
    r = rw("--data-dir", d, "-c", "insert into a values (1, 100); flush; select count(*), sum(v + w) from m")
    assert r.returncode == 0, r.stderr
    assert "    10 | 372" in r.stdout.split("\n"), r.stdout  # 2 x 2 pairs for k = 0, 3 x 2 for k = 1


def test_bad_cache_size(tmp_path):
    r = rw("--data-dir", str(tmp_path), "--cache-size", "lots", "-c", "select 1")
    assert r.returncode == 1 and "invalid size 'lots'" in r.stderr


def test_s3_state_store_end_to_end(tmp_path, seaweedfs):
    url = f"s3://rw-test/cli-{uuid.uuid4().hex}"
    env = dict(os.environ)
    base = ["--state-store", url, "--s3-endpoint", seaweedfs]
    r = rw(*base, "--data-dir", str(tmp_path / "a"), "-c",
           "create table t (k int, v int); insert into t values (1, 10), (2, 20); flush;", env=env)
    assert r.returncode == 0, r.stderr
    # the state (catalog included) lives in the bucket: another data directory sees it
    r = rw(*base, "--data-dir", str(tmp_path / "b"), "-c", "select sum(v) from t", env=env)
    assert r.returncode == 0 and " 30" in r.stdout, r.stderr
    r = rw(*base, "--data-dir", str(tmp_path / "b"), "compact", env=env)
    assert r.returncode == 0, r.stderr
    r = rw("--state-store", "s3://missing-bucket/x", "--s3-endpoint", seaweedfs, "--data-dir", str(tmp_path / "c"),
           "-c", "select 1", env=env)
    assert r.returncode == 1 and "bucket 'missing-bucket' does not exist" in r.stderr


def test_second_writer_on_a_shared_s3_store_is_refused(tmp_path, seaweedfs):
    """Two data directories (so no data-directory lock between them) sharing one S3 state
    store: the writer lease refuses the second writer at open, naming the holder; the second
    process reads read-only meanwhile (issue 20, item 8)."""
    from rw_cli.session import Session

    url = f"s3://rw-test/lease-{uuid.uuid4().hex}"
    base = ["--state-store", url, "--s3-endpoint", seaweedfs]
    holder = Session(str(tmp_path / "a"), state_store=url, s3_endpoint=seaweedfs)
    try:
        holder.execute("create table t (k int); insert into t values (1); flush")
        r = rw(*base, "--data-dir", str(tmp_path / "b"), "-c", "select count(*) from t")
        assert r.returncode == 0 and " 1" in r.stdout, r.stderr
        assert f"in use by another writer: process {os.getpid()} on host" in r.stderr, r.stderr
        assert "opened read-only" in r.stderr
        r = rw(*base, "--data-dir", str(tmp_path / "b"), "-c", "insert into t values (5)")
        assert r.returncode == 1 and "read-only session" in r.stderr, r.stderr
    finally:
        holder.close()  # releases the lease
    r = rw(*base, "--data-dir", str(tmp_path / "b"), "-c", "insert into t values (2); flush; select count(*) from t")
    assert r.returncode == 0 and " 2" in r.stdout, r.stderr
