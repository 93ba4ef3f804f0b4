"""File sources: `connector = 'posix_fs'` (a local directory) and `'s3'` (a bucket prefix).

Every file whose name matches `match_pattern` (a glob; default `*`) is a split; files that
appear later are picked up by the next poll. A split's offset counts the file's records
(lines of JSON or CSV, rows of Parquet) consumed, bad ones included, so a restart resumes at
the next record. A record that cannot be parsed or whose field has the wrong type is skipped,
reported and counted; it never stops the source.

FORMAT PLAIN ENCODE JSON | CSV (without_header = 'true' | 'false', delimiter = ',') | PARQUET.
"""
from __future__ import annotations

import csv
import fnmatch
import io
import json
import re

import numpy as np
import pyarrow as pa

from rw_cli.common import numeric
from rw_cli.common.types import DataType
from rw_cli.connector.base import SourceReader, conform, option_bool
from rw_cli.errors import BindError

ENCODES = ("json", "csv", "parquet")


class Parsed:
    def __init__(self, table: pa.Table, index: np.ndarray, total: int, errors: dict[int, str]):
        self.table = table      # good records
        self.index = index      # record number of each good record
        self.total = total      # records in the file, good and bad
        self.errors = errors    # record number -> message


class FileReader(SourceReader):
    bounded = False  # new files may appear at any time
    discovers_splits = True

    def __init__(self, connector: str, options: dict[str, str], columns: list[tuple[str, DataType]],
                 encode: str | None, encode_options: dict[str, str]):
        self.columns = columns
        self.encode = (encode or "").lower()
        if self.encode not in ENCODES:
            raise BindError(f"the {connector} connector needs FORMAT PLAIN ENCODE JSON | CSV | PARQUET")
        self.pattern = options.get("match_pattern", "*")
        self.with_header = not option_bool(encode_options, "without_header", False)
        self.delimiter = encode_options.get("delimiter", ",")
        from rw_cli.connector.objects import local_store, s3_store

        if connector == "posix_fs":
            root = options.get("posix_fs.root")
            if not root:
                raise BindError("the posix_fs connector needs posix_fs.root")
            self._open = lambda: local_store(root)
        else:
            if not options.get("s3.bucket_name"):
                raise BindError("the s3 connector needs s3.bucket_name")
            self._open = lambda: s3_store(options)
        self._store = None
        self._cache: dict[str, Parsed] = {}

    @property
    def store(self):
        if self._store is None:
            self._store = self._open()
        return self._store

    def list_splits(self) -> list[str]:
        names = []
        for path in self.store.list(""):
            base = path.rsplit("/", 1)[-1]
            if base.startswith(".") or "/." in "/" + path:
                continue
            if fnmatch.fnmatch(path, self.pattern) or fnmatch.fnmatch(base, self.pattern):
                names.append(path)
        return sorted(names)

    def split_size(self, split: str) -> int:
        return self._parse(split).total

    def exhausted(self, split: str, offset: int) -> bool:
        return offset >= self._parse(split).total

    def read(self, split: str, offset: int, max_rows: int, columns: list[str] | None = None):
        p = self._parse(split)
        if offset >= p.total:
            return None, None, offset
        end = min(p.total, offset + max_rows)
        lo, hi = np.searchsorted(p.index, [offset, end])
        for rec in range(offset, end):
            if rec in p.errors:
                self.error(f"{split}: record {rec + 1}: {p.errors[rec]}")
        if end >= p.total:
            self._cache.pop(split, None)  # done with the file
        return p.table.slice(lo, hi - lo), p.index[lo:hi], end

    # -- parsing ---------------------------------------------------------------------------
    def _parse(self, split: str) -> Parsed:
        p = self._cache.get(split)
        if p is None:
            data = self.store.get(split)
            p = self._cache[split] = getattr(self, f"_parse_{self.encode}")(data)
        return p

    def _parse_parquet(self, data: bytes) -> Parsed:
        import pyarrow.parquet as pq

        try:
            t = pq.read_table(io.BytesIO(data))
            t = conform(t, self.columns)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, OSError) as e:
            return Parsed(_empty(self.columns), np.zeros(0, np.int64), 1, {0: f"unreadable parquet file: {e}"})
        return Parsed(t, np.arange(t.num_rows, dtype=np.int64), t.num_rows, {})

    def _parse_json(self, data: bytes) -> Parsed:
        return parse_json_records(data.decode("utf-8", errors="surrogateescape").splitlines(), self.columns)

    def _parse_csv(self, data: bytes) -> Parsed:
        text = data.decode("utf-8", errors="surrogateescape")
        return parse_csv_records(list(csv.reader(io.StringIO(text), delimiter=self.delimiter)), self.columns,
                                 self.with_header)


