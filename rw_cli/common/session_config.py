"""Session parameters: the one place that knows their names, defaults and values, as
RisingWave's session config does. SET validates and stores, SHOW / SHOW ALL /
current_setting / pg_settings read, and the engine reads the typed values it needs
(the time zone, implicit flush, parallelism, the barrier interval).

Parameters are the session's own: a new session starts from the defaults (as in RisingWave
and PostgreSQL, where only ALTER SYSTEM persists). A parameter RisingWave has but rw does not
use (`streaming_enable_delta_join`, `sink_decouple`, ...) is kept as given, so a script
written for RisingWave still runs; a name neither has is refused, as both refuse it.
"""
from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from rw_cli.common import parallelism
from rw_cli.errors import BindError


def _any(name: str, text: str) -> str:
    return text


def _boolean(name: str, text: str) -> str:
    if text.lower() not in ("true", "false", "on", "off"):
        raise BindError(f'invalid value for parameter "{name}": "{text}"')
    return text


@functools.cache
def _zones_by_folded_name() -> dict[str, str]:
    from zoneinfo import available_timezones

    return {name.lower(): name for name in available_timezones()}


@functools.cache
def canonical_zone(text: str) -> str | None:
    """The IANA name of zone `text`, matched without regard to case (RisingWave reads it with
    chrono-tz's `from_str_insensitive`, PostgreSQL also ignores case: `us/pacific` is
    `US/Pacific`); None when there is no such zone."""
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    if text.upper() in ("UTC", "Z", "LOCAL", "DEFAULT"):
        return "UTC"
    name = _zones_by_folded_name().get(text.lower(), text)
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, IsADirectoryError):
        return None
    return name


def _time_zone(name: str, text: str) -> str:
    if text.upper() in ("UTC", "Z", "LOCAL", "DEFAULT"):
        return "UTC"
    if canonical_zone(text) is None:
        # RisingWave's wording (PostgreSQL: invalid value for parameter "TimeZone")
        raise BindError(f'Invalid value "{text}" for parameter "timezone"') from None
    return text  # kept as written: SHOW timezone shows it so, as RisingWave's does


def _isolation(name: str, text: str) -> str:
    # RisingWave keeps its one level (read committed) and takes no SET of it
    raise BindError(f"Invalid value `{text}` for `{name}`",
                    hint="Feature is not yet implemented: isolation level")


@dataclass(frozen=True)
class Param:
    name: str
    default: str
    check: Callable[[str, str], str] = _any  # (name, text) -> the value stored; raises BindError
    description: str = ""


PARAMS: dict[str, Param] = {p.name: p for p in (
    Param("rw_implicit_flush", "false", _boolean, "a barrier after every DML statement (read your writes)"),
    Param("timezone", "UTC", _time_zone, "the time zone of timestamptz values"),
    Param("application_name", ""),
    Param("client_encoding", "UTF8"),
    Param("client_min_messages", "notice"),
    Param("datestyle", "ISO, MDY"),
    Param("extra_float_digits", "1"),
    Param("intervalstyle", "postgres"),
    Param("integer_datetimes", "on"),
    Param("search_path", '"$user", public'),
    Param("server_encoding", "UTF8"),
    Param("server_version", "13.14.0"),
    Param("server_version_num", "130014"),
    Param("standard_conforming_strings", "on"),
    Param("streaming_parallelism", "default", description="actors per partitioned operator of a new job"),
    Param("enable_two_phase_agg", "true"),
    Param("force_two_phase_agg", "false"),
    Param("query_mode", "auto"),
    Param("batch_parallelism", "0"),
    Param("transaction_isolation", "read committed", _isolation),
    Param("statement_timeout", "0"),
    Param("barrier_interval_ms", "1000", description="how often running pipelines checkpoint"),
    Param("batch_expr_strict_mode", "true", _boolean,
          "a SELECT fails on a value an expression cannot compute (false: that value is NULL)"),
    Param("rw_streaming_allow_cross_join", "false", _boolean,
          "maintain streaming cross products (joins without an equality), which RisingWave refuses"),
    Param("allow_drop_cascade", "true", _boolean, "DROP ... CASCADE may drop dependent objects (false: refused)"),
)}
ALIASES = {"implicit_flush": "rw_implicit_flush",  # RisingWave's other name for it
           "transactionisolationlevel": "transaction_isolation"}  # SHOW TRANSACTION ISOLATION LEVEL

