"""Reads of one view of the store: a version and the shared buffer's batches above it.

The shared buffer's batches come first (newest first), then L0 SSTs (newest first), then
levels 1.. (non-overlapping); the newest entry of a key at or below the read epoch wins and
a tombstone hides it. Point lookups are batched: the query keys are sorted and deduplicated
once, and each source is asked only for the keys not found yet, so a lookup opens only the
SSTs whose key range holds a query key. Scans stream Runs out of the merge iterator, in steps
of about a megabyte. Pinning the view is the caller's business (HummockStorage).
"""
from __future__ import annotations

import bisect
from typing import Iterator

import numpy as np
import pyarrow as pa

from rw_cli.store.keys import KeyForm, argsort_sortable, sortable_keys, sortable_one
from rw_cli.store.merge import SCAN_BATCH_BYTES, coalesce, merge_runs
from rw_cli.store.run import Run, key_lengths
from rw_cli.store.shared_buffer import SharedBufferBatch
from rw_cli.store.sst import SstReader, bloom_probes, key_hashes
from rw_cli.store.sstable_store import SstableStore
from rw_cli.store.version import HummockVersion, SstInfo
from rw_cli.common.lazy_import import lazy_import

pc = lazy_import("pyarrow.compute")  # imported on first use: see rw_cli.common.lazy_import


