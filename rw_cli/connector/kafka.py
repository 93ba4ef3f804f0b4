"""The `kafka` source connector (RisingWave's options), over confluent-kafka (librdkafka).

Each partition of `topic` is a split; a split's offset is the Kafka offset of the next
message to read, committed with the epoch like every source's offsets, so a restart resumes
exactly after the last committed epoch. Partitions are read by assignment with explicit
offsets, never through a consumer group (nothing is committed to the broker). Partitions
added later are picked up: the topic's metadata is re-read every few seconds, a new partition
starts at its first message, and its offset commits with the next epoch like the others'.

Options: `topic`, `properties.bootstrap.server`, `scan.startup.mode` = 'earliest' (default)
| 'latest', `scan.startup.timestamp.millis` (the first message at or after that time),
`properties.*` passed to librdkafka (`properties.security.protocol`, ...).
FORMAT PLAIN ENCODE JSON | CSV (a message is one record). A message that does not decode is
skipped, reported and counted. INCLUDE key | partition | offset | timestamp [AS name] adds the
message's key (bytea), partition and offset (varchar) and timestamp (timestamptz).

The high watermark of a partition (its end, for lag and idleness) is the one each fetch
response reports: brokers agree on it, while ListOffsets answers vary (Tansu's counts batches).
"""
from __future__ import annotations

import time

import numpy as np
import pyarrow as pa

from rw_cli.common import numeric
from rw_cli.common.types import DataType
from rw_cli.connector.base import SourceReader, option_int
from rw_cli.errors import BindError, NotSupported

ENCODES = ("json", "csv")
# INCLUDE <kind>: RisingWave's default column name and type of each
INCLUDE_COLUMNS = {"key": ("_rw_kafka_key", "bytea"), "partition": ("_rw_kafka_partition", "character varying"),
                   "offset": ("_rw_kafka_offset", "character varying"),
                   "timestamp": ("_rw_kafka_timestamp", "timestamp with time zone")}
_METADATA_TTL = 5.0      # seconds between re-reads of the topic's partitions
_BUFFER_LIMIT = 100_000  # messages buffered per partition before its fetching pauses
_FETCH_WAIT_MS = 100     # how long the broker holds a fetch with nothing new (fetch.wait.max.ms)
_SETTLE = 3 * _FETCH_WAIT_MS / 1000  # a partition is idle once at its end for this long
_RANGE_WAIT_S = 60.0     # how long an assigned range's messages may take to arrive
_QUEUE_BACKOFF_MS = 5    # fetch.queue.backoff.ms: see _prefetch_defaults


def client_config(options: dict[str, str]) -> dict:
    """librdkafka settings from the WITH options: the bootstrap servers and `properties.*`."""
    bootstrap = options.get("properties.bootstrap.server") or options.get("properties.bootstrap.servers")
    if not bootstrap:
        raise BindError("the kafka connector needs properties.bootstrap.server")
    if not options.get("topic"):
        raise BindError("the kafka connector needs topic")
    conf = {"bootstrap.servers": bootstrap}
    for k, v in options.items():
        if k.startswith("properties.") and k not in ("properties.bootstrap.server", "properties.bootstrap.servers"):
            conf[k[len("properties."):]] = v
    return conf


def kafka_module():
    """confluent_kafka, imported only when a Kafka connector is used (a clear error if absent)."""
    try:
        import confluent_kafka
        import confluent_kafka.admin  # noqa: F401 - a submodule: not loaded by the package
    except ImportError:
        raise NotSupported("the kafka connector without confluent-kafka",
                           hint="pip install confluent-kafka") from None
    return confluent_kafka


def check_topic(conf: dict, topic: str, timeout: float = 10.0) -> int:
    """The topic's partition count; a clear error if the broker or the topic is not there."""
    from rw_cli.errors import ExecutionError

    admin = kafka_module().admin.AdminClient(dict(conf))
    try:
        meta = admin.list_topics(timeout=timeout)  # every topic: asking for one may create it
    except Exception as e:  # noqa: BLE001 - librdkafka's KafkaException: say what failed
        raise ExecutionError(f"cannot reach the Kafka broker at {conf['bootstrap.servers']}: {e}") from None
    t = meta.topics.get(topic)
    if t is None or t.error is not None or not t.partitions:
        raise BindError(f'kafka topic "{topic}" does not exist at {conf["bootstrap.servers"]}')
    return len(t.partitions)