# RisingWave's other session parameters (src/common/src/session_config/mod.rs) and their
# `rw_` aliases, and PostgreSQL's that clients and drivers set: accepted and kept as text
OTHER_PARAMETERS = frozenset("""
    create_compaction_group_for_mv batch_enable_lookup_join rw_batch_enable_lookup_join
    batch_enable_sort_agg rw_batch_enable_sort_agg batch_enable_distributed_dml
    max_split_range_gap visibility_mode query_epoch streaming_parallelism_for_backfill
    streaming_parallelism_strategy streaming_parallelism_strategy_for_table streaming_parallelism_for_table
    streaming_parallelism_strategy_for_sink streaming_parallelism_for_sink
    streaming_parallelism_strategy_for_index streaming_parallelism_for_index
    streaming_parallelism_strategy_for_source streaming_parallelism_for_source
    streaming_parallelism_strategy_for_materialized_view streaming_parallelism_for_materialized_view
    streaming_enable_delta_join rw_streaming_enable_delta_join streaming_enable_bushy_join
    rw_streaming_enable_bushy_join streaming_force_filter_inside_join rw_streaming_force_filter_inside_join
    streaming_use_arrangement_backfill streaming_use_snapshot_backfill streaming_allow_jsonb_in_stream_key
    rw_streaming_allow_jsonb_in_stream_key streaming_unsafe_allow_unmaterialized_impure_expr
    streaming_separate_consecutive_join streaming_separate_sink streaming_join_encoding
    streaming_join_encoding_optimized_for streaming_enable_materialized_expressions allow_drop_cascade
    enable_join_ordering rw_enable_join_ordering rw_enable_two_phase_agg rw_force_two_phase_agg
    enable_share_plan rw_enable_share_plan force_split_distinct_agg rw_force_split_distinct_agg
    sink_decouple synchronize_seqscans idle_in_transaction_session_timeout lock_timeout
    cdc_source_wait_streaming_start_timeout row_security backfill_rate_limit source_rate_limit
    dml_rate_limit sink_rate_limit streaming_over_window_cache_policy rw_streaming_over_window_cache_policy
    background_ddl streaming_use_shared_source bytea_output bypass_cluster_limits streaming_max_parallelism
    iceberg_engine_connection streaming_enable_unaligned_join streaming_sync_log_store_pause_duration_ms
    streaming_sync_log_store_buffer_size disable_purify_definition batch_hnsw_ef_search
    enable_index_selection enable_locality_backfill locality_backfill_mode slow_ddl_notification_secs
    unsafe_enable_storage_retention_for_non_append_only_tables enable_datafusion_engine upsert_dml
    dml_wait_persistence
    default_transaction_isolation default_transaction_read_only transaction_read_only
    idle_session_timeout work_mem maintenance_work_mem jit geqo enable_seqscan enable_indexscan
    enable_hashjoin enable_mergejoin enable_nestloop enable_partitionwise_join random_page_cost
    effective_cache_size log_statement log_min_duration_statement default_text_search_config
    xmloption escape_string_warning lc_messages lc_monetary lc_numeric lc_time role session_authorization
    default_table_access_method
""".split())
# listed by SHOW ALL and pg_settings (barrier_interval_ms is a system parameter in RisingWave)
LISTED = tuple(n for n in PARAMS if n not in ("integer_datetimes", "barrier_interval_ms"))
DEFAULT_BARRIER_INTERVAL_MS = 1000


