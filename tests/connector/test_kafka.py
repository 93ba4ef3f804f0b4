"""The kafka connector against a real Kafka-protocol broker (Tansu, started by the
`kafka_broker` fixture): sources in JSON and CSV with INCLUDE columns, bad messages, startup
modes, resuming at the committed offsets, and sinks whose messages a source reads back."""
import json

import pytest

import rw_cli
from rw_cli.errors import BindError

from .conftest import drain, drain_until
from .kafka_broker import dedup, kafka_broker, new_topic, produce, restartable_broker  # noqa: F401 - the fixtures


def _with(bootstrap, topic, extra=""):
    return (f"WITH (connector = 'kafka', topic = '{topic}', properties.bootstrap.server = '{bootstrap}'"
            f"{extra})")


def test_json_source_aggregate_include_and_bad_messages(session, kafka_broker):
    topic = new_topic(kafka_broker, 3)
    rows = [{"id": i, "grp": f"g{i % 4}", "v": i * 1.5} for i in range(3000)]
    produce(kafka_broker, topic, [json.dumps(r) for r in rows], keys=[str(r["id"]) for r in rows])
    produce(kafka_broker, topic, ["{oops", '{"id": "x", "grp": "g0", "v": 1}', None], partition=1)
    session.execute(f"CREATE SOURCE s (id INT, grp VARCHAR, v DOUBLE) INCLUDE partition AS p INCLUDE offset "
                    f"INCLUDE key AS k INCLUDE timestamp {_with(kafka_broker, topic)} FORMAT PLAIN ENCODE JSON")
    session.execute("CREATE MATERIALIZED VIEW m AS SELECT grp, count(*) AS n, sum(v) AS sv, max(id) AS mx "
                    "FROM s GROUP BY grp")
    session.execute("CREATE MATERIALIZED VIEW meta AS SELECT count(DISTINCT p) AS parts, "
                    "count(*) FILTER (WHERE k = convert_to(id::varchar, 'UTF8')) AS keyed, "
                    "count(DISTINCT p || ':' || _rw_kafka_offset) AS offs, "
                    "min(_rw_kafka_timestamp) > '2000-01-01' AS ts, "
                    "max(_rw_kafka_timestamp) < '2100-01-01' AS ts2, "
                    "sum(_rw_kafka_offset::bigint) FILTER (WHERE p = '1') AS p1, "
                    "count(*) FILTER (WHERE p = '1') AS n1 FROM s")
    drain(session)
    want = sorted((g, sum(1 for r in rows if r["grp"] == g), sum(r["v"] for r in rows if r["grp"] == g),
                   max(r["id"] for r in rows if r["grp"] == g)) for g in ("g0", "g1", "g2", "g3"))
    assert session.execute("SELECT grp, n, sv, mx FROM m ORDER BY grp").fetchall() == want
    got = session.execute("SELECT parts, keyed, offs, ts, ts2 FROM meta").fetchall()
    assert got == [(3, 3000, 3000, True, True)]
    # partition 1's good messages hold offsets 0 .. n1-1 (its bad ones come after them)
    (p1, n1), = session.execute("SELECT p1, n1 FROM meta").fetchall()
    assert n1 > 0 and p1 == n1 * (n1 - 1) // 2, (p1, n1)
    jobs = {r[1]: r[3] for r in session.execute("SHOW JOBS").fetchall()}
    assert "3003 rows read" not in jobs["s"] and "3000 rows read" in jobs["s"], jobs["s"]
    assert "3 bad records skipped" in jobs["s"], jobs["s"]
    assert jobs["s"].endswith("backlog 0, lag p0:0 p1:0 p2:0"), jobs["s"]
    assert "lag p0:0 p1:0 p2:0" in _shell_jobs(session)
    produce(kafka_broker, topic, [json.dumps({"id": 5000 + i, "grp": "g9", "v": 1}) for i in range(2000)], partition=1)
    lagging = _lag_seen(session, "s", "1")  # read one message per partition per tick: a lag shows
    assert lagging is not None and 0 < lagging <= 2000, lagging
    assert drain_until(session, "SELECT n FROM m WHERE grp = 'g9'", [(2000,)]) == [(2000,)]


