"""A TTL table's job (`WATERMARK FOR ts AS ts - 10 WITH TTL`): the watermark tracker feeds the
materialize, which treats expired stored rows as absent, splits writes that move ts into a
delete and an insert, and forwards no change of an expired row."""
from rw_cli.common.types import INTEGER
from rw_cli.engine.chunk import StreamChunk
from rw_cli.engine.materialize import MaterializeExecutor
from rw_cli.engine.watermark import WatermarkExecutor

II = [INTEGER, INTEGER]  # (k, ts), pk k


def _job(make_table):
    table = make_table(II, [0])
    mat = MaterializeExecutor(II, [0], table, conflict="overwrite")
    wm = WatermarkExecutor("_1 - 10", INTEGER, II, [0, 1], table, ttl_column=1)
    mat.ttl = wm

    def write(text: str) -> str:
        out = []
        for c in wm.on_chunk(StreamChunk.from_pretty(text, II)):
            out += mat.on_chunk(c)
        return "\n".join(c.to_pretty() for c in out)
    return write


def test_late_rows_and_their_changes_are_not_forwarded(make_table):
    write = _job(make_table)
    assert write("+ 1 5\n+ 2 20") == "+ 1 5\n+ 2 20"  # watermark 10 from now on
    assert write("+ 3 4") == ""
    assert write("+ 1 6") == ""  # an expired row's update: neither half is forwarded
    assert write("- 2 20") == "- 2 20"


def test_moving_ts_is_a_delete_and_an_insert(make_table):
    write = _job(make_table)
    assert write("+ 1 20") == "+ 1 20"
    assert write("+ 1 20") == "U- 1 20\nU+ 1 20"
    assert write("+ 1 21") == "- 1 20\n+ 1 21"
    assert write("+ 1 2") == "- 1 21"  # the new row is below the watermark (11)


def test_a_write_over_an_expired_row_is_a_new_row(make_table):
    write = _job(make_table)
    write("+ 1 5\n+ 2 30")  # watermark 20: key 1's row has expired
    assert write("+ 1 25") == "+ 1 25"
