"""information_schema and pg_catalog relations, built from the catalog when a query reads them.

Enough of PostgreSQL's system catalogs for tools and psql's `\\d`: pg_class, pg_namespace,
pg_attribute, pg_type, pg_index (+ pg_tables, pg_views, pg_matviews, pg_database, pg_settings)
and information_schema.tables / columns / schemata / views.
"""
from __future__ import annotations

import pyarrow as pa

from rw_cli.meta.access import DEFAULT_USER
from rw_cli.meta.catalog import DEFAULT_SCHEMA, INDEX, MATERIALIZED_VIEW, SINK, SOURCE, SUBSCRIPTION, TABLE, VIEW, Catalog
from rw_cli.sql import job_catalog
from rw_cli.sql.cast_map import CASTS

PUBLIC_OID = 2200
PG_CATALOG_OID = 11
INFORMATION_SCHEMA_OID = 13000
RW_CATALOG_OID = 13100
DATABASE = "dev"
OWNER_OID = 1

# (oid, typname, typlen, array oid)
PG_TYPES = {
    "boolean": (16, "bool", 1, 1000),
    "bytea": (17, "bytea", -1, 1001),
    "bigint": (20, "int8", 8, 1016),
    "smallint": (21, "int2", 2, 1005),
    "integer": (23, "int4", 4, 1007),
    "character varying": (1043, "varchar", -1, 1015),
    "real": (700, "float4", 4, 1021),
    "double precision": (701, "float8", 8, 1022),
    "date": (1082, "date", 4, 1182),
    "time without time zone": (1083, "time", 8, 1183),
    "timestamp without time zone": (1114, "timestamp", 8, 1115),
    "timestamp with time zone": (1184, "timestamptz", 8, 1185),
    "interval": (1186, "interval", 16, 1187),
    "numeric": (1700, "numeric", -1, 1231),
    "jsonb": (3802, "jsonb", -1, 3807),
}
TEXT_OID = 25
RECORD_OID = 2249


def type_oid(t) -> int:
    """The pg_type oid of a column of rw type `t` (a DataType): an array's is its element
    type's array type, a struct's `record`, a type PostgreSQL lacks is sent as text."""
    if t.is_list:
        entry = PG_TYPES.get(t.inner[0].name)
        return entry[3] if entry else 1009  # text[]
    if t.is_struct:
        return RECORD_OID
    entry = PG_TYPES.get(t.name)
    return entry[0] if entry else TEXT_OID


# the types pg_type lists besides PG_TYPES and their arrays, as RisingWave's does: `text`
# (rw's varchar under PostgreSQL's name; its array type is not listed) and RisingWave's own
# 256-bit integer (no array type)
_EXTRA_TYPES = [(25, "text", -1, 1009), (1301, "rw_int256", 32, 0)]
# a type's input function, as pg_type.typinput names it (RisingWave's names)
_UNDERSCORED_INPUT = {"date", "time", "timestamp", "timestamptz", "interval", "numeric", "jsonb", "rw_int256"}

_KIND = {TABLE: "r", MATERIALIZED_VIEW: "m", VIEW: "v"}
# PostgreSQL's typcategory of each base type (an array type's is A)
_TYPE_CATEGORY = {"bool": "B", "int2": "N", "int4": "N", "int8": "N", "float4": "N", "float8": "N",
                  "numeric": "N", "oid": "N", "regclass": "N", "varchar": "S", "text": "S", "name": "S",
                  "bpchar": "S", "date": "D", "time": "D", "timestamp": "D", "timestamptz": "D",
                  "interval": "T", "int2vector": "A"}


def _rels(catalog: Catalog):
    return catalog.in_creation_order()


def _owner_id(catalog: Catalog, user: str) -> int:
    """The oid of a user by name (its id in the access catalog)."""
    u = catalog.access.users.get(user)
    return u["id"] if u is not None else OWNER_OID


def _schema_names(catalog: Catalog) -> list[str]:
    return ["pg_catalog", DEFAULT_SCHEMA, "information_schema", "rw_catalog", *catalog.schemas]


def _schema_owner(catalog: Catalog, schema: str) -> str:
    return catalog.access.schema_owners.get(schema, DEFAULT_USER)


def _table(cols: dict[str, tuple[pa.DataType, list]]) -> pa.Table:
    return pa.table({k: pa.array(v, t) for k, (t, v) in cols.items()})


def system_table(schema: str | None, name: str, catalog: Catalog, session=None) -> pa.Table | None:
    fn = _BUILDERS.get((schema or "pg_catalog", name))
    for fallback in ("information_schema", "rw_catalog"):
        if fn is None and schema is None:
            fn = _BUILDERS.get((fallback, name))
    return fn(catalog, session) if fn is not None else None


# -- information_schema -----------------------------------------------------------------------

def info_tables(catalog: Catalog, session=None) -> pa.Table:
    rels = _rels(catalog)
    kinds = {TABLE: "BASE TABLE", MATERIALIZED_VIEW: "MATERIALIZED VIEW", VIEW: "VIEW"}
    s = pa.string()
    rows = [(DATABASE, *_schema_and_name(r), kinds.get(r.kind, "BASE TABLE")) for r in rels]
    return _table({"table_catalog": (s, [r[0] for r in rows]), "table_schema": (s, [r[1] for r in rows]),
                   "table_name": (s, [r[2] for r in rows]), "table_type": (s, [r[3] for r in rows]),
                   "is_insertable_into": (s, ["YES" if r.kind == TABLE else "NO" for r in rels])})


def info_columns(catalog: Catalog, session=None) -> pa.Table:
    rows = []
    for r in _rels(catalog):
        pos = 0
        for c in r.columns:
            if c.hidden:
                continue
            pos += 1
            rows.append((DATABASE, *_schema_and_name(r), c.name, pos, "NO" if c.not_null else "YES", c.type.name,
                         PG_TYPES.get(c.type.name, (0, c.type.name, 0, 0))[1]))
    s = pa.string()
    col = lambda i: [row[i] for row in rows]  # noqa: E731
    return _table({"table_catalog": (s, col(0)), "table_schema": (s, col(1)), "table_name": (s, col(2)),
                   "column_name": (s, col(3)), "ordinal_position": (pa.int32(), col(4)),
                   "column_default": (s, [None] * len(rows)), "is_nullable": (s, col(5)),
                   "data_type": (s, col(6)), "udt_catalog": (s, [DATABASE] * len(rows)),
                   "udt_schema": (s, ["pg_catalog"] * len(rows)), "udt_name": (s, col(7)),
                   # what schema tools (atlas, ORMs) read besides: rw keeps no lengths,
                   # precisions, collations, identity or generated columns here
                   **{k: (pa.int32(), [None] * len(rows)) for k in (
                       "character_maximum_length", "numeric_precision", "numeric_scale", "datetime_precision")},
                   **{k: (s, [None] * len(rows)) for k in (
                       "interval_type", "character_set_name", "collation_name", "identity_start",
                       "identity_increment", "identity_generation", "generation_expression")},
                   "is_identity": (s, ["NO"] * len(rows))})


