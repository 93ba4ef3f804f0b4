import decimal
import math
import random
import struct
import subprocess
import sys

import numpy as np
import pyarrow as pa
import pytest

from rw_cli.common.vnode import VNODE_COUNT, compute_vnodes
from rw_cli.store.keys import (MAX_EPOCH, encode_epoch, encode_pk, full_key, make_keys, split_full_key,
                               table_key_prefix)

SEED = 1234


def _rand_str(r):
    alphabet = ["a", "b", "\x00", "\x01", "é", "z", "\xff", "中"]
    return "".join(r.choice(alphabet) for _ in range(r.randint(0, 4)))


def _gen(t: pa.DataType, r: random.Random, n: int):
    out = []
    for _ in range(n):
        if r.random() < 0.1:
            out.append(None)
            continue
        if pa.types.is_boolean(t):
            out.append(r.random() < 0.5)
        elif pa.types.is_integer(t):
            bits = t.bit_width
            lo, hi = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
            out.append(r.choice([lo, hi, 0, -1, 1, r.randint(lo, hi), r.randint(-5, 5)]))
        elif pa.types.is_floating(t):
            v = r.choice([0.0, -0.0, math.nan, math.inf, -math.inf, 1.5, -1.5, r.uniform(-1e6, 1e6),
                          r.uniform(-1, 1), 1e-300, -1e-300])
            if t == pa.float32() and not math.isnan(v) and not math.isinf(v):
                v = struct.unpack("<f", struct.pack("<f", v))[0] if abs(v) < 3e38 else v
            out.append(v)
        elif pa.types.is_decimal(t):
            q = decimal.Decimal(1).scaleb(-t.scale)
            out.append((decimal.Decimal(r.randint(-10**12, 10**12)) * q
                        if r.random() < 0.8 else decimal.Decimal(r.choice(["-9999999999999999.5", "0", "1", "-1"]))).quantize(q))
        elif pa.types.is_string(t):
            out.append(_rand_str(r))
        elif pa.types.is_binary(t):
            out.append(bytes(r.choice([0, 1, 255, 97]) for _ in range(r.randint(0, 4))))
        elif t == pa.date32():
            out.append(r.randint(-100000, 100000))
        elif pa.types.is_time(t):
            out.append(r.randint(0, 86_400_000_000 - 1))
        elif pa.types.is_timestamp(t):
            out.append(r.choice([r.randint(-2**62, 2**62), r.randint(-10, 10)]))
        elif t == pa.month_day_nano_interval():
            out.append((r.randint(-3, 3), r.randint(-3, 3), r.randint(-10**12, 10**12)))
        else:
            raise AssertionError(t)
    return out


def _arrow(t, vals):
    if t == pa.date32() or pa.types.is_time(t) or pa.types.is_timestamp(t):
        base = pa.int32() if t == pa.date32() else pa.int64()
        return pa.array(vals, base).cast(t)
    if t == pa.month_day_nano_interval():
        return pa.array([None if v is None else pa.MonthDayNano(list(v)) for v in vals], t)
    return pa.array(vals, t)


def _cmp_val(a, b):
    if a is None and b is None:
        return 0
    if a is None:
        return 1
    if b is None:
        return -1
    if isinstance(a, float):
        an, bn = math.isnan(a), math.isnan(b)
        if an or bn:
            return (an > bn) - (an < bn)
    if isinstance(a, str):
        a, b = a.encode(), b.encode()
    if isinstance(a, dict):  # a struct: its fields in turn
        a, b = list(a.values()), list(b.values())
    if isinstance(a, list):  # an array: element by element, then the shorter first
        for x, y in zip(a, b):
            c = _cmp_val(x, y)
            if c:
                return c
        return (len(a) > len(b)) - (len(a) < len(b))
    return (a > b) - (a < b)


def _cmp_rows(x, y, desc):
    for a, b, d in zip(x, y, desc):
        c = _cmp_val(a, b)
        if c:
            return -c if d else c
    return 0


def _check_order(rows, cols, desc):
    enc = encode_pk(cols, desc)
    assert all(isinstance(e, bytes) for e in enc)
    order = sorted(range(len(rows)), key=lambda i: enc[i])
    for i, j in zip(order, order[1:]):
        c = _cmp_rows(rows[i], rows[j], desc)
        assert c <= 0, (rows[i], rows[j], enc[i], enc[j])
        assert (c == 0) == (enc[i] == enc[j]), (rows[i], rows[j])


