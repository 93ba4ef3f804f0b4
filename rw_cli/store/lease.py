"""The writer lease: one writable HummockStorage per state store, whatever the data directory.

A lease is an object `lease/{generation:020d}.json` naming its holder (host, boot id, pid, a
random token), when it was acquired and its last heartbeat. The holder renews it from a
background thread every `heartbeat_secs`; `close()` marks it released.

Opening a writable store reads the newest generation. It is free when it is released, or
stale: its holder is on this host (same host name and boot id) and its process is gone (a
restart after `kill -9` works at once), its host has rebooted since, or its heartbeat is older
than its TTL (3 heartbeat intervals; the only rule for a holder on another host). A live lease
makes the open fail with a StorageError naming the holder. Taking over writes generation + 1
with put-if-absent, so of two openers racing for a stale lease exactly one wins; a holder that
finds a newer generation while renewing has lost its lease and stops writing.

The version-claim fencing of HummockStorage stays the second line of defence.
"""
from __future__ import annotations

import datetime
import json
import os
import re
import socket
import threading
import time
import uuid
from dataclasses import asdict, dataclass

from rw_cli.errors import StorageError, StoreInUseError
from rw_cli.store.object_store import ObjectStore

LEASE_PREFIX = "lease/"
DEFAULT_HEARTBEAT_SECS = 5.0
TTL_HEARTBEATS = 3
_LEASE_RE = re.compile(r"^lease/(\d{20})\.json$")


def lease_path(gen: int) -> str:
    return f"{LEASE_PREFIX}{gen:020d}.json"


def _boot_id() -> str:
    try:
        with open("/proc/sys/kernel/random/boot_id") as f:
            return f.read().strip()
    except OSError:
        return ""


def pid_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OSError:
        return False
    return True


@dataclass
class LeaseRecord:
    host: str
    boot_id: str
    pid: int
    token: str
    acquired: float
    heartbeat: float
    ttl: float
    released: bool = False

    def encode(self) -> bytes:
        return json.dumps(asdict(self), sort_keys=True).encode()

    @staticmethod
    def decode(data: bytes) -> "LeaseRecord | None":
        try:
            d = json.loads(data)
            return LeaseRecord(str(d["host"]), str(d.get("boot_id", "")), int(d["pid"]), str(d["token"]),
                               float(d["acquired"]), float(d["heartbeat"]), float(d["ttl"]),
                               bool(d.get("released", False)))
        except (ValueError, KeyError, TypeError):
            return None  # a torn or foreign object holds nothing

    def stale_reason(self, now: float, host: str, boot_id: str) -> str | None:
        """Why this lease no longer holds the store (None: it is live)."""
        if self.released:
            return "released"
        if self.host == host:
            if self.boot_id and boot_id and self.boot_id != boot_id:
                return "its host has restarted"
            if not pid_alive(self.pid):
                return f"process {self.pid} is gone"
            if self.pid == os.getpid() and self.token not in _HELD:
                return "this process released it (recording the release failed)"
        if now - self.heartbeat > self.ttl:
            return f"no heartbeat for {now - self.heartbeat:.0f}s"
        return None

    def describe(self, now: float) -> str:
        since = datetime.datetime.fromtimestamp(self.acquired).astimezone().isoformat(timespec="seconds")
        return (f"process {self.pid} on host {self.host} holds its writer lease since {since} "
                f"(last heartbeat {max(0.0, now - self.heartbeat):.1f}s ago)")


# the tokens of the leases this process holds: a record of this process with another token
# was released, even when writing the release failed (a full disk)
_HELD: set[str] = set()


class WriterLease:
    """Acquire with `acquire()` (raises StorageError when another writer holds the store),
    renewed in the background until `release()`. `on_lost(error)` is called once if another
    writer takes the lease over (after this holder stopped renewing for longer than the TTL)."""

    def __init__(self, store: ObjectStore, heartbeat_secs: float = DEFAULT_HEARTBEAT_SECS,
                 on_lost=None):
        self.store = store
        self.heartbeat_secs = heartbeat_secs
        self.ttl = heartbeat_secs * TTL_HEARTBEATS
        self.on_lost = on_lost
        self.host = socket.gethostname()
        self.boot_id = _boot_id()
        self.token = uuid.uuid4().hex
        self.gen: int | None = None
        self.record: LeaseRecord | None = None
        self.lost: StorageError | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def _generations(self) -> list[int]:
        return sorted(int(m.group(1)) for p in self.store.list(LEASE_PREFIX) if (m := _LEASE_RE.match(p)))

    def _read(self, gen: int) -> LeaseRecord | None:
        try:
            return LeaseRecord.decode(self.store.get(lease_path(gen)))
        except StorageError:
            return None

    def current(self) -> tuple[int, LeaseRecord | None]:
        """(newest generation, its record) — (0, None) when no lease was ever taken."""
        gens = self._generations()
        if not gens:
            return 0, None
        return gens[-1], self._read(gens[-1])

    def acquire(self) -> None:
        for _ in range(8):
            gen, rec = self.current()
            now = time.time()
            if rec is not None and rec.stale_reason(now, self.host, self.boot_id) is None:
                raise StoreInUseError(
                    f"the state store is in use by another writer: {rec.describe(now)}",
                    hint="stop that process first; a lease held from another host expires "
                         f"{rec.ttl:.0f}s after its last heartbeat (read-only opens are allowed)")
            record = LeaseRecord(self.host, self.boot_id, os.getpid(), self.token, now, now, self.ttl)
            if self.store.put_if_absent(lease_path(gen + 1), record.encode()):
                self.gen, self.record = gen + 1, record
                _HELD.add(self.token)
                for old in self._generations():
                    if old < self.gen:
                        try:
                            self.store.delete(lease_path(old))
                        except StorageError:
                            pass
                self._thread = threading.Thread(target=self._heartbeat_loop, name="hummock-lease", daemon=True)
                self._thread.start()
                return
            # another opener took generation gen + 1 first: look again
        raise StorageError("could not acquire the writer lease of the state store: it keeps changing hands")

    def renew(self) -> None:
        """One heartbeat (the background thread calls this every heartbeat_secs)."""
        with self._lock:
            if self.gen is None or self.lost is not None:
                return
            newest = max(self._generations(), default=0)
            if newest > self.gen:
                newer = self._read(newest)
                who = newer.describe(time.time()) if newer is not None else "another writer holds it"
                self.lost = StorageError(f"this process lost the writer lease of the state store: {who}")
                lost = self.lost
            else:
                self.record.heartbeat = time.time()
                self.store.put(lease_path(self.gen), self.record.encode(), durable=False)
                return
        if self.on_lost is not None:
            self.on_lost(lost)

    def _heartbeat_loop(self) -> None:
        while not self._stop.wait(self.heartbeat_secs):
            try:
                self.renew()
            except Exception:  # noqa: BLE001 - a transient store error: try again next beat
                pass
            if self.lost is not None:
                return

    def release(self) -> None:
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=10)
        with self._lock:
            _HELD.discard(self.token)
            if self.gen is None:
                return
            gen, self.gen = self.gen, None
            if self.lost is not None or max(self._generations(), default=0) > gen:
                return
            self.record.released = True
            try:
                self.store.put(lease_path(gen), self.record.encode())
            except StorageError:
                pass  # the holder is gone once this process exits
