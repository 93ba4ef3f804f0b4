"""Compaction against a dict model: every pinned snapshot stays readable, reads at or above the
low watermark never change, old versions and tombstones are collected."""
import random
import time

import pytest

from rw_cli.store.hummock import MAX_EPOCH, HummockStorage
from rw_cli.store.object_store import MemoryObjectStore

from test_store_hummock import Model, _keyspace


def _open(store, r):
    return HummockStorage(store, block_size=r.choice([64, 256, 4096]), sst_target_size=r.choice([300, 2000, 1 << 20]),
                          l0_trigger=r.choice([1, 2, 3]), level_base_size=r.choice([500, 4000]),
                          level_multiplier=2, max_levels=r.choice([3, 5]), background_compaction=r.random() < 0.5)


def _model_run(seed):
    """A model-based run's start: (its random source, object store, store, model, keys)."""
    r = random.Random(seed)
    objects = MemoryObjectStore()
    return r, objects, _open(objects, r), Model(), _keyspace(r)


def _write(h, m, r, keys, epoch: int, most: int) -> None:
    """Up to `most` random puts and deletes at `epoch`, to the store and the model."""
    kvs = [(r.choice(keys), None if r.random() < 0.3 else r.randbytes(r.randint(0, 30)))
           for _ in range(r.randint(1, most))]
    h.ingest_batch(kvs, epoch)
    m.write(kvs, epoch)


def _commit(h, m, epoch: int) -> int:
    """Commit `epoch` in the store and the model; the next epoch."""
    h.commit_epoch(epoch)
    m.committed = epoch
    return epoch + 1


@pytest.mark.parametrize("seed", range(6))
def test_compaction_keeps_pinned_snapshots(seed):
    r, store, h, m, keys = _model_run(seed)
    epoch = 1
    snaps = []
    for step in range(300):
        op = r.random()
        if op < 0.4:
            _write(h, m, r, keys, epoch, 25)
        elif op < 0.55:
            epoch = _commit(h, m, epoch)
        elif op < 0.6:
            snaps.append(h.pin_snapshot())
        elif op < 0.65 and snaps:
            snaps.pop(r.randrange(len(snaps))).close()
        elif op < 0.72:
            h.compact(full=r.random() < 0.3)
            h.vacuum()
        elif op < 0.75:
            h.close()
            for s in snaps:
                s.pinned = False
            snaps = []
            h = _open(store, r)
            m.drop_uncommitted()
        else:
            for s in snaps:
                ks = [r.choice(keys) for _ in range(6)]
                assert s.multi_get(ks) == [m.get(k, s.epoch) for k in ks], (step, s.epoch)
                assert list(s.iter()) == m.items(b"", None, s.epoch)
            ks = [r.choice(keys) for _ in range(10)]
            for e in (MAX_EPOCH, m.committed):
                assert h.multi_get(ks, e) == [m.get(k, e) for k in ks], step
            a, b = sorted(r.sample(keys, 2))
            assert list(h.iter(a, b, MAX_EPOCH)) == m.items(a, b, MAX_EPOCH)
            assert list(h.iter(b"", None, m.committed)) == m.items(b"", None, m.committed)
    h.commit_epoch(epoch)
    m.committed = epoch
    for s in snaps:
        s.close()
    h.compact(full=True)
    h.vacuum()
    v = h.version
    assert not v.levels[0] and sum(1 for lv in v.levels if lv) == 1
    # one version per key, no tombstones left
    t = h.scan_table(b"", None, MAX_EPOCH, include_tombstones=True)
    assert t["value"].null_count == 0
    assert list(h.iter(b"", None)) == m.items(b"", None, MAX_EPOCH)
    live = {s.path for s in v.ssts()}
    assert set(store.list("sst/")) == live
    h.close()


