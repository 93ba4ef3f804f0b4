"""A fragment as N actors behind a hash exchange gives the same results as one actor."""
import os
import subprocess
import sys

from rw_cli.common.types import INTEGER
from rw_cli.engine.chunk import StreamChunk
from rw_cli.engine.exchange import ExchangeExecutor, owned_vnodes, vnode_owners
from rw_cli.engine.agg_call import AggCall, agg_return_type, state_types
from rw_cli.engine.hash_agg import HashAggExecutor
from rw_cli.common.epoch import EpochPair
from rw_cli.common.types import BIGINT

II = [INTEGER, INTEGER]


def test_vnode_ranges_cover_every_vnode_once():
    for n in (1, 2, 3, 4, 7):
        owners = vnode_owners(n)
        assert sorted(set(owners)) == list(range(n))
        masks = [owned_vnodes(i, n) for i in range(n)]
        assert sum(m.astype(int) for m in masks).tolist() == [1] * 256


def _agg(store, table_id, vn=None):
    from rw_cli.store.state_table import StateTable
    import pyarrow as pa

    call = AggCall("sum", 1, INTEGER, agg_return_type("sum", INTEGER))
    types = [INTEGER, BIGINT] + [t for _, t in state_types(call)]
    schema = pa.schema([pa.field(f"c{i}", t.arrow()) for i, t in enumerate(types)])
    return HashAggExecutor(II, [0], [call], StateTable(store, table_id, schema, [0]), {})


def test_exchange_of_hash_agg_matches_single_actor(store):
    rows = "\n".join(f"+ {k % 37} {k}" for k in range(500))
    single = _agg(store, 1)
    par = ExchangeExecutor([_agg(store, 2) for _ in range(4)], [[0]])
    for ex in (single, par):
        assert ex.on_chunk(StreamChunk.from_pretty(rows, II)) == []
    ep = EpochPair(2 << 16, 1 << 16)
    a = sorted(single.on_barrier(ep)[0].to_pretty().splitlines())
    b = sorted(line for c in par.on_barrier(ep) for line in c.to_pretty().splitlines())
    assert a == b and len(a) == 37


def test_slt_specs_pass_with_four_actors():
    env = {**os.environ, "RW_STREAMING_PARALLELISM": "4"}
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    p = subprocess.run([sys.executable, "-m", "rw_cli.cli", "slt", os.path.join(root, "slt")],
                       capture_output=True, text=True, env=env)
    assert p.returncode == 0, p.stdout[-3000:]
    assert ", 0 failed" in p.stdout


def test_row_moving_between_actors_is_not_lost(tmp_path):
    """An update that changes the partition key retracts on one actor and inserts on another;
    the merged output must retract first."""
    import rw_cli

    with rw_cli.connect(str(tmp_path / "d")) as s:
        s.execute("set streaming_parallelism = 4; set rw_implicit_flush to true")
        s.execute("create table t2 (id int primary key, k int, w int)")
        s.execute("insert into t2 values (1, 1, 10), (2, 1, 5), (3, 3, 50), (4, 3, 7)")
        q = ("select k, id, w from (select k, id, w, row_number() over (partition by k order by w, id) as rn "
             "from t2) where rn <= 2")
        s.execute("create materialized view g as " + q)
        for k in range(8):
            s.execute(f"insert into t2 values (4, {k}, 4)")
            assert sorted(s.execute("select * from g").fetchall()) == sorted(s.execute(q).fetchall())
