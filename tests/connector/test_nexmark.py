"""The nexmark connector: the Nexmark generator's shape, determinism, splits, and SQL."""
import numpy as np
import pyarrow as pa
import pytest

from rw_cli.connector import nexmark
from rw_cli.errors import BindError

from .conftest import drain

BID_COLS = ("auction BIGINT, bidder BIGINT, price BIGINT, channel VARCHAR, url VARCHAR, "
            "date_time TIMESTAMP, extra VARCHAR")


def test_proportions_ids_and_times():
    e = np.arange(5000, dtype=np.int64)
    p, a, b = (nexmark.generate(t, e) for t in ("person", "auction", "bid"))
    assert (p.num_rows, a.num_rows, b.num_rows) == (100, 300, 4600)  # 1 : 3 : 46
    assert p.column("id").to_pylist() == list(range(1000, 1100))
    assert a.column("id").to_pylist() == list(range(1000, 1300))
    assert p.column("date_time")[1].as_py().isoformat() == "2015-07-15T00:00:00.005000"
    # bids reference auctions and people that exist (or are a few ids ahead, as in the spec)
    assert pa.compute.min(b.column("auction")).as_py() >= 1000
    assert pa.compute.max(b.column("auction")).as_py() < 1300 + nexmark.AUCTION_ID_LEAD
    prices = b.column("price").to_numpy()
    assert prices.min() >= 100 and prices.max() <= 100_000_000
    assert set(p.column("state").to_pylist()) <= set(nexmark.US_STATES)
    assert all(len(c) == 19 for c in p.column("credit_card").to_pylist())
    exp = a.column("expires").to_numpy()
    assert (exp > a.column("date_time").to_numpy()).all()
    # 'extra' pads a bid to about 100 bytes
    assert 50 <= np.mean([len(x) for x in b.column("extra").to_pylist()]) <= 85


def test_deterministic_whatever_the_chunking():
    e = np.arange(3000, dtype=np.int64)
    whole = nexmark.generate("bid", e)
    parts = pa.concat_tables([nexmark.generate("bid", e[i:i + 777]) for i in range(0, 3000, 777)])
    assert whole.equals(parts)
    pruned = nexmark.generate("bid", e, columns=["price", "auction"])
    assert pruned.column("price").equals(whole.column("price"))


