"""Object store fixtures: every behaviour suite runs against memory, local and S3 (the
SeaweedFS server of tests/conftest.py, started once per test process on free loopback ports)."""
from __future__ import annotations

import uuid

import pytest
from servers import BUCKET


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
