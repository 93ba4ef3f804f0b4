import datetime
import decimal
import random

import pyarrow as pa
import pytest

from rw_cli.errors import StorageError
from rw_cli.store.row_codec import decode_rows, encode_rows

SCHEMA = pa.schema([
    ("b", pa.bool_()), ("i16", pa.int16()), ("i32", pa.int32()), ("i64", pa.int64()),
    ("f32", pa.float32()), ("f64", pa.float64()), ("d", pa.decimal128(38, 10)), ("d2", pa.decimal128(38, 2)),
    ("s", pa.string()), ("j", pa.string()), ("by", pa.binary()), ("dt", pa.date32()), ("t", pa.time64("us")),
    ("ts", pa.timestamp("us")), ("tz", pa.timestamp("us", tz="UTC")), ("iv", pa.month_day_nano_interval()),
])


def _batch(n, seed=7):
    r = random.Random(seed)

    def maybe(f):
        return [None if r.random() < 0.2 else f() for _ in range(n)]

    q10 = decimal.Decimal("1e-10")
    return pa.record_batch([
        pa.array(maybe(lambda: r.random() < 0.5), pa.bool_()),
        pa.array(maybe(lambda: r.randint(-2**15, 2**15 - 1)), pa.int16()),
        pa.array(maybe(lambda: r.randint(-2**31, 2**31 - 1)), pa.int32()),
        pa.array(maybe(lambda: r.randint(-2**63, 2**63 - 1)), pa.int64()),
        pa.array(maybe(lambda: r.choice([1.5, -0.0, float("inf"), float("nan"), -2.25])), pa.float32()),
        pa.array(maybe(lambda: r.uniform(-1e300, 1e300)), pa.float64()),
        pa.array(maybe(lambda: (decimal.Decimal(r.randint(-10**27, 10**27)) * q10)), pa.decimal128(38, 10)),
        pa.array(maybe(lambda: decimal.Decimal(r.randint(-10**30, 10**30)).scaleb(-2)), pa.decimal128(38, 2)),
        pa.array(maybe(lambda: "".join(r.choice("ab\x00é中 ") for _ in range(r.randint(0, 20))))),
        pa.array(maybe(lambda: '{"a": [1, 2]}')),
        pa.array(maybe(lambda: bytes(r.randrange(256) for _ in range(r.randint(0, 10)))), pa.binary()),
        pa.array(maybe(lambda: datetime.date(1970, 1, 1) + datetime.timedelta(days=r.randint(-10**5, 10**5))), pa.date32()),
        pa.array(maybe(lambda: r.randint(0, 86_400_000_000 - 1)), pa.int64()).cast(pa.time64("us")),
        pa.array(maybe(lambda: r.randint(-2**62, 2**62)), pa.int64()).cast(pa.timestamp("us")),
        pa.array(maybe(lambda: r.randint(-2**62, 2**62)), pa.int64()).cast(pa.timestamp("us", tz="UTC")),
        pa.array(maybe(lambda: pa.MonthDayNano([r.randint(-100, 100), r.randint(-100, 100), r.randint(-10**15, 10**15)])),
                 pa.month_day_nano_interval()),
    ], schema=SCHEMA)


def _same(a: pa.RecordBatch, b: pa.RecordBatch):
    assert a.schema == b.schema
    # compare via IPC-level equality (NaN-aware)
    for x, y in zip(a.columns, b.columns):
        assert x.type == y.type
        if pa.types.is_floating(x.type):
            assert _nan_equal(x.to_pylist(), y.to_pylist())
        else:
            assert x.equals(y), (x.type, x, y)


def _nan_equal(xs, ys):
    import math
    if len(xs) != len(ys):
        return False
    for x, y in zip(xs, ys):
        if isinstance(x, float) and isinstance(y, float) and math.isnan(x) and math.isnan(y):
            continue
        if x != y:
            return False
    return True


def test_round_trip_every_type_with_nulls():
    b = _batch(500)
    vals = encode_rows(b)
    assert len(vals) == 500 and all(isinstance(v, bytes) for v in vals)
    out = decode_rows(vals, SCHEMA)
    _same(b, out)
    assert out.schema.field("tz").type.tz == "UTC"
    assert out.schema.field("d2").type == pa.decimal128(38, 2)


def test_round_trip_all_nulls_and_empty():
    b = pa.RecordBatch.from_arrays([pa.nulls(3, f.type) for f in SCHEMA], schema=SCHEMA)
    _same(b, decode_rows(encode_rows(b), SCHEMA))
    e = pa.RecordBatch.from_arrays([pa.array([], f.type) for f in SCHEMA], schema=SCHEMA)
    assert encode_rows(e) == []
    assert decode_rows([], SCHEMA).num_rows == 0


def test_rows_are_independent_of_batch_composition():
    b = _batch(50, seed=3)
    whole = encode_rows(b)
    part = encode_rows(b.slice(10, 20))  # non-zero array offsets
    assert part == whole[10:30]
    shuffled = [whole[i] for i in reversed(range(50))]
    _same(b.take(pa.array(list(reversed(range(50))))), decode_rows(shuffled, SCHEMA))


def test_nested_types_slow_path():
    schema = pa.schema([("st", pa.struct([("x", pa.int32()), ("y", pa.string())])), ("l", pa.list_(pa.int64())),
                        ("k", pa.int32())])
    b = pa.record_batch([
        pa.array([{"x": 1, "y": "a"}, None, {"x": None, "y": "c"}], schema.field("st").type),
        pa.array([[1, 2], [], None], pa.list_(pa.int64())),
        pa.array([1, None, 3], pa.int32()),
    ], schema=schema)
    out = decode_rows(encode_rows(b), schema)
    assert out.to_pylist() == b.to_pylist()


def test_corrupt_values_raise():
    schema = pa.schema([("a", pa.int64()), ("s", pa.string())])
    vals = encode_rows(pa.record_batch([pa.array([1]), pa.array(["hello"])], schema=schema))
    with pytest.raises(StorageError):
        decode_rows([vals[0][:-2]], schema)
    with pytest.raises(StorageError):
        decode_rows([vals[0] + b"x"], schema)
