"""TPC-H as a streaming workload: the 8 tables, the 22 queries as materialized views, TPC-H's
refresh functions, and DuckDB as the oracle.

The same statements go to rw and to DuckDB (the DDL, the loads from tpchgen-cli's Parquet
files, RF1's inserts and RF2's deletes), so after every epoch each MV must hold what DuckDB
computes for its query over the same rows. The oracle runs the query texts as they are (no
transpiling through rw), so a bug in rw's SQL layer cannot hide behind the same bug in the
oracle's SQL.

Refresh functions (TPC-H 2.5): RF1 inserts new orders with their lineitems, RF2 deletes old
orders with their lineitems, each about 0.1% of ORDERS. The new orders here are copies of
existing ones (drawn with a fixed seed) under keys beyond the largest, so every foreign key
still resolves and the copies move the aggregates the queries compute; RF2 deletes the
smallest original order keys still present, oldest first.
"""
from __future__ import annotations

import decimal
import math
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

QUERY_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "queries")
QUERIES = [f"q{i}" for i in range(1, 23)]

# The spec's schema (TPC-H 1.4) with its primary keys; identifiers are BIGINT because
# tpchgen-cli writes them as int64.
TABLES: dict[str, str] = {
    "region": "r_regionkey BIGINT, r_name VARCHAR, r_comment VARCHAR, PRIMARY KEY (r_regionkey)",
    "nation": "n_nationkey BIGINT, n_name VARCHAR, n_regionkey BIGINT, n_comment VARCHAR, "
              "PRIMARY KEY (n_nationkey)",
    "part": "p_partkey BIGINT, p_name VARCHAR, p_mfgr VARCHAR, p_brand VARCHAR, p_type VARCHAR, "
            "p_size INTEGER, p_container VARCHAR, p_retailprice DECIMAL(15, 2), p_comment VARCHAR, "
            "PRIMARY KEY (p_partkey)",
    "supplier": "s_suppkey BIGINT, s_name VARCHAR, s_address VARCHAR, s_nationkey BIGINT, s_phone VARCHAR, "
                "s_acctbal DECIMAL(15, 2), s_comment VARCHAR, PRIMARY KEY (s_suppkey)",
    "partsupp": "ps_partkey BIGINT, ps_suppkey BIGINT, ps_availqty INTEGER, ps_supplycost DECIMAL(15, 2), "
                "ps_comment VARCHAR, PRIMARY KEY (ps_partkey, ps_suppkey)",
    "customer": "c_custkey BIGINT, c_name VARCHAR, c_address VARCHAR, c_nationkey BIGINT, c_phone VARCHAR, "
                "c_acctbal DECIMAL(15, 2), c_mktsegment VARCHAR, c_comment VARCHAR, PRIMARY KEY (c_custkey)",
    "orders": "o_orderkey BIGINT, o_custkey BIGINT, o_orderstatus VARCHAR, o_totalprice DECIMAL(15, 2), "
              "o_orderdate DATE, o_orderpriority VARCHAR, o_clerk VARCHAR, o_shippriority INTEGER, "
              "o_comment VARCHAR, PRIMARY KEY (o_orderkey)",
    "lineitem": "l_orderkey BIGINT, l_partkey BIGINT, l_suppkey BIGINT, l_linenumber INTEGER, "
                "l_quantity DECIMAL(15, 2), l_extendedprice DECIMAL(15, 2), l_discount DECIMAL(15, 2), "
                "l_tax DECIMAL(15, 2), l_returnflag VARCHAR, l_linestatus VARCHAR, l_shipdate DATE, "
                "l_commitdate DATE, l_receiptdate DATE, l_shipinstruct VARCHAR, l_shipmode VARCHAR, "
                "l_comment VARCHAR, PRIMARY KEY (l_orderkey, l_linenumber)",
}
# the column each table's load is sliced on (its first key column)
SLICE_KEY = {"region": "r_regionkey", "nation": "n_nationkey", "part": "p_partkey", "supplier": "s_suppkey",
             "partsupp": "ps_partkey", "customer": "c_custkey", "orders": "o_orderkey", "lineitem": "l_orderkey"}