def _shell_jobs(session) -> str:
    """What the shell's \\jobs prints."""
    import io

    from rw_cli.config import Config
    from rw_cli.shell.repl import Shell

    out = io.StringIO()
    Shell(session, Config(pager=""), out, io.StringIO()).handle("\\jobs")
    return out.getvalue()


def _lag_seen(session, source, partition, seconds=20.0):
    """Tick one row at a time until SHOW JOBS shows a lag on `partition`; that lag (None: never)."""
    import re
    import time

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        session.tick(1)
        session.barrier()
        jobs = {r[1]: r[3] for r in session.execute("SHOW JOBS").fetchall()}
        m = re.search(rf"\bp{partition}:([\d,]+)", jobs[source])
        if m and int(m.group(1).replace(",", "")) > 0:
            return int(m.group(1).replace(",", ""))
    return None


def test_csv_table_and_latest_start(session, kafka_broker):
    topic = new_topic(kafka_broker, 2)
    produce(kafka_broker, topic, ["1,a,1.5", "2,b", "3,\"c, c\",3", "4,d,x"])
    session.execute(f"CREATE TABLE c (id INT, name VARCHAR, score DOUBLE) {_with(kafka_broker, topic)} "
                    "FORMAT PLAIN ENCODE CSV")
    latest = _with(kafka_broker, topic, ", scan.startup.mode = 'latest'")
    session.execute(f"CREATE TABLE late (id INT, name VARCHAR, score DOUBLE) {latest} FORMAT PLAIN ENCODE CSV")
    drain(session)
    assert session.execute("SELECT * FROM c ORDER BY id").fetchall() == [(1, "a", 1.5), (3, "c, c", 3.0)]
    assert session.execute("SELECT count(*) FROM late").fetchall() == [(0,)]
    produce(kafka_broker, topic, ["5,e,5"])
    assert drain_until(session, "SELECT * FROM late", [(5, "e", 5.0)]) == [(5, "e", 5.0)]
    assert drain_until(session, "SELECT count(*) FROM c", [(3,)]) == [(3,)]


def test_bad_options_fail_the_create(session, kafka_broker):
    from rw_cli.errors import BindError, NotSupported

    with pytest.raises(BindError, match="does not exist"):
        session.execute(f"CREATE SOURCE x (a INT) {_with(kafka_broker, 'no_such_topic')} FORMAT PLAIN ENCODE JSON")
    topic = new_topic(kafka_broker)
    with pytest.raises(BindError, match="scan.startup.mode"):
        middle = _with(kafka_broker, topic, ", scan.startup.mode = 'middle'")
        session.execute(f"CREATE SOURCE x (a INT) {middle} FORMAT PLAIN ENCODE JSON")
    with pytest.raises(BindError, match="bootstrap"):
        session.execute(f"CREATE SOURCE x (a INT) WITH (connector = 'kafka', topic = '{topic}') FORMAT PLAIN ENCODE JSON")
    with pytest.raises(NotSupported):
        session.execute(f"CREATE SOURCE x (a INT) {_with(kafka_broker, topic)} FORMAT PLAIN ENCODE PARQUET")
    with pytest.raises(NotSupported, match="INCLUDE"):
        session.execute("CREATE SOURCE x (a INT) INCLUDE key WITH (connector = 'datagen')")
    assert session.execute("SHOW SOURCES").fetchall() == []


def test_restart_resumes_after_the_committed_offsets(tmp_path, kafka_broker):
    topic = new_topic(kafka_broker, 3)
    data = str(tmp_path / "data")
    produce(kafka_broker, topic, [json.dumps({"id": i}) for i in range(1000)])
    s = rw_cli.connect(data)
    s.execute(f"CREATE SOURCE src (id INT) INCLUDE partition AS p INCLUDE offset AS o {_with(kafka_broker, topic)} "
              "FORMAT PLAIN ENCODE JSON")
    s.execute("CREATE MATERIALIZED VIEW m AS SELECT count(*) AS n, count(DISTINCT id) AS d, sum(id) AS t FROM src")
    s.execute(f"CREATE TABLE tb (id INT) {_with(kafka_broker, topic)} FORMAT PLAIN ENCODE JSON")
    drain(s)
    assert s.execute("SELECT n, d FROM m").fetchall() == [(1000, 1000)]
    s.close()
    produce(kafka_broker, topic, [json.dumps({"id": i}) for i in range(1000, 1500)])
    s = rw_cli.connect(data)
    try:
        want = [(1500, 1500, sum(range(1500)))]
        assert drain_until(s, "SELECT n, d, t FROM m", want) == want
        assert drain_until(s, "SELECT count(*), count(DISTINCT id) FROM tb", [(1500, 1500)]) == [(1500, 1500)]
        jobs = {r[1]: r[3] for r in s.execute("SHOW JOBS").fetchall()}
        assert "1500 rows read" in jobs["src"], jobs["src"]
    finally:
        s.close()


