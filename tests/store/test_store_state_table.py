import decimal
import random

import numpy as np
import pyarrow as pa
import pytest

from rw_cli.common.vnode import compute_vnodes
from rw_cli.store.hummock import HummockStorage
from rw_cli.store.keys import encode_pk
from rw_cli.store.object_store import LocalObjectStore, MemoryObjectStore
from rw_cli.store.state_table import StateTable

SCHEMA = pa.schema([("id", pa.int64()), ("name", pa.string()), ("amount", pa.decimal128(38, 2)),
                    ("ts", pa.timestamp("us", tz="UTC"))])


def _rows(ids, names=None, amounts=None):
    return pa.record_batch([
        pa.array(ids, pa.int64()),
        pa.array(names if names is not None else [f"n{i}" for i in ids]),
        pa.array(amounts if amounts is not None else [decimal.Decimal(i) / 4 if i is not None else None for i in ids],
                 pa.decimal128(38, 2)),
        pa.array([i * 1000 if i is not None else None for i in ids], pa.int64()).cast(pa.timestamp("us", tz="UTC")),
    ], schema=SCHEMA)


def _by_id(t: pa.Table):
    return {r["id"]: r for r in t.to_pylist()}


def test_insert_get_scan_commit_reopen(tmp_path):
    store = LocalObjectStore(str(tmp_path))
    h = HummockStorage(store)
    t = StateTable(h, 7, SCHEMA, [0])
    t.insert(_rows([1, 2, 3, 4]))
    t.insert(_rows([2], names=["two"]))  # upsert
    rows, found = t.get_rows([pa.array([2, 9, 1], pa.int64())])
    assert found.tolist() == [True, False, True]
    assert rows.schema == SCHEMA
    assert rows.column("name").to_pylist() == ["two", None, "n1"]
    s = t.scan()
    assert s.schema == SCHEMA and s.num_rows == 4
    t.commit(1)
    h.commit_epoch(1, b"cat")
    t.delete(_rows([3]))
    assert sorted(_by_id(t.scan())) == [1, 2, 4]
    assert sorted(_by_id(t.scan(1))) == [1, 2, 3, 4]  # snapshot at the committed epoch
    t.commit(2)
    assert sorted(_by_id(t.scan())) == [1, 2, 4]
    # epoch 2 not committed: a reader opening now sees epoch 1
    h2 = HummockStorage(store, read_only=True)
    t2 = StateTable(h2, 7, SCHEMA, [0])
    assert sorted(_by_id(t2.scan())) == [1, 2, 3, 4]
    assert _by_id(t2.scan())[2]["name"] == "two"
    h.commit_epoch(2)
    h.close()
    t3 = StateTable(HummockStorage(store), 7, SCHEMA, [0])
    assert sorted(_by_id(t3.scan())) == [1, 2, 4]
    got, found = t3.get_rows(pa.record_batch([pa.array([4, 3], pa.int64())], names=["id"]))
    assert found.tolist() == [True, False]
    assert got.to_pylist()[0] == _rows([4]).to_pylist()[0]


def test_scan_order_is_vnode_then_pk():
    h = HummockStorage(MemoryObjectStore())
    t = StateTable(h, 1, SCHEMA, [1, 0], pk_descending=[False, True], dist_key_indices=[1])
    ids = list(range(50))
    names = [f"g{i % 5}" for i in ids]
    t.insert(_rows(ids, names=names))
    t.commit(1)
    h.commit_epoch(1)
    t.insert(_rows([100, 101], names=["g0", "zz"]))  # memtable rows merge into the order
    s = t.scan()
    name = s.column("name")
    idc = s.column("id")
    vn = compute_vnodes([name])
    pk = encode_pk([name, idc], [False, True])
    keys = list(zip(vn.tolist(), pk))
    assert keys == sorted(keys)
    assert s.num_rows == 52
    # within one name (one vnode), ids descending
    g0 = [r["id"] for r in s.to_pylist() if r["name"] == "g0"]
    assert g0 == sorted(g0, reverse=True)


