"""Session: `execute(sql) -> Result`, the one entry point for the CLI, the slt runner and tests.

A session owns a data directory (locked), its store, the catalog and the stream runtime.
On open it recovers: the catalog comes from the last committed version, every stream job is
rebuilt, and executors load their state from the store lazily.
"""
from __future__ import annotations

import atexit
import os
import sys
import threading
import weakref
from collections.abc import Iterator

from rw_cli.errors import EpochFailed, InternalError, RwError
from rw_cli.meta.catalog import Catalog
from rw_cli.common.epoch import EPOCH_SHIFT, EpochPair, next_epoch, physical_now
from rw_cli.common.session_config import SessionConfig
from rw_cli.meta.lock import DataDirLock
from rw_cli.result import Result


ENGINES = ("embedded", "spark")


class Session:
    def __init__(self, data_dir: str | None = None, engine: str = "embedded", *, state_store: str | None = None,
                 s3_endpoint: str | None = None, cache_size: int | str | None = None,
                 spark_master: str | None = None):
        from rw_cli.common.memory import tune_allocator
        from rw_cli.store.hummock import HummockStorage
        from rw_cli.store.object_store_url import open_object_store

        tune_allocator()

        if engine not in ENGINES:
            from rw_cli.errors import NotSupported

            raise NotSupported(f"engine {engine}", hint=f"engines: {', '.join(ENGINES)}")
        self.data_dir = os.path.abspath(data_dir or os.environ.get("RW_DATA_DIR") or "rw-data")
        self.engine = engine
        self.state_store_url = state_store or os.path.join(self.data_dir, "store")
        self.s3_endpoint = s3_endpoint
        self.spark_master = spark_master or os.environ.get("RW_SPARK_MASTER") or "local[2]"
        if engine == "spark":
            from rw_cli.spark.context import check_master  # no pyspark import yet

            check_master(self.spark_master, self.state_store_url)
        self.lock = DataDirLock(self.data_dir)
        try:
            self.store = HummockStorage(
                open_object_store(self.state_store_url, endpoint=s3_endpoint), uploader="auto",
                **({} if cache_size is None else {"cache_size": cache_size}))
            self.catalog = Catalog.from_bytes(self.store.extra)
            committed = self.store.committed_epoch
            self.epoch = EpochPair(next_epoch(committed), committed)
            self._runtime = None
            self.settings = SessionConfig()
            self.dirty = False
            self.in_transaction = False  # inside BEGIN ... COMMIT | ROLLBACK (reads only)
            from rw_cli.handler.dml import RowIdGenerator

            self.row_ids = RowIdGenerator()
            # held by every statement and by the pipeline driver's ticks and barriers
            self.mutex = threading.RLock()
        except BaseException:
            self.lock.release()
            raise
        self.closed = False
        _OPEN.add(self)  # closed (and so committed) at interpreter exit if the caller forgets

    @property
    def runtime(self):
        """The stream jobs, rebuilt from the catalog on first use (a plain SELECT needs none)."""
        if self._runtime is None:
            from rw_cli.handler.replan import job_plan
            from rw_cli.stream.recovery import recover

            if self.engine == "spark":
                from rw_cli.spark.runtime import SparkRuntime

                self._runtime = SparkRuntime(self.store, self.state_store_url, self.s3_endpoint, self.spark_master,
                                             log_path=os.path.join(self.data_dir, "spark.log"))
            else:
                from rw_cli.engine.runtime import EmbeddedRuntime

                self._runtime = EmbeddedRuntime()
            recover(self, lambda rel: job_plan(self, rel))
        return self._runtime

    # -- statements ---------------------------------------------------------------------------
    def execute(self, sql: str) -> Result:
        result = Result("EMPTY")
        for result in self.execute_iter(sql):
            pass
        return result

    def execute_iter(self, sql: str) -> Iterator[Result]:
        from rw_cli.handler import dispatch
        from rw_cli.sql.dialect import parse_statement
        from rw_cli.sql.split import split_statements

        if self.closed:
            raise RwError("the session is closed", hint="open a new one with rw_cli.connect(data_dir)")
        for text, offset in split_statements(sql):
            try:
                tree = parse_statement(text, offset)
                with self.mutex:
                    self.settle()
                    result = dispatch(self, tree, text)
            except (RwError, KeyboardInterrupt):
                raise
            except Exception as e:  # a bug: an error like any other, not a traceback
                if os.environ.get("RW_DEBUG"):
                    raise
                raise InternalError.of(e) from e
            yield result

    # -- epochs -------------------------------------------------------------------------------
    @property
    def implicit_flush(self) -> bool:
        return self.settings.implicit_flush

    # at most this many epochs are being uploaded while the stream goes on; then barrier waits
    MAX_EPOCHS_IN_FLIGHT = 2

    def barrier(self, wait: bool = False) -> None:
        """Pass a barrier through every job and hand its epoch, with the catalog, to the
        store's uploader. The stream does not wait for the upload (at most
        MAX_EPOCHS_IN_FLIGHT epochs in flight) unless `wait`, the catalog changed (DDL is
        durable when it returns) or rw_implicit_flush is on. The next statement waits for
        it (`settle`); sinks deliver an epoch only once it is durable."""
        with self.mutex:  # the shell's and the pipeline driver's barriers never interleave
            self.store.check()  # an earlier background upload failed: say so now
            pair = EpochPair(next_epoch(self.epoch.curr), self.epoch.curr)
            try:
                self.runtime.barrier(pair)
            except EpochFailed:
                self._roll_back()
                raise
            catalog = self.catalog.to_bytes()
            wait = wait or self.implicit_flush or catalog != self.store.requested_extra
            self.store.commit_epoch(pair.prev, catalog, wait=False)
            self.runtime.committed(pair.prev)
            self.epoch = pair
            self.dirty = False
            self.store.wait_for_commits(0 if wait else self.MAX_EPOCHS_IN_FLIGHT)
            self._deliver_committed()

    def catch_up(self) -> None:
        """Before a write: RisingWave passes a barrier every barrier_interval_ms, so a write
        lands in an epoch at most that old. An idle session passed none; an epoch older than
        that ends now, and the write's epoch (its rows' `_rw_timestamp`) begins now."""
        with self.mutex:
            age_ms = physical_now() - (self.epoch.curr >> EPOCH_SHIFT)
            if age_ms > self.settings.barrier_interval_ms and not self.in_transaction:
                self.barrier()

    def _roll_back(self) -> None:
        """An epoch failed as a whole (a Spark job could not finish): forget everything since
        the last committed epoch and rebuild the jobs from it; sources resume from their
        committed offsets."""
        self.store.discard_uncommitted()
        self.catalog = Catalog.from_bytes(self.store.requested_extra)
        self._runtime = None
        self.dirty = False

    def settle(self) -> None:
        """Before a statement: wait for the epochs still uploading (so it reads what the
        stream has committed, and sinks have delivered it); a failed upload is its error."""
        with self.mutex:
            if self.store.pending_commits() or self.store.failed is not None:
                self.store.sync()
            self._deliver_committed()

    def flush(self) -> None:
        """FLUSH: a barrier whose epoch is durable (and delivered to sinks) on return."""
        with self.mutex:
            self.barrier(wait=True)

    def _deliver_committed(self) -> None:
        """Sinks deliver every epoch that is durable by now (and no later one)."""
        from rw_cli.engine.sink import notify_committed

        committed = self.store.committed_epoch
        runtime = getattr(self, "_runtime", None)
        if committed > getattr(self, "_delivered_epoch", 0) and runtime is not None:
            notify_committed(runtime, committed)
            self._delivered_epoch = committed

    def tick(self, max_rows: int = 10_000) -> int:
        """Read up to `max_rows` from each source split and push it through the jobs."""
        from rw_cli.engine.source import tick_sources

        with self.mutex:
            n, advanced = tick_sources(self.runtime, max_rows)
            if advanced:
                self.dirty = True
        return n

    def after_write(self) -> None:
        self.dirty = True
        if self.implicit_flush:
            self.barrier()

    # -- lifecycle ----------------------------------------------------------------------------
    def close(self) -> None:
        if getattr(self, "closed", True):
            return
        try:
            try:
                if self.dirty:
                    self.barrier()
                with self.mutex:
                    self.store.sync()  # every epoch handed to the uploader is durable
                    self._deliver_committed()
            finally:
                self.store.close()
        finally:
            self.closed = True
            self.lock.release()

    def __enter__(self) -> "Session":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def connect(data_dir: str | None = None, engine: str = "embedded") -> Session:
    """The Python API: `rw_cli.connect(dir).execute(sql).arrow()`, or `with rw_cli.connect(dir)
    as s:` (closed, and so committed, at the end of the block). A session still open when the
    interpreter exits is closed then, so a script's writes are kept."""
    return Session(data_dir, engine)


_OPEN: "weakref.WeakSet[Session]" = weakref.WeakSet()


@atexit.register
def _close_open_sessions() -> None:
    for session in list(_OPEN):
        try:
            session.close()
        except Exception as e:  # noqa: BLE001 - at exit: say so, never a traceback
            sys.stderr.write(f"WARNING:  the session on {session.data_dir} could not be closed: {e}\n")
