"""The `datagen` connector: generated rows, as RisingWave's datagen source.

Options: `fields.<col>.kind = sequence | random`; sequence: `start` (default 1), `end`
(the source is bounded: split k of n yields start+k, start+k+n, ... <= end); random:
`min`/`max` (numbers), `length` (varchar, default 10), `max_past` (timestamps: seconds or a
duration like '2h 37min', default 1 day before the fixed base time), `seed` (default: the
field's position); `datagen.rows.per.second` (default 10; a rate limit, not part of the
data), `datagen.split.num`. A struct's fields are named `fields.<col>.<field>.kind`, ...; a
list has `fields.<col>.length` elements (default 10) named `fields.<col>._.kind`, ...
Values are pure functions of (seed, row number), so a re-read range yields the same rows.
"""
from __future__ import annotations

import re

import numpy as np
import pyarrow as pa

from rw_cli.common import numeric
from rw_cli.common.types import DataType
from rw_cli.connector.base import SourceReader, option_float, option_int
from rw_cli.connector.rand import rand_float, rand_int, rand_strings
from rw_cli.errors import BindError, NotSupported

_INTS = {"smallint": (-(1 << 15), (1 << 15) - 1), "integer": (-(1 << 31), (1 << 31) - 1),
         "bigint": (-(1 << 63), (1 << 63) - 1)}
_BASE_US = 1704067200 * 1_000_000  # 2024-01-01 00:00:00, the base of random timestamps


# humantime's units (RisingWave reads `max_past` with it), in seconds
_DURATION_UNITS = {"d": 86400, "day": 86400, "days": 86400, "h": 3600, "hr": 3600, "hour": 3600,
                   "hours": 3600, "m": 60, "min": 60, "mins": 60, "minute": 60, "minutes": 60,
                   "s": 1, "sec": 1, "secs": 1, "second": 1, "seconds": 1, "ms": 1e-3, "msec": 1e-3,
                   "us": 1e-6, "usec": 1e-6, "ns": 1e-9, "nsec": 1e-9}
_DURATION_PART = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([a-z]+)\s*")


def _seconds(options: dict[str, str], key: str, default: float) -> float:
    """A duration option: plain seconds, or humantime's `2h 37min`."""
    value = options.get(key)
    if value is None:
        return default
    text = str(value).strip().lower()
    try:
        return float(text)
    except ValueError:
        pass
    total, pos = 0.0, 0
    while pos < len(text):
        m = _DURATION_PART.match(text, pos)
        if m is None or m.group(2) not in _DURATION_UNITS:
            raise BindError(f"invalid value for {key}: '{value}'", hint="expected a duration such as '2h 37min'")
        total += float(m.group(1)) * _DURATION_UNITS[m.group(2)]
        pos = m.end()
    return total


def make_field(pos: int, name: str, t: DataType, options: dict[str, str]):
    """The generator of one column (or struct field, or list element) named `name`."""
    if t.is_list:  # (before is_struct: a list of structs is both)
        return _ListField(pos, name, t, options)
    if t.is_struct:
        return _StructField(pos, name, t, options)
    return _Field(pos, name, t, options)


class _StructField:
    """A struct: each of its fields generated as a column of its own."""

    def __init__(self, pos: int, name: str, t: DataType, options: dict[str, str]):
        self.name, self.type = name, t
        self.children = [make_field(pos * 31 + i + 1, f"{name}.{n}", ft, options)
                         for i, (n, ft) in enumerate(zip(t.field_names, t.inner))]

    def sequences(self) -> list:
        return [s for c in self.children for s in c.sequences()]

    def values(self, rows: np.ndarray) -> pa.Array:
        fields = [pa.field(n, ft.arrow()) for n, ft in zip(self.type.field_names, self.type.inner)]
        return pa.StructArray.from_arrays([c.values(rows) for c in self.children], fields=fields)


class _ListField:
    """A list of `fields.<col>.length` elements, generated as a column named `<col>._` over
    the row numbers row * length + i."""

    def __init__(self, pos: int, name: str, t: DataType, options: dict[str, str]):
        self.name, self.type = name, t
        self.length = max(0, option_int(options, f"fields.{name}.length", 10))
        self.element = make_field(pos * 31 + 1, f"{name}._", t.inner[0], options)

    def sequences(self) -> list:
        return []  # an element's sequence does not bound the rows

    def values(self, rows: np.ndarray) -> pa.Array:
        n, k = len(rows), self.length
        inner = self.element.values((rows[:, None] * k + np.arange(k)).reshape(-1)) if n and k \
            else pa.array([], self.type.inner[0].arrow())
        return pa.ListArray.from_arrays(pa.array(np.arange(n + 1, dtype=np.int32) * k), inner,
                                        type=self.type.arrow())