def test_background_compaction_error_is_reported(monkeypatch, capsys):
    import time

    from rw_cli.store.compactor import Compactor
    from rw_cli.store.hummock import HummockStorage
    from rw_cli.store.object_store import MemoryObjectStore

    def broken(compactor, remote=False):
        raise RuntimeError("no space left for the compaction output")

    monkeypatch.setattr(Compactor, "compact_once", broken)
    h = HummockStorage(MemoryObjectStore(), l0_trigger=1)
    for e in range(1, 6):
        h.ingest_batch([(b"a", b"v"), (b"k%d" % e, b"v")], e)  # (SSTs over one another: L0 deepens)
        h.commit_epoch(e)
        h.compactor.last_commit = 0.0  # not a stream of checkpoints: compaction does not wait
    deadline = time.monotonic() + 10
    while h.stats["compaction_errors"] < 2 and time.monotonic() < deadline:
        h.compactor.kick()
        time.sleep(0.05)
    assert "no space left" in str(h.compaction_error)
    err = capsys.readouterr().err
    assert err.count("WARNING:  background compaction of the state store failed: no space left") == 1
    assert h.get(b"k3") == b"v"  # reads and commits go on
    h.close()


def test_rw_compact_exits_non_zero_on_a_compaction_error(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from rw_cli.cli import main
    from rw_cli.errors import StorageError
    from rw_cli.store.hummock import HummockStorage

    d = str(tmp_path / "d")
    runner = CliRunner()
    r = runner.invoke(main, ["--data-dir", d, "--no-config", "-c", "create table t (k int); insert into t values (1)"])
    assert r.exit_code == 0, r.output

    def failed_in_background(self, full=False):
        self.compactor.report_error(StorageError("corrupted object sst/7.sst: checksum mismatch"))
        return 0

    monkeypatch.setattr(HummockStorage, "compact", failed_in_background)
    r = runner.invoke(main, ["--data-dir", d, "--no-config", "compact"])
    assert r.exit_code == 1
    assert "compaction failed: corrupted object sst/7.sst" in r.stderr

    def failing(self, full=False):
        raise StorageError("cannot write object sst/9.sst: disk full")

    monkeypatch.setattr(HummockStorage, "compact", failing)
    r = runner.invoke(main, ["--data-dir", d, "--no-config", "compact"])
    assert r.exit_code == 1 and "disk full" in r.stderr


def test_compaction_in_a_compactor_process(tmp_path):
    """A local store compacts in a separate process (the writer commits what it writes);
    a compactor process that dies is replaced at the next task; reads stay right."""
    import os
    import time

    from rw_cli.store import compactor_process
    from rw_cli.store.object_store import LocalObjectStore

    h = HummockStorage(LocalObjectStore(str(tmp_path)), l0_trigger=2, sst_target_size=4000, level_base_size=8000)
    assert h.compactor.remote
    want = {}

    def write_epochs(first: int, n: int) -> None:
        for e in range(first, first + n):
            kvs = [(b"k%04d" % ((e * 37 + i * 12) % 500), b"v%d" % e) for i in range(40)]  # (each over most keys)
            h.ingest_batch(kvs, e)
            want.update(kvs)
            h.commit_epoch(e)
            h.compactor.last_commit = 0.0  # not a stream of checkpoints: compaction does not wait

    def wait_compactions(n: int) -> None:
        deadline = time.monotonic() + 60
        while h.stats["compactions"] < n and time.monotonic() < deadline:
            h.compactor.kick()
            time.sleep(0.05)
        assert h.stats["compactions"] >= n, h.compaction_error

    write_epochs(1, 10)
    wait_compactions(2)
    pid = compactor_process._compactor.proc.pid
    assert pid != os.getpid()
    compactor_process._compactor.kill()
    done = h.stats["compactions"]
    write_epochs(11, 10)
    wait_compactions(done + 2)
    assert compactor_process._compactor.proc.pid != pid
    assert dict(h.iter(b"", None)) == want
    h.close()
    h2 = HummockStorage(LocalObjectStore(str(tmp_path)), background_compaction=False)
    assert dict(h2.iter(b"", None)) == want
    h2.close()


def test_background_compaction_waits_while_the_stream_works():
    """Epochs that follow one another with no pause are never idle, however long each takes:
    only pressing compaction runs beside them; a pause lets the rest run."""
    from rw_cli.store import compactor

    h = HummockStorage(MemoryObjectStore(), l0_trigger=1, l0_stall=50)
    with h.streaming():
        for e in range(1, 6):
            h.ingest_batch([(b"a", b"v"), (b"k%d" % e, b"v")], e)
            h.commit_epoch(e, wait=True)
            h.compactor.last_commit = 0.0  # long past: only the stream's work holds it back
        h.compactor.kick()
        time.sleep(3 * compactor.COMPACTION_IDLE_SECS)
        assert h.stats["compactions"] == 0 and len(h.version.levels[0]) == 5
    deadline = time.monotonic() + 10
    while h.stats["compactions"] == 0 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert h.stats["compactions"] >= 1 and len(h.version.levels[0]) < 5
    assert all(h.get(b"k%d" % e) == b"v" for e in range(1, 6))
    h.close()


def test_l0_tiers_merge_within_l0_beside_a_large_l1_and_keep_newest_first():
    """With L1 far larger than L0, compaction merges L0's files among themselves (the merge
    takes their place, behind files committed meanwhile): L0 stays short, newest first,
    and every read equals the model."""
    r = random.Random(3)
    h = HummockStorage(MemoryObjectStore(), block_size=256, l0_trigger=2, l0_stall=50,
                       level_base_size=1 << 30, background_compaction=False)
    m = Model()
    keys = [b"k%05d" % i for i in range(20000)]
    h.ingest_batch([(k, b"base" + k) for k in keys], 1)
    m.write([(k, b"base" + k) for k in keys], 1)
    h.commit_epoch(1)
    m.committed = 1
    h.compact(full=True)  # the large L1
    l1_ids = {s.id for s in h.version.levels[1]}
    for epoch in range(2, 30):
        kvs = [(r.choice(keys), None if r.random() < 0.2 else r.randbytes(8)) for _ in range(40)]
        h.ingest_batch(kvs, epoch)
        m.write(kvs, epoch)
        h.commit_epoch(epoch)
        m.committed = epoch
        h.compact()
        l0 = h.version.levels[0]
        assert len(l0) <= 2 + 2, [s.id for s in l0]
        assert [s.max_epoch for s in l0] == sorted((s.max_epoch for s in l0), reverse=True)
        ks = [r.choice(keys) for _ in range(50)]
        assert h.multi_get(ks, MAX_EPOCH) == [m.get(k, MAX_EPOCH) for k in ks]
    assert {s.id for s in h.version.levels[1]} == l1_ids  # L1 was never rewritten
    assert list(h.iter(b"", None, MAX_EPOCH)) == m.items(b"", None, MAX_EPOCH)
    h.close()


@pytest.mark.parametrize("seed", range(6))
def test_writes_since_are_the_newest_entries_written_after_an_epoch_or_none(seed):
    """`writes_since(start, end, e)`: the newest entry (a tombstone as None) of each key of
    the range written after epoch e — or None, only when some of those writes were merged
    below L0 or a compaction dropped a tombstone written after e (a key deleted after e may
    then have left no trace). Against the model, across compactions."""
    from rw_cli.store.keys import MAX_EPOCH as TOP

    r, objects, h, m, keys = _model_run(seed)
    epoch, told, refused = 1, 0, 0
    for step in range(400):
        op = r.random()
        if op < 0.45:
            _write(h, m, r, keys, epoch, 20)
        elif op < 0.65:
            epoch = _commit(h, m, epoch)
        elif op < 0.7:
            h.compact(full=r.random() < 0.2)
        elif m.committed and not h.buffer.view():
            since = r.randint(0, m.committed)
            start, end = sorted(r.sample(keys, 2))
            got = h.writes_since(start, end, since)
            below_l0 = any(i.max_epoch > since and not (i.largest_key < start or i.smallest_key >= end)
                           for level in h.version.levels[1:] for i in level)
            if got is None:
                assert below_l0 or h.version.tombstones_dropped_through > since, step
                refused += 1
                continue
            told += 1
            want = []
            for k in sorted(m.hist):
                if start <= k < end:
                    newest = [(e, v) for e, v in m.hist[k] if since < e <= m.committed]
                    if newest:
                        want.append((k, newest[-1][1]))
            assert list(zip(got.keys.to_pylist(), got.values.to_pylist())) == want, (step, since)
            assert all(since < e <= TOP for e in got.epochs.tolist())
    assert told >= 5, (told, refused)  # (compaction takes L0 down often here: l0_trigger 1-3)
    dropped = h.version.tombstones_dropped_through
    h.close()
    assert HummockStorage(objects, background_compaction=False).version.tombstones_dropped_through == dropped
