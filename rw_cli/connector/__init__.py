"""Connectors: where streams come from (sources) and where they go (sinks).

`connector_spec(tree)` reads a CREATE statement's `WITH (...)` options and its
`FORMAT ... ENCODE ...` clause into the dict stored in the catalog (`RelationCatalog.connector`);
`open_reader(spec, columns)` builds the source reader it names.
"""
from __future__ import annotations

from sqlglot import exp

from rw_cli.common.types import DataType
from rw_cli.errors import BindError, NotSupported

SOURCE_CONNECTORS = ("datagen", "kafka", "nexmark", "posix_fs", "s3")
SINK_CONNECTORS = ("blackhole", "file", "fs")


def _text(e: exp.Expression) -> str:
    if isinstance(e, exp.Literal):
        return str(e.this)
    if isinstance(e, (exp.Identifier, exp.Var)):
        return e.name
    if isinstance(e, exp.Boolean):
        return "true" if e.this else "false"
    if isinstance(e, exp.Neg):
        return "-" + _text(e.this)
    return e.sql(dialect="postgres")


def _key(e: exp.Expression) -> str:
    if isinstance(e, exp.Dot):
        return f"{_key(e.this)}.{_key(e.expression)}"
    if isinstance(e, exp.Column):
        return ".".join(p.name for p in e.parts)
    return _text(e).strip('"').lower()


def _props(props: exp.Properties | None) -> dict[str, str]:
    out: dict[str, str] = {}
    for p in (props.expressions if props is not None else []):
        if isinstance(p, exp.Property) and p.args.get("value") is not None:
            out[_key(p.this)] = _text(p.args["value"])
    return out


def connector_spec(tree: exp.Create, default: str | None = None) -> dict:
    """{"options", "format", "encode", "encode_options"}; empty when there is no connector
    (`default`: the connector when the options name none, as a sink INTO a table has)."""
    props = tree.args.get("properties")
    if props is None and default is None:
        return {}
    spec = {"options": _props(props), "format": None, "encode": None, "encode_options": {}}
    if default is not None:
        spec["options"].setdefault("connector", default)
    if props is None:
        return spec
    for p in props.expressions:
        if isinstance(p, exp.FileFormatProperty):
            spec["format"] = _text(p.this).lower()
        elif isinstance(p, exp.EncodeProperty):
            spec["encode"] = _text(p.this).lower()
            spec["encode_options"] = _props(p.args.get("properties"))
    if "connector" not in spec["options"]:
        return {}
    spec["options"]["connector"] = spec["options"]["connector"].lower()
    check_format(spec)
    if tree.args.get("include"):
        spec["include"] = include_columns(spec, tree.args["include"])
    return spec


# the FORMAT ... ENCODE ... pairs a generating connector accepts (RisingWave's table of them)
_FORMATS = {"datagen": {"plain": ("json",), "native": ("native",)},
            "nexmark": {"plain": ("json",), "native": ("native",)}}


def _variant(word: str) -> str:
    """A format or encoding as RisingWave names it in errors (`debezium_mongo` -> DebeziumMongo)."""
    return "".join(p.capitalize() for p in word.split("_"))


def check_format(spec: dict) -> None:
    """Refuse a FORMAT / ENCODE the connector cannot produce, in RisingWave's words."""
    name = spec["options"]["connector"]
    allowed = _FORMATS.get(name)
    if allowed is None or not spec.get("format"):
        return
    fmt, enc = spec["format"], (spec.get("encode") or "")
    if fmt not in allowed:
        raise BindError(f"connector {name} does not support format {_variant(fmt)}")
    if enc and enc not in allowed[fmt]:
        raise BindError(f"connector {name} does not support format {_variant(fmt)} with encode {_variant(enc)}")


def include_columns(spec: dict, clauses: list[list[str]]) -> list[list[str]]:
    """INCLUDE clauses as [[kind, column name], ...] (RisingWave's default names), for the
    connectors whose messages carry such metadata."""
    if spec["options"]["connector"] != "kafka":
        raise NotSupported(f"INCLUDE with the {spec['options']['connector']} connector", hint="only kafka has it")
    from rw_cli.connector.kafka import INCLUDE_COLUMNS

    out = []
    for kind, alias in clauses:
        name = alias or INCLUDE_COLUMNS[kind][0]
        if any(k == kind or n == name for k, n in out):
            raise BindError(f"INCLUDE {kind} specified more than once" if any(k == kind for k, _ in out)
                            else f'column "{name}" specified more than once')
        out.append([kind, name])
    return out


def include_types(spec: dict) -> list[tuple[str, DataType]]:
    """The columns INCLUDE adds, with their types."""
    from rw_cli.connector.kafka import INCLUDE_COLUMNS

    return [(name, DataType.from_sql(INCLUDE_COLUMNS[kind][1])) for kind, name in spec.get("include") or []]


def default_columns(spec: dict) -> list[tuple[str, DataType]] | None:
    """The columns of a source declared without a column list, where the connector knows them."""
    if spec["options"]["connector"] == "nexmark":
        from rw_cli.connector.nexmark import NexmarkReader

        return NexmarkReader.default_columns(spec["options"])
    return None


def open_reader(spec: dict, columns: list[tuple[str, DataType]]):
    options = spec["options"]
    name = options["connector"]
    if name == "nexmark":
        from rw_cli.connector.nexmark import NexmarkReader

        return NexmarkReader(options, columns)
    if name == "datagen":
        from rw_cli.connector.datagen import DatagenReader

        return DatagenReader(options, columns)
    if name == "kafka":
        from rw_cli.connector.kafka import KafkaReader

        return KafkaReader(options, columns, spec.get("encode"), spec.get("encode_options") or {},
                           spec.get("include"), spec.get("format"), spec.get("key_columns"))
    if name in ("posix_fs", "s3"):
        from rw_cli.connector.filesystem import FileReader

        return FileReader(name, options, columns, spec.get("encode"), spec.get("encode_options") or {})
    if name in SINK_CONNECTORS:
        raise BindError(f"{name} is a sink connector", hint="use it in CREATE SINK")
    raise NotSupported(f"connector '{name}'", hint="source connectors: " + ", ".join(SOURCE_CONNECTORS))