def test_write_chunk_ops_in_row_order():
    h = HummockStorage(MemoryObjectStore())
    t = StateTable(h, 2, SCHEMA, [0])
    t.insert(_rows([1, 2]))
    b = _rows([3, 3, 1, 1, 2, 4], names=["a", "a", "n1", "new1", "n2", "x"])
    ops = np.array([0, 1, 2, 3, 1, 0], dtype=np.int8)  # insert+delete 3; update 1; delete 2; insert 4
    t.write_chunk(b, ops)
    got = _by_id(t.scan())
    assert sorted(got) == [1, 4]
    assert got[1]["name"] == "new1"
    t.commit(1)
    h.commit_epoch(1)
    assert sorted(_by_id(t.scan(1))) == [1, 4]


def test_truncate_all_and_other_tables_untouched():
    h = HummockStorage(MemoryObjectStore())
    a = StateTable(h, 1, SCHEMA, [0])
    b = StateTable(h, 2, SCHEMA, [0])
    a.insert(_rows([1, 2, 3]))
    b.insert(_rows([1, 2]))
    a.commit(1)
    b.commit(1)
    h.commit_epoch(1)
    a.insert(_rows([4]))
    a.truncate_all()
    assert a.scan().num_rows == 0
    a.commit(2)
    h.commit_epoch(2)
    assert a.scan().num_rows == 0 and a.scan(1).num_rows == 3
    assert b.scan().num_rows == 2


def test_empty_pk_singleton_table():
    schema = pa.schema([("cnt", pa.int64()), ("s", pa.float64())])
    h = HummockStorage(MemoryObjectStore())
    t = StateTable(h, 3, schema, [])
    t.insert(pa.record_batch([pa.array([1]), pa.array([1.5])], schema=schema))
    t.insert(pa.record_batch([pa.array([2]), pa.array([None], pa.float64())], schema=schema))
    s = t.scan()
    assert s.to_pylist() == [{"cnt": 2, "s": None}]
    rows, found = t.get_rows([])
    assert rows.num_rows == 0


def test_all_types_round_trip_through_state_table():
    schema = pa.schema([
        ("b", pa.bool_()), ("i16", pa.int16()), ("i32", pa.int32()), ("i64", pa.int64()), ("f32", pa.float32()),
        ("f64", pa.float64()), ("d", pa.decimal128(38, 10)), ("s", pa.string()), ("by", pa.binary()),
        ("dt", pa.date32()), ("t", pa.time64("us")), ("ts", pa.timestamp("us")),
        ("tz", pa.timestamp("us", tz="UTC")), ("iv", pa.month_day_nano_interval()),
    ])
    cols = [
        pa.array([True, False, None]), pa.array([1, -2, None], pa.int16()), pa.array([-5, 6, None], pa.int32()),
        pa.array([10, 11, 12]), pa.array([1.5, None, -0.5], pa.float32()), pa.array([None, 2.5, -1e100]),
        pa.array([decimal.Decimal("1.25"), None, decimal.Decimal("-3")], pa.decimal128(38, 10)),
        pa.array(["a\x00", None, ""]), pa.array([b"\x00\xff", b"", None]),
        pa.array([1, None, -1], pa.int32()).cast(pa.date32()),
        pa.array([None, 5, 86_399_999_999], pa.int64()).cast(pa.time64("us")),
        pa.array([1, None, -1], pa.int64()).cast(pa.timestamp("us")),
        pa.array([1, 2, None], pa.int64()).cast(pa.timestamp("us", tz="UTC")),
        pa.array([pa.MonthDayNano([1, 2, 3]), None, pa.MonthDayNano([-1, 0, 5])], pa.month_day_nano_interval()),
    ]
    batch = pa.record_batch(cols, schema=schema)
    for pk in ([3], [0, 1, 2, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 3]):
        h = HummockStorage(MemoryObjectStore())
        t = StateTable(h, 1, schema, pk)
        t.insert(batch)
        t.commit(1)
        h.commit_epoch(1)
        s = t.scan()
        assert s.schema == schema
        got = sorted(s.to_pylist(), key=lambda r: r["i64"])
        assert got == batch.to_pylist()
        rows, found = t.get_rows([batch.column(i) for i in pk])
        assert found.all() and rows.to_pylist() == batch.to_pylist()


