import pytest

import rw_cli


@pytest.fixture
def session(tmp_path):
    s = rw_cli.connect(str(tmp_path / "data"))
    yield s
    s.close()


def drain(session, rows: int = 10_000, max_ticks: int = 10_000) -> int:
    """Tick and barrier until every running source is exhausted; epochs passed."""
    from rw_cli.stream.driver import sources_idle

    for i in range(max_ticks):
        session.tick(rows)
        session.barrier()
        if sources_idle(session):
            return i + 1
    raise AssertionError("sources did not finish")


def _store_fixtures():
    """The SeaweedFS (S3) server fixture of tests/store, shared rather than copied."""
    import importlib.util
    import os

    path = os.path.join(os.path.dirname(os.path.dirname(__file__)), "store", "conftest.py")
    spec = importlib.util.spec_from_file_location("_rw_store_fixtures", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


_store = _store_fixtures()
seaweedfs = _store.seaweedfs
S3_BUCKET = _store.BUCKET


def drain_until(session, query: str, expected, seconds: float = 30.0, rows: int = 10_000):
    """Tick and barrier until `query` returns `expected` (a live source such as Kafka has no
    end to drain to); the last result is returned so the caller's assert shows it."""
    import time

    deadline = time.monotonic() + seconds
    while True:
        session.tick(rows)
        session.barrier()
        got = session.execute(query).fetchall()
        if got == expected or time.monotonic() > deadline:
            return got
        time.sleep(0.01)
