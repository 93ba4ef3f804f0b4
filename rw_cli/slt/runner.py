"""Run sqllogictest files against a Session, the way sqllogictest-rs runs RisingWave's.

Each file runs in a fresh Session over a fresh temporary data directory (unless one is
given). Output: `ok PATH` for a passing file, `PATH:LINE` blocks for failures, and one
closing line `N passed, N failed` counting statements and queries.

SQLite's classic files (`*.test`) run with implicit flush (they assume read-your-writes),
answer `skipif`/`onlyif` as PostgreSQL, and check results as classic.py says. With a
per-file timeout, the records a file did not reach count as failed. With `mv=True` every
query is also checked as a materialized view (differential.py) and each file reports one
line: batch records passed, MVs equal, refused, different.
"""
from __future__ import annotations

import glob
import io
import os
import re
import shutil
import signal
import sys
import tempfile
import threading
import time
import weakref
from dataclasses import dataclass
from typing import Callable, TextIO

from rw_cli.common.pg_text import format_value_slt
from rw_cli.errors import EpochFailed
from rw_cli.slt.classic import ClassicState, check_query
from rw_cli.slt.differential import Differential, MvReport
from rw_cli.slt.parser import (CLASSIC_ENGINES, ENGINE, Record, SltParseError, include_paths,
                               is_classic, parse_duration, parse_file)
from rw_cli.slt.report import file_line, write_mv_details, write_mv_total

# a `sleep` lets wall time pass as in RisingWave's runner (now(), `_rw_timestamp`, time
# travel tell rows apart by it); the cap only guards against a mistyped duration
MAX_SLEEP_S = 10.0
MAX_BACKOFF_S = 1.0
MAX_INCLUDE_DEPTH = 16
_SUBSTITUTION = re.compile(r"\\\$|\$\{(\w+)\}|\$([A-Za-z_]\w*)")
HARD_STOP_GRACE_S = 30.0  # a record still running this long past a file's timeout is interrupted
FILE_PATTERNS = ("*.slt", "*.test")


# -- paths ---------------------------------------------------------------------------------

def _files_under(folder: str) -> list[str]:
    found: set[str] = set()
    for pattern in FILE_PATTERNS:
        found.update(glob.glob(os.path.join(folder, "**", pattern), recursive=True))
    return sorted(found)


def expand_paths(paths: list[str]) -> tuple[list[str], list[str]]:
    """Files to run and the arguments that matched nothing. A directory means every `*.slt`
    and classic `*.test` under it (recursively, sorted); a glob is expanded in sorted order."""
    files: list[str] = []
    missing: list[str] = []
    for p in paths:
        if os.path.isdir(p):
            files.extend(_files_under(p))
        elif os.path.isfile(p):
            files.append(p)
        elif glob.has_magic(p):
            matched = sorted(glob.glob(p, recursive=True))
            for m in matched:
                if os.path.isdir(m):
                    files.extend(_files_under(m))
                else:
                    files.append(m)
            if not matched:
                missing.append(p)
        else:
            missing.append(p)
    return files, missing


# -- comparing results ---------------------------------------------------------------------

def normalize(s: str) -> str:
    return " ".join(s.split())


def actual_lines(result) -> list[str]:
    """A result's rows as sqllogictest lines: values in text form, joined by one space."""
    if result is None or getattr(result, "table", None) is None:
        return []
    return [" ".join(normalize(format_value_slt(v)) for v in row) for row in result.text_rows()]


def compare(actual: list[str], expected: list[str], sort_mode: str) -> bool:
    a = [normalize(x) for x in actual]
    e = [normalize(x) for x in expected]
    if sort_mode == "rowsort":
        a, e = sorted(a), sorted(e)
    elif sort_mode == "valuesort":
        a = sorted(v for row in a for v in row.split())
        e = sorted(v for row in e for v in row.split())
    return a == e


# sqllogictest's `statement error (42P01) [regex]`: the SQLSTATE the error must carry
_SQLSTATE = re.compile(r"^\(([0-9A-Z]{5})\)(?:\s+(.*))?$", re.DOTALL)


def error_matches(regex: str | None, err: BaseException) -> bool:
    if not regex:
        return True
    m = _SQLSTATE.match(regex.strip())
    if m:
        from rw_cli.server.sqlstate import sqlstate

        if sqlstate(err) == m.group(1):
            return error_matches(m.group(2), err)
    from rw_cli.shell.render import render_error

    message = getattr(err, "message", None) or str(err)
    texts = [message, render_error(err), f"db error: ERROR: {message}"]
    try:
        pat = re.compile(regex)
    except re.error:
        return any(regex in t for t in texts)
    return any(pat.search(t) for t in texts)