def test_shortcuts_draw_what_the_reference_formulas_draw():
    """Bids' last ids by one division, ids drawn only for the rows that are not hot, and
    `rand_int`'s division by one bound give what the general formulas give."""
    from rw_cli.connector.rand import rand_int, uniform64

    e = np.arange(0, 2_000_000, 7, dtype=np.int64)
    bids = e[nexmark.event_types(e) == 2]
    la, lp = nexmark._bid_lasts(bids)
    assert (la == nexmark.last_base0_auction_id(bids)).all()
    assert (lp == nexmark.last_base0_person_id(bids)).all()
    hot = rand_int(nexmark.SEED, bids, 31, nexmark.HOT_AUCTION_RATIO) > 0
    want = np.where(hot, (la // nexmark.HOT_RATIO_GROUP) * nexmark.HOT_RATIO_GROUP,
                    nexmark.next_base0_auction_id(bids, 32, la)) + nexmark.FIRST_AUCTION_ID
    assert nexmark.generate("bid", e, columns=["auction"]).column("auction").to_numpy().tolist() == want.tolist()
    for n in (1, 3, 111, 2**40 + 3, np.full(len(e), 111), np.arange(len(e)) % 13 + 1):
        got = rand_int(5, e, 3, n)
        assert (got == ((uniform64(5, e, 3) >> np.uint64(11)) % np.asarray(n, dtype=np.uint64)).astype(np.int64)).all()
        assert ((got >= 0) & (got < n)).all()


def test_splits_partition_the_events():
    r = nexmark.NexmarkReader({"nexmark.table.type": "Bid", "nexmark.event.num": "1000",
                               "nexmark.split.num": "3"}, nexmark.TABLE_COLUMNS["bid"])
    assert r.list_splits() == ["0", "1", "2"]
    keys = []
    for split in r.list_splits():
        off = 0
        while not r.exhausted(split, off):
            t, k, off = r.read(split, off, 100)
            keys += list(k)
    assert sorted(keys) == [i for i in range(1000) if i % 50 >= 4]


def test_bad_options():
    with pytest.raises(BindError):
        nexmark.NexmarkReader({}, [("nope", None)])
    with pytest.raises(BindError):
        nexmark.NexmarkReader({"nexmark.table.type": "Bids"}, [])
    with pytest.raises(BindError):
        nexmark.NexmarkReader({"nexmark.table.type": "Bid"}, [("nope", None)])


def test_source_mv_and_table(session):
    session.execute(f"CREATE SOURCE bid ({BID_COLS}) WITH (connector = 'nexmark', "
                    "nexmark.table.type = 'Bid', nexmark.event.num = '20000', nexmark.split.num = '2')")
    session.execute("CREATE MATERIALIZED VIEW n AS SELECT count(*) AS c, count(DISTINCT date_time) AS d FROM bid")
    session.execute("CREATE TABLE person (id BIGINT PRIMARY KEY, name VARCHAR, state VARCHAR) WITH ("
                    "connector = 'nexmark', nexmark.table.type = 'Person', nexmark.event.num = '20000')")
    drain(session, rows=3000)
    assert session.execute("SELECT c, d FROM n").fetchall() == [(18400, 18400)]
    assert session.execute("SELECT count(*), min(id), max(id) FROM person").fetchall() == [(400, 1000, 1399)]
    jobs = {r[1]: r for r in session.execute("SHOW JOBS").fetchall()}
    assert "exhausted" in jobs["bid"][3] and jobs["n"][2] == "materialized view"
    assert session.execute("SHOW SOURCES").fetchall() == [("public.bid",)]


def test_source_without_consumers_does_not_run(session):
    session.execute(f"CREATE SOURCE bid ({BID_COLS}) WITH (connector = 'nexmark', "
                    "nexmark.table.type = 'Bid', nexmark.event.num = '1000')")
    assert session.tick(500) == 0
    session.execute("CREATE MATERIALIZED VIEW n AS SELECT count(*) AS c FROM bid")
    drain(session)
    assert session.execute("SELECT c FROM n").fetchall() == [(920,)]


def test_source_columns_default_and_recovery(tmp_path):
    import rw_cli

    d = str(tmp_path / "d")
    with rw_cli.connect(d) as s:
        s.execute("CREATE SOURCE auction WITH (connector = 'nexmark', nexmark.table.type = 'Auction', "
                  "nexmark.event.num = '10000')")
        s.execute("CREATE MATERIALIZED VIEW m AS SELECT count(*) AS c, max(id) AS top FROM auction")
        s.tick(5000)
        s.barrier()
        assert s.execute("SELECT c FROM m").fetchall() == [(300,)]
    with rw_cli.connect(d) as s:  # resumes at the committed offset
        assert [r[0] for r in s.execute("DESCRIBE auction").fetchall()][:3] == ["id", "item_name", "description"]
        drain(s, 2000)
        assert s.execute("SELECT c, top FROM m").fetchall() == [(600, 1599)]


def test_combined_event_stream_as_in_the_conformance_suite(session):
    """RisingWave's `nexmark` source without a table type: event_type, one struct per kind,
    a generated date_time, a watermark, and views per kind (e2e_test/nexmark/create_sources)."""
    session.execute("""CREATE SOURCE nexmark (
        event_type BIGINT,
        person STRUCT<"id" BIGINT, "name" VARCHAR, "state" VARCHAR, "date_time" TIMESTAMP>,
        auction STRUCT<"id" BIGINT, "seller" BIGINT, "category" BIGINT, "date_time" TIMESTAMP>,
        bid STRUCT<"auction" BIGINT, "price" BIGINT, "date_time" TIMESTAMP>,
        date_time TIMESTAMP AS CASE WHEN event_type = 0 THEN (person).date_time
                                    WHEN event_type = 1 THEN (auction).date_time
                                    ELSE (bid).date_time END,
        WATERMARK FOR date_time AS date_time - INTERVAL '4' SECOND
    ) WITH (connector = 'nexmark', nexmark.split.num = '2', nexmark.min.event.gap.in.ns = '100',
            nexmark.event.num = '10000')""")
    session.execute("CREATE VIEW bid AS SELECT (bid).auction, (bid).price, date_time FROM nexmark WHERE event_type = 2")
    session.execute("CREATE VIEW person AS SELECT (person).id, (person).name, date_time FROM nexmark "
                    "WHERE event_type = 0")
    session.execute("CREATE MATERIALIZED VIEW kinds AS SELECT event_type, count(*) AS c FROM nexmark GROUP BY event_type")
    session.execute("CREATE MATERIALIZED VIEW bids AS SELECT count(*) AS c, sum(price) AS p FROM bid")
    session.execute("CREATE MATERIALIZED VIEW people AS SELECT id, name, date_time FROM person")
    drain(session, 1500)
    assert session.execute("SELECT * FROM kinds ORDER BY event_type").fetchall() == [(0, 200), (1, 600), (2, 9200)]
    e = np.arange(10000, dtype=np.int64)
    bids = nexmark.generate("bid", e, 100)
    assert session.execute("SELECT * FROM bids").fetchall() == [(9200, sum(bids.column("price").to_pylist()))]
    first = session.execute("SELECT id, name, date_time FROM people ORDER BY id LIMIT 2").fetchall()
    persons = nexmark.generate("person", e, 100).slice(0, 2).to_pylist()
    assert first == [(p["id"], p["name"], p["date_time"]) for p in persons]
