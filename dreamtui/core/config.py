"""Configuration shared by every command: flags > ``DREAMTUI_*`` environment > TOML file > defaults."""

from __future__ import annotations

import math
import os
import tomllib
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

import platformdirs

from dreamtui.core.errors import ConfigError
from dreamtui.core.files import NotRegularFile, open_regular

APP_NAME = "dreamtui"
DEFAULT_MODEL = "claude-sonnet-5-5"
EXTRACTORS = ("auto", "heuristic", "anthropic", "command")
DEDUP_JUDGES = ("auto", "off")
"""``dedup_judge``: ``auto`` asks the model whether a kept lesson repeats one in memory when the
anthropic extractor is in use (never for heuristic/command); ``off`` keeps dedup lexical only."""


KEY_ACTIONS: dict[str, tuple[str, str]] = {
    **{f"screen.{mode}": ("app", key) for key, mode in (
        ("1", "queue"), ("2", "sessions"), ("3", "cycles"), ("4", "briefings"), ("5", "stats"), ("6", "memory"),
        ("7", "promotion"))},
    "dream": ("app", "d"), "quit": ("app", "q"), "help": ("app", "question_mark,f1"),
    "accept": ("queue", "a"), "reject": ("queue", "r"), "edit": ("queue", "e"), "skip": ("queue", "s"),
    "undo": ("queue", "u"), "down": ("queue", "j"), "up": ("queue", "k"), "filter": ("queue", "slash"),
    "sort": ("queue", "o"), "clear_filter": ("queue", "escape"), "detail_down": ("queue", "ctrl+d"),
    "detail_up": ("queue", "ctrl+u"), "mine": ("queue", "m"), "unfold": ("queue", "z"),
    "briefings.mark": ("briefings", "m"), "briefings.diff": ("briefings", "f"), "briefings.view": ("briefings", "v"),
    "briefings.accept": ("briefings", "a"), "briefings.reject": ("briefings", "r"),
    "memory.revert": ("memory", "x"),
    "promotion.approve": ("promotion", "A"), "promotion.revoke": ("promotion", "R"),
}
"""Every app action a ``[keys]`` table may remap: binding id -> (where it is active, default key).
``app`` actions are active on every screen, the others on their own screen (the app's bindings carry
the same ids and keys; a test keeps the two in step)."""


def default_transcripts() -> Path:
    """Claude Code's transcript folder."""
    return Path.home() / ".claude" / "projects"


def default_memory() -> Path:
    """The memory repository dreamtui writes to."""
    return Path.home() / ".claude" / "memory"


def default_state() -> Path:
    """The user state directory (ledger, lock)."""
    return Path(platformdirs.user_state_dir(APP_NAME))


def default_config_file() -> Path:
    """The TOML config file in the user config directory."""
    return Path(platformdirs.user_config_dir(APP_NAME)) / "config.toml"


@dataclass(frozen=True)
class Config:
    """Everything a command needs to know about where things live and how to run."""

    transcripts: Path = field(default_factory=default_transcripts)
    memory: Path = field(default_factory=default_memory)
    state: Path = field(default_factory=default_state)
    config_file: Path | None = None
    extractor: str = "auto"
    model: str = DEFAULT_MODEL
    command: tuple[str, ...] = ()
    command_timeout: float = 120.0
    concurrency: int = 4
    quiet_minutes: float = 5.0
    min_person_chars: int = 80
    api_timeout: float = 120.0
    max_retries: int = 3
    max_digest_chars: int = 120_000
    batch: bool = False
    poll: bool = False
    rescan_seconds: float = 60.0
    schedule: str | None = None
    dedup_judge: str = "auto"
    keys: dict[str, str] = field(default_factory=dict)
    ui: dict[str, str] = field(default_factory=dict)
    """Settings the app saves when the person changes them (``[ui]``: theme, sort); see core.settings."""

    @property
    def ledger_path(self) -> Path:
        """The SQLite ledger file."""
        return self.state / "ledger.sqlite3"

    @property
    def lock_path(self) -> Path:
        """The dream-cycle lock file."""
        return self.state / "dream.lock"

    def resolved_extractor(self) -> str:
        """``auto`` becomes ``anthropic`` when ``ANTHROPIC_API_KEY`` is set, else ``heuristic``."""
        if self.extractor != "auto":
            return self.extractor
        return "anthropic" if os.environ.get("ANTHROPIC_API_KEY") else "heuristic"


_ENV = {
    "transcripts": "DREAMTUI_TRANSCRIPTS",
    "memory": "DREAMTUI_MEMORY",
    "state": "DREAMTUI_STATE",
    "extractor": "DREAMTUI_EXTRACTOR",
    "model": "DREAMTUI_MODEL",
    "dedup_judge": "DREAMTUI_DEDUP_JUDGE",
}
_PATHS = {"transcripts", "memory", "state", "config_file"}


