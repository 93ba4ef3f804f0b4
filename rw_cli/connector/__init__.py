"""Connectors: where streams come from (sources) and where they go (sinks).

`connector_spec(tree)` reads a CREATE statement's `WITH (...)` options and its
`FORMAT ... ENCODE ...` clause into the dict stored in the catalog (`RelationCatalog.connector`);
`open_reader(spec, columns)` builds the source reader it names.
"""
from __future__ import annotations

from sqlglot import exp

from rw_cli.common.types import DataType
from rw_cli.errors import BindError, NotSupported

SOURCE_CONNECTORS = ("datagen", "nexmark", "posix_fs", "s3")
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


def connector_spec(tree: exp.Create) -> dict:
    """{"options", "format", "encode", "encode_options"}; empty when there is no connector."""
    props = tree.args.get("properties")
    if props is None:
        return {}
    spec = {"options": _props(props), "format": None, "encode": None, "encode_options": {}}
    for p in props.expressions:
        if isinstance(p, exp.FileFormatProperty):
            spec["format"] = _text(p.this).lower()
        elif isinstance(p, exp.EncodeProperty):
            spec["encode"] = _text(p.this).lower()
            spec["encode_options"] = _props(p.args.get("properties"))
    if "connector" not in spec["options"]:
        return {}
    spec["options"]["connector"] = spec["options"]["connector"].lower()
    return spec


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
    if name in ("posix_fs", "s3"):
        from rw_cli.connector.filesystem import FileReader

        return FileReader(name, options, columns, spec.get("encode"), spec.get("encode_options") or {})
    if name in SINK_CONNECTORS:
        raise BindError(f"{name} is a sink connector", hint="use it in CREATE SINK")
    raise NotSupported(f"connector '{name}'", hint="source connectors: " + ", ".join(SOURCE_CONNECTORS))