# RisingWave's defaults of parameters rw accepts but does not use (SHOW answers them)
OTHER_DEFAULTS = {
    "streaming_enable_delta_join": "false", "streaming_enable_bushy_join": "true",
    "streaming_max_parallelism": "256", "background_ddl": "false", "sink_decouple": "default",
    "enable_join_ordering": "true", "enable_share_plan": "true", "force_split_distinct_agg": "false",
    "streaming_use_arrangement_backfill": "true", "streaming_use_snapshot_backfill": "false",
    "streaming_force_filter_inside_join": "false", "streaming_use_shared_source": "true",
    "bytea_output": "hex", "bypass_cluster_limits": "false", "enable_index_selection": "true",
    "default_table_access_method": "heap",  # what SQLAlchemy's table reflection compares pg_am with
    "jit": "off",  # no JIT compilation (asyncpg reads and sets it around its type introspection)
    **{f"streaming_parallelism_for_{kind}": "default"
       for kind in ("table", "source", "sink", "index", "materialized_view", "backfill")},
    # rate limits new jobs take (rw_cli.handler.rate_limit): "default" is no limit
    **{f"{kind}_rate_limit": "default" for kind in ("source", "backfill", "sink", "dml")},
}


def canonical(name: str) -> str:
    """A parameter's own name: RisingWave's `rw_` aliases name the parameter without the
    prefix (`rw_streaming_enable_delta_join`), implicit_flush is rw_implicit_flush."""
    name = name.lower()
    name = ALIASES.get(name, name)
    if name.startswith("rw_") and name not in PARAMS and (name[3:] in PARAMS or name[3:] in OTHER_PARAMETERS):
        return name[3:]
    return name


def default(name: str) -> str | None:
    name = canonical(name)
    p = PARAMS.get(name)
    return OTHER_DEFAULTS.get(name) if p is None else p.default


@functools.lru_cache(maxsize=1)
def server_version() -> str:
    """version()'s text: PostgreSQL's version, then RisingWave's and rw's (looked up once:
    every CREATE records it)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        ours = version("rw_cli")
    except PackageNotFoundError:
        ours = "dev"
    return f"PostgreSQL {default('server_version')}-RisingWave-rw_cli-{ours}"


def describe(name: str) -> str:
    """A parameter's one-line description ('' when it has none)."""
    p = PARAMS.get(canonical(name))
    return p.description if p is not None else ""


def is_parameter(name: str) -> bool:
    """Whether `name` is a session parameter (rw's or one RisingWave has)."""
    name = canonical(name)
    return name in PARAMS or name in OTHER_PARAMETERS


