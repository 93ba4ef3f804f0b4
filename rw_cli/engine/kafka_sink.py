"""The Kafka sink's writer: each committed epoch's changes, as JSON messages, at least once.

On a barrier the epoch's messages (key, value) are encoded and staged as one object in the
data directory's object store; once the session has committed the epoch they are produced,
flushed (every message acknowledged) and the staged object deleted. On restart, staged
epochs that committed are produced again and the others deleted (their rows are recomputed
from the resumed sources). So a committed epoch reaches Kafka at least once, never partly
lost; if the process dies between producing an epoch and deleting its staged object, that
epoch is produced again, message for message the same. Every message carries two headers,
`rw_epoch` (the epoch) and `rw_seq` (its position in the epoch), so a consumer drops a
message whose (rw_epoch, rw_seq) is not above the last it kept from the partition.

FORMAT PLAIN ENCODE JSON: the row as a JSON object (key: the `primary_key` columns, if
given). FORMAT UPSERT ENCODE JSON: key = the primary key's columns as a JSON object, value =
the new row, or null (a tombstone) when the row is deleted; an update's old row is dropped.
FORMAT DEBEZIUM ENCODE JSON: key as UPSERT's, value a Debezium change event.
"""
from __future__ import annotations

import io

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rw_cli.common.types import DataType
from rw_cli.engine.sink import SinkWriter, json_rows
from rw_cli.errors import ExecutionError

STAGING_PREFIX = "sink-staging"
_STAGED_SCHEMA = pa.schema([pa.field("key", pa.binary()), pa.field("value", pa.binary())])


