"""Executors in isolation: text-format chunks in, chunks out (as RisingWave's executor tests)."""
import pytest
from sqlglot import parse_one

from rw_cli.common.types import BIGINT, DOUBLE, INTEGER, VARCHAR, DataType
from rw_cli.engine.chunk import StreamChunk
from rw_cli.engine.filter import FilterExecutor
from rw_cli.engine.agg_call import AggCall, agg_return_type, state_types
from rw_cli.engine import hash_agg
from rw_cli.engine.hash_agg import HashAggExecutor
from rw_cli.engine.hash_join import HashJoinExecutor
from rw_cli.engine.materialize import MaterializeExecutor
from rw_cli.engine.project import ProjectExecutor
from rw_cli.common.epoch import EpochPair
from rw_cli.sql.expr_compile import compile_duckdb, compile_duckdb_condition

II = [INTEGER, INTEGER]


def expr(sql, types=II):
    return compile_duckdb(parse_one(sql, read="duckdb"), types, strict=True)


def condition_of(sql, types=II, strict=False):
    return compile_duckdb_condition(parse_one(sql, read="duckdb"), types, strict=strict, arrow_form=strict)


def chunk(text, types=II):
    return StreamChunk.from_pretty(text, types)


def pretty(chunks):
    return "\n".join(c.to_pretty() for c in chunks)


def barrier(n=1):
    return EpochPair(curr=(n + 1) << 16, prev=n << 16)


def test_project_evaluates_expressions_and_keeps_ops():
    ex = ProjectExecutor([expr("_0 + _1"), expr("_0 // 2")], [INTEGER, INTEGER], [])
    out = ex.on_chunk(chunk("+ 1 2\n- 5 .\nU- 3 4\nU+ 3 5"))
    assert pretty(out) == "+ 3 0\n- . 2\nU- 7 1\nU+ 8 1"


def test_filter_splits_update_pairs_whose_halves_differ():
    ex = FilterExecutor(condition_of("_1 > 10"), II, [0])
    out = ex.on_chunk(chunk("+ 1 20\n+ 2 5\nU- 3 5\nU+ 3 50\n- 4 .", II))
    assert pretty(out) == "+ 1 20\n+ 3 50"


def test_filter_passes_whole_chunk_unchanged():
    ex = FilterExecutor(condition_of("_1 > 0"), II, [0])
    out = ex.on_chunk(chunk("U- 3 5\nU+ 3 50"))
    assert pretty(out) == "U- 3 5\nU+ 3 50"


def _agg(make_table, calls, group_keys=(0,), input_types=II):
    keys = [input_types[k] for k in group_keys]
    types, names = keys + [BIGINT], None
    for c in calls:
        c.arg_type = input_types[c.arg] if c.arg is not None else None
        c.return_type = agg_return_type(c.kind, c.arg_type)
        types += [t for _, t in state_types(c)]
    result = make_table(types, list(range(len(keys))))
    minput = {i: make_table(keys + [c.arg_type, BIGINT], list(range(len(keys) + 1)))
              for i, c in enumerate(calls) if c.needs_minput}
    return HashAggExecutor(input_types, list(group_keys), calls, result, minput)


def test_hash_agg_emits_at_barrier_with_retractions(make_table):
    ex = _agg(make_table, [AggCall("count_star", None, None, None), AggCall("sum", 1, None, None)])
    assert ex.on_chunk(chunk("+ 1 10\n+ 1 5\n+ 2 7")) == []
    assert pretty(ex.on_barrier(barrier(1))) == "+ 1 2 15\n+ 2 1 7"
    ex.on_chunk(chunk("- 1 5\n- 2 7"))
    assert pretty(ex.on_barrier(barrier(2))) == "U- 1 2 15\nU+ 1 1 10\n- 2 1 7"


def test_hash_agg_unchanged_group_emits_nothing(make_table):
    ex = _agg(make_table, [AggCall("sum", 1, None, None)])
    ex.on_chunk(chunk("+ 1 10"))
    ex.on_barrier(barrier(1))
    ex.on_chunk(chunk("+ 1 0"))
    assert pretty(ex.on_barrier(barrier(2))) == ""


def test_retractable_min_max_answered_from_state(make_table):
    ex = _agg(make_table, [AggCall("min", 1, None, None), AggCall("max", 1, None, None)])
    ex.on_chunk(chunk("+ 1 3\n+ 1 1\n+ 1 9\n+ 1 1"))
    assert pretty(ex.on_barrier(barrier(1))) == "+ 1 1 9"
    ex.on_chunk(chunk("- 1 1"))  # one of two 1s: the minimum stays
    assert pretty(ex.on_barrier(barrier(2))) == ""
    ex.on_chunk(chunk("- 1 1\n- 1 9"))
    assert pretty(ex.on_barrier(barrier(3))) == "U- 1 1 9\nU+ 1 3 3"


