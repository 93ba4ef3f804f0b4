"""Compaction picking: which SSTs (or log segments) to merge next. Pure logic over a version.

L0 holds overlapping SSTs (one or a few per checkpoint, newest first); L1.. hold
non-overlapping SSTs sorted by key, each level `level_multiplier` times larger than the one
above. A task merges its inputs (all of L0 when it holds more than `l0_trigger` files, or one
SST of an oversized level, taken round-robin by key) with the overlapping SSTs of the target
level; tombstones can go when nothing lies below the target level. Under a stream of
checkpoints L0 grows to `l0_stall` files before compaction runs: fewer, larger L0 -> L1 merges
(each rewrites L1), as RisingWave lets L0 grow into many sub-levels before it compacts them.
Append logs are merged in tiers (append_log.merge_candidate).
"""
from __future__ import annotations

from dataclasses import dataclass

from rw_cli.store import append_log
from rw_cli.store.version import HummockVersion, LogSegment, SstInfo


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

    def pick(self, v: HummockVersion) -> CompactTask | None:
        """The next task due, if any (advances the level's cursor)."""
        levels = v.levels
        if len(levels[0]) > self.l0_trigger:
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
        return len(v.levels[0]) > self.l0_trigger or self.log_merge_due(v) or any(
            v.level_size(i) > self.level_target(i) for i in range(1, len(v.levels)))

    def due_after_commit(self, v: HummockVersion) -> bool:
        """Whether a checkpoint's version made compaction due (a commit adds to L0 and logs)."""
        return len(v.levels[0]) > self.l0_trigger or self.log_merge_due(v)

    def pressing(self, v: HummockVersion) -> bool:
        """L0 or a log grew so long that compaction runs even under a stream of checkpoints."""
        return len(v.levels[0]) >= self.l0_stall or any(len(s) >= append_log.LOG_STALL for s in v.logs.values())

    @staticmethod
    def log_merge_due(v: HummockVersion) -> bool:
        return any(append_log.merge_candidate(segs) for segs in v.logs.values())

    @staticmethod
    def pick_log_merge(v: HummockVersion, full: bool = False) -> tuple[int, list[LogSegment]] | None:
        """The next run of log segments to merge into one: (table id, segments)."""
        return next(((t, c) for t, segs in v.logs.items() if (c := append_log.merge_candidate(segs, full))), None)
