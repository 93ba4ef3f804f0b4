"""Errors carry data (kind, message, position, hint); only the CLI renders them."""
from __future__ import annotations


class RwError(Exception):
    """Base of every error a user can see.

    `position` is a 0-based character offset into the SQL text given to `Session.execute`
    (the whole text, also when it holds several statements), or None.
    """

    kind = "error"

    def __init__(self, message: str, *, position: int | None = None, hint: str | None = None,
                 context: str | None = None):
        super().__init__(message)
        self.message = message
        self.position = position
        self.hint = hint
        self.context = context  # where in the statement's work it failed (COPY's file line)


class InternalError(RwError):
    """An exception rw did not expect (a bug): reported as an error like any other, never as
    a traceback, and the session goes on. `RW_DEBUG=1` lets the original propagate."""

    kind = "internal"
    HINT = "this is a bug in rw: please report it with the statement that caused it"

    @classmethod
    def of(cls, err: BaseException) -> "InternalError":
        return cls(f"internal error: {type(err).__name__}: {err}", hint=cls.HINT)


class SqlSyntaxError(RwError):
    kind = "syntax"


class BindError(RwError):
    """Unknown table or column, type mismatch, wrong number of values, duplicate names."""

    kind = "bind"


class NotSupported(RwError):
    kind = "not_supported"

    def __init__(self, what: str, *, position: int | None = None, hint: str | None = None):
        super().__init__(f"not supported: {what}", position=position,
                         hint=hint or "this feature is not implemented in rw yet")


class CatalogError(RwError):
    kind = "catalog"


class ExecutionError(RwError):
    """A runtime failure of a statement (division by zero, overflow, cast failure...)."""

    kind = "execution"


class LockedError(RwError):
    kind = "locked"


class ReadOnlyError(RwError):
    """A write in a session that opened a data directory read-only (another process writes it)."""

    kind = "read_only"


class StorageError(RwError):
    """The store could not read or write (unreachable endpoint, corrupted object)."""

    kind = "storage"


class QueryCanceled(RwError):
    """The user cancelled the statement (Ctrl-C); raised at a safe point, so nothing the
    statement touched is changed."""

    kind = "canceled"

    def __init__(self, message: str = "canceling statement due to user request", **kw):
        super().__init__(message, **kw)


class EpochFailed(RwError):
    """An epoch could not finish (a Spark job failed for good); the last committed version
    stays and everything since it is rolled back."""


class StoreInUseError(StorageError, LockedError):
    """Another live writer holds the state store's writer lease (wherever it runs): a
    storage error, and a lock a read-only open may pass."""

    kind = "locked"
