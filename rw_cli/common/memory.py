"""The process's allocators, set for a stream engine's churn of short-lived large arrays.

Every epoch allocates and frees arrays of hundreds of kilobytes to tens of megabytes (hashes,
positions, gathered columns). By default glibc returns freed memory at the top of its heap to
the kernel and numpy asks for transparent huge pages on arrays over 4 MB, so most of those
arrays start on fresh pages that the kernel must zero, 2 MB at a time: in Nexmark q4 at 10M
events that was a quarter of the stream thread's time, in the kernel (`clear_page_erms`
under `do_huge_pmd_anonymous_page`). Keeping freed memory for reuse up to TRIM_BYTES and
leaving pages at their normal size removes most of it (1.1 s -> 0.45 s of system time).
"""
from __future__ import annotations

import ctypes
import os

# glibc's mallopt parameters (malloc.h)
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
TRIM_BYTES = 256 << 20  # freed memory kept at the heap's top before it goes back to the kernel
MMAP_BYTES = 32 << 20  # larger blocks are mapped on their own (glibc's maximum threshold)

_tuned = False


def _libc() -> ctypes.CDLL:
    """glibc by its soname; `find_library` (which runs `ldconfig -p`, a process of its own on
    every start) only where that name is not there."""
    try:
        return ctypes.CDLL("libc.so.6")
    except OSError:
        from ctypes.util import find_library
        return ctypes.CDLL(find_library("c"))


def tune_allocator() -> None:
    """Once per process; a no-op where glibc or numpy's switch is not there."""
    global _tuned
    if _tuned:
        return
    _tuned = True
    try:
        libc = _libc()
        libc.mallopt(_M_TRIM_THRESHOLD, TRIM_BYTES)
        libc.mallopt(_M_MMAP_THRESHOLD, MMAP_BYTES)
    except (OSError, AttributeError):
        pass
    try:
        from numpy._core.multiarray import _set_madvise_hugepage
    except ImportError:
        try:
            from numpy.core.multiarray import _set_madvise_hugepage
        except ImportError:
            return
    _set_madvise_hugepage(False)


def machine_memory() -> int | None:
    """The bytes of memory this process may use: the machine's, or its control group's limit
    when lower (a container). None where neither can be read."""
    total = None
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        pass
    for path in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            with open(path) as f:
                text = f.read().strip()
        except OSError:
            continue
        if text.isdigit() and int(text) > 0:
            total = int(text) if total is None else min(total, int(text))
        break
    return total if total and total > 0 else None


def memory_share(divisor: int, minimum: int, fallback: int) -> int:
    """1/`divisor` of `machine_memory()`, at least `minimum`; `fallback` where it cannot be
    read. What the process's caches size themselves by (state caches, snapshots)."""
    total = machine_memory()
    return fallback if total is None else max(minimum, total // divisor)
