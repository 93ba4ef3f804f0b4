"""Session: `execute(sql) -> Result`, the one entry point for the CLI, the slt runner and tests.

A session owns a data directory (locked), its store, the catalog and the stream runtime.
On open it recovers: the catalog comes from the last committed version, every stream job is
rebuilt, and executors load their state from the store lazily.
"""
from __future__ import annotations

import atexit
import contextlib
import os
import sys
import threading
import weakref
from collections.abc import Iterator, Sequence

from rw_cli.errors import EpochFailed, InternalError, ReadOnlyError, RwError, SqlSyntaxError, StorageError
from rw_cli.meta.catalog import INDEX, MATERIALIZED_VIEW, TABLE, VIEW, Catalog
from rw_cli.common import startup_gc
from rw_cli.common.epoch import EPOCH_SHIFT, EpochPair, next_epoch, physical_now
from rw_cli.common.row_id import RowIdGenerator
from rw_cli.engine import eval_errors
from rw_cli.common.session_config import SessionConfig
from rw_cli.meta.lock import DataDirLock
from rw_cli.result import Result


ENGINES = ("embedded", "spark")


def _reported(e: Exception) -> InternalError:
    """A bug, as an error like any other; with RW_DEBUG=1 the original, traceback and all."""
    if os.environ.get("RW_DEBUG"):
        raise e
    return InternalError.of(e)


