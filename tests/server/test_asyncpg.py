"""`rw serve` with asyncpg, the driver of async Python services (FastAPI, SQLAlchemy's asyncio
engine): it encodes parameters in binary by the types the server describes, so these must be
inferred (`insert ... values ($1)` is the column's type, not text), and it loads rows with
binary COPY."""
from __future__ import annotations

import asyncio
import datetime
import decimal

import pytest

asyncpg = pytest.importorskip("asyncpg")

pytestmark = pytest.mark.xdist_group("asyncpg")


def run(port: int, work):
    async def main():
        conn = await asyncpg.connect(host="127.0.0.1", port=port, user="root", database="dev")
        try:
            return await asyncio.wait_for(work(conn), 60)
        finally:
            await conn.close()
    return asyncio.run(main())


def test_parameters_are_typed_by_where_they_stand(port):
    async def work(c):
        await c.execute("create table ap (id int primary key, name varchar, ts timestamp, v numeric, "
                        "j jsonb, b boolean, f double precision)")
        await c.execute("insert into ap values ($1, $2, $3, $4, $5, $6, $7)",
                        1, "a", datetime.datetime(2024, 1, 1), decimal.Decimal("1.5"), '{"a": 1}', True, 2.5)
        await c.executemany("insert into ap (name, id, ts) values ($1, $2, $3)",
                            [(f"n{i}", i, datetime.datetime(2024, 1, i)) for i in range(2, 5)])
        await c.execute("update ap set v = $1 where id in ($2, $3)", decimal.Decimal("7"), 2, 3)
        await c.execute("flush")
        rows = await c.fetch("select id, name, v from ap where id > $1 and ts between $2 and $3 order by id limit $4",
                             1, datetime.datetime(2024, 1, 1), datetime.datetime(2024, 1, 3), 10)
        first = await c.fetchrow("select * from ap where id = $1", 1)
        return [tuple(r) for r in rows], dict(first)

    rows, first = run(port, work)
    assert rows == [(2, "n2", decimal.Decimal("7")), (3, "n3", decimal.Decimal("7"))]
    assert first == {"id": 1, "name": "a", "ts": datetime.datetime(2024, 1, 1), "v": decimal.Decimal("1.5"),
                     "j": '{"a": 1}', "b": True, "f": 2.5}


def test_prepared_statements_describe_their_parameters(port):
    async def work(c):
        await c.execute("create table ap2 (k bigint, s varchar)")
        stmt = await c.prepare("select s from ap2 where k = $1 and s like $2")
        return [p.name for p in stmt.get_parameters()], [a.type.name for a in stmt.get_attributes()]

    params, columns = run(port, work)
    assert params == ["int8", "varchar"]
    assert columns == ["varchar"]


def test_binary_copy_loads_records_and_a_bad_one_changes_nothing(port):
    async def work(c):
        await c.execute("create table ap3 (id int, name varchar, ts timestamp, v numeric, ok boolean)")
        n = await c.copy_records_to_table("ap3", records=[
            (1, "x", datetime.datetime(2024, 2, 1, 12, 30), decimal.Decimal("3.25"), True),
            (2, None, None, None, None)])
        await c.execute("flush")
        loaded = [tuple(r) for r in await c.fetch("select * from ap3 order by id")]
        with pytest.raises(asyncpg.PostgresError):
            await c.copy_records_to_table("ap3", records=[(3, "y"), (4, "z")], columns=["id", "nosuch"])
        await c.execute("flush")
        return n, loaded, await c.fetchval("select count(*) from ap3")

    status, loaded, count = run(port, work)
    assert status == "COPY 2"
    assert loaded == [(1, "x", datetime.datetime(2024, 2, 1, 12, 30), decimal.Decimal("3.25"), True),
                      (2, None, None, None, None)]
    assert count == 2


def test_cursor_in_a_read_only_transaction(port):
    async def work(c):
        await c.execute("create table ap4 as select generate_series(1, 5) as i")
        await c.execute("flush")
        async with c.transaction(readonly=True):
            cur = await c.cursor("select i from ap4 order by i")
            return [r["i"] for r in await cur.fetch(3)]

    assert run(port, work) == [1, 2, 3]
