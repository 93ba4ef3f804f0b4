"""`rw serve` with real clients: psql, psycopg 3 (simple and extended protocol, binary
parameters and results), SQLAlchemy's PostgreSQL dialect, many connections at once."""
from __future__ import annotations

import shutil
import subprocess
import threading
import time

import pytest

psycopg = pytest.importorskip("psycopg")

pytestmark = pytest.mark.xdist_group("pgwire")


def connect(port: int, **kw):
    return psycopg.connect(host="127.0.0.1", port=port, user="root", dbname="dev", autocommit=True, **kw)


@pytest.fixture(scope="module")
def setup(port):
    with connect(port) as c:
        c.execute("create table items (id int primary key, name varchar, price double precision, ok boolean)")
        c.execute("insert into items values (1, 'apple', 1.5, true), (2, 'pear', 2.25, false), (3, 'fig', null, null)")
        c.execute("flush")
    return port


@pytest.mark.skipif(shutil.which("psql") is None, reason="psql is not installed")
def test_psql_runs_queries_and_reports_errors(setup):
    run = subprocess.run(["psql", "-h", "127.0.0.1", "-p", str(setup), "-U", "root", "-d", "dev", "-X", "-A", "-t",
                          "-c", "select 1", "-c", "select name from items order by id", "-c", "\\dt"],
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[:4] == ["1", "apple", "pear", "fig"]
    assert "public|items|table|root" in lines
    described = subprocess.run(["psql", "-h", "127.0.0.1", "-p", str(setup), "-U", "root", "-d", "dev", "-X",
                                "-c", "\\d items"], capture_output=True, text=True, timeout=60)
    assert described.returncode == 0, described.stderr
    assert 'Table "public.items"' in described.stdout
    assert " id     | integer           |           | not null | " in described.stdout
    bad = subprocess.run(["psql", "-h", "127.0.0.1", "-p", str(setup), "-U", "root", "-X", "-v", "VERBOSITY=verbose",
                          "-c", "select * from nowhere"], capture_output=True, text=True, timeout=60)
    assert bad.returncode == 1
    assert "ERROR:  42P01: relation \"nowhere\" does not exist" in bad.stderr


def test_extended_protocol_with_text_parameters(setup):
    with connect(setup) as c:
        assert c.execute("select id, name from items where id = %s", [2]).fetchall() == [(2, "pear")]
        assert c.execute("select name from items where name = %s or name = %s order by 1",
                         ["fig", "o'brien"]).fetchall() == [("fig",)]
        assert c.execute("select %s::varchar, %s", ["$1 -- not a placeholder", None]).fetchone() == \
            ("$1 -- not a placeholder", None)


def test_binary_parameters_and_results(setup):
    with connect(setup) as c:
        cur = c.cursor(binary=True)
        rows = cur.execute("select id, name, price, ok from items where id <= %s order by id", [2]).fetchall()
        assert rows == [(1, "apple", 1.5, True), (2, "pear", 2.25, False)]
        assert cur.execute("select %s::bigint + 1, %s::double precision * 2, %s::boolean, %s::bytea",
                           [41, 1.25, True, b"\x00\xff"]).fetchone() == (42, 2.5, True, b"\x00\xff")
        assert cur.execute("select price from items where id = 3").fetchone() == (None,)


def test_simple_protocol_several_statements(setup):
    with connect(setup) as c:
        cur = psycopg.ClientCursor(c)
        cur.execute("select 1; select 'two' as t, 2 as n")
        assert cur.fetchall() == [(1,)]
        assert cur.nextset()
        assert cur.fetchall() == [("two", 2)]
        assert [d.name for d in cur.description] == ["t", "n"]


def test_type_oids_of_results(setup):
    with connect(setup) as c:
        cur = c.execute("select 1::smallint, 1, 1::bigint, 1.5::real, 1.5::double precision, 1.5::numeric, "
                        "'x'::varchar, true, date '2024-01-02', timestamp '2024-01-02 03:04:05', "
                        "interval '1 day', '{\"a\": 1}'::jsonb")
        assert [d.type_code for d in cur.description] == [21, 23, 20, 700, 701, 1700, 1043, 16, 1082, 1114,
                                                          1186, 3802]
        row = cur.fetchone()
        assert str(row[5]) == "1.5" and row[11] == {"a": 1}


@pytest.mark.parametrize("sql, code", [
    ("selec 1", "42601"),
    ("select * from nowhere", "42P01"),
    ("select nope from items", "42703"),
    ("select 1/0", "22012"),
])
def test_errors_carry_sqlstate_and_the_connection_goes_on(setup, sql, code):
    with connect(setup) as c:
        with pytest.raises(psycopg.Error) as info:
            c.execute(sql)
        assert info.value.sqlstate == code
        assert c.execute("select count(*) from items").fetchone() == (3,)


def test_syntax_error_position(setup):
    with connect(setup) as c:
        with pytest.raises(psycopg.errors.SyntaxError) as info:
            psycopg.ClientCursor(c).execute("select 1; selec 2")
        assert info.value.diag.statement_position == "17"
        with pytest.raises(psycopg.errors.SyntaxError) as info:  # extended: in the text sent ($1)
            c.execute("select %s, 1 frm items", ["a long text value"])
        assert info.value.diag.statement_position == str(len("select $1, 1 frm ") + 1)  # at "items"


PSQL_META_COMMANDS = ["\\d", "\\d+", "\\d items", "\\d+ items", "\\d+ items_mv", "\\dt+", "\\dm+", "\\dv",
                      "\\di+", "\\dn+", "\\l+", "\\du", "\\dp", "\\df", "\\dT+", "\\dx", "\\db", "\\dO",
                      "\\dy", "\\dD", "\\dconfig", "\\do", "\\dC", "\\dc", "\\dL", "\\dl", "\\des", "\\dew",
                      "\\dRp", "\\dRs", "\\drds", "\\ddp", "\\dF", "\\dFp", "\\dFd", "\\dFt", "\\dX", "\\db+",
                      "\\lo_list", "\\z"]


def _psql(port: int, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["psql", "-h", "127.0.0.1", "-p", str(port), "-U", "root", "-d", "dev", "-X", *args],
                          capture_output=True, text=True, timeout=60)


@pytest.mark.skipif(shutil.which("psql") is None, reason="psql is not installed")
def test_psql_meta_commands(setup):
    """psql's describe commands run their own catalog queries (sizes over oids, view
    definitions by oid, storage and privilege columns, tablespaces): each answers, none fails."""
    with connect(setup) as c:
        c.execute("create materialized view if not exists items_mv as select ok, count(*) as n from items group by ok")
    for command in PSQL_META_COMMANDS:
        run = _psql(setup, "-v", "ON_ERROR_STOP=1", "-c", command)
        assert run.returncode == 0 and "ERROR" not in run.stderr, (command, run.stderr)
    described = _psql(setup, "-c", "\\d+ items").stdout
    assert "| plain    |" in described and "| extended |" in described
    assert "View definition:" in _psql(setup, "-c", "\\d+ items_mv").stdout
    assert " bytes" in _psql(setup, "-c", "\\dt+").stdout and "pg_default" in _psql(setup, "-c", "\\l+").stdout


def test_settings_are_per_connection(setup):
    with connect(setup) as a, connect(setup) as b:
        a.execute("set timezone = 'Asia/Tokyo'")
        assert a.execute("show timezone").fetchone() == ("Asia/Tokyo",)
        assert b.execute("show timezone").fetchone() == ("UTC",)
        assert a.info.parameter_status("TimeZone") == "Asia/Tokyo"


def test_processlist_lists_connections(setup):
    with connect(setup) as a, connect(setup, application_name="second") as b:
        b.execute("select 42")
        rows = a.execute("show processlist").fetchall()
        infos = {r[0]: r[6] for r in rows}
        assert str(b.info.backend_pid) in infos and infos[str(b.info.backend_pid)] == "select 42"
        assert str(a.info.backend_pid) in infos
        activity = a.execute("select pid, application_name, state, query from pg_stat_activity "
                             "where pid = %s", [b.info.backend_pid]).fetchall()
        assert activity == [(b.info.backend_pid, "second", "idle", "select 42")]


def test_mv_follows_inserts_of_another_connection(setup):
    with connect(setup) as a, connect(setup) as b:
        a.execute("create table clicks (user_id int, n int)")
        a.execute("create materialized view per_user as select user_id, sum(n) as total from clicks group by user_id")
        b.execute("insert into clicks values (1, 2), (1, 3), (2, 10)")
        b.execute("flush")
        assert a.execute("select user_id, total from per_user order by 1").fetchall() == [(1, 5), (2, 10)]


def test_transaction_blocks_and_savepoints(setup):
    """A read-only transaction is a block (savepoints inside it); a driver's BEGIN without
    READ ONLY starts none (RisingWave's notice): the connection stays idle and writes run."""
    with psycopg.connect(host="127.0.0.1", port=setup, user="root", dbname="dev") as c:  # not autocommit
        c.read_only = True  # BEGIN READ ONLY
        assert c.execute("select count(*) from items").fetchone() == (3,)
        assert c.info.transaction_status == psycopg.pq.TransactionStatus.INTRANS
        with c.transaction():  # a savepoint inside the block
            c.execute("select 1")
        c.commit()
        assert c.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
    with psycopg.connect(host="127.0.0.1", port=setup, user="root", dbname="dev") as c:  # not autocommit
        assert c.execute("select count(*) from items").fetchone() == (3,)
        assert c.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
        c.commit()


def test_cancel_of_an_idle_connection_is_harmless(setup):
    with connect(setup) as c:
        c.cancel()
        assert c.execute("select 1").fetchone() == (1,)


def test_sqlalchemy_reflects_tables(setup):
    sqlalchemy = pytest.importorskip("sqlalchemy")
    engine = sqlalchemy.create_engine(f"postgresql+psycopg://root@127.0.0.1:{setup}/dev")
    try:
        inspector = sqlalchemy.inspect(engine)
        assert "items" in inspector.get_table_names()
        cols = inspector.get_columns("items")
        assert [(c["name"], type(c["type"]).__name__, c["nullable"]) for c in cols] == [
            ("id", "INTEGER", False), ("name", "VARCHAR", True), ("price", "DOUBLE_PRECISION", True),
            ("ok", "BOOLEAN", True)]
        pk = inspector.get_pk_constraint("items")
        assert pk["constrained_columns"] == ["id"] and pk["dialect_options"].get("postgresql_include", []) == []
        assert inspector.get_indexes("items") == [] and inspector.get_foreign_keys("items") == []
        with engine.connect() as conn:
            assert conn.execute(sqlalchemy.text("select name from items where id = :id"), {"id": 1}).scalar() == "apple"
            # Table reflection (current_setting of a bound parameter, pg_tablespace, pg_opclass)
            table = sqlalchemy.Table("items", sqlalchemy.MetaData(), autoload_with=conn)
            assert [c.name for c in table.columns] == ["id", "name", "price", "ok"]
    finally:
        engine.dispose()


def test_pandas_to_sql_and_read_sql_table(setup):
    sqlalchemy = pytest.importorskip("sqlalchemy")
    pd = pytest.importorskip("pandas")
    engine = sqlalchemy.create_engine(f"postgresql+psycopg://root@127.0.0.1:{setup}/dev")
    try:
        pd.DataFrame({"a": [1, 2], "b": ["x", "y"]}).to_sql("from_pandas", engine, index=False, if_exists="replace")
        with engine.connect() as conn:
            conn.execute(sqlalchemy.text("flush"))
            back = pd.read_sql_table("from_pandas", conn)
        assert back.sort_values("a").to_dict("list") == {"a": [1, 2], "b": ["x", "y"]}
    finally:
        engine.dispose()


def test_many_readers_while_one_writes(setup):
    """50 clients read an MV while another inserts and flushes for a few seconds: no error,
    and each reader's counts never go back (every read sees a committed epoch)."""
    with connect(setup) as w:
        w.execute("create table events (k int, v int)")
        w.execute("create materialized view event_count as select count(*) as n from events")
    stop = threading.Event()
    errors: list[BaseException] = []
    seen: list[list[int]] = [[] for _ in range(50)]

    def reader(i: int) -> None:
        try:
            with connect(setup) as c:
                while not stop.is_set():
                    seen[i].append(c.execute("select n from event_count").fetchone()[0])
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    def writer() -> None:
        try:
            with connect(setup) as c:
                k = 0
                while not stop.is_set():
                    c.execute("insert into events values (%s, %s), (%s, %s)", [k, k, k + 1, k + 1])
                    c.execute("flush")
                    k += 2
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=reader, args=(i,)) for i in range(50)] + [threading.Thread(target=writer)]
    for t in threads:
        t.start()
    time.sleep(4)
    stop.set()
    for t in threads:
        t.join(timeout=60)
    assert not errors, errors[:3]
    assert all(s for s in seen), "every reader read"
    assert all(a <= b for s in seen for a, b in zip(s, s[1:]))
    assert all(n % 2 == 0 for s in seen for n in s), "a read saw half of an insert"
    assert max(max(s) for s in seen) > 0


