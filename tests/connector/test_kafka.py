"""The kafka connector against a real Kafka-protocol broker (Tansu, started by the
`kafka_broker` fixture): sources in JSON and CSV with INCLUDE columns, bad messages, startup
modes, resuming at the committed offsets, and sinks whose messages a source reads back."""
import json

import pytest

import rw_cli

from .conftest import drain, drain_until
from .kafka_broker import kafka_broker, new_topic, produce  # noqa: F401 - the fixture


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
                    "count(_rw_kafka_offset) AS offs, min(_rw_kafka_timestamp) > '2000-01-01' AS ts FROM s")
    drain(session)
    want = sorted((g, sum(1 for r in rows if r["grp"] == g), sum(r["v"] for r in rows if r["grp"] == g),
                   max(r["id"] for r in rows if r["grp"] == g)) for g in ("g0", "g1", "g2", "g3"))
    assert session.execute("SELECT grp, n, sv, mx FROM m ORDER BY grp").fetchall() == want
    assert session.execute("SELECT * FROM meta").fetchall() == [(3, 3000, 3000, True)]
    jobs = {r[1]: r[3] for r in session.execute("SHOW JOBS").fetchall()}
    assert "3003 rows read" not in jobs["s"] and "3000 rows read" in jobs["s"], jobs["s"]
    assert "3 bad records skipped" in jobs["s"], jobs["s"]
    produce(kafka_broker, topic, [json.dumps({"id": 5000, "grp": "g9", "v": 1})])
    assert drain_until(session, "SELECT n FROM m WHERE grp = 'g9'", [(1,)]) == [(1,)]
