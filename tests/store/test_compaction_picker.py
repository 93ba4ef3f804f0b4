"""The compaction picker on its own: versions built by hand in, tasks out (no store, no I/O)."""
from __future__ import annotations

from rw_cli.store.append_log import LOG_FANOUT, LOG_STALL
from rw_cli.store.compaction_picker import CompactionPicker, l0_depth
from rw_cli.store.version import HummockVersion, LogSegment, SstInfo


def sst(sid: int, lo: bytes, hi: bytes, size: int = 100) -> SstInfo:
    return SstInfo(sid, size, 0, 0, 0, lo, hi, 1, 1, 1)


def version(*levels: list[SstInfo], logs: dict | None = None) -> HummockVersion:
    return HummockVersion(id=1, max_committed_epoch=1, levels=[list(lv) for lv in levels] or [[]], logs=logs or {})


def segs(table_id: int, levels: list[int]) -> list[LogSegment]:
    return [LogSegment(100 + i, table_id, i, i, 1, 10, lv) for i, lv in enumerate(levels)]


def test_nothing_due_in_an_empty_or_small_version():
    p = CompactionPicker(l0_trigger=2)
    for v in (version(), version([sst(1, b"a", b"b"), sst(2, b"c", b"d")])):
        assert p.pick(v) is None
        assert not p.due(v) and not p.due_after_commit(v) and not p.pressing(v)


def test_l0_past_its_trigger_merges_with_the_overlapping_l1_ssts():
    p = CompactionPicker(l0_trigger=2)
    l0 = [sst(3, b"c", b"e"), sst(2, b"d", b"f"), sst(1, b"a", b"d")]  # three deep at d
    l1 = [sst(10, b"0", b"0"), sst(11, b"a", b"c"), sst(12, b"f", b"g"), sst(13, b"x", b"z")]
    v = version(l0, l1)
    assert p.due(v) and p.due_after_commit(v)
    task = p.pick(v)
    assert task.target_level == 1 and not task.trivial_move
    assert [(lv, [s.id for s in ss]) for lv, ss in task.inputs] == [(0, [3, 2, 1]), (1, [11, 12])]
    assert task.bottom and task.input_ids == {1, 2, 3, 11, 12}
    assert task.input_bytes == 500


def test_l0_is_counted_by_depth_so_ssts_side_by_side_count_once():
    """A checkpoint's SSTs cut at the target size, or the SSTs of a Spark epoch's tasks (each
    over its own vnodes), lie side by side: a read of a key asks one of them."""
    assert l0_depth([]) == 0 and l0_depth([sst(1, b"a", b"b")]) == 1
    assert l0_depth([sst(1, b"a", b"b"), sst(2, b"c", b"d")]) == 1
    assert l0_depth([sst(1, b"a", b"c"), sst(2, b"c", b"d")]) == 2  # (closed ranges: both hold c)
    # six epochs of two tasks each, newest first: twelve files, six deep
    l0 = [sst(10 * e + t, b"ab"[t:t + 1] + b"0", b"ab"[t:t + 1] + b"9") for e in range(6, 0, -1) for t in range(2)]
    assert l0_depth(l0) == 6
    p = CompactionPicker(l0_trigger=4, l0_stall=6)
    assert not p.due(version(l0[:8])) and not p.due_after_commit(version(l0[:8]))  # four deep
    assert p.due(version(l0[:10])) and not p.pressing(version(l0[:10]))  # five deep
    assert p.pressing(version(l0)) and p.pick(version(l0)).target_level == 1  # six deep: stalled


def test_a_task_is_not_bottom_when_a_lower_level_holds_ssts():
    p = CompactionPicker(l0_trigger=0)
    assert not p.pick(version([sst(1, b"a", b"b")], [], [sst(2, b"a", b"b")])).bottom
    assert p.pick(version([sst(1, b"a", b"b")], [], [])).bottom


def test_level_targets_grow_by_the_multiplier():
    p = CompactionPicker(level_base_size=1000, level_multiplier=10)
    assert [p.level_target(i) for i in range(1, 4)] == [1000, 10000, 100000]


def test_an_oversized_level_moves_one_sst_down_round_robin():
    p = CompactionPicker(l0_trigger=4, level_base_size=250, level_multiplier=10, max_levels=4)
    l1 = [sst(1, b"a", b"b"), sst(2, b"c", b"d"), sst(3, b"e", b"f")]
    v = version([], l1, [sst(9, b"c", b"c")])
    assert p.due(v) and not p.due_after_commit(v)  # a checkpoint only adds to L0
    picks = []
    for _ in range(4):
        t = p.pick(v)
        picks.append((t.inputs[0][1][0].id, [s.id for s in t.inputs[1][1]], t.trivial_move))
    # no overlap below: a trivial move; the cursor goes round the level
    assert picks == [(1, [], True), (2, [9], False), (3, [], True), (1, [], True)]
    assert p.cursors[1] == b"b"


