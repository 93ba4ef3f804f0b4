"""Run sqllogictest files against a Session, the way sqllogictest-rs runs RisingWave's.

Each file runs in a fresh Session over a fresh temporary data directory (unless one is
given). Output: `ok PATH` for a passing file, `PATH:LINE` blocks for failures, and one
closing line `N passed, N failed` counting statements and queries.
"""
from __future__ import annotations

import glob
import os
import re
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from typing import Callable, TextIO

from rw_cli.common.pg_text import format_value_slt
from rw_cli.slt.parser import ENGINE, Record, SltParseError, include_paths, parse_file, parse_duration

MAX_SLEEP_S = 1.0
MAX_BACKOFF_S = 1.0
MAX_INCLUDE_DEPTH = 16


# -- paths ---------------------------------------------------------------------------------

def expand_paths(paths: list[str]) -> tuple[list[str], list[str]]:
    """Files to run and the arguments that matched nothing. A directory means every `*.slt`
    under it (recursively, sorted); a glob is expanded in sorted order."""
    files: list[str] = []
    missing: list[str] = []
    for p in paths:
        if os.path.isdir(p):
            files.extend(sorted(glob.glob(os.path.join(p, "**", "*.slt"), recursive=True)))
        elif os.path.isfile(p):
            files.append(p)
        elif glob.has_magic(p):
            matched = sorted(glob.glob(p, recursive=True))
            for m in matched:
                if os.path.isdir(m):
                    files.extend(sorted(glob.glob(os.path.join(m, "**", "*.slt"), recursive=True)))
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


def error_matches(regex: str | None, err: BaseException) -> bool:
    if not regex:
        return True
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


@dataclass
class FileOutcome:
    passed: int = 0
    failed: int = 0


class FileRunner:
    def __init__(self, session, out: TextIO, keep_going: bool, engine_name: str = ENGINE,
                 reopen: Callable | None = None):
        self.session = session
        self.reopen = reopen
        self.out = out
        self.keep_going = keep_going
        self.engine_name = engine_name
        self.sort_mode = "nosort"
        self.outcome = FileOutcome()

    # one record -> None when it passed, else the failure text
    def _check(self, rec: Record) -> str | None:
        try:
            result = self.session.execute(rec.sql)
        except (KeyboardInterrupt, SystemExit):
            raise
        except Exception as err:  # noqa: BLE001 - any failure of a statement is an error here
            if not rec.expect_error:
                return f"{rec.kind} failed\n" + self._describe_error(err)
            if error_matches(rec.error_regex, err):
                return None
            return (f"error did not match\n[Expected error /{rec.error_regex}/]\n"
                    f"[Actual error]\n{self._describe_error(err)}")
        if rec.expect_error:
            what = "query" if rec.kind == "query" else "statement"
            return f"{what} succeeded, but an error was expected" + (
                f" matching /{rec.error_regex}/" if rec.error_regex else "")
        if rec.kind == "statement":
            return None
        actual = actual_lines(result)
        if compare(actual, rec.expected, rec.sort_mode or self.sort_mode):
            return None
        return ("query result mismatch\n[Expected]\n" + "\n".join(rec.expected) +
                "\n[Actual]\n" + "\n".join(actual))

    @staticmethod
    def _describe_error(err: BaseException) -> str:
        from rw_cli.errors import RwError
        from rw_cli.shell.render import render_error

        if isinstance(err, RwError):
            return render_error(err).rstrip("\n")
        return f"internal error: {type(err).__name__}: {err}"

    def run_record(self, rec: Record) -> None:
        failure = self._check(rec)
        tries = 0
        while failure is not None and tries < rec.retry:
            tries += 1
            self._wait(min(rec.backoff_s, MAX_BACKOFF_S))
            failure = self._check(rec)
        if failure is None:
            self.outcome.passed += 1
            return
        self.outcome.failed += 1
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

            drive_for(self.session, seconds)
        time.sleep(max(0.0, seconds - (time.monotonic() - started)))

    def run_records(self, records: list[Record], depth: int = 0) -> None:
        for rec in records:
            if not rec.applies(self.engine_name):
                continue
            if rec.kind in ("statement", "query"):
                self.run_record(rec)
            elif rec.kind == "include":
                if depth >= MAX_INCLUDE_DEPTH:
                    self._fail_include(rec, "includes nested too deeply")
                    continue
                paths = include_paths(rec)
                if not paths or not all(os.path.isfile(p) for p in paths):
                    self._fail_include(rec, f"include matched no file: {rec.arg}")
                    continue
                for p in paths:
                    try:
                        self.run_records(parse_file(p), depth + 1)
                    except SltParseError as e:
                        self._fail_include(rec, str(e))
            elif rec.kind == "control":
                self.sort_mode = rec.arg
            elif rec.kind == "sleep":
                try:
                    seconds = min(parse_duration(rec.arg), MAX_SLEEP_S)
                except ValueError:
                    continue
                if hasattr(self.session, "tick"):  # sources ingest while the client sleeps
                    from rw_cli.stream.driver import drive_for

                    drive_for(self.session, seconds)
                else:
                    time.sleep(seconds)
            elif rec.kind == "halt":
                raise _Stop()
            elif rec.kind == "restart" and self.reopen is not None:
                self.session.close()
                self.session = self.reopen()
            elif rec.kind == "unsupported":
                self.out.write(f"{rec.path}:{rec.line}: skipped unsupported record: {rec.arg}\n")
            # hash-threshold and other controls: accepted, nothing to do

    def _fail_include(self, rec: Record, message: str) -> None:
        self.outcome.failed += 1
        self.out.write(f"{rec.path}:{rec.line}: {message}\n\n")
        if not self.keep_going:
            raise _Stop()