def _prefetch_defaults(ck) -> dict:
    """librdkafka settings for reading a partition as fast as the pipeline takes it (a user's
    `properties.*` override them). Since librdkafka 2.4 a partition whose local queue has
    reached `queued.min.messages` is not fetched again for `fetch.queue.backoff.ms` (1 s by
    default): a pipeline that takes an epoch's batch every few milliseconds empties the queue
    long before that, and then reads nothing for most of the second (Nexmark q0 over
    1,000,000 events took 2.5 times as long). A few milliseconds keeps the queue filled at a
    cost of a wake-up per backoff while it is full."""
    return {"fetch.queue.backoff.ms": _QUEUE_BACKOFF_MS} if ck.libversion()[1] >= 0x02040000 else {}


class KafkaReader(SourceReader):
    bounded = False
    discovers_splits = True  # partitions may be added; idle means every partition read to its end
    lag_per_split = True     # SHOW JOBS shows each partition's lag

    def __init__(self, options: dict[str, str], columns: list[tuple[str, DataType]], encode: str | None,
                 encode_options: dict[str, str], include: list[tuple[str, str]] | None = None,
                 fmt: str | None = None, key_columns: list[str] | None = None):
        self.columns = columns
        self.format = (fmt or "plain").lower()
        if self.format not in ("plain", "upsert", "debezium"):
            raise NotSupported(f"FORMAT {self.format.upper()} in a kafka source",
                               hint="use FORMAT PLAIN | UPSERT | DEBEZIUM")
        self.key_columns = list(key_columns or [])
        if self.format != "plain" and ((encode or "json").lower() != "json" or not self.key_columns):
            raise BindError(f"FORMAT {self.format.upper()} ENCODE JSON needs CREATE TABLE with a PRIMARY KEY",
                            hint="its messages update and delete rows by their primary key")
        self.conf = client_config(options)
        self.topic = options["topic"]
        self.encode = (encode or "json").lower()
        if self.encode not in ENCODES:
            raise NotSupported(f"ENCODE {self.encode.upper()} in a kafka source", hint="use JSON or CSV")
        self.delimiter = encode_options.get("delimiter", ",")
        self.mode = options.get("scan.startup.mode", "earliest").lower()
        if self.mode not in ("earliest", "latest"):
            raise BindError(f"invalid value for scan.startup.mode: '{self.mode}'", hint="use 'earliest' or 'latest'")
        ts = options.get("scan.startup.timestamp.millis")
        self.start_millis = None if ts is None else option_int(options, "scan.startup.timestamp.millis", 0)
        self.include = {name: kind for kind, name in (include or [])}  # column name -> kind
        self.payload = [(n, t) for n, t in columns if n not in self.include]
        self._consumer = None
        self._assigned: set[int] = set()
        self._paused: set[int] = set()
        self._next: dict[int, int] = {}      # partition -> offset of the next message its buffer takes
        self._position: dict[int, int] = {}  # partition -> the offset its next read starts at
        self._buffers: dict[int, list] = {}  # partition -> messages fetched, not yet read
        self._partitions: list[str] = []
        self._at_end: dict[int, tuple[float, float]] = {}  # partition -> (at its end since, last seen so)
        self._listed = 0.0
        self._probed: dict[int, tuple[int, float]] = {}  # partition -> (its end as a fetch told, when)

    def __getstate__(self) -> dict:
        """Shipped (to Spark tasks) without its client: the copy connects on its first read."""
        state = dict(self.__dict__)
        state.update(_consumer=None, _assigned=set(), _paused=set(), _next={}, _position={}, _buffers={},
                     _at_end={}, _listed=0.0, _probed={})
        return state

    def close(self) -> None:
        if self._consumer is not None:
            self._consumer.close()
            self._consumer = None
            self._assigned.clear()
            self._paused.clear()
            self._buffers.clear()
            self._next.clear()
            self._position.clear()

    def check(self) -> None:
        """CREATE's check that the broker answers and the topic exists."""
        check_topic(self.conf, self.topic)

    # -- the consumer ----------------------------------------------------------------------
    @property
    def consumer(self):
        if self._consumer is None:
            ck = kafka_module()
            self._consumer = ck.Consumer({**_prefetch_defaults(ck), **self.conf, "group.id": f"rw-{self.topic}",
                                          "enable.auto.commit": False, "enable.auto.offset.store": False,
                                          "fetch.wait.max.ms": _FETCH_WAIT_MS, "enable.partition.eof": False})
        return self._consumer

    def _tp(self, partition: int, offset: int | None = None):
        ck = kafka_module()
        return ck.TopicPartition(self.topic, partition) if offset is None else ck.TopicPartition(self.topic, partition, offset)

    def _seek(self, partition: int, offset: int) -> None:
        """Fetch `partition` from `offset` on (what was buffered from elsewhere is dropped)."""
        if partition in self._assigned:
            self.consumer.incremental_unassign([self._tp(partition)])
        self.consumer.incremental_assign([self._tp(partition, offset)])
        self._assigned.add(partition)
        self._paused.discard(partition)
        self._buffers[partition] = []
        self._next[partition] = offset
        self._position[partition] = offset

    def _pump(self, timeout: float = 0.0) -> None:
        """Move what librdkafka has fetched into the partitions' buffers."""
        if not self._assigned:
            return
        msgs = self.consumer.consume(num_messages=10_000, timeout=timeout)
        if msgs:
            self._route(msgs)
        for p, buf in self._buffers.items():
            if len(buf) > _BUFFER_LIMIT and p not in self._paused:
                self.consumer.pause([self._tp(p)])
                self._paused.add(p)
            elif len(buf) <= _BUFFER_LIMIT // 2 and p in self._paused:
                self.consumer.resume([self._tp(p)])
                self._paused.discard(p)

    def _route(self, msgs: list) -> None:
        """Append fetched messages to their partitions' buffers, a partition at a time: the
        messages' fields are read by C-level map() over the batch rather than a Python loop
        (tens of thousands a second per source). Errors (transient: librdkafka retries) and
        messages fetched before a seek (below the partition's next offset) are dropped; a
        partition's messages arrive in offset order."""
        message = kafka_module().Message
        errors = list(map(message.error, msgs))
        if errors.count(None) != len(msgs):
            msgs = [m for m, e in zip(msgs, errors) if e is None]
        parts = np.fromiter(map(message.partition, msgs), dtype=np.int64, count=len(msgs))
        offsets = np.fromiter(map(message.offset, msgs), dtype=np.int64, count=len(msgs))
        single = len(msgs) > 0 and parts[0] == parts[-1] and (parts == parts[0]).all()
        for p in ([int(parts[0])] if single else np.unique(parts).tolist()):
            if p not in self._next:
                continue
            keep = offsets >= self._next[p] if single else (parts == p) & (offsets >= self._next[p])
            at = np.flatnonzero(keep)
            if len(at) == 0:
                continue
            self._buffers[p].extend(msgs if len(at) == len(msgs) else [msgs[i] for i in at.tolist()])
            self._next[p] = int(offsets[at[-1]]) + 1

    def _high(self, partition: int) -> int | None:
        """The partition's end as the last fetch response reported it (None: not fetched yet;
        for a partition this reader only plans ranges of, the end its last probe saw)."""
        if partition not in self._assigned:
            probed = self._probed.get(partition)
            return None if probed is None else probed[0]
        _lo, hi = self.consumer.get_watermark_offsets(self._tp(partition), cached=True)
        return hi if hi is not None and hi >= 0 else None

    # -- splits ----------------------------------------------------------------------------
    def list_splits(self) -> list[str]:
        now = time.monotonic()
        if now - self._listed >= _METADATA_TTL or not self._partitions:
            try:
                meta = self.consumer.list_topics(self.topic, timeout=5).topics.get(self.topic)
                if meta is not None and meta.error is None and meta.partitions:
                    self._partitions = [str(p) for p in sorted(meta.partitions)]
                    self._listed = now
            except Exception:  # noqa: BLE001 - the broker is away: keep the partitions known,
                self._listed = now  # and ask again after the TTL rather than on every tick
        return list(self._partitions)

    def start_offset(self, split: str, discovered: bool = False) -> int:
        """Where a partition seen for the first time starts: its first message (earliest), its
        end now (latest), or the first message at or after `scan.startup.timestamp.millis`.
        A partition added after the source started starts at its first message whatever the
        mode: all it holds was produced after the source started, and its end now would skip
        what was produced into it before the metadata showed it."""
        p = int(split)
        lo, _hi = self.consumer.get_watermark_offsets(self._tp(p), timeout=10)
        if discovered:
            return max(lo, 0)
        if self.start_millis is not None:
            found = self.consumer.offsets_for_times([self._tp(p, self.start_millis)], timeout=10)[0].offset
            if found >= 0:
                return found
        elif self.mode == "earliest":
            return max(lo, 0)
        return self._end_now(p, max(lo, 0))

    def _end_now(self, partition: int, lo: int, timeout: float = 10.0) -> int:
        """The partition's end, from a fetch response (reading from `lo` until one arrives)."""
        self._seek(partition, lo)
        deadline = time.monotonic() + timeout
        while (hi := self._high(partition)) is None:
            if time.monotonic() > deadline:
                from rw_cli.errors import ExecutionError

                raise ExecutionError(f"kafka: no fetch response for topic {self.topic} partition {partition} in "
                                     f"{timeout:g} s", hint="is the broker up?")
            self._pump(0.05)
        return hi

    def exhausted(self, split: str, offset: int) -> bool:
        """Read to the partition's end, as fetch responses have reported it for a while: the
        cached end may be one fetch wait old, so the end must hold for `_SETTLE` seconds of
        checks (a gap in the checks starts the wait again). A partition this reader only
        plans ranges of is probed again for its end (`_probe`)."""
        p = int(split)
        if p in self._probed and p not in self._assigned:
            self._probe(p)
        hi = self._high(p)
        now = time.monotonic()
        if hi is None or offset < hi:
            self._at_end.pop(p, None)
            return False
        since, last = self._at_end.get(p, (now, now))
        if now - last > _SETTLE:
            since = now
        self._at_end[p] = (since, now)
        return now - since >= _SETTLE

    def split_size(self, split: str) -> int | None:
        """The partition's end (offsets below it exist; None before its first fetch); lag is
        this minus the read offset."""
        return self._high(int(split))

    # -- ranges read elsewhere (Spark tasks) -----------------------------------------------
    def plan(self, split: str, offset: int, max_rows: int) -> int:
        """The end of the range a task reads next: up to `max_rows` offsets after `offset`,
        within the partition's end as a fetch response reports it (a fetch from the end the
        broker lists, so that next to nothing is fetched here: a listed end alone may fall
        short of the partition's, as on some brokers)."""
        p = int(split)
        hi = self._high(p) if p in self._assigned else self._probe(p)
        return offset if hi is None else max(offset, min(offset + max_rows, hi))

    def plan_ahead(self, split: str, offset: int, max_rows: int) -> int | None:
        """Within the partition's end as last seen (no fetch, no probe): those offsets exist."""
        hi = self._high(int(split))
        return None if hi is None else max(offset, min(offset + max_rows, hi))

    def _probe(self, partition: int, fresh_s: float = 0.05) -> int | None:
        """The partition's end from a fetch response: assigned at the end the broker lists,
        fetched until a response comes (or a fetch wait passes, the cached end then being
        one that an earlier response gave: never past the partition's end), then let go of.
        A probe younger than `fresh_s` is reused."""
        known = self._probed.get(partition)
        now = time.monotonic()
        if known is not None and now - known[1] < fresh_s:
            return known[0]
        try:
            _lo, listed = self.consumer.get_watermark_offsets(self._tp(partition), timeout=10, cached=False)
            self._seek(partition, max(listed, 0))
            wait_until = now + _FETCH_WAIT_MS / 1000
            first_until = now + 10.0
            while True:
                self._pump(0.02)
                t = time.monotonic()
                if self._buffers[partition] or (t > wait_until and self._high(partition) is not None) \
                        or t > first_until:
                    break
            hi = self._high(partition)
        except Exception:  # noqa: BLE001 - the broker is away: what was known stands
            hi = None
        finally:
            if partition in self._assigned:
                self.consumer.incremental_unassign([self._tp(partition)])
                self._assigned.discard(partition)
                self._paused.discard(partition)
                self._buffers.pop(partition, None)
                self._next.pop(partition, None)
                self._position.pop(partition, None)
        if hi is None:
            return None if known is None else known[0]
        self._probed[partition] = (hi, time.monotonic())
        return hi

    def read_to(self, split: str, offset: int, end: int, max_rows: int, columns: list[str] | None = None):
        """The messages of [offset, end) from `offset` on, at most `max_rows`, waiting for
        their fetch (the range lies below the partition's end when it was planned). Offsets
        the partition skips (compaction, transaction markers) are passed over: the range is
        read once the consumer's fetch position reaches `end`."""
        p = int(split)
        if p not in self._assigned or self._position.get(p) != offset:
            self._seek(p, offset)
        deadline = time.monotonic() + _RANGE_WAIT_S
        while True:
            self._pump(0.05)
            buf = self._buffers[p]
            if buf or self._next[p] >= end or self._fetched_past(p, end):
                break
            if time.monotonic() > deadline:
                from rw_cli.errors import ExecutionError

                raise ExecutionError(f"kafka: topic {self.topic} partition {p}: offsets {offset}..{end} did not "
                                     f"arrive in {_RANGE_WAIT_S:g} s", hint="is the broker up?")
        take = 0
        while take < min(max_rows, len(buf)) and buf[take].offset() < end:
            take += 1
        if take == 0:
            self._position[p] = end  # nothing left below the end: the range is read
            return None, None, end
        batch, self._buffers[p] = buf[:take], buf[take:]
        table, keys = self._decode(p, batch)
        self._position[p] = batch[-1].offset() + 1
        return table, keys, self._position[p]

    def _fetched_past(self, partition: int, end: int) -> bool:
        """Whether the consumer's fetch position for `partition` is at or past `end`."""
        try:
            pos = self.consumer.position([self._tp(partition)])[0].offset
        except Exception:  # noqa: BLE001 - no position yet
            return False
        return pos is not None and pos >= end

    # -- reading ---------------------------------------------------------------------------
    def read(self, split: str, offset: int, max_rows: int, columns: list[str] | None = None):
        p = int(split)
        if p not in self._assigned or self._position.get(p) != offset:
            self._seek(p, offset)  # the first read, or the executor starts over elsewhere
        self._pump()
        buf = self._buffers[p]
        if not buf:
            return None, None, offset
        batch, self._buffers[p] = buf[:max_rows], buf[max_rows:]
        table, keys = self._decode(p, batch)
        # the next offset follows the last message read (offsets may skip: compacted topics)
        self._position[p] = batch[-1].offset() + 1
        return table, keys, self._position[p]

    def _decode(self, partition: int, batch: list) -> tuple[pa.Table, np.ndarray]:
        """The batch's good messages as rows (the Kafka offset as each row's key); bad ones
        reported as errors. UPSERT: a message without a value deletes its key's row."""
        message = kafka_module().Message
        offsets = np.fromiter(map(message.offset, batch), dtype=np.int64, count=len(batch))
        values = list(map(message.value, batch))
        if self.format == "upsert":
            table, index, errors = self._upserts(values, list(map(message.key, batch)))
        elif self.format == "debezium":
            table, index, errors = self._changes(values)
        else:
            table, index, errors = self._records(values, self.payload)
        for i in sorted(errors):
            self.error(f"{self.topic} partition {partition} offset {offsets[i]}: {errors[i]}")
        good = batch if len(index) == len(batch) else [batch[i] for i in index]
        for name, kind in self.include.items():
            table = table.append_column(name, _include_column(kind, good, partition))
        return table, offsets[index]

    def _records(self, values: list, columns) -> tuple[pa.Table, np.ndarray, dict[int, str]]:
        """(rows of the good messages, their positions in `values`, position -> error)."""
        from rw_cli.connector.filesystem import parse_csv_records, parse_json_records

        if self.encode == "json" and (table := fast_json(values, columns)) is not None:
            return table, np.arange(len(values)), {}
        texts = ["" if v is None else v.decode("utf-8", errors="surrogateescape") for v in values]
        if self.encode == "json":  # JSON's line breaks are whitespace: one message, one line
            parsed = parse_json_records([t.replace("\r", " ").replace("\n", " ") for t in texts], columns)
        else:
            import csv

            rows = [next(csv.reader([t.rstrip("\r\n")], delimiter=self.delimiter), []) for t in texts]
            parsed = parse_csv_records(rows, columns, with_header=False)
        errors = {i: "empty message" if values[i] is None else e for i, e in parsed.errors.items()}
        return parsed.table, parsed.index, errors

    def _changes(self, values: list) -> tuple[pa.Table, np.ndarray, dict[int, str]]:
        """Debezium change events as deletes (of `before`) and inserts (of `after`), in order:
        create/read insert, update deletes the old row and inserts the new, delete deletes.
        A null value (the tombstone that follows a delete, for compaction) is skipped."""
        from rw_cli.connector.base import OP_COLUMN
        from rw_cli.common.op import DELETE, INSERT

        at = np.array([i for i, v in enumerate(values) if v is not None], dtype=np.int64)
        events = [values[i] for i in at]
        errors: dict[int, str] = {}
        try:
            parts = [read_envelopes(events, self.payload)] if events else []
            where = [at]
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError, UnicodeDecodeError):
            parts, where = [], []
            for i, v in zip(at, events):  # find the bad events (rare: a batch that holds one)
                try:
                    parts.append(read_envelopes([v], self.payload))
                    where.append(np.array([i]))
                except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError, UnicodeDecodeError) as e:
                    errors[int(i)] = f"not a Debezium change event of the table's columns: {e}"
        tables, positions, ops = [], [], []
        for (op, (before, has_before), (after, has_after)), pos in zip(parts, where):
            op = np.asarray(op.to_numpy(zero_copy_only=False), dtype=object)
            has_before = np.asarray(has_before.to_numpy(zero_copy_only=False), dtype=bool)
            has_after = np.asarray(has_after.to_numpy(zero_copy_only=False), dtype=bool)
            inserts = np.isin(op, ("c", "r", "u")) & has_after
            deletes = np.isin(op, ("u", "d")) & has_before
            for i in np.flatnonzero(~inserts & ~deletes):
                errors[int(pos[i])] = f"a change event with op {op[i]!r} and no row to apply"
            for rows, mask, kind, rank in ((before, deletes, DELETE, 0), (after, inserts, INSERT, 1)):
                tables.append(rows.filter(pa.array(mask)))
                positions.append(pos[mask] * 2 + rank)  # an update's delete before its insert
                ops.append(np.full(int(mask.sum()), kind, dtype=np.int8))
        if not tables:
            empty = pa.schema([pa.field(n, t.arrow()) for n, t in self.payload]).empty_table()
            return empty.append_column(OP_COLUMN, pa.array([], pa.int8())), np.zeros(0, np.int64), errors
        order = np.argsort(np.concatenate(positions), kind="stable")
        table = pa.concat_tables(tables).take(pa.array(order))
        table = table.append_column(OP_COLUMN, pa.array(np.concatenate(ops)[order]))
        return table, np.concatenate(positions)[order] // 2, errors

    def _upserts(self, values: list, keys: list) -> tuple[pa.Table, np.ndarray, dict[int, str]]:
        """Rows of values (inserts, or updates of their key) and of tombstones (deletes: the
        key's columns from the message key, a JSON object), with an op column, in order."""
        from rw_cli.connector.base import OP_COLUMN, conform
        from rw_cli.common.op import DELETE, INSERT

        dead = np.array([v is None for v in values], dtype=bool)
        live_at, dead_at = np.flatnonzero(~dead), np.flatnonzero(dead)
        live, live_index, errors = self._records([values[i] for i in live_at], self.payload)
        out = {int(live_at[i]): e for i, e in errors.items()}
        key_cols = [(n, t) for n, t in self.payload if n in self.key_columns]
        gone, gone_index, key_errors = self._records([keys[i] or b"" for i in dead_at], key_cols)
        out.update({int(dead_at[i]): f"a tombstone's key: {e}" for i, e in key_errors.items()})
        named = np.ones(gone.num_rows, dtype=bool)  # a key with a NULL column names no row
        for col in gone.columns:
            named &= ~np.asarray(col.is_null().to_numpy(zero_copy_only=False), dtype=bool)
        for i in np.asarray(gone_index)[~named]:
            out[int(dead_at[i])] = "a tombstone's key lacks a primary key column"
        gone, gone_index = gone.filter(pa.array(named)), np.asarray(gone_index)[named]
        positions = np.concatenate([live_at[live_index], dead_at[gone_index]]).astype(np.int64)
        table = pa.concat_tables([conform(live, self.payload), conform(gone, self.payload)])
        ops = np.concatenate([np.full(live.num_rows, INSERT), np.full(gone.num_rows, DELETE)]).astype(np.int8)
        order = np.argsort(positions, kind="stable")
        table = table.take(pa.array(order)).append_column(OP_COLUMN, pa.array(ops[order]))
        return table, positions[order], out