class VersionReader:
    """Reads a view through the SST store (its caches)."""

    def __init__(self, sstables: SstableStore):
        self.sstables = sstables

    def multi_get(self, version: HummockVersion, buffer: list[SharedBufferBatch], keys: pa.Array,
                  epoch: int) -> pa.Array:
        """The value of each key (binary, not empty) at `epoch` as a binary array (null:
        absent or deleted)."""
        n = len(keys)
        qform = KeyForm.of_lengths(key_lengths(keys))
        qsk, _ = sortable_keys(keys, qform)
        order = argsort_sortable(qsk)
        s = qsk[order]
        first = np.ones(n, dtype=bool)
        first[1:] = s[1:] != s[:-1]
        uniq_of_sorted = np.cumsum(first) - 1
        inv = np.empty(n, dtype=np.int64)
        inv[order] = uniq_of_sorted
        q = keys.take(pa.array(order[first], pa.int64()))
        nq = len(q)
        hashes = key_hashes(q)
        probes = bloom_probes(hashes)  # once: each SST's filter only masks them
        pending = _Pending(q, hashes, probes, {qform.key(): (s[first], None)})
        found = pending.found
        hit_idx: list[np.ndarray] = []
        hit_vals: list[pa.Array] = []
        for b in reversed(buffer):
            if b.epoch > epoch:
                continue
            pending.ask(lambda qq, hh, pp, ff, b=b: b.lookup(qq, ff), hit_idx, hit_vals)
            if found.all():
                break
        # only the SSTs whose key range holds a query key are opened (their metas loaded)
        qlo, qhi = q[0].as_py(), q[nq - 1].as_py()
        for level_no, level in enumerate(version.levels):
            if found.all():
                break
            if level_no == 0:
                infos = [i for i in level if not (i.largest_key < qlo or i.smallest_key > qhi)]
            else:  # non-overlapping and sorted: bisect to the first SST that may hold qlo
                j = bisect.bisect_left(version.level_largest_keys(level_no), qlo)
                infos = []
                while j < len(level) and level[j].smallest_key <= qhi:
                    infos.append(level[j])
                    j += 1
            for info in infos:
                if found.all():
                    break
                if info.min_epoch > epoch:
                    continue
                rd = self.sstables.reader(info)
                pending.ask(lambda qq, hh, pp, ff, rd=rd: rd.lookup(qq, hh, epoch, ff, pp), hit_idx, hit_vals)
        if not hit_idx:
            return pa.nulls(n, pa.binary())
        idx = np.concatenate(hit_idx)
        vals = pa.concat_arrays(hit_vals)
        where = np.full(nq, -1, dtype=np.int64)
        where[idx] = np.arange(len(idx))
        per_key = where[inv]
        return vals.take(pa.array(per_key, pa.int64(), mask=per_key < 0))

    def _sources(self, version: HummockVersion, buffer: list[SharedBufferBatch], start: bytes, end: bytes | None,
                 epoch: int) -> tuple[list, KeyForm]:
        sources: list = []
        forms: list[KeyForm] = []
        for b in reversed(buffer):
            if b.epoch <= epoch:
                r = b.range_run(start, end)
                if len(r):
                    sources.append([r])
                    forms.append(b.form)

        def overlaps(info: SstInfo) -> bool:
            return not (info.largest_key < start or (end is not None and info.smallest_key >= end)
                        or info.min_epoch > epoch)

        for info in version.levels[0]:
            if overlaps(info):
                rd = self.sstables.reader(info)
                sources.append(rd.runs(start, end))
                forms.append(rd.meta.form)
        for level in version.levels[1:]:
            infos = [i for i in level if overlaps(i)]
            if infos:
                readers = [self.sstables.reader(i) for i in infos]
                forms.extend(r.meta.form for r in readers)
                sources.append(_concat_level(readers, start, end))
        if len(sources) > 1:
            # merge steps of about a megabyte per source rather than one block
            sources = [coalesce(src) for src in sources]
        return sources, KeyForm.common(forms)

    @staticmethod
    def content_token(version: HummockVersion, buffer: list[SharedBufferBatch], start: bytes,
                      end: bytes | None, epoch: int) -> tuple[int, ...] | None:
        """The ids of the SSTs that hold the entries of [start, end) read at `epoch`, when
        they hold no newer entry and no buffered batch holds any: SSTs never change and their
        ids are never reused, so two reads with the same token see the same entries, at any
        two such epochs. None otherwise (a reader keys on the epoch instead)."""
        for b in buffer:
            if b.epoch <= epoch and len(b.range_run(start, end)):
                return None
        ids: list[int] = []
        for level in version.levels:
            for info in level:
                if info.largest_key < start or (end is not None and info.smallest_key >= end) \
                        or info.min_epoch > epoch:
                    continue  # not read at `epoch` (as `_sources` decides)
                if info.max_epoch > epoch:
                    return None
                ids.append(info.id)
        return tuple(sorted(ids))

    def iter_runs(self, version: HummockVersion, buffer: list[SharedBufferBatch], start: bytes,
                  end: bytes | None, epoch: int, include_tombstones: bool = False) -> Iterator[Run]:
        """Stream the visible entries of [start, end) at `epoch` as Runs (one entry per key)."""
        sources, form = self._sources(version, buffer, start, end, epoch)
        pending: list[Run] = []
        size = 0
        for r in merge_runs(sources, form):
            v = r.visible(epoch, include_tombstones)
            if not len(v):
                continue
            pending.append(v)
            size += v.keys.nbytes + v.values.nbytes
            if size >= SCAN_BATCH_BYTES:
                yield Run.concat(pending) if len(pending) > 1 else pending[0]
                pending, size = [], 0
        if pending:
            yield Run.concat(pending) if len(pending) > 1 else pending[0]


    def scan_ranges(self, version: HummockVersion, buffer: list[SharedBufferBatch], starts: list[bytes],
                    ends: list[bytes | None], epoch: int) -> Run:
        """The visible live entries of several key ranges ([starts[i], ends[i]), sorted and
        disjoint) at `epoch`, in one pass: each source (a buffer batch, an SST) reads the
        union of the ranges' blocks once and keeps the entries inside a range, and one merge
        orders them. Many small ranges (the groups of an agg) cost about one scan of the
        blocks they touch, not one walk over every source per range."""
        if not starts:
            return Run.empty()
        sources, forms = [], []
        for r, form, _ in self._range_sources(version, buffer, starts, ends, epoch, None, {}):
            sources.append([r])
            forms.append(form)
        if not sources:
            return Run.empty()
        runs = [r.visible(epoch) for r in merge_runs(sources, KeyForm.common(forms))]
        return Run.concat([r for r in runs if len(r)])

    def scan_range_edges(self, version: HummockVersion, buffer: list[SharedBufferBatch], starts: list[bytes],
                         ends: list[bytes | None], epoch: int, n: int, last: bool) -> tuple[Run, pa.Array]:
        """The live entries at the low end (`last`: the high end) of each of several sorted,
        disjoint key ranges at `epoch`, read from one or two blocks per range and source
        rather than from all the range's blocks: the extremes of an agg's groups (a min's or
        max's materialized input), whose cost must follow the groups, not how large they are.

        Each source gives about its `n` edge-most keys of a range, from its edge blocks;
        beyond them it says nothing. So only the keys up to the nearest of the sources' last
        keys given (that one included) are known exactly, and only they are returned; `cuts`
        holds that key per range (null where every source gave all of the range). A range
        with a cut and none of its entries returned must be read whole (`scan_ranges`)."""
        if not starts:
            return Run.empty(), pa.nulls(0, pa.binary())
        sources, forms, cuts = [], [], []
        bounds: dict = {}  # the ranges' sortable bounds by key form, shared by the sources
        for r, form, complete in self._range_sources(version, buffer, starts, ends, epoch, last, bounds):
            r, cut = _clip_to_edges(r, form, starts, ends, n, last, complete, bounds)
            sources.append([r])
            forms.append(form)
            cuts.append(cut)
        if not sources:
            return Run.empty(), pa.nulls(len(starts), pa.binary())
        form = KeyForm.common(forms)
        runs = [r.visible(epoch) for r in merge_runs(sources, form)]
        run = Run.concat([r for r in runs if len(r)])
        cut = cuts[0]
        pick = pc.max_element_wise if last else pc.min_element_wise
        for c in cuts[1:]:
            cut = pick(cut, c, skip_nulls=True)
        if cut.null_count == len(cut) or not len(run):
            return run, cut
        entry_cut = cut.take(pa.array(_range_ids(run, form, starts, ends, bounds)))
        near = (pc.greater_equal if last else pc.less_equal)(run.keys, entry_cut)
        return run.filter(pc.fill_null(near, True).to_numpy(zero_copy_only=False)), cut

    def _range_sources(self, version: HummockVersion, buffer: list[SharedBufferBatch], starts: list[bytes],
                       ends: list[bytes | None], epoch: int, edge: bool | None, bounds: dict):
        """(entries inside the ranges, their key form, which ranges the source gave whole
        or None for all) of each source holding some, newest first. `edge` (None: whole
        ranges) reads an SST's last (True) or first two (False) blocks of each range only."""
        lo_key, hi_key = starts[0], ends[-1]
        for b in reversed(buffer):
            if b.epoch <= epoch:
                r = restrict_to_ranges(b.range_run(lo_key, hi_key), b.form, starts, ends, bounds)
                if len(r):
                    yield r, b.form, None

        def overlaps(info: SstInfo) -> bool:
            return not (info.largest_key < lo_key or (hi_key is not None and info.smallest_key >= hi_key)
                        or info.min_epoch > epoch)

        infos = [i for i in version.levels[0] if overlaps(i)]
        for level in version.levels[1:]:
            infos.extend(i for i in level if overlaps(i))
        for info in infos:
            rd = self.sstables.reader(info)
            r, complete = _sst_ranges(rd, starts, ends, bounds, edge)
            if len(r):
                yield r, rd.meta.form, complete