TYPES = [pa.bool_(), pa.int16(), pa.int32(), pa.int64(), pa.float32(), pa.float64(), pa.decimal128(38, 10),
         pa.decimal128(38, 0), pa.string(), pa.binary(), pa.date32(), pa.time64("us"), pa.timestamp("us"),
         pa.timestamp("us", tz="UTC"), pa.month_day_nano_interval()]


@pytest.mark.parametrize("t", TYPES, ids=str)
@pytest.mark.parametrize("desc", [False, True])
def test_single_column_order(t, desc):
    r = random.Random(SEED)
    vals = _gen(t, r, 400)
    _check_order([(v,) for v in vals], [_arrow(t, vals)], [desc])


def test_multi_column_order_mixed_directions():
    r = random.Random(SEED + 1)
    for trial in range(30):
        k = r.randint(1, 4)
        types = [r.choice(TYPES) for _ in range(k)]
        desc = [r.random() < 0.5 for _ in range(k)]
        n = 150
        # few distinct values per column so that ties in earlier columns are common
        cols_vals = []
        for t in types:
            pool = _gen(t, r, 6)
            cols_vals.append([r.choice(pool) for _ in range(n)])
        rows = list(zip(*cols_vals))
        _check_order(rows, [_arrow(t, v) for t, v in zip(types, cols_vals)], desc)


def test_string_edge_cases():
    vals = ["", "\x00", "\x00\x00", "\x00\x01", "a", "a\x00", "a\x00\x00", "a\x01", "ab", "b", None, "\xff", "ÿ"]
    _check_order([(v,) for v in vals], [pa.array(vals)], [False])
    _check_order([(v, 1) for v in vals], [pa.array(vals), pa.array([1] * len(vals))], [False, False])
    _check_order([(v,) for v in vals], [pa.array(vals)], [True])


def test_nulls_last_ascending_first_descending():
    a = pa.array([None, 1, -1], pa.int32())
    asc = encode_pk([a])
    assert max(asc) == asc[0]
    desc = encode_pk([a], [True])
    assert min(desc) == desc[0]


def test_sliced_and_chunked_inputs():
    a = pa.array([5, None, 3, 7, 9], pa.int64())
    s = pa.array(["x", "y", None, "zz", "w"])
    full = encode_pk([a, s])
    assert encode_pk([a.slice(1, 3), s.slice(1, 3)]) == full[1:4]
    ch = pa.chunked_array([a.slice(0, 2), a.slice(2)])
    chs = pa.chunked_array([s.slice(0, 3), s.slice(3)])
    assert encode_pk([ch, chs]) == full


def test_fixed_width_encoding_is_exact():
    enc = encode_pk([pa.array([1, -1], pa.int32())])
    assert enc == [b"\x01\x80\x00\x00\x01", b"\x01\x7f\xff\xff\xff"]
    assert encode_pk([pa.array([-0.0], pa.float64())]) == encode_pk([pa.array([0.0], pa.float64())])


def test_make_keys_and_full_keys():
    pk = encode_pk([pa.array([1, 2], pa.int64())])
    keys = make_keys(7, np.array([3, 300], dtype=np.uint16), pk)
    assert keys[0][:4] == table_key_prefix(7) == b"\x00\x00\x00\x07"
    assert keys[0][4:6] == b"\x00\x03" and keys[1][4:6] == b"\x01\x2c"
    assert keys[0][6:] == pk[0]
    fk_new, fk_old = full_key(keys[0], 10), full_key(keys[0], 5)
    assert fk_new < fk_old  # newer epochs first
    assert split_full_key(fk_new) == (keys[0], 10)
    assert encode_epoch(MAX_EPOCH) == b"\x00" * 8 and encode_epoch(0) == b"\xff" * 8


def test_vnodes_deterministic_and_spread():
    r = random.Random(SEED)
    ints = pa.array([r.randint(-10**9, 10**9) for _ in range(5000)], pa.int64())
    v = compute_vnodes([ints])
    assert v.dtype == np.uint16 and v.max() < VNODE_COUNT
    assert len(np.unique(v)) > 200
    assert (compute_vnodes([ints]) == v).all()
    # same value in another integer width -> same vnode
    small = pa.array([1, -1, None, 0], pa.int64())
    assert (compute_vnodes([small]) == compute_vnodes([small.cast(pa.int32())])).all()
    # null hashes consistently
    a = compute_vnodes([pa.array([None, None], pa.string())])
    assert a[0] == a[1]
    assert (compute_vnodes([], num_rows=3) == 0).all() and len(compute_vnodes([], num_rows=3)) == 3
    # equal multi-column rows -> equal vnodes, independent of batch composition
    s = pa.array(["a", "b", "a", None, ""])
    i = pa.array([1, 2, 1, 3, 4])
    vv = compute_vnodes([s, i])
    assert vv[0] == vv[2]
    assert compute_vnodes([s.slice(2), i.slice(2)])[0] == vv[0]