class Session:
    def __init__(self, data_dir: str | None = None, engine: str = "embedded", *, state_store: str | None = None,
                 s3_endpoint: str | None = None, cache_size: int | str | None = None,
                 spark_master: str | None = None, read_only: bool = False):
        from rw_cli.common.memory import tune_allocator

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
        # a read-only open takes no lock: it reads what the writer has committed, refreshed
        # before each statement, and runs no stream job
        self.read_only = read_only
        self.lock = ReadOnlyOpen(self.data_dir) if read_only else DataDirLock(self.data_dir)
        self.cache_size = cache_size
        try:
            self.store = self._open_store(read_only)
            self._load_committed()
            self._runtime = None
            self._retained_for: bytes | None = None  # the catalog compaction's retention follows
            self.settings = self.new_settings()
            self.dirty = False
            self._lost_writes: str | None = None  # what a failed commit lost, until a statement says so
            self._reported_failure: BaseException | None = None  # the store failure a statement reported
            self.in_transaction = False  # or the open read-only block (rw_cli.handler.transaction)
            self.cursors: dict[str, object] = {}  # DECLAREd cursors by name (rw_cli.handler.subscription)
            self.row_ids = RowIdGenerator()
            # held by every statement and by the pipeline driver's ticks and barriers
            self.mutex = threading.RLock()
        except BaseException:
            self.lock.release()
            raise
        self.closed = False
        _OPEN.add(self)  # closed (and so committed) at interpreter exit if the caller forgets

    def _open_store(self, read_only: bool):
        from rw_cli.store.hummock import HummockStorage
        from rw_cli.store.object_store_url import open_object_store

        return HummockStorage(open_object_store(self.state_store_url, endpoint=self.s3_endpoint),
                              uploader="thread" if read_only else "auto", read_only=read_only,
                              **({} if self.cache_size is None else {"cache_size": self.cache_size}))

    @property
    def runtime(self):
        """The stream jobs, rebuilt from the catalog on first use (a plain SELECT needs none)."""
        if self.read_only:
            raise ReadOnlyError("a read-only session runs no stream jobs")
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

    @property
    def has_stream_jobs(self) -> bool:
        """Whether anything needs the stream runtime running between statements: it is built
        already, or the catalog holds a job (a view, sink, index or source kept up to date)
        or a table fed by a connector. Plain tables and views need none until a write."""
        if self._runtime is not None:
            return True
        return any(rel.kind not in (TABLE, VIEW) or rel.connector for rel in self.catalog.in_creation_order())

    # -- statements ---------------------------------------------------------------------------
    def execute(self, sql: str, params: Sequence[object] | None = None) -> Result:
        """Run `sql` (one statement or several); the last one's result. `params`: the values
        of `$1`, `$2`, ... (PostgreSQL's placeholders), quoted as literals of their Python
        types (rw_cli.sql.literals)."""
        result = Result("EMPTY")
        for result in self.execute_iter(sql, params):
            pass
        return result

    def execute_iter(self, sql: str, params: Sequence[object] | None = None) -> Iterator[Result]:
        from rw_cli.handler import dispatch, prepared, transaction
        from rw_cli.sql.dialect import parse_statement
        from rw_cli.sql.split import split_statements, unterminated

        if self.closed:
            raise RwError("the session is closed", hint="open a new one with rw_cli.connect(data_dir)")
        if params is not None:
            from rw_cli.sql.literals import python_literal
            from rw_cli.sql.placeholders import substitute

            if isinstance(params, (str, bytes)) or not isinstance(params, Sequence):
                raise RwError("params must be a list or tuple of the values of $1, $2, ...")
            sql = substitute(sql, [python_literal(v) for v in params])
        if "/*" in sql and (found := unterminated(sql)) is not None:
            # PostgreSQL's lexer refuses the whole text; splitting would drop the open comment
            raise SqlSyntaxError(found[0], position=found[1])
        for text, offset in split_statements(sql):
            try:
                # a SELECT run before under the same catalog and parameters is not parsed again
                tree = parse_statement(text, offset) if prepared.find(self, text) is None else None
                with self.mutex:
                    transaction.check_idle(self)  # idle_in_transaction_session_timeout
                    if self.read_only:
                        result = self._read_only_dispatch(dispatch, tree, text, offset)
                    else:
                        try:
                            if tree is None:
                                self._prepare_for(writes=False)
                            else:
                                self._prepare(tree)
                            result = self._run_statement(dispatch, tree, text, offset)
                        except StorageError:
                            self._reported_failure = self.store.failed  # this statement said so
                            raise
                        if self._lost_writes is not None:  # said once, by the statement that went on
                            result.notices.insert(0, self._lost_writes)
                            self._lost_writes = None
                        result.notices += eval_errors.take()  # met by the epochs it ran
            except (RwError, KeyboardInterrupt):
                raise
            except Exception as e:  # a bug: an error like any other, not a traceback
                raise _reported(e) from e
            finally:
                startup_gc.resume()  # start-up is over (rw_cli.common.startup_gc)
                transaction.touch(self)  # a block is idle from the end of its last statement
            yield result

    def _run_statement(self, dispatch, tree, text: str, offset: int) -> Result:
        """Run statement `text`; without its tree, it is a SELECT bound before: run as bound
        while that is still valid (rw_cli.handler.prepared), else parsed again."""
        if tree is None:
            from rw_cli.handler import prepared
            from rw_cli.handler.query import run_prepared
            from rw_cli.sql.dialect import parse_statement

            bound = prepared.find(self, text)
            if bound is not None:
                return run_prepared(self, bound)
            tree = parse_statement(text, offset)
        return self._dispatch(dispatch, tree, text)

    def _dispatch(self, dispatch, tree, text: str) -> Result:
        """Run a statement; unless it is one that leaves the catalog as it was (a query, DML,
        FLUSH), the catalog is said to have changed, even when it failed half-way."""
        from rw_cli.handler import keeps_catalog

        try:
            return dispatch(self, tree, text)
        finally:
            if not keeps_catalog(tree):
                self.catalog.changed()

    def cursor_shape(self, name: str) -> Result | None:
        """The columns FETCH from cursor `name` returns (an empty result), for a driver that
        describes the cursor's portal; None when there is no such query cursor."""
        from rw_cli.handler.subscription import cursor_shape

        with self.mutex:
            return cursor_shape(self, name)

    def insert(self, table: str, data) -> int:
        """Insert rows from Python: a pyarrow Table or RecordBatch, a pandas or polars
        DataFrame, or a dict of column lists. Columns match the table's by name (the others
        get their DEFAULT or NULL); values are cast with PostgreSQL's rules, and a value that
        does not fit stops the insert before any row is written. Returns the rows inserted.
        Like INSERT, the rows are committed at the next FLUSH, barrier or close."""
        from rw_cli.handler.dml import insert_data

        return self._write("INSERT", lambda: insert_data(self, table, data))

    def copy_in(self, table: str, columns: list[str] | None, data) -> Result:
        """COPY table FROM STDIN: insert rows a client sent as text (`data`, an Arrow table
        of text columns)."""
        from rw_cli.handler.copy import copy_in

        return self._write("COPY FROM", lambda: copy_in(self, table, columns, data))

    def _write(self, word: str, run):
        """A write from outside SQL text with a statement's guarantees: the mutex, the store
        checked first, a bug reported as an error."""
        if self.closed:
            raise RwError("the session is closed", hint="open a new one with rw_cli.connect(data_dir)")
        if self.read_only:
            raise ReadOnlyError(f"cannot execute {word} in a read-only session",
                                hint=f"another process writes {self.data_dir}: this one opened it read-only")
        try:
            with self.mutex:
                if self.in_transaction:
                    raise ReadOnlyError(f"cannot execute {word} in a read-only transaction")
                self._prepare_for(writes=True)
                return run()
        except (RwError, KeyboardInterrupt):
            raise
        except Exception as e:  # a bug: an error like any other, not a traceback
            raise _reported(e) from e

    # -- epochs -------------------------------------------------------------------------------
    @property
    def implicit_flush(self) -> bool:
        return self.settings.implicit_flush

    # at most this many epochs are being uploaded while the stream goes on; then barrier waits
    MAX_EPOCHS_IN_FLIGHT = 2

    def new_settings(self) -> SessionConfig:
        """The parameters a new connection starts with: the defaults, over which ALTER SYSTEM
        SET gave the data directory's own."""
        return SessionConfig(system=lambda: self.catalog.system_params)

    def barrier(self, wait: bool = False) -> None:
        """Pass a barrier through every job and hand its epoch, with the catalog, to the
        store's uploader. The stream does not wait for the upload (at most
        MAX_EPOCHS_IN_FLIGHT epochs in flight) unless `wait`, the catalog changed (DDL is
        durable when it returns) or rw_implicit_flush is on. The next statement waits for
        it (`settle`); sinks deliver an epoch only once it is durable."""
        with self.mutex, self._streaming():  # the shell's and the pipeline driver's barriers never interleave
            self.store.check()  # an earlier background upload failed: say so now
            pair = EpochPair(next_epoch(self.epoch.curr), self.epoch.curr)
            try:
                from rw_cli.stream import background, batch_refresh

                background.advance(self)  # jobs created in the background: their next rows
                batch_refresh.advance(self)  # batch refresh MVs whose interval has passed
                self.runtime.barrier(pair)
            except EpochFailed:
                self._roll_back()
                raise
            except MemoryError as e:  # the epoch's work does not fit: recover as RisingWave would
                self._roll_back()
                raise EpochFailed(f"epoch {pair.prev} ran out of memory; rolled back to the last committed "
                                  "epoch") from e
            catalog = self.catalog.to_bytes()
            if catalog != self._retained_for:
                self._retain_time_travel(catalog)
            wait = wait or self.implicit_flush or catalog != self.store.requested_extra
            self.store.commit_epoch(pair.prev, catalog, wait=False, awaited=wait)
            self.runtime.committed(pair.prev)
            self.epoch = pair
            self.dirty = False
            self.store.wait_for_commits(0 if wait else self.MAX_EPOCHS_IN_FLIGHT)
            self._deliver_committed()

    def _retain_time_travel(self, catalog: bytes) -> None:
        """Tell compaction which tables time travel reads (tables, MVs, indexes) and for how
        long (time_travel_retention_ms), after each change of the catalog."""
        from rw_cli.meta import system_params

        retain = getattr(self.store, "retain_versions", None)
        if retain is not None:
            ids = frozenset(r.id for r in self.catalog.in_creation_order()
                            if r.kind in (TABLE, MATERIALIZED_VIEW, INDEX))
            retain(ids, int(system_params.value(self.catalog.system_params, "time_travel_retention_ms")))
        self._retained_for = catalog

    def roll_back_uncommitted(self) -> None:
        """Forget the writes of the current epoch (a statement cancelled mid-way: its writes
        started an epoch of their own), as a failed epoch is forgotten."""
        with self.mutex:
            self._roll_back()

    def catch_up(self) -> None:
        """Before a write: RisingWave passes a barrier every barrier_interval_ms, so a write
        lands in an epoch at most that old. An idle session passed none; an epoch older than
        that ends now, and the write's epoch (its rows' `_rw_timestamp`) begins now."""
        with self.mutex:
            age_ms = physical_now() - (self.epoch.curr >> EPOCH_SHIFT)
            if age_ms > self.settings.barrier_interval_ms and not self.in_transaction:
                self.barrier()

    def recover(self) -> None:
        """RECOVER: what RisingWave does after a failure, on request. Everything so far is
        committed, every job lets go of its executors, and the jobs are rebuilt from the
        catalog and the committed state (as when the data directory is opened), sources
        resuming from their committed offsets."""
        self.barrier()
        if self._runtime is not None:
            self._runtime.close()
            self._runtime = None

    def _roll_back(self) -> None:
        """An epoch failed as a whole (a Spark job could not finish): forget everything since
        the last committed epoch and rebuild the jobs from it; sources resume from their
        committed offsets."""
        self.store.discard_uncommitted()
        self.catalog = Catalog.from_bytes(self.store.requested_extra)
        self._runtime = None
        self.dirty = False

    def _prepare(self, tree) -> None:
        """Before a statement of a writer. After the store failed to commit (a full disk, an
        unreachable endpoint), reads of committed data go on; a write first opens the store
        again from its last committed version, as a restart would — once the cause is gone."""
        from rw_cli.handler import reads_only

        self._prepare_for(writes=not reads_only(tree))

    def _prepare_for(self, writes: bool) -> None:
        failed = self.store.failed
        if failed is not None and failed is not self._reported_failure:
            self._reported_failure = failed  # the next statement says so, once
            self.store.check()
        if failed is not None or not self.store.writer:
            if not writes:
                return
            self._reopen_store()
        self.settle()

    def _reopen_store(self) -> None:
        if self.store.failed is not None:
            self._lost_writes = (f"the writes after epoch {self.store.committed_epoch} were not committed "
                                 f"({self.store.failed}); rw went on from the last committed epoch")
        if self.store.writer:
            self.store.close()  # gives up its lease; what it had not committed is gone
            self._runtime = None
        try:
            store = self._open_store(read_only=False)
        except StorageError as e:
            if self.store.writer:  # the failed writer is closed: committed data stays readable
                self.store = self._open_store(read_only=True)
            raise StorageError(f"the state store cannot commit: {e.message}",
                               hint="free space (or fix the cause) and run the statement again: "
                                    "rw goes on from the last committed epoch by itself") from None
        self.store.close()
        self.store = store
        self._retained_for = None  # the new store learns the retention at the next barrier
        self._load_committed()
        self.dirty = False

    def settle(self) -> None:
        """Before a statement: wait for the epochs still uploading (so it reads what the
        stream has committed, and sinks have delivered it); a failed upload is its error."""
        with self.mutex:
            if self.store.pending_commits() or self.store.failed is not None:
                self.store.sync()
            self._deliver_committed()

    def _read_only_dispatch(self, dispatch, tree, text: str, offset: int = 0) -> Result:
        """A statement of a read-only session, on the newest commit (`tree` None: a SELECT
        bound before, see `_run_statement`). The writer may vacuum an SST of the version
        read meanwhile (its compaction replaced it): read again, on the version that
        replaced it."""
        self.refresh()
        try:
            return self._run_statement(dispatch, tree, text, offset)
        except StorageError:
            if not self.refresh():
                raise
            return self._run_statement(dispatch, None, text, offset)  # binding changed the first tree

    def refresh(self) -> bool:
        """Read-only: read the newest version the writer committed, and its catalog. True
        when there was a newer one."""
        if not self.store.refresh():
            return False
        self._load_committed(keep_catalog=self.read_only)
        return True

    def _load_committed(self, keep_catalog: bool = False) -> None:
        """The catalog and epochs of the store's last committed version (at open, after a
        read-only refresh, after the store was opened again). `keep_catalog` (read-only: its
        catalog is only ever loaded): the catalog stays the same object while the version's
        catalog is the same, and so do the SELECTs bound against it (rw_cli.handler.prepared)."""
        extra = self.store.extra
        if not (keep_catalog and extra == getattr(self, "_catalog_bytes", None)):
            self.catalog = Catalog.from_bytes(extra)
            self._catalog_bytes = extra
        committed = self.store.committed_epoch
        self.epoch = EpochPair(next_epoch(committed), committed)

    def flush(self) -> None:
        """FLUSH: a barrier whose epoch is durable (and delivered to sinks) on return."""
        with self.mutex:
            self.barrier(wait=True)

    def _deliver_committed(self) -> None:
        """Sinks deliver every epoch that is durable by now (and no later one)."""
        committed = self.store.committed_epoch
        runtime = getattr(self, "_runtime", None)
        if committed > getattr(self, "_delivered_epoch", 0) and runtime is not None:
            from rw_cli.engine.sink import notify_committed

            notify_committed(runtime, committed)
            self._delivered_epoch = committed

    def tick(self, max_rows: int = 10_000) -> int:
        """Read up to `max_rows` from each source split and push it through the jobs."""
        from rw_cli.engine.source import tick_sources

        with self.mutex, self._streaming():
            n, advanced = tick_sources(self.runtime, max_rows)
            if advanced:
                self.dirty = True
        return n

    def _streaming(self):
        """The stream's work runs: the store's background compaction waits for a pause."""
        streaming = getattr(self.store, "streaming", None)
        return streaming() if streaming is not None else contextlib.nullcontext()

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
                if not self.read_only:
                    if self.dirty:
                        self.barrier()
                    with self.mutex:
                        self.store.sync()  # every epoch handed to the uploader is durable
                        self._deliver_committed()
            finally:
                if self._runtime is not None:  # connectors let go of their clients
                    self._runtime.close()
                self.store.close()
        finally:
            self.closed = True
            self.lock.release()

    def __enter__(self) -> "Session":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def connect(data_dir: str | None = None, engine: str = "embedded", *, read_only: bool = False) -> Session:
    """The Python API: `rw_cli.connect(dir).execute(sql).arrow()`, or `with rw_cli.connect(dir)
    as s:` (closed, and so committed, at the end of the block). A session still open when the
    interpreter exits is closed then, so a script's writes are kept. `read_only=True` opens a
    directory another process writes (SELECT, SHOW, EXPLAIN on its latest commit)."""
    return Session(data_dir, engine, read_only=read_only)


class ReadOnlyOpen:
    """What a read-only session holds instead of the writer's lock: nothing, once it has
    checked that the data directory is there."""

    def __init__(self, data_dir: str):
        if not os.path.isdir(data_dir):
            raise StorageError(f'could not open data directory "{data_dir}" read-only: it does not exist')

    def release(self) -> None:
        pass


_OPEN: "weakref.WeakSet[Session]" = weakref.WeakSet()


@atexit.register
def _close_open_sessions() -> None:
    for session in list(_OPEN):
        try:
            session.close()
        except Exception as e:  # noqa: BLE001 - at exit: say so, never a traceback
            sys.stderr.write(f"WARNING:  the session on {session.data_dir} could not be closed: {e}\n")
