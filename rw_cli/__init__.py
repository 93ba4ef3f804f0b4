"""rw_cli: a streaming database in one command."""
from __future__ import annotations

__version__ = "0.1.0"


def connect(data_dir: str | None = None, engine: str = "embedded", *, read_only: bool = False):
    """Open (and lock) a data directory; returns a Session with `execute(sql)`. With
    `read_only=True`, open one another process writes (no lock; reads its latest commit)."""
    from rw_cli.session import connect as _connect

    return _connect(data_dir, engine, read_only=read_only)