def _keyed(catalog: Catalog) -> list:
    """The relations with a primary key of visible columns: tables with one declared, and
    materialized views whose key is their columns' (RisingWave lists both)."""
    return [r for r in _rels(catalog)
            if (r.kind == TABLE and r.user_pk) or (r.kind == MATERIALIZED_VIEW and r.pk
                                                    and all(_attnum(r, k) for k in r.pk))]


def info_table_constraints(catalog: Catalog, session=None) -> pa.Table:
    rels = _keyed(catalog)
    n = len(rels)
    s = pa.string()
    schemas = [_schema_and_name(r)[0] for r in rels]
    names = [_schema_and_name(r)[1] for r in rels]
    return _table({"constraint_catalog": (s, [DATABASE] * n), "constraint_schema": (s, schemas),
                   "constraint_name": (s, [f"{name}_pkey" for name in names]),
                   "table_catalog": (s, [DATABASE] * n), "table_schema": (s, schemas), "table_name": (s, names),
                   "constraint_type": (s, ["PRIMARY KEY"] * n), "is_deferrable": (s, ["NO"] * n),
                   "initially_deferred": (s, ["NO"] * n), "enforced": (s, ["YES"] * n),
                   "nulls_distinct": (s, [None] * n)})


def info_key_column_usage(catalog: Catalog, session=None) -> pa.Table:
    """One row per primary key column; ordinal_position is the column's position in its
    relation, as RisingWave gives it."""
    rows = [(*_schema_and_name(r), r.columns[k].name, _attnum(r, k)) for r in _keyed(catalog) for k in r.pk]
    n = len(rows)
    s = pa.string()
    return _table({"constraint_catalog": (s, [DATABASE] * n), "constraint_schema": (s, [r[0] for r in rows]),
                   "constraint_name": (s, [f"{r[1]}_pkey" for r in rows]), "table_catalog": (s, [DATABASE] * n),
                   "table_schema": (s, [r[0] for r in rows]), "table_name": (s, [r[1] for r in rows]),
                   "column_name": (s, [r[2] for r in rows]), "ordinal_position": (pa.int32(), [r[3] for r in rows]),
                   "position_in_unique_constraint": (pa.int32(), [None] * n)})


def info_schemata(catalog: Catalog, session=None) -> pa.Table:
    names = _schema_names(catalog)
    s = pa.string()
    return _table({"catalog_name": (s, [DATABASE] * len(names)), "schema_name": (s, names),
                   "schema_owner": (s, [_schema_owner(catalog, n) for n in names])})


def info_views(catalog: Catalog, session=None) -> pa.Table:
    rels = [r for r in _rels(catalog) if r.kind == VIEW]
    s = pa.string()
    return _table({"table_catalog": (s, [DATABASE] * len(rels)),
                   "table_schema": (s, [_schema_and_name(r)[0] for r in rels]),
                   "table_name": (s, [_schema_and_name(r)[1] for r in rels]),
                   "view_definition": (s, [r.definition for r in rels])})


# -- pg_catalog ---------------------------------------------------------------------------------

def pg_namespace(catalog: Catalog, session=None) -> pa.Table:
    names = _schema_names(catalog)
    return _table({"oid": (pa.int32(), [_schema_oid(catalog, n) for n in names]), "nspname": (pa.string(), names),
                   "nspowner": (pa.int32(), [_owner_id(catalog, _schema_owner(catalog, n)) for n in names]),
                   "nspacl": (pa.list_(pa.string()), [None] * len(names))})


def pg_class(catalog: Catalog, session=None) -> pa.Table:
    rels = _rels(catalog)
    n = len(rels)
    i32, s = pa.int32(), pa.string()
    return _table({
        "oid": (i32, [r.id for r in rels]),
        "relname": (s, [_schema_and_name(r)[1] for r in rels]),
        "relnamespace": (i32, [_schema_oid(catalog, _schema_and_name(r)[0]) for r in rels]),
        "reltype": (i32, [0] * n),
        "reloftype": (i32, [0] * n),
        "relowner": (i32, [_owner_id(catalog, r.owner) for r in rels]),
        "relam": (i32, [0] * n),
        "relfilenode": (i32, [0] * n),
        "reltablespace": (i32, [0] * n),
        "relpages": (i32, [0] * n),
        "reltuples": (pa.float32(), [-1.0] * n),
        "relallvisible": (i32, [0] * n),
        "reltoastrelid": (i32, [0] * n),
        "relhasindex": (pa.bool_(), [bool(r.pk) and r.kind != VIEW for r in rels]),
        "relisshared": (pa.bool_(), [False] * n),
        "relpersistence": (s, ["p"] * n),
        "relkind": (s, [_KIND.get(r.kind, "r") for r in rels]),
        "relnatts": (pa.int16(), [len(r.visible_columns) for r in rels]),
        "relchecks": (pa.int16(), [0] * n),
        "relhasrules": (pa.bool_(), [False] * n),
        "relhastriggers": (pa.bool_(), [False] * n),
        "relhassubclass": (pa.bool_(), [False] * n),
        "relrowsecurity": (pa.bool_(), [False] * n),
        "relforcerowsecurity": (pa.bool_(), [False] * n),
        "relispopulated": (pa.bool_(), [True] * n),
        "relreplident": (s, ["d"] * n),
        "relispartition": (pa.bool_(), [False] * n),
        "relacl": (pa.list_(s), [None] * n),
        "reloptions": (pa.list_(s), [None] * n),
        "relpartbound": (s, [None] * n),
    })


def pg_attribute(catalog: Catalog, session=None) -> pa.Table:
    rows = []
    for r in _rels(catalog):
        num = 0
        for c in r.columns:
            if c.hidden:
                continue
            num += 1
            length = PG_TYPES.get(c.type.name, (0, "", -1, 0))[2] if not (c.type.is_list or c.type.is_struct) else -1
            key = bool(r.user_pk) and r.columns.index(c) in r.pk
            # NOT NULL: a primary key column or one declared so; a default or a generated
            # column's expression is its default (PostgreSQL's atthasdef, attgenerated 's')
            rows.append((r.id, c.name, type_oid(c.type), length, num, key or bool(c.not_null),
                         c.default is not None or bool(c.generated), "s" if c.generated else ""))
    col = lambda i: [row[i] for row in rows]  # noqa: E731
    n = len(rows)
    i32 = pa.int32()
    return _table({
        "attrelid": (i32, col(0)), "attname": (pa.string(), col(1)), "atttypid": (i32, col(2)),
        "attlen": (pa.int16(), col(3)), "attnum": (pa.int16(), col(4)),
        "attnotnull": (pa.bool_(), col(5)), "atttypmod": (i32, [-1] * n),
        "attndims": (pa.int16(), [0] * n), "atthasdef": (pa.bool_(), col(6)),
        "attidentity": (pa.string(), [""] * n), "attgenerated": (pa.string(), col(7)),
        "attisdropped": (pa.bool_(), [False] * n), "attcollation": (i32, [0] * n),
        "attislocal": (pa.bool_(), [True] * n), "attinhcount": (i32, [0] * n),
        # what psql's \d+ and \dp read: plain storage for fixed-width types, extended for the rest
        "attstorage": (pa.string(), ["p" if length > 0 else "x" for length in col(3)]),
        "attstattarget": (i32, [-1] * n), "attcompression": (pa.string(), [""] * n),
        "attacl": (pa.list_(pa.string()), [None] * n), "attoptions": (pa.list_(pa.string()), [None] * n),
        "attfdwoptions": (pa.list_(pa.string()), [None] * n),
    })


