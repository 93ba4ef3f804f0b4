"""The ranges a Spark job reads ahead (epoch_job.next_ranges): what the next tick is expected
to assign, from the readers alone (no Spark here)."""
from __future__ import annotations

from rw_cli.connector import nexmark
from rw_cli.connector.base import SourceReader
from rw_cli.engine.source import SplitRange
from rw_cli.spark.epoch_job import next_ranges


class _Runtime:
    def __init__(self, readers: dict[int, SourceReader]):
        self.readers = readers

    def source_reader(self, source_id: int) -> SourceReader:
        return self.readers[source_id]


def _bids(events: int) -> nexmark.NexmarkReader:
    return nexmark.NexmarkReader({"nexmark.table.type": "Bid", "nexmark.event.num": str(events),
                                  "nexmark.split.num": "2"}, nexmark.TABLE_COLUMNS["bid"])


def test_each_split_reads_its_range_again_right_after_it():
    reader = _bids(100_000)
    splits = reader.list_splits()
    got = next_ranges(_Runtime({7: reader}), [(7, SplitRange(splits[0], 0, 0, 6000)),
                                              (7, SplitRange(splits[1], 1, 100, 6100))])
    assert got == [(7, SplitRange(splits[0], 0, 6000, 12000)), (7, SplitRange(splits[1], 1, 6100, 12100))]
    # what the tick will plan: the reader's own plan from there
    assert [r.end for _, r in got] == [reader.plan(splits[0], 6000, 6000), reader.plan(splits[1], 6100, 6000)]


def test_a_split_near_its_end_reads_what_is_left_and_one_at_its_end_drops_out():
    reader = _bids(1000)
    a, b = reader.list_splits()
    end_a = reader.plan(a, 0, 10**9)
    got = next_ranges(_Runtime({1: reader}), [(1, SplitRange(a, 0, end_a - 300, end_a)),
                                              (1, SplitRange(b, 1, 0, 300))])
    assert got == [(1, SplitRange(b, 1, 300, reader.plan(b, 300, 300)))]


def test_a_reader_that_cannot_tell_reads_nothing_ahead():
    class Unsure(SourceReader):
        def plan(self, split, offset, max_rows):
            return offset + max_rows  # (a plan that needs asking someone: plan_ahead says None)

    got = next_ranges(_Runtime({1: _bids(100_000), 2: Unsure()}),
                      [(1, SplitRange(_bids(100_000).list_splits()[0], 0, 0, 10)), (2, SplitRange("p0", 0, 0, 10))])
    assert got == []
