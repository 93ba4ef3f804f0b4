from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from rw_server import rw_server  # noqa: E402


@pytest.fixture(scope="module")
def port(tmp_path_factory, request):
    """A running `rw serve` of the test module's own, on a data directory of its own."""
    with rw_server(tmp_path_factory.mktemp(request.module.__name__.rsplit(".", 1)[-1]) / "data") as p:
        yield p