def pg_type(catalog: Catalog, session=None) -> pa.Table:
    """RisingWave's types: its base types, `text`, `rw_int256`, then the base types' arrays."""
    rows = list(PG_TYPES.values())
    base = [(oid, name, length, arr, "b", 0) for oid, name, length, arr in rows + _EXTRA_TYPES]
    arrays = [(arr, "_" + name, -1, 0, "b", oid) for oid, name, length, arr in rows]
    allrows = base + arrays
    i32, s = pa.int32(), pa.string()
    n = len(allrows)
    col = lambda i: [row[i] for row in allrows]  # noqa: E731
    return _table({
        "oid": (i32, col(0)), "typname": (s, col(1)), "typnamespace": (i32, [PG_CATALOG_OID] * n),
        "typowner": (i32, [OWNER_OID] * n), "typlen": (pa.int16(), col(2)), "typbyval": (pa.bool_(), [False] * n),
        "typtype": (s, col(4)),
        "typcategory": (s, ["A" if row[5] else _TYPE_CATEGORY.get(row[1], "U") for row in allrows]), "typisdefined": (pa.bool_(), [True] * n),
        "typdelim": (s, [","] * n), "typrelid": (i32, [0] * n), "typelem": (i32, col(5)),
        "typarray": (i32, col(3)),
        "typinput": (s, ["array_in" if row[5] else row[1] + ("_in" if row[1] in _UNDERSCORED_INPUT else "in")
                         for row in allrows]), "typoutput": (s, [""] * n),
        "typnotnull": (pa.bool_(), [False] * n), "typbasetype": (i32, [0] * n), "typtypmod": (i32, [-1] * n),
        "typndims": (i32, [0] * n), "typcollation": (i32, [0] * n),
        # no binary input functions (npgsql joins pg_proc on it to find arrays), no defaults
        "typreceive": (i32, [None] * n), "typdefault": (s, [None] * n),
        "typacl": (pa.list_(s), [None] * n),
    })


def pg_index(catalog: Catalog, session=None) -> pa.Table:
    rels = [r for r in _rels(catalog) if r.kind in (TABLE, MATERIALIZED_VIEW) and r.user_pk]
    n = len(rels)
    i32 = pa.int32()
    return _table({
        "indexrelid": (i32, [PK_INDEX_OID_BASE + r.id for r in rels]), "indrelid": (i32, [r.id for r in rels]),
        "indnatts": (pa.int16(), [len(r.pk) for r in rels]), "indnkeyatts": (pa.int16(), [len(r.pk) for r in rels]),
        "indisunique": (pa.bool_(), [True] * n), "indisprimary": (pa.bool_(), [True] * n),
        "indisexclusion": (pa.bool_(), [False] * n), "indimmediate": (pa.bool_(), [True] * n),
        "indisclustered": (pa.bool_(), [False] * n), "indisvalid": (pa.bool_(), [True] * n),
        "indisready": (pa.bool_(), [True] * n), "indislive": (pa.bool_(), [True] * n),
        "indisreplident": (pa.bool_(), [False] * n),
        "indkey": (pa.list_(pa.int16()), [[_attnum(r, k) for k in r.pk] for r in rels]),
        # what drivers' index reflection reads (SQLAlchemy): default operator classes, no
        # options, expressions or predicate, NULLs distinct
        "indclass": (pa.list_(pa.int32()), [[0] * len(r.pk) for r in rels]),
        "indcollation": (pa.list_(pa.int32()), [[0] * len(r.pk) for r in rels]),
        "indoption": (pa.list_(pa.int16()), [[0] * len(r.pk) for r in rels]),
        "indexprs": (pa.string(), [None] * n), "indpred": (pa.string(), [None] * n),
        "indnullsnotdistinct": (pa.bool_(), [False] * n),
    })


def _attnum(rel, k: int) -> int:
    visible = [i for i, c in enumerate(rel.columns) if not c.hidden]
    return visible.index(k) + 1 if k in visible else 0


def pg_tables(catalog: Catalog, session=None) -> pa.Table:
    rels = [r for r in _rels(catalog) if r.kind == TABLE]
    n = len(rels)
    s = pa.string()
    return _table({"schemaname": (s, [_schema_and_name(r)[0] for r in rels]),
                   "tablename": (s, [_schema_and_name(r)[1] for r in rels]),
                   "tableowner": (s, [r.owner for r in rels]), "tablespace": (s, [None] * n),
                   "hasindexes": (pa.bool_(), [False] * n), "hasrules": (pa.bool_(), [False] * n),
                   "hastriggers": (pa.bool_(), [False] * n), "rowsecurity": (pa.bool_(), [False] * n)})


def pg_indexes(catalog: Catalog, session=None) -> pa.Table:
    """One row per index: its schema (its table's), table, name and definition."""
    rels = [r for r in _rels(catalog) if r.kind == INDEX]
    tables = [catalog.relations.get(r.dependencies[0]) if r.dependencies else None for r in rels]
    s = pa.string()
    return _table({"schemaname": (s, [_schema_and_name(r)[0] for r in rels]),
                   "tablename": (s, [_schema_and_name(t)[1] if t is not None else None for t in tables]),
                   "indexname": (s, [_schema_and_name(r)[1] for r in rels]),
                   "tablespace": (s, [None] * len(rels)), "indexdef": (s, [r.definition for r in rels])})


def pg_matviews(catalog: Catalog, session=None) -> pa.Table:
    rels = [r for r in _rels(catalog) if r.kind == MATERIALIZED_VIEW]
    n = len(rels)
    s = pa.string()
    return _table({"schemaname": (s, [_schema_and_name(r)[0] for r in rels]),
                   "matviewname": (s, [_schema_and_name(r)[1] for r in rels]),
                   "matviewowner": (pa.int32(), [_owner_id(catalog, r.owner) for r in rels]),
                   "tablespace": (s, [None] * n), "hasindexes": (pa.bool_(), [False] * n),
                   "ispopulated": (pa.bool_(), [True] * n), "definition": (s, [r.definition for r in rels])})


def pg_views(catalog: Catalog, session=None) -> pa.Table:
    rels = [r for r in _rels(catalog) if r.kind == VIEW]
    n = len(rels)
    s = pa.string()
    return _table({"schemaname": (s, [_schema_and_name(r)[0] for r in rels]),
                   "viewname": (s, [_schema_and_name(r)[1] for r in rels]),
                   "viewowner": (s, [r.owner for r in rels]), "definition": (s, [r.definition for r in rels])})


DEFAULT_TABLESPACE_OID = 1663  # PostgreSQL's pg_default
GLOBAL_TABLESPACE_OID = 1664  # and its pg_global


def pg_tablespace(catalog: Catalog, session=None) -> pa.Table:
    """PostgreSQL's two built-in tablespaces (psql's \\l+ joins the database's)."""
    return _table({"oid": (pa.int32(), [DEFAULT_TABLESPACE_OID, GLOBAL_TABLESPACE_OID]),
                   "spcname": (pa.string(), ["pg_default", "pg_global"]),
                   "spcowner": (pa.int32(), [OWNER_OID, OWNER_OID]),
                   "spcacl": (pa.list_(pa.string()), [None, None]),
                   "spcoptions": (pa.list_(pa.string()), [None, None])})


