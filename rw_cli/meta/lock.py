"""One writer per data directory: an flock'ed LOCK file that names its holder."""
from __future__ import annotations

import fcntl
import os

from rw_cli.errors import LockedError, StorageError


class DataDirLock:
    def __init__(self, data_dir: str):
        try:
            os.makedirs(data_dir, exist_ok=True)
            self.path = os.path.join(data_dir, "LOCK")
            self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as e:  # a file in the way, no permission, a full disk
            reason = "it is not a directory" if os.path.exists(data_dir) and not os.path.isdir(data_dir) \
                else (e.strerror or str(e)).lower()
            raise StorageError(f'could not open data directory "{data_dir}": {reason}') from None
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(self.fd, 64, 0).decode(errors="replace").strip() or "unknown"
            os.close(self.fd)
            raise LockedError(f"data directory {data_dir} is locked by process {holder}") from None
        os.ftruncate(self.fd, 0)
        os.pwrite(self.fd, str(os.getpid()).encode(), 0)

    def release(self) -> None:
        if self.fd >= 0:
            fcntl.flock(self.fd, fcntl.LOCK_UN)
            os.close(self.fd)
            self.fd = -1
