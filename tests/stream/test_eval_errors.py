"""Expressions that fail in a streaming job give NULL for their rows (non-strict, as
RisingWave's streaming) and the statement whose epoch met them says so, with the message
the expression raised."""
import rw_cli


def _notices(s, sql):
    return [n for r in s.execute_iter(sql) for n in r.notices]


def test_a_failing_projection_stores_the_row_and_says_why(tmp_path):
    with rw_cli.connect(str(tmp_path / "d")) as s:
        s.execute("create table d (a int, b int)")
        s.execute("create materialized view m as select a, a % b as x, a + b as y, (a::text || 'x')::int as z from d")
        notices = _notices(s, "insert into d values (10, 0), (4, 2), (2147483647, 1); flush")
        assert any("Division by zero" in n for n in notices), notices
        assert any("integer out of range" in n for n in notices), notices
        assert any('invalid input syntax for type integer' in n for n in notices), notices
        assert s.execute("select * from m order by a").fetchall() == [
            (4, 0, 6, None), (10, None, 10, None), (2147483647, 0, None, None)]
        # nothing failed in the next epoch: nothing said
        assert _notices(s, "insert into d values (NULL, 1); flush") == []


def test_a_failing_filter_drops_the_row_and_says_why(tmp_path):
    with rw_cli.connect(str(tmp_path / "d")) as s:
        s.execute("create table d (a int, b int)")
        s.execute("insert into d values (10, 0), (4, 2); flush")
        notices = _notices(s, "create materialized view m as select a from d where a / b > 1")
        assert any("Division by zero" in n for n in notices), notices
        assert s.execute("select * from m").fetchall() == [(4,)]