def pg_database(catalog: Catalog, session=None) -> pa.Table:
    return _table({"oid": (pa.int32(), [1]), "datname": (pa.string(), [DATABASE]),
                   "datdba": (pa.int32(), [OWNER_OID]), "encoding": (pa.int32(), [6]),
                   "datcollate": (pa.string(), ["C"]), "datctype": (pa.string(), ["C"]),
                   "datallowconn": (pa.bool_(), [True]), "datconnlimit": (pa.int32(), [-1]),
                   "datistemplate": (pa.bool_(), [False]), "dattablespace": (pa.int32(), [DEFAULT_TABLESPACE_OID]),
                   "datlocprovider": (pa.string(), ["c"]), "daticulocale": (pa.string(), [None]),
                   "datacl": (pa.list_(pa.string()), [None])})


def pg_am(catalog: Catalog, session=None) -> pa.Table:
    """Access methods: heap (every relation's relam is 0, which psql joins to nothing)."""
    return _table({"oid": (pa.int32(), [2, 403]), "amname": (pa.string(), ["heap", "btree"]),
                   "amhandler": (pa.string(), ["heap_tableam_handler", "bthandler"]),
                   "amtype": (pa.string(), ["t", "i"])})


ACTIVITY_COLUMNS = ("pid", "usename", "application_name", "client_addr", "client_port", "backend_start",
                    "query_start", "state", "query")


def pg_stat_activity(catalog: Catalog, session=None) -> pa.Table:
    """The connections of a server (`rw serve` gives its sessions an `activity()` that lists
    them, as dicts with ACTIVITY_COLUMNS); no rows elsewhere."""
    activity = getattr(session, "activity", None)
    rows = activity() if callable(activity) else []
    col = lambda k: [r.get(k) for r in rows]  # noqa: E731
    n = len(rows)
    ts = pa.timestamp("us", tz="UTC")
    return _table({
        "datid": (pa.int32(), [1] * n), "datname": (pa.string(), [DATABASE] * n),
        "pid": (pa.int32(), col("pid")), "usesysid": (pa.int32(), [OWNER_OID] * n),
        "usename": (pa.string(), col("usename")), "application_name": (pa.string(), col("application_name")),
        "client_addr": (pa.string(), col("client_addr")), "client_port": (pa.int32(), col("client_port")),
        "backend_start": (ts, col("backend_start")), "query_start": (ts, col("query_start")),
        "state": (pa.string(), col("state")), "query": (pa.string(), col("query")),
        "wait_event_type": (pa.string(), [None] * n), "wait_event": (pa.string(), [None] * n),
        "backend_type": (pa.string(), ["client backend"] * n),
    })


def pg_description(catalog: Catalog, session=None) -> pa.Table:
    """COMMENT ON TABLE / COLUMN: one row per comment (objsubid 0: the relation's own, else
    the column's number as pg_attribute numbers it)."""
    rows = []
    for r in _rels(catalog):
        visible = [c.name for c in r.columns if not c.hidden]
        for key, text in r.comments.items():
            sub = 0 if key == "" else (visible.index(key) + 1 if key in visible else -1)
            rows.append((r.id, sub, text))
    return _table({"objoid": (pa.int32(), [x[0] for x in rows]), "classoid": (pa.int32(), [1259] * len(rows)),
                   "objsubid": (pa.int32(), [x[1] for x in rows]), "description": (pa.string(), [x[2] for x in rows])})


def pg_settings(catalog: Catalog, session=None) -> pa.Table:
    """The session's parameters (context `user`; `source` says whether one was changed from
    its default: psql's \\dconfig lists those), then the system parameters, as RisingWave
    lists them: `postmaster` those ALTER SYSTEM may change, `internal` the others."""
    from rw_cli.common.session_config import default, describe
    from rw_cli.meta import system_params

    items = session.settings.items() if session is not None else []
    boot = [default(k) for k, _ in items]
    source = ["default" if v == b else "session" for (_, v), b in zip(items, boot)]
    context = ["user"] * len(items)
    stored = catalog.system_params
    for name, (initial, mutable) in system_params.PARAMS.items():
        items.append((name, _system_setting(stored, name)))
        boot.append(initial)
        source.append("configuration file" if name in stored else "default")
        context.append("postmaster" if mutable else "internal")
    n = len(items)
    s = pa.string()
    return _table({"name": (s, [k for k, _ in items]), "setting": (s, [v for _, v in items]),
                   "unit": (s, [None] * n), "category": (s, [""] * n),
                   "short_desc": (s, [describe(k) for k, _ in items]), "extra_desc": (s, [None] * n),
                   "context": (s, context), "vartype": (s, ["string"] * n), "source": (s, source),
                   "boot_val": (s, boot), "reset_val": (s, boot), "pending_restart": (pa.bool_(), [False] * n)})


def _system_setting(stored: dict[str, str], name: str) -> str:
    """A system parameter as pg_settings shows it: the license key is never shown (RisingWave
    shows `<redacted>` for a key, `<default>` for its built-in one, empty when unset)."""
    from rw_cli.meta import system_params

    if name == "license_key":
        key = stored.get(name)
        return "<default>" if key is None else ("<redacted>" if key else "")
    return system_params.value(stored, name)


# -- rw_catalog ---------------------------------------------------------------------------------

DEFAULT_MAX_PARALLELISM = 256  # RisingWave's vnode count: the most actors a job may have
# the streaming jobs rw_streaming_parallelism lists (RisingWave's view leaves sources out)
_STREAMING_JOBS = (TABLE, MATERIALIZED_VIEW, SINK, INDEX)


def _schema_and_name(rel) -> tuple[str, str]:
    """A catalog name `schema.name` (or `name`, of public) as its two parts."""
    schema, _, name = rel.name.rpartition(".")
    return schema or DEFAULT_SCHEMA, name


def _schema_oid(catalog: Catalog, schema: str) -> int:
    fixed = {DEFAULT_SCHEMA: PUBLIC_OID, "pg_catalog": PG_CATALOG_OID, "information_schema": INFORMATION_SCHEMA_OID,
             "rw_catalog": RW_CATALOG_OID}
    if schema in fixed:
        return fixed[schema]
    return RW_CATALOG_OID + 1 + catalog.schemas.index(schema) if schema in catalog.schemas else PUBLIC_OID


def rw_streaming_parallelism(catalog: Catalog, session=None) -> pa.Table:
    """Each streaming job's configured parallelism, as it was created (a job recorded before
    rw kept the configuration shows its actor count)."""
    rels = [r for r in _rels(catalog) if r.kind in _STREAMING_JOBS]
    return _table({
        "id": (pa.int32(), [r.id for r in rels]),
        "name": (pa.string(), [_schema_and_name(r)[1] for r in rels]),
        "relation_type": (pa.string(), [r.kind for r in rels]),
        "parallelism": (pa.string(), [r.parallelism_config or str(r.parallelism) for r in rels]),
        "max_parallelism": (pa.int32(), [r.max_parallelism for r in rels]),
    })


