"""PartitionCache: one input of a partition-recompute operator (engine/partition_recompute.py)
in memory, as Arrow, found by partition: the rows of given partitions (`take`) and an
equi-join's pairs (`pairs`); an epoch's rows are added without touching the older ones.

Hash collisions bring rows of another partition along: the executor either diffs the
partitions' output before and after the epoch (where such rows cancel out) or compares the
keys (an equi-join's pairs). `apply_chunk` gives a partition's rows after a chunk of changes.
"""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rw_cli.common.chunked_take import part_starts, take_parts
from rw_cli.common.hash_index import HashIndex, expand_ranges
from rw_cli.common.vnode import unique_hashes
from rw_cli.engine import duck
from rw_cli.engine.chunk import StreamChunk

FANOUT = 4
# A group of runs is merged once lookups have consulted its runs this many times per row
# (merging costs about a sort of its index; an unmerged run costs a lookup per probe), or,
# whatever the lookups, when an input has more runs than MAX_RUNS (the oldest group first).
# (2 a row, the ratio of those costs per row, made no difference end to end in q4.)
PROBES_PER_ROW_TO_MERGE = 1 / 32
MAX_RUNS = 48
MAX_SEGMENTS = 256  # a merged run with more row segments than this copies them into one
LINEAR_PROBES = 16  # an unsorted run is scanned for this many probes in all before it is sorted


