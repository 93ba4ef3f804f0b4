"""The op of a changed row, as RisingWave's `Op`: every row of a stream chunk carries one
(an int8 column), and a state table's writes take the same codes.

They live here, below both the engine (`engine/chunk.py` re-exports them with StreamChunk)
and the store (`StateTable.write_chunk`), so that both read one definition.
"""
from __future__ import annotations

INSERT, DELETE, UPDATE_DELETE, UPDATE_INSERT = 0, 1, 2, 3