@pytest.mark.parametrize("rows_per_range", [0, 10 ** 12])  # key ranges per group / one scan
def test_min_max_recomputed_for_many_groups(make_table, monkeypatch, rows_per_range):
    """More than a few groups lose their extreme in one epoch: each is recomputed from its
    materialized input, whether by its key range or by a scan of the whole input."""
    monkeypatch.setattr(hash_agg, "PREFIX_SCAN_ROWS", rows_per_range)
    ex = _agg(make_table, [AggCall("max", 1, None, None), AggCall("min", 1, None, None)])
    ex.on_chunk(chunk("\n".join(f"+ {g} {v}" for g in range(100) for v in (g, g + 5, g + 7))))
    ex.on_barrier(barrier(1))
    ex.on_chunk(chunk("\n".join(f"- {g} {g + 7}" for g in range(100)) + "\n- 3 3\n- 4 4\n- 4 9\n+ 5 1"))
    got = set(pretty(ex.on_barrier(barrier(2))).splitlines())
    want = {line for g in range(100) if g not in (4, 5) for line in (f"U- {g} {g + 7} {g}", f"U+ {g} {g + 5} {g}")}
    want = (want - {"U+ 3 8 3"}) | {"U+ 3 8 8", "- 4 11 4", "U- 5 12 5", "U+ 5 10 1"}
    assert got == want


def test_simple_agg_has_a_row_from_the_start(make_table):
    ex = _agg(make_table, [AggCall("count_star", None, None, None), AggCall("sum", 1, None, None)],
              group_keys=())
    assert pretty(ex.on_barrier(barrier(1))) == "+ 0 ."
    ex.on_chunk(chunk("+ 1 4"))
    assert pretty(ex.on_barrier(barrier(2))) == "U- 0 .\nU+ 1 4"
    ex.on_chunk(chunk("- 1 4"))
    assert pretty(ex.on_barrier(barrier(3))) == "U- 1 4\nU+ 0 ."


def test_hash_agg_recovers_state_from_store(make_table, store):
    ex = _agg(make_table, [AggCall("sum", 1, None, None)])
    ex.on_chunk(chunk("+ 1 10"))
    ex.on_barrier(barrier(1))
    store.commit_epoch(1 << 16)
    again = HashAggExecutor(ex.input_types, ex.group_keys, ex.calls, ex.result_table.__class__(
        store, ex.result_table.table_id, ex.result_table.schema, ex.result_table.pk_indices), {})
    again.on_chunk(chunk("+ 1 1"))
    assert pretty(again.on_barrier(barrier(2))) == "U- 1 10\nU+ 1 11"


def test_avg_of_double(make_table):
    ex = _agg(make_table, [AggCall("avg", 1, None, None)], input_types=[INTEGER, DOUBLE])
    ex.on_chunk(chunk("+ 1 1.5\n+ 1 2.5", [INTEGER, DOUBLE]))
    assert pretty(ex.on_barrier(barrier(1))) == "+ 1 2.0"


def _join(make_table, kind, lt, rt, lk, rk, cond=None, null_safe=None):
    condition = None if cond is None else condition_of(cond, lt + rt, strict=True)
    return HashJoinExecutor(kind, lt, rt, lk, rk, null_safe or [False] * len(lk), condition, [1], [1],
                            (make_table(lt, [1]), make_table(rt, [1])))


def test_hash_join_inner_with_both_sides(make_table):
    lt, rt = [INTEGER, VARCHAR], [INTEGER, INTEGER]
    ex = _join(make_table, "inner", lt, rt, [0], [0])
    assert ex.on_chunk(StreamChunk.from_pretty("+ 1 a\n+ 2 b", lt), 0) == []
    ex.on_chunk(StreamChunk.from_pretty("+ 1 100\n+ 1 101\n+ 3 102", rt), 1)
    assert sorted(pretty(ex.on_barrier(barrier(1))).splitlines()) == ["+ 1 a 1 100", "+ 1 a 1 101"]
    ex.on_chunk(StreamChunk.from_pretty("- 1 a", lt), 0)
    assert sorted(pretty(ex.on_barrier(barrier(2))).splitlines()) == ["- 1 a 1 100", "- 1 a 1 101"]
    ex.on_chunk(StreamChunk.from_pretty("+ 3 c", lt), 0)
    assert pretty(ex.on_barrier(barrier(3))) == "+ 3 c 3 102"


def test_hash_join_condition_and_null_keys(make_table):
    ex = _join(make_table, "inner", II, II, [0], [0], cond="_1 < _3")
    ex.on_chunk(chunk("+ 1 5\n+ . 6"), 0)
    ex.on_chunk(chunk("+ 1 4\n+ 1 9\n+ . 10"), 1)
    assert pretty(ex.on_barrier(barrier(1))) == "+ 1 5 1 9"