def query_text(name: str) -> str:
    with open(os.path.join(QUERY_DIR, f"{name}.sql"), encoding="utf-8") as f:
        return f.read().strip().rstrip(";")


# -- data ------------------------------------------------------------------------------------------
def tpchgen() -> str | None:
    """The tpchgen-cli executable: beside this Python (the venv's bin) or on PATH."""
    here = os.path.join(os.path.dirname(sys.executable), "tpchgen-cli")
    return here if os.access(here, os.X_OK) else shutil.which("tpchgen-cli")


def generate(scale: float, out_dir: str) -> str:
    """The 8 tables at `scale` as `<out_dir>/<table>.parquet` (generated once per directory)."""
    if all(os.path.exists(os.path.join(out_dir, f"{t}.parquet")) for t in TABLES):
        return out_dir
    exe = tpchgen()
    if exe is None:
        raise RuntimeError("tpchgen-cli is not installed (pip install tpchgen-cli)")
    os.makedirs(out_dir, exist_ok=True)
    subprocess.run([exe, "parquet", "-s", str(scale), "-o", out_dir, "--quiet", "--overwrite"], check=True)
    return out_dir


def create_table_sql(table: str) -> str:
    return f"CREATE TABLE {table} ({TABLES[table]})"


def load_sql(table: str, data_dir: str, part: int, parts: int) -> str:
    """Slice `part` of `parts` of a table's file: the rows whose key is `part` modulo `parts`."""
    path = os.path.join(data_dir, f"{table}.parquet")
    return f"INSERT INTO {table} SELECT * FROM read_parquet('{path}') WHERE {SLICE_KEY[table]} % {parts} = {part}"


# -- refresh functions -----------------------------------------------------------------------------
@dataclass
class RefreshSet:
    """One epoch's refresh: RF1's new rows (as Parquet files) and RF2's deleted order keys."""

    epoch: int
    orders_file: str
    lineitem_file: str
    new_orders: int
    new_lineitems: int
    deleted_orders: list[int]
    deleted_lineitems: int

    @property
    def rows(self) -> int:
        """Base-table rows this refresh changes."""
        return self.new_orders + self.new_lineitems + len(self.deleted_orders) + self.deleted_lineitems

    def statements(self) -> list[str]:
        """RF1 then RF2, as SQL both engines run."""
        keys = ", ".join(map(str, self.deleted_orders))
        return [f"INSERT INTO orders SELECT * FROM read_parquet('{self.orders_file}')",
                f"INSERT INTO lineitem SELECT * FROM read_parquet('{self.lineitem_file}')",
                f"DELETE FROM lineitem WHERE l_orderkey IN ({keys})",
                f"DELETE FROM orders WHERE o_orderkey IN ({keys})"]