def test_partitions_added_later_are_read_from_their_start(tmp_path, restartable_broker):
    """A topic grows from 2 to 4 partitions while a 'latest' source reads it: the new
    partitions are found (the metadata is re-read), read from their first message (not from
    their end, which would lose what was produced before the source saw them), their offsets
    commit with the epochs, and a restart goes on from those offsets."""
    broker = restartable_broker
    b = broker.bootstrap
    topic = new_topic(b, 2)

    def send(ids, partition):
        produce(b, topic, [json.dumps({"id": i}) for i in ids], partition=partition)

    send(range(0, 100), 0)  # before the source: 'latest' skips these
    data = str(tmp_path / "data")
    s = rw_cli.connect(data)
    query = "SELECT p, n, t FROM m ORDER BY p"
    try:
        latest = _with(b, topic, ", scan.startup.mode = 'latest'")
        s.execute(f"CREATE TABLE t (id INT) INCLUDE partition AS p {latest} FORMAT PLAIN ENCODE JSON")
        s.execute("CREATE MATERIALIZED VIEW m AS SELECT p, count(*) AS n, sum(id) AS t FROM t GROUP BY p")
        drain(s)
        send(range(100, 200), 0)
        send(range(200, 300), 1)
        want = [("0", 100, sum(range(100, 200))), ("1", 100, sum(range(200, 300)))]
        assert drain_until(s, query, want) == want
        broker.add_partitions(topic, 4)
        send(range(300, 400), 2)  # produced before the source's metadata shows partition 2
        send(range(400, 450), 3)
        send(range(450, 460), 0)
        want = [("0", 110, sum(range(100, 200)) + sum(range(450, 460))), ("1", 100, sum(range(200, 300))),
                ("2", 100, sum(range(300, 400))), ("3", 50, sum(range(400, 450)))]
        assert drain_until(s, query, want) == want
        jobs = {r[1]: r[3] for r in s.execute("SHOW JOBS").fetchall()}
        assert "lag p0:0 p1:0 p2:0 p3:0" in jobs["t"], jobs["t"]
    finally:
        s.close()
    send(range(460, 470), 3)  # while rw is down
    s = rw_cli.connect(data)
    try:
        want[3] = ("3", 60, sum(range(400, 450)) + sum(range(460, 470)))
        assert drain_until(s, query, want) == want  # nothing of p2/p3 read again, nothing lost
        assert s.execute("SELECT count(*), count(DISTINCT id) FROM t").fetchall() == [(370, 370)]
    finally:
        s.close()


def _messages(bootstrap, topic):
    from .kafka_broker import consume_all

    return consume_all(bootstrap, topic)