def test_random_state_table_against_dict():
    r = random.Random(42)
    store = MemoryObjectStore()
    h = HummockStorage(store, block_size=512)
    t = StateTable(h, 9, SCHEMA, [1, 0], dist_key_indices=[0])
    model: dict[tuple, dict] = {}
    committed_model: dict[tuple, dict] = {}
    epoch = 1
    for step in range(60):
        n = r.randint(1, 40)
        ids = [r.randint(0, 30) for _ in range(n)]
        names = [r.choice(["a", "b", None]) for _ in range(n)]
        b = _rows(ids, names=names)
        ops = np.array([r.choice([0, 0, 1, 3]) for _ in range(n)], dtype=np.int8)
        t.write_chunk(b, ops)
        for row, op in zip(b.to_pylist(), ops):
            key = (row["name"], row["id"])
            if op in (0, 3):
                model[key] = row
            else:
                model.pop(key, None)
        if r.random() < 0.5:
            t.commit(epoch)
            if r.random() < 0.7:
                h.commit_epoch(epoch)
                committed_model = dict(model)
            epoch += 1
        if r.random() < 0.1 and not t.has_pending_writes:
            # reopen at the committed state
            h.close()
            h = HummockStorage(store, block_size=512)
            t = StateTable(h, 9, SCHEMA, [1, 0], dist_key_indices=[0])
            model = dict(committed_model)
        got = {(x["name"], x["id"]): x for x in t.scan().to_pylist()}
        assert got == model
        probe = [r.randint(0, 30) for _ in range(10)]
        pnames = [r.choice(["a", "b", None]) for _ in range(10)]
        rows, found = t.get_rows([pa.array(pnames), pa.array(probe, pa.int64())])
        assert found.tolist() == [(nm, i) in model for nm, i in zip(pnames, probe)]
        for row, f, nm, i in zip(rows.to_pylist(), found, pnames, probe):
            assert row == (model[(nm, i)] if f else {k: None for k in SCHEMA.names})


def test_dist_key_must_be_in_pk():
    with pytest.raises(ValueError):
        StateTable(HummockStorage(MemoryObjectStore()), 1, SCHEMA, [0], dist_key_indices=[1])


def test_scan_prefix_with_and_without_the_dist_key():
    schema = pa.schema([("g", pa.int64()), ("name", pa.string()), ("x", pa.int64())])
    rows = pa.record_batch([pa.array([1, 1, 1, 2, 2, 3] * 3, pa.int64()),
                            pa.array(["a", "b", "c", "a", "z", "a"] * 3),
                            pa.array(list(range(18)), pa.int64())], schema=schema)
    h = HummockStorage(MemoryObjectStore())
    # pk (g, name, x); dist key g (inside any non-empty prefix) and name (only in 2-prefixes)
    for dist in ([0], [1]):
        t = StateTable(h, 40 + dist[0], schema, [0, 1, 2], pk_descending=[False, True, False], dist_key_indices=dist)
        t.insert(rows)
        t.commit(t.table_id * 10 + 1)
        h.commit_epoch(t.table_id * 10 + 1)
        t.insert(pa.record_batch([pa.array([1], pa.int64()), pa.array(["b"]), pa.array([99], pa.int64())],
                                 schema=schema))
        t.delete(pa.record_batch([pa.array([1], pa.int64()), pa.array(["c"]), pa.array([2], pa.int64())],
                                 schema=schema))
        all_rows = t.scan().to_pylist()
        for prefix in ([1], [2], [4], [1, "b"], [1, "c"], [2, "z"], [1, "b", 99]):
            want = sorted((r for r in all_rows if [r["g"], r["name"], r["x"]][:len(prefix)] == prefix),
                          key=lambda r: (r["g"], -ord(r["name"]), r["x"]))  # pk order
            assert t.scan_prefix(prefix).to_pylist() == want, (dist, prefix)
        committed = t.scan(h.committed_epoch).to_pylist()
        assert sorted(map(str, t.scan_prefix([1], epoch=h.committed_epoch).to_pylist())) == \
            sorted(str(r) for r in committed if r["g"] == 1)
        # descending name within g
        names = [r["name"] for r in t.scan_prefix([1]).to_pylist()]
        assert names == sorted(names, reverse=True)
        t.commit(t.table_id * 10 + 2)
        h.commit_epoch(t.table_id * 10 + 2)
        assert t.scan_prefix([1, "b"]).to_pylist() == sorted(
            (r for r in all_rows if r["g"] == 1 and r["name"] == "b"), key=lambda r: r["x"])


