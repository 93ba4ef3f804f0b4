"""Hummock versions: the committed set of SSTs and append logs plus the max committed epoch.

`version/{id:020d}.json` objects are written once (put_if_absent) and never overwritten; the
write of version N is the commit point. `CURRENT` names the latest version and is only a hint:
on open we load it (or scan for the highest version if it is missing or corrupt) and then roll
forward over any later version objects that exist.
"""
from __future__ import annotations

import base64
import json
import re
import zlib
from dataclasses import dataclass, field
from typing import Callable

from rw_cli.errors import StorageError
from rw_cli.store.object_store import ObjectStore

VERSION_PREFIX = "version/"
SST_PREFIX = "sst/"
LOG_PREFIX = "log/"
CURRENT = "CURRENT"
_VERSION_RE = re.compile(r"^version/(\d{20})\.json$")
_SST_RE = re.compile(r"^sst/(\d+)\.sst$")
_LOG_RE = re.compile(r"^log/(\d+)\.arrow$")


def version_path(vid: int) -> str:
    return f"{VERSION_PREFIX}{vid:020d}.json"


def sst_path(sst_id: int) -> str:
    return f"{SST_PREFIX}{sst_id}.sst"


def log_path(segment_id: int) -> str:
    return f"{LOG_PREFIX}{segment_id}.arrow"


def parse_sst_id(path: str) -> int | None:
    """The id of an SST or log segment object (they share one id space)."""
    m = _SST_RE.match(path) or _LOG_RE.match(path)
    return int(m.group(1)) if m else None


@dataclass
class SstInfo:
    """What a version knows of one SST (enough to read its meta with one ranged get)."""

    id: int
    file_size: int
    meta_offset: int
    meta_len: int
    meta_crc: int
    smallest_key: bytes
    largest_key: bytes
    min_epoch: int
    max_epoch: int
    key_count: int
    table_ids: list[int] = field(default_factory=list)

    @property
    def path(self) -> str:
        return sst_path(self.id)

    def to_json(self) -> dict:
        return {
            "id": self.id, "file_size": self.file_size, "meta_offset": self.meta_offset,
            "meta_len": self.meta_len, "meta_crc": self.meta_crc,
            "smallest_key": base64.b64encode(self.smallest_key).decode(),
            "largest_key": base64.b64encode(self.largest_key).decode(),
            "min_epoch": self.min_epoch, "max_epoch": self.max_epoch, "key_count": self.key_count,
            "table_ids": self.table_ids,
        }

    @staticmethod
    def from_json(d: dict) -> "SstInfo":
        return SstInfo(d["id"], d["file_size"], d["meta_offset"], d["meta_len"], d["meta_crc"],
                       base64.b64decode(d["smallest_key"]), base64.b64decode(d["largest_key"]),
                       d["min_epoch"], d["max_epoch"], d["key_count"], list(d.get("table_ids", [])))


@dataclass
class LogSegment:
    """One object of an append log: the rows one table appended over epochs
    [min_epoch, max_epoch], as an Arrow IPC file. A merged segment has a higher level."""

    id: int
    table_id: int
    min_epoch: int
    max_epoch: int
    rows: int
    file_size: int
    level: int = 0

    @property
    def path(self) -> str:
        return log_path(self.id)

    def to_json(self) -> dict:
        return {"log": self.id, "table_id": self.table_id, "min_epoch": self.min_epoch,
                "max_epoch": self.max_epoch, "rows": self.rows, "file_size": self.file_size, "level": self.level}

    @staticmethod
    def from_json(d: dict) -> "LogSegment":
        return LogSegment(d["log"], d["table_id"], d["min_epoch"], d["max_epoch"], d["rows"], d["file_size"],
                          d.get("level", 0))


