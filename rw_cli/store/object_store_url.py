"""Which object store a URL names: the one place that maps a `--state-store` URL (or a
helper process's copy of it) to an ObjectStore, importing S3 support only for s3:// URLs."""
from __future__ import annotations

from rw_cli.errors import StorageError
from rw_cli.store.object_store import LocalObjectStore, MemoryObjectStore, ObjectStore


def open_object_store(url: str, *, endpoint: str | None = None) -> ObjectStore:
    """`memory://`, `s3://bucket/prefix` (with an optional endpoint URL), `file://DIR` or a
    plain directory path."""
    if url.startswith("memory://"):
        return MemoryObjectStore()
    if url.startswith("s3://"):
        from rw_cli.store.s3 import S3ObjectStore, parse_s3_url

        bucket, prefix = parse_s3_url(url)
        return S3ObjectStore(bucket, prefix, endpoint=endpoint)
    if url.startswith("file://"):
        return LocalObjectStore(url[len("file://"):])
    if "://" in url:
        raise StorageError(f"unknown object store url {url!r}", hint="use a directory, file://DIR, s3://BUCKET/PREFIX or memory://")
    return LocalObjectStore(url)