class KafkaWriter(SinkWriter):
    def __init__(self, conf: dict, topic: str, fmt: str, names: list[str], types: list[DataType],
                 key_columns: list[str], staging, sink_id: int):
        self.conf = conf
        self.topic = topic
        self.format = fmt                # "plain" | "upsert"
        self.names = names
        self.types = types               # of the visible columns, in order
        self.key_columns = key_columns   # the message key's columns (none: no key)
        self.staging = staging           # an ObjectStore: where epochs wait for their commit
        self.prefix = f"{STAGING_PREFIX}/{sink_id}/"
        self.staged: dict[int, pa.Table] = {}
        self._producer = None

    @property
    def producer(self):
        if self._producer is None:
            from rw_cli.connector.kafka import kafka_module

            self._producer = kafka_module().Producer({**self.conf, "linger.ms": 5})
        return self._producer

    # -- encoding --------------------------------------------------------------------------
    def messages(self, rows: pa.Table) -> pa.Table:
        """(key, value) of each message of an epoch's rows, in order."""
        if self.format == "debezium":
            return self._change_events(rows)
        if "__op" in rows.column_names:
            ops = rows.column("__op")
            rows = rows.drop_columns(["__op"])
            keep = pc.not_equal(ops, "update_delete")  # the new row follows under the same key
            rows, ops = rows.filter(keep), ops.filter(keep)
            deleted = np.asarray(pc.equal(ops, "delete").to_numpy(zero_copy_only=False), dtype=bool)
        else:
            deleted = np.zeros(rows.num_rows, dtype=bool)
        types = {n: t for n, t in zip(self.names, self.types)}
        values = json_rows(rows, [types[n] for n in rows.column_names])
        value = pa.array([None if d else v.encode() for v, d in zip(values, deleted)], pa.binary())
        if self.key_columns:
            keys = json_rows(rows.select(self.key_columns), [types[n] for n in self.key_columns])
            key = pa.array([k.encode() for k in keys], pa.binary())
        else:
            key = pa.nulls(rows.num_rows, pa.binary())
        return pa.Table.from_arrays([key, value], schema=_STAGED_SCHEMA)

    def _change_events(self, rows: pa.Table) -> pa.Table:
        """Debezium's change events: `{"before": row, "after": row, "op": "c" | "u" | "d"}`,
        keyed by the primary key; a retraction followed by a new row of the same key is one
        update event (a key that changes is a delete and a create)."""
        types = {n: t for n, t in zip(self.names, self.types)}
        if "__op" in rows.column_names:
            ops = rows.column("__op").to_pylist()
            rows = rows.drop_columns(["__op"])
        else:
            ops = ["insert"] * rows.num_rows
        text = json_rows(rows, [types[n] for n in rows.column_names])
        keys = json_rows(rows.select(self.key_columns), [types[n] for n in self.key_columns])
        out_keys, out_values = [], []
        gone = ("delete", "update_delete")
        i = 0
        while i < len(ops):
            if ops[i] in gone and i + 1 < len(ops) and ops[i + 1] not in gone and keys[i] == keys[i + 1]:
                # a row retracted and its key's new row: an update
                before, after, op, key, i = text[i], text[i + 1], "u", keys[i], i + 2
            elif ops[i] in gone:
                before, after, op, key, i = text[i], "null", "d", keys[i], i + 1
            else:
                before, after, op, key, i = "null", text[i], "c", keys[i], i + 1
            out_keys.append(key.encode())
            out_values.append(f'{{"before":{before},"after":{after},"op":"{op}"}}'.encode())
        return pa.Table.from_arrays([pa.array(out_keys, pa.binary()), pa.array(out_values, pa.binary())],
                                    schema=_STAGED_SCHEMA)

    # -- the epoch's life ------------------------------------------------------------------
    def _path(self, epoch: int) -> str:
        return f"{self.prefix}{epoch:020d}.arrow"

    def stage(self, epoch: int, rows: pa.Table) -> None:
        msgs = self.messages(rows)
        if self.staging is not None:
            buf = io.BytesIO()
            with pa.ipc.new_stream(buf, _STAGED_SCHEMA) as w:
                w.write_table(msgs)
            self.staging.put(self._path(epoch), buf.getvalue())
        self.staged[epoch] = msgs

    def commit(self, epoch: int) -> bool:
        done = False
        for e in sorted(k for k in self.staged if k <= epoch):
            self._produce(e, self.staged[e])
            del self.staged[e]
            if self.staging is not None:
                self.staging.delete(self._path(e))
            done = True
        return done

    def recover(self, committed_epoch: int) -> None:
        if self.staging is None:
            return
        for path in self.staging.list(self.prefix):
            stem = path.rsplit("/", 1)[-1].split(".")[0]
            if not stem.isdigit() or int(stem) > committed_epoch:
                self.staging.delete(path)  # never committed: recomputed from the resumed sources
                continue
            with pa.ipc.open_stream(self.staging.get(path)) as r:
                msgs = r.read_all()
            self._produce(int(stem), msgs)  # committed, perhaps not (wholly) delivered
            self.staging.delete(path)

    def close(self) -> None:
        if self._producer is not None:
            self._producer.flush(10)  # what was produced before, acknowledged
            self._producer = None

    def _produce(self, epoch: int, msgs: pa.Table) -> None:
        """Send the epoch's messages and wait until the broker has acknowledged every one."""
        errors: list = []

        def report(err, _msg):
            if err is not None:
                errors.append(err)

        producer = self.producer
        epoch_header = str(epoch).encode()
        keys, values = msgs.column("key").to_pylist(), msgs.column("value").to_pylist()
        for seq, (k, v) in enumerate(zip(keys, values)):
            headers = [("rw_epoch", epoch_header), ("rw_seq", str(seq).encode())]
            while True:
                try:
                    producer.produce(self.topic, value=v, key=k, headers=headers, on_delivery=report)
                    break
                except BufferError:  # the local queue is full: let deliveries drain it
                    producer.poll(0.05)
        left = producer.flush(60)
        if left or errors:
            raise ExecutionError(f"kafka sink: {left + len(errors)} messages of epoch {epoch} not delivered to "
                                 f"topic {self.topic}" + (f": {errors[0]}" if errors else ""),
                                 hint="the epoch is sent again (with the same rw_epoch headers) on the next commit")
