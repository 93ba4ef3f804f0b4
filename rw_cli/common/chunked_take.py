"""Gathers from a sequence of Arrow arrays (or tables) taken as one, without concatenating them.

A cache that merges its pieces by their index only (hashes and positions, 16 bytes an entry)
keeps the pieces' rows where they are: concatenating variable-width arrays on every merge
copies every byte again and again. A gather then takes from each piece the positions that fall
in it (one Arrow take per piece) and puts the results back in the order asked.
"""
from __future__ import annotations

from typing import Sequence, TypeVar

import numpy as np
import pyarrow as pa

T = TypeVar("T", pa.Array, pa.Table)


def part_starts(parts: Sequence[pa.Array | pa.Table]) -> np.ndarray:
    """Where each part starts in the whole, and the whole's length last."""
    return np.cumsum([0] + [len(p) for p in parts]).astype(np.int64)


def concat(parts: Sequence[T]) -> T:
    if len(parts) == 1:
        return parts[0]
    return pa.concat_tables(parts) if isinstance(parts[0], pa.Table) else pa.concat_arrays(parts)


def take_parts(parts: Sequence[T], starts: np.ndarray, positions: np.ndarray) -> T:
    """The rows at `positions` of the parts taken as one (`starts`: `part_starts(parts)`)."""
    if len(parts) == 1:
        return parts[0].take(pa.array(positions, pa.int64()))
    if not len(positions):
        return parts[0].slice(0, 0)
    part = np.searchsorted(starts, positions, side="right") - 1
    order = None if bool((part[1:] >= part[:-1]).all()) else np.argsort(part, kind="stable")
    pos, part = (positions, part) if order is None else (positions[order], part[order])
    bounds = np.flatnonzero(np.diff(part)) + 1
    firsts = np.concatenate([[0], bounds])
    ends = np.concatenate([bounds, [len(pos)]])
    out = concat([parts[int(part[a])].take(pa.array(pos[a:b] - starts[int(part[a])], pa.int64()))
                  for a, b in zip(firsts, ends)])
    if order is None:
        return out
    back = np.empty(len(order), dtype=np.int64)
    back[order] = np.arange(len(order))
    return out.take(pa.array(back))