def _default_session_factory(data_dir: str, engine: str):
    from rw_cli.session import Session

    return Session(data_dir, engine=engine)


def run_file(path: str, *, keep_going: bool, data_dir: str | None, engine: str, out: TextIO,
             session_factory: Callable | None = None) -> FileOutcome:
    factory = session_factory or _default_session_factory
    try:
        records = parse_file(path)
    except (OSError, UnicodeDecodeError, SltParseError) as e:
        out.write(f"{path}: cannot read: {e}\n")
        return FileOutcome(failed=1)
    tmp = None
    if data_dir is None:
        tmp = tempfile.mkdtemp(prefix="rw-slt-")
    try:
        try:
            session = factory(data_dir or os.path.join(tmp, "data"), engine)
        except Exception as e:  # noqa: BLE001
            out.write(f"{path}: cannot open a session: {FileRunner._describe_error(e)}\n")
            return FileOutcome(failed=1)
        runner = FileRunner(session, out, keep_going,
                            reopen=lambda: factory(data_dir or os.path.join(tmp, "data"), engine))
        try:
            runner.run_records(records)
        except _Stop:
            pass
        finally:
            try:
                runner.session.close()
            except Exception as e:  # noqa: BLE001
                out.write(f"{path}: error while closing the session: {e}\n")
        return runner.outcome
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)


def run_files(paths: list[str], *, keep_going: bool = False, data_dir: str | None = None,
              engine: str = "embedded", out: TextIO | None = None,
              session_factory: Callable | None = None) -> int:
    """Run every file; print `ok PATH` / failures and the closing `N passed, N failed`.
    Returns 0 only when every record passed."""
    out = out or sys.stdout
    files, missing = expand_paths(paths)
    passed = failed = 0
    for m in missing:
        out.write(f"{m}: no such file\n")
        failed += 1
    if not files and not missing:
        out.write(f"no .slt files in {' '.join(paths)}\n")
    for path in files:
        outcome = run_file(path, keep_going=keep_going, data_dir=data_dir, engine=engine, out=out,
                           session_factory=session_factory)
        passed += outcome.passed
        failed += outcome.failed
        if outcome.failed:
            out.write(f"FAIL {path} ({outcome.passed} passed, {outcome.failed} failed)\n")
        else:
            out.write(f"ok {path}\n")
        out.flush()
    out.write(f"{passed} passed, {failed} failed\n")
    out.flush()
    return 0 if failed == 0 and (files or not paths) else 1