@dataclass
class RefreshFunctions:
    """Deterministic RF1/RF2 sets over the generated ORDERS and LINEITEM."""

    data_dir: str
    work_dir: str
    fraction: float = 0.001  # TPC-H: SF * 1500 orders per refresh, 0.1% of ORDERS
    seed: int = 19
    _orders: pa.Table = field(init=False, repr=False)
    _lineitem: pa.Table = field(init=False, repr=False)
    _next_key: int = field(init=False)
    _old_keys: np.ndarray = field(init=False, repr=False)
    _rng: np.random.Generator = field(init=False, repr=False)
    _epoch: int = field(init=False, default=0)

    def __post_init__(self) -> None:
        self._orders = _plain_strings(pq.read_table(os.path.join(self.data_dir, "orders.parquet")))
        self._lineitem = _plain_strings(pq.read_table(os.path.join(self.data_dir, "lineitem.parquet")))
        keys = self._orders.column("o_orderkey").to_numpy()
        self._next_key = int(keys.max()) + 1
        self._old_keys = np.sort(keys)
        self._rng = np.random.default_rng(self.seed)
        os.makedirs(self.work_dir, exist_ok=True)

    @property
    def per_epoch(self) -> int:
        return max(1, round(self._orders.num_rows * self.fraction))

    def next(self) -> RefreshSet:
        """The next epoch's set (the RNG, the new keys and the deleted keys advance)."""
        k = self._epoch
        self._epoch += 1
        n = self.per_epoch
        picked = self._rng.choice(self._orders.num_rows, size=n, replace=False)
        src = self._orders.take(pa.array(np.sort(picked)))
        new_keys = pa.array(np.arange(self._next_key, self._next_key + n, dtype=np.int64))
        self._next_key += n
        orders = src.set_column(0, "o_orderkey", new_keys)
        old_keys = src.column("o_orderkey")
        items = self._lineitem.filter(pc.is_in(self._lineitem.column("l_orderkey"), value_set=old_keys))
        # each copied lineitem takes the new key of its order
        items = items.set_column(0, "l_orderkey", pc.take(new_keys, pc.index_in(items.column("l_orderkey"),
                                                                                 value_set=old_keys)))
        orders_file = os.path.join(self.work_dir, f"rf1_orders_{k}.parquet")
        lineitem_file = os.path.join(self.work_dir, f"rf1_lineitem_{k}.parquet")
        pq.write_table(orders, orders_file)
        pq.write_table(items, lineitem_file)
        deleted = self._old_keys[k * n:(k + 1) * n]
        deleted_items = pc.sum(pc.is_in(self._lineitem.column("l_orderkey"), value_set=pa.array(deleted))).as_py()
        return RefreshSet(k, orders_file, lineitem_file, orders.num_rows, items.num_rows,
                          [int(x) for x in deleted], int(deleted_items or 0))


def _plain_strings(t: pa.Table) -> pa.Table:
    """string_view columns as plain strings (what every Parquet reader accepts)."""
    schema = pa.schema([f.with_type(pa.string()) if pa.types.is_string_view(f.type) else f for f in t.schema])
    return t.cast(schema)


# -- comparison ------------------------------------------------------------------------------------
def duck_connection(threads: int = 0):
    import duckdb

    con = duckdb.connect(":memory:", config={"threads": threads} if threads else {})
    con.execute("SET TimeZone='UTC'")
    return con


def compare(got: pa.Table, want: pa.Table, rel_tol: float = 1e-9) -> str | None:
    """None when `got` (rw's MV) equals `want` (DuckDB's result) as a multiset, else what differs.

    Values are compared column by column as the oracle types them: a DECIMAL column of scale s
    is rounded to s digits on both sides (rw's numerics carry more), a floating column is
    compared with a relative tolerance, everything else exactly (integers against numerics by
    value)."""
    if got.num_columns != want.num_columns:
        return f"{got.num_columns} columns, expected {want.num_columns}"
    if got.num_rows != want.num_rows:
        return f"{got.num_rows} rows, expected {want.num_rows}" + _sample(got, want)
    kinds = [_kind(f.type) for f in want.schema]
    g = sorted((_canon(r, kinds) for r in _rows(got)), key=_sort_key)
    w = sorted((_canon(r, kinds) for r in _rows(want)), key=_sort_key)
    for i, (a, b) in enumerate(zip(g, w)):
        if not all(_same(x, y, k, rel_tol) for x, y, k in zip(a, b, kinds)):
            return f"row {i} (sorted): {a}, expected {b}"
    return None


def _rows(t: pa.Table) -> list[tuple]:
    cols = [c.to_pylist() for c in t.columns]
    return list(zip(*cols)) if cols else []


def _kind(t: pa.DataType) -> tuple[str, int]:
    if pa.types.is_decimal(t):
        return ("decimal", t.scale)
    if pa.types.is_floating(t):
        return ("float", 0)
    if pa.types.is_integer(t):
        return ("decimal", 0)
    return ("exact", 0)


