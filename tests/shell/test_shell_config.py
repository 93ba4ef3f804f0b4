import pytest

from rw_cli import config
from rw_cli.config import ConfigError, load, template, write_template


def test_defaults_without_file(tmp_path):
    cfg = load(env={"XDG_CONFIG_HOME": str(tmp_path)})
    assert cfg.format == "table" and cfg.expanded == "off" and cfg.timing is False
    assert cfg.path is None and cfg.warnings == []


def test_file_then_env(tmp_path):
    f = tmp_path / "c.toml"
    f.write_text('[shell]\nformat = "csv"\ntiming = true\npager = false\nnonsense = 1\n'
                 '[database]\ndata_dir = "/d"\n')
    cfg = load(str(f), env={})
    assert (cfg.format, cfg.timing, cfg.pager, cfg.data_dir) == ("csv", True, "", "/d")
    assert cfg.warnings == [f"{f}: unknown key shell.nonsense"]
    cfg = load(str(f), env={"RW_FORMAT": "json", "RW_TIMING": "off", "RW_DATA_DIR": "/e"})
    assert (cfg.format, cfg.timing, cfg.data_dir) == ("json", False, "/e")
    assert load(str(f), no_config=True, env={}).format == "table"


def test_default_location_and_rw_config(tmp_path):
    (tmp_path / "rw").mkdir()
    (tmp_path / "rw" / "config.toml").write_text('[shell]\nexpanded = "auto"\n')
    assert load(env={"XDG_CONFIG_HOME": str(tmp_path)}).expanded == "auto"
    other = tmp_path / "o.toml"
    other.write_text('[shell]\nexpanded = "on"\n')
    assert load(env={"XDG_CONFIG_HOME": str(tmp_path), "RW_CONFIG": str(other)}).expanded == "on"


def test_errors(tmp_path):
    with pytest.raises(ConfigError, match="cannot read config file"):
        load(str(tmp_path / "missing.toml"), env={})
    bad = tmp_path / "bad.toml"
    bad.write_text("[shell\n")
    with pytest.raises(ConfigError, match="invalid config file"):
        load(str(bad), env={})
    bad.write_text('[shell]\nformat = "xml"\n')
    with pytest.raises(ConfigError, match="shell.format: expected one of table"):
        load(str(bad), env={})
    with pytest.raises(ConfigError, match="RW_TIMING: expected a boolean"):
        load(no_config=True, env={"RW_TIMING": "maybe"})


def test_template_round_trips(tmp_path):
    path = tmp_path / "sub" / "config.toml"
    write_template(str(path))
    assert path.read_text() == template()
    cfg = load(str(path), env={})  # all commented out: the defaults
    assert cfg.values() == config.Config().values() and cfg.warnings == []
    # uncommenting every line gives a valid file with the same defaults
    path.write_text("\n".join(line[2:] if " = " in line else line for line in template().splitlines()))
    cfg = load(str(path), env={})
    assert cfg.warnings == [] and cfg.format == "table" and cfg.pager == "less -SRXF"
    with pytest.raises(ConfigError, match="already exists"):
        write_template(str(path))
    write_template(str(path), force=True)


def test_color(monkeypatch):
    class Tty:
        def isatty(self):
            return True

    monkeypatch.delenv("NO_COLOR", raising=False)
    cfg = config.Config()
    assert cfg.use_color(Tty()) and not cfg.use_color(object())
    monkeypatch.setenv("NO_COLOR", "1")
    assert not cfg.use_color(Tty())
    monkeypatch.delenv("NO_COLOR")
    cfg.color = "never"
    assert not cfg.use_color(Tty())