def test_copy_from_stdin_and_to_stdout(setup):
    with connect(setup) as c:
        c.execute("create table cp (id int, name varchar, v double precision)")
        with c.cursor().copy("COPY cp (id, name, v) FROM STDIN") as cp:
            cp.write_row((1, "a\tb", 1.5))
            cp.write_row((2, None, None))
            cp.write_row((3, "back\\slash", 2))
        with c.cursor().copy("COPY cp FROM STDIN WITH (FORMAT csv, HEADER true)") as cp:
            cp.write('id,name,v\n4,"x,y",3\n5,,\n6,"",1\n')
        c.execute("flush")
        assert c.execute("select * from cp order by id").fetchall() == [
            (1, "a\tb", 1.5), (2, None, None), (3, "back\\slash", 2.0), (4, "x,y", 3.0), (5, None, None),
            (6, "", 1.0)]
        with c.cursor().copy("COPY cp TO STDOUT") as cp:
            rows = list(cp.rows())
        assert rows[0] == ("1", "a\tb", "1.5") and rows[1] == ("2", None, None) and len(rows) == 6
        with c.cursor().copy("COPY (select id, name from cp where id > 3 order by id) TO STDOUT (FORMAT csv)") as cp:
            assert b"".join(bytes(b) for b in cp) == b'4,"x,y"\n5,\n6,""\n'
        with pytest.raises(psycopg.errors.UndefinedTable):
            with c.cursor().copy("COPY nowhere FROM STDIN") as cp:
                cp.write_row((1,))
        with pytest.raises(psycopg.Error):  # a bad value: nothing of the COPY is written
            with c.cursor().copy("COPY cp (id) FROM STDIN") as cp:
                cp.write("7\nnot a number\n")
        c.execute("flush")
        assert c.execute("select count(*) from cp").fetchone() == (6,)


