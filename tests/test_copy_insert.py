"""Bulk loading as users do it (issue 21 item 3): COPY and \\copy from the CLI, and
`Session.insert` / `Result.df()` / `Result.pl()` from Python. slt/copy.slt covers COPY's
formats and options; these cover what slt cannot: the CLI's output and exit code, the shell's
meta-command, and the Python objects."""
from __future__ import annotations

import os
import subprocess
import sys

import pandas as pd
import polars as pl
import pyarrow as pa
import pytest

import rw_cli
from rw_cli.errors import BindError, ExecutionError, ReadOnlyError

RW = os.path.join(os.path.dirname(sys.executable), "rw")


def _rw(data_dir, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([RW, "--data-dir", str(data_dir), *args], input=stdin, capture_output=True,
                          text=True, timeout=120)


def test_copy_to_stdout_prints_the_data_alone(tmp_path):
    out = _rw(tmp_path / "d", "-c", "create table t (a int, b varchar)",
              "-c", "insert into t values (1, 'x'), (2, null), (3, 'a,b')", "-c", "flush",
              "-c", "copy (select * from t order by a) to stdout",
              "-c", "copy (select * from t order by a) to stdout with (format csv, header)")
    assert out.returncode == 0, out.stderr
    assert out.stdout.endswith("1\tx\n2\t\\N\n3\ta,b\na,b\n1,x\n2,\n3,\"a,b\"\n"), out.stdout


def test_a_bad_value_names_line_and_column_and_exits_non_zero(tmp_path):
    data = tmp_path / "in.csv"
    data.write_text("id,v\n1,10\n2,ten\n")
    out = _rw(tmp_path / "d", "-c", "create table t (id int, v int)",
              "-c", f"copy t from '{data}' (format csv, header)")
    assert out.returncode == 1
    assert 'ERROR:  invalid input syntax for type integer: "ten"' in out.stderr
    assert 'CONTEXT:  COPY t, line 3, column v: "ten"' in out.stderr
    again = _rw(tmp_path / "d", "-c", "select count(*) from t")
    assert again.stdout.split()[2] == "0"  # nothing of the load was written


def test_backslash_copy_takes_a_file_name_without_quotes(tmp_path):
    script = ("create table t (a int, b varchar);\n"
              "insert into t values (1, 'one'), (2, 'two');\nflush;\n"
              f"\\copy t to {tmp_path}/out.csv csv header\n"
              "create table u (a int, b varchar);\n"
              f"\\copy u from {tmp_path}/out.csv with (format csv, header)\n"
              "flush;\nselect * from u order by a;\n")
    out = _rw(tmp_path / "d", stdin=script)
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "out.csv").read_text() == "a,b\n1,one\n2,two\n"
    assert "COPY 2" in out.stdout and " 2 | two" in out.stdout


def test_copy_from_is_a_write_and_copy_to_a_read_in_a_read_only_session(tmp_path):
    d = tmp_path / "d"
    _rw(d, "-c", "create table t (a int)", "-c", "insert into t values (1)")
    (tmp_path / "x.csv").write_text("5\n")
    with rw_cli.connect(str(d), read_only=True) as s:
        assert s.execute("copy t to stdout").copy_out == "1\n"
        with pytest.raises(ReadOnlyError):
            s.execute(f"copy t from '{tmp_path}/x.csv' (format csv)")


@pytest.fixture
def session(tmp_path):
    with rw_cli.connect(str(tmp_path / "api")) as s:
        s.execute("create table t (id int primary key, name varchar, score numeric default 7)")
        s.execute("create materialized view m as select count(*) as n, sum(score) as s from t")
        yield s


def test_insert_takes_arrow_pandas_polars_and_dicts(session):
    assert session.insert("t", pa.table({"id": [1, 2], "name": ["a", "b"]})) == 2
    assert session.insert("t", pa.record_batch({"id": [3], "score": [1.5]})) == 1
    assert session.insert("t", pd.DataFrame({"name": ["d"], "id": [4]})) == 1
    assert session.insert("t", pl.DataFrame({"id": [5], "score": ["2.25"]})) == 1
    assert session.insert("t", {"id": [6]}) == 1
    session.execute("flush")
    df = session.execute("select id, name, score::float8 as score from t order by id").df()
    assert list(df["id"]) == [1, 2, 3, 4, 5, 6]
    assert list(df["score"]) == [7.0, 7.0, 1.5, 7.0, 2.25, 7.0]  # the default where not given
    mv = session.execute("select n, s::float8 as s from m").pl()
    assert mv.to_dicts() == [{"n": 6, "s": 31.75}]


@pytest.mark.parametrize("data, error, message", [
    ({"nope": [1]}, BindError, 'column "nope" of relation "t" does not exist'),
    ({"id": [9, 10], "score": ["1", "x"]}, ExecutionError, 'invalid input syntax for type numeric: "x"'),
    (42, BindError, "cannot insert a int"),
])
def test_insert_refuses_bad_data_and_writes_nothing(session, data, error, message):
    session.insert("t", {"id": [1]})
    with pytest.raises(error, match=message):
        session.insert("t", data)
    session.execute("flush")
    assert session.execute("select count(*) from t").fetchall() == [(1,)]


