"""Where file connectors read and write: a local directory or an S3 bucket (prefix), both as
an ObjectStore (rw_cli.store), whose puts are atomic: an object is whole or absent.

RisingWave's options: `posix_fs.root` (sources), `path` / `fs.path` (file sinks);
`s3.bucket_name`, `s3.path` (sinks: the prefix), `s3.region_name`, `s3.endpoint_url`,
`s3.credentials.access`, `s3.credentials.secret`.
"""
from __future__ import annotations

import os
import threading

from rw_cli.errors import BindError

_ENV_LOCK = threading.Lock()


def local_store(root: str):
    from rw_cli.store.object_store import LocalObjectStore

    return LocalObjectStore(root)


def s3_store(options: dict[str, str], prefix_key: str | None = None):
    """An S3ObjectStore for the connector's bucket; credentials from the options if given,
    else from the environment (AWS_ACCESS_KEY_ID, ...)."""
    from rw_cli.store.s3 import S3ObjectStore

    bucket = options.get("s3.bucket_name")
    if not bucket:
        raise BindError("the s3 connector needs s3.bucket_name")
    prefix = (options.get(prefix_key) or "").strip("/") if prefix_key else ""
    prefix = prefix + "/" if prefix else ""
    creds = {"AWS_ACCESS_KEY_ID": options.get("s3.credentials.access"),
             "AWS_SECRET_ACCESS_KEY": options.get("s3.credentials.secret")}
    with _ENV_LOCK:  # boto3 reads credentials when the client is made
        saved = {k: os.environ.get(k) for k in creds}
        try:
            for k, v in creds.items():
                if v:
                    os.environ[k] = v
            return S3ObjectStore(bucket, prefix, endpoint=options.get("s3.endpoint_url"),
                                 region=options.get("s3.region_name"))
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