def _gnx_schema(text: bool) -> pa.Schema:
    """(g, name, x): the pk of the prefix and range tests, `name` text or an int."""
    return pa.schema([("g", pa.int64()), ("name", pa.string() if text else pa.int32()), ("x", pa.int64())])


def _gnx_batch(schema: pa.Schema, rows) -> pa.RecordBatch:
    g, n, x = zip(*rows)
    return pa.record_batch([pa.array(g, pa.int64()), pa.array(n, schema.field(1).type), pa.array(x, pa.int64())],
                           schema=schema)


@pytest.mark.parametrize("dist", [[0], [0, 1], [2]])
@pytest.mark.parametrize("text", [True, False])  # keys of varying / of one width
def test_scan_prefixes_reads_what_scan_prefix_reads(tmp_path, dist, text):
    """Many prefixes in one pass give the rows that one scan_prefix per prefix gives: over
    the memtable, the shared buffer, L0 SSTs and compacted levels, with deletes and
    overwrites; with the distribution key in the prefix (key ranges) or not (a scan)."""
    schema = _gnx_schema(text)
    names = ["a", "bb", "c", ""] if text else [3, -1, 0, 70000]
    rng = random.Random(5 + len(dist))
    h = HummockStorage(LocalObjectStore(str(tmp_path)))
    t = StateTable(h, 60, schema, [0, 1, 2], pk_descending=[False, True, False], dist_key_indices=dist)

    def batch(rows):
        return _gnx_batch(schema, rows)
    live: set = set()
    for epoch in range(1, 13):
        new = {(rng.randrange(40), rng.choice(names), rng.randrange(20)) for _ in range(150)}
        t.insert(batch(sorted(new)))
        live |= new
        gone = rng.sample(sorted(live), min(len(live), 40))
        t.delete(batch(gone))
        live -= set(gone)
        if epoch % 4 == 0:
            h.compact()
        m = len(dist) if dist != [2] else 2
        groups = sorted({r[:m] for r in rng.sample(sorted(live), 25)} | {(41, names[0])[:m]})
        cols = [pa.array([g[j] for g in groups], schema.field(j).type) for j in range(m)]
        got = t.scan_prefixes(cols).to_pylist()
        want = [r for g in groups for r in t.scan_prefix(list(g)).to_pylist()]
        key = lambda r: (r["g"], r["name"], r["x"])  # noqa: E731
        assert sorted(got, key=key) == sorted(want, key=key), epoch
        assert len(got) == sum(1 for r in live if r[:m] in set(groups))
        t.commit(epoch)
        h.commit_epoch(epoch, wait=epoch % 2 == 0)
    h.close()