def read_envelopes(values: list, columns: list[tuple[str, DataType]]) -> tuple[pa.Array, pa.Table, pa.Table]:
    """Debezium change events (`{"before": row, "after": row, "op": ...}`, bare or inside the
    JSON converter's `{"schema": ..., "payload": ...}`) read at once by Arrow's JSON reader:
    (op, before rows, after rows), the rows typed as `columns`. Raises Arrow's error if any
    message is not such an event."""
    import io

    import pyarrow.compute as pc
    import pyarrow.json as pajson

    def read_as(t: pa.DataType) -> pa.DataType:
        plain = pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_string(t) or pa.types.is_boolean(t)
        return t if plain else pa.string()  # timestamps, decimals, ...: cast from their text

    row = pa.struct([pa.field(n, read_as(t.arrow())) for n, t in columns])
    env = [pa.field("before", row), pa.field("after", row), pa.field("op", pa.string())]
    table = pajson.read_json(io.BytesIO(b"\n".join(values)), read_options=pajson.ReadOptions(use_threads=False),
                             parse_options=pajson.ParseOptions(explicit_schema=pa.schema(env + [pa.field("payload", pa.struct(env))]),
                                                               newlines_in_values=True, unexpected_field_behavior="ignore"))
    if table.num_rows != len(values):
        raise pa.ArrowInvalid("not one JSON object per message")
    payload = table.column("payload").combine_chunks()
    wrapped = payload.is_valid()

    def field(name: str):
        return pc.if_else(wrapped, pc.struct_field(payload, name), table.column(name).combine_chunks())

    def rows(name: str) -> pa.Table:
        arr = field(name)
        return pa.Table.from_arrays([numeric.cast(pc.struct_field(arr, n), t.arrow()) for n, t in columns],
                                    names=[n for n, _ in columns]), arr.is_valid()

    before, has_before = rows("before")
    after, has_after = rows("after")
    return field("op"), (before, has_before), (after, has_after)


