"""posix_fs sources: CSV, JSON lines and Parquet; match_pattern; late files; bad records."""
import json

import pyarrow as pa
import pyarrow.parquet as pq

from .conftest import drain


def _source(session, name, root, encode, pattern="*", extra=""):
    session.execute(f"CREATE SOURCE {name} (id INT, name VARCHAR, score DOUBLE) WITH (connector = 'posix_fs', "
                    f"posix_fs.root = '{root}', match_pattern = '{pattern}') FORMAT PLAIN ENCODE {encode}{extra}")
    session.execute(f"CREATE MATERIALIZED VIEW {name}_mv AS SELECT id, name, score FROM {name}")


def _rows(session, name):
    return session.execute(f"SELECT id, name, score FROM {name}_mv ORDER BY id").fetchall()


def test_json_lines_bad_records_and_late_files(session, tmp_path):
    root = tmp_path / "json"
    root.mkdir()
    (root / "a.json").write_text("\n".join([
        json.dumps({"id": 1, "name": "a", "score": 1.5}),
        "{not json",
        json.dumps({"id": "two", "name": "b", "score": 2}),  # wrong type: skipped
        json.dumps({"id": 3, "name": None}),                 # missing field: NULL
    ]) + "\n")
    (root / "skip.txt").write_text("ignored\n")
    _source(session, "j", str(root), "JSON", pattern="*.json")
    drain(session)
    assert _rows(session, "j") == [(1, "a", 1.5), (3, None, None)]
    jobs = {r[1]: r[3] for r in session.execute("SHOW JOBS").fetchall()}
    assert "2 bad records skipped" in jobs["j"]
    (root / "b.json").write_text(json.dumps({"id": 4, "name": "d", "score": 4}) + "\n")
    session.tick()
    session.barrier()
    assert [r[0] for r in _rows(session, "j")] == [1, 3, 4]


def test_csv_with_and_without_header(session, tmp_path):
    root = tmp_path / "csv"
    root.mkdir()
    (root / "1.csv").write_text("score,id,name\n1.0,1,x\noops,2,y\n3.0,3,\"z, z\"\n")
    _source(session, "c", str(root), "CSV")
    root2 = tmp_path / "csv2"
    root2.mkdir()
    (root2 / "1.csv").write_text("1;x;1.0\n2;y\n")
    _source(session, "d", str(root2), "CSV", extra=" (without_header = 'true', delimiter = ';')")
    drain(session)
    assert _rows(session, "c") == [(1, "x", 1.0), (3, "z, z", 3.0)]
    assert _rows(session, "d") == [(1, "x", 1.0)]


def test_parquet_and_resume(tmp_path):
    import rw_cli

    root = tmp_path / "pq"
    root.mkdir()
    pq.write_table(pa.table({"id": list(range(100)), "name": [f"n{i}" for i in range(100)],
                             "score": [float(i) for i in range(100)]}), root / "p1.parquet")
    d = str(tmp_path / "data")
    with rw_cli.connect(d) as s:
        _source(s, "p", str(root), "PARQUET")
        s.tick(30)
        s.barrier()
        assert len(_rows(s, "p")) == 30
    pq.write_table(pa.table({"id": [100], "name": ["late"], "score": [1.0]}), root / "p2.parquet")
    with rw_cli.connect(d) as s:
        drain(s, 30)
        rows = _rows(s, "p")
        assert [r[0] for r in rows] == list(range(101))


def test_extra_fields_and_invalid_utf8_are_bad_records(session, tmp_path):
    """A CSV record with an extra field, and a record with bytes that are not UTF-8, are
    skipped and counted as bad records, not taken in silently (issue 20, item 10)."""
    root = tmp_path / "csv3"
    root.mkdir()
    (root / "1.csv").write_bytes(b"id,name,score\n1,x,1.0\n2,y,2.0,extra\n3,\xff\xfe,3.0\n4,\xc3\xa9,4.0\n")
    _source(session, "e", str(root), "CSV")
    jroot = tmp_path / "json3"
    jroot.mkdir()
    (jroot / "a.json").write_bytes(b'{"id": 1, "name": "ok"}\n{"id": 2, "name": "bad \xff"}\n')
    _source(session, "f", str(jroot), "JSON")
    drain(session)
    assert _rows(session, "e") == [(1, "x", 1.0), (4, "\u00e9", 4.0)]
    assert _rows(session, "f") == [(1, "ok", None)]
    jobs = {r[1]: r[3] for r in session.execute("SHOW JOBS").fetchall()}
    assert "2 bad records skipped" in jobs["e"] and "1 bad record" in jobs["f"], jobs


def test_show_jobs_counts_survive_a_restart(tmp_path):
    """Rows read and bad records skipped commit with the offsets: a new process (or a
    restart) shows what was read, not 0 (issue 20, item 10)."""
    import rw_cli

    root = tmp_path / "j"
    root.mkdir()
    (root / "a.json").write_text("\n".join([json.dumps({"id": i, "name": "n", "score": 1.0}) for i in range(5)]
                                           + ["{bad", "[1]"]) + "\n")
    data = str(tmp_path / "data")
    with rw_cli.connect(data) as s:
        _source(s, "k", str(root), "JSON")
        drain(s)
        s.flush()
        before = {r[1]: r[3] for r in s.execute("SHOW JOBS").fetchall()}["k"]
    assert before.startswith("5 rows read") and "2 bad records skipped" in before, before
    with rw_cli.connect(data) as s:
        after = {r[1]: r[3] for r in s.execute("SHOW JOBS").fetchall()}["k"]
        assert after.startswith("5 rows read") and "2 bad records skipped" in after, after
        (root / "b.json").write_text(json.dumps({"id": 9, "name": "m", "score": 2.0}) + "\n")
        drain(s)
        assert {r[1]: r[3] for r in s.execute("SHOW JOBS").fetchall()}["k"].startswith("6 rows read")
