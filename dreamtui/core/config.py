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

APP_NAME = "dreamtui"
DEFAULT_MODEL = "claude-sonnet-5-5"
EXTRACTORS = ("auto", "heuristic", "anthropic", "command")
DEDUP_JUDGES = ("auto", "off")
"""``dedup_judge``: ``auto`` asks the model whether a kept lesson repeats one in memory when the
anthropic extractor is in use (never for heuristic/command); ``off`` keeps dedup lexical only."""


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
            number = float(value)
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"config {name!r} must be a number, not {value!r}") from exc
        if not math.isfinite(number) or number < 0 or (number == 0 and name != "quiet_minutes"):
            least = "0 or more" if name == "quiet_minutes" else "above 0"
            raise ConfigError(f"config {name!r} must be a finite number {least}, not {value!r}")
        return number
    if name in {"model", "schedule"} and not isinstance(value, str):
        raise ConfigError(f"config {name!r} must be a string, not {value!r}")
    if name in {"batch", "poll"}:
        if isinstance(value, bool):
            return value
        return str(value).lower() in {"1", "true", "yes", "on"}
    if name == "keys":
        if not isinstance(value, dict):
            raise ConfigError("config [keys] must be a table of action = \"key\"")
        return {str(k): str(v) for k, v in value.items()}
    if name == "dedup_judge":
        choice = value.strip().lower() if isinstance(value, str) else None
        if choice not in DEDUP_JUDGES:
            raise ConfigError(f"config 'dedup_judge' must be one of {', '.join(DEDUP_JUDGES)}, not {value!r}")
        return choice
    if name == "extractor" and value not in EXTRACTORS:
        raise ConfigError(f"unknown extractor {value!r}: choose one of {', '.join(EXTRACTORS)}")
    return value


def read_toml(path: Path) -> dict[str, Any]:
    """Read the config file; a missing file is an empty config, a broken one a clear error."""
    try:
        with path.open("rb") as fh:
            data = tomllib.load(fh)
    except FileNotFoundError:
        return {}
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"config file {path} is not valid TOML: {exc}") from exc
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc.strerror}") from exc
    known = {f.name for f in fields(Config)}
    unknown = sorted(set(data) - known)
    if unknown:
        raise ConfigError(f"config file {path}: unknown setting(s) {', '.join(unknown)}")
    return data


def load_config(config_file: Path | str | None = None, **overrides: Any) -> Config:
    """Build the Config: defaults, then the TOML file, then the environment, then ``overrides``.

    ``overrides`` with value ``None`` are ignored, so CLI flags that were not given fall through.
    """
    if config_file is None:
        env_file = os.environ.get("DREAMTUI_CONFIG")
        path = Path(os.path.expanduser(env_file)) if env_file else default_config_file()
    else:
        path = Path(os.path.expanduser(str(config_file)))
    values: dict[str, Any] = {}
    for name, value in read_toml(path).items():
        values[name] = _coerce(name, value)
    for name, env in _ENV.items():
        if os.environ.get(env):
            values[name] = _coerce(name, os.environ[env])
    for name, value in overrides.items():
        if value is not None:
            values[name] = _coerce(name, value)
    cfg = Config(**values)
    return replace(cfg, config_file=path)