def fast_json(values: list, columns: list[tuple[str, DataType]]) -> pa.Table | None:
    """A batch of JSON messages decoded at once by Arrow's JSON reader, when every message is
    one object whose fields have the columns' types exactly (Arrow's reader is as strict as the
    per-record decoder for numbers, strings and booleans; timestamps are read as strings and
    cast as that decoder casts them); None otherwise, and the per-record decoder then finds
    the bad messages."""
    import io

    import pyarrow.json as pajson

    def read_as(t: pa.DataType) -> pa.DataType | None:
        if pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_string(t) or pa.types.is_boolean(t):
            return t
        return pa.string() if pa.types.is_timestamp(t) and t.tz is None else None

    types = [t.arrow() for _, t in columns]
    read = [read_as(t) for t in types]
    if any(r is None for r in read) or None in values:  # `in`: a C-level scan of the batch
        return None
    schema = pa.schema([pa.field(n, r) for (n, _), r in zip(columns, read)])
    try:
        table = pajson.read_json(io.BytesIO(b"\n".join(values)), read_options=pajson.ReadOptions(use_threads=False),
                                 parse_options=pajson.ParseOptions(explicit_schema=schema, newlines_in_values=True,
                                                                   unexpected_field_behavior="ignore"))
        if table.num_rows != len(values):  # an empty message, or one holding two objects
            return None
        return pa.Table.from_arrays([numeric.cast(table.column(n), t) for (n, _), t in zip(columns, types)],
                                    names=[n for n, _ in columns])
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, UnicodeDecodeError):
        return None


def _include_column(kind: str, messages: list, partition: int) -> pa.Array:
    """An INCLUDE column's values for the decoded messages."""
    message = kafka_module().Message
    if kind == "key":
        return pa.array(list(map(message.key, messages)), pa.binary())
    if kind == "partition":
        return pa.array([str(partition)] * len(messages), pa.string())
    if kind == "offset":
        return pa.array(np.fromiter(map(message.offset, messages), np.int64, len(messages))).cast(pa.string())
    stamps = np.array(list(map(message.timestamp, messages)), dtype=np.int64).reshape(-1, 2)
    millis = pa.array(stamps[:, 1], pa.int64(), mask=stamps[:, 0] == 0)  # type 0: no timestamp
    return millis.cast(pa.timestamp("ms", tz="UTC")).cast(pa.timestamp("us", tz="UTC"))