def test_rw_cli_as_a_client(setup):
    import os
    import sys

    from rw_server import REPO

    env = dict(os.environ, PYTHONPATH=str(REPO))
    run = subprocess.run([sys.executable, "-m", "rw_cli.cli", "--host", "127.0.0.1", "--port", str(setup),
                          "--format", "csv", "-c", "select id, name from items where id < 3 order by id"],
                         capture_output=True, text=True, timeout=60, env=env)
    assert run.returncode == 0, run.stderr
    assert run.stdout == "id,name\n1,apple\n2,pear\n"
    bad = subprocess.run([sys.executable, "-m", "rw_cli.cli", "--host", "127.0.0.1", "--port", str(setup),
                          "-c", "select 1; selec 2"], capture_output=True, text=True, timeout=60, env=env)
    assert bad.returncode == 1
    assert 'ERROR:  syntax error at or near "2"' in bad.stderr and "LINE 1: select 1; selec 2" in bad.stderr
    described = subprocess.run([sys.executable, "-m", "rw_cli.cli", "--host", "127.0.0.1", "--port", str(setup)],
                               input="\\d items\n", capture_output=True, text=True, timeout=60, env=env)
    assert described.returncode == 0, described.stderr
    assert 'Table "public.items"' in described.stdout and "Primary key: id" in described.stdout