def test_sink_round_trip_plain_and_upsert(session, kafka_broker):
    session.execute("CREATE TABLE t (k INT PRIMARY KEY, v VARCHAR, x DOUBLE)")
    session.execute("CREATE TABLE a (k INT, v VARCHAR, x DOUBLE) APPEND ONLY")
    session.execute("INSERT INTO t SELECT g, 'v' || g, g / 4.0 FROM generate_series(1, 500) g; FLUSH")
    session.execute("INSERT INTO a SELECT * FROM t; FLUSH")
    session.execute("CREATE MATERIALIZED VIEW m AS SELECT k % 7 AS g, count(*) AS n, sum(x) AS sx FROM t GROUP BY k % 7")
    plain, upsert = new_topic(kafka_broker, 2), new_topic(kafka_broker, 3)
    session.execute(f"CREATE SINK p FROM a {_with(kafka_broker, plain)} FORMAT PLAIN ENCODE JSON")
    keyed = _with(kafka_broker, upsert, ", primary_key = 'g'")
    session.execute(f"CREATE SINK u FROM m {keyed} FORMAT UPSERT ENCODE JSON")
    session.execute("UPDATE t SET x = x + 1 WHERE k <= 100; DELETE FROM t WHERE k % 7 = 3; FLUSH")
    msgs = _messages(kafka_broker, plain)
    assert len(msgs) == 500 and all(m.key() is None for m in msgs)
    assert all(dict(m.headers())["rw_epoch"].isdigit() for m in msgs)
    assert sorted(json.loads(m.value())["k"] for m in msgs) == list(range(1, 501))
    # read back: the plain topic through a source, the upsert topic folded by key
    session.execute(f"CREATE TABLE back (k INT, v VARCHAR, x DOUBLE) {_with(kafka_broker, plain)} "
                    "FORMAT PLAIN ENCODE JSON")
    want = session.execute("SELECT count(*), sum(k), sum(x), count(DISTINCT v) FROM a").fetchall()
    assert drain_until(session, "SELECT count(*), sum(k), sum(x), count(DISTINCT v) FROM back", want) == want
    assert session.execute("SELECT count(*) FROM (SELECT * FROM a EXCEPT SELECT * FROM back) d").fetchall() == [(0,)]
    latest = {}
    for m in _messages(kafka_broker, upsert):
        latest[json.loads(m.key())["g"]] = None if m.value() is None else json.loads(m.value())
    now = {r[0]: (r[1], r[2]) for r in session.execute("SELECT g, n, sx FROM m").fetchall()}
    assert {g: (r["n"], r["sx"]) for g, r in latest.items() if r is not None} == now
    assert latest[3] is None  # the group emptied by the DELETE is a tombstone
    with pytest.raises(BindError, match="force_append_only"):
        session.execute(f"CREATE SINK bad FROM t {_with(kafka_broker, plain)} FORMAT PLAIN ENCODE JSON")
    with pytest.raises(BindError, match="primary_key"):
        session.execute(f"CREATE SINK bad AS SELECT v FROM t {_with(kafka_broker, upsert)} FORMAT UPSERT ENCODE JSON")
    with pytest.raises(BindError, match="does not exist"):
        session.execute(f"CREATE SINK bad FROM a {_with(kafka_broker, 'nope')} FORMAT PLAIN ENCODE JSON")
    with pytest.raises(BindError, match="not a column"):
        unknown = _with(kafka_broker, upsert, ", primary_key = 'zz'")
        session.execute(f"CREATE SINK bad FROM m {unknown} FORMAT UPSERT ENCODE JSON")
    forced = new_topic(kafka_broker, 1)  # retractions dropped, an update's new row kept
    force = _with(kafka_broker, forced, ", force_append_only = 'true'")
    session.execute(f"CREATE SINK f FROM t {force} FORMAT PLAIN ENCODE JSON")
    session.execute("UPDATE t SET v = 'new' WHERE k = 1; DELETE FROM t WHERE k = 2; FLUSH")
    rows = [json.loads(m.value()) for m in _messages(kafka_broker, forced)]
    assert len(rows) == session.execute("SELECT count(*) FROM t").fetchall()[0][0] + 2  # + k=1 anew, k=2 kept
    assert [r["v"] for r in rows if r["k"] == 1] == ["v1", "new"]


def _dies_mid_flush(data, crash):
    """Read some epochs, then die at `crash`: before the epoch commits, after it commits but
    before its messages are produced, or after they are produced but before the staged copy
    is deleted (the process dies: nothing else is flushed)."""
    from rw_cli.engine.kafka_sink import STAGING_PREFIX, KafkaWriter

    s = rw_cli.connect(data)
    s.tick(100)
    s.flush()
    s.tick(100)
    orig = KafkaWriter.commit

    def produce_then_die(self, epoch):
        for e in sorted(k for k in self.staged if k <= epoch):
            self._produce(e, self.staged[e])
        raise RuntimeError("crash")

    def die(*_args, **_kwargs):
        raise RuntimeError("crash")

    if crash == "before_commit":
        s.store.commit_epoch = die
    else:
        KafkaWriter.commit = die if crash == "before_produce" else produce_then_die
    try:
        with pytest.raises(RuntimeError):
            s.flush()
    finally:
        KafkaWriter.commit = orig
    assert len(s.store.object_store.list(STAGING_PREFIX + "/")) == 1
    s.store.close()
    s.lock.release()
    s.closed = True


