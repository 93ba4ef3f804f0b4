"""The executor contract shared by every stream operator.

An executor has static info (output types, stream key, identity) and reacts to messages:
chunks (`on_chunk`) and barriers (`on_barrier`). Executors with state write it to their
state tables and commit them with the barrier's `prev` epoch. They do not know which
runtime drives them, nor anything of SQL parsing.
"""
from __future__ import annotations

from rw_cli.common.types import DataType
import pyarrow as pa

from rw_cli.engine.chunk import StreamChunk, arrow_schema, cast_to
from rw_cli.common.epoch import EpochPair


class Executor:
    identity = "Executor"

    def __init__(self, types: list[DataType], stream_key: list[int]):
        self.types = types
        self.stream_key = stream_key
        self.schema = arrow_schema(types)

    def on_chunk(self, chunk: StreamChunk, side: int = 0) -> list[StreamChunk]:
        raise NotImplementedError

    def on_barrier(self, epoch: EpochPair) -> list[StreamChunk]:
        return []

    def close(self) -> None:
        """Release what the executor holds outside the process's memory (a connector's client
        and its threads) when its job is dropped or the session closes."""

    def conform(self, chunk: StreamChunk) -> StreamChunk:
        """Cast a chunk to this executor's output schema (DuckDB may widen types)."""
        if chunk.data.schema.equals(self.schema):
            return chunk
        data = chunk.data
        cols = [cast_to(data.column(i), f.type) for i, f in enumerate(self.schema)]
        return StreamChunk(pa.Table.from_arrays(cols, schema=self.schema), chunk.ops, chunk.stored)
