"""`rw serve` in a subprocess on a free port, for the wire protocol tests: started once per
test module, always stopped (SIGTERM, then SIGKILL) at teardown."""
from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from servers import die_with_parent, free_ports, stop

REPO = Path(__file__).resolve().parents[2]


@contextlib.contextmanager
def rw_server(data_dir: Path, *extra: str, env: dict | None = None) -> Iterator[int]:
    """Yields the port of a running `rw serve` over `data_dir`."""
    port = free_ports(1)[0]
    log = data_dir.parent / f"{data_dir.name}-serve.log"
    full_env = dict(os.environ, PYTHONPATH=str(REPO), **(env or {}))
    with open(log, "w") as out:
        proc = subprocess.Popen([sys.executable, "-m", "rw_cli.cli", "--data-dir", str(data_dir), "serve",
                                 "--port", str(port), *extra], stdout=out, stderr=subprocess.STDOUT,
                                env=full_env, preexec_fn=die_with_parent)
    try:
        deadline = time.monotonic() + 60
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"rw serve exited: {log.read_text()}")
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
                break
            if time.monotonic() > deadline:
                raise RuntimeError(f"rw serve did not listen: {log.read_text()}")
            time.sleep(0.1)
        yield port
    finally:
        stop(proc, timeout=20)