def _resource_group(catalog: Catalog, rel) -> str:
    """A job's resource group: its own, else its database's."""
    from rw_cli.meta.access import DEFAULT_DATABASE

    return rel.resource_group or catalog.access.databases[DEFAULT_DATABASE]["resource_group"]


def rw_streaming_jobs(catalog: Catalog, session=None) -> pa.Table:
    """Each streaming job: its configured parallelism, max parallelism and resource group."""
    rels = [r for r in _rels(catalog) if r.kind in _STREAMING_JOBS or r.kind == SOURCE]
    return _table({
        "job": (pa.int32(), [r.id for r in rels]),
        "name": (pa.string(), [_schema_and_name(r)[1] for r in rels]),
        "status": (pa.string(), ["CREATING" if r.creating else "CREATED" for r in rels]),
        "parallelism": (pa.string(), [r.parallelism_config or str(r.parallelism) for r in rels]),
        "max_parallelism": (pa.int32(), [r.max_parallelism for r in rels]),
        "resource_group": (pa.string(), [_resource_group(catalog, r) for r in rels]),
    })


def rw_table_fragments(catalog: Catalog, session=None) -> pa.Table:
    """Each streaming job's fragments as one entry: its state, parallelism and max parallelism."""
    rels = [r for r in _rels(catalog) if r.kind in _STREAMING_JOBS]
    return _table({
        "table_id": (pa.int32(), [r.id for r in rels]),
        "status": (pa.string(), ["CREATED"] * len(rels)),
        "parallelism": (pa.string(), [r.parallelism_config or str(r.parallelism) for r in rels]),
        "max_parallelism": (pa.int32(), [r.max_parallelism for r in rels]),
    })


def rw_fragment_id_to_ddl(catalog: Catalog, session=None) -> pa.Table:
    """Which streaming job each fragment belongs to: a job is one fragment here (its id)."""
    rels = [r for r in _rels(catalog) if r.kind in _STREAMING_JOBS or r.kind == SOURCE]
    return _table({
        "fragment_id": (pa.int32(), [r.id for r in rels]),
        "job_id": (pa.int32(), [r.id for r in rels]),
        "name": (pa.string(), [_schema_and_name(r)[1] for r in rels]),
        "ddl_type": (pa.string(), [r.kind.replace(" ", "_") for r in rels]),
    })


_TIMESTAMPTZ = pa.timestamp("us", tz="UTC")


def _micros(ms: int | None) -> int | None:
    return None if ms is None else ms * 1000


def rw_relations_of(kind: str):
    """rw_tables, rw_materialized_views, ...: one kind of relation with its definition."""
    def build(catalog: Catalog, session=None) -> pa.Table:
        # a table with a connector has a source of its own name (RisingWave lists both)
        rels = [r for r in _rels(catalog) if r.kind == kind or (kind == SOURCE and r.kind == TABLE and r.connector)]
        parts = [_schema_and_name(r) for r in rels]
        return _table({
            "id": (pa.int32(), [r.id for r in rels]),
            "name": (pa.string(), [p[1] for p in parts]),
            "schema_id": (pa.int32(), [_schema_oid(catalog, p[0]) for p in parts]),
            "schema_name": (pa.string(), [p[0] for p in parts]),
            "owner": (pa.int32(), [_owner_id(catalog, r.owner) for r in rels]),
            "definition": (pa.string(), [r.definition for r in rels]),
            **({"retention_seconds": (pa.int64(), [(r.connector or {}).get("retention_ms", 0) // 1000
                                                   for r in rels])} if kind == SUBSCRIPTION else {}),
            "created_at": (_TIMESTAMPTZ, [_micros(r.created_at) for r in rels]),
            "initialized_at": (_TIMESTAMPTZ, [_micros(r.created_at) for r in rels]),
            "created_at_cluster_version": (pa.string(), [r.created_at_version or None for r in rels]),
            "initialized_at_cluster_version": (pa.string(), [r.created_at_version or None for r in rels]),
            **({"status": (pa.string(), ["Creating" if r.creating else "Created" for r in rels])}
               if kind in (MATERIALIZED_VIEW, INDEX, SINK) else {}),
            **({"background_ddl": (pa.bool_(), [r.background_ddl for r in rels])} if kind == SINK else {}),
        })
    return build


def rw_relations(catalog: Catalog, session=None) -> pa.Table:
    """Every relation, of every kind: id, name, relation_type ('table', 'materialized view', ...),
    schema, owner, definition."""
    rels = _rels(catalog)
    parts = [_schema_and_name(r) for r in rels]
    return _table({
        "id": (pa.int32(), [r.id for r in rels]),
        "name": (pa.string(), [p[1] for p in parts]),
        "relation_type": (pa.string(), [r.kind for r in rels]),
        "schema_id": (pa.int32(), [_schema_oid(catalog, p[0]) for p in parts]),
        "owner": (pa.int32(), [_owner_id(catalog, r.owner) for r in rels]),
        "definition": (pa.string(), [r.definition for r in rels]),
        "created_at": (_TIMESTAMPTZ, [_micros(r.created_at) for r in rels]),
        "initialized_at": (_TIMESTAMPTZ, [_micros(r.created_at) for r in rels]),
    })


def rw_depend(catalog: Catalog, session=None) -> pa.Table:
    """One row per dependency of a relation on another (`objid` depends on `refobjid`): what
    DROP ... RESTRICT refuses to break."""
    rows = [(r.id, d) for r in _rels(catalog) for d in dict.fromkeys(r.dependencies) if d in catalog.relations]
    return _table({"objid": (pa.int32(), [a for a, _ in rows]), "refobjid": (pa.int32(), [b for _, b in rows])})


def rw_schemas(catalog: Catalog, session=None) -> pa.Table:
    names = _schema_names(catalog)
    return _table({"id": (pa.int32(), [_schema_oid(catalog, n) for n in names]), "name": (pa.string(), names),
                   "owner": (pa.int32(), [_owner_id(catalog, _schema_owner(catalog, n)) for n in names])})


def _users(catalog: Catalog) -> list[tuple[str, dict]]:
    return sorted(catalog.access.users.items(), key=lambda kv: kv[1]["id"])


def pg_roles(catalog: Catalog, session=None) -> pa.Table:
    users = _users(catalog)
    b = pa.bool_()
    return _table({"oid": (pa.int32(), [u["id"] for _, u in users]), "rolname": (pa.string(), [n for n, _ in users]),
                   "rolsuper": (b, [u["superuser"] for _, u in users]), "rolinherit": (b, [True] * len(users)),
                   "rolcreaterole": (b, [u["createuser"] for _, u in users]),
                   "rolcreatedb": (b, [u["createdb"] for _, u in users]),
                   "rolcanlogin": (b, [u["login"] for _, u in users]),
                   "rolreplication": (b, [False] * len(users)), "rolconnlimit": (pa.int32(), [-1] * len(users)),
                   "rolpassword": (pa.string(), ["********"] * len(users)),
                   "rolbypassrls": (b, [False] * len(users)),
                   "rolvaliduntil": (pa.string(), [None] * len(users)),
                   "rolconfig": (pa.string(), [None] * len(users))})