@dataclass
class HummockVersion:
    id: int = 0
    max_committed_epoch: int = 0
    levels: list[list[SstInfo]] = field(default_factory=lambda: [[]])  # levels[0] = L0, newest first
    extra: bytes = b""
    # append logs: table id -> its segments, oldest first (see HummockStorage.append_rows)
    logs: dict[int, list[LogSegment]] = field(default_factory=dict)
    # the newest epoch of a tombstone a compaction dropped (a key deleted then left no
    # trace): what was written after it can be told from the SSTs (`writes_since`)
    tombstones_dropped_through: int = 0

    def ssts(self) -> list[SstInfo]:
        return [s for level in self.levels for s in level]

    def sst_ids(self) -> set[int]:
        """The ids of every object this version references: SSTs and log segments."""
        return {s.id for level in self.levels for s in level} | {g.id for segs in self.logs.values() for g in segs}

    def level_largest_keys(self, i: int) -> list[bytes]:
        """The largest key of each SST of level i >= 1 (sorted: they do not overlap), for
        bisecting to the SSTs a key range touches. Cached: a version is not changed once
        committed (changes go to a copy)."""
        cache = self.__dict__.setdefault("_largest_keys", {})
        got = cache.get(i)
        if got is None or len(got) != len(self.levels[i]):
            got = cache[i] = [s.largest_key for s in self.levels[i]]
        return got

    def level_size(self, i: int) -> int:
        return sum(s.file_size for s in self.levels[i]) if i < len(self.levels) else 0

    def copy(self, **changes) -> "HummockVersion":
        v = HummockVersion(self.id, self.max_committed_epoch, [list(lv) for lv in self.levels], self.extra,
                           {t: list(segs) for t, segs in self.logs.items()}, self.tombstones_dropped_through)
        for k, val in changes.items():
            setattr(v, k, val)
        return v

    def encode(self) -> bytes:
        body = {
            "id": self.id,
            "max_committed_epoch": self.max_committed_epoch,
            "levels": [[s.to_json() for s in level] for level in self.levels],
            "extra": base64.b64encode(self.extra).decode(),
        }
        if self.logs:
            body["logs"] = [g.to_json() for t in sorted(self.logs) for g in self.logs[t]]
        if self.tombstones_dropped_through:
            body["tombstones_dropped_through"] = self.tombstones_dropped_through
        text = json.dumps(body, separators=(",", ":"), sort_keys=True)
        return json.dumps({"crc32": zlib.crc32(text.encode()), "version": body},
                          separators=(",", ":"), sort_keys=True).encode()

    @staticmethod
    def decode(data: bytes, path: str = "version") -> "HummockVersion":
        try:
            outer = json.loads(data)
            body = outer["version"]
            text = json.dumps(body, separators=(",", ":"), sort_keys=True)
            if zlib.crc32(text.encode()) != outer["crc32"]:
                raise StorageError(f"corrupted object {path}: checksum mismatch")
            logs: dict[int, list[LogSegment]] = {}
            for d in body.get("logs", []):
                g = LogSegment.from_json(d)
                logs.setdefault(g.table_id, []).append(g)
            return HummockVersion(
                id=body["id"], max_committed_epoch=body["max_committed_epoch"],
                levels=[[SstInfo.from_json(s) for s in level] for level in body["levels"]] or [[]],
                extra=base64.b64decode(body["extra"]), logs=logs,
                tombstones_dropped_through=body.get("tombstones_dropped_through", 0),
            )
        except StorageError:
            raise
        except (ValueError, KeyError, TypeError) as e:
            raise StorageError(f"corrupted object {path}: {e}") from e


class VersionStore:
    """Loads and commits versions in an object store."""

    def __init__(self, store: ObjectStore):
        self.store = store

    def _load(self, vid: int) -> HummockVersion:
        p = version_path(vid)
        v = HummockVersion.decode(self.store.get(p), p)
        if v.id != vid:
            raise StorageError(f"corrupted object {p}: id mismatch")
        return v

    def load_current(self) -> HummockVersion:
        version: HummockVersion | None = None
        try:
            if self.store.exists(CURRENT):
                vid = int(self.store.get(CURRENT).decode().strip())
                version = self._load(vid)
        except (StorageError, ValueError, UnicodeDecodeError):
            version = None
        if version is None:
            ids = sorted((int(m.group(1)) for p in self.store.list(VERSION_PREFIX)
                          if (m := _VERSION_RE.match(p))), reverse=True)
            for vid in ids:
                try:
                    version = self._load(vid)
                    break
                except StorageError:
                    continue
            if version is None:
                if ids:
                    raise StorageError("no readable version in the state store (all corrupted)")
                return HummockVersion()
        # roll forward over versions committed after CURRENT was last written
        while self.store.exists(version_path(version.id + 1)):
            version = self._load(version.id + 1)
        # a fenced-off writer may have left a lower CURRENT behind: the highest version wins
        for vid in sorted(self.version_ids(), reverse=True):
            if vid <= version.id:
                break
            try:
                return self._load(vid)
            except StorageError:
                continue
        return version

    def current_hint(self) -> int | None:
        try:
            return int(self.store.get(CURRENT).decode().strip())
        except (StorageError, ValueError, UnicodeDecodeError):
            return None

    def commit(self, version: HummockVersion, hint: bool = True,
               before_publish: Callable[[], None] | None = None) -> None:
        """Write `version` (the commit point), then CURRENT naming it unless not `hint`:
        the caller writes it later (`write_hint`), off the path a waiter waits on.
        `before_publish()`: waits until the objects the version lists are durable; it runs
        once the version's own bytes are written and before the version can be seen."""
        p = version_path(version.id)
        current = self.current_hint()
        if current is not None and current >= version.id and self.store.exists(version_path(current)):
            # a newer writer claimed versions since (and vacuum may have deleted the object
            # this one would collide with): fenced off. A CURRENT that names no version is
            # damaged, not a writer: the version objects are the truth, and this commit fixes it
            raise StorageError(f"version {current} of the state store is newer than this writer's {version.id - 1}: "
                               f"another writer has opened it",
                               hint="only one process may write to a state store at a time")
        if not self.store.put_if_absent(p, version.encode(), before_publish):
            raise StorageError(f"version {version.id} already exists in the state store: another writer "
                               f"has opened it", hint="only one process may write to a state store at a time")
        if hint:
            self.write_hint(version.id)

    def write_hint(self, vid: int) -> None:
        """CURRENT := `vid`: a hint (open rolls forward from it), so not made durable, and a
        failure to write it is no error."""
        try:
            self.store.put(CURRENT, str(vid).encode(), durable=False)
        except StorageError:
            pass  # CURRENT is a hint; the version object is the commit point

    def version_ids(self) -> list[int]:
        return sorted(int(m.group(1)) for p in self.store.list(VERSION_PREFIX) if (m := _VERSION_RE.match(p)))
