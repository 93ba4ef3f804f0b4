import random

import pyarrow as pa
import pytest

from rw_cli.errors import StorageError
from rw_cli.store.keys import MAX_EPOCH, full_key
from rw_cli.store.object_store import MemoryObjectStore
from rw_cli.store.sst import FOOTER_LEN, SstBuilder, SstMeta, SstReader


def _entries(seed=5, nkeys=300):
    """sorted list of (user_key, epoch, value|None); includes keys that are prefixes of others."""
    r = random.Random(seed)
    keys = set()
    while len(keys) < nkeys:
        k = bytes(r.choice(b"ab\x00\xff") for _ in range(r.randint(0, 5)))
        keys.add(k)
    out = []
    for k in sorted(keys):
        epochs = sorted(r.sample(range(1, 50), r.randint(1, 4)), reverse=True)
        for e in epochs:
            out.append((k, e, None if r.random() < 0.2 else r.randbytes(r.randint(0, 40))))
    return out


def _build(entries, block_size=256):
    b = SstBuilder(block_size)
    for k, e, v in entries:
        b.add(full_key(k, e), v)
    return b.finish()


def _model_get(entries, k, epoch):
    for kk, e, v in entries:
        if kk == k and e <= epoch:
            return True, v
    return False, None


def test_build_and_point_get():
    entries = _entries()
    data = _build(entries)
    store = MemoryObjectStore()
    store.put("sst/1.sst", data)
    r = SstReader(store, "sst/1.sst")
    assert r.meta.n_blocks > 5
    assert r.meta.key_count == len(entries)
    assert r.meta.min_epoch == min(e for _, e, _ in entries)
    assert r.meta.smallest_key == entries[0][0] and r.meta.largest_key == entries[-1][0]
    keys = sorted({k for k, _, _ in entries})
    rnd = random.Random(1)
    for k in keys + [b"zz", b"a\x00\x00\x00\x00\x00\x00", b"\x00" * 9]:
        for epoch in (0, 1, rnd.randint(1, 50), 25, MAX_EPOCH):
            assert r.get(k, epoch) == _model_get(entries, k, epoch), (k, epoch)
    # the bloom filter never says no for a present key
    assert r.may_contain(pa.array(keys, pa.binary())).all()
    absent = pa.array([b"q%d" % i for i in range(1000)], pa.binary())
    assert r.may_contain(absent).mean() < 0.1


