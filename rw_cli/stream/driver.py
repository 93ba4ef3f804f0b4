"""Keeps pipelines running: ticks the sources and injects barriers every `barrier_interval_ms`.

`run(session)` drives in the foreground (`rw run`); `BackgroundDriver` does the same in a
thread while the shell waits for input. Every step holds the session's mutex, so a user
statement and a background barrier never interleave.
"""
from __future__ import annotations

import sys
import threading
import time

DEFAULT_TICK_ROWS = 10_000


def barrier_interval_ms(session) -> int:
    return session.settings.barrier_interval_ms


def sources_idle(session) -> bool:
    """Every running source is bounded and read to its end (no source counts as idle)."""
    from rw_cli.engine.source import idle

    return idle(session.runtime)


def creating_jobs(session) -> bool:
    """Whether a job created in the background is still backfilling (it needs barriers)."""
    from rw_cli.stream import background

    return bool(background.creating(session))


def step(session, tick_rows: int = DEFAULT_TICK_ROWS) -> int:
    """One tick of every source (under the session's mutex); rows read. Sleeps a little
    after a tick that a rate limit cut short, so rate-limited sources arrive in chunks."""
    from rw_cli.engine import eval_errors
    from rw_cli.engine.source import source_executors

    with session.mutex:
        n = session.tick(tick_rows)
        warnings = []
        throttled = False
        for _, ex in source_executors(session.runtime):
            warnings += ex.take_warnings()
            throttled = throttled or ex.throttled
        warnings += eval_errors.take()
    for w in warnings:
        sys.stderr.write(f"WARNING:  {w}\n")
    if throttled:
        time.sleep(0.05)
    return n


class Status:
    """The live status line of `rw run`: epoch, rows/s per source, backlog."""

    def __init__(self, out=None):
        self.out = out
        self.last_rows: dict[str, int] = {}
        self.last_time = time.monotonic()

    def render(self, session) -> str:
        from rw_cli.stream.progress import format_lags, job_progress

        now = time.monotonic()
        dt = max(now - self.last_time, 1e-6)
        parts = [f"epoch {session.store.committed_epoch}"]
        for j in job_progress(session):
            if j["kind"] in ("source", "table") and "rows" in j:
                rate = (j["rows"] - self.last_rows.get(j["name"], 0)) / dt
                self.last_rows[j["name"]] = j["rows"]
                state = "done" if j.get("exhausted") else f"{rate:,.0f} rows/s"
                if not j.get("exhausted") and j.get("backlog") is not None:
                    state += f", backlog {j['backlog']:,}"
                if j.get("lags"):
                    state += ", lag " + format_lags(j["lags"])
                parts.append(f"{j['name']}: {j['rows']:,} rows ({state})")
        self.last_time = now
        return " | ".join(parts)

    def show(self, session) -> None:
        if self.out is None:
            return
        line = self.render(session)
        if self.out.isatty():
            self.out.write("\r\x1b[2K" + line)
        else:
            self.out.write(line + "\n")
        self.out.flush()


def run(session, until_idle: bool = False, tick_rows: int = DEFAULT_TICK_ROWS, status_out=None,
        status_every_s: float = 1.0, max_seconds: float | None = None) -> None:
    """Drive every job until Ctrl-C (or, with `until_idle`, until every bounded source is
    exhausted and its last epoch committed). Ctrl-C checkpoints and returns."""
    status = Status(status_out)
    start = last_barrier = last_status = time.monotonic()
    try:
        while True:
            n = step(session, tick_rows)
            now = time.monotonic()
            if now - last_barrier >= barrier_interval_ms(session) / 1000 or (until_idle and n == 0):
                with session.mutex:
                    session.barrier()
                last_barrier = now
            if now - last_status >= status_every_s:
                status.show(session)
                last_status = now
            if until_idle and n == 0:
                with session.mutex:
                    if sources_idle(session) and not session.dirty:
                        break
            if max_seconds is not None and now - start > max_seconds:
                break
            if n == 0:
                time.sleep(0.01)
    except KeyboardInterrupt:
        pass
    finally:
        with session.mutex:
            session.barrier()
        status.show(session)
        if status_out is not None and status_out.isatty():
            status_out.write("\n")


def drive_for(session, seconds: float, tick_rows: int = DEFAULT_TICK_ROWS) -> None:
    """Keep the pipelines running for `seconds` (what a sleeping client sees RisingWave do);
    stops early once every source is idle, after committing its last epoch."""
    deadline = time.monotonic() + seconds
    last_barrier = time.monotonic()
    while True:
        n = step(session, tick_rows)
        now = time.monotonic()
        idle = n == 0 and sources_idle(session) and not creating_jobs(session)
        if idle or now - last_barrier >= barrier_interval_ms(session) / 1000 or now >= deadline:
            with session.mutex:
                session.barrier()
            last_barrier = now
        if idle or now >= deadline:
            return
        if n == 0:
            time.sleep(min(0.01, max(0.0, deadline - now)))


class BackgroundDriver:
    """Ticks sources and injects barriers every `barrier_interval_ms` while the shell is open."""

    def __init__(self, session, tick_rows: int = DEFAULT_TICK_ROWS):
        self.session = session
        self.tick_rows = tick_rows
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="rw-pipeline", daemon=True)
        self.error: BaseException | None = None

    def start(self) -> "BackgroundDriver":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=10)

    def _loop(self) -> None:
        last_barrier = time.monotonic()
        while not self._stop.is_set():
            try:
                if self.session.closed:
                    return
                if not self.session.has_stream_jobs:  # building the runtime would do nothing yet
                    self._stop.wait(0.05)
                    continue
                n = step(self.session, self.tick_rows)
                now = time.monotonic()
                if now - last_barrier >= barrier_interval_ms(self.session) / 1000:
                    with self.session.mutex:
                        if (self.session.dirty or creating_jobs(self.session)) and not self.session.closed:
                            self.session.barrier()  # a job created in the background backfills on it
                    last_barrier = now
                if n == 0:
                    self._stop.wait(0.05)
            except Exception as e:  # noqa: BLE001 - reported once, the shell keeps working
                self.error = e
                sys.stderr.write(f"\nERROR:  background pipeline stopped: {type(e).__name__}: {e}\n")
                return
