"""A damaged data directory is reported as what it is (issue 20, item 9): a CURRENT pointer
that names a missing version is a damaged hint, not another writer, and the store goes on
from its version objects; a truncated SST is named as truncated."""
from __future__ import annotations

import glob
import os

import pytest

import rw_cli
from rw_cli.errors import StorageError


def _make(path: str) -> None:
    with rw_cli.connect(path) as s:
        s.execute("create table t (a int); insert into t select generate_series(1, 1000); flush")


def test_current_naming_a_missing_version_is_not_another_writer(tmp_path):
    path = str(tmp_path / "d")
    _make(path)
    with open(os.path.join(path, "store", "CURRENT"), "w") as f:
        f.write("99")
    with rw_cli.connect(path) as s:
        assert s.execute("select count(*) from t").fetchall() == [(1000,)]
        s.execute("insert into t values (1); flush")
        assert s.execute("select count(*) from t").fetchall() == [(1001,)]
    with rw_cli.connect(path) as s:
        assert s.execute("select count(*) from t").fetchall() == [(1001,)]


def test_truncated_sst_is_named(tmp_path):
    path = str(tmp_path / "d")
    _make(path)
    ssts = glob.glob(os.path.join(path, "store", "sst", "*.sst"))
    assert ssts
    for sst in ssts:
        os.truncate(sst, 100)
    with rw_cli.connect(path) as s:
        with pytest.raises(StorageError) as info:
            s.execute("select count(*) from t")
    assert "of the state store is truncated or damaged" in info.value.message
    assert "out of bounds" not in info.value.message
