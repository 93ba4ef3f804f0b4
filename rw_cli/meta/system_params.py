"""System parameters (ALTER SYSTEM SET, SHOW PARAMETERS): settings of the whole data directory.

Stored with the catalog, so they persist. RisingWave's system parameters are listed with
their defaults; those that describe its distributed deployment (the object store, backups,
tracing) are recorded and shown only. ALTER SYSTEM SET of a session parameter sets the
default every session of the data directory starts from (rw_cli.common.session_config).
"""
from __future__ import annotations

from rw_cli.errors import NotSupported

# name -> (default, mutable)
PARAMS: dict[str, tuple[str, bool]] = {
    "barrier_interval_ms": ("1000", True),
    "checkpoint_frequency": ("1", True),
    "sstable_size_mb": ("256", False),
    "parallel_compact_size_mb": ("512", False),
    "block_size_kb": ("64", False),
    "bloom_false_positive": ("0.001", False),
    "state_store": ("hummock+fs", False),
    "data_directory": ("hummock_001", False),
    "backup_storage_url": ("memory", True),
    "backup_storage_directory": ("backup", True),
    "max_concurrent_creating_streaming_jobs": ("1", True),
    "pause_on_next_bootstrap": ("false", True),
    "enable_tracing": ("false", True),
    "use_new_object_prefix_strategy": ("true", False),
    "license_key": ("", True),
    "time_travel_retention_ms": ("600000", True),
    "adaptive_parallelism_strategy": ("Auto", True),
    "per_database_isolation": ("true", True),
    "enforce_secret": ("false", True),
}


def value(stored: dict[str, str], name: str) -> str:
    """A system parameter's value: as ALTER SYSTEM set it, else its default."""
    return stored.get(name, PARAMS[name][0])


def license_missing(stored: dict[str, str]) -> bool:
    """Whether ALTER SYSTEM SET license_key TO '' removed the license: RisingWave's premium
    features (resource groups) are then refused, as there."""
    return stored.get("license_key") == ""


def check_resource_group_license(stored: dict[str, str]) -> None:
    """Resource groups are a premium feature of RisingWave: refused once the license was
    removed, with RisingWave's message."""
    if license_missing(stored):
        raise NotSupported("feature ResourceGroup is not available based on your license",
                           hint="You may want to set a license key with `ALTER SYSTEM SET license_key = '...';` "
                                "command.")