# -- running -------------------------------------------------------------------------------

class _Stop(Exception):
    """Ends a file: `halt`, or the first failure without --keep-going."""


class _Timeout(BaseException):
    """Ends a file that ran past its timeout (a BaseException, so that no `except Exception`
    on the way swallows it when it interrupts a statement)."""


@dataclass
class FileOutcome:
    passed: int = 0
    failed: int = 0  # includes not_run
    not_run: int = 0  # records a timeout left unrun
    timed_out: float | None = None  # the timeout, when the file ran past it
    mv: MvReport | None = None


@dataclass
class RunOptions:
    """How files run: `timeout` (seconds per file, None for none), `mv` for the differential
    mode, `verbose` for the refused and different queries (and batch failures, with --mv)."""

    keep_going: bool = False
    timeout: float | None = None
    mv: bool = False
    verbose: bool = False
    jobs: int = 1  # files run at once, each in a process of its own


class FileRunner:
    def __init__(self, session, out: TextIO, keep_going: bool, engine_name: str | frozenset[str] = ENGINE,
                 reopen: Callable | None = None, *, classic: bool = False, deadline: float | None = None,
                 show_failures: bool = True):
        self.session = session
        self.reopen = reopen
        self.out = out
        self.keep_going = keep_going
        self.engine_name = engine_name
        self.sort_mode = "nosort"
        self.outcome = FileOutcome()
        self.classic = ClassicState() if classic else None
        self.deadline = deadline
        self.show_failures = show_failures
        self.differential: Differential | None = None
        self.substitution = False  # `control substitution on`: $__TEST_DIR__ and $ENV in SQL
        self._test_dir: str | None = None
        # `connection name` records: each other connection's session settings, by name
        self.connections: dict[str, object] = {}

    def substitute(self, sql: str) -> str:
        """sqllogictest-rs's substitution: `$__TEST_DIR__` (a directory of this file's own,
        removed with the runner), `$__DATABASE__`, and environment variables (`$NAME`,
        `${NAME}`); `\\$` is a dollar sign. An unknown name stays as written."""
        if not self.substitution:
            return sql

        def value(m: re.Match) -> str:
            if m.group(0) == "\\$":
                return "$"
            name = m.group(1) or m.group(2)
            if name == "__TEST_DIR__":
                return self.test_dir()
            if name == "__DATABASE__":
                return "dev"
            return os.environ.get(name, m.group(0))

        return _SUBSTITUTION.sub(value, sql)

    def test_dir(self) -> str:
        if self._test_dir is None:
            self._test_dir = tempfile.mkdtemp(prefix="rw-slt-")
            weakref.finalize(self, shutil.rmtree, self._test_dir, True)
        return self._test_dir

    def _check_on(self, rec: Record):
        """`_check` on the record's connection: another connection of the same database has
        its own session parameters, transaction block (and the snapshot it reads) and
        cursors, kept here between its records."""
        if rec.connection is None or rec.connection == "default":
            return self._check(rec)
        session = self.session
        mine = (session.settings, session.in_transaction, session.cursors)
        settings, in_tx, cursors = self.connections.get(rec.connection) or (session.new_settings(), False, {})
        session.settings, session.in_transaction, session.cursors = settings, in_tx, cursors
        try:
            return self._check(rec)
        finally:
            self.connections[rec.connection] = (session.settings, session.in_transaction,
                                                session.cursors)
            session.settings, session.in_transaction, session.cursors = mine

    # one record -> None when it passed, else the failure text; and the result
    def _check(self, rec: Record):
        try:
            result = self.session.execute(self.substitute(rec.sql))
        except (KeyboardInterrupt, SystemExit):
            raise
        except Exception as err:  # noqa: BLE001 - any failure of a statement is an error here
            if not rec.expect_error:
                return f"{rec.kind} failed\n" + self._describe_error(err), None
            if error_matches(rec.error_regex, err):
                return None, None
            return (f"error did not match\n[Expected error /{rec.error_regex}/]\n"
                    f"[Actual error]\n{self._describe_error(err)}"), None
        if rec.expect_error:
            what = "query" if rec.kind == "query" else "statement"
            return f"{what} succeeded, but an error was expected" + (
                f" matching /{rec.error_regex}/" if rec.error_regex else ""), result
        if rec.kind == "statement":
            return None, result
        sort_mode = rec.sort_mode or self.sort_mode
        if self.classic is not None:
            return check_query(result, rec.types, sort_mode, rec.expected, rec.label, self.classic), result
        actual = actual_lines(result)
        if compare(actual, rec.expected, sort_mode):
            return None, result
        return ("query result mismatch\n[Expected]\n" + "\n".join(rec.expected) +
                "\n[Actual]\n" + "\n".join(actual)), result

    @staticmethod
    def _describe_error(err: BaseException) -> str:
        from rw_cli.errors import RwError
        from rw_cli.shell.render import render_error

        if isinstance(err, RwError):
            return render_error(err).rstrip("\n")
        return f"internal error: {type(err).__name__}: {err}"

    def run_record(self, rec: Record) -> None:
        diff = self.differential
        if diff is not None:
            (diff.before_statement if rec.kind == "statement" else diff.before_query)(rec)
        failure, result = self._check_on(rec)
        tries = 0
        while failure is not None and tries < rec.retry:
            tries += 1
            self._wait(min(rec.backoff_s, MAX_BACKOFF_S))
            failure, result = self._check_on(rec)
        if diff is not None:
            if rec.kind == "statement":
                diff.after_statement(rec)
            elif failure is None and not rec.expect_error:
                diff.after_query(rec, result)
        if failure is None:
            self.outcome.passed += 1
            return
        self.outcome.failed += 1
        if self.show_failures:
            self.out.write(f"{rec.path}:{rec.line}: {failure.splitlines()[0]}\n[SQL]\n{rec.sql}\n")
            rest = failure.split("\n", 1)[1] if "\n" in failure else ""
            if rest:
                self.out.write(rest + "\n")
            self.out.write("\n")
        if not self.keep_going:
            raise _Stop()

    def _wait(self, seconds: float) -> None:
        """Let time pass as a client waiting on RisingWave sees it: the pipelines keep running
        and barriers keep committing (what a retried query waits for)."""
        started = time.monotonic()
        if hasattr(self.session, "tick"):
            from rw_cli.stream.driver import drive_for

            try:
                drive_for(self.session, seconds)
            except EpochFailed:  # recovered (rolled back) meanwhile: the retry sees the result
                pass
        time.sleep(max(0.0, seconds - (time.monotonic() - started)))

    def run_records(self, records: list[Record], depth: int = 0) -> None:
        for index, rec in enumerate(records):
            if not rec.applies(self.engine_name):
                continue
            if self.deadline is not None and time.monotonic() > self.deadline:
                if depth == 0:
                    self.outcome.not_run = counted_records(records[index:], self.engine_name)
                raise _Timeout()
            try:
                self._run_one(rec, depth)
            except _Timeout:
                if depth == 0:  # interrupted in the middle of this record
                    self.outcome.not_run = counted_records(records[index:], self.engine_name)
                raise

    def _run_one(self, rec: Record, depth: int) -> None:
        if rec.kind in ("statement", "query"):
            self.run_record(rec)
        elif rec.kind == "include":
            if depth >= MAX_INCLUDE_DEPTH:
                self._fail_include(rec, "includes nested too deeply")
                return
            paths = include_paths(rec)
            if not paths or not all(os.path.isfile(p) for p in paths):
                self._fail_include(rec, f"include matched no file: {rec.arg}")
                return
            for p in paths:
                try:
                    self.run_records(parse_file(p), depth + 1)
                except SltParseError as e:
                    self._fail_include(rec, str(e))
        elif rec.kind == "control":
            self.sort_mode = rec.arg
        elif rec.kind == "control-other" and rec.arg.split()[:1] == ["substitution"]:
            self.substitution = rec.arg.split()[1:] == ["on"]
        elif rec.kind == "sleep":
            try:
                seconds = min(parse_duration(rec.arg), MAX_SLEEP_S)
            except ValueError:
                return
            if hasattr(self.session, "tick"):  # sources ingest while the client sleeps
                from rw_cli.stream.driver import drive_for

                started = time.monotonic()
                try:
                    drive_for(self.session, seconds)  # returns early once every source is idle
                except EpochFailed:  # recovered (rolled back) meanwhile: the client sees nothing
                    pass
                time.sleep(max(0.0, seconds - (time.monotonic() - started)))
            else:
                time.sleep(seconds)
        elif rec.kind == "halt":
            raise _Stop()
        elif rec.kind == "restart" and self.reopen is not None:
            self.session.close()
            self.session = self.reopen()
        elif rec.kind == "hash-threshold" and self.classic is not None:
            try:
                self.classic.hash_threshold = int(rec.arg)
            except ValueError:
                self.out.write(f"{rec.path}:{rec.line}: bad hash-threshold: {rec.arg}\n")
        elif rec.kind == "unsupported":
            self.out.write(f"{rec.path}:{rec.line}: skipped unsupported record: {rec.arg}\n")
        # other controls: accepted, nothing to do

    def _fail_include(self, rec: Record, message: str) -> None:
        self.outcome.failed += 1
        self.out.write(f"{rec.path}:{rec.line}: {message}\n\n")
        if not self.keep_going:
            raise _Stop()


