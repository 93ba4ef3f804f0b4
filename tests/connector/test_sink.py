"""Sinks: blackhole; the file sink delivers each committed epoch exactly once, even when the
process dies between staging an epoch and committing it, or between committing and renaming."""
import glob
import json
import os

import pytest

import rw_cli
from rw_cli.errors import BindError, NotSupported

from .conftest import drain

SOURCE = ("CREATE SOURCE s (v BIGINT) WITH (connector = 'datagen', fields.v.kind = 'sequence', "
          "fields.v.start = '1', fields.v.end = '{n}', datagen.rows.per.second = '100000000')")


def _delivered(path):
    rows = []
    for f in sorted(glob.glob(os.path.join(path, "*.jsonl"))):
        rows += [json.loads(line) for line in open(f) if line.strip()]
    return rows


def test_blackhole_and_errors(session):
    session.execute(SOURCE.format(n=1000))
    session.execute("CREATE SINK b AS SELECT v FROM s WITH (connector = 'blackhole')")
    drain(session, 300)
    jobs = {r[1]: r[3] for r in session.execute("SHOW JOBS").fetchall()}
    assert jobs["b"].startswith("1000 rows delivered")
    assert session.execute("SHOW SINKS").fetchall() == [("public.b",)]
    with pytest.raises(BindError):
        session.execute("CREATE SINK x AS SELECT v FROM s")
    with pytest.raises(NotSupported):
        session.execute("CREATE SINK x AS SELECT v FROM s WITH (connector = 'pulsar')")
    session.execute("DROP SINK b")
    session.execute("DROP SOURCE s")
    assert session.execute("SHOW JOBS").fetchall() == []


def test_file_sink_from_mv_csv_and_parquet(session, tmp_path):
    session.execute("CREATE TABLE t (k INT PRIMARY KEY, v VARCHAR)")
    session.execute("INSERT INTO t VALUES (1, 'a'), (2, 'b'); FLUSH")
    session.execute("CREATE MATERIALIZED VIEW m AS SELECT k, v FROM t")
    for enc in ("CSV", "PARQUET", "JSON"):
        session.execute(f"CREATE SINK s_{enc.lower()} FROM m WITH (connector = 'file', path = '{tmp_path / enc}', "
                        f"type = 'upsert') FORMAT PLAIN ENCODE {enc}")
    session.execute("UPDATE t SET v = 'bb' WHERE k = 2; FLUSH")
    csvs = sorted(glob.glob(str(tmp_path / "CSV" / "*.csv")))
    assert len(csvs) == 2  # the backfilled snapshot, then the update
    assert open(csvs[0]).read().splitlines()[0] == '"k","v","__op"'
    import pyarrow.parquet as pq

    t = pq.read_table(sorted(glob.glob(str(tmp_path / "PARQUET" / "*.parquet")))[-1])
    assert sorted(zip(t.column("v").to_pylist(), t.column("__op").to_pylist())) == \
        [("b", "update_delete"), ("bb", "update_insert")]
    assert len(_delivered(str(tmp_path / "JSON"))) == 4


def _crashing_run(data, out, n, crash):
    """Read some epochs, then die at `crash` ('before_commit' | 'before_rename')."""
    s = rw_cli.connect(data)
    s.tick(100)
    s.flush()  # durable and delivered on return (a plain barrier only hands the epoch over)
    s.tick(100)
    if crash == "before_commit":
        s.store.commit_epoch = _boom
    else:
        import rw_cli.engine.sink as sink_module

        orig = sink_module.FileWriter.commit
        sink_module.FileWriter.commit = _boom
    with pytest.raises(RuntimeError):
        s.flush()
    if crash == "before_rename":
        sink_module.FileWriter.commit = orig
    staged = glob.glob(os.path.join(out, ".staging", "*"))
    assert len(staged) == 1
    s.store.close()  # the process dies: nothing else is flushed
    s.lock.release()
    s.closed = True


def _boom(*args, **kwargs):
    raise RuntimeError("crash")


@pytest.mark.parametrize("crash", ["before_commit", "before_rename"])
def test_file_sink_exactly_once_across_crashes(tmp_path, crash):
    data, out = str(tmp_path / "data"), str(tmp_path / "out")
    with rw_cli.connect(data) as s:
        s.execute(SOURCE.format(n=1000))
        s.execute(f"CREATE SINK f AS SELECT v FROM s WITH (connector = 'file', path = '{out}') "
                  "FORMAT PLAIN ENCODE JSON")
    _crashing_run(data, out, 1000, crash)
    with rw_cli.connect(data) as s:
        s.runtime  # jobs are rebuilt on first use; the sink recovers its staged epochs then
        assert not glob.glob(os.path.join(out, ".staging", "*"))  # finished or discarded
        drain(s, 150)
    values = sorted(r["v"] for r in _delivered(out))
    assert values == list(range(1, 1001))  # every row once: nothing lost, nothing twice
    names = [os.path.basename(f) for f in sorted(glob.glob(os.path.join(out, "*.jsonl")))]
    assert names == sorted(set(names)) and all(len(n.split(".")[0]) == 20 for n in names)


def test_sink_type_never_drops_retractions_silently(session, tmp_path):
    """RisingWave's rule (issue 20, item 10): `type = 'append-only'` over a query whose
    changes retract needs `force_append_only = 'true'` (which drops deletes and keeps an
    update's new row); without a type such a sink delivers every change with its op."""
    session.execute("CREATE TABLE t (k INT PRIMARY KEY, v VARCHAR); INSERT INTO t VALUES (1, 'a'), (2, 'b'); FLUSH")
    with pytest.raises(BindError, match="force_append_only='true'"):
        session.execute(f"CREATE SINK bad FROM t WITH (connector = 'file', path = '{tmp_path / 'bad'}', "
                        "type = 'append-only') FORMAT PLAIN ENCODE JSON")
    assert session.catalog.get("bad") is None
    session.execute(f"CREATE SINK forced FROM t WITH (connector = 'file', path = '{tmp_path / 'forced'}', "
                    "type = 'append-only', force_append_only = 'true') FORMAT PLAIN ENCODE JSON")
    session.execute(f"CREATE SINK derived FROM t WITH (connector = 'file', path = '{tmp_path / 'derived'}') "
                    "FORMAT PLAIN ENCODE JSON")
    session.execute("UPDATE t SET v = 'bb' WHERE k = 2; DELETE FROM t WHERE k = 1; FLUSH")
    forced = _delivered(str(tmp_path / "forced"))
    assert sorted(r["v"] for r in forced) == ["a", "b", "bb"] and all("__op" not in r for r in forced)
    derived = _delivered(str(tmp_path / "derived"))
    assert sorted((r["v"], r["__op"]) for r in derived) == [
        ("a", "delete"), ("a", "insert"), ("b", "insert"), ("b", "update_delete"), ("bb", "update_insert")]
    with pytest.raises(BindError, match="sink type must be"):
        session.execute("CREATE SINK odd FROM t WITH (connector = 'blackhole', type = 'sideways')")