def test_null_safe_join_matches_nulls(make_table):
    ex = _join(make_table, "inner", II, II, [0], [0], null_safe=[True])
    ex.on_chunk(chunk("+ . 6"), 0)
    ex.on_chunk(chunk("+ . 10"), 1)
    assert pretty(ex.on_barrier(barrier(1))) == "+ . 6 . 10"


def test_left_join_pads_and_unpads(make_table):
    ex = _join(make_table, "left", II, II, [0], [0])
    ex.on_chunk(chunk("+ 1 5"), 0)
    assert pretty(ex.on_barrier(barrier(1))) == "+ 1 5 . ."
    ex.on_chunk(chunk("+ 1 7"), 1)
    assert pretty(ex.on_barrier(barrier(2))) == "- 1 5 . .\n+ 1 5 1 7"
    ex.on_chunk(chunk("- 1 7"), 1)
    assert pretty(ex.on_barrier(barrier(3))) == "- 1 5 1 7\n+ 1 5 . ."


def test_full_join(make_table):
    ex = _join(make_table, "full", II, II, [0], [0])
    ex.on_chunk(chunk("+ 1 5"), 0)
    ex.on_chunk(chunk("+ 2 7"), 1)
    assert sorted(pretty(ex.on_barrier(barrier(1))).splitlines()) == ["+ . . 2 7", "+ 1 5 . ."]


def test_semi_and_anti_join(make_table):
    semi = _join(make_table, "semi", II, II, [0], [0])
    anti = _join(make_table, "anti", II, II, [0], [0])
    for ex in (semi, anti):
        ex.on_chunk(chunk("+ 1 5\n+ 2 6"), 0)
        ex.on_chunk(chunk("+ 1 9\n+ 1 10"), 1)
    assert pretty(semi.on_barrier(barrier(1))) == "+ 1 5"
    assert pretty(anti.on_barrier(barrier(1))) == "+ 2 6"
    anti.on_chunk(chunk("- 1 9\n- 1 10"), 1)
    assert pretty(anti.on_barrier(barrier(2))) == "+ 1 5"


def test_join_recovers_sides_from_store(make_table, store):
    ex = _join(make_table, "inner", II, II, [0], [0])
    ex.on_chunk(chunk("+ 1 5"), 0)
    ex.on_barrier(barrier(1))
    store.commit_epoch(1 << 16)
    again = HashJoinExecutor("inner", II, II, [0], [0], [False], None, [1], [1], tuple(ex.tables), fresh=False)
    again.on_chunk(chunk("+ 1 7"), 1)
    assert pretty(again.on_barrier(barrier(2))) == "+ 1 5 1 7"


def test_materialize_overwrites_on_pk_conflict(make_table):
    table = make_table(II, [0])
    ex = MaterializeExecutor(II, [0], table, conflict="overwrite")
    assert pretty(ex.on_chunk(chunk("+ 1 10\n+ 2 20"))) == "+ 1 10\n+ 2 20"
    assert pretty(ex.on_chunk(chunk("+ 1 11\n+ 3 30\n+ 3 31"))) == "U- 1 10\nU+ 1 11\n+ 3 31"
    rows = table.scan().to_pylist()
    assert sorted((r["_0"], r["_1"]) for r in rows) == [(1, 11), (2, 20), (3, 31)]


@pytest.mark.parametrize("types", [II, [VARCHAR, INTEGER]])
def test_materialize_keeps_each_keys_last_write_in_a_chunk(make_table, types):
    """Unordered keys, distinct or repeated: the last write of each key wins (Arrow finds
    it; keys all distinct need no grouping)."""
    table = make_table(types, [0])
    ex = MaterializeExecutor(types, [0], table, conflict="overwrite")
    assert pretty(ex.on_chunk(chunk("+ 5 1\n+ 2 2\n+ 9 3", types))) == "+ 5 1\n+ 2 2\n+ 9 3"
    got = pretty(ex.on_chunk(chunk("+ 7 4\n+ 2 5\n+ 7 6\n+ 2 7\n+ . 8\n+ . 9", types)))
    assert got == "+ 7 6\nU- 2 2\nU+ 2 7\n+ . 9"


def test_from_pretty_round_trip():
    c = StreamChunk.from_pretty("+ 1 x\nU- . y", [INTEGER, VARCHAR])
    assert c.to_pretty() == "+ 1 x\nU- . y"
    assert DataType.from_arrow(c.data.schema.field(1).type) == VARCHAR


def test_materialize_conflict_do_nothing_and_if_not_null(make_table):
    keep = MaterializeExecutor(II, [0], make_table(II, [0]), conflict="do nothing")
    keep.on_chunk(chunk("+ 1 10"))
    assert pretty(keep.on_chunk(chunk("+ 1 11\n+ 2 20"))) == "+ 2 20"
    merge = MaterializeExecutor(II, [0], make_table(II, [0]), conflict="do update if not null")
    merge.on_chunk(chunk("+ 1 10"))
    assert pretty(merge.on_chunk(chunk("+ 1 ."))) == "U- 1 10\nU+ 1 10"
