"""The `nexmark` connector: a deterministic, vectorized generator of the Nexmark benchmark.

It follows the Nexmark generator of Beam / Flink / RisingWave: events are numbered; out of
every 50 events, 1 is a person, 3 are auctions and 46 are bids; ids, sellers, bidders and
prices are drawn as the reference generator draws them ('hot' auctions, bidders, sellers;
prices log-uniform over [1, 10^6) dollars in cents); event `i`'s timestamp is the base time
plus `i * nexmark.min.event.gap.in.ns`. Randomness is a pure function of the event number
(`rw_cli.connector.rand`), so every read of an event range yields the same rows.

Options (RisingWave's names): `nexmark.table.type` = Person | Auction | Bid,
`nexmark.event.num` (events in total across splits; default unbounded),
`nexmark.split.num` (split `k` of `n` generates events k, k+n, k+2n, ...),
`nexmark.min.event.gap.in.ns` (default 100000), `nexmark.max.chunk.size`.
"""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rw_cli.common import numeric
from rw_cli.common.types import BIGINT, TIMESTAMP, VARCHAR, DataType, struct_type_name
from rw_cli.connector.base import SourceReader, option_int
from rw_cli.connector.rand import pick, rand_float, rand_int, rand_strings
from rw_cli.errors import BindError

PERSON_PROPORTION, AUCTION_PROPORTION, BID_PROPORTION = 1, 3, 46
PROPORTION_DENOMINATOR = PERSON_PROPORTION + AUCTION_PROPORTION + BID_PROPORTION
FIRST_AUCTION_ID, FIRST_PERSON_ID, FIRST_CATEGORY_ID = 1000, 1000, 10
NUM_CATEGORIES = 5
HOT_RATIO_GROUP = 100  # hot auctions/sellers/bidders: the first of the last 100
HOT_AUCTION_RATIO, HOT_SELLER_RATIO, HOT_BIDDER_RATIO, HOT_CHANNEL_RATIO = 2, 4, 4, 2
NUM_IN_FLIGHT_AUCTIONS, NUM_ACTIVE_PEOPLE = 100, 1000
AUCTION_ID_LEAD, PERSON_ID_LEAD = 10, 10
AVG_PERSON_BYTES, AVG_AUCTION_BYTES, AVG_BID_BYTES = 200, 500, 100
BASE_TIME_US = 1436918400 * 1_000_000  # 2015-07-15 00:00:00
DEFAULT_GAP_NS = 100_000

US_STATES = ["az", "ca", "id", "or", "wa", "wy"]
US_CITIES = ["phoenix", "los angeles", "san francisco", "boise", "portland", "bend", "redmond",
             "seattle", "kent", "cheyenne"]
FIRST_NAMES = ["peter", "paul", "luke", "john", "saul", "vicky", "kate", "julie", "sarah", "deiter", "walter"]
LAST_NAMES = ["shultz", "abrams", "spencer", "white", "bartels", "walton", "smith", "jones", "noris"]
HOT_CHANNELS = ["Google", "Facebook", "Baidu", "Apple"]
HOT_URLS = [f"https://www.nexmark.com/{c.lower()}/item.htm?query=1" for c in HOT_CHANNELS]
NAMES = [f"{f} {l}" for f in FIRST_NAMES for l in LAST_NAMES]

PERSON_COLUMNS = [("id", BIGINT), ("name", VARCHAR), ("email_address", VARCHAR), ("credit_card", VARCHAR),
                  ("city", VARCHAR), ("state", VARCHAR), ("date_time", TIMESTAMP), ("extra", VARCHAR)]
AUCTION_COLUMNS = [("id", BIGINT), ("item_name", VARCHAR), ("description", VARCHAR), ("initial_bid", BIGINT),
                   ("reserve", BIGINT), ("date_time", TIMESTAMP), ("expires", TIMESTAMP), ("seller", BIGINT),
                   ("category", BIGINT), ("extra", VARCHAR)]
BID_COLUMNS = [("auction", BIGINT), ("bidder", BIGINT), ("price", BIGINT), ("channel", VARCHAR),
               ("url", VARCHAR), ("date_time", TIMESTAMP), ("extra", VARCHAR)]