def _canon(row: tuple, kinds: list[tuple[str, int]]) -> tuple:
    out = []
    for v, (kind, scale) in zip(row, kinds):
        if v is None or kind == "exact":
            out.append(v)
        elif kind == "decimal" and not isinstance(v, float):
            out.append(decimal.Decimal(v).quantize(decimal.Decimal(1).scaleb(-scale),
                                                   rounding=decimal.ROUND_HALF_EVEN,
                                                   context=decimal.Context(prec=60)))
        else:  # a float column: rw's numerics stay Decimal (see _same)
            out.append(v if isinstance(v, decimal.Decimal) else float(v))
    return tuple(out)


def _sort_key(row: tuple) -> tuple:
    """Numbers to 6 significant digits, so both sides sort alike despite last-digit noise."""
    key = []
    for v in row:
        if v is None:
            key.append((0, ""))
        elif isinstance(v, (float, decimal.Decimal, int)):
            key.append((1, float(f"{float(v):.6g}")))
        else:
            key.append((2, str(v)))
    return tuple(key)


def _same(a, b, kind: tuple[str, int], rel_tol: float) -> bool:
    if a is None or b is None:
        return a is None and b is None
    if kind[0] == "exact":
        return a == b
    if isinstance(a, decimal.Decimal) and isinstance(b, decimal.Decimal):
        return a == b
    tol = 10.0 ** -kind[1] if kind[0] == "decimal" else 0.0
    if isinstance(a, decimal.Decimal) and not a.is_nan():
        # rw's numeric where the oracle has a double (avg): exact to its last stored digit
        tol = max(tol, float(decimal.Decimal(1).scaleb(a.as_tuple().exponent)) / 2)
    return math.isclose(float(a), float(b), rel_tol=rel_tol, abs_tol=max(tol, 1e-12))


def _sample(got: pa.Table, want: pa.Table) -> str:
    return f"\n  got (first 3): {_rows(got)[:3]}\n  expected (first 3): {_rows(want)[:3]}"


# -- the workload on both engines ------------------------------------------------------------------
@dataclass
class Outcome:
    """A query's MV at one check: `equal`, `refused` (its CREATE failed) or `different`."""

    state: str
    detail: str = ""


@dataclass
class Workload:
    """rw (a `rw_cli` session) and DuckDB fed the same statements, and the MVs checked."""

    session: object
    duck: object
    data_dir: str
    queries: list[str] = field(default_factory=lambda: list(QUERIES))
    refused: dict[str, str] = field(default_factory=dict)

    def run_both(self, sql: str) -> None:
        self.session.execute(sql)
        self.duck.execute(sql)

    def create_tables(self) -> None:
        for t in TABLES:
            self.run_both(create_table_sql(t))

    def load(self, part: int, parts: int) -> None:
        """One slice of every table, then a FLUSH (one epoch)."""
        for t in TABLES:
            self.run_both(load_sql(t, self.data_dir, part, parts))
        self.session.execute("FLUSH")

    def create_view(self, q: str) -> None:
        """The query as an MV named after it; a CREATE that fails is recorded as refused."""
        from rw_cli.errors import RwError

        try:
            self.session.execute(f"CREATE MATERIALIZED VIEW {q} AS {query_text(q)}")
        except RwError as e:
            self.refused[q] = e.message

    def create_views(self) -> None:
        for q in self.queries:
            self.create_view(q)
        self.session.execute("FLUSH")

    def refresh(self, rs: RefreshSet) -> None:
        for sql in rs.statements():
            self.run_both(sql)
        self.session.execute("FLUSH")

    def check(self, q: str) -> Outcome:
        from rw_cli.errors import RwError

        if q in self.refused:
            return Outcome("refused", self.refused[q])
        want = self.duck.sql(query_text(q)).to_arrow_table()
        try:
            got = self.session.execute(f"SELECT * FROM {q}").arrow()
        except RwError as e:
            return Outcome("different", f"SELECT from the MV failed: {e.message}")
        diff = compare(got, want)
        return Outcome("equal", f"{want.num_rows} rows") if diff is None else Outcome("different", diff)

    def check_all(self) -> dict[str, Outcome]:
        return {q: self.check(q) for q in self.queries}