class SessionConfig:
    """One session's parameter values over the defaults."""

    def __init__(self, system: Callable[[], dict[str, str]] | None = None) -> None:
        self._values: dict[str, str] = {}
        # the defaults ALTER SYSTEM SET gave every session of the data directory, over rw's own
        # (read when asked: the catalog that holds them is reloaded)
        self._system = system or dict

    @property
    def system(self) -> dict[str, str]:
        return self._system()

    def set(self, name: str, text: str) -> None:
        self._values[canonical(name)] = self.check(name, text)

    @contextlib.contextmanager
    def only_for(self, items: list[tuple[str, str]]) -> Iterator[None]:
        """`SELECT ... SETTINGS a = x, b = y`: these values while one statement runs, then the
        session's own again (whatever the statement did)."""
        saved = dict(self._values)
        try:
            for name, text in items:
                self.set(name, text)
            yield
        finally:
            self._values = saved

    def fingerprint(self) -> tuple:
        """The values this session SET, hashable: what was derived from the parameters is
        reused under the same fingerprint (their defaults are the catalog's: keyed on it)."""
        return tuple(sorted(self._values.items()))

    def reset(self, name: str) -> None:
        """SET name TO DEFAULT: back to the default value."""
        name = canonical(name)
        if name not in PARAMS and name not in OTHER_PARAMETERS:
            raise BindError(f'unrecognized configuration parameter "{name}"')
        self._values.pop(name, None)

    def reset_all(self) -> None:
        """RESET ALL: every parameter SET in this session back to its default, except who the
        session acts as (PostgreSQL's RESET ALL leaves session_authorization and role too)."""
        self._values = {k: v for k, v in self._values.items() if k in ("session_authorization", "role")}

    def get(self, name: str, fallback: str | None = None) -> str | None:
        """The value SET in this session, else the default, else `fallback`."""
        name = canonical(name)
        if name in self._values:
            return self._values[name]
        if name in self.system:
            return self.system[name]
        value = default(name)
        return value if value is not None else fallback

    def known(self, name: str) -> bool:
        name = canonical(name)
        return name in self._values or name in self.system or name in PARAMS or name in OTHER_DEFAULTS

    def check(self, name: str, text: str) -> str:
        """The value SET would store for `name` (refused as SET refuses it)."""
        name = canonical(name)
        param = PARAMS.get(name)
        if param is None and name not in OTHER_PARAMETERS:
            raise BindError(f'unrecognized configuration parameter "{name}"')
        if name in parallelism.FOR_KIND.values():
            text = parallelism.check(name, text)
        return param.check(name, text) if param is not None else text

    def show(self, name: str) -> str:
        name = canonical(name)
        if name == "enable_two_phase_agg" and self.get("rw_force_two_phase_agg", "false").lower() in ("true", "on"):
            return "true"  # forcing two-phase aggregation enables it
        return self.get(name, "")

    def items(self) -> list[tuple[str, str]]:
        """Every listed parameter and every one SET in this session, by name."""
        merged = {n: PARAMS[n].default for n in LISTED}
        merged.update({k: v for k, v in self.system.items() if k in LISTED})
        merged.update(self._values)
        return sorted(merged.items())

    # -- typed values the engine reads --------------------------------------------------------
    @property
    def implicit_flush(self) -> bool:
        return self.get("rw_implicit_flush").lower() in ("true", "on", "1")

    @property
    def batch_strict(self) -> bool:
        return self.get("batch_expr_strict_mode").lower() in ("true", "on", "1")

    @property
    def allow_drop_cascade(self) -> bool:
        return self.get("allow_drop_cascade").lower() in ("true", "on", "1")

    @property
    def allow_cross_join(self) -> bool:
        return self.get("rw_streaming_allow_cross_join").lower() in ("true", "on", "1")

    @property
    def timezone(self) -> str:
        """The session's zone by its IANA name (SET may write it in any case)."""
        text = self.get("timezone")
        return canonical_zone(text) or text

    @property
    def barrier_interval_ms(self) -> int:
        try:
            return max(1, int(str(self.get("barrier_interval_ms")).strip("'\"")))
        except ValueError:
            return DEFAULT_BARRIER_INTERVAL_MS

    def job_parallelism(self, kind: str) -> str:
        """The parallelism a new streaming job of catalog `kind` is configured with
        (`adaptive`, `bounded(N)`, `ratio(x)` or a fixed `N`), as the catalog records it."""
        config = parallelism.resolve(kind, lambda n: self._values.get(n, self.system.get(n)))
        parallelism.check_max(config, self.max_parallelism)
        return config

    @property
    def max_parallelism(self) -> int:
        """`streaming_max_parallelism`: the vnode count of a new job (1 to 32768)."""
        text = str(self.get("streaming_max_parallelism", "")).strip("'\"").lower()
        if text in ("", "0", "default"):
            return parallelism.DEFAULT_MAX_PARALLELISM
        try:
            n = int(text)
        except ValueError:
            raise BindError(f'invalid value for parameter "streaming_max_parallelism": "{text}"') from None
        if not 1 <= n <= 32768:
            raise BindError("streaming_max_parallelism must be between 1 and 32768")
        return n

    def streaming_parallelism(self) -> int | None:
        """`SET STREAMING_PARALLELISM = N`; None for the runtime's default (0, default,
        adaptive, or unset without RW_STREAMING_PARALLELISM in the environment)."""
        name = "streaming_parallelism"
        value = self._values.get(name, self.system.get(name, os.environ.get("RW_STREAMING_PARALLELISM", "0")))
        value = str(value).strip("'\"").lower()
        if value in ("", "0", "default", "adaptive") or value.startswith(("bounded(", "ratio(")):
            return None  # adaptive: the runtime's default
        try:
            n = int(value)
        except ValueError:
            raise BindError(f'invalid value for parameter "{name}": "{value}"') from None
        if not 1 <= n <= 256:
            raise BindError("streaming_parallelism must be between 1 and 256")
        return n