def test_vnodes_stable_across_processes():
    code = ("import pyarrow as pa; from rw_cli.common.vnode import compute_vnodes;"
            "print(compute_vnodes([pa.array(['abc','', None, 'x\\x00y']), pa.array([1.5, -0.0, 3, None])]).tolist())")
    out1 = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    here = compute_vnodes([pa.array(["abc", "", None, "x\x00y"]), pa.array([1.5, -0.0, 3, None])]).tolist()
    assert out1.strip() == str(here)
    # pinned values: the vnode is part of persisted keys and must never change
    assert compute_vnodes([pa.array([1, 2, 3], pa.int64())]).tolist() == [229, 138, 240]
    assert compute_vnodes([pa.array(["a", "bc"])]).tolist() == [21, 126]


def test_fixed_keys_array_equals_the_general_encoding():
    """The one-matrix path writes the very bytes of encode_pk_array + make_keys_array."""
    import datetime
    import decimal

    import numpy as np
    import pyarrow as pa

    from rw_cli.store.keys import encode_pk_array, make_fixed_keys_array, make_keys_array
    cols = [pa.array([3, None, -7, 2**62], pa.int64()), pa.array([1.5, -0.0, None, float("nan")]),
            pa.array([True, None, False, True]), pa.array([1, 2, None, 4], pa.int16()),
            pa.array([datetime.datetime(2020, 1, 1), None, datetime.datetime(1960, 5, 5), datetime.datetime(2030, 1, 1)]),
            pa.array([decimal.Decimal("1.5"), None, decimal.Decimal("-2.25"), decimal.Decimal("0")], pa.decimal128(38, 10)),
            pa.array([1, None, 200, 0], pa.uint8()), pa.array([9, 5, -1, None, 2**31 - 1], pa.int32()).slice(1),
            pa.array([2**64 - 1, 0, None, 5], pa.uint64())]
    vnodes = np.array([0, 255, 7, 300])
    for desc in ([False] * len(cols), [True, False, True, False, True, True, True, False, True],
                 [False, True, False, True, False, False, False, True, False]):
        got = make_fixed_keys_array(42, vnodes, cols, desc)
        want = make_keys_array(42, vnodes, encode_pk_array(cols, desc))
        assert got.to_pylist() == want.to_pylist()
    assert make_fixed_keys_array(42, vnodes, [pa.array(["a", "b", None, "c"])]) is None


NESTED = [pa.list_(pa.int32()), pa.list_(pa.string()), pa.list_(pa.list_(pa.int64())),
          pa.struct([("a", pa.int32()), ("b", pa.string())]),
          pa.list_(pa.struct([("x", pa.float64()), ("y", pa.list_(pa.int16()))])),
          pa.large_list(pa.binary())]


def _random_value(t, rng):
    if rng.random() < 0.15:
        return None
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return [_random_value(t.value_type, rng) for _ in range(rng.randint(0, 3))]
    if pa.types.is_struct(t):
        return {t.field(i).name: _random_value(t.field(i).type, rng) for i in range(t.num_fields)}
    if pa.types.is_string(t):
        return rng.choice(["", "a", "ab", "a\x00", "b", "中"])
    if pa.types.is_binary(t):
        return rng.choice([b"", b"\x00", b"\x00\x00", b"\x01", b"\xff"])
    if pa.types.is_floating(t):
        return rng.choice([-1.5, 0.0, 2.0, float("inf"), float("nan")])
    return rng.randint(-3, 3)


@pytest.mark.parametrize("t", NESTED, ids=str)
@pytest.mark.parametrize("desc", [False, True])
def test_arrays_and_structs_order_as_postgresql_orders_them(t, desc):
    """Arrays compare element by element (a NULL element after any value, a prefix first),
    structs field by field; a NULL array or struct sorts last ascending. Equal values, and
    only those, encode equal (sliced inputs included)."""
    import random

    rng = random.Random(7)
    vals = [_random_value(t, rng) for _ in range(300)]
    arr = pa.array(vals, t)
    _check_order([(v,) for v in vals], [arr], [desc])
    _check_order([(v,) for v in vals[50:120]], [arr.slice(50, 70)], [desc])
    with_int = pa.array([rng.randint(0, 2) for _ in vals], pa.int32())
    _check_order(list(zip(vals, with_int.to_pylist())), [arr, with_int], [desc, not desc])
