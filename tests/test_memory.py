"""The process's allocators are set once a session starts (rw_cli/common/memory.py)."""
from __future__ import annotations

import subprocess
import sys


def test_a_session_keeps_freed_memory_and_normal_pages(tmp_path):
    """In a fresh process: before a session numpy asks for huge pages; after, it does not,
    and a large array freed and allocated again is served without new page faults."""
    code = f"""
import resource, numpy as np
from numpy._core.multiarray import _get_madvise_hugepage
assert _get_madvise_hugepage()
import rw_cli
s = rw_cli.connect({str(tmp_path)!r})
assert not _get_madvise_hugepage()
def faults():
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt
a = np.ones(4 << 20, dtype=np.uint8); del a  # 4 MiB: under the mmap threshold, kept on free
before = faults()
for _ in range(20):
    a = np.ones(4 << 20, dtype=np.uint8); del a
print(faults() - before)
s.close()
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert int(out.stdout.split()[-1]) < 200  # without the settings: about 1,000 pages a round