@pytest.mark.parametrize("crash", ["before_commit", "before_produce", "after_produce"])
def test_sink_at_least_once_across_crashes(tmp_path, kafka_broker, crash):
    from rw_cli.engine.kafka_sink import STAGING_PREFIX

    out = new_topic(kafka_broker, 2)
    data = str(tmp_path / "data")
    with rw_cli.connect(data) as s:
        s.execute("CREATE SOURCE g (v BIGINT) WITH (connector = 'datagen', fields.v.kind = 'sequence', "
                  "fields.v.start = '1', fields.v.end = '1000', datagen.rows.per.second = '100000000')")
        s.execute(f"CREATE SINK k AS SELECT v FROM g {_with(kafka_broker, out)} FORMAT PLAIN ENCODE JSON")
    _dies_mid_flush(data, crash)
    with rw_cli.connect(data) as s:
        s.runtime  # jobs are rebuilt on first use; the sink recovers its staged epochs then
        assert s.store.object_store.list(STAGING_PREFIX + "/") == []
        drain(s, 150)
    msgs = _messages(kafka_broker, out)
    values = sorted(json.loads(m.value())["v"] for m in dedup(msgs))
    assert values == list(range(1, 1001))  # every row, once after deduplication
    assert (len(msgs) > 1000) == (crash == "after_produce")  # the one case sent twice


def test_upsert_table_updates_and_deletes_by_key(session, kafka_broker):
    topic = new_topic(kafka_broker, 2)
    session.execute(f"CREATE TABLE u (id INT, name VARCHAR, n BIGINT, PRIMARY KEY (id)) {_with(kafka_broker, topic)} "
                    "FORMAT UPSERT ENCODE JSON")
    session.execute("CREATE MATERIALIZED VIEW tot AS SELECT count(*) AS c, sum(n) AS s FROM u")
    msgs = [(1, {"id": 1, "name": "a", "n": 10}), (2, {"id": 2, "name": "b", "n": 20}),
            (3, {"id": 3, "name": "c", "n": 30}), (1, {"id": 1, "name": "a2", "n": 11}),
            (2, None), (4, {"id": 4, "name": "d", "n": 40}), (4, None), (4, {"id": 4, "name": "d2", "n": 41}),
            (9, None)]  # a delete of a key never seen: nothing happens
    keys = [json.dumps({"id": k}) for k, _ in msgs]
    produce(kafka_broker, topic, [None if v is None else json.dumps(v) for _, v in msgs], keys=keys, partition=0)
    produce(kafka_broker, topic, [None, "{bad"], keys=["not json", "{}"], partition=1)
    want = [(1, "a2", 11), (3, "c", 30), (4, "d2", 41)]
    assert drain_until(session, "SELECT * FROM u ORDER BY id", want) == want
    assert session.execute("SELECT * FROM tot").fetchall() == [(3, 82)]  # the MV saw the retractions
    produce(kafka_broker, topic, [None], keys=[json.dumps({"id": 3})], partition=1)
    assert drain_until(session, "SELECT * FROM tot", [(2, 52)]) == [(2, 52)]
    jobs = {r[1]: r[3] for r in session.execute("SHOW JOBS").fetchall()}
    assert "2 bad records skipped" in jobs["u"], jobs["u"]
    with pytest.raises(BindError, match="PRIMARY KEY"):
        session.execute(f"CREATE SOURCE x (id INT) {_with(kafka_broker, topic)} FORMAT UPSERT ENCODE JSON")
    with pytest.raises(BindError, match="PRIMARY KEY"):
        session.execute(f"CREATE TABLE x (id INT) {_with(kafka_broker, topic)} FORMAT UPSERT ENCODE JSON")
    assert session.catalog.get("x") is None


def test_startup_timestamp(session, kafka_broker):
    """scan.startup.timestamp.millis: each partition from its first message at or after it.
    (Partitions added later are not tested: Tansu has no CreatePartitions.)"""
    import time

    topic = new_topic(kafka_broker, 1)
    produce(kafka_broker, topic, [json.dumps({"id": i}) for i in range(3)])
    time.sleep(0.05)
    since = int(time.time() * 1000)
    time.sleep(0.05)
    produce(kafka_broker, topic, [json.dumps({"id": i}) for i in range(3, 6)])
    session.execute(f"CREATE TABLE t (id INT) {_with(kafka_broker, topic, f', scan.startup.timestamp.millis = {since}')} "
                    "FORMAT PLAIN ENCODE JSON")
    want = [(3, 3, 5)]
    assert drain_until(session, "SELECT count(*), min(id), max(id) FROM t", want) == want