def _clip_to_edges(run: Run, form: KeyForm, starts: list[bytes], ends: list[bytes | None], n: int, last: bool,
                   complete: np.ndarray | None, bounds: dict) -> tuple[Run, pa.Array]:
    """A source's entries of the ranges cut to about the `n` edge-most of each range (whole
    user keys: all the versions of a key or none), and per range the farthest key it gave
    (null: it gave all of the range): keys beyond that one (`last`: below it) may be in the
    source unseen. `complete` says which ranges the source read whole (None: all)."""
    first, end = _range_positions(run, form, starts, ends, bounds)
    key_at = np.flatnonzero(run.key_starts())  # where each user key's versions begin
    if last:
        lo = np.maximum(first, end - n)
        lo = np.where(lo < end, key_at[np.maximum(np.searchsorted(key_at, lo, "right") - 1, 0)], lo)
        lo, hi = np.maximum(lo, first), end
        partial = lo > first
        edge = lo
    else:
        hi = np.minimum(end, first + n)
        nxt = np.searchsorted(key_at, np.maximum(hi - 1, 0), "right")
        hi = np.where(hi > first, np.append(key_at, len(run))[nxt], hi)
        lo, hi = first, np.minimum(hi, end)
        partial = hi < end
        edge = hi - 1
    if complete is not None:
        partial |= ~complete
    seen = end > first
    idx = pa.array(np.where(partial & seen, edge, 0), pa.int64(), mask=~(partial & seen))
    cut = run.keys.take(idx)
    blind = np.flatnonzero(partial & ~seen)  # unread entries and none read: nothing is known
    if len(blind):
        # a cut past the range's far end: nothing of it counts as known
        far = [(ends[i] or b"\xff" * 64) if last else b"" for i in blind.tolist()]
        cut = pc.if_else(_positions_mask(len(starts), blind), _spread(len(starts), blind, far), cut)
    return _take_spans(run, lo, hi), cut


