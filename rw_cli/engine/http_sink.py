"""The HTTP sink's writer: each committed row's payload POSTed to a URL (webhooks).

A sink of one column (varchar or jsonb) posts that column to the `url` option; a sink of two
columns named `payload` and `url` posts each row's payload to its own URL. Rows are posted
once the epoch that made them has committed, in order, one request each; `header.<name>`
options become request headers (jsonb payloads are sent as `application/json`, text as
`text/plain; charset=utf-8`). A NULL payload is skipped; so is a row whose URL is not an
http(s) URL. A request that fails (no answer, or a status outside 2xx) is tried three times;
then its row is dropped with a warning and counted: a webhook that is down must not stop the
pipeline, and the sink is at most once by design (RisingWave's HTTP sink makes the same
choice).
"""
from __future__ import annotations

import sys
import time
import urllib.error
import urllib.request
from urllib.parse import urlsplit

import pyarrow as pa

from rw_cli.common.pg_text import format_column
from rw_cli.common.types import DataType
from rw_cli.engine.sink import SinkWriter
from rw_cli.errors import BindError

_TRIES = 3
_TIMEOUT_S = 10.0


def valid_url(url: str) -> bool:
    """An absolute http(s) URL with a host."""
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(parts.netloc) and " " not in url.strip()


def check_http_sink(options: dict, columns: list[tuple[str, DataType]]) -> None:
    """RisingWave's rules for an HTTP sink's options and columns (errors as it words them)."""
    if options.get("auto.schema.change", "false").lower() == "true":
        raise BindError("http sink does not support schema change")
    names = [n for n, _ in columns]
    url = options.get("url")
    if len(columns) == 1:
        if url is None:
            raise BindError("HTTP sink requires url option when schema has exactly 1 column")
        payload_type = columns[0][1]
    else:
        for name in names:
            if name not in ("payload", "url"):
                raise BindError(f"HTTP sink with multiple columns only supports payload and url columns, got {name}")
        if "payload" not in names or "url" not in names:
            missing = "payload" if "payload" not in names else "url"
            raise BindError(f"HTTP sink with multiple columns needs a {missing} column")
        if url is not None:
            raise BindError("HTTP sink url option cannot coexist with url column")
        types = dict(columns)
        if types["url"].name != "character varying":
            raise BindError("HTTP sink url column must be varchar")
        payload_type = types["payload"]
    if payload_type.name not in ("character varying", "jsonb"):
        raise BindError("HTTP sink payload column must be varchar or jsonb")
    if url is not None and not valid_url(url):
        raise BindError(f"invalid URL: {url}")


class HttpWriter(SinkWriter):
    def __init__(self, options: dict, columns: list[tuple[str, DataType]]):
        check_http_sink(options, columns)
        self.url = options.get("url")
        names = [n for n, _ in columns]
        self.payload = names[0] if len(columns) == 1 else "payload"
        self.payload_type = dict(columns)[self.payload]
        json_payload = self.payload_type.name == "jsonb"
        self.headers = {"Content-Type": "application/json" if json_payload else "text/plain; charset=utf-8"}
        for key, value in options.items():
            if key.startswith("header."):
                self.headers[key[len("header."):]] = value
        self.staged: dict[int, pa.Table] = {}
        self.delivered = 0
        self.failed = 0

    def stage(self, epoch: int, rows: pa.Table) -> None:
        if "__op" in rows.column_names:  # ignore_delete: only the rows that are inserted
            ops = rows.column("__op").to_pylist()
            keep = pa.array([op in ("insert", "update_insert") for op in ops])
            rows = rows.filter(keep).drop_columns(["__op"])
        previous = self.staged.get(epoch)
        self.staged[epoch] = rows if previous is None else pa.concat_tables([previous, rows])

    def commit(self, epoch: int) -> bool:
        done = False
        for e in sorted(k for k in self.staged if k <= epoch):
            self._post_all(self.staged.pop(e))
            done = True
        return done

    def _post_all(self, rows: pa.Table) -> None:
        payloads = format_column(rows.column(self.payload), self.payload_type)  # jsonb as PostgreSQL prints it
        urls = rows.column("url").to_pylist() if self.url is None else [self.url] * len(payloads)
        failures = []
        for body, url in zip(payloads, urls):
            if body is None:
                continue
            if url is None or not valid_url(url):
                failures.append(f"not an http(s) URL: {url!r}")
                continue
            error = self._post(url, body)
            if error is None:
                self.delivered += 1
            else:
                failures.append(error)
        if failures:
            self.failed += len(failures)
            sys.stderr.write(f"WARNING:  http sink: {len(failures)} row(s) not delivered ({failures[0]})\n")

    def _post(self, url: str, body: str) -> str | None:
        """None once the URL answered 2xx, else why not (after the tries)."""
        error = ""
        for attempt in range(_TRIES):
            request = urllib.request.Request(url.strip(), data=body.encode(), headers=self.headers, method="POST")
            try:
                with urllib.request.urlopen(request, timeout=_TIMEOUT_S) as response:
                    if 200 <= response.status < 300:
                        return None
                    error = f"{url}: HTTP {response.status}"
            except urllib.error.HTTPError as e:
                error = f"{url}: HTTP {e.code}"
            except (urllib.error.URLError, OSError, ValueError) as e:
                error = f"{url}: {getattr(e, 'reason', e)}"
            if attempt + 1 < _TRIES:
                time.sleep(0.05 * (attempt + 1))
        return error