def pg_user(catalog: Catalog, session=None) -> pa.Table:
    users = _users(catalog)
    b = pa.bool_()
    # RisingWave's column order (usesysid first), not PostgreSQL's
    return _table({"usesysid": (pa.int32(), [u["id"] for _, u in users]),
                   "usename": (pa.string(), [n for n, _ in users]),
                   "usecreatedb": (b, [u["createdb"] for _, u in users]),
                   "usesuper": (b, [u["superuser"] for _, u in users]),
                   "passwd": (pa.string(), ["********"] * len(users))})


def pg_shadow(catalog: Catalog, session=None) -> pa.Table:
    """Users with their stored password (NULL for none), as RisingWave lists them."""
    users = _users(catalog)
    b, n = pa.bool_(), len(users)
    return _table({"usename": (pa.string(), [name for name, _ in users]),
                   "usesysid": (pa.int32(), [u["id"] for _, u in users]),
                   "usecreatedb": (b, [u["createdb"] for _, u in users]),
                   "usesuper": (b, [u["superuser"] for _, u in users]),
                   "userepl": (b, [False] * n), "usebypassrls": (b, [False] * n),
                   "passwd": (pa.string(), [u.get("password") or None for _, u in users]),
                   "valuntil": (pa.timestamp("us", tz="UTC"), [None] * n),
                   "useconfig": (pa.string(), [None] * n)})


def rw_users(catalog: Catalog, session=None) -> pa.Table:
    users = _users(catalog)
    b = pa.bool_()
    return _table({"id": (pa.int32(), [u["id"] for _, u in users]), "name": (pa.string(), [n for n, _ in users]),
                   "is_super": (b, [u["superuser"] for _, u in users]),
                   "create_db": (b, [u["createdb"] for _, u in users]),
                   "create_user": (b, [u["createuser"] for _, u in users]),
                   "can_login": (b, [u["login"] for _, u in users])})


def rw_databases(catalog: Catalog, session=None) -> pa.Table:
    dbs = sorted(catalog.access.databases.items(), key=lambda kv: kv[1]["id"])
    return _table({"id": (pa.int32(), [d["id"] for _, d in dbs]), "name": (pa.string(), [n for n, _ in dbs]),
                   "owner": (pa.int32(), [_owner_id(catalog, d["owner"]) for _, d in dbs]),
                   "resource_group": (pa.string(), [d["resource_group"] for _, d in dbs]),
                   "barrier_interval_ms": (pa.int32(), [d["barrier_interval_ms"] for _, d in dbs]),
                   "checkpoint_frequency": (pa.int64(), [d["checkpoint_frequency"] for _, d in dbs])})


def rw_hummock_compaction_group_configs(catalog: Catalog, session=None) -> pa.Table:
    """Each compaction group's configuration as JSON (RisingWave's field names)."""
    import json

    from rw_cli.meta.compaction_groups import GROUP_IDS, default_config

    configs = [catalog.compaction_configs.get(str(g)) or default_config() for g in GROUP_IDS]
    return _table({"id": (pa.int64(), list(GROUP_IDS)), "parent_id": (pa.int64(), [0] * len(GROUP_IDS)),
                   "member_tables": (pa.string(), ["[]"] * len(GROUP_IDS)),
                   "compaction_config": (pa.string(), [json.dumps(c) for c in configs]),
                   "active_write_limit": (pa.string(), [None] * len(GROUP_IDS))})


def rw_secrets(catalog: Catalog, session=None) -> pa.Table:
    """Each secret with its owner (never its value)."""
    names = sorted(catalog.access.secrets, key=lambda n: catalog.access.secrets[n]["id"])
    owners = [catalog.access.object_owners.get(f"secret:{n}", DEFAULT_USER) for n in names]
    return _table({"id": (pa.int32(), [catalog.access.secrets[n]["id"] for n in names]),
                   "name": (pa.string(), names),
                   "schema_id": (pa.int32(), [PUBLIC_OID] * len(names)),
                   "owner": (pa.int32(), [_owner_id(catalog, o) for o in owners])})


def rw_functions(catalog: Catalog, session=None) -> pa.Table:
    """One row per function (each of a name's overloads)."""
    from rw_cli.sql.sql_udf import overloads

    rows = [(n, r) for n in catalog.functions for r in overloads(catalog.functions[n])]
    owners = [catalog.access.object_owners.get(f"function:{n}", DEFAULT_USER) for n, _ in rows]
    return _table({"id": (pa.int32(), list(range(1, len(rows) + 1))),
                   "name": (pa.string(), [n.rpartition(".")[2] for n, _ in rows]),
                   "schema_id": (pa.int32(), [_schema_oid(catalog, r.get("schema", DEFAULT_SCHEMA)) for _, r in rows]),
                   "owner": (pa.int32(), [_owner_id(catalog, o) for o in owners])})


def is_rw_catalog_name(name: str) -> bool:
    """Whether an unqualified name is one of rw_catalog's relations (found without the schema,
    as RisingWave's search path finds them)."""
    return ("rw_catalog", name) in _BUILDERS


def is_pg_catalog_name(name: str) -> bool:
    """Whether an unqualified name is one of pg_catalog's relations (always on the search path)."""
    return ("pg_catalog", name) in _BUILDERS


_EMPTY_TYPES = {"b": pa.bool_(), "h": pa.int16(), "i": pa.int32(), "l": pa.int64(), "s": pa.string(),
                "f": pa.float32(), "z": pa.timestamp("us", tz="UTC"),
                "a": pa.list_(pa.int16()), "n": pa.list_(pa.int32()),
                "t": pa.list_(pa.string())}


def pg_empty(*cols: str):
    """A relation rw has no rows of. A column is `name` (an int32 if it ends in oid/relid,
    else text) or `name:t` with t one of _EMPTY_TYPES' letters."""
    def build(catalog: Catalog, session=None) -> pa.Table:
        out = {}
        for c in cols:
            name, _, kind = c.partition(":")
            dtype = _EMPTY_TYPES[kind] if kind else \
                (pa.int32() if name.endswith("oid") or name.endswith("relid") else pa.string())
            out[name] = (dtype, [])
        return _table(out)
    return build


_STAT_COUNTS = ("seq_scan", "seq_tup_read", "idx_scan", "idx_tup_fetch", "n_tup_ins", "n_tup_upd", "n_tup_del",
                "n_tup_hot_upd", "n_tup_newpage_upd", "n_live_tup", "n_dead_tup", "n_mod_since_analyze",
                "n_ins_since_vacuum", "vacuum_count", "autovacuum_count", "analyze_count", "autoanalyze_count")
_STAT_TIMES = ("last_seq_scan", "last_idx_scan", "last_vacuum", "last_autovacuum", "last_analyze", "last_autoanalyze")


def pg_stat_user_tables(catalog: Catalog, session=None) -> pa.Table:
    """One row per table and materialized view, which BI tools (Metabase) join to pg_class by
    name; rw keeps no access statistics, so the counters are NULL, as RisingWave's are."""
    rels = [r for r in _rels(catalog) if r.kind in (TABLE, MATERIALIZED_VIEW)]
    parts = [_schema_and_name(r) for r in rels]
    n = len(rels)
    return _table({"relid": (pa.int32(), [r.id for r in rels]), "schemaname": (pa.string(), [p[0] for p in parts]),
                   "relname": (pa.string(), [p[1] for p in parts]),
                   **{c: (pa.int64(), [None] * n) for c in _STAT_COUNTS},
                   **{c: (_TIMESTAMPTZ, [None] * n) for c in _STAT_TIMES}})


