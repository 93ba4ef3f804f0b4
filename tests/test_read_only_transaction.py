"""A read-only transaction block reads the snapshot pinned when it began, whatever is written
and committed meanwhile; COMMIT (or a pgwire client going away) unpins it
(rw_cli.handler.transaction)."""
from __future__ import annotations

import rw_cli
from rw_cli.handler import transaction


def _count(session) -> int:
    return session.execute("select count(*) from t").table.column(0)[0].as_py()


def _pinned(session) -> dict:
    return dict(session.store.version_manager._pinned_epochs)


def test_block_reads_its_snapshot_until_commit(tmp_path):
    s = rw_cli.connect(str(tmp_path / "d"))
    try:
        s.execute("create table t (v int primary key); insert into t values (1), (2); flush")
        s.execute("start transaction read only")
        assert isinstance(s.in_transaction, transaction.ReadOnlyTransaction)
        epoch = s.in_transaction.epoch
        assert _pinned(s).get(epoch)
        # another connection's write, committed: as the slt runner and the server run one
        block = s.in_transaction
        s.in_transaction = False
        s.execute("insert into t values (3); flush")
        s.in_transaction = block
        assert _count(s) == 2
        assert s.execute("select v from t where v = 3").table.num_rows == 0  # a point lookup too
        s.execute("commit")
        assert not s.in_transaction
        assert not _pinned(s).get(epoch)
        assert _count(s) == 3
    finally:
        s.close()


def test_idle_timeout_ends_the_block(tmp_path):
    import time

    import pytest

    from rw_cli.errors import RwError

    s = rw_cli.connect(str(tmp_path / "d"))
    try:
        s.execute("set idle_in_transaction_session_timeout = 100; begin read only")
        time.sleep(0.3)
        with pytest.raises(RwError, match="idle-in-transaction timeout"):
            s.execute("select 1")
        assert not s.in_transaction
        assert s.execute("select 1").table.column(0)[0].as_py() == 1
    finally:
        s.close()
