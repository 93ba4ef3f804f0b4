"""rw's settings: defaults < TOML config file < `RW_*` environment variables < command line.

The file is `$RW_CONFIG`, else `$XDG_CONFIG_HOME/rw/config.toml` (`~/.config/rw/config.toml`);
`rw --config PATH` picks another and `rw --no-config` reads none. Every key is declared once,
in `KEYS`, with its section, environment variable, parser and help text; the template that
`rw config init` writes is generated from the same table.
"""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field, fields
from typing import Any, Callable

from rw_cli.errors import RwError

CONFIG_ENV = "RW_CONFIG"
FORMATS = ("table", "expanded", "csv", "tsv", "json", "jsonl", "markdown")


class ConfigError(RwError):
    kind = "config"


def _bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("1", "true", "on", "yes"):
        return True
    if text in ("0", "false", "off", "no"):
        return False
    raise ValueError(f"expected a boolean (true/false), got {value!r}")


def _str(value: Any) -> str:
    if isinstance(value, (dict, list)):
        raise ValueError(f"expected a string, got {value!r}")
    return str(value)


def _choice(*options: str) -> Callable[[Any], str]:
    def parse(value: Any) -> str:
        text = _bool_word(value) if isinstance(value, bool) else str(value).strip().lower()
        if text not in options:
            raise ValueError(f"expected one of {', '.join(options)}, got {value!r}")
        return text

    return parse


def _bool_word(value: bool) -> str:
    return "on" if value else "off"


def _pager(value: Any) -> str:
    """A command line, or "" for no pager (`pager = false` in the file, RW_PAGER= off)."""
    if isinstance(value, bool):
        return "" if not value else DEFAULT_PAGER
    text = str(value).strip()
    return "" if text.lower() in ("off", "false", "no", "0") else text


DEFAULT_PAGER = "less -SRXF"


@dataclass(frozen=True)
class Key:
    name: str  # the attribute of Config
    section: str  # the TOML table it lives in
    env: str  # the environment variable that overrides it
    parse: Callable[[Any], Any]
    help: str
    example: str  # the value written (commented out) in the template


KEYS: tuple[Key, ...] = (
    Key("data_dir", "database", "RW_DATA_DIR", _str, "data directory", '"./rw-data"'),
    Key("engine", "database", "RW_ENGINE", _choice("embedded", "spark"),
        "runtime for streaming jobs: embedded | spark", '"embedded"'),
    Key("format", "shell", "RW_FORMAT", _choice(*FORMATS),
        "output format: " + " | ".join(FORMATS), '"table"'),
    Key("expanded", "shell", "RW_EXPANDED", _choice("on", "off", "auto"),
        "expanded records (\\x): on | off | auto (when wider than the terminal)", '"off"'),
    Key("timing", "shell", "RW_TIMING", _bool, "print each statement's time (\\timing)", "false"),
    Key("null", "shell", "RW_NULL", _str, "how NULL is shown in table output (\\pset null)", '""'),
    Key("pager", "shell", "RW_PAGER", _pager,
        "pager for results taller than the terminal; false for none (default: $PAGER or "
        f"{DEFAULT_PAGER})", f'"{DEFAULT_PAGER}"'),
    Key("color", "shell", "RW_COLOR", _choice("auto", "always", "never"),
        "colour on terminals: auto | always | never (NO_COLOR=1 means never)", '"auto"'),
    Key("syntax_style", "shell", "RW_SYNTAX_STYLE", _str,
        "pygments style for highlighting the input", '"default"'),
    Key("history_file", "shell", "RW_HISTFILE", _str, "history file (created with mode 0600)",
        '"~/.rw_history"'),
    Key("vi", "shell", "RW_VI", _bool, "vi key bindings instead of emacs", "false"),
)
KEY_BY_NAME = {k.name: k for k in KEYS}