def test_point_get_reads_only_one_block():
    entries = _entries()
    store = MemoryObjectStore()
    store.put("s", _build(entries))
    r = SstReader(store, "s", file_size=len(store.get("s")))
    calls = []
    orig = store.get_range

    def spy(path, start, length):
        calls.append(length)
        return orig(path, start, length)

    store.get_range = spy
    k = entries[len(entries) // 2][0]
    r.get(k, MAX_EPOCH)
    assert len(calls) <= 2 and max(calls) <= int(r.meta.lengths.max())


def test_range_iteration():
    entries = _entries(seed=9)
    store = MemoryObjectStore()
    store.put("s", _build(entries, block_size=128))
    r = SstReader(store, "s")
    keys = sorted({k for k, _, _ in entries})
    rnd = random.Random(2)
    for _ in range(30):
        a, b = sorted(rnd.sample(keys, 2))
        epoch = rnd.choice([MAX_EPOCH, rnd.randint(1, 50)])
        end = None if rnd.random() < 0.2 else b
        expect = []
        for k in keys:
            if k < a or (end is not None and k >= end):
                continue
            found, v = _model_get(entries, k, epoch)
            if found and v is not None:
                expect.append((k, v))
        assert list(r.iter(a, end, epoch)) == expect


def test_meta_round_trip_and_empty_sst():
    data = SstBuilder().finish()
    store = MemoryObjectStore()
    store.put("e", data)
    r = SstReader(store, "e")
    assert r.get(b"x") == (False, None)
    assert list(r.iter(b"")) == []
    entries = _entries(nkeys=20)
    data = _build(entries)
    store.put("m", data)
    r = SstReader(store, "m")
    m2 = SstMeta.decode(r.meta.encode())
    assert (m2.offsets == r.meta.offsets).all() and (m2.crcs == r.meta.crcs).all()
    assert m2.first_keys.equals(r.meta.first_keys) and m2.form == r.meta.form
    assert m2.table_ids == r.meta.table_ids and m2.bloom == r.meta.bloom


def test_vectorized_builder_matches_row_builder():
    entries = _entries(seed=11)
    b = SstBuilder(300)
    b.add_arrays(pa.array([k for k, _, _ in entries], pa.binary()),
                 [e for _, e, _ in entries], pa.array([v for _, _, v in entries], pa.binary()))
    assert b.finish() == _build(entries, 300)


def test_table_ids():
    b = SstBuilder()
    b.add(full_key(b"\x00\x00\x00\x01rest", 1), b"v")
    b.add(full_key(b"\x00\x00\x00\x03a", 1), b"v")
    b.add(full_key(b"\x00\x00\x00\x03b", 1), None)
    store = MemoryObjectStore()
    store.put("t", b.finish())
    assert SstReader(store, "t").meta.table_ids == [1, 3]


@pytest.mark.parametrize("where", ["block", "meta", "footer"])
def test_corruption_is_detected(where):
    entries = _entries(nkeys=100)
    data = bytearray(_build(entries))
    store = MemoryObjectStore()
    store.put("good", bytes(data))
    good = SstReader(store, "good")
    if where == "block":
        pos = int(good.meta.offsets[1]) + 10
    elif where == "meta":
        pos = len(data) - FOOTER_LEN - 5
    else:
        pos = len(data) - 3
    data[pos] ^= 0x55
    store.put("bad", bytes(data))
    with pytest.raises(StorageError, match="corrupted object bad"):
        r = SstReader(store, "bad")
        for k, _, _ in entries:
            r.get(k, MAX_EPOCH)
        list(r.iter(b""))


@pytest.mark.parametrize("compression", ["lz4", "zstd"])
def test_compressed_blocks_round_trip(compression):
    entries = _entries(seed=3)
    b = SstBuilder(256, compression=compression)
    for k, e, v in entries:
        b.add(full_key(k, e), v)
    data = b.finish()
    plain = _build(entries, 256)
    store = MemoryObjectStore()
    store.put("c", data)
    r = SstReader(store, "c")
    assert r.meta.compression and (r.meta.lengths < r.meta.raw_lengths).any()
    assert len(data) < len(plain)
    for k in sorted({k for k, _, _ in entries}):
        assert r.get(k, MAX_EPOCH) == _model_get(entries, k, MAX_EPOCH)
    assert list(r.iter(b"")) == list(SstReader(_mem(plain), "p").iter(b""))


def _mem(data):
    s = MemoryObjectStore()
    s.put("p", data)
    return s


@pytest.mark.parametrize("n", [0, 1, 1000, 70_000])
def test_bloom_sets_exactly_the_probes_bits(n):
    """The filter is built a probe at a time; readers test the probes of `bloom_probes`:
    both must name the same bits (a bit missing is a key the reads would not find)."""
    import numpy as np

    from rw_cli.store.sst import BLOOM_K, _bloom_bytes, bloom_check, bloom_positions, build_bloom_from_hashes
    hashes = np.random.default_rng(n).integers(0, 2**64 - 1, n, dtype=np.uint64)
    bloom = build_bloom_from_hashes(hashes)
    bits = np.zeros(_bloom_bytes(n) * 8, dtype=bool)
    bits[bloom_positions(hashes, len(bits), BLOOM_K).ravel()] = True
    assert bloom == np.packbits(bits, bitorder="little").tobytes()
    assert bloom_check(np.frombuffer(bloom, np.uint8), BLOOM_K, hashes).all()