def test_iter_batches_with_epochs_gives_each_rows_last_write():
    """`_rw_timestamp` reads the epoch that last wrote each row."""
    h = HummockStorage(MemoryObjectStore())
    t = StateTable(h, 7, SCHEMA, [0])
    t.insert(_rows([1, 2]))
    t.commit(1 << 16)
    h.commit_epoch(1 << 16, b"cat")
    t.insert(_rows([2], names=["two"]))  # rewritten in the next epoch
    t.commit(2 << 16)
    h.commit_epoch(2 << 16, b"cat")
    got = {}
    for batch, epochs in t.iter_batches_with_epochs(epoch=2 << 16):
        assert len(epochs) == batch.num_rows
        got.update(zip(batch.column("id").to_pylist(), epochs.tolist()))
    assert got == {1: 1 << 16, 2: 2 << 16}
    old = {}
    for batch, epochs in t.iter_batches_with_epochs(epoch=1 << 16):
        old.update(zip(batch.column("id").to_pylist(), epochs.tolist()))
    assert old == {1: 1 << 16, 2: 1 << 16}


def test_cached_lookups_then_writes_of_the_same_keys_against_dict():
    """An executor's pattern: `pk_keys` once, `get_rows` with them, then `write_chunk` of the
    same key array (the lookup's hashes serve the commit's cache segment), several times an
    epoch; all-new lookups answer all-null rows. Checked against a dict after every step,
    through the cache and after a reopen."""
    r = random.Random(7)
    store = MemoryObjectStore()
    h = HummockStorage(store, block_size=512)

    def open_table():
        t = StateTable(h, 9, SCHEMA, [0])
        t.enable_cache(max_bytes=r.choice([1 << 30, 4000]))
        return t
    t = open_table()
    model: dict[int, dict] = {}
    epoch = 1
    for step in range(80):
        ids = sorted({r.randint(0, 60) for _ in range(r.randint(1, 25))})
        if r.random() < 0.5:
            r.shuffle(ids)  # unsorted writes are consolidated by a sort; sorted ones are not
        pk = [pa.array(ids, pa.int64())]
        keys = t.pk_keys(pk)
        rows, found = t.get_rows(pk, keys)
        assert found.tolist() == [i in model for i in ids]
        for row, f, i in zip(rows.to_pylist(), found, ids):
            assert row == (model[i] if f else {k: None for k in SCHEMA.names})
        b = _rows(ids, names=[f"s{step}"] * len(ids))
        ops = np.array([r.choice([0, 0, 1]) for _ in ids], dtype=np.int8)
        t.write_chunk(b, ops, keys)
        for row, op in zip(b.to_pylist(), ops):
            if op == 0:
                model[row["id"]] = row
            else:
                model.pop(row["id"], None)
        if r.random() < 0.6:
            t.commit(epoch)
            h.commit_epoch(epoch)
            epoch += 1
            if r.random() < 0.1:
                h.close()
                h = HummockStorage(store, block_size=512)
                t = open_table()
    assert _by_id(t.scan()) == model


@pytest.mark.parametrize("live", [[], [3999], [5, 3999]])
def test_a_new_cached_handle_finds_what_the_store_holds(live):
    """A rebuilt actor's handle asks whether its table was empty (then a key its cache never
    saw is absent) from the range's first blocks only: rows deleted ahead of a live row
    (tombstones first, in SSTs and the shared buffer) must not make it say so."""
    h = HummockStorage(MemoryObjectStore(), block_size=512)
    t = StateTable(h, 9, SCHEMA, [0])
    t.insert(_rows(list(range(4000))))
    t.commit(1)
    h.commit_epoch(1)
    t.delete(_rows([i for i in range(4000) if i not in live]))
    t.commit(2)
    h.commit_epoch(2)
    for _ in range(2):  # a handle beside the buffer, then one over the SSTs alone
        fresh = StateTable(h, 9, SCHEMA, [0])
        fresh.enable_cache()
        rows, found = fresh.get_rows([pa.array([3999, 5, 7], pa.int64())])
        assert found.tolist() == [3999 in live, 5 in live, False]
        h.sync()
    empty = StateTable(h, 10, SCHEMA, [0])
    empty.enable_cache()
    assert empty.get_rows([pa.array([1], pa.int64())])[1].tolist() == [False]
    assert h.holds_table(9) and not h.holds_table(10) and not h.holds_table(8)
    for level in h.version.levels:  # SSTs that do not list their tables: by key range
        for info in level:
            info.table_ids = []
    assert h.holds_table(9) and not h.holds_table(10) and not h.holds_table(8)
    other = StateTable(h, 11, SCHEMA, [0])
    other.insert(_rows([1]))
    other.commit(3)
    h.commit_epoch(3)  # in the shared buffer only
    assert h.holds_table(11)