class _Field:
    def __init__(self, pos: int, name: str, t: DataType, options: dict[str, str]):
        p = f"fields.{name}."
        self.name, self.type = name, t
        self.kind = options.get(p + "kind", "random").lower()
        if self.kind not in ("random", "sequence"):
            raise BindError(f"invalid value for {p}kind: '{self.kind}'", hint="use 'sequence' or 'random'")
        self.seed = option_int(options, p + "seed", pos)
        if self.kind == "sequence":
            if not t.is_numeric:
                raise NotSupported(f"datagen sequence of type {t.name}")
            self.start = option_int(options, p + "start", 1)
            end = options.get(p + "end")
            self.end = None if end is None else option_int(options, p + "end", 0)
        else:
            self.min = option_float(options, p + "min", 0)
            self.max = option_float(options, p + "max", 32767 if t.is_integer else 32767.0)
            self.length = option_int(options, p + "length", 10)
            self.max_past = _seconds(options, p + "max_past", 86400.0)
            if t.name not in _INTS and t.name not in ("real", "double precision", "numeric", "character varying",
                                                      "boolean", "timestamp without time zone",
                                                      "timestamp with time zone", "date"):
                raise NotSupported(f"datagen random values of type {t.name}")

    def sequences(self) -> list:
        return [self] if self.kind == "sequence" else []

    def values(self, rows: np.ndarray) -> pa.Array:
        t = self.type
        if self.kind == "sequence":
            return numeric.cast(pa.array(self.start + rows), t.arrow())
        if t.name in _INTS:
            lo, hi = int(self.min), int(self.max)
            return numeric.cast(pa.array(lo + rand_int(self.seed, rows, 1, hi - lo + 1)), t.arrow())
        if t.name in ("real", "double precision", "numeric"):
            v = self.min + rand_float(self.seed, rows, 1) * (self.max - self.min)
            if t.name == "numeric":
                v = np.round(v, 6)
            return numeric.cast(pa.array(v), t.arrow())
        if t.name == "character varying":
            return rand_strings(self.seed, rows, 1, np.full(len(rows), self.length))
        if t.name == "boolean":
            return pa.array(rand_int(self.seed, rows, 1, 2) == 1)
        past = (rand_float(self.seed, rows, 1) * self.max_past * 1e6).astype(np.int64)
        ts = pa.array(_BASE_US - past, pa.timestamp("us"))
        return ts.cast(pa.date32()) if t.name == "date" else ts.cast(t.arrow())


class DatagenReader(SourceReader):
    """Split `k` of `n` generates row numbers k, k+n, ...; its offset counts rows read."""

    def __init__(self, options: dict[str, str], columns: list[tuple[str, DataType]]):
        self.columns = columns
        self.fields = [make_field(i, n, t, options) for i, (n, t) in enumerate(columns)]
        self.split_num = max(1, option_int(options, "datagen.split.num", 1))
        self.rate = option_float(options, "datagen.rows.per.second", 10.0)
        ends = [f.end - f.start + 1 for top in self.fields for f in top.sequences() if f.end is not None]
        self.total = max(0, min(ends)) if ends else None
        self.bounded = self.total is not None

    def total_units(self) -> int | None:
        return self.total

    def list_splits(self) -> list[str]:
        return [str(k) for k in range(self.split_num)]

    def _split_rows(self, split: str) -> int | None:
        if self.total is None:
            return None
        k = int(split)
        return max(0, (self.total - k + self.split_num - 1) // self.split_num)

    def exhausted(self, split: str, offset: int) -> bool:
        total = self._split_rows(split)
        return total is not None and offset >= total

    def plan(self, split: str, offset: int, max_rows: int) -> int:
        total = self._split_rows(split)
        n = max_rows if total is None else min(max_rows, total - offset)
        return offset + max(0, n)

    def plan_ahead(self, split: str, offset: int, max_rows: int) -> int:
        return self.plan(split, offset, max_rows)  # (generated: every planned row exists)

    def read(self, split: str, offset: int, max_rows: int, columns: list[str] | None = None):
        total = self._split_rows(split)
        n = max_rows if total is None else min(max_rows, total - offset)
        if n <= 0:
            return None, None, offset
        rows = int(split) + self.split_num * (offset + np.arange(n, dtype=np.int64))
        table = pa.table({f.name: f.values(rows) for f in self.fields if columns is None or f.name in columns})
        return table, rows, offset + n