@pytest.mark.parametrize("data, message, context", [
    (pa.table({"id": pa.array(["1", "2", "3", "x4"])}), 'invalid input syntax for type integer: "x4"',
     "row 3 (counting from 0), column id: 'x4'"),
    (pa.table({"id": pa.array([1, 2 ** 40, 3], pa.int64())}), "integer out of range",
     "row 1 (counting from 0), column id: 1099511627776"),
    # the first refused value in row order, then column order, as PostgreSQL reports a load's
    (pd.DataFrame({"score": ["1", "2", "bad", "x"], "id": ["1", "2", "x", "4"]}),
     'invalid input syntax for type numeric: "bad"', "row 2 (counting from 0), column score: 'bad'"),
    ({"id": [1, 2, None], "name": ["a", "b", "c"]}, 'null value in column "id"',
     "row 2 (counting from 0), column id: None"),
])
def test_insert_names_the_row_and_column_of_a_bad_value(tmp_path, data, message, context):
    s = rw_cli.connect(str(tmp_path / "d"))
    s.execute("create table t (id int not null, name varchar, score numeric)")
    with pytest.raises(ExecutionError, match=message) as e:
        s.insert("t", data)
    assert e.value.context == f"Session.insert into t, {context}"
    s.execute("flush")
    assert s.execute("select count(*) from t").fetchall() == [(0,)]
    s.close()


def test_a_parquet_load_names_the_row_and_column_of_a_bad_value(tmp_path):
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"id": pa.array([1, 2, 3]), "v": pa.array([5, 2 ** 40, 2 ** 41])}), tmp_path / "in.parquet")
    out = _rw(tmp_path / "d", "-c", "create table t (id int, v int)",
              "-c", f"copy t from '{tmp_path / 'in.parquet'}' (format parquet)")
    assert out.returncode == 1
    assert "integer out of range" in out.stderr
    assert 'CONTEXT:  COPY t, row 2, column v: "1099511627776"' in out.stderr
    assert _rw(tmp_path / "d", "-c", "select count(*) from t").stdout.split()[2] == "0"


def test_a_null_in_a_not_null_column_names_its_line(tmp_path):
    (tmp_path / "in.csv").write_text("id,v\n1,10\n2,\n")
    out = _rw(tmp_path / "d", "-c", "create table t (id int, v int not null)",
              "-c", f"copy t from '{tmp_path / 'in.csv'}' (format csv, header)")
    assert out.returncode == 1
    assert 'null value in column "v" of relation "t" violates not-null constraint' in out.stderr
    assert "CONTEXT:  COPY t, line 3, column v: NULL" in out.stderr


def test_insert_after_close_is_an_error(tmp_path):
    s = rw_cli.connect(str(tmp_path / "c"))
    s.execute("create table t (a int)")
    s.close()
    with pytest.raises(rw_cli.errors.RwError, match="the session is closed"):
        s.insert("t", {"a": [1]})


_DUMP = r"""-- as pg_dump writes a table's rows
CREATE TABLE people (id int, name varchar, note varchar);
COPY people (id, name, note) FROM stdin;
1	ann	\N
2	bob	tab\there
\.
COPY people FROM STDIN WITH (FORMAT csv);
3,"carol, c",x
\.
FLUSH;
SELECT id, name, note IS NULL AS no_note, length(note) AS n FROM people ORDER BY id;
"""


def _rw_script(tmp_path, args, stdin=None):
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-m", "rw_cli.cli", "--data-dir", str(tmp_path / "d"), *args],
                          input=stdin, capture_output=True, text=True, timeout=120)


def test_copy_from_stdin_in_a_script_reads_the_rows_that_follow(tmp_path):
    """`rw -f dump.sql` and `rw < dump.sql`: the lines after `COPY ... FROM stdin;` up to
    `\\.` are its rows (text or csv), as psql reads a pg_dump script."""
    script = tmp_path / "dump.sql"
    script.write_text(_DUMP)
    for i, (args, stdin) in enumerate(((["-f", str(script)], None), ([], script.read_text()))):
        out = _rw_script(tmp_path / str(i), args, stdin)
        assert out.returncode == 0, out.stderr
        assert "COPY 2" in out.stdout and "COPY 1" in out.stdout
        rows = [[c.strip() for c in line.split("|")] for line in out.stdout.splitlines() if line.count("|") == 3]
        assert rows[1:] == [["1", "ann", "t", ""], ["2", "bob", "f", "8"], ["3", "carol, c", "f", "1"]]


def test_copy_from_stdin_with_a_bad_row_fails_the_script_and_loads_nothing(tmp_path):
    out = _rw_script(tmp_path, ["-c", "create table p (a int, b int)"])
    assert out.returncode == 0
    out = _rw_script(tmp_path, [], "copy p from stdin;\n1\t2\n3\n\\.\nflush;\n")
    assert out.returncode == 1
    assert "each row needs 2 field(s)" in out.stderr
    out = _rw_script(tmp_path, ["-c", "select count(*) from p"])
    assert out.stdout.split()[2] == "0"