def test_binary_and_text_formats_agree_for_every_scalar_type(setup):
    import datetime
    import decimal

    q = ("select date '2024-02-29', time '12:34:56.789', timestamp '1999-12-31 23:59:59.5', "
         "timestamptz '2024-01-02 03:04:05+00', interval '1 year 2 days 03:04:05.5', 1.50::numeric, "
         "'-12345.678'::numeric, 'NaN'::numeric, '{\"a\": [1]}'::jsonb, null::date, 7::smallint, 'é'::varchar")
    with connect(setup) as c:
        text = c.execute(q).fetchone()
        binary = c.cursor(binary=True).execute(q).fetchone()
        assert binary == text or all(a == b or (a != a and b != b) for a, b in zip(binary, text))
        assert text[5] == decimal.Decimal("1.50") and text[2] == datetime.datetime(1999, 12, 31, 23, 59, 59, 500000)
        params = [datetime.date(2024, 2, 29), datetime.datetime(2001, 2, 3, 4, 5, 6, 7),
                  datetime.datetime(2001, 2, 3, 4, 5, 6, tzinfo=datetime.timezone.utc), decimal.Decimal("-1.25"),
                  datetime.time(1, 2, 3, 4)]
        assert c.cursor(binary=True).execute("select %s, %s, %s, %s, %s", params).fetchone() == tuple(params)


