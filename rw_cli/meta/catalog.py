"""The catalog: tables and materialized views, persisted with every committed epoch.

The catalog is serialized to JSON and committed atomically with the store's version (the
version's `extra` blob), so catalog and state can never disagree after a crash.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field

from rw_cli.common.types import DataType
from rw_cli.errors import CatalogError
from rw_cli.meta.access import DEFAULT_USER, AccessCatalog

TABLE = "table"
MATERIALIZED_VIEW = "materialized view"
INDEX = "index"  # an arrangement of a table or MV, maintained like an MV
VIEW = "view"  # a named query, expanded by batch queries; no state, no job
SOURCE = "source"  # a connector's stream, not materialized; its job reads splits (rw_cli.connector)
SINK = "sink"  # a query's changes delivered to a connector at each committed epoch
SUBSCRIPTION = "subscription"  # a relation's change log kept for cursors (rw_cli.handler.subscription)
ROW_ID = "_row_id"
DEFAULT_SCHEMA = "public"
SYSTEM_SCHEMA_NAMES = ("information_schema", "pg_catalog", "rw_catalog")
# every table and MV has it without storing it: when each row was last written (the
# epoch's wall time), named explicitly only (`*` does not expand to it)
RW_TIMESTAMP = "_rw_timestamp"


def _type(name: str, scale: int | None) -> DataType:
    if name.endswith("[]"):
        return DataType.from_sql(name)
    return DataType(name, scale)


@dataclass
class ColumnCatalog:
    name: str
    type: DataType
    hidden: bool = False
    default: str | None = None  # DEFAULT expression (PostgreSQL SQL), used when an INSERT omits it
    not_null: bool = False
    generated: str | None = None  # `col type AS expr` (PostgreSQL SQL over the other columns)


@dataclass
class RelationCatalog:
    """A table or a materialized view. `id` is also the storage table id of its rows."""

    id: int
    name: str
    kind: str
    columns: list[ColumnCatalog]
    pk: list[int]
    definition: str = ""
    dependencies: list[int] = field(default_factory=list)
    state_table_ids: list[int] = field(default_factory=list)
    append_only: bool = False
    user_pk: bool = False  # True when the pk was declared by the user (tables only)
    # True when it was declared as a `PRIMARY KEY (...)` clause, not on its column (SHOW
    # CREATE TABLE writes it as it was written)
    pk_clause: bool = False
    parallelism: int = 1  # actors per partitioned fragment of this job
    # the configured parallelism it was created under (rw_cli.common.parallelism): `adaptive`,
    # `bounded(N)`, `ratio(x)` or a fixed `N`; "" for streaming jobs created before it was recorded
    parallelism_config: str = ""
    on_conflict: str = "overwrite"  # tables with a pk: overwrite | do nothing | do update [full|if not null]
    # [column, expression] or [column, expression, True]: WATERMARK FOR column AS expression
    # [WITH TTL] (TTL: the rows whose column falls below the watermark expire)
    watermark: list | None = None
    # ON CONFLICT ... WITH VERSION COLUMN (...): positions of the columns deciding which write wins
    version_columns: list[int] = field(default_factory=list)
    # CREATE SINK ... INTO table: the table's id (its changes enter that table as its DML does)
    target: int | None = None
    # an MV WITH (refresh.interval.sec = N): RisingWave's batch refresh MV (rw_cli.handler.create_mv)
    refresh_interval_sec: int | None = None
    # sources, sinks and tables WITH (connector = ...): {"options", "format", "encode", "encode_options"}
    connector: dict = field(default_factory=dict)
    # its stream job builds identical subplans once (jobs created before this was recorded
    # did not: their recorded state tables are one per copy)
    shared_subplans: bool = False
    # its operators keep append-only inputs as append logs (jobs created before this was
    # recorded keep them as key-value state)
    append_logs: bool = False
    owner: str = DEFAULT_USER  # ALTER ... OWNER TO changes it
    max_parallelism: int = 256  # its vnode count: streaming_max_parallelism when it was created
    resource_group: str = ""  # ALTER ... SET RESOURCE_GROUP; "": its database's
    created_at: int | None = None  # when it was created (ms since the Unix epoch; None: before it was kept)
    created_at_version: str = ""  # version() of the rw that created it
    # COMMENT ON TABLE (key "") and COMMENT ON COLUMN (key: the column's name)
    comments: dict = field(default_factory=dict)
    # a job created with BACKGROUND_DDL whose backfill has not finished (rw_cli.stream.background);
    # status Creating until then, and a restart backfills it again
    creating: bool = False
    background_ddl: bool = False  # created with BACKGROUND_DDL (rw_sinks shows it), kept once created
    # ALTER ... SET {SOURCE|BACKFILL|SINK|DML}_RATE_LIMIT and WITH (backfill_rate_limit = n):
    # rows per second per parallelism unit (key: "backfill" ...; absent: no limit, 0 pauses)
    rate_limits: dict = field(default_factory=dict)
    # ALTER ... SET CONFIG (streaming.developer.x = v): the job's own streaming config overrides
    job_config: dict = field(default_factory=dict)
    sink_decouple: bool = False  # a sink created with sink_decouple = true (it has a log store)
    # how its backfill reads its upstreams, as rw_ddl_progress shows it: SNAPSHOT_BACKFILL when
    # created with streaming_use_snapshot_backfill = true, else ARRANGEMENT_BACKFILL ("": not a job)
    backfill_type: str = ""
    # a table WITH (retention_seconds = n): storage TTL, rows written longer ago than that are
    # gone from its (and its indexes') reads; no change is emitted for them (RisingWave's
    # compaction drops them)
    retention_seconds: int | None = None
    # an MV whose query ALTER MATERIALIZED VIEW ... AS replaced: its rows were not computed
    # again, so its materialize resolves the changes by key (RisingWave's Overwrite conflict
    # behavior after an alter): a delete or update of a row it does not hold is dropped
    altered: bool = False
    # the columns whose vnode places a row in its state, a prefix of its pk: an index's key
    # columns (or its DISTRIBUTED BY), as RisingWave distributes an index, so that a read of
    # one key's rows is one range; None: the whole pk (and every relation created before this
    # was recorded)
    dist_key: list[int] | None = None
    # an MV's ORDER BY over its output columns: [column, descending, nulls first] each. As
    # RisingWave's order key it leads the storage order, so a scan answers in that order
    order_key: list = field(default_factory=list)

    @property
    def visible_columns(self) -> list[ColumnCatalog]:
        return [c for c in self.columns if not c.hidden]

    @property
    def ttl_column(self) -> int | None:
        """The position of the column of a `WITH TTL` watermark (rows below it expire), or None."""
        if self.watermark and len(self.watermark) > 2 and self.watermark[2]:
            return self.column_index(self.watermark[0])
        return None

    @property
    def stream_key(self) -> list[int]:
        """The key of the changes the relation emits: its pk, and a TTL watermark's column
        (as RisingWave: a row whose time changes is deleted and inserted anew, so an expired
        row and its key's newer row are distinct rows downstream)."""
        ttl = self.ttl_column
        return list(self.pk) if ttl is None or ttl in self.pk else [*self.pk, ttl]

    def column_index(self, name: str) -> int:
        for i, c in enumerate(self.columns):
            if c.name == name:
                return i
        raise CatalogError(f'column "{name}" does not exist in "{self.name}"')

    def to_json(self) -> dict:
        # a shallow copy (dataclasses.asdict deep-copies: it costs ms on every checkpoint)
        d = {k: (list(v) if isinstance(v, list) else v) for k, v in vars(self).items()}
        d["columns"] = [{"name": c.name, "type": c.type.name, "scale": c.type.scale, "hidden": c.hidden,
                         "default": c.default, "not_null": c.not_null,
                         **({"generated": c.generated} if c.generated else {})} for c in self.columns]
        return d

    @staticmethod
    def from_json(d: dict) -> "RelationCatalog":
        cols = [ColumnCatalog(c["name"], type_from_name(c["type"], c.get("scale")), c["hidden"], c.get("default"),
                              c.get("not_null", False), c.get("generated")) for c in d["columns"]]
        return RelationCatalog(**{**d, "columns": cols})


def _top_level_split(body: str) -> list[str]:
    """`a,b` split at its commas outside <>, () and double quotes (a quoted field name)."""
    parts, depth, start, quoted = [], 0, 0, False
    for i, ch in enumerate(body + ","):
        if ch == '"':
            quoted = not quoted
        elif quoted:
            continue
        elif ch in "<(":
            depth += 1
        elif ch in ">)":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(body[start:i].strip())
            start = i + 1
    return parts


def type_from_name(name: str, scale: int | None = None) -> DataType:
    """A type back from the name the catalog stores: `struct<a bigint, b character varying>`
    and `t[]` carry their inner types in the name."""
    if name.endswith("[]"):
        inner = type_from_name(name[:-2])
        return DataType(name, inner=(inner,))
    if name.startswith("map(") and name.endswith(")"):
        key, value = _top_level_split(name[len("map("):-1])
        return DataType.map_of(type_from_name(key), type_from_name(value))
    if not name.startswith("struct<"):
        return DataType(name, scale)  # a scalar, or vector(n) (its size in the name)
    fields = [_field_and_type(f) for f in _top_level_split(name[len("struct<"):-1])]
    names = tuple(n for n, _ in fields)
    inner = tuple(type_from_name(t) for _, t in fields)
    return DataType(name, inner=inner, field_names=names)


def _field_and_type(text: str) -> tuple[str, str]:
    """`name type` of a struct's name: the field name, quoted (`"b B" integer`, `""` for a
    quote) or bare, and its type's name."""
    if not text.startswith('"'):
        name, _, rest = text.partition(" ")
        return name, rest
    i = 1
    while i < len(text):
        if text[i] == '"' and text[i + 1:i + 2] == '"':
            i += 2
            continue
        if text[i] == '"':
            break
        i += 1
    return text[1:i].replace('""', '"'), text[i + 1:].lstrip()


@dataclass
class Catalog:
    relations: dict[int, RelationCatalog] = field(default_factory=dict)
    next_id: int = 1
    # SQL functions (CREATE FUNCTION ... LANGUAGE SQL): name -> {"args", "returns", "body"}
    functions: dict[str, dict] = field(default_factory=dict)
    # schemas besides `public` (CREATE SCHEMA); a relation of one is named `schema.name`
    schemas: list[str] = field(default_factory=list)
    # users, databases, owners of schemas and functions, grants (rw_cli.meta.access)
    access: AccessCatalog = field(default_factory=AccessCatalog)
    # compaction group id (as text) -> its configuration, once altered (rw_cli.meta.compaction_groups)
    compaction_configs: dict[str, dict] = field(default_factory=dict)
    # ALTER SYSTEM SET: system parameters and session parameters' defaults (rw_cli.meta.system_params)
    system_params: dict[str, str] = field(default_factory=dict)
    # bumped after every statement that may have changed the catalog (never stored): what is
    # derived from it, such as a SELECT bound and transpiled once (rw_cli.handler.prepared),
    # is reused only while it is the same
    version: int = field(default=0, compare=False, repr=False)

    def changed(self) -> None:
        """Say that the catalog may have changed: whatever was derived from it is stale."""
        self.version += 1

    def qualified(self, name: str, schema: str | None) -> str:
        """The catalog name of relation `name` in `schema` (None, "" or public: the name
        itself); an unknown schema is an error."""
        if not schema or schema == DEFAULT_SCHEMA:
            return name
        if schema not in self.schemas:
            raise CatalogError(f"schema not found: {schema}")
        return f"{schema}.{name}"

    def in_schema(self, schema: str) -> list["RelationCatalog"]:
        return [r for r in self.relations.values() if r.name.startswith(schema + ".")]

    def alloc_id(self) -> int:
        i = self.next_id
        self.next_id += 1
        return i

    def get(self, name: str) -> RelationCatalog | None:
        for r in self.relations.values():
            if r.name == name:
                return r
        return None

    def must_get(self, name: str, kind: str | None = None) -> RelationCatalog:
        r = self.get(name)
        if r is None or (kind is not None and r.kind != kind):
            what = kind or "relation"
            raise CatalogError(f'{what} "{name}" does not exist')
        return r

    def name_taken(self, name: str) -> CatalogError | None:
        """The error a CREATE of `name` gets when a relation already has the name. It names that
        relation's kind, as RisingWave does (`materialized view with name mv exists`), so that
        `create table mv` says a materialized view is in the way."""
        taken = self.get(name)
        return None if taken is None else CatalogError(f'{taken.kind} "{name}" already exists')

    def add(self, rel: RelationCatalog) -> None:
        taken = self.name_taken(rel.name)
        if taken is not None:
            raise taken
        if rel.created_at is None:  # rw_* catalogs show when and by which version
            import time

            from rw_cli.common.session_config import server_version

            rel.created_at, rel.created_at_version = int(time.time() * 1000), server_version()
        self.relations[rel.id] = rel

    def remove(self, rel_id: int) -> None:
        del self.relations[rel_id]

    def dependents(self, rel_id: int) -> list[RelationCatalog]:
        return [r for r in self.relations.values() if rel_id in r.dependencies]

    def in_creation_order(self) -> list[RelationCatalog]:
        return [self.relations[k] for k in sorted(self.relations)]

    def to_bytes(self) -> bytes:
        return json.dumps({
            "relations": [r.to_json() for r in self.in_creation_order()],
            "next_id": self.next_id,
            **({"functions": self.functions} if self.functions else {}),
            **({"schemas": self.schemas} if self.schemas else {}),
            "access": self.access.to_json(),
            **({"compaction_configs": self.compaction_configs} if self.compaction_configs else {}),
            **({"system_params": self.system_params} if self.system_params else {}),
        }).encode()

    @staticmethod
    def from_bytes(data: bytes) -> "Catalog":
        if not data:
            return Catalog()
        d = json.loads(data)
        rels = {r["id"]: RelationCatalog.from_json(r) for r in d["relations"]}
        return Catalog(relations=rels, next_id=d["next_id"], functions=d.get("functions", {}),
                       schemas=d.get("schemas", []), access=AccessCatalog.from_json(d.get("access")),
                       compaction_configs=d.get("compaction_configs", {}),
                       system_params=d.get("system_params", {}))
