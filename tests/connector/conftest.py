import pytest

import rw_cli
from servers import BUCKET


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


S3_BUCKET = BUCKET


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