def test_cancel_request_stops_a_backfill(setup):
    """psycopg's cancel() sends a CancelRequest on a new connection: the MV's backfill stops
    at its next progress point, the statement fails with 57014 and leaves no MV; the
    connection goes on."""
    with connect(setup) as c:
        c.execute("create table big (a bigint, b varchar)")
        c.execute("insert into big select i, 'x' || i from generate_series(1, 2000000) as s(i)")
        c.execute("flush")
        timer = threading.Timer(0.3, c.cancel)
        timer.start()
        try:
            c.execute("create materialized view big_mv as select a % 1000 as k, count(*) as n, max(b) as m "
                      "from big group by 1")
            canceled = False
        except psycopg.errors.QueryCanceled:
            canceled = True
        timer.join()
        views = [r[0] for r in c.execute("show materialized views").fetchall()]
        assert ("big_mv" in views) != canceled
        assert c.execute("select 1").fetchone() == (1,)


def test_cancel_request_stops_a_long_select(setup):
    """A SELECT runs inside DuckDB, where no cancellation point is: a CancelRequest
    interrupts the query itself, which fails with 57014 at once; the connection goes on."""
    with connect(setup) as c:
        c.execute("create table quad (v int)")
        c.execute("insert into quad select (random() * 1000)::int from generate_series(1, 2000)")
        c.execute("flush")
        timer = threading.Timer(1.0, c.cancel)
        timer.start()
        started = time.monotonic()
        with pytest.raises(psycopg.errors.QueryCanceled):  # runs for minutes uncancelled
            c.execute("select count(*) from quad a, quad b, quad c, quad d where a.v + b.v * c.v - d.v = -1")
        timer.join()
        assert time.monotonic() - started < 20
        assert c.execute("select count(*) from quad").fetchone() == (2000,)


def test_a_client_that_stops_reading_blocks_no_one(setup):
    """One client asks for a large result and never reads it (and another sends half a
    message): both only stall their own threads; the others' statements go on."""
    import socket
    import struct

    from rw_cli.server import protocol

    stuck = socket.create_connection(("127.0.0.1", setup))
    body = b"user\0root\0database\0dev\0\0"
    stuck.sendall(struct.pack("!ii", len(body) + 8, protocol.PROTOCOL_3) + body)
    stuck.sendall(protocol.message(b"Q", protocol.cstr("select i, repeat('x', 100) from generate_series(1, 500000) s(i)")))
    half = socket.create_connection(("127.0.0.1", setup))
    half.sendall(struct.pack("!ii", len(body) + 8, protocol.PROTOCOL_3) + body + b"Q\0\0")
    try:
        time.sleep(1)
        with connect(setup) as c:
            started = time.monotonic()
            for _ in range(5):
                assert c.execute("select count(*) from items").fetchone() == (3,)
                c.execute("insert into items values (100, 'tmp', 0, true)")
                c.execute("delete from items where id = 100")
                c.execute("flush")
            assert time.monotonic() - started < 30
    finally:
        stuck.close()
        half.close()


def test_lists_and_structs_in_binary(setup):
    q = ("select array[1, 2, null]::int[], array['a', 'b']::varchar[], array[]::int[], null::int[], "
         "array[1.5, 2]::double precision[], row(1, 'x')")
    with connect(setup) as c:
        assert c.execute(q).fetchone()[:5] == ([1, 2, None], ["a", "b"], [], None, [1.5, 2.0])
        assert c.cursor(binary=True).execute(q).fetchone() == ([1, 2, None], ["a", "b"], [], None, [1.5, 2.0],
                                                                (1, "x"))