def _positions_mask(size: int, positions: np.ndarray) -> np.ndarray:
    mask = np.zeros(size, dtype=bool)
    mask[positions] = True
    return mask


def _spread(size: int, positions: np.ndarray, values: list[bytes]) -> pa.Array:
    """A binary array of `size` with `values` at `positions` (null elsewhere)."""
    out: list[bytes | None] = [None] * size
    for p, v in zip(positions.tolist(), values):
        out[p] = v
    return pa.array(out, pa.binary())


def _range_positions(run: Run, form: KeyForm, starts: list[bytes], ends: list[bytes | None], bounds: dict):
    """Per range, the positions [first, end) of its entries in `run` (sorted, all inside
    some range)."""
    b = _range_bounds(form, starts, ends, bounds)
    if b is not None:
        sk = run.skeys(form)
        s, e, open_end = b
        first = np.searchsorted(sk, s, "left").astype(np.int64)
        end = np.searchsorted(sk, e, "left").astype(np.int64)
        end[open_end] = len(run)
    else:
        first = np.array([_count_below(run, k) for k in starts], dtype=np.int64)
        end = np.array([len(run) if k is None else _count_below(run, k) for k in ends], dtype=np.int64)
    return first, np.maximum(first, end)


def _range_ids(run: Run, form: KeyForm, starts: list[bytes], ends: list[bytes | None], bounds: dict) -> np.ndarray:
    """The range each entry of `run` (sorted, all inside some range) lies in."""
    first, end = _range_positions(run, form, starts, ends, bounds)
    return np.repeat(np.arange(len(starts), dtype=np.int64), end - first)


def _sst_ranges(rd: SstReader, starts: list[bytes], ends: list[bytes | None], bounds: dict,
                edge: bool | None = None) -> tuple[Run, np.ndarray | None]:
    """The entries of one SST inside the ranges: the blocks any range touches, read once,
    each cut by its own sortable keys (kept with the cached block) to the ranges that touch
    it — found for all blocks and ranges at once, not by a walk over the ranges per SST and
    a search of every range per block (an agg's hundreds of groups, in each of many SSTs).
    With `edge`, only each range's last block (True) or first two (False) are read, and
    the second value says which ranges were read whole (None: all)."""
    m = rd.meta
    b = _range_bounds(m.form, starts, ends, bounds) if m.n_blocks else None
    spans = _block_spans(rd, b, edge) if b is not None else None
    if spans is None:
        touched: dict[int, list[int]] = {}
        complete = np.ones(len(starts), dtype=bool)
        for i, (s, e) in enumerate(zip(starts, ends)):
            lo, hi = rd.block_range(s, e)
            nlo, nhi = _edge_blocks(lo, hi, edge)
            complete[i] = (nlo, nhi) == (lo, hi) or hi <= lo
            for j in range(nlo, nhi):
                touched.setdefault(j, []).append(i)
        if not touched:
            return Run.empty(), None
        order = sorted(touched)
        blks = rd.blocks_at(order, fill=rd.should_fill(len(order)))
        parts = [restrict_to_ranges(blk, m.form, [starts[i] for i in touched[j]], [ends[i] for i in touched[j]])
                 for blk, j in zip(blks, order)]
    else:
        blocks, r0, r1, complete = spans
        if not len(blocks):
            return Run.empty(), None
        blks = rd.blocks_at(blocks.tolist(), fill=rd.should_fill(len(blocks)))
        parts = _restrict_blocks(blks, m.form, b, r0, r1)
    run = Run.concat(parts)
    if len(run):
        run.unique = m.distinct_keys == m.key_count
    return run, (None if edge is None or complete.all() else complete)


