"""S3 object store through boto3 (imported here only, and lazily).

Objects are whole-object PUTs, which S3 makes atomic. Put-if-absent uses a conditional PUT
(`If-None-Match: *`). Transient failures (connection errors, timeouts, 5xx, throttling) are
retried a few times with exponential backoff; connect timeouts are short, so an unreachable
endpoint or a missing bucket is reported within seconds as a StorageError.
"""
from __future__ import annotations

import os
import random
import time
from typing import Callable

from rw_cli.errors import StorageError
from rw_cli.store.object_store import ObjectStore, check_path

_TRANSIENT_CODES = {"RequestTimeout", "RequestTimeoutException", "SlowDown", "Throttling", "ThrottlingException",
                    "InternalError", "ServiceUnavailable", "OperationAborted"}


class TransientStorageError(StorageError):
    """A failure worth retrying (the store gave up after its own retries)."""

    retryable = True


def parse_s3_url(url: str) -> tuple[str, str]:
    rest = url[len("s3://"):]
    bucket, _, prefix = rest.partition("/")
    if not bucket:
        raise StorageError(f"invalid S3 url {url!r}", hint="use s3://bucket/prefix")
    prefix = prefix.strip("/")
    return bucket, (prefix + "/" if prefix else "")


class S3ObjectStore(ObjectStore):
    def __init__(self, bucket: str, prefix: str = "", *, endpoint: str | None = None, region: str | None = None,
                 connect_timeout: float = 2.0, read_timeout: float = 30.0, attempts: int = 4,
                 backoff: float = 0.1):
        try:
            import boto3
            import botocore.exceptions as bexc
            from botocore.config import Config
        except ImportError:  # pragma: no cover - boto3 is a dependency
            raise StorageError("the S3 state store needs boto3", hint="pip install boto3") from None
        self._bexc = bexc
        self.bucket = bucket
        self.prefix = prefix
        self.endpoint = endpoint
        self.attempts = max(1, attempts)
        self.backoff = backoff
        cfg = Config(connect_timeout=connect_timeout, read_timeout=read_timeout,
                     retries={"max_attempts": 1, "mode": "standard"},
                     s3={"addressing_style": "path"} if endpoint else {})
        region = region or os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or "us-east-1"
        self.client = boto3.session.Session().client("s3", endpoint_url=endpoint, region_name=region, config=cfg)
        self._check_bucket()

    def location(self) -> tuple[str, str | None]:
        return f"s3://{self.bucket}/{self.prefix}", self.endpoint

    # -- error handling ------------------------------------------------------------------
    def _where(self) -> str:
        return f"s3://{self.bucket}/{self.prefix}" + (f" at {self.endpoint}" if self.endpoint else "")

    def _call(self, op: str, what: str, **kw):
        bexc = self._bexc
        delay = self.backoff
        for attempt in range(self.attempts):
            try:
                return getattr(self.client, op)(**kw)
            except bexc.NoCredentialsError:
                raise StorageError(f"no AWS credentials for {self._where()}",
                                   hint="set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY") from None
            except (bexc.EndpointConnectionError, bexc.ConnectTimeoutError, bexc.ReadTimeoutError,
                    bexc.ConnectionClosedError) as e:
                err: Exception = e
                if attempt + 1 == self.attempts:
                    raise TransientStorageError(f"cannot reach the object store {self._where()} ({what}): {e}",
                                                hint="check --s3-endpoint and that the server is running") from None
            except bexc.ClientError as e:
                code = e.response.get("Error", {}).get("Code", "")
                status = e.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0)
                if code not in _TRANSIENT_CODES and status < 500:
                    raise
                err = e
                if attempt + 1 == self.attempts:
                    raise TransientStorageError(f"object store error on {what}: {e}") from None
            except bexc.BotoCoreError as e:
                raise StorageError(f"object store error on {what}: {e}") from None
            time.sleep(delay * (1 + random.random()))
            delay *= 2
        raise StorageError(f"object store error on {what}: {err}")  # pragma: no cover

    @staticmethod
    def _code(e) -> tuple[str, int]:
        return (e.response.get("Error", {}).get("Code", ""),
                e.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0))

    def _check_bucket(self) -> None:
        try:
            self._call("head_bucket", "open", Bucket=self.bucket)
        except self._bexc.ClientError as e:
            code, status = self._code(e)
            if status == 404 or code in ("404", "NoSuchBucket"):
                raise StorageError(f"bucket {self.bucket!r} does not exist at {self.endpoint or 'AWS S3'}",
                                   hint="create the bucket first") from None
            if status in (401, 403):
                raise StorageError(f"access to bucket {self.bucket!r} denied", hint="check the AWS credentials") from None
            raise StorageError(f"cannot open {self._where()}: {e}") from None

    def _key(self, path: str) -> str:
        return self.prefix + check_path(path)

    # -- ObjectStore ---------------------------------------------------------------------
    def put(self, path: str, data: bytes, *, durable: bool = True) -> None:
        try:
            self._call("put_object", f"put {path}", Bucket=self.bucket, Key=self._key(path), Body=bytes(data))
        except self._bexc.ClientError as e:
            raise StorageError(f"cannot write object {path}: {e}") from None

    def put_if_absent(self, path: str, data: bytes, before_publish: Callable[[], None] | None = None) -> bool:
        if before_publish is not None:
            before_publish()
        try:
            self._call("put_object", f"put {path}", Bucket=self.bucket, Key=self._key(path), Body=bytes(data),
                       IfNoneMatch="*")
            return True
        except self._bexc.ClientError as e:
            code, status = self._code(e)
            if status in (409, 412) or code in ("PreconditionFailed", "ConditionalRequestConflict"):
                return False
            raise StorageError(f"cannot write object {path}: {e}") from None

    def _get(self, path: str, **kw) -> bytes:
        try:
            r = self._call("get_object", f"get {path}", Bucket=self.bucket, Key=self._key(path), **kw)
            return r["Body"].read()
        except self._bexc.ClientError as e:
            code, status = self._code(e)
            if status == 404 or code in ("NoSuchKey", "404"):
                raise StorageError(f"object not found: {path}") from None
            if status == 416 or code == "InvalidRange":
                raise StorageError(f"range out of bounds for object {path}") from None
            raise StorageError(f"cannot read object {path}: {e}") from None

    def get(self, path: str) -> bytes:
        return self._get(path)

    def get_range(self, path: str, start: int, length: int) -> bytes:
        if start < 0 or length < 0:
            raise StorageError(f"invalid range {start}+{length} for object {path}")
        if length == 0:
            if not self.exists(path):
                raise StorageError(f"object not found: {path}")
            return b""
        data = self._get(path, Range=f"bytes={start}-{start + length - 1}")
        if len(data) != length:
            raise StorageError(f"range {start}+{length} out of bounds for object {path}")
        return data

    def exists(self, path: str) -> bool:
        try:
            self._call("head_object", f"head {path}", Bucket=self.bucket, Key=self._key(path))
            return True
        except self._bexc.ClientError as e:
            code, status = self._code(e)
            if status == 404 or code in ("NoSuchKey", "404", "NotFound"):
                return False
            raise StorageError(f"cannot read object {path}: {e}") from None

    def list(self, prefix: str) -> list[str]:
        out: list[str] = []
        token = None
        n = len(self.prefix)
        while True:
            kw = {"Bucket": self.bucket, "Prefix": self.prefix + prefix}
            if token:
                kw["ContinuationToken"] = token
            try:
                r = self._call("list_objects_v2", f"list {prefix}", **kw)
            except self._bexc.ClientError as e:
                raise StorageError(f"cannot list objects under {prefix}: {e}") from None
            out.extend(o["Key"][n:] for o in r.get("Contents", []))
            if not r.get("IsTruncated"):
                break
            token = r.get("NextContinuationToken")
        return sorted(out)

    def delete(self, path: str) -> None:
        try:
            self._call("delete_object", f"delete {path}", Bucket=self.bucket, Key=self._key(path))
        except self._bexc.ClientError as e:
            code, status = self._code(e)
            if status == 404:
                return
            raise StorageError(f"cannot delete object {path}: {e}") from None
