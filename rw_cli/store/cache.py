"""Byte-limited LRU caches for SST blocks and SST metas (shared by every reader of a store)."""
from __future__ import annotations

import re
import threading
from collections import OrderedDict
from typing import Any, Callable

from rw_cli.errors import StorageError

DEFAULT_CACHE_SIZE = 256 << 20
META_CACHE_FRACTION = 0.125

_SIZE_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(i?b?)\s*$", re.IGNORECASE)
_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}


def parse_size(text: str | int) -> int:
    """'256MiB', '128MB', '1g', '4096' -> bytes (binary units throughout)."""
    if isinstance(text, int):
        return text
    m = _SIZE_RE.match(str(text))
    if not m:
        raise StorageError(f"invalid size {text!r}", hint="use a number with an optional unit, e.g. 256MiB")
    return int(float(m.group(1)) * _UNITS[m.group(2).lower()])


class LruCache:
    """Thread-safe LRU map whose entries have a byte charge; evicts beyond `capacity`."""

    def __init__(self, capacity: int):
        self.capacity = max(0, int(capacity))
        self._d: OrderedDict[Any, tuple[Any, int]] = OrderedDict()
        self._lock = threading.Lock()
        self.usage = 0
        self.hits = 0
        self.misses = 0

    def get(self, key):
        with self._lock:
            e = self._d.get(key)
            if e is None:
                self.misses += 1
                return None
            self._d.move_to_end(key)
            self.hits += 1
            return e[0]

    def put(self, key, value, charge: int) -> None:
        if charge > self.capacity:
            return
        with self._lock:
            old = self._d.pop(key, None)
            if old is not None:
                self.usage -= old[1]
            self._d[key] = (value, charge)
            self.usage += charge
            while self.usage > self.capacity and self._d:
                _, (_, c) = self._d.popitem(last=False)
                self.usage -= c

    def get_or_load(self, key, load: Callable[[], tuple[Any, int]]):
        v = self.get(key)
        if v is None:
            v, charge = load()
            self.put(key, v, charge)
        return v

    def evict_prefix(self, pred: Callable[[Any], bool]) -> None:
        with self._lock:
            for k in [k for k in self._d if pred(k)]:
                self.usage -= self._d.pop(k)[1]

    def __len__(self) -> int:
        return len(self._d)
