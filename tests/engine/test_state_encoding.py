"""StateTable's fast value encoding writes exactly the row codec's bytes."""
from __future__ import annotations

import decimal

import numpy as np
import pyarrow as pa

from rw_cli.store.row_codec import decode_rows_arrays, encode_rows_array
from rw_cli.store.state_table import encode_values


def _batch(n: int = 500) -> pa.RecordBatch:
    rng = np.random.default_rng(1)

    def maybe_null(vals, p=0.2):
        return [None if rng.random() < p else v for v in vals]
    return pa.record_batch({
        "i": pa.array(maybe_null(list(range(n))), pa.int64()),
        "s": pa.array(maybe_null(["x" * int(rng.integers(0, 20)) for _ in range(n)]), pa.string()),
        "b": pa.array(maybe_null([bool(i % 2) for i in range(n)]), pa.bool_()),
        "d": pa.array(maybe_null([decimal.Decimal(i) / 8 for i in range(n)]), pa.decimal128(38, 10)),
        "ts": pa.array(maybe_null(list(range(n))), pa.int64()).cast(pa.timestamp("us")),
        "bin": pa.array(maybe_null([b"ab" * int(rng.integers(0, 5)) for _ in range(n)]), pa.binary()),
        "f": pa.array(maybe_null([i / 3 for i in range(n)]), pa.float64()),
        "l": pa.array(maybe_null([[i, i + 1] for i in range(n)]), pa.list_(pa.int64())),
        "nul": pa.nulls(n),
        "s2": pa.array(maybe_null(["héllo"] * n), pa.large_string()),
        # every fixed width: 1, 2, 4, 8 and 16 bytes
        "i8": pa.array(maybe_null([i % 100 - 50 for i in range(n)]), pa.int8()),
        "i16": pa.array(maybe_null([i * 7 - 900 for i in range(n)]), pa.int16()),
        "i32": pa.array(maybe_null([i * 1000 - 7 for i in range(n)]), pa.int32()),
        "dt": pa.array(maybe_null(list(range(n))), pa.int32()).cast(pa.date32()),
        "iv": pa.array(maybe_null([pa.MonthDayNano([i, -i, i * 1000]) for i in range(n)]),
                       pa.month_day_nano_interval()),
    })


def test_encode_values_matches_the_row_codec():
    b = _batch()
    for part in [b, b.slice(7, 300), b.select(["s"]), b.select(["i", "ts"]), b.select(["s", "s2"]).slice(3),
                 b.slice(0, 0), b.select(["nul", "b"]), b.select(["i8", "i16", "i32", "dt", "iv"]).slice(5)]:
        fast = encode_values(part)
        assert encode_rows_array(part).equals(fast), part.schema
        if part.num_rows:
            assert decode_rows_arrays(fast, part.schema).equals(part)


def test_state_table_cache_evicts_and_stays_exact(tmp_path):
    from rw_cli.store.hummock import HummockStorage
    from rw_cli.store.object_store import LocalObjectStore
    from rw_cli.store.state_table import StateTable

    schema = pa.schema([("_0", pa.int64()), ("_1", pa.string())])
    store = HummockStorage(LocalObjectStore(str(tmp_path)))
    t = StateTable(store, 5, schema, [0])
    t.enable_cache(max_bytes=4000)  # a few dozen entries: evicts all the time
    model: dict[int, str] = {}
    rng = np.random.default_rng(4)
    epoch = 1 << 16
    for _ in range(40):
        ids = rng.integers(0, 300, 40)
        probe = pa.array(rng.integers(0, 300, 60), pa.int64())
        rows, found = t.get_rows([probe])
        assert found.tolist() == [int(i) in model for i in probe.to_pylist()]
        assert [r for r, f in zip(rows.column(1).to_pylist(), found) if f] == \
            [model[int(i)] for i in probe.to_pylist() if int(i) in model]
        ins = [int(i) for i in ids[:30]]
        dels = [int(i) for i in ids[30:]]
        t.insert(pa.record_batch([pa.array(ins, pa.int64()), pa.array([f"v{epoch}-{i}" for i in ins])], schema=schema))
        t.delete(pa.record_batch([pa.array(dels, pa.int64()), pa.array([""] * len(dels))], schema=schema))
        for i in ins:
            model[i] = f"v{epoch}-{i}"
        for i in dels:
            model.pop(i, None)
        t.commit(epoch)
        store.commit_epoch(epoch)
        epoch += 1 << 16
    assert t._cache_bytes <= 4000
    store.close()