# pg_cast's rows: RisingWave's cast map (rw_cli.sql.cast_map)
_CAST_OIDS = {"boolean": 16, "smallint": 21, "integer": 23, "bigint": 20, "serial": 20, "real": 700,
              "double": 701, "numeric": 1700, "date": 1082, "varchar": 1043, "time": 1083, "timestamp": 1114,
              "timestamptz": 1184, "interval": 1186, "bytea": 17, "jsonb": 3802, "int256": 1301}


def pg_cast(catalog: Catalog, session=None) -> pa.Table:
    """The casts between base types, numbered in RisingWave's order."""
    rows = [(_CAST_OIDS[src], _CAST_OIDS[dst], ctx) for (src, dst), ctx in CASTS.items()]
    i32 = pa.int32()
    n = len(rows)
    # castfunc 0 / castmethod 'i': rw's casts are built in, no pg_proc function (psql's \dC)
    return _table({"oid": (i32, list(range(n))), "castsource": (i32, [r[0] for r in rows]),
                   "casttarget": (i32, [r[1] for r in rows]), "castfunc": (i32, [0] * n),
                   "castcontext": (pa.string(), [r[2] for r in rows]), "castmethod": (pa.string(), ["i"] * n)})


PK_CONSTRAINT_OID_BASE = 1 << 24  # a primary key constraint's oid: this plus its relation's
PK_INDEX_OID_BASE = 1 << 25  # the oid of its index (pg_index.indexrelid, pg_constraint.conindid)


def pg_constraint(catalog: Catalog, session=None) -> pa.Table:
    """The primary keys (the only constraints rw has), named `<relation>_pkey` as PostgreSQL
    names them."""
    rels = [r for r in _rels(catalog) if r.kind == TABLE and r.user_pk]
    n = len(rels)
    i32, b, s = pa.int32(), pa.bool_(), pa.string()
    return _table({
        "oid": (i32, [PK_CONSTRAINT_OID_BASE + r.id for r in rels]),
        "conname": (s, [f"{_schema_and_name(r)[1]}_pkey" for r in rels]),
        "connamespace": (i32, [_schema_oid(catalog, _schema_and_name(r)[0]) for r in rels]),
        "contype": (s, ["p"] * n), "condeferrable": (b, [False] * n), "condeferred": (b, [False] * n),
        "convalidated": (b, [True] * n), "conrelid": (i32, [r.id for r in rels]), "contypid": (i32, [0] * n),
        "conindid": (i32, [PK_INDEX_OID_BASE + r.id for r in rels]), "conparentid": (i32, [0] * n),
        "confrelid": (i32, [0] * n),
        "confupdtype": (s, [" "] * n), "confdeltype": (s, [" "] * n), "confmatchtype": (s, [" "] * n),
        "conislocal": (b, [True] * n), "coninhcount": (i32, [0] * n), "connoinherit": (b, [True] * n),
        "conkey": (pa.list_(pa.int16()), [[_attnum(r, k) for k in r.pk] for r in rels]),
        "confkey": (pa.list_(pa.int16()), [None] * n), "conbin": (s, [None] * n),
    })


