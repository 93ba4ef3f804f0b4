"""A struct type's name (rw_cli.common.types.struct_type_name) quotes the field names that
need it, and the catalog reads such a name back (rw_cli.meta.catalog.type_from_name)."""
import pytest

from rw_cli.common.types import BOOLEAN, INTEGER, VARCHAR, struct_type_name
from rw_cli.meta.catalog import type_from_name


@pytest.mark.parametrize("names, expected", [
    (["a", "b_1"], "struct<a integer, b_1 character varying>"),
    (["A", "b B"], 'struct<"A" integer, "b B" character varying>'),
    (['q"t', "x,y"], 'struct<"q""t" integer, "x,y" character varying>'),
])
def test_field_names_quoted_as_needed(names, expected):
    assert struct_type_name(names, [INTEGER, VARCHAR]) == expected


def test_catalog_reads_quoted_field_names_back():
    inner = type_from_name(struct_type_name(["X y"], [BOOLEAN]))
    name = struct_type_name(["A", 'q"t, <1>', "c"], [INTEGER, VARCHAR, inner])
    t = type_from_name(name)
    assert t.field_names == ("A", 'q"t, <1>', "c")
    assert [x.name for x in t.inner] == ["integer", "character varying", 'struct<"X y" boolean>']
    assert t.inner[2].field_names == ("X y",)
