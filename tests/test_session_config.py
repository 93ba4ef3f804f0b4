"""Session parameters: one typed home for defaults, SET, SHOW and the values the engine reads."""
from __future__ import annotations

import pytest

from rw_cli.common.session_config import SessionConfig, default
from rw_cli.errors import BindError


def test_defaults_then_set_values():
    c = SessionConfig()
    assert c.get("timezone") == "UTC" and c.timezone == "UTC"
    assert not c.implicit_flush
    c.set("IMPLICIT_FLUSH", "on")  # RisingWave's other name, any case
    assert c.implicit_flush and c.get("rw_implicit_flush") == "on"
    c.set("timezone", "Europe/Paris")
    assert c.timezone == "Europe/Paris"


def test_set_validates_known_parameters_and_refuses_unknown_ones():
    """A RisingWave parameter rw does not use is kept; a name no parameter has is refused
    as PostgreSQL and RisingWave refuse it (issue 20, item 10)."""
    c = SessionConfig()
    with pytest.raises(BindError, match='invalid value for parameter "rw_implicit_flush"'):
        c.set("rw_implicit_flush", "maybe")
    with pytest.raises(BindError, match="Invalid value .* for parameter \"timezone\""):  # RisingWave's wording
        c.set("timezone", "Mars/Olympus")
    c.set("streaming_enable_delta_join", "true")
    assert c.known("streaming_enable_delta_join") and c.show("streaming_enable_delta_join") == "true"
    with pytest.raises(BindError, match='unrecognized configuration parameter "nothing_like_it"'):
        c.set("nothing_like_it", "7")
    assert not c.known("nothing_like_it")


def test_streaming_parallelism_and_barrier_interval(monkeypatch):
    monkeypatch.delenv("RW_STREAMING_PARALLELISM", raising=False)
    c = SessionConfig()
    assert c.streaming_parallelism() is None and c.barrier_interval_ms == 1000
    c.set("streaming_parallelism", "4")
    c.set("barrier_interval_ms", "250")
    assert c.streaming_parallelism() == 4 and c.barrier_interval_ms == 250
    c.set("streaming_parallelism", "adaptive")
    assert c.streaming_parallelism() is None
    c.set("streaming_parallelism", "300")
    with pytest.raises(BindError, match="between 1 and 256"):
        c.streaming_parallelism()
    monkeypatch.setenv("RW_STREAMING_PARALLELISM", "3")
    assert SessionConfig().streaming_parallelism() == 3


def test_show_all_lists_defaults_and_what_was_set():
    c = SessionConfig()
    c.set("application_name", "psql")
    items = dict(c.items())
    assert items["application_name"] == "psql" and items["server_version_num"] == "130014"
    assert "barrier_interval_ms" not in items  # a system parameter, listed once SET
    assert default("server_version") == "13.14.0" and default("no_such") is None


def test_forced_two_phase_agg_shows_enabled():
    c = SessionConfig()
    c.set("enable_two_phase_agg", "false")
    c.set("rw_force_two_phase_agg", "true")
    assert c.show("enable_two_phase_agg") == "true"


def test_a_session_sets_shows_and_forgets_on_reopen(tmp_path):
    import rw_cli

    with rw_cli.connect(str(tmp_path)) as s:
        s.execute("SET streaming_parallelism = 2")
        assert s.execute("SHOW streaming_parallelism").fetchall() == [("2",)]
        assert ("streaming_parallelism", "2") in [(r[0], r[1]) for r in s.execute("SHOW ALL").fetchall()]
    with rw_cli.connect(str(tmp_path)) as s:
        assert s.execute("SHOW streaming_parallelism").fetchall() == [("default",)]


def test_job_parallelism_per_kind_over_global():
    c = SessionConfig()
    assert c.job_parallelism("table") == "bounded(4)" and c.job_parallelism("index") == "bounded(64)"
    c.set("streaming_parallelism", "8")
    assert c.job_parallelism("materialized view") == "8"
    c.set("streaming_parallelism_for_materialized_view", "'RATIO(0.5)'")
    assert c.job_parallelism("materialized view") == "ratio(0.5)" and c.job_parallelism("sink") == "8"
    c.set("streaming_parallelism", "bounded(32)")
    assert c.streaming_parallelism() is None and c.job_parallelism("table") == "bounded(32)"
    with pytest.raises(BindError, match="invalid value"):
        c.set("streaming_parallelism_for_sink", "ratio(2)")