_BUILDERS = {
    ("information_schema", "tables"): info_tables,
    ("information_schema", "columns"): info_columns,
    ("information_schema", "schemata"): info_schemata,
    ("information_schema", "views"): info_views,
    ("information_schema", "table_constraints"): info_table_constraints,
    ("information_schema", "key_column_usage"): info_key_column_usage,
    ("pg_catalog", "pg_namespace"): pg_namespace,
    ("pg_catalog", "pg_class"): pg_class,
    ("pg_catalog", "pg_attribute"): pg_attribute,
    ("pg_catalog", "pg_type"): pg_type,
    ("pg_catalog", "pg_index"): pg_index,
    ("pg_catalog", "pg_tables"): pg_tables,
    ("pg_catalog", "pg_matviews"): pg_matviews,
    ("pg_catalog", "pg_indexes"): pg_indexes,
    ("pg_catalog", "pg_views"): pg_views,
    ("pg_catalog", "pg_database"): pg_database,
    ("pg_catalog", "pg_settings"): pg_settings,
    ("pg_catalog", "pg_am"): pg_am,
    ("pg_catalog", "pg_stat_activity"): pg_stat_activity,
    ("pg_catalog", "pg_proc"): pg_empty("oid", "proname", "pronamespace", "prorettype", "prokind"),
    ("pg_catalog", "pg_opclass"): pg_empty("oid", "opcmethod:i", "opcname", "opcnamespace:i", "opcowner:i",
                                           "opcfamily:i", "opcintype:i", "opcdefault:b", "opckeytype:i"),
    ("pg_catalog", "pg_collation"): pg_empty("oid", "collname", "collnamespace", "collowner:i", "collprovider:i",
                                             "collisdeterministic:b", "collencoding:i", "collcollate", "collctype",
                                             "colliculocale", "collversion"),
    ("pg_catalog", "pg_operator"): pg_empty("oid", "oprname", "oprnamespace", "oprowner:i", "oprkind",
                                            "oprcanmerge:b", "oprcanhash:b", "oprleft:i", "oprright:i", "oprresult:i",
                                            "oprcom:i", "oprnegate:i", "oprcode:i", "oprrest:i", "oprjoin:i"),
    ("pg_catalog", "pg_conversion"): pg_empty("oid", "conname", "connamespace", "conowner:i", "conforencoding:h",
                                              "contoencoding:h", "conproc:i", "condefault:b"),
    # rw takes no locks a client could see
    ("pg_catalog", "pg_locks"): pg_empty("locktype", "database:i", "relation:i", "page:i", "tuple:h", "virtualxid",
                                         "transactionid:i", "classid:i", "objid:i", "objsubid:h",
                                         "virtualtransaction", "pid:i", "mode", "granted:b", "fastpath:b",
                                         "waitstart:z"),
    ("pg_catalog", "pg_cast"): pg_cast,
    ("pg_catalog", "pg_attrdef"): pg_empty("oid", "adrelid", "adnum", "adbin"),
    ("pg_catalog", "pg_enum"): pg_empty("oid", "enumtypid", "enumlabel", "enumsortorder:f"),
    ("pg_catalog", "pg_extension"): pg_empty("oid", "extname", "extowner:i", "extnamespace:i", "extrelocatable:b",
                                             "extversion", "extconfig:a", "extcondition:t"),
    ("pg_catalog", "pg_event_trigger"): pg_empty("oid", "evtname", "evtevent", "evtowner:i", "evtfoid:i",
                                                 "evtenabled", "evttags:t"),
    ("pg_catalog", "pg_sequence"): pg_empty("seqrelid", "seqtypid", "seqstart:l", "seqincrement:l", "seqmax:l",
                                            "seqmin:l", "seqcache:l", "seqcycle:b"),
    ("pg_catalog", "pg_sequences"): pg_empty("schemaname", "sequencename", "sequenceowner", "data_type",
                                             "start_value:l", "min_value:l", "max_value:l", "increment_by:l",
                                             "cycle:b", "cache_size:l", "last_value:l"),
    ("pg_catalog", "pg_auth_members"): pg_empty("roleid", "member", "grantor", "admin_option:b"),
    ("pg_catalog", "pg_trigger"): pg_empty("oid", "tgrelid", "tgname"),
    ("pg_catalog", "pg_rewrite"): pg_empty("oid", "ev_class", "rulename"),
    ("pg_catalog", "pg_policy"): pg_empty("oid", "polrelid", "polname", "polpermissive:b", "polroles:a", "polqual",
                                          "polwithcheck", "polcmd"),
    ("pg_catalog", "pg_statistic_ext"): pg_empty("oid", "stxrelid", "stxname", "stxnamespace:i", "stxkeys:a",
                                                  "stxkind:t", "stxstattarget:i"),
    ("pg_catalog", "pg_publication"): pg_empty("oid", "pubname", "pubowner:i", "puballtables:b", "pubinsert:b",
                                               "pubupdate:b", "pubdelete:b", "pubtruncate:b", "pubviaroot:b"),
    # what psql's \dl, \des, \dew, \dRs, \drds, \ddp and \dF read: rw has none of these objects
    ("pg_catalog", "pg_largeobject_metadata"): pg_empty("oid", "lomowner:i", "lomacl:t"),
    ("pg_catalog", "pg_foreign_server"): pg_empty("oid", "srvname", "srvowner:i", "srvfdw:i", "srvtype", "srvversion",
                                                  "srvacl:t", "srvoptions:t"),
    ("pg_catalog", "pg_foreign_data_wrapper"): pg_empty("oid", "fdwname", "fdwowner:i", "fdwhandler:i",
                                                        "fdwvalidator:i", "fdwacl:t", "fdwoptions:t"),
    ("pg_catalog", "pg_subscription"): pg_empty("oid", "subdbid:i", "subskiplsn", "subname", "subowner:i",
                                                "subenabled:b", "subbinary:b", "substream:b", "subtwophasestate",
                                                "subdisableonerr:b", "subconninfo", "subslotname", "subsynccommit",
                                                "subpublications:t"),
    ("pg_catalog", "pg_db_role_setting"): pg_empty("setdatabase:i", "setrole:i", "setconfig:t"),
    ("pg_catalog", "pg_default_acl"): pg_empty("oid", "defaclrole:i", "defaclnamespace:i", "defaclobjtype",
                                               "defaclacl:t"),
    ("pg_catalog", "pg_ts_config"): pg_empty("oid", "cfgname", "cfgnamespace:i", "cfgowner:i", "cfgparser:i"),
    ("pg_catalog", "pg_ts_parser"): pg_empty("oid", "prsname", "prsnamespace:i", "prsstart", "prstoken", "prsend",
                                             "prsheadline", "prslextype"),
    ("pg_catalog", "pg_ts_dict"): pg_empty("oid", "dictname", "dictnamespace:i", "dictowner:i", "dicttemplate:i",
                                           "dictinitoption"),
    ("pg_catalog", "pg_ts_template"): pg_empty("oid", "tmplname", "tmplnamespace:i", "tmplinit", "tmpllexize"),
    ("pg_catalog", "pg_publication_rel"): pg_empty("oid", "prrelid", "prpubid"),
    ("pg_catalog", "pg_foreign_table"): pg_empty("ftrelid", "ftserver"),
    ("pg_catalog", "pg_partitioned_table"): pg_empty("partrelid", "partstrat", "partnatts:h", "partdefid:i",
                                                     "partattrs:a", "partclass:n", "partcollation:n", "partexprs"),
    ("pg_catalog", "pg_description"): pg_description,
    ("pg_catalog", "pg_constraint"): pg_constraint,
    ("pg_catalog", "pg_inherits"): pg_empty("inhrelid", "inhparent", "inhseqno"),
    ("pg_catalog", "pg_tablespace"): pg_tablespace,
    ("pg_catalog", "pg_stat_user_tables"): pg_stat_user_tables,
    ("pg_catalog", "pg_aggregate"): pg_empty("aggfnoid", "aggkind", "aggnumdirectargs:i", "aggtransfn", "aggfinalfn",
                                             "aggcombinefn", "aggtranstype:i", "agginitval"),
    ("pg_catalog", "pg_range"): pg_empty("rngtypid", "rngsubtype:i", "rngmultitypid:i", "rngcollation:i",
                                         "rngsubopc:i", "rngcanonical", "rngsubdiff"),
    ("pg_catalog", "pg_language"): pg_empty("oid", "lanname", "lanowner:i", "lanispl:b", "lanpltrusted:b",
                                            "lanplcallfoid:i", "laninline:i", "lanvalidator:i", "lanacl:t",
                                            "tableoid"),
    ("pg_catalog", "pg_shdescription"): pg_empty("objoid", "classoid", "description"),
    ("pg_catalog", "pg_keywords"): pg_empty("word", "catcode", "catdesc"),
    ("rw_catalog", "rw_streaming_parallelism"): rw_streaming_parallelism,
    ("rw_catalog", "rw_tables"): rw_relations_of(TABLE),
    ("rw_catalog", "rw_materialized_views"): rw_relations_of(MATERIALIZED_VIEW),
    ("rw_catalog", "rw_views"): rw_relations_of(VIEW),
    ("rw_catalog", "rw_indexes"): rw_relations_of(INDEX),
    ("rw_catalog", "rw_sinks"): rw_relations_of(SINK),
    ("rw_catalog", "rw_sources"): rw_relations_of(SOURCE),
    ("rw_catalog", "rw_subscriptions"): rw_relations_of(SUBSCRIPTION),
    ("rw_catalog", "rw_schemas"): rw_schemas,
    ("rw_catalog", "rw_relations"): rw_relations,
    ("rw_catalog", "rw_depend"): rw_depend,
    ("rw_catalog", "rw_users"): rw_users,
    ("rw_catalog", "rw_databases"): rw_databases,
    ("rw_catalog", "rw_functions"): rw_functions,
    ("rw_catalog", "rw_secrets"): rw_secrets,
    ("rw_catalog", "rw_streaming_jobs"): rw_streaming_jobs,
    ("rw_catalog", "rw_ddl_progress"): job_catalog.rw_ddl_progress,
    ("rw_catalog", "rw_fragment_backfill_progress"): job_catalog.rw_fragment_backfill_progress,
    ("rw_catalog", "rw_rate_limit"): job_catalog.rw_rate_limit,
    ("rw_catalog", "rw_streaming_job_config"): job_catalog.rw_streaming_job_config,
    ("rw_catalog", "rw_fragment_id_to_ddl"): rw_fragment_id_to_ddl,
    ("rw_catalog", "rw_table_fragments"): rw_table_fragments,
    ("rw_catalog", "rw_hummock_compaction_group_configs"): rw_hummock_compaction_group_configs,
    ("pg_catalog", "pg_roles"): pg_roles,
    ("pg_catalog", "pg_user"): pg_user,
    ("pg_catalog", "pg_shadow"): pg_shadow,
    ("pg_catalog", "pg_depend"): pg_empty("classid", "objid", "objsubid:i", "refclassid", "refobjid",
                                          "refobjsubid:i", "deptype"),
}