def test_sort_unique_index():
    from rw_cli.store.shared_buffer import sort_unique, sort_unique_index

    k = pa.array([b"a", b"b", b"c"], pa.binary())
    assert sort_unique_index(k) is None  # sorted and unique: nothing to do
    k = pa.array([b"b", b"a", b"b", b"c", b"a"], pa.binary())
    v = pa.array([b"1", b"2", b"3", b"4", b"5"], pa.binary())
    assert sort_unique_index(k).tolist() == [4, 2, 3]  # the last write of a key wins
    ks, vs = sort_unique(k, v)
    assert ks.to_pylist() == [b"a", b"b", b"c"] and vs.to_pylist() == [b"5", b"3", b"4"]
    k = pa.array([b"a\x00", b"a", b"a\x00\x01"], pa.binary())  # trailing zero bytes still count
    assert [k[i].as_py() for i in sort_unique_index(k)] == [b"a", b"a\x00", b"a\x00\x01"]


@pytest.mark.parametrize("cached", [True, False])
def test_lookups_beside_a_memtable_of_other_keys_do_not_sort_it(cached, monkeypatch):
    """A load in pieces (COPY, a large INSERT) looks each piece's keys up while the earlier
    pieces sit in the memtable: keys whose hash no memtable key has skip it (no sort of the
    memtable, no lookup in it); a key that is there is still found there."""
    h = HummockStorage(MemoryObjectStore())
    t = StateTable(h, 9, SCHEMA, [0])
    if cached:
        t.enable_cache()
    t.insert(_rows([1, 2, 3]))
    t.commit(1)
    h.commit_epoch(1)
    sorts = []
    real = StateTable._mem_arrays
    monkeypatch.setattr(StateTable, "_mem_arrays", lambda self: sorts.append(1) or real(self))
    for piece in ([10, 12, 11], [20, 22, 21], [30, 31]):
        t.insert(_rows(piece))
        rows, found = t.get_rows([pa.array([40, 41, 2, 42], pa.int64())])  # new, and one committed
        assert found.tolist() == [False, False, True, False] and rows.column("id").to_pylist()[2] == 2
    assert sorts == []
    rows, found = t.get_rows([pa.array([50, 21, 3, 12], pa.int64())])  # two in the memtable
    assert found.tolist() == [False, True, True, True]
    assert rows.column("name").to_pylist() == [None, "n21", "n3", "n12"]
    assert sorts  # those were looked up in it


def _in_bounds(v, lower, upper) -> bool:
    if v is None:  # a bounded range leaves NULLs out; with no bound, the prefix's rows are all read
        return lower is None and upper is None
    if lower is not None and (v < lower[0] or (v == lower[0] and not lower[1])):
        return False
    return upper is None or v < upper[0] or (v == upper[0] and upper[1])


