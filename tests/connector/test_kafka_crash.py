"""Kill `rw run` (SIGKILL) while it consumes Kafka, run it again until idle: the MV, the
connector table and a Kafka sink hold every message exactly as often as it was produced
(the sink: at least once, and exactly once after dropping repeated (rw_epoch, rw_seq))."""
import json
import signal
import subprocess
import sys
import time

from .kafka_broker import consume_all, dedup, kafka_broker, new_topic, produce  # noqa: F401 - the fixture

RW = [sys.executable, "-m", "rw_cli.cli"]
MESSAGES = 80_000


def _rw(data, *args, timeout=300):
    return subprocess.run(RW + ["--data-dir", data, "--no-config", *args], capture_output=True, text=True,
                          timeout=timeout)


def _count(data, sql):
    r = _rw(data, "--format", "csv", "-c", sql)
    assert r.returncode == 0, r.stderr
    return r.stdout.split()[-1]


def _first_message(bootstrap, topic, proc, timeout=120) -> bool:
    """Wait for a message in `topic` while `proc` runs; False if it ended first."""
    from confluent_kafka import Consumer, TopicPartition

    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "rw-test-watch", "fetch.wait.max.ms": 10})
    try:
        parts = c.list_topics(topic, timeout=10).topics[topic].partitions
        c.assign([TopicPartition(topic, p, 0) for p in parts])
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and proc.poll() is None:
            if any(m.error() is None for m in c.consume(10, 0.01)):
                return True
        return False
    finally:
        c.close()


def test_kill_while_consuming_then_resume(tmp_path, kafka_broker):
    topic, out = new_topic(kafka_broker, 3), new_topic(kafka_broker, 2)
    produce(kafka_broker, topic, [json.dumps({"id": i, "v": i % 1000}) for i in range(MESSAGES)])
    data = str(tmp_path / "data")
    w = f"connector = 'kafka', topic = '{topic}', properties.bootstrap.server = '{kafka_broker}'"
    r = _rw(data, "-c", f"""
        CREATE SOURCE s (id BIGINT, v BIGINT) WITH ({w}) FORMAT PLAIN ENCODE JSON;
        CREATE MATERIALIZED VIEW m AS SELECT count(*) AS n, count(DISTINCT id) AS d, sum(v) AS t FROM s;
        CREATE TABLE tb (id BIGINT, v BIGINT) WITH ({w}) FORMAT PLAIN ENCODE JSON;
        CREATE SINK k AS SELECT id, v FROM s WHERE id % 10 = 3 WITH (connector = 'kafka', topic = '{out}',
            properties.bootstrap.server = '{kafka_broker}') FORMAT PLAIN ENCODE JSON""")
    assert r.returncode == 0, r.stderr
    proc = subprocess.Popen(RW + ["--data-dir", data, "--no-config", "run", "--barrier-interval-ms", "50",
                                  "--tick-rows", "500"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:  # kill it as soon as the sink has delivered a committed epoch
        assert _first_message(kafka_broker, out, proc), "rw run ended before it could be killed"
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    committed = int(_count(data, "SELECT n FROM m"))
    assert 0 < committed < MESSAGES, committed  # killed mid-stream

    r = _rw(data, "run", "--until-idle", "--barrier-interval-ms", "200")
    assert r.returncode == 0, r.stderr
    total = sum(i % 1000 for i in range(MESSAGES))
    assert _count(data, "SELECT n, d, t FROM m") == f"{MESSAGES},{MESSAGES},{total}"
    assert _count(data, "SELECT count(*), count(DISTINCT id), sum(v) FROM tb") == f"{MESSAGES},{MESSAGES},{total}"
    sent = dedup(consume_all(kafka_broker, out))
    ids = sorted(json.loads(m.value())["id"] for m in sent)
    assert ids == [i for i in range(MESSAGES) if i % 10 == 3]