def test_debezium_table_follows_another_database(session, kafka_broker):
    topic = new_topic(kafka_broker, 1)
    session.execute(f"CREATE TABLE d (id INT PRIMARY KEY, name VARCHAR, at TIMESTAMP) {_with(kafka_broker, topic)} "
                    "FORMAT DEBEZIUM ENCODE JSON")
    session.execute("CREATE MATERIALIZED VIEW dn AS SELECT count(*) AS c, string_agg(name, ',' ORDER BY id) AS names FROM d")

    def row(i, name):
        return {"id": i, "name": name, "at": f"2024-01-0{i} 10:00:00"}

    events = [{"before": None, "after": row(1, "a"), "op": "r"},
              {"schema": {"type": "struct"}, "payload": {"before": None, "after": row(2, "b"), "op": "c"}},
              {"before": None, "after": row(3, "c"), "op": "c"},
              {"before": row(1, "a"), "after": row(1, "a2"), "op": "u"},
              {"before": row(2, "b"), "after": row(5, "b"), "op": "u"},   # the key changed
              {"before": row(3, "c"), "after": None, "op": "d"}, None,     # a delete and its tombstone
              {"before": None, "after": row(4, "x"), "op": "q"}, "[1]"]    # bad events
    produce(kafka_broker, topic, [e if e is None or isinstance(e, str) else json.dumps(e) for e in events])
    want = [(1, "a2"), (5, "b")]
    assert drain_until(session, "SELECT id, name FROM d ORDER BY id", want) == want
    assert session.execute("SELECT at FROM d WHERE id = 5").fetchall()[0][0].hour == 10
    assert session.execute("SELECT * FROM dn").fetchall() == [(2, "a2,b")]
    jobs = {r[1]: r[3] for r in session.execute("SHOW JOBS").fetchall()}
    assert "2 bad records skipped" in jobs["d"], jobs["d"]
    more = [{"before": row(5, "b"), "after": row(5, "bb"), "op": "u"}, {"before": None, "after": row(6, "f"), "op": "c"}]
    produce(kafka_broker, topic, [json.dumps(e) for e in more])  # a batch of good events, read at once
    assert drain_until(session, "SELECT * FROM dn", [(3, "a2,bb,f")]) == [(3, "a2,bb,f")]


def test_debezium_sink_round_trip(session, kafka_broker):
    topic = new_topic(kafka_broker, 2)
    session.execute("CREATE TABLE t (k INT PRIMARY KEY, v VARCHAR, n BIGINT)")
    session.execute("INSERT INTO t SELECT g, 'v' || g, g FROM generate_series(1, 200) g; FLUSH")
    session.execute("CREATE MATERIALIZED VIEW m AS SELECT k, v, n * 2 AS n2 FROM t WHERE k % 3 <> 0")
    session.execute(f"CREATE SINK s FROM m {_with(kafka_broker, topic)} FORMAT DEBEZIUM ENCODE JSON")
    session.execute(f"CREATE TABLE copy (k INT PRIMARY KEY, v VARCHAR, n2 BIGINT) {_with(kafka_broker, topic)} "
                    "FORMAT DEBEZIUM ENCODE JSON")
    session.execute("UPDATE t SET v = v || '!' WHERE k <= 50; DELETE FROM t WHERE k > 150; FLUSH")
    # a key that moves (by DELETE + INSERT: an UPDATE of a key column is refused)
    session.execute("DELETE FROM t WHERE k = 1; INSERT INTO t VALUES (1001, 'v1!', 1); FLUSH")
    want = session.execute("SELECT k, v, n2 FROM m ORDER BY k").fetchall()
    assert len(want) == 100
    assert drain_until(session, "SELECT k, v, n2 FROM copy ORDER BY k", want) == want
    ops = [json.loads(m.value())["op"] for m in _messages(kafka_broker, topic)]
    assert set(ops) == {"c", "u", "d"}
