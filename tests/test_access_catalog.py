"""The access catalog (users, databases, grants, default privileges) and compaction-group
configurations: what they refuse, and that they survive the catalog's JSON round trip."""
from __future__ import annotations

import pytest

from rw_cli.errors import BindError, CatalogError
from rw_cli.meta import compaction_groups
from rw_cli.meta.access import AccessCatalog, PermissionDenied
from rw_cli.meta.catalog import Catalog


def test_reserved_users_cannot_be_altered_or_dropped():
    access = AccessCatalog()
    for name in ("root", "postgres", "rwadmin"):
        with pytest.raises(PermissionDenied):
            access.drop_user(name, [])
        with pytest.raises(PermissionDenied):
            access.rename_user(name, "x")


def test_a_user_owning_objects_cannot_be_dropped():
    access = AccessCatalog()
    access.add_user("u", {})
    access.add_database("d", "u", {})
    with pytest.raises(PermissionDenied, match="depend"):
        access.drop_user("u", [])
    access.databases["d"]["owner"] = "root"
    access.grant("u", "schema:public", "CREATE", False, "root")
    access.drop_user("u", [])
    assert "u" not in access.users and access.grants == []


def test_grant_option_and_revoke():
    access = AccessCatalog()
    access.add_user("u", {})
    access.grant("u", "relation:7", "SELECT", True, "root")
    assert access.has_privilege("u", "relation:7", "SELECT", "root", grant_option=True)
    access.revoke("u", "relation:7", "SELECT", grant_option_only=True)
    assert access.has_privilege("u", "relation:7", "SELECT", "root", grant_option=False)
    assert not access.has_privilege("u", "relation:7", "SELECT", "root", grant_option=True)
    access.revoke("u", "relation:7", "SELECT", grant_option_only=False)
    assert not access.has_privilege("u", "relation:7", "SELECT", "root", grant_option=False)
    assert access.has_privilege("u", "relation:7", "DELETE", "u", grant_option=True)  # the owner


def test_default_privileges_apply_to_new_objects_of_their_kind_and_schema():
    access = AccessCatalog()
    access.add_user("u", {})
    access.alter_default("s", "table", ["SELECT"], ["u"], grant=True, grant_option=False)
    access.apply_defaults("s", "table", "relation:1", "root")
    access.apply_defaults("other", "table", "relation:2", "root")
    access.apply_defaults("s", "materialized view", "relation:3", "root")
    assert [g["object"] for g in access.grants] == ["relation:1"]
    access.alter_default(None, "table", ["SELECT"], ["u"], grant=False, grant_option=False)
    assert access.default_privileges == []  # a revoke for every schema reaches each one


def test_catalog_round_trip_keeps_access_and_compaction_configs():
    catalog = Catalog()
    catalog.access.add_user("u", {"createdb": True})
    catalog.access.add_database("d", "u", {"resource_group": "g"})
    catalog.access.add_secret("s", "meta", "v", "u")
    catalog.compaction_configs["2"] = compaction_groups.default_config()
    catalog.system_params["license_key"] = ""
    back = Catalog.from_bytes(catalog.to_bytes())
    assert back.access.users["u"]["createdb"] and back.access.databases["d"]["resource_group"] == "g"
    assert back.access.object_owners["secret:s"] == "u"
    assert back.compaction_configs == catalog.compaction_configs and back.system_params == {"license_key": ""}
    assert Catalog.from_bytes(Catalog().to_bytes()).access.users.keys() == {"root", "postgres", "rwadmin"}


def test_compaction_config_validation():
    config = compaction_groups.default_config()
    compaction_groups.apply(config, "compression_algorithm", "6:lz4")
    assert config["compressionAlgorithm"][6] == "Lz4"
    compaction_groups.apply(config, "enable_emergency_picker", "off")
    assert config["enableEmergencyPicker"] is False
    compaction_groups.apply(config, "max_vnode_key_range_bytes", 1024)
    compaction_groups.apply(config, "max_vnode_key_range_bytes", None)
    assert "maxVnodeKeyRangeBytes" not in config
    for name, value, message in [("max_level", 0, "must be between 1"), ("nope", 1, "unknown"),
                                 ("split_weight_by_vnode", 1, "managed by the system"),
                                 ("compression_algorithm", "9:zstd", "level 0 to 6")]:
        with pytest.raises(BindError, match=message):
            compaction_groups.apply(config, name, value)
    with pytest.raises(CatalogError):
        AccessCatalog().add_secret("s", "vault", "v", "root")