def _applicable(records: list[Record], engine: str | frozenset[str]):
    """The records that apply to the engine, up to a `halt`."""
    for rec in records:
        if not rec.applies(engine):
            continue
        if rec.kind == "halt":
            return
        yield rec


def counted_records(records: list[Record], engine: str | frozenset[str]) -> int:
    """The statements and queries among records that apply to the engine, up to a `halt`."""
    return sum(rec.counted for rec in _applicable(records, engine))


def _last_statement_line(records: list[Record], engine: str | frozenset[str]) -> float:
    """The line of a file's last statement (infinite when an include may hold more): views
    made after it can no longer change."""
    last = 0.0
    for rec in _applicable(records, engine):
        if rec.kind in ("include", "restart"):
            return float("inf")
        if rec.kind == "statement":
            last = rec.line
    return last


class _HardStop:
    """Interrupts a record still running `grace` seconds past the deadline (SIGALRM, on the
    main thread of a Unix process only; elsewhere the deadline is checked between records)."""

    def __init__(self, deadline: float | None, grace: float = HARD_STOP_GRACE_S):
        self.armed = (deadline is not None and hasattr(signal, "setitimer")
                      and threading.current_thread() is threading.main_thread())
        self.delay = max(0.001, (deadline or 0) - time.monotonic() + grace)
        self.previous = None

    def __enter__(self) -> "_HardStop":
        if self.armed:
            self.previous = signal.signal(signal.SIGALRM, self._fire)
            signal.setitimer(signal.ITIMER_REAL, self.delay)
        return self

    @staticmethod
    def _fire(signum, frame) -> None:
        raise _Timeout()

    def __exit__(self, *exc) -> None:
        if self.armed:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, self.previous or signal.SIG_DFL)


