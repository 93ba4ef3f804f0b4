"""Fixtures shared by every test folder. Servers start at most once per test process (once
per pytest-xdist worker), on free ports and in that process's own temporary directory."""
from __future__ import annotations

import os
import sys

import pytest

# tests/ itself: the shared helpers (servers, _fake_session) import by plain name
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from servers import seaweedfs_server, weed_binary  # noqa: E402

# Spark's JVMs in the tests (local mode here and in `rw` subprocesses, the standalone master,
# workers and their executors) run minutes at most: the JIT's optimizing compiler and the
# parallel collector cost them more CPU than they save (about half of Java's CPU in a run of
# the slt specs on Spark). rw_cli.spark.context passes this to the driver and executors.
SPARK_TEST_JAVA_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
os.environ.setdefault("RW_SPARK_JAVA_OPTIONS", SPARK_TEST_JAVA_OPTIONS)


@pytest.fixture(scope="session")
def seaweedfs(tmp_path_factory):
    """The S3 endpoint URL of a SeaweedFS server with bucket `rw-test` (servers.BUCKET),
    one for the whole session: tests keep apart by key prefix."""
    weed = weed_binary()
    if weed is None:
        pytest.skip("SeaweedFS (weed) is not available")
    with seaweedfs_server(weed, tmp_path_factory.mktemp("seaweedfs")) as endpoint:
        yield endpoint


def pytest_collection_modifyitems(config, items) -> None:
    """Tests marked `slow` run first: parallel workers (pytest-xdist, `make test`) then start
    the long ones early and finish together on the short ones, instead of one worker ending
    alone on a long test. The order within each part is unchanged."""
    items[:] = sorted(items, key=lambda item: item.get_closest_marker("slow") is None)