def _restrict_blocks(blks: list[Run], form: KeyForm, b: tuple, r0: np.ndarray, r1: np.ndarray) -> list[Run]:
    """Each block cut to the ranges r0[j]..r1[j]-1 that touch it (bounds `b`), searched for
    all blocks at once: the blocks follow one another in key order, so a bound's position
    among all their keys, clipped to a block, is its position in that block. A block gives
    a view of itself where its entries in the ranges are one stretch, else a gather."""
    sks = [blk.skeys(form) for blk in blks]
    ends = np.cumsum([len(sk) for sk in sks]).astype(np.int64)
    begins = ends - np.array([len(sk) for sk in sks], dtype=np.int64)
    every = np.concatenate(sks) if len(sks) > 1 else sks[0]
    count = r1 - r0  # ranges per block
    block = np.repeat(np.arange(len(blks)), count)
    rng = np.arange(len(block)) - np.repeat(np.cumsum(count) - count, count) + np.repeat(r0, count)
    s, e, open_end = b
    lo = np.clip(np.searchsorted(every, s[rng], "left"), begins[block], ends[block])
    hi = np.where(open_end[rng], ends[block], np.clip(np.searchsorted(every, e[rng], "left"), begins[block],
                                                      ends[block]))
    hi = np.maximum(lo, hi)
    ne = np.flatnonzero(hi > lo)  # the pairs (block, range) with entries, by block then range
    if not len(ne):
        return []
    nb = block[ne]
    new = np.concatenate([[True], nb[1:] != nb[:-1]])
    firsts, lasts = ne[new], ne[np.concatenate([new[1:], [True]])]
    taken = np.add.reduceat(hi[ne] - lo[ne], np.flatnonzero(new))
    parts = []
    for j, first, last, t in zip(nb[new].tolist(), firsts.tolist(), lasts.tolist(), taken.tolist()):
        blk, base = blks[j], int(begins[j])
        a, z = int(lo[first]) - base, int(hi[last]) - base
        if z - a == t:  # one stretch
            parts.append(blk if t == len(blk) else blk.slice(a, z))
        else:
            parts.append(_take_spans(blk, lo[first:last + 1] - base, hi[first:last + 1] - base))
    return parts


def _edge_blocks(lo, hi, edge: bool | None):
    """The blocks [lo, hi) of a range narrowed to its last one (`edge` True) or first two
    (False): each holds an entry of the range unless it is the range's only block (the
    first key of a block after `lo` lies inside the range)."""
    if edge is None:
        return lo, hi
    if edge:
        return np.maximum(lo, hi - 1), hi
    return lo, np.minimum(hi, lo + 2)


def _block_spans(rd: SstReader, b: tuple, edge: bool | None = None):
    """(the blocks some range touches, ascending; for each, the ranges [r0, r1) that touch
    it; which ranges' blocks are all read) from the ranges' sortable bounds `b`
    (`_range_bounds`), by searches over the blocks' first keys: a range touches the blocks
    `SstReader.block_range` gives (`edge`: only its edge blocks, `_edge_blocks`). None when
    the SST's largest key does not fit its form (then the caller walks the ranges)."""
    m = rd.meta
    largest = sortable_one(m.largest_key, m.form)
    if largest is None:
        return None
    s, e, open_end = b
    n = m.n_blocks
    fsk = m.first_sk()
    lo = np.maximum(np.searchsorted(fsk, s, "right") - 1, 0)
    hi = np.where(open_end, n, np.searchsorted(fsk, e, "left"))
    past = s > np.array(largest, s.dtype)  # ranges after the SST's last key: no block
    lo, hi = np.where(past, n, lo), np.where(past, n, np.maximum(lo, hi))
    nlo, nhi = _edge_blocks(lo, hi, edge)
    complete = (nhi - nlo) == (hi - lo)
    # ranges are sorted and disjoint, so lo and hi never decrease (nor do the edge blocks'):
    # the ranges touching block j are those from the first with hi > j to the last with lo <= j
    j = np.arange(n)
    r0 = np.searchsorted(nhi, j, "right")
    r1 = np.searchsorted(nlo, j, "right")
    touched = np.flatnonzero(r1 > r0)
    return touched, r0[touched], r1[touched], complete


def restrict_to_ranges(run: Run, form: KeyForm, starts: list[bytes], ends: list[bytes | None],
                       bounds: dict | None = None) -> Run:
    """The entries of a sorted run inside the sorted, disjoint ranges [starts[i], ends[i]).
    `bounds` caches the ranges' sortable forms by key form, for many runs cut alike."""
    if not len(run):
        return run
    b = _range_bounds(form, starts, ends, {} if bounds is None else bounds)
    if b is not None:
        return _restrict_sorted(run, form, *b)
    # a bound that does not fit the form: compared as bytes
    lo = np.array([_count_below(run, s) for s in starts], dtype=np.int64)
    hi = np.array([len(run) if e is None else _count_below(run, e) for e in ends], dtype=np.int64)
    return _take_spans(run, lo, hi)