def _set(runner: FileRunner, path: str, flag: str) -> None:
    """`SET flag = true` before a file's records (a failure is reported; the file still runs)."""
    try:
        runner.session.execute(f"SET {flag} = true")
    except Exception as e:  # noqa: BLE001
        runner.out.write(f"{path}: cannot set {flag}: {FileRunner._describe_error(e)}\n")


def _default_session_factory(data_dir: str, engine: str):
    from rw_cli.session import Session

    return Session(data_dir, engine=engine)


def run_file(path: str, *, keep_going: bool, data_dir: str | None, engine: str, out: TextIO,
             session_factory: Callable | None = None, options: RunOptions | None = None) -> FileOutcome:
    options = options or RunOptions(keep_going=keep_going)
    factory = session_factory or _default_session_factory
    try:
        records = parse_file(path)
    except (OSError, UnicodeDecodeError, SltParseError) as e:
        out.write(f"{path}: cannot read: {e}\n")
        return FileOutcome(failed=1)
    classic = is_classic(path)
    names = CLASSIC_ENGINES if classic else ENGINE
    tmp = None
    if data_dir is None:
        tmp = tempfile.mkdtemp(prefix="rw-slt-")
    started = time.monotonic()
    deadline = started + options.timeout if options.timeout else None
    try:
        try:
            session = factory(data_dir or os.path.join(tmp, "data"), engine)
        except Exception as e:  # noqa: BLE001
            out.write(f"{path}: cannot open a session: {FileRunner._describe_error(e)}\n")
            return FileOutcome(failed=1)
        runner = FileRunner(session, out, keep_going or options.mv, names,
                            reopen=lambda: factory(data_dir or os.path.join(tmp, "data"), engine),
                            classic=classic, deadline=deadline,
                            show_failures=not options.mv or options.verbose)
        if options.mv:
            last = _last_statement_line(records, names)
            runner.differential = Differential(
                lambda: runner.session, implicit_flush=classic,
                keeps=lambda rec: rec.path != path or rec.line < last)
        try:
            with _HardStop(deadline):
                if classic:  # the classic files assume read-your-writes
                    _set(runner, path, "rw_implicit_flush")
                if options.mv:  # a view for every query the batch engine answers
                    _set(runner, path, "rw_streaming_allow_cross_join")
                try:
                    runner.run_records(records)
                except _Stop:
                    pass
                if runner.differential is not None:
                    runner.differential.finish()
        except _Timeout:
            runner.outcome.timed_out = options.timeout
            runner.outcome.failed += runner.outcome.not_run
        finally:
            if runner.differential is not None:
                # views a timeout left alive passed every comparison made
                runner.differential.report.equal += len(runner.differential.views)
                runner.outcome.mv = runner.differential.report
            try:
                runner.session.close()
            except Exception as e:  # noqa: BLE001
                out.write(f"{path}: error while closing the session: {e}\n")
        return runner.outcome
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)