@dataclass
class Config:
    data_dir: str = "./rw-data"
    engine: str = "embedded"
    format: str = "table"
    expanded: str = "off"
    timing: bool = False
    null: str = ""
    pager: str | None = None  # None: $PAGER or DEFAULT_PAGER; "": none
    color: str = "auto"
    syntax_style: str = "default"
    history_file: str = "~/.rw_history"
    vi: bool = False
    path: str | None = None  # the file it was read from
    warnings: list[str] = field(default_factory=list)

    @property
    def pager_command(self) -> str:
        if self.pager is not None:
            return self.pager
        return os.environ.get("PAGER", DEFAULT_PAGER)

    @property
    def history_path(self) -> str:
        return os.path.expanduser(self.history_file)

    def use_color(self, stream) -> bool:
        """Colour on `stream`: never with NO_COLOR set (no-color.org), else per `color`."""
        if os.environ.get("NO_COLOR"):
            return False
        if self.color != "auto":
            return self.color == "always"
        return bool(getattr(stream, "isatty", lambda: False)())

    def values(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name in KEY_BY_NAME}


def default_path(env: dict | None = None) -> str:
    env = os.environ if env is None else env
    base = env.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return os.path.join(base, "rw", "config.toml")


def config_path(given: str | None = None) -> str:
    return given or os.environ.get(CONFIG_ENV) or default_path()


def _read_toml(path: str) -> dict:
    try:
        import tomllib
    except ImportError:  # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]
    try:
        with open(path, "rb") as f:
            return tomllib.load(f)
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"invalid config file {path}: {e}") from None
    except OSError as e:
        raise ConfigError(f"cannot read config file {path}: {e.strerror}") from None


def load(path: str | None = None, *, no_config: bool = False, env: dict | None = None) -> Config:
    """The settings from the file (unless `no_config`; a missing default file is fine, a
    missing `--config` file is an error) with environment overrides applied."""
    env = os.environ if env is None else env
    cfg = Config()
    if not no_config:
        explicit = path is not None or bool(env.get(CONFIG_ENV))
        file = path or env.get(CONFIG_ENV) or default_path(env)
        if explicit or os.path.exists(file):
            _apply_file(cfg, file, _read_toml(file))
            cfg.path = file
    for key in KEYS:
        if key.env in env:
            _set(cfg, key, env[key.env], f"environment variable {key.env}")
    return cfg


def _apply_file(cfg: Config, file: str, data: dict) -> None:
    for section, table in data.items():
        if not isinstance(table, dict):
            cfg.warnings.append(f"{file}: ignoring top-level key {section!r} (keys go in [database] or [shell])")
            continue
        for name, value in table.items():
            key = KEY_BY_NAME.get(name)
            if key is None or key.section != section:
                cfg.warnings.append(f"{file}: unknown key {section}.{name}")
                continue
            _set(cfg, key, value, f"{file}: {section}.{name}")


def _set(cfg: Config, key: Key, value: Any, where: str) -> None:
    try:
        setattr(cfg, key.name, key.parse(value))
    except ValueError as e:
        raise ConfigError(f"{where}: {e}") from None


def template() -> str:
    """The commented file `rw config init` writes: every key, commented out at its default."""
    lines = ["# rw configuration. Uncomment a line to change a setting.",
             "# Environment variables (shown after each key) override this file, and command-line",
             "# options override both. `rw --no-config` ignores this file.", ""]
    section = None
    for key in KEYS:
        if key.section != section:
            if section is not None:
                lines.append("")
            section = key.section
            lines.append(f"[{section}]")
        lines.append(f"# {key.help} (${key.env})")
        lines.append(f"# {key.name} = {key.example}")
    return "\n".join(lines) + "\n"


def write_template(path: str, force: bool = False) -> None:
    if os.path.exists(path) and not force:
        raise ConfigError(f"{path} already exists", hint="use --force to overwrite it")
    folder = os.path.dirname(path)
    if folder:
        os.makedirs(folder, exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(template())


def warn(cfg: Config, stream=None) -> None:
    for w in cfg.warnings:
        (stream or sys.stderr).write(f"WARNING:  {w}\n")
