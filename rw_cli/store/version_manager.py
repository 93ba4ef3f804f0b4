"""The version manager: the current version, pins, commits, the low watermark and vacuum.

A writable open claims the next version number (put-if-absent), so an older writer still
running is fenced off at its next commit; SST ids start with the claim's number. Version
writers (checkpoints, compaction) take turns: `commit` derives the next version from the
current one under the state lock, writes it — the commit point, an fsync — outside that
lock, so the stream's writes and reads never wait for it, and installs it under the lock.

Pinned versions keep their SSTs from vacuum; pinned epochs stay above the low watermark
(the lowest epoch compaction must keep readable).
"""
from __future__ import annotations

import threading
from collections import Counter
from typing import Callable

from rw_cli.errors import StorageError
from rw_cli.store.object_store import ObjectStore
from rw_cli.store.version import LOG_PREFIX, SST_PREFIX, HummockVersion, VersionStore, parse_sst_id, version_path


class VersionManager:
    """The store's versions. `lock` is the store's state lock, shared with the shared buffer
    and the SST ids so that a reader pins a version and copies the buffer at one instant."""

    def __init__(self, object_store: ObjectStore, lock: threading.RLock, *, claim: bool):
        self.object_store = object_store
        self._lock = lock
        self._versions = VersionStore(object_store)
        self._commit_lock = threading.Lock()  # version writers take turns
        self._pinned_versions: Counter[int] = Counter()
        self._pinned_version_objs: dict[int, HummockVersion] = {}
        self._pinned_epochs: Counter[int] = Counter()
        version = self._versions.load_current()
        if claim:
            # second line of defence: an older writer still running is fenced on its next commit
            version = version.copy(id=version.id + 1)
            self._versions.commit(version)
        self.current = version
        self.claim = version.id  # the version number this open claimed (the SST ids' prefix)
        # versions below this epoch may have been collapsed by an earlier compaction
        self.watermark_floor = version.max_committed_epoch
        # time travel (rw_cli.store.retention): the tables whose versions stay readable for
        # the retention (ms); set by the session from its catalog
        self.retention: tuple[frozenset[int], int] = (frozenset(), 0)

    # -- pins --------------------------------------------------------------------------------
    def pin(self, v: HummockVersion | None = None) -> HummockVersion:
        """Pin `v` (default: the current version) until `unpin`."""
        with self._lock:
            if v is None:
                v = self.current
                self._pinned_version_objs[v.id] = v
            self._pinned_versions[v.id] += 1
            return v

    def unpin(self, v: HummockVersion) -> None:
        with self._lock:
            self._pinned_versions[v.id] -= 1
            if self._pinned_versions[v.id] <= 0:
                del self._pinned_versions[v.id]
                if v.id != self.current.id:
                    self._pinned_version_objs.pop(v.id, None)

    def pin_epoch(self, epoch: int) -> HummockVersion:
        """Pin the current version and keep `epoch` readable (above the low watermark)."""
        with self._lock:
            if epoch < self.watermark_floor:
                raise StorageError(f"epoch {epoch} is no longer readable: compaction has collapsed versions up to "
                                   f"epoch {self.watermark_floor}")
            v = self.pin()
            self._pinned_epochs[epoch] += 1
            return v

    def unpin_epoch(self, epoch: int, v: HummockVersion) -> None:
        with self._lock:
            self._pinned_epochs[epoch] -= 1
            if self._pinned_epochs[epoch] <= 0:
                del self._pinned_epochs[epoch]
            self.unpin(v)

    def compaction_watermark(self):
        """The watermark compaction runs with: the low watermark, or (time travel) a
        rw_cli.store.retention.Retention keeping the retained tables' recent versions."""
        from rw_cli.common.epoch import EPOCH_SHIFT, physical_now
        from rw_cli.store.retention import compaction_watermark

        low = self.low_watermark()
        tables, retention_ms = self.retention
        return compaction_watermark(low, tables, max(physical_now() - retention_ms, 0) << EPOCH_SHIFT)

    def low_watermark(self) -> int:
        """The lowest epoch compaction must keep readable; what it returns stays readable
        (later pins at older epochs are refused)."""
        with self._lock:
            wm = min([self.current.max_committed_epoch, *self._pinned_epochs])
            self.watermark_floor = max(self.watermark_floor, wm)
            return wm

    # -- commits -----------------------------------------------------------------------------
    def commit(self, make: Callable[[HummockVersion], HummockVersion | None],
               installed: Callable[[HummockVersion], None] | None = None,
               hint: bool = True, before_publish: Callable[[], None] | None = None) -> HummockVersion | None:
        """Write the version `make` derives from the current one (None: nothing to commit)
        and make it current, then `installed(v)` under the same lock. Not `hint`: CURRENT is
        left to a later `write_hint`. `before_publish`: see VersionStore.commit."""
        with self._commit_lock:
            with self._lock:
                v = make(self.current)
            if v is None:
                return None
            self._versions.commit(v, hint, before_publish)
            with self._lock:
                old = self.current
                self.current = v
                if old.id not in self._pinned_versions:
                    self._pinned_version_objs.pop(old.id, None)
                if installed is not None:
                    installed(v)
        return v

    def write_hint(self) -> None:
        """CURRENT := the current version (after commits made with hint=False). Without the
        commit lock: a version writer holding it is not waited for, and a hint one version
        behind, should another commit slip in between, is still a hint."""
        with self._lock:
            vid = self.current.id
        self._versions.write_hint(vid)

    def latest(self) -> HummockVersion:
        """The newest version committed to the object store (by whichever process writes
        it): what a read-only open reads next."""
        return self._versions.load_current()

    def follow(self, v: HummockVersion) -> None:
        """Read `v` from now on without committing it (a Spark task reads the version its
        driver committed); the version object is kept when it is the same one."""
        with self._lock:
            if self.current.id != v.id or self.current.max_committed_epoch != v.max_committed_epoch:
                self.current = v

    # -- vacuum ------------------------------------------------------------------------------
    def vacuum(self, in_flight: Callable[[], set[int]], deleted: Callable[[int], None]) -> int:
        """Delete SST and log objects no version references (current or pinned) and that are
        not `in_flight` (being written, or reserved), and version objects older than the
        current one. `deleted(id)` is told of each object deleted. Returns how many objects
        were deleted."""
        listed = self.object_store.list(SST_PREFIX) + self.object_store.list(LOG_PREFIX)
        versions = self._versions.version_ids()
        with self._lock:
            referenced = in_flight()
            referenced |= self.current.sst_ids()
            for v in self._pinned_version_objs.values():
                referenced |= v.sst_ids()
            current = self.current.id
        n = 0
        for p in listed:
            sid = parse_sst_id(p)
            if sid is not None and sid not in referenced:
                self.object_store.delete(p)
                deleted(sid)
                n += 1
        for vid in versions:
            if vid < current:
                self.object_store.delete(version_path(vid))
                n += 1
        return n
