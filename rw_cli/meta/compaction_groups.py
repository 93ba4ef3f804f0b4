"""Compaction groups and their configurations (ALTER COMPACTION GROUP, rw_hummock_compaction_group_configs).

RisingWave's Hummock splits state into compaction groups, each compacted by its own
configuration: group 2 holds the state of streaming operators, group 3 materialized views.
rw's store is one LSM tree compacted by its own policy; it keeps both groups' configurations
as RisingWave does (their defaults, what ALTER COMPACTION GROUP sets, validated the same way)
in the catalog and shows them, so scripts that tune them run unchanged.
"""
from __future__ import annotations

from rw_cli.errors import BindError

U64_MAX = 18446744073709551615
GROUP_IDS = (2, 3)  # RisingWave's StateDefault and MaterializedView groups
_LEVELS = 7
DEFAULT_COMPRESSION = ["None", "None", "None", "Lz4", "Lz4", "Zstd", "Zstd"]

# name -> (default, kind, minimum); kind: int | bool | optional (None unless set)
PARAMS: dict[str, tuple] = {
    "max_bytes_for_level_base": (536870912, "int", 1),
    "max_level": (6, "int", 1),
    "max_bytes_for_level_multiplier": (5, "int", 1),
    "max_compaction_bytes": (2147483648, "int", 1),
    "sub_level_max_compaction_bytes": (134217728, "int", 1),
    "level0_tier_compact_file_number": (12, "int", 1),
    "target_file_size_base": (33554432, "int", 1),
    "compaction_filter_mask": (6, "int", 0),
    "max_sub_compaction": (4, "int", 1),
    "level0_stop_write_threshold_sub_level_number": (300, "int", 1),
    "level0_sub_level_compact_level_count": (3, "int", 1),
    "level0_overlapping_sub_level_compact_level_count": (12, "int", 1),
    "max_space_reclaim_bytes": (536870912, "int", 1),
    "level0_max_compact_file_number": (100, "int", 1),
    "tombstone_reclaim_ratio": (40, "int", 0),
    "enable_emergency_picker": (True, "bool", 0),
    "max_l0_compact_level_count": (42, "int", 1),
    "sst_allowed_trivial_move_min_size": (4194304, "int", 0),
    "disable_auto_group_scheduling": (False, "bool", 0),
    "max_overlapping_level_size": (268435456, "int", 1),
    "emergency_level0_sst_file_count": (2000, "int", 1),
    "emergency_level0_sub_level_partition": (256, "int", 1),
    "level0_stop_write_threshold_max_sst_count": (5000, "int", 1),
    "level0_stop_write_threshold_max_size": (10737418240, "int", 1),
    "sst_allowed_trivial_move_max_count": (64, "int", 1),
    "enable_optimize_l0_interval_selection": (False, "bool", 0),
    "max_kv_count_for_xor16": (262144, "int", 0),
    "max_vnode_key_range_bytes": (None, "optional", 1),
}
_SYSTEM_MANAGED = ("split_weight_by_vnode", "split_by_state_table", "member_table_ids")
_DEPRECATED = ("vnode_aligned_level_size_threshold", "level0_max_compact_file_number_deprecated")


def camel(name: str) -> str:
    """A parameter's name as the configuration's JSON spells it (`maxBytesForLevelBase`)."""
    head, *rest = name.split("_")
    return head + "".join(p[:1].upper() + p[1:] for p in rest)


def default_config() -> dict:
    config = {camel(k): v[0] for k, v in PARAMS.items() if v[0] is not None}
    config["compressionAlgorithm"] = list(DEFAULT_COMPRESSION)
    return config


def apply(config: dict, name: str, value) -> None:
    """Set one parameter of `config` (None: its default), validated as RisingWave does."""
    if name in _SYSTEM_MANAGED:
        raise BindError(f'compaction config "{name}" is managed by the system and cannot be altered via SQL')
    if name in _DEPRECATED:
        raise BindError(f'compaction config "{name}" is deprecated and cannot be altered via SQL')
    if name == "compression_algorithm":
        _compression(config, value)
        return
    spec = PARAMS.get(name)
    if spec is None:
        raise BindError(f'unknown compaction config parameter "{name}"')
    default, kind, minimum = spec
    key = camel(name)
    if value is None:
        if default is None:
            config.pop(key, None)
        else:
            config[key] = default
        return
    if kind == "bool":
        config[key] = _boolean(name, value)
        return
    number = _integer(name, value)
    top = U64_MAX - 1
    if not minimum <= number <= top:
        raise BindError(f"compaction config {name} must be between {minimum} and {top}, or DEFAULT")
    config[key] = number


def _integer(name: str, value) -> int:
    try:
        return int(str(value))
    except ValueError:
        raise BindError(f"compaction config {name} takes an integer, not {value!r}") from None


def _boolean(name: str, value) -> bool:
    text = str(value).lower()
    if text in ("true", "on", "1", "t", "yes"):
        return True
    if text in ("false", "off", "0", "f", "no"):
        return False
    raise BindError(f"compaction config {name} takes a boolean, not {value!r}")


def _compression(config: dict, value) -> None:
    """`'level:algorithm'` (levels 0 to 6; none, lz4 or zstd); DEFAULT: every level's default."""
    if value is None:
        config["compressionAlgorithm"] = list(DEFAULT_COMPRESSION)
        return
    level, sep, algorithm = str(value).partition(":")
    names = {"none": "None", "lz4": "Lz4", "zstd": "Zstd"}
    if not sep or not level.strip().isdigit() or int(level) >= _LEVELS or algorithm.strip().lower() not in names:
        raise BindError(f"compression_algorithm takes 'level:algorithm' (level 0 to {_LEVELS - 1}, "
                        f"algorithm none, lz4 or zstd), not {value!r}")
    levels = list(config.get("compressionAlgorithm") or DEFAULT_COMPRESSION)
    levels[int(level)] = names[algorithm.strip().lower()]
    config["compressionAlgorithm"] = levels
