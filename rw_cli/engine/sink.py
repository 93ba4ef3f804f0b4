"""SinkExecutor: the last node of a sink's job; delivers each committed epoch exactly once.

On a barrier the epoch's rows are staged (for the file sink: written to a staging object);
after the session has committed that epoch (`on_committed`) the staged object is moved to
its final name, `<epoch>.<ext>`, written atomically. On restart (`recover`), staged files of
committed epochs are finished and those of uncommitted epochs are deleted: a committed
epoch is delivered once, an uncommitted one never (it is recomputed from the resumed
sources). `blackhole` counts rows and discards them.
"""
from __future__ import annotations

import io

import numpy as np
import pyarrow as pa

from rw_cli.common import numeric
from rw_cli.common.types import DataType
from rw_cli.engine import duck
from rw_cli.engine.chunk import INSERT, UPDATE_INSERT, StreamChunk
from rw_cli.engine.executor import Executor
from rw_cli.common.epoch import EpochPair

_OP_NAMES = np.array(["insert", "delete", "update_delete", "update_insert"])
STAGING = ".staging"


class SinkExecutor(Executor):
    identity = "StreamSink"

    def __init__(self, types: list[DataType], stream_key: list[int], names: list[str], visible: int,
                 writer: "SinkWriter", append_only: bool = True):
        super().__init__(types, stream_key)
        self.names = names
        self.visible = visible
        self.writer = writer
        self.append_only = append_only
        self.pending: list[StreamChunk] = []
        self.rows_out = 0
        self.epochs_out = 0
        self.dropped_retractions = 0

    def on_chunk(self, chunk: StreamChunk, side: int = 0) -> list[StreamChunk]:
        if not len(chunk):
            return []
        if self.append_only and not chunk.is_insert().all():
            keep = chunk.is_insert()
            self.dropped_retractions += int((~keep).sum())
            chunk = chunk.filter(keep)
        self.rows_out += len(chunk)
        if self.writer.discards:
            return []
        self.pending.append(chunk)
        return []

    def on_barrier(self, epoch: EpochPair) -> list[StreamChunk]:
        chunks, self.pending = self.pending, []
        if chunks:
            data = pa.concat_tables([c.data.select(list(range(self.visible))) for c in chunks])
            data = data.rename_columns(self.names[: self.visible])
            if not self.append_only:
                ops = np.concatenate([c.ops for c in chunks])
                data = data.append_column("__op", pa.array(_OP_NAMES[ops]))
            self.writer.stage(epoch.prev, data)
        return []

    def on_committed(self, epoch: int) -> None:
        if self.writer.commit(epoch):
            self.epochs_out += 1

    def close(self) -> None:
        self.writer.close()


class SinkWriter:
    discards = False

    def stage(self, epoch: int, rows: pa.Table) -> None:
        pass

    def commit(self, epoch: int) -> bool:
        return False

    def recover(self, committed_epoch: int) -> None:
        pass

    def close(self) -> None:
        pass


class BlackholeWriter(SinkWriter):
    discards = True


class FileWriter(SinkWriter):
    """One object per committed epoch: `<epoch, 20 digits>.<jsonl|csv|parquet>` in a directory
    or an S3 prefix (an ObjectStore: every put is atomic). An epoch is staged under
    `.staging/` before its commit and moved to its final name after it."""

    EXT = {"json": "jsonl", "csv": "csv", "parquet": "parquet"}

    def __init__(self, store, encode: str, types: list[DataType]):
        self.store = store
        self.encode = encode
        self.types = types
        self.ext = self.EXT[encode]
        self.staged: dict[int, str] = {}

    def _final(self, epoch: int) -> str:
        return f"{epoch:020d}.{self.ext}"

    def stage(self, epoch: int, rows: pa.Table) -> None:
        staged = f"{STAGING}/{epoch:020d}.{self.ext}"
        self.store.put(staged, self._encode(rows))
        self.staged[epoch] = staged

    def _finish(self, epoch: int, staged: str) -> None:
        self.store.put(self._final(epoch), self.store.get(staged))
        self.store.delete(staged)

    def commit(self, epoch: int) -> bool:
        done = False
        for e in sorted(k for k in self.staged if k <= epoch):
            self._finish(e, self.staged.pop(e))
            done = True
        return done

    def recover(self, committed_epoch: int) -> None:
        for path in self.store.list(f"{STAGING}/"):
            stem = path.rsplit("/", 1)[-1].split(".")[0]
            if not stem.isdigit() or int(stem) > committed_epoch:
                self.store.delete(path)  # an epoch that never committed: it will be recomputed
            else:
                self._finish(int(stem), path)  # committed, but not yet delivered

    def _encode(self, rows: pa.Table) -> bytes:
        if self.encode == "parquet":
            import pyarrow.parquet as pq

            buf = io.BytesIO()
            pq.write_table(numeric.plain_table(rows), buf)
            return buf.getvalue()
        if self.encode == "csv":
            import pyarrow.csv as pacsv

            buf = io.BytesIO()
            pacsv.write_csv(_as_text(rows, self.types), buf)
            return buf.getvalue()
        return ("\n".join(json_rows(rows, self.types)) + "\n").encode()


def json_rows(rows: pa.Table, types: list[DataType]) -> list[str]:
    """Each row as a JSON object (numbers and booleans as JSON's, the rest as PostgreSQL
    prints it), as the JSON file sink writes lines and the Kafka sink messages."""
    text = _as_text(rows, types, keep_numbers=True)
    if text.num_rows == 0:
        return []
    # one DuckDB call per chunk, not a json.dumps per row
    out = duck.query("SELECT CAST(to_json(t) AS VARCHAR) AS j FROM t", {"t": text})
    return out.column("j").to_pylist()


def _as_text(rows: pa.Table, types: list[DataType], keep_numbers: bool = False) -> pa.Table:
    """Columns as PostgreSQL prints them (numbers and booleans stay typed for JSON)."""
    from rw_cli.common.pg_text import format_array

    cols = []
    for i, col in enumerate(rows.columns):
        t = types[i] if i < len(types) else None
        if t is None or (keep_numbers and (pa.types.is_integer(col.type) or pa.types.is_floating(col.type)
                                           or pa.types.is_boolean(col.type))) or pa.types.is_string(col.type):
            cols.append(col)
        else:
            cols.append(format_array(col, t))
    return pa.Table.from_arrays(cols, names=rows.column_names)


def sink_executors(runtime) -> list[SinkExecutor]:
    out = []
    for rel_id in sorted(runtime.jobs):
        for node in runtime.jobs[rel_id].nodes:
            if isinstance(node.executor, SinkExecutor):
                out.append(node.executor)
    return out


def notify_committed(runtime, epoch: int) -> None:
    for ex in sink_executors(runtime):
        ex.on_committed(epoch)