def _run_captured(path: str, data_dir: str | None, engine: str, session_factory: Callable | None,
                  options: RunOptions) -> tuple[FileOutcome, str]:
    """`run_file` with its output kept (in a worker process: the parent prints it in order)."""
    buf = io.StringIO()
    outcome = run_file(path, keep_going=options.keep_going, data_dir=data_dir, engine=engine, out=buf,
                       session_factory=session_factory, options=options)
    return outcome, buf.getvalue()


def _outcomes(files: list[str], data_dir: str | None, engine: str, session_factory: Callable | None,
              options: RunOptions, out: TextIO):
    """(path, outcome, output) of every file, in the order given. With `options.jobs` > 1
    the files run in that many worker processes (forked: each opens its own sessions over
    its own temporary data directories), the largest first so that no long file starts
    last. They run here, one after another, over one given data directory (which only one
    process may write), and in a process that already runs threads (a session's: a fork
    copies their locks in whatever state they are, and may hang on one)."""
    jobs = min(options.jobs, len(files))
    if jobs <= 1 or data_dir is not None or not hasattr(os, "fork") or threading.active_count() > 1:
        for path in files:
            yield path, run_file(path, keep_going=options.keep_going, data_dir=data_dir, engine=engine, out=out,
                                 session_factory=session_factory, options=options), ""
        return
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    import rw_cli.session  # noqa: F401 - imported once, before the workers fork

    by_size = sorted(range(len(files)), key=lambda i: -_size(files[i]))
    with ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("fork")) as pool:
        futures = {i: pool.submit(_run_captured, files[i], None, engine, session_factory, options) for i in by_size}
        for i, path in enumerate(files):
            outcome, text = futures[i].result()
            yield path, outcome, text


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def run_files(paths: list[str], *, keep_going: bool = False, data_dir: str | None = None,
              engine: str = "embedded", out: TextIO | None = None,
              session_factory: Callable | None = None, options: RunOptions | None = None) -> int:
    """Run every file; print `ok PATH` / failures and the closing `N passed, N failed`
    (with `options.mv`, one line per file and a total). Returns 0 only when every record
    passed; with `options.mv`, when no MV differed from its query."""
    out = out or sys.stdout
    options = options or RunOptions(keep_going=keep_going)
    options.keep_going = options.keep_going or keep_going
    files, missing = expand_paths(paths)
    passed = failed = 0
    total_mv = MvReport()
    unrun = 0  # files that could not be read or opened
    for m in missing:
        out.write(f"{m}: no such file\n")
        failed += 1
    if not files and not missing:
        out.write(f"no .slt or .test files in {' '.join(paths)}\n")
    for path, outcome, text in _outcomes(files, data_dir, engine, session_factory, options, out):
        out.write(text)
        passed += outcome.passed
        failed += outcome.failed
        mv = (outcome.mv or MvReport()) if options.mv else None
        out.write(file_line(path, outcome.passed, outcome.failed, outcome.not_run, outcome.timed_out, mv))
        if options.mv and outcome.mv is not None:
            write_mv_details(out, outcome.mv, options.verbose)
            total_mv.add(outcome.mv)
        elif options.mv:
            unrun += 1
        out.flush()
    if not options.mv:
        out.write(f"{passed} passed, {failed} failed\n")
        out.flush()
        return 0 if failed == 0 and (files or not paths) else 1
    write_mv_total(out, len(files), passed, failed, total_mv)
    out.flush()
    unreadable = bool(missing) or unrun > 0 or (not files and bool(paths))
    return 1 if total_mv.different or unreadable else 0