def parse_json_records(lines: list[str], columns: list[tuple[str, DataType]]) -> Parsed:
    """One JSON object per line (a file's lines, a Kafka batch's messages) as typed columns;
    a line that is not an object of the columns' types is an error, never the batch's end."""
    records, index, errors = [], [], {}
    for i, line in enumerate(lines):
        if not line.strip():
            errors[i] = "empty line"
            continue
        if _BAD_UTF8.search(line):
            errors[i] = _bad_utf8_message(line)
            continue
        try:
            obj = json.loads(line)
        except ValueError as e:
            errors[i] = f"invalid JSON: {e}"
            continue
        if not isinstance(obj, dict):
            errors[i] = "a JSON record must be an object"
            continue
        records.append([obj.get(n) for n, _ in columns])
        index.append(i)
    return _typed(records, np.array(index, dtype=np.int64), len(lines), errors, columns, text=False)


def parse_csv_records(rows: list[list[str]], columns: list[tuple[str, DataType]], with_header: bool) -> Parsed:
    """CSV records (split into fields) as typed columns, matched to the columns by a header
    row's names if `with_header`, else by position; a record of the wrong width is an error."""
    first = 0
    order = list(range(len(columns)))
    width = len(columns)  # the fields every record has: the columns, or the header's
    if with_header and rows:
        header = [h.strip() for h in rows[0]]
        order = [header.index(n) if n in header else -1 for n, _ in columns]
        width = len(header)
        first = 1
    records, index, errors = [], [], {}
    for i in range(first, len(rows)):
        r = rows[i]
        if len(r) != width:  # a missing or an extra field: the record is not what it seems
            errors[i - first] = f"expected {width} fields, got {len(r)}"
            continue
        bad = next((f for f in r if _BAD_UTF8.search(f)), None)
        if bad is not None:
            errors[i - first] = _bad_utf8_message(bad)
            continue
        records.append([(r[j] if r[j] != "" else None) if j >= 0 else None for j in order])
        index.append(i - first)
    return _typed(records, np.array(index, dtype=np.int64), len(rows) - first, errors, columns, text=True)


# bytes that are not UTF-8, as decoding with surrogateescape leaves them
_BAD_UTF8 = re.compile("[\udc80-\udcff]")


def _bad_utf8_message(text: str) -> str:
    byte = ord(_BAD_UTF8.search(text).group()) - 0xDC00
    return f'invalid byte sequence for encoding "UTF8": 0x{byte:02x}'


def _empty(columns) -> pa.Table:
    return pa.schema([pa.field(n, t.arrow()) for n, t in columns]).empty_table()


def _column(values: list, t: DataType, text: bool) -> pa.Array:
    at = t.arrow()
    if text or pa.types.is_timestamp(at) or pa.types.is_date(at) or numeric.is_numeric_arrow(at) or pa.types.is_time(at):
        if not text:
            for v in values:
                if v is not None and not isinstance(v, (str, int, float)) or isinstance(v, bool):
                    raise TypeError(f"expected {t.name}, got {type(v).__name__}")
        strs = pa.array([None if v is None else str(v) for v in values], pa.string())
        if pa.types.is_boolean(at):
            low = [None if v is None else str(v).strip().lower() for v in values]
            if any(v not in (None, "true", "false", "t", "f", "1", "0") for v in low):
                raise ValueError(f"invalid input for {t.name}")
            return pa.array([None if v is None else v in ("true", "t", "1") for v in low], pa.bool_())
        return numeric.cast(strs, at)
    if pa.types.is_integer(at) and any(isinstance(v, (bool, float)) for v in values):
        raise TypeError(f"expected {t.name}")
    if pa.types.is_string(at) and any(v is not None and not isinstance(v, str) for v in values):
        raise TypeError(f"expected {t.name}")
    return pa.array(values, at)


def _typed(records: list[list], index: np.ndarray, total: int, errors: dict[int, str], columns, text: bool):
    """Records as typed columns; records with a value of the wrong type are dropped as errors."""
    good = np.ones(len(records), dtype=bool)
    arrays = []
    for j, (name, t) in enumerate(columns):
        values = [r[j] for r in records]
        try:
            arrays.append(_column(values, t, text))
            continue
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError, OverflowError):
            pass
        for i, v in enumerate(values):  # find the culprits (rare: only for files with bad records)
            try:
                _column([v], t, text)
            except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError, OverflowError):
                if good[i]:
                    errors[int(index[i])] = f'invalid value {v!r} for column "{name}" of type {t.name}'
                good[i] = False
        arrays.append(None)
    if not good.all():
        keep = [r for r, g in zip(records, good) if g]
        return _typed(keep, index[good], total, errors, columns, text)
    table = pa.Table.from_arrays(arrays, names=[n for n, _ in columns]) if records else _empty(columns)
    return Parsed(table, index, total, errors)