def _coerce(name: str, value: Any) -> Any:
    """Turn a TOML/env/flag value into the type of the Config field ``name``."""
    if value is None:
        return None
    if name in _PATHS:
        return Path(os.path.expanduser(str(value)))
    if name == "command":
        if isinstance(value, str):
            import shlex

            return tuple(shlex.split(value))
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            return tuple(value)
        raise ConfigError("config 'command' must be a string or a list of strings")
    if name in {"concurrency", "min_person_chars", "max_retries", "max_digest_chars"}:
        try:
            if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
                raise ValueError(value)
            number = int(value)
        except (TypeError, ValueError, OverflowError) as exc:
            raise ConfigError(f"config {name!r} must be a whole number, not {value!r}") from exc
        if number < (0 if name == "max_retries" else 1):
            raise ConfigError(f"config {name!r} must be positive, not {number}")
        return number
    if name in {"quiet_minutes", "api_timeout", "command_timeout", "rescan_seconds"}:
        try:
            if isinstance(value, bool):
                raise ValueError(value)
            real = float(value)
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"config {name!r} must be a number, not {value!r}") from exc
        if not math.isfinite(real) or real < 0 or (real == 0 and name != "quiet_minutes"):
            least = "0 or more" if name == "quiet_minutes" else "above 0"
            raise ConfigError(f"config {name!r} must be a finite number {least}, not {value!r}")
        return real
    if name in {"model", "schedule"} and not isinstance(value, str):
        raise ConfigError(f"config {name!r} must be a string, not {value!r}")
    if name in {"batch", "poll"}:
        if isinstance(value, bool):
            return value
        return str(value).lower() in {"1", "true", "yes", "on"}
    if name == "keys":
        if not isinstance(value, dict):
            raise ConfigError("config [keys] must be a table of action = \"key\"")
        return check_keys({str(k): v for k, v in value.items()})
    if name == "ui":
        from dreamtui.core.settings import check_ui

        return check_ui(value)
    if name == "dedup_judge":
        choice = value.strip().lower() if isinstance(value, str) else None
        if choice not in DEDUP_JUDGES:
            raise ConfigError(f"config 'dedup_judge' must be one of {', '.join(DEDUP_JUDGES)}, not {value!r}")
        return choice
    if name == "extractor" and value not in EXTRACTORS:
        raise ConfigError(f"unknown extractor {value!r}: choose one of {', '.join(EXTRACTORS)}")
    return value


def _keys_of(value: str) -> list[str]:
    return [k.strip() for k in value.split(",") if k.strip()]


def check_keys(keys: dict[str, Any]) -> dict[str, str]:
    """A ``[keys]`` table checked: every action known, every key a non-empty string, and no key given
    to two actions that are active at the same time (an ``app`` action and a screen's, or two of one
    screen's), counting the default keys of the actions not remapped. Raises :class:`ConfigError`."""
    unknown = sorted(set(keys) - set(KEY_ACTIONS))
    if unknown:
        raise ConfigError(f"config [keys]: unknown action(s) {', '.join(map(repr, unknown))}; "
                          f"the actions are {', '.join(KEY_ACTIONS)}")
    for action, key in keys.items():
        if not isinstance(key, str) or not _keys_of(key):
            raise ConfigError(f"config [keys]: {action} must be a key name such as \"y\", not {key!r}")
    effective = {action: keys.get(action, default) for action, (_where, default) in KEY_ACTIONS.items()}
    for screen in sorted({where for where, _key in KEY_ACTIONS.values()} - {"app"}):
        holder: dict[str, str] = {}
        for action, (where, _default) in KEY_ACTIONS.items():
            if where not in ("app", screen):
                continue
            for key in _keys_of(effective[action]):
                other = holder.setdefault(key, action)
                if other != action and (action in keys or other in keys):
                    raise ConfigError(f"config [keys]: key {key!r} is given to two actions, {other} and {action}; "
                                      "give each action its own key")
    return {action: str(key) for action, key in keys.items()}


def read_toml(path: Path, *, required: bool = False) -> dict[str, Any]:
    """Read the config file; a missing file is an empty config (an error when ``required``: a path the
    person named), a broken one a clear one-line error."""
    try:
        with open_regular(path) as fh:  # never a FIFO or a device: a config file is a regular file
            data = tomllib.load(fh)
    except FileNotFoundError:
        if required:
            raise ConfigError(f"config file {path} does not exist (see --config)") from None
        return {}
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"config file {path} is not valid TOML: {exc}") from exc
    except UnicodeDecodeError as exc:
        raise ConfigError(f"config file {path} is not valid UTF-8 (byte 0x{exc.object[exc.start]:02x} at offset "
                          f"{exc.start}): save it as UTF-8") from None
    except NotRegularFile as exc:
        raise ConfigError(f"config file {path} is not a regular file: {exc.strerror}") from None
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc.strerror or exc}") from exc
    known = {f.name for f in fields(Config)}
    unknown = sorted(set(data) - known)
    if unknown:
        raise ConfigError(f"config file {path}: unknown setting(s) {', '.join(unknown)}")
    return data


def load_config(config_file: Path | str | None = None, *, required: bool = False, **overrides: Any) -> Config:
    """Build the Config: defaults, then the TOML file, then the environment, then ``overrides``.

    ``overrides`` with value ``None`` are ignored, so CLI flags that were not given fall through.
    With ``required`` (``--config`` was given) the file must exist; otherwise, as for the default file
    and ``DREAMTUI_CONFIG``, no file is an empty config.
    """
    if config_file is None:
        env_file = os.environ.get("DREAMTUI_CONFIG")
        path = Path(os.path.expanduser(env_file)) if env_file else default_config_file()
    else:
        path = Path(os.path.expanduser(str(config_file)))
    values: dict[str, Any] = {}
    for name, value in read_toml(path, required=required).items():
        values[name] = _coerce(name, value)
    for name, env in _ENV.items():
        if os.environ.get(env):
            values[name] = _coerce(name, os.environ[env])
    for name, value in overrides.items():
        if value is not None:
            values[name] = _coerce(name, value)
    cfg = Config(**values)
    return replace(cfg, config_file=path)