def _restrict_sorted(run: Run, form: KeyForm, s: np.ndarray, e: np.ndarray, open_end: np.ndarray) -> Run:
    """`restrict_to_ranges` with the ranges' bounds in `form`'s sortable bytes."""
    if not len(run) or not len(s):
        return run.slice(0, 0)
    sk = run.skeys(form)
    lo = np.searchsorted(sk, s, "left").astype(np.int64)
    hi = np.searchsorted(sk, e, "left").astype(np.int64)
    hi[open_end] = len(run)
    return _take_spans(run, lo, hi)


def _take_spans(run: Run, lo: np.ndarray, hi: np.ndarray) -> Run:
    """The entries lo[i]..hi[i]-1 of every range i (sorted, disjoint)."""
    hi = np.maximum(lo, hi)
    sizes = hi - lo
    total = int(sizes.sum())
    if total == len(run):
        return run
    if total == 0:
        return run.slice(0, 0)
    some = np.flatnonzero(sizes)
    first, last = int(lo[some[0]]), int(hi[some[-1]])
    if last - first == total:  # one stretch of entries (the spans meet): a view, no copy
        return run.slice(first, last)
    # the positions lo[i]..hi[i]-1 of every range, without a loop over them
    idx = np.arange(total, dtype=np.int64) + np.repeat(lo - (np.cumsum(sizes) - sizes), sizes)
    return run.take(idx)


def _range_bounds(form: KeyForm, starts: list[bytes], ends: list[bytes | None], cache: dict):
    """(starts, ends, open ends) in `form`'s sortable bytes, or None when a bound does not
    fit it. A key shorter than a fixed form compares with every key of that width as itself
    padded with zero bytes does."""
    key = form.key()
    if key not in cache:
        def conv(k: bytes) -> bytes | None:
            if form.fixed and len(k) < form.width:
                k = k.ljust(form.width, b"\0")
            return sortable_one(k, form)
        s = [conv(k) for k in starts]
        e = [b"" if k is None else conv(k) for k in ends]
        if any(x is None for x in s) or any(x is None for x in e):
            cache[key] = None
        else:
            dt = f"S{form.itemsize}"
            cache[key] = (np.array(s, dt), np.array(e, dt), np.array([k is None for k in ends], dtype=bool))
    return cache[key]


def _count_below(run: Run, key: bytes) -> int:
    """How many of the run's keys are < `key`, compared as bytes."""
    return int(pc.sum(pc.less(run.keys, pa.scalar(key, pa.binary()))).as_py() or 0)


def _concat_level(readers: list[SstReader], start: bytes, end: bytes | None) -> Iterator[Run]:
    for r in readers:
        yield from r.runs(start, end)


class _Pending:
    """The query keys of a batched lookup not found yet, with their hashes, Bloom probes and
    sortable forms (by key form), as the next source is asked for them. Sliced again only
    after a source found some: over many SSTs most keys are found in one or none, and
    slicing (an Arrow take among them) for every SST cost more than the SST's own lookup."""

    def __init__(self, q: pa.Array, hashes: np.ndarray, probes: np.ndarray, forms: dict):
        self.q, self.hashes, self.probes, self.forms = q, hashes, probes, forms
        self.found = np.zeros(len(q), dtype=bool)
        self.rem: np.ndarray | None = None  # the positions in q of the view; None: all of q
        self.view = (q, hashes, probes, forms)  # forms computed on a view are kept with it

    def ask(self, fn, hit_idx: list[np.ndarray], hit_vals: list[pa.Array]) -> None:
        """`fn(keys, hashes, probes, forms)` -> (positions among `keys` found, their
        values) for the keys still pending; the hits are added to `hit_idx`/`hit_vals`."""
        idx, vals = fn(*self.view)
        if not len(idx):
            return
        gi = idx if self.rem is None else self.rem[idx]
        self.found[gi] = True
        hit_idx.append(gi)
        hit_vals.append(vals)
        rem = np.flatnonzero(~self.found)
        forms = self.view[3] if self.rem is None else self.forms
        self.rem = rem
        self.view = (self.q.take(pa.array(rem, pa.int64())), self.hashes[rem], self.probes[rem],
                     {k: (sk[rem], None if ok is None else ok[rem]) for k, (sk, ok) in forms.items()})