class PartitionCache:
    """One input's cached rows. Partitioned: in runs, each indexed by the 64-bit hash of the
    partition key, so the rows of given partitions are found by a hash lookup in every run;
    new rows form a new run of level 0 and FANOUT consecutive runs of one level are merged into
    one of the next level, so an index entry is copied O(log n) times and a lookup searches
    O(log n) runs — an epoch's cost never grows with the history. Runs that lookups seldom
    consult (the side of a join whose other side changes little) are merged only when there
    are too many of them.
    Removed rows are masked out, and dropped when their run is merged or mostly dead.
    Unpartitioned: one table.
    `zone_column`: the partition key, when it is one integer-like column: each run knows the
    range of its keys, and a join's probes skip the runs whose range they miss (the rows of
    recent keys are in recent runs: a stream's ids and times grow)."""

    @classmethod
    def for_key(cls, schema: pa.Schema, partition_key: list[int]) -> "PartitionCache":
        """A cache of rows of `schema` partitioned by the columns `partition_key` (none: one
        partition), with zones when that key is one integer-like column."""
        return cls(schema, bool(partition_key), zone_column(schema, partition_key))

    def __init__(self, schema: pa.Schema, partitioned: bool, zone_column: int | None = None):
        self.schema = schema
        self.partitioned = partitioned
        self.zone_column = zone_column
        self.runs: list[_Run] = []
        self.table: pa.Table | None = None  # unpartitioned

    @property
    def num_rows(self) -> int:
        if not self.partitioned:
            return self.table.num_rows if self.table is not None else 0
        return sum(r.live for r in self.runs)

    def all(self) -> pa.Table:
        if not self.partitioned:
            return self.table if self.table is not None else self.schema.empty_table()
        parts = [r.rows() for r in self.runs if r.live]
        if not parts:
            return self.schema.empty_table()
        return parts[0] if len(parts) == 1 else pa.concat_tables(parts)

    def clear(self) -> None:
        self.runs = []
        self.table = None

    def add(self, rows: pa.Table, hashes: np.ndarray | None, level: int = 0) -> None:
        if rows.num_rows == 0:
            return
        if rows.schema != self.schema:
            rows = rows.cast(self.schema)
        if not self.partitioned:
            self.table = rows if self.table is None else pa.concat_tables([self.table, rows])
            return
        self.runs.append(_Run.of(rows, hashes, level, self.zone_column))
        while (group := self._due_group()) is not None:
            self.runs[group:group + FANOUT] = [_merge_runs(self.runs[group:group + FANOUT])]
        self.runs = [r for r in self.runs if r.live]

    def _due_group(self) -> int | None:
        """Where the next FANOUT consecutive runs of one level to merge start: the first group
        whose lookups paid for its merge, else, past MAX_RUNS runs, the oldest group."""
        groups, i = [], 0
        while i + FANOUT <= len(self.runs):
            if len({r.level for r in self.runs[i:i + FANOUT]}) == 1:
                groups.append(i)
                i += FANOUT
            else:
                i += 1
        for g in groups:
            runs = self.runs[g:g + FANOUT]
            if sum(r.probed for r in runs) >= PROBES_PER_ROW_TO_MERGE * sum(len(r.pos) for r in runs):
                return g
        return groups[0] if groups and len(self.runs) > MAX_RUNS else None

    def take(self, touched: np.ndarray | None, remove: bool = False) -> pa.Table:
        """The rows of the partitions whose hash is in `touched` (None: all rows); with
        `remove`, they leave the cache."""
        if touched is None or not self.partitioned:
            out = self.all()
            if remove:
                self.clear()
            return out
        touched = unique_hashes(touched)
        parts = []
        for run in self.runs:
            idx = run.find(touched)
            if not len(idx):
                continue
            parts.append(run.rows(idx))
            if remove:
                run.remove(idx)
        if remove:
            self.runs = [r for r in self.runs if r.live]
        if not parts:
            return self.schema.empty_table()
        return parts[0] if len(parts) == 1 else pa.concat_tables(parts)


    def pairs(self, hashes: np.ndarray, keys: pa.ChunkedArray | pa.Array | None = None
              ) -> tuple[np.ndarray, pa.Table]:
        """The cached rows of each probe's partition: (probe numbers, rows), row i being in
        the partition whose hash is hashes[probe[i]] (an equi-join's pairs, to be checked
        for hash collisions by comparing the keys). `keys`: the probes' key values, when the
        cache has zones: probes outside every zone are dropped first (a big side probing a
        small one), a run whose zone they miss is not searched, and a run is searched for the
        probes in its zone only (an equi-join: a null key matches nothing)."""
        values = self._key_values(keys) if keys is not None and self.zone_column is not None else None
        sel = None
        if values is not None:
            sel = self._within_zones(*values)
            if sel is not None:
                if not len(sel):
                    return np.zeros(0, dtype=np.int64), self.schema.empty_table()
                hashes, values = hashes[sel], (values[0][sel], values[1][sel])
        probe, rows = self._pairs(hashes, values)
        return (probe if sel is None else sel[probe]), rows

    def _pairs(self, hashes: np.ndarray, values: tuple[np.ndarray, np.ndarray] | None):
        n = len(hashes)
        distinct, uid = _distinct(hashes)
        zoned = _distinct_keys(*values, uid, len(distinct)) if values is not None else None
        parts, owners = [], []
        for run in self.runs:
            if zoned is None:
                idx, probe = run.find_each(distinct)
            elif run.zone is None:
                continue  # no row with a non-null key
            else:
                dkeys, known = zoned
                within = np.flatnonzero(known & (dkeys >= run.zone[0]) & (dkeys <= run.zone[1]))
                if not len(within):
                    continue
                if len(within) == len(distinct):
                    idx, probe = run.find_each(distinct)
                else:
                    idx, probe = run.find_each(distinct[within])
                    probe = within[probe]
            if len(idx):
                parts.append(run.rows(idx))
                owners.append(probe)
        if not parts:
            return np.zeros(0, dtype=np.int64), self.schema.empty_table()
        rows = parts[0] if len(parts) == 1 else pa.concat_tables(parts)
        owner = np.concatenate(owners)
        counts = np.bincount(owner, minlength=len(distinct))
        if len(counts) and counts.max() <= 1:
            # a row per partition at most (a join on the other side's unique key)
            where = np.full(len(distinct), -1, dtype=np.int64)
            where[owner] = np.arange(len(owner))
            each = where[uid]
            probe = np.flatnonzero(each >= 0)
            return probe, rows.take(pa.array(each[probe]))
        by_owner = np.argsort(owner, kind="stable")
        starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
        cnt = counts[uid]
        probe = np.repeat(np.arange(n), cnt)
        entry = by_owner[expand_ranges(starts[uid], starts[uid] + cnt)]
        return probe, rows.take(pa.array(entry))

    @staticmethod
    def _key_values(keys) -> tuple[np.ndarray, np.ndarray]:
        """The probes' keys as int64 (0 where null) and whether each is not null."""
        k = _int64(keys)
        if k.null_count:
            valid = k.is_valid().to_numpy(zero_copy_only=False)
            k = pc.fill_null(k, 0)
        else:
            valid = np.ones(len(k), dtype=bool)
        return k.to_numpy(), valid

    def _within_zones(self, k: np.ndarray, valid: np.ndarray) -> np.ndarray | None:
        """The probes whose key is within some run's zone, when they are under half of them."""
        zones = [r.zone for r in self.runs if r.zone is not None]
        if not zones:
            return np.zeros(0, dtype=np.int64)
        sel = np.flatnonzero(valid & (k >= min(z[0] for z in zones)) & (k <= max(z[1] for z in zones)))
        return sel if len(sel) < len(k) // 2 else None



