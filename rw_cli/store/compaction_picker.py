"""Compaction picking: which SSTs (or log segments) to merge next. Pure logic over a version.

L0 holds overlapping SSTs (one or a few per checkpoint, newest first); L1.. hold
non-overlapping SSTs sorted by key, each level `level_multiplier` times larger than the one
above. A task merges its inputs (all of L0 when it is more than `l0_trigger` files deep, or one
SST of an oversized level, taken round-robin by key) with the overlapping SSTs of the target
level; tombstones can go when nothing lies below the target level. Under a stream of
checkpoints an L0 -> L1 merge waits until L0 is `l0_stall` files deep (each such merge
rewrites L1): meanwhile L0's newest files are merged among themselves, in tiers (`intra_l0`),
as RisingWave compacts L0's sub-levels — a read of a key asks each L0 file that may hold it,
so their depth must stay small while L0's bytes are small beside L1's. L0's depth (`l0_depth`)
counts files one key can lie in, not files: a checkpoint's SSTs cut at the target size, or
the SSTs of a Spark epoch's tasks (each over its own vnodes), sit side by side, one deep, as
RisingWave's non-overlapping sub-level. Append logs are merged in tiers
(append_log.merge_candidate).
"""
from __future__ import annotations

from dataclasses import dataclass

from rw_cli.store import append_log
from rw_cli.store.version import HummockVersion, LogSegment, SstInfo

# L0 goes down to L1 once its bytes times this exceed L1's; until then its files are merged
# among themselves
L0_SHARE_OF_L1 = 4


@dataclass
class CompactTask:
    inputs: list[tuple[int, list[SstInfo]]]  # (level, ssts), newest level first
    target_level: int
    bottom: bool
    trivial_move: bool = False

    @property
    def input_ids(self) -> set[int]:
        return {s.id for _, ssts in self.inputs for s in ssts}

    @property
    def input_bytes(self) -> int:
        return sum(s.file_size for _, ssts in self.inputs for s in ssts)


def _overlapping(level: list[SstInfo], lo: bytes, hi: bytes) -> list[SstInfo]:
    return [s for s in level if not (s.largest_key < lo or s.smallest_key > hi)]


def l0_depth(ssts: list[SstInfo]) -> int:
    """The most of `ssts` that one key lies in (their key ranges are closed): what a read of
    a key asks at most."""
    if len(ssts) <= 1:
        return len(ssts)
    edges = sorted([(s.smallest_key, 0) for s in ssts] + [(s.largest_key, 1) for s in ssts])
    depth = deepest = 0
    for _, end in edges:  # (at one key, ranges begin before others end: they share it)
        depth += -1 if end else 1
        deepest = max(deepest, depth)
    return deepest


def _is_bottom(v: HummockVersion, target: int) -> bool:
    return all(not lv for lv in v.levels[target + 1:])


