"""A read-only transaction block (START TRANSACTION READ ONLY ... COMMIT): what it reads and
how long it may sit idle.

RisingWave pins a snapshot when the block starts: every query in it reads the tables as
committed then, whatever another connection writes and flushes meanwhile (until COMMIT or
ROLLBACK). The pin keeps that epoch's rows readable (compaction keeps what a pinned epoch
reads). `idle_in_transaction_session_timeout` ends a block whose connection sent nothing for
longer than it says, as PostgreSQL does.

The block is the session's `in_transaction` (a `ReadOnlyTransaction`, true; or False): the
code that swaps one connection's state onto the shared session (the slt runner's `connection`
records, the server) moves it with the connection.
"""
from __future__ import annotations

import time

from rw_cli.errors import ExecutionError


class ReadOnlyTransaction:
    """An open read-only block: the snapshot its queries read, and when its connection last
    ran a statement."""

    def __init__(self, store) -> None:
        self._store = store
        self._snapshot = store.pin_snapshot()  # the committed epoch now, kept readable
        self.last_used = time.monotonic()

    @property
    def epoch(self) -> int:
        """The committed epoch the block reads."""
        return self._snapshot.epoch

    def end(self) -> None:
        """COMMIT or ROLLBACK: the epoch is no longer pinned."""
        self._store.unpin(self._snapshot)

    def __bool__(self) -> bool:  # an open block: `if session.in_transaction`
        return True


def read_epoch(session) -> int:
    """The epoch a query reads committed tables at: its block's, else the committed one."""
    tx = getattr(session, "in_transaction", False)
    return tx.epoch if isinstance(tx, ReadOnlyTransaction) else session.store.committed_epoch


def begin(session) -> None:
    session.in_transaction = ReadOnlyTransaction(session.store)


def end(session) -> None:
    tx = session.in_transaction
    if isinstance(tx, ReadOnlyTransaction):
        tx.end()
    session.in_transaction = False


def check_idle(session) -> None:
    """Before a statement: a block idle for longer than `idle_in_transaction_session_timeout`
    (milliseconds; 0 = never) is ended, and the statement refused, with PostgreSQL's words
    (it closes the connection there)."""
    tx = getattr(session, "in_transaction", False)
    if not isinstance(tx, ReadOnlyTransaction):
        return
    now = time.monotonic()
    limit = _timeout_ms(session)
    if limit > 0 and (now - tx.last_used) * 1000 > limit:
        end(session)
        raise ExecutionError("terminating connection due to idle-in-transaction timeout")
    tx.last_used = now


def touch(session) -> None:
    """After a statement: the block's idle time starts now."""
    tx = getattr(session, "in_transaction", False)
    if isinstance(tx, ReadOnlyTransaction):
        tx.last_used = time.monotonic()


def _timeout_ms(session) -> int:
    text = str(session.settings.get("idle_in_transaction_session_timeout") or "0").strip().strip("'\"")
    try:
        return int(text)
    except ValueError:
        return 0
