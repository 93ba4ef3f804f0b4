"""The datagen connector: sequence and random fields, splits, bounds, the rate limit."""
import time

import pytest

from rw_cli.connector.datagen import DatagenReader
from rw_cli.common.types import BIGINT, DOUBLE, INTEGER, TIMESTAMP, VARCHAR, BOOLEAN
from rw_cli.errors import BindError, NotSupported

from .conftest import drain


def test_sequence_and_random_fields():
    r = DatagenReader({"fields.id.kind": "sequence", "fields.id.start": "10", "fields.id.end": "19",
                       "fields.v.min": "5", "fields.v.max": "7", "fields.s.length": "4",
                       "fields.x.min": "0.5", "fields.x.max": "1.5"},
                      [("id", INTEGER), ("v", BIGINT), ("s", VARCHAR), ("x", DOUBLE), ("b", BOOLEAN),
                       ("t", TIMESTAMP)])
    assert r.bounded and r.list_splits() == ["0"]
    t, keys, off = r.read("0", 0, 100)
    assert off == 10 and r.exhausted("0", off)
    assert t.column("id").to_pylist() == list(range(10, 20))
    assert set(t.column("v").to_pylist()) <= {5, 6, 7}
    assert all(len(s) == 4 for s in t.column("s").to_pylist())
    assert all(0.5 <= x < 1.5 for x in t.column("x").to_pylist())
    again, _, _ = r.read("0", 3, 2)
    assert again.to_pylist() == t.slice(3, 2).to_pylist()  # a range reads the same rows every time


def test_splits_and_unbounded():
    r = DatagenReader({"fields.id.kind": "sequence", "fields.id.end": "10", "datagen.split.num": "3"},
                      [("id", INTEGER)])
    seen = []
    for s in r.list_splits():
        t, _, _ = r.read(s, 0, 100)
        seen += t.column("id").to_pylist()
    assert sorted(seen) == list(range(1, 11))
    u = DatagenReader({}, [("v", INTEGER)])
    assert not u.bounded and u.rate == 10.0
    assert u.read("0", 0, 5)[0].num_rows == 5


def test_bad_options():
    with pytest.raises(BindError):
        DatagenReader({"fields.v.kind": "zigzag"}, [("v", INTEGER)])
    with pytest.raises(NotSupported):
        DatagenReader({"fields.v.kind": "sequence"}, [("v", VARCHAR)])
    with pytest.raises(BindError):
        DatagenReader({"fields.v.kind": "sequence", "fields.v.end": "ten"}, [("v", INTEGER)])


def test_rate_limit_and_sql(session):
    session.execute("CREATE TABLE t (v INT, s VARCHAR) WITH (connector = 'datagen', fields.v.kind = 'sequence', "
                    "fields.v.start = '1', fields.v.end = '1000', datagen.rows.per.second = '200', "
                    "datagen.split.num = '2')")
    session.execute("CREATE MATERIALIZED VIEW m AS SELECT count(*) AS c, sum(v) AS s FROM t")
    n = session.tick(10_000)
    assert 0 < n <= 400  # about one second's rows per split at first, not everything
    start = time.monotonic()
    while time.monotonic() - start < 0.3:
        session.tick(10_000)
    session.barrier()
    c = session.execute("SELECT c FROM m").fetchall()[0][0]
    assert c < 1000
    session.execute("CREATE SOURCE fast (v INT) WITH (connector = 'datagen', fields.v.kind = 'sequence', "
                    "fields.v.end = '50', datagen.rows.per.second = '1000000')")
    session.execute("CREATE MATERIALIZED VIEW f AS SELECT count(*) AS c, sum(v) AS s FROM fast")
    while session.execute("SELECT c FROM m").fetchall()[0][0] < 1000:
        session.tick(10_000)
        session.barrier()
        time.sleep(0.05)
    drain(session)
    assert session.execute("SELECT c, s FROM m").fetchall() == [(1000, 500500)]
    assert session.execute("SELECT c, s FROM f").fetchall() == [(50, 1275)]
