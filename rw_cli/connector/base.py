"""What a source connector implements, and the option helpers every connector shares.

A connector reads a source in *splits* (a generator's partition, a file). Each split has an
offset that only grows; `read(split, offset, n)` returns the next rows after `offset` (at
most `n` units of the split's own measure: events, rows, records) and the new offset.
Reading the same (split, offset) twice yields the same rows, so a source resumes exactly at
the offsets committed with the last checkpoint.
"""
from __future__ import annotations

import numpy as np
import pyarrow as pa

from rw_cli.common import numeric
from rw_cli.common.types import DataType
from rw_cli.errors import BindError


# a column a reader may add to what it reads: each row's op (an upsert source's deletes), the
# rows being inserts without it
OP_COLUMN = "__op"


class SourceReader:
    columns: list[tuple[str, DataType]]
    bounded: bool = False

    def list_splits(self) -> list[str]:
        """The splits that exist now (file sources discover new ones on every call)."""
        raise NotImplementedError

    def read(self, split: str, offset: int, max_rows: int, columns: list[str] | None = None
             ) -> tuple[pa.Table | None, np.ndarray | None, int]:
        """(rows named as `columns`, a per-row key unique within the split, new offset).
        `columns`: the only columns anyone reads (a reader may leave out the others)."""
        raise NotImplementedError

    def exhausted(self, split: str, offset: int) -> bool:
        return False

    def plan(self, split: str, offset: int, max_rows: int) -> int | None:
        """The offset after `read(split, offset, max_rows)`, computed without reading (None:
        only a read can tell). A reader that knows it lets a remote runtime assign each
        split's range for an epoch and have the range read where it is processed (Spark
        tasks), as Structured Streaming's Kafka source assigns offset ranges."""
        return None

    def plan_ahead(self, split: str, offset: int, max_rows: int) -> int | None:
        """What `plan` would answer, where the reader knows it without asking anyone and
        the units surely exist (None: it cannot tell). A remote runtime reads the next
        epoch's range ahead on it while the epoch before finishes; a read of units that do
        not exist yet could wait for them, so a reader that is not sure says None."""
        return None

    def read_to(self, split: str, offset: int, end: int, max_rows: int, columns: list[str] | None = None
                ) -> tuple[pa.Table | None, np.ndarray | None, int]:
        """`read` within a range [offset, end) that `plan` assigned: at most `max_rows` units
        of it, never past `end`; where a read may come back empty before the rows arrive (a
        broker's fetch), it waits for them (they exist: `plan` saw them)."""
        return self.read(split, offset, min(max_rows, end - offset), columns)

    def start_offset(self, split: str, discovered: bool = False) -> int:
        """The offset a split seen for the first time starts at (Kafka: by scan.startup.mode).
        `discovered`: the split appeared after the source had started (a partition added to
        the topic later), so everything in it is new to the source."""
        return 0

    def close(self) -> None:
        """Let go of clients and their threads (the source's job is dropped, or the session ends)."""

    def check(self) -> None:
        """What CREATE checks beyond the options (that a broker answers, say); nothing here."""

    # errors seen while reading (bad records skipped); the executor reports and counts them
    def take_errors(self) -> list[str]:
        errs = getattr(self, "_errors", [])
        self._errors = []
        return errs

    def error(self, message: str) -> None:
        if not hasattr(self, "_errors"):
            self._errors = []
        self._errors.append(message)

    # a rate limit in rows per second (None: as fast as the pipeline asks)
    rate: float | None = None


def option_int(options: dict[str, str], key: str, default: int) -> int:
    value = options.get(key)
    if value is None:
        return default
    try:
        return int(str(value).strip())
    except ValueError:
        raise BindError(f"invalid value for {key}: '{value}'", hint="expected an integer") from None


def option_float(options: dict[str, str], key: str, default: float | None) -> float | None:
    value = options.get(key)
    if value is None:
        return default
    try:
        return float(str(value).strip())
    except ValueError:
        raise BindError(f"invalid value for {key}: '{value}'", hint="expected a number") from None


def option_bool(options: dict[str, str], key: str, default: bool) -> bool:
    value = options.get(key)
    if value is None:
        return default
    v = str(value).strip().lower()
    if v in ("true", "1", "on", "yes"):
        return True
    if v in ("false", "0", "off", "no"):
        return False
    raise BindError(f"invalid value for {key}: '{value}'", hint="expected true or false")


def conform(table: pa.Table, columns: list[tuple[str, DataType]]) -> pa.Table:
    """Rows with exactly the source's columns, in order, cast to their types."""
    arrays = []
    for name, t in columns:
        col = table.column(name) if name in table.column_names else pa.nulls(table.num_rows, t.arrow())
        if col.type != t.arrow():
            col = numeric.cast(col, t.arrow())
        arrays.append(col)
    return pa.Table.from_arrays(arrays, names=[n for n, _ in columns])