class _Run:
    """Rows in the order they came (segments of single-chunk tables) with an index sorted by
    the partition-key hash: `hashes[i]` is the hash of row `pos[i]`. Merging runs merges only
    the index (16 bytes a row), never the rows themselves; `alive` masks removed index entries.
    `zone`: the least and greatest non-null key of its rows (an integer key), None if no row
    has one — an equi-join's probes outside it cannot match here (see `PartitionCache.pairs`).
    A new run's index is sorted at its first lookup of more than LINEAR_PROBES probes (in
    all): until then a lookup scans it (the side of a join whose zones the other side's few
    new keys barely reach is never sorted before it is merged)."""
    __slots__ = ("segments", "starts", "hashes", "pos", "alive", "live", "level", "probed", "_index", "zone",
                 "sorted")

    def __init__(self, segments: list[pa.Table], hashes: np.ndarray, pos: np.ndarray, level: int,
                 zone: tuple[int, int] | None = None, is_sorted: bool = True):
        self.zone = zone
        self.sorted = is_sorted
        self.segments = segments
        self.starts = part_starts(segments)
        self.hashes, self.pos = hashes, pos
        self.alive: np.ndarray | None = None
        self.live = len(pos)
        self.level = level
        self.probed = 0  # probes looked up in this run
        self._index: HashIndex | None = None  # built at the first lookup

    @classmethod
    def of(cls, rows: pa.Table, hashes: np.ndarray, level: int, zone_column: int | None = None) -> "_Run":
        zone = None
        if zone_column is not None:
            mm = pc.min_max(_int64(rows.column(zone_column)))
            zone = None if mm["min"].as_py() is None else (mm["min"].as_py(), mm["max"].as_py())
        return cls([rows.combine_chunks()], hashes, np.arange(len(hashes)), level, zone, is_sorted=False)

    def rows(self, idx: np.ndarray | None = None) -> pa.Table:
        """The rows at index entries `idx` (all live rows when None)."""
        if idx is None:
            if self.alive is None:
                return self.segments[0] if len(self.segments) == 1 else pa.concat_tables(self.segments)
            return self._gather(np.sort(self.pos[self.alive]))
        return self._gather(self.pos[idx])

    def _gather(self, p: np.ndarray) -> pa.Table:
        """The rows at positions `p`, in that order."""
        return take_parts(self.segments, self.starts, p)

    def find(self, touched: np.ndarray) -> np.ndarray:
        """Index entries of the live rows whose hash is in `touched` (unique)."""
        return self.find_each(touched)[0]

    def find_each(self, touched: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(index entries, the number of the probe each matches) of the live rows whose hash
        is in `touched` (unique)."""
        if not self.sorted and self.probed + len(touched) <= LINEAR_PROBES:
            self.probed += len(touched)
            # a whole-array comparison per probe, at most LINEAR_PROBES of them: 12x faster
            # than searching each entry among the sorted probes (np.searchsorted)
            found = [np.flatnonzero(self.hashes == h) for h in touched]
            idx = np.concatenate(found) if found else np.zeros(0, dtype=np.int64)
            probe = np.repeat(np.arange(len(touched)), [len(f) for f in found])
        else:
            if not self.sorted:
                self._sort()
            if self._index is None:
                self._index = HashIndex(self.hashes)
            self.probed += len(touched)
            hit, first, end = self._index.lookup(touched)
            idx = expand_ranges(first, end)
            probe = np.repeat(hit, end - first)
        if self.alive is not None and len(idx):
            live = self.alive[idx]
            idx, probe = idx[live], probe[live]
        return idx, probe

    def _sort(self) -> None:
        order = np.argsort(self.hashes)  # (the order within a partition does not matter)
        self.hashes, self.pos = self.hashes[order], self.pos[order]
        if self.alive is not None:
            self.alive = self.alive[order]
        self.sorted = True

    def remove(self, idx: np.ndarray) -> None:
        if self.alive is None:
            self.alive = np.ones(len(self.pos), dtype=bool)
        self.alive[idx] = False
        self.live -= len(idx)
        if self.live and self.live * 2 < self.starts[-1]:  # mostly dead: copy the live rows
            self.compact()

    def compact(self) -> None:
        """Drop the removed rows from the segments (one segment of the live rows)."""
        if self.alive is None:
            return
        keep = np.flatnonzero(self.alive)
        p = self.pos[keep]
        kept = np.zeros(int(self.starts[-1]), dtype=bool)
        kept[p] = True
        renumber = np.cumsum(kept) - 1
        rows = self._gather(np.sort(p)).combine_chunks()
        self.__init__([rows], self.hashes[keep], renumber[p], self.level, self.zone,  # (the zone may be wider)
                      is_sorted=self.sorted)



def _distinct_keys(k: np.ndarray, valid: np.ndarray, uid: np.ndarray,
                   nd: int) -> tuple[np.ndarray, np.ndarray] | None:
    """(the key of each distinct probe hash, whether it has one: False when its probes' keys
    are all null, which match nothing), or None when zones cannot say (two keys of one hash)."""
    u = uid
    if not valid.all():
        k, u = k[valid], uid[valid]
    dk = np.zeros(nd, dtype=np.int64)
    known = np.zeros(nd, dtype=bool)
    dk[u] = k
    known[u] = True
    return (dk, known) if bool((dk[u] == k).all()) else None


def zone_column(schema: pa.Schema, partition_key: list[int]) -> int | None:
    """The partition key column whose runs keep a zone: a single integer, date or timestamp."""
    if len(partition_key) != 1:
        return None
    t = schema.field(partition_key[0]).type
    ok = (pa.types.is_integer(t) and t != pa.uint64()) or pa.types.is_timestamp(t) or pa.types.is_date(t)
    return partition_key[0] if ok else None


def _int64(col):
    """A zone column's values as int64 (dates by their day number)."""
    if pa.types.is_date32(col.type):
        col = col.cast(pa.int32())
    return col.cast(pa.int64())


def _distinct(hashes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(the distinct hashes, each hash's number among them). Many repeats (a join's probes of
    hot keys): Arrow's hash table, 3x faster than a sort; mostly distinct: a sort, 2x faster
    than the hash table. Which it is, a sample of the first thousand says."""
    n = len(hashes)
    sample = hashes[:1000]
    if n > 4000 and len(np.unique(sample)) < len(sample) // 2:
        enc = pc.dictionary_encode(pa.array(hashes, pa.uint64()))
        return enc.dictionary.to_numpy(), enc.indices.to_numpy().astype(np.int64)
    order = np.argsort(hashes)
    s = hashes[order]
    first = np.ones(n, dtype=bool)
    np.not_equal(s[1:], s[:-1], out=first[1:])
    uid = np.empty(n, dtype=np.int64)
    uid[order] = np.cumsum(first) - 1
    return s[first], uid


def _merge_runs(runs: list[_Run]) -> _Run:
    """One run of the next level from runs of one level: their indexes merged by hash, their
    row segments side by side (copied into one when there are many)."""
    for r in runs:
        r.compact()
    segments = [s for r in runs for s in r.segments]
    offsets = np.cumsum([0] + [int(r.starts[-1]) for r in runs])
    h = np.concatenate([r.hashes for r in runs])
    pos = np.concatenate([r.pos + off for r, off in zip(runs, offsets)])
    if len(segments) > MAX_SEGMENTS:
        segments = [pa.concat_tables(segments).combine_chunks()]
    zones = [r.zone for r in runs if r.zone is not None]
    zone = (min(z[0] for z in zones), max(z[1] for z in zones)) if zones else None
    if not any(r.sorted for r in runs):  # never needed sorting: neither does their union yet
        return _Run(segments, h, pos, runs[0].level + 1, zone, is_sorted=False)
    # sorted runs: a stable sort (timsort) finds those runs and merges them, about twice as
    # fast as sorting from scratch (which is what unsorted ones need)
    order = np.argsort(h, kind="stable" if all(r.sorted for r in runs) else None)
    return _Run(segments, h[order], pos[order], runs[0].level + 1, zone)


def _exact_key(t: pa.DataType) -> bool:
    """Types whose encoding is equal exactly when the values are not distinct."""
    return (pa.types.is_integer(t) or pa.types.is_string(t) or pa.types.is_large_string(t)
            or pa.types.is_timestamp(t) or pa.types.is_date(t) or pa.types.is_boolean(t)
            or pa.types.is_time(t) or pa.types.is_binary(t) or pa.types.is_large_binary(t))


def apply_chunk(rows: pa.Table, delta: StreamChunk, key: list[str]) -> pa.Table:
    """Rows after applying a chunk, rows being unique by `key`: the last op per key wins."""
    if len(delta) == 0:
        return rows
    if delta.is_insert().all():
        # inserts only: a stream never inserts a key that is present (without deleting it first)
        data = delta.data.rename_columns(rows.column_names).cast(rows.schema)
        return data if rows.num_rows == 0 else pa.concat_tables([rows, data])
    names = rows.column_names
    idx = [names.index(k) for k in key]
    if idx and all(_exact_key(rows.schema.field(i).type) for i in idx):
        # keys compared by their memcomparable encoding (exact); the last op per key wins
        from rw_cli.store.keys import encode_pk_array

        data = delta.data.rename_columns(names).cast(rows.schema)
        dk = encode_pk_array([data.column(i) for i in idx], num_rows=data.num_rows)
        pos = pa.table({"k": dk, "p": pa.array(np.arange(data.num_rows))})
        last = pos.group_by("k", use_threads=False).aggregate([("p", "max")]).column("p_max").to_numpy()
        last = np.sort(last[delta.is_insert()[last]])
        if rows.num_rows:
            rk = encode_pk_array([rows.column(i) for i in idx], num_rows=rows.num_rows)
            rows = rows.filter(pc.invert(pc.is_in(rk, value_set=dk)))
        return pa.concat_tables([rows, data.take(pa.array(last, pa.int64()))])
    return _apply_sql(rows, delta, key)


def _apply_sql(rows: pa.Table, delta: StreamChunk, key: list[str]) -> pa.Table:
    """`apply_chunk` by DuckDB (keys compared with IS NOT DISTINCT FROM)."""
    d = delta.data.append_column("__pos", pa.array(np.arange(len(delta))))
    d = d.append_column("__ins", pa.array(delta.is_insert()))
    names = rows.column_names
    part = ", ".join(key) if key else "1"
    match = " AND ".join(f"c.{k} IS NOT DISTINCT FROM s.{k}" for k in key) or "TRUE"
    cols = ", ".join(names)
    sql = (f"WITH c AS (SELECT *, row_number() OVER (PARTITION BY {part} ORDER BY __pos DESC) AS __rn FROM d) "
           f"SELECT {', '.join('s.' + n for n in names)} FROM s WHERE NOT EXISTS (SELECT 1 FROM c WHERE {match}) "
           f"UNION ALL SELECT {cols} FROM c WHERE __rn = 1 AND __ins")
    return duck.query(sql, {"d": d, "s": rows}).cast(rows.schema)