def test_the_last_level_is_never_picked():
    p = CompactionPicker(l0_trigger=4, level_base_size=1, max_levels=3)
    assert p.pick(version([], [], [sst(1, b"a", b"b")])) is None


def test_a_full_compaction_takes_every_sst_into_the_deepest_level():
    assert CompactionPicker.pick_full(version()) is None
    v = version([sst(1, b"a", b"b")], [], [sst(2, b"c", b"d")])
    t = CompactionPicker.pick_full(v)
    assert t.target_level == 2 and t.bottom
    assert [(lv, [s.id for s in ss]) for lv, ss in t.inputs] == [(0, [1]), (2, [2])]
    assert CompactionPicker.pick_full(version([sst(1, b"a", b"b")])).target_level == 1


def test_l0_stall_makes_compaction_pressing():
    p = CompactionPicker(l0_trigger=2)
    assert p.l0_stall == 24  # at least 24, or three times the trigger
    assert CompactionPicker(l0_trigger=10).l0_stall == 30
    p = CompactionPicker(l0_trigger=2, l0_stall=3)
    assert not p.pressing(version([sst(i, b"a", b"b") for i in range(2)]))
    assert p.pressing(version([sst(i, b"a", b"b") for i in range(3)]))


def test_log_merges_are_picked_by_tier():
    p = CompactionPicker()
    few = version(logs={7: segs(7, [0] * (LOG_FANOUT - 1))})
    assert not p.log_merge_due(few) and p.pick_log_merge(few) is None
    assert p.pick_log_merge(few, full=True) == (7, segs(7, [0] * (LOG_FANOUT - 1)))
    tier = version(logs={7: segs(7, [1] + [0] * LOG_FANOUT)})
    assert p.log_merge_due(tier) and p.due(tier) and p.due_after_commit(tier)
    table, picked = p.pick_log_merge(tier)
    assert table == 7 and [g.level for g in picked] == [0] * LOG_FANOUT
    long = version(logs={7: segs(7, [i % 2 for i in range(LOG_STALL)])})
    assert p.pressing(long) and len(p.pick_log_merge(long)[1]) == LOG_STALL


def test_small_l0_beside_a_large_l1_merges_its_newest_tier_within_l0():
    p = CompactionPicker(l0_trigger=4)
    l1 = [sst(20, b"a", b"m", 10_000), sst(21, b"n", b"z", 10_000)]
    # newest first: five small files, then one merged earlier (more than twice their sum)
    l0 = [sst(9 - i, b"a", b"z", 10) for i in range(5)] + [sst(1, b"a", b"z", 500)]
    v = version(l0, l1)
    task = p.pick(v)
    assert task.target_level == 0 and not task.bottom
    assert [(lv, [s.id for s in ss]) for lv, ss in task.inputs] == [(0, [9, 8, 7, 6, 5])]
    assert p.pressing(v)  # L0's tiers merge even while checkpoints stream in
    # at or below the trigger: nothing to do
    assert p.intra_l0(version(l0[:4], l1)) is None


def test_l0_goes_down_to_l1_when_its_bytes_are_large_beside_l1_or_it_stalls():
    p = CompactionPicker(l0_trigger=4, l0_stall=8)
    l0 = [sst(9 - i, b"a", b"z", 1000) for i in range(6)]
    big_l0 = version(l0, [sst(20, b"a", b"z", 10_000)])
    assert p.intra_l0(big_l0) is None and p.pick(big_l0).target_level == 1
    no_l1 = version(l0)
    assert p.pick(no_l1).target_level == 1  # nothing in L1 to rewrite
    stalled = version([sst(30 - i, b"a", b"z", 1) for i in range(8)], [sst(20, b"a", b"z", 10_000)])
    assert p.intra_l0(stalled) is None and p.pick(stalled).target_level == 1


def test_an_l0_whose_tiers_would_stay_long_is_merged_whole():
    p = CompactionPicker(l0_trigger=2)
    # every file more than twice the ones before it: tiers of one file each
    l0 = [sst(10 - i, b"a", b"z", 3 ** i) for i in range(6)]
    task = p.intra_l0(version(l0, [sst(20, b"a", b"z", 100_000)]))
    assert [s.id for s in task.inputs[0][1]] == [10, 9, 8, 7, 6, 5]