class CompactionPicker:
    """The leveled compaction policy, with the one piece of state it keeps: the key where
    the last task of each level ended (the next one starts after it)."""

    def __init__(self, l0_trigger: int = 4, l0_stall: int | None = None, level_base_size: int = 256 << 20,
                 level_multiplier: int = 10, max_levels: int = 7):
        self.l0_trigger = l0_trigger
        self.l0_stall = l0_stall if l0_stall is not None else max(3 * l0_trigger, 24)
        self.level_base_size = level_base_size
        self.level_multiplier = level_multiplier
        self.max_levels = max(2, max_levels)
        self.cursors: dict[int, bytes] = {}

    def level_target(self, i: int) -> int:
        """The size level i may grow to before one of its SSTs moves down."""
        return self.level_base_size * self.level_multiplier ** max(0, i - 1)

    def intra_l0(self, v: HummockVersion) -> CompactTask | None:
        """An L0 -> L0 merge of L0's newest files, when L0 is more than `l0_trigger`
        files deep but holds few bytes beside L1 (an L0 -> L1 merge would rewrite much of L1 for
        little): the newest files, up to the first one more than twice as large as those
        before it together (size tiers: a large old file is not rewritten for a few small
        new ones, so a byte is merged about log(n) times). None when L0 should go down."""
        l0 = v.levels[0]
        depth = l0_depth(l0)
        if depth <= self.l0_trigger or depth >= self.l0_stall:
            return None
        if sum(s.file_size for s in l0) * L0_SHARE_OF_L1 > (v.level_size(1) if len(v.levels) > 1 else 0):
            return None
        picked = [l0[0]]
        total = l0[0].file_size
        for s in l0[1:]:
            if len(picked) >= 2 and s.file_size > 2 * total:
                break
            picked.append(s)
            total += s.file_size
        if len(picked) < 2 or l0_depth(l0[len(picked):]) + 1 > self.l0_trigger + 2:
            # the tiers left would keep L0 long: merge all of it
            picked = list(l0)
        return CompactTask([(0, picked)], 0, False)

    def pick(self, v: HummockVersion) -> CompactTask | None:
        """The next task due, if any (advances the level's cursor)."""
        levels = v.levels
        if l0_depth(levels[0]) > self.l0_trigger:
            intra = self.intra_l0(v)
            if intra is not None:
                return intra
            l0 = list(levels[0])
            lo = min(s.smallest_key for s in l0)
            hi = max(s.largest_key for s in l0)
            l1 = _overlapping(levels[1], lo, hi) if len(levels) > 1 else []
            return CompactTask([(0, l0), (1, l1)], 1, _is_bottom(v, 1))
        for i in range(1, min(len(levels), self.max_levels - 1)):
            if v.level_size(i) > self.level_target(i):
                cursor = self.cursors.get(i, b"")
                cands = [s for s in levels[i] if s.smallest_key > cursor] or levels[i]
                pick = cands[0]
                self.cursors[i] = pick.largest_key
                nxt = _overlapping(levels[i + 1], pick.smallest_key, pick.largest_key) if len(levels) > i + 1 else []
                return CompactTask([(i, [pick]), (i + 1, nxt)], i + 1, _is_bottom(v, i + 1), trivial_move=not nxt)
        return None

    @staticmethod
    def pick_full(v: HummockVersion) -> CompactTask | None:
        """One task that merges every SST into the bottom level (None: no SSTs)."""
        if not v.ssts():
            return None
        deepest = max([i for i, lv in enumerate(v.levels) if lv] + [1])
        inputs = [(i, list(lv)) for i, lv in enumerate(v.levels) if lv]
        return CompactTask(inputs, deepest, True)

    def due(self, v: HummockVersion) -> bool:
        """Whether some level (or log) is over its limit."""
        return l0_depth(v.levels[0]) > self.l0_trigger or self.log_merge_due(v) or any(
            v.level_size(i) > self.level_target(i) for i in range(1, len(v.levels)))

    def due_after_commit(self, v: HummockVersion) -> bool:
        """Whether a checkpoint's version made compaction due (a commit adds to L0 and logs)."""
        return l0_depth(v.levels[0]) > self.l0_trigger or self.log_merge_due(v)

    def pressing(self, v: HummockVersion) -> bool:
        """L0 or a log grew so long that compaction runs even under a stream of checkpoints
        (L0's own tiers are merged under it too: they are small)."""
        return l0_depth(v.levels[0]) >= self.l0_stall or self.intra_l0(v) is not None or \
            any(len(s) >= append_log.LOG_STALL for s in v.logs.values())

    @staticmethod
    def log_merge_due(v: HummockVersion) -> bool:
        return any(append_log.merge_candidate(segs) for segs in v.logs.values())

    @staticmethod
    def pick_log_merge(v: HummockVersion, full: bool = False) -> tuple[int, list[LogSegment]] | None:
        """The next run of log segments to merge into one: (table id, segments)."""
        return next(((t, c) for t, segs in v.logs.items() if (c := append_log.merge_candidate(segs, full))), None)