@pytest.mark.parametrize("dist", [[0], [0, 1], [2]])
@pytest.mark.parametrize("text", [True, False])
@pytest.mark.parametrize("desc", [False, True])  # the ranged column's order
def test_scan_pk_range_reads_the_rows_in_its_bounds(tmp_path, dist, text, desc):
    """A prefix of the pk bound to values and the next pk column between bounds (either side
    open, inclusive or not) gives exactly the rows a filtered scan gives: over the memtable,
    L0 and compacted SSTs, at the latest state and at a committed epoch, with deletes, NULLs
    in the ranged column, and the distribution key within the prefix or not."""
    schema = _gnx_schema(text)
    names = ["a", "bb", "c", "", "b", None] if text else [3, -1, 0, 70000, 2, None]
    values = [n for n in names if n is not None]
    rng = random.Random(11 + len(dist) + 2 * desc)
    h = HummockStorage(LocalObjectStore(str(tmp_path)))
    t = StateTable(h, 61, schema, [0, 1, 2], pk_descending=[False, desc, False], dist_key_indices=dist)

    def batch(rows):
        return _gnx_batch(schema, rows)

    def bound():
        return None if rng.random() < 0.3 else (rng.choice(values), rng.random() < 0.5)

    def one(v):
        return (pa.array([v[0]], schema.field(1).type), v[1]) if v is not None else None
    live: set = set()
    committed: set = set()
    for epoch in range(1, 9):
        new = {(rng.randrange(30), rng.choice(names), rng.randrange(5)) for _ in range(120)}
        t.insert(batch(sorted(new, key=repr)))
        live |= new
        gone = rng.sample(sorted(live, key=repr), min(len(live), 30))
        t.delete(batch(gone))
        live -= set(gone)
        if epoch % 3 == 0:
            h.compact()
        for _ in range(6):
            lower, upper = bound(), bound()
            groups = sorted({rng.randrange(32) for _ in range(rng.randrange(1, 4))})
            got = t.scan_pk_range([pa.array(groups, pa.int64())], one(lower), one(upper)).to_pylist()
            want = {r for r in live if r[0] in groups and _in_bounds(r[1], lower, upper)}
            assert {(r["g"], r["name"], r["x"]) for r in got} == want, (epoch, groups, lower, upper)
            assert len(got) == len(want)
            old = t.scan_pk_range([pa.array(groups, pa.int64())], one(lower), one(upper), h.committed_epoch)
            assert {(r["g"], r["name"], r["x"]) for r in old.to_pylist()} == \
                {r for r in committed if r[0] in groups and _in_bounds(r[1], lower, upper)}
        assert t.scan_pk_range([], None, None).num_rows == len(live)  # no prefix, no bounds
        t.commit(epoch)
        h.commit_epoch(epoch, wait=True)
        committed = set(live)
    h.close()


def test_fill_cache_reads_the_handles_range_whole_or_nothing(monkeypatch):
    """`fill_cache`: a handle opened on stored rows reads its vnodes' range into its cache
    and then answers every key of those vnodes — stored, deleted or never written — without
    a store read; past an eighth of the caches' budget it reads nothing and looks keys up."""
    from rw_cli.store.state_cache import StateCache

    h = HummockStorage(MemoryObjectStore(), block_size=512)
    t = StateTable(h, 9, SCHEMA, [0])
    t.insert(_rows(list(range(3000))))
    t.commit(1)
    h.commit_epoch(1)
    t.delete(_rows(list(range(0, 3000, 7))))
    t.commit(2)
    h.commit_epoch(2)
    h.sync()
    ids = pa.array(list(range(0, 3200, 3)), pa.int64())
    vnodes = compute_vnodes([ids], num_rows=len(ids))
    mine = ids.filter(pa.array(vnodes < 128))
    want = [i < 3000 and i % 7 != 0 for i in mine.to_pylist()]

    reads = []
    real = h.multi_get_array
    monkeypatch.setattr(h, "multi_get_array", lambda *a, **k: reads.append(1) or real(*a, **k))
    half = StateTable(h, 9, SCHEMA, [0])
    half.enable_cache()
    assert half.fill_cache((0, 128))
    rows, found = half.get_rows([mine])
    assert found.tolist() == want and not reads
    assert rows.column("id").to_pylist() == [i if w else None for i, w in zip(mine.to_pylist(), want)]

    small = StateTable(h, 9, SCHEMA, [0])
    small.enable_cache(max_bytes=100_000)  # an eighth: 12,500 bytes, less than the table's
    assert not small.fill_cache()
    assert small.get_rows([mine])[1].tolist() == want and reads  # looked up in the store

    empty = StateTable(h, 10, SCHEMA, [0])
    empty.enable_cache()
    assert empty.fill_cache() and empty.get_rows([ids])[1].tolist() == [False] * len(ids)