def test_server_side_cursors_of_drivers(setup):
    """psycopg's named cursors (DECLARE ... CURSOR WITHOUT HOLD FOR, a Describe of the cursor's
    portal, FETCH FORWARD n / ALL) in autocommit and in a transaction block, and pandas
    reading in chunks through SQLAlchemy's stream_results; each connection's cursors are its
    own."""
    with connect(setup) as c, connect(setup) as other:
        with c.cursor(name="srv") as cur:
            cur.execute("select id, name from items order by id")
            assert [d.name for d in cur.description] == ["id", "name"]
            assert cur.fetchmany(2) == [(1, "apple"), (2, "pear")]
            with pytest.raises(psycopg.Error, match='cursor "srv" does not exist'):
                other.execute('fetch 1 from "srv"')
            assert cur.fetchall() == [(3, "fig")]
    with psycopg.connect(host="127.0.0.1", port=setup, user="root", dbname="dev") as c:  # BEGIN first
        with c.cursor(name="s2") as cur:
            cur.itersize = 2
            cur.execute("select id from items where id > %s order by id", (1,))
            assert list(cur) == [(2,), (3,)]
    sqlalchemy = pytest.importorskip("sqlalchemy")
    pd = pytest.importorskip("pandas")
    engine = sqlalchemy.create_engine(f"postgresql+psycopg://root@127.0.0.1:{setup}/dev")
    with engine.connect() as conn:
        chunks = list(pd.read_sql(sqlalchemy.text("select id from items order by id"),
                                  conn.execution_options(stream_results=True), chunksize=2))
    assert [len(ch) for ch in chunks] == [2, 1]


def test_binary_copy_and_binary_array_parameters(setup):
    """psycopg's binary COPY (write_row with set_types) and arrays sent as binary parameters:
    elements with quotes, backslashes, commas, empty strings and NULLs arrive as written."""
    import datetime
    import decimal

    tags = ['a"b', "c\\d", "", "NULL", "x,y", None]
    with connect(setup) as c:
        c.execute("create table bcopy (id int, ts timestamp, v numeric, tags varchar[], n int[])")
        with c.cursor() as cur, cur.copy("COPY bcopy FROM STDIN (FORMAT BINARY)") as cp:
            cp.set_types(["int4", "timestamp", "numeric", "varchar[]", "int4[]"])
            cp.write_row((1, datetime.datetime(2024, 1, 1, 1, 2, 3), decimal.Decimal("12.5"), tags, [1, None, -3]))
            cp.write_row((2, None, None, None, None))
        c.execute("flush")
        assert c.execute("select * from bcopy order by id").fetchall() == [
            (1, datetime.datetime(2024, 1, 1, 1, 2, 3), decimal.Decimal("12.5"), tags, [1, None, -3]),
            (2, None, None, None, None)]
        assert c.execute("select %b::varchar[], %b::int[]", (tags, [5, 6])).fetchone() == (tags, [5, 6])
        with pytest.raises(psycopg.Error):
            with c.cursor() as cur, cur.copy("COPY bcopy TO STDOUT (FORMAT BINARY)") as cp:
                list(cp.rows())


def test_sigterm_during_a_long_select_stops_the_server_at_once(tmp_path):
    """`rw serve` stopping (SIGTERM, Ctrl-C) interrupts the queries running in DuckDB and waits
    for them: it ran on until they ended (minutes), and a thread left inside DuckDB as the
    interpreter exits aborts the process."""
    import os
    import sys

    from servers import die_with_parent, free_ports

    port = free_ports(1)[0]
    log = open(tmp_path / "serve.log", "w")
    proc = subprocess.Popen([sys.executable, "-m", "rw_cli.cli", "--data-dir", str(tmp_path / "data"), "serve",
                             "--port", str(port)], stdout=log, stderr=subprocess.STDOUT, preexec_fn=die_with_parent,
                            env=dict(os.environ))
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                c = connect(port)
                break
            except psycopg.OperationalError:
                assert proc.poll() is None and time.monotonic() < deadline, (tmp_path / "serve.log").read_text()
                time.sleep(0.2)
        c.execute("create table quad (v int)")
        c.execute("insert into quad select (random() * 1000)::int from generate_series(1, 2000)")
        c.execute("flush")
        errors = []

        def run():
            try:
                c.execute("select count(*) from quad a, quad b, quad c, quad d where a.v + b.v * c.v - d.v = -1")
            except psycopg.Error as e:
                errors.append(e)

        query = threading.Thread(target=run)
        query.start()
        time.sleep(1.5)
        proc.terminate()
        assert proc.wait(timeout=20) == 0, (tmp_path / "serve.log").read_text()
        query.join(timeout=10)
        assert errors and isinstance(errors[0], psycopg.errors.QueryCanceled)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        log.close()