TABLE_COLUMNS = {"person": PERSON_COLUMNS, "auction": AUCTION_COLUMNS, "bid": BID_COLUMNS}
EVENT_TYPE = {"person": 0, "auction": 1, "bid": 2}
SEED = 0x4E58  # the generator's fixed seed: Nexmark data is the same in every run


# -- ids, as the reference generator computes them ------------------------------------------
def _split(e: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(e // PROPORTION_DENOMINATOR, e % PROPORTION_DENOMINATOR) with one division."""
    epoch = e // PROPORTION_DENOMINATOR
    return epoch, e - epoch * PROPORTION_DENOMINATOR


def event_types(e: np.ndarray) -> np.ndarray:
    off = _split(e)[1]
    return np.where(off < PERSON_PROPORTION, 0, np.where(off < PERSON_PROPORTION + AUCTION_PROPORTION, 1, 2))


def _progression_is(e: np.ndarray, kind: int) -> np.ndarray:
    """Which of an arithmetic progression of event numbers (a split's read) are of type
    `kind`: types repeat every PROPORTION_DENOMINATOR events, so the first ones are computed
    and tiled."""
    first = event_types(e[:PROPORTION_DENOMINATOR]) == kind
    return np.tile(first, -(-len(e) // len(first)))[:len(e)] if len(e) else first


def last_base0_person_id(e: np.ndarray) -> np.ndarray:
    epoch, off = _split(e)
    off = np.minimum(off, PERSON_PROPORTION - 1)
    return epoch * PERSON_PROPORTION + off


def last_base0_auction_id(e: np.ndarray) -> np.ndarray:
    epoch, off = _split(e)
    is_person = off < PERSON_PROPORTION
    is_bid = off >= PERSON_PROPORTION + AUCTION_PROPORTION
    epoch = np.where(is_person, epoch - 1, epoch)
    off = np.where(is_person | is_bid, AUCTION_PROPORTION - 1, off - PERSON_PROPORTION)
    return epoch * AUCTION_PROPORTION + off


def _bid_lasts(e: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`last_base0_auction_id` and `last_base0_person_id` of bid events, with one division:
    a bid comes after its epoch's person and auctions."""
    epoch = e // PROPORTION_DENOMINATOR
    return epoch * AUCTION_PROPORTION + (AUCTION_PROPORTION - 1), epoch * PERSON_PROPORTION + (PERSON_PROPORTION - 1)


def _hot_or_next(hot: np.ndarray, last: np.ndarray, e: np.ndarray, next_id, hot_offset: int = 0) -> np.ndarray:
    """The hot id (`hot_offset` past the first of the last HOT_RATIO_GROUP ids) where `hot`,
    else `next_id(e, last)` — drawn only for the rows that are not hot (each row's draw
    depends on its event alone)."""
    out = (last // HOT_RATIO_GROUP) * HOT_RATIO_GROUP + hot_offset
    cold = np.flatnonzero(~hot)
    if len(cold):
        out[cold] = next_id(e[cold], last[cold])
    return out


def next_base0_person_id(e: np.ndarray, field: int, last: np.ndarray | None = None) -> np.ndarray:
    num_people = (last_base0_person_id(e) if last is None else last) + 1
    active = np.minimum(num_people, NUM_ACTIVE_PEOPLE)
    return num_people - active + rand_int(SEED, e, field, active + PERSON_ID_LEAD)


def next_base0_auction_id(e: np.ndarray, field: int, last: np.ndarray | None = None) -> np.ndarray:
    last = last_base0_auction_id(e) if last is None else last
    lo = np.maximum(last - NUM_IN_FLIGHT_AUCTIONS, 0)
    return lo + rand_int(SEED, e, field, last - lo + 1 + AUCTION_ID_LEAD)


def next_price(e: np.ndarray, field: int) -> np.ndarray:
    return np.round(np.power(10.0, rand_float(SEED, e, field) * 6.0) * 100.0).astype(np.int64)


def next_string_lengths(e: np.ndarray, field: int, max_length: int) -> np.ndarray:
    return 3 + rand_int(SEED, e, field, max_length - 3)


def extra_lengths(e: np.ndarray, field: int, current: np.ndarray | int, average: int) -> np.ndarray:
    want = np.maximum(average - np.asarray(current, dtype=np.int64), 0)
    delta = np.round(want * 0.2).astype(np.int64)
    return want - delta + rand_int(SEED, e, field, np.maximum(2 * delta, 1)) * (delta > 0)


def timestamps(e: np.ndarray, gap_ns: int) -> pa.Array:
    return pa.array(BASE_TIME_US + (e * gap_ns) // 1000, pa.timestamp("us"))


# -- tables: each column is computed only when asked for ----------------------------------------
def persons(e: np.ndarray, gap_ns: int) -> dict:
    n = len(e)
    name_idx = lambda: rand_int(SEED, e, 1, len(NAMES))  # noqa: E731
    l1 = lambda: next_string_lengths(e, 2, 7)  # noqa: E731
    l2 = lambda: next_string_lengths(e, 3, 5)  # noqa: E731
    city_idx = lambda: rand_int(SEED, e, 7, len(US_CITIES))  # noqa: E731

    def email():
        user = rand_strings(SEED, e, 4, l1())
        return pc.binary_join_element_wise(user, rand_strings(SEED, e, 5, l2()), "@").cast(pa.string()) \
            if n else pa.array([], pa.string())

    def email_com():
        return pc.binary_join_element_wise(email(), pa.scalar(".com"), "")

    def card():
        digits = rand_int(SEED, (e[:, None] * 16 + np.arange(16)).ravel(), 6, 10).reshape(n, 16)
        out = np.full((n, 19), ord(" "), dtype=np.uint8)
        for g in range(4):
            out[:, g * 5: g * 5 + 4] = digits[:, g * 4: g * 4 + 4] + ord("0")
        return pa.StringArray.from_buffers(n, pa.py_buffer(np.arange(n + 1, dtype=np.int32) * 19),
                                           pa.py_buffer(out.tobytes()))

    def extra():
        name_len = np.array([len(x) for x in NAMES])[name_idx()]
        city_len = np.array([len(x) for x in US_CITIES])[city_idx()]
        current = 8 + name_len + l1() + l2() + 5 + 19 + city_len + 2
        return rand_strings(SEED, e, 9, extra_lengths(e, 10, current, AVG_PERSON_BYTES))

    return {
        "id": lambda: pa.array(last_base0_person_id(e) + FIRST_PERSON_ID, pa.int64()),
        "name": lambda: pick(NAMES, name_idx()),
        "email_address": email_com,
        "credit_card": card,
        "city": lambda: pick(US_CITIES, city_idx()),
        "state": lambda: pick(US_STATES, rand_int(SEED, e, 8, len(US_STATES))),
        "date_time": lambda: timestamps(e, gap_ns),
        "extra": extra,
    }


def auctions(e: np.ndarray, gap_ns: int) -> dict:
    ts = lambda: BASE_TIME_US + (e * gap_ns) // 1000  # noqa: E731
    initial = lambda: next_price(e, 13)  # noqa: E731
    l_name = lambda: next_string_lengths(e, 15, 20)  # noqa: E731
    l_desc = lambda: next_string_lengths(e, 16, 100)  # noqa: E731

    def seller():
        hot = rand_int(SEED, e, 11, HOT_SELLER_RATIO) > 0
        return pa.array(np.where(hot, (last_base0_person_id(e) // HOT_RATIO_GROUP) * HOT_RATIO_GROUP,
                                 next_base0_person_id(e, 12)) + FIRST_PERSON_ID, pa.int64())

    def expires():
        # auctions last on average until NUM_IN_FLIGHT_AUCTIONS more auctions have been generated
        events_ahead = NUM_IN_FLIGHT_AUCTIONS * PROPORTION_DENOMINATOR // AUCTION_PROPORTION
        horizon_ms = (events_ahead * gap_ns) // 1_000_000
        length_ms = 1 + rand_int(SEED, e, 14, max(horizon_ms * 2, 1))
        return pa.array(ts() + length_ms * 1000, pa.timestamp("us"))

    def extra():
        current = 8 + l_name() + l_desc() + 40
        return rand_strings(SEED, e, 21, extra_lengths(e, 22, current, AVG_AUCTION_BYTES))

    return {
        "id": lambda: pa.array(last_base0_auction_id(e) + FIRST_AUCTION_ID, pa.int64()),
        "item_name": lambda: rand_strings(SEED, e, 17, l_name()),
        "description": lambda: rand_strings(SEED, e, 18, l_desc()),
        "initial_bid": lambda: pa.array(initial(), pa.int64()),
        "reserve": lambda: pa.array(initial() + next_price(e, 19), pa.int64()),
        "date_time": lambda: pa.array(ts(), pa.timestamp("us")),
        "expires": expires,
        "seller": seller,
        "category": lambda: pa.array(FIRST_CATEGORY_ID + rand_int(SEED, e, 20, NUM_CATEGORIES), pa.int64()),
        "extra": extra,
    }


def bids(e: np.ndarray, gap_ns: int) -> dict:
    n = len(e)
    hot_c = lambda: pa.array(rand_int(SEED, e, 35, HOT_CHANNEL_RATIO) > 0)  # noqa: E731
    which = lambda: rand_int(SEED, e, 36, len(HOT_CHANNELS))  # noqa: E731
    chan_no = lambda: rand_int(SEED, e, 37, 10000)  # noqa: E731

    lasts: list = []

    def last(i: int) -> np.ndarray:
        if not lasts:
            lasts.extend(_bid_lasts(e))
        return lasts[i]

    def auction():
        hot = rand_int(SEED, e, 31, HOT_AUCTION_RATIO) > 0
        ids = _hot_or_next(hot, last(0), e, lambda ec, lc: next_base0_auction_id(ec, 32, lc))
        return pa.array(ids + FIRST_AUCTION_ID, pa.int64())

    def bidder():
        hot = rand_int(SEED, e, 33, HOT_BIDDER_RATIO) > 0
        ids = _hot_or_next(hot, last(1), e, lambda ec, lc: next_base0_person_id(ec, 34, lc), hot_offset=1)
        return pa.array(ids + FIRST_PERSON_ID, pa.int64())

    def channel():
        cold = pc.binary_join_element_wise(pa.scalar("channel-"), pc.cast(pa.array(chan_no()), pa.string()), "")
        return pc.if_else(hot_c(), pick(HOT_CHANNELS, which()), cold)

    def url():
        three = np.full(n, 3)
        path = pc.binary_join_element_wise(rand_strings(SEED, e, 38, three), rand_strings(SEED, e, 39, three),
                                           rand_strings(SEED, e, 40, three), "/")
        cold = pc.binary_join_element_wise(pa.scalar("https://www.nexmark.com/"), path,
                                           pa.scalar("/item.htm?query=1&channel_id="),
                                           pc.cast(pa.array(chan_no() * 131072), pa.string()), "")
        return pc.if_else(hot_c(), pick(HOT_URLS, which()), cold)

    return {
        "auction": auction,
        "bidder": bidder,
        "price": lambda: pa.array(next_price(e, 41), pa.int64()),
        "channel": channel,
        "url": url,
        "date_time": lambda: timestamps(e, gap_ns),
        "extra": lambda: rand_strings(SEED, e, 42, extra_lengths(e, 43, 32, AVG_BID_BYTES)),
    }


GENERATORS = {"person": persons, "auction": auctions, "bid": bids}


def generate(table_type: str, events: np.ndarray, gap_ns: int = DEFAULT_GAP_NS,
             columns: list[str] | None = None) -> pa.Table:
    """The rows of type `table_type` among event numbers `events` (int64), in event order."""
    return _rows(table_type, events[event_types(events) == EVENT_TYPE[table_type]], gap_ns, columns)


def _rows(table_type: str, e: np.ndarray, gap_ns: int, columns: list[str] | None) -> pa.Table:
    """The rows of events `e`, all of type `table_type`."""
    cols = GENERATORS[table_type](e, gap_ns)
    names = [n for n, _ in TABLE_COLUMNS[table_type]] if columns is None else columns
    if not names:
        return pa.table({"_": pa.nulls(len(e))}).drop(["_"])
    return pa.table({n: cols[n]() for n in names})


class NexmarkReader(SourceReader):
    """Split `k` of `n` reads events k, k+n, ...; a split's offset counts events read."""

    def __init__(self, options: dict[str, str], columns: list[tuple[str, DataType]]):
        ttype = options.get("nexmark.table.type")
        self.table_type = ttype.lower() if ttype else None  # None: the combined event stream
        if self.table_type is not None and self.table_type not in TABLE_COLUMNS:
            raise BindError(f"unknown nexmark.table.type '{ttype}'", hint="use 'Person', 'Auction' or 'Bid'")
        known = dict(TABLE_COLUMNS[self.table_type]) if self.table_type else dict(_combined_columns())
        for name, t in columns:
            if name not in known:
                what = f"nexmark {ttype}" if ttype else "the nexmark event stream"
                raise BindError(f'{what} has no column "{name}"', hint="columns: " + ", ".join(known))
            if self.table_type is None and name != "event_type":
                fields = dict(TABLE_COLUMNS[name])
                for f in (t.field_names or ()):
                    if f not in fields:
                        raise BindError(f'nexmark {name} has no field "{f}"', hint="fields: " + ", ".join(fields))
        self.columns = columns
        self.event_num = option_int(options, "nexmark.event.num", -1)
        self.split_num = max(1, option_int(options, "nexmark.split.num", 1))
        self.gap_ns = option_int(options, "nexmark.min.event.gap.in.ns", DEFAULT_GAP_NS)
        self.max_chunk = option_int(options, "nexmark.max.chunk.size", 1 << 30)

    @staticmethod
    def default_columns(options: dict[str, str]) -> list[tuple[str, DataType]]:
        ttype = (options.get("nexmark.table.type") or "").lower()
        if not ttype:
            return _combined_columns()
        if ttype not in TABLE_COLUMNS:
            raise BindError(f"unknown nexmark.table.type '{ttype}'", hint="use 'Person', 'Auction' or 'Bid'")
        return list(TABLE_COLUMNS[ttype])

    def list_splits(self) -> list[str]:
        return [str(k) for k in range(self.split_num)]

    def _split_events(self, split: str) -> int | None:
        if self.event_num < 0:
            return None
        k = int(split)
        return max(0, (self.event_num - k + self.split_num - 1) // self.split_num)

    def exhausted(self, split: str, offset: int) -> bool:
        total = self._split_events(split)
        return total is not None and offset >= total

    @property
    def bounded(self) -> bool:
        return self.event_num >= 0

    def total_units(self) -> int:
        return self.event_num

    def plan(self, split: str, offset: int, max_rows: int) -> int:
        total = self._split_events(split)
        n = max_rows if total is None else min(max_rows, total - offset)
        return offset + max(0, n)

    def plan_ahead(self, split: str, offset: int, max_rows: int) -> int:
        return self.plan(split, offset, max_rows)  # (generated: every planned row exists)

    def read(self, split: str, offset: int, max_rows: int, columns: list[str] | None = None):
        total = self._split_events(split)
        n = max_rows if total is None else min(max_rows, total - offset)
        n = min(n, self.max_chunk)
        if n <= 0:
            return None, None, offset
        k = int(split)
        events = k + self.split_num * (offset + np.arange(n, dtype=np.int64))
        if self.table_type is None:
            return self._combined(events, columns), events, offset + n
        keep = events[_progression_is(events, EVENT_TYPE[self.table_type])]
        names = [c for c, _ in self.columns if columns is None or c in columns]
        table = _rows(self.table_type, keep, self.gap_ns, names)
        return table, keep, offset + n

    def _combined(self, events: np.ndarray, columns: list[str] | None) -> pa.Table:
        """The event stream: `event_type` (0 person, 1 auction, 2 bid) and one struct column
        per kind, NULL on the rows of the other kinds."""
        kinds = event_types(events)
        out = {}
        for name, t in self.columns:
            if columns is not None and name not in columns:
                continue
            if name == "event_type":
                out[name] = pa.array(kinds, pa.int64())
                continue
            mine = kinds == EVENT_TYPE[name]
            fields = list(t.field_names or [f for f, _ in TABLE_COLUMNS[name]])
            rows = generate(name, events[mine], self.gap_ns, fields)
            where = np.cumsum(mine) - 1
            take = pa.array(where, pa.int64(), mask=~mine)
            children = [rows.column(f).combine_chunks().take(take) for f in fields]
            arr = pa.StructArray.from_arrays(children, names=fields, mask=pa.array(~mine))
            out[name] = numeric.cast(arr, t.arrow()) if t.inner is not None else arr
        return pa.table(out)


def _combined_columns() -> list[tuple[str, DataType]]:
    cols = [("event_type", BIGINT)]
    for kind in ("person", "auction", "bid"):
        inner = tuple(t for _, t in TABLE_COLUMNS[kind])
        names = tuple(n for n, _ in TABLE_COLUMNS[kind])
        name = struct_type_name(names, inner)
        cols.append((kind, DataType(name, inner=inner, field_names=names)))
    return cols
