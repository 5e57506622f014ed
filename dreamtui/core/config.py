"""Configuration shared by every command: flags > ``DREAMTUI_*`` environment > TOML file > defaults."""

from __future__ import annotations

import os
import shlex
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal, get_args

import platformdirs
from pydantic import AfterValidator, BeforeValidator, Field, StrictStr, ValidationError
from pydantic_settings import (
    BaseSettings,
    InitSettingsSource,
    NoDecode,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)

from dreamtui.core.errors import ConfigError
from dreamtui.core.files import NotRegularFile, open_regular

APP_NAME = "dreamtui"
DEFAULT_MODEL = "claude-sonnet-5-5"
Extractor = Literal["auto", "heuristic", "anthropic", "claude-code", "openai", "command"]
DedupJudge = Literal["auto", "off"]
EXTRACTORS: tuple[str, ...] = get_args(Extractor)
"""Every ``extractor`` value, in order: the one list the CLI's ``--extractor`` choices are read from."""
DEDUP_JUDGES: tuple[str, ...] = get_args(DedupJudge)
"""``dedup_judge``: ``auto`` asks the model whether a kept lesson repeats one in memory when the
extractor in use declares a model (anthropic, claude-code; never heuristic/command); ``off`` keeps dedup lexical only."""


KEY_ACTIONS: dict[str, tuple[str, str]] = {
    **{
        f"screen.{mode}": ("app", key)
        for key, mode in (
            ("1", "queue"),
            ("2", "sessions"),
            ("3", "cycles"),
            ("4", "briefings"),
            ("5", "stats"),
            ("6", "memory"),
            ("7", "promotion"),
        )
    },
    "dream": ("app", "d"),
    "quit": ("app", "q"),
    "help": ("app", "question_mark,f1"),
    "accept": ("queue", "a"),
    "reject": ("queue", "r"),
    "edit": ("queue", "e"),
    "skip": ("queue", "s"),
    "undo": ("queue", "u"),
    "down": ("queue", "j"),
    "up": ("queue", "k"),
    "filter": ("queue", "slash"),
    "sort": ("queue", "o"),
    "clear_filter": ("queue", "escape"),
    "detail_down": ("queue", "ctrl+d"),
    "detail_up": ("queue", "ctrl+u"),
    "mine": ("queue", "m"),
    "unfold": ("queue", "z"),
    "briefings.mark": ("briefings", "m"),
    "briefings.diff": ("briefings", "f"),
    "briefings.view": ("briefings", "v"),
    "briefings.accept": ("briefings", "a"),
    "briefings.reject": ("briefings", "r"),
    "memory.revert": ("memory", "x"),
    "promotion.approve": ("promotion", "A"),
    "promotion.revoke": ("promotion", "R"),
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
    openai_base_url: str | None = None
    """An OpenAI-compatible server (Ollama, llama.cpp's server, LM Studio, vLLM), e.g.
    ``http://localhost:11434/v1``: the ``openai`` extractor talks to it, and ``auto`` picks it."""
    openai_model: str | None = None
    """The model the server should run (``None``: the one model the server lists)."""
    openai_api_key: str | None = field(default=None, repr=False)
    """The key the server wants, if any (else ``OPENAI_API_KEY``); never printed."""
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


def _not_bool(value: Any) -> Any:
    """``true`` is not a number here, though Python counts it as 1."""
    if isinstance(value, bool):
        raise ValueError("a true/false value is not a number")
    return value


def _command_words(value: Any) -> tuple[str, ...]:
    """``command``: a shell-like string split into words, or a list of strings."""
    if isinstance(value, str):
        return tuple(shlex.split(value))
    if isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise ValueError("config 'command' must be a string or a list of strings")


def _folded(value: Any) -> Any:
    """A choice written in any case and with stray spaces (``OFF ``) is still that choice."""
    return value.strip().lower() if isinstance(value, str) else value


def _blank_is_none(value: str | None) -> str | None:
    """An empty or all-space string is as good as not set."""
    return value.strip() or None if value is not None else None


def _base_url(value: str | None) -> str | None:
    """``openai_base_url``: an ``http(s)://`` URL, kept without its trailing slash."""
    value = _blank_is_none(value)
    if value is None:
        return None
    if not value.lower().startswith(("http://", "https://")) or len(value.split("//", 1)[1]) == 0:
        raise ValueError(
            f"config 'openai_base_url' must be an http(s) URL such as http://localhost:11434/v1, not {value!r}"
        )
    return value.rstrip("/")


def _table(message: str) -> Any:
    def check(value: Any) -> Any:
        if not isinstance(value, dict):
            raise ValueError(f"config {message}")
        return value

    return check


def _checked_ui(value: Any) -> dict[str, str]:
    from dreamtui.core.settings import check_ui

    return check_ui(value)


_Folder = Annotated[Path, AfterValidator(lambda path: Path(os.path.expanduser(str(path))))]
_Count = Annotated[int, BeforeValidator(_not_bool), Field(ge=1)]
_Positive = Annotated[float, BeforeValidator(_not_bool), Field(gt=0, allow_inf_nan=False)]
_WHOLE = {"concurrency", "min_person_chars", "max_retries", "max_digest_chars"}
_REAL = {"quiet_minutes", "api_timeout", "command_timeout", "rescan_seconds"}


class _Settings(BaseSettings):
    """Validates the settings of a :class:`Config` (every field but ``config_file``).

    The sources, highest first: keyword arguments (the flags), ``DREAMTUI_<NAME>`` environment
    variables (an empty one is ignored), the TOML file's table; pydantic fills in the defaults.
    Errors are turned into one-line :class:`ConfigError` messages by :func:`_one_line`.
    """

    model_config = SettingsConfigDict(
        env_prefix="DREAMTUI_", env_ignore_empty=True, extra="forbid", validate_default=False, frozen=True
    )

    transcripts: _Folder = Field(default_factory=default_transcripts)
    memory: _Folder = Field(default_factory=default_memory)
    state: _Folder = Field(default_factory=default_state)
    extractor: Extractor = "auto"
    model: StrictStr = DEFAULT_MODEL
    command: Annotated[tuple[str, ...], NoDecode, BeforeValidator(_command_words)] = ()
    command_timeout: _Positive = 120.0
    concurrency: _Count = 4
    quiet_minutes: Annotated[float, BeforeValidator(_not_bool), Field(ge=0, allow_inf_nan=False)] = 5.0
    min_person_chars: _Count = 80
    api_timeout: _Positive = 120.0
    max_retries: Annotated[int, BeforeValidator(_not_bool), Field(ge=0)] = 3
    max_digest_chars: _Count = 120_000
    batch: bool = False
    poll: bool = False
    rescan_seconds: _Positive = 60.0
    schedule: StrictStr | None = None
    dedup_judge: Annotated[DedupJudge, BeforeValidator(_folded)] = "auto"
    openai_base_url: Annotated[StrictStr | None, AfterValidator(_base_url)] = None
    openai_model: Annotated[StrictStr | None, AfterValidator(_blank_is_none)] = None
    openai_api_key: Annotated[StrictStr | None, AfterValidator(_blank_is_none)] = Field(
        default=None, repr=False
    )
    keys: Annotated[
        dict[str, Any],
        NoDecode,
        BeforeValidator(_table('[keys] must be a table of action = "key"')),
        AfterValidator(lambda keys: check_keys({str(k): v for k, v in keys.items()})),
    ] = {}
    ui: Annotated[dict[str, Any], NoDecode, BeforeValidator(_checked_ui)] = {}


def _loader(table: dict[str, Any]) -> type[_Settings]:
    """:class:`_Settings` reading ``table`` (the TOML file's) below the flags and the environment."""

    class Loaded(_Settings):
        @classmethod
        def settings_customise_sources(
            cls,
            settings_cls: type[BaseSettings],
            init_settings: PydanticBaseSettingsSource,
            env_settings: PydanticBaseSettingsSource,
            dotenv_settings: PydanticBaseSettingsSource,
            file_secret_settings: PydanticBaseSettingsSource,
        ) -> tuple[PydanticBaseSettingsSource, ...]:
            return init_settings, env_settings, InitSettingsSource(settings_cls, init_kwargs=table)

    return Loaded


def _one_line(error: ValidationError) -> ConfigError:
    """The first problem pydantic found, said as the one-line error the person sees."""
    problem = error.errors()[0]
    name = str(problem["loc"][0]) if problem["loc"] else "?"
    kind, value = problem["type"], problem.get("input")
    if name in _WHOLE:
        if kind == "greater_than_equal":
            return ConfigError(f"config {name!r} must be positive, not {value}")
        return ConfigError(f"config {name!r} must be a whole number, not {value!r}")
    if name in _REAL:
        if kind in {"finite_number", "greater_than", "greater_than_equal"}:
            least = "0 or more" if name == "quiet_minutes" else "above 0"
            return ConfigError(f"config {name!r} must be a finite number {least}, not {value!r}")
        return ConfigError(f"config {name!r} must be a number, not {value!r}")
    if name == "extractor" and kind == "literal_error":
        return ConfigError(f"unknown extractor {value!r}: choose one of {', '.join(EXTRACTORS)}")
    if name == "dedup_judge" and kind == "literal_error":
        return ConfigError(f"config 'dedup_judge' must be one of {', '.join(DEDUP_JUDGES)}, not {value!r}")
    if kind == "path_type":
        return ConfigError(f"config {name!r} must be a folder path (a string), not {value!r}")
    if kind.startswith("bool_"):
        return ConfigError(f"config {name!r} must be true or false, not {value!r}")
    if kind == "string_type":
        return ConfigError(f"config {name!r} must be a string, not {value!r}")
    if kind == "value_error":  # one of the checks above, already worded for the person
        return ConfigError(str(problem["ctx"]["error"]))
    return ConfigError(f"config {name!r}: {problem['msg']}, not {value!r}")


def _keys_of(value: str) -> list[str]:
    return [k.strip() for k in value.split(",") if k.strip()]


def check_keys(keys: dict[str, Any]) -> dict[str, str]:
    """A ``[keys]`` table checked: every action known, every key a non-empty string, and no key given
    to two actions that are active at the same time (an ``app`` action and a screen's, or two of one
    screen's), counting the default keys of the actions not remapped. Raises :class:`ConfigError`."""
    unknown = sorted(set(keys) - set(KEY_ACTIONS))
    if unknown:
        raise ConfigError(
            f"config [keys]: unknown action(s) {', '.join(map(repr, unknown))}; "
            f"the actions are {', '.join(KEY_ACTIONS)}"
        )
    for action, key in keys.items():
        if not isinstance(key, str) or not _keys_of(key):
            raise ConfigError(f'config [keys]: {action} must be a key name such as "y", not {key!r}')
    effective = {action: keys.get(action, default) for action, (_where, default) in KEY_ACTIONS.items()}
    for screen in sorted({where for where, _key in KEY_ACTIONS.values()} - {"app"}):
        holder: dict[str, str] = {}
        for action, (where, _default) in KEY_ACTIONS.items():
            if where not in ("app", screen):
                continue
            for key in _keys_of(effective[action]):
                other = holder.setdefault(key, action)
                if other != action and (action in keys or other in keys):
                    raise ConfigError(
                        f"config [keys]: key {key!r} is given to two actions, {other} and {action}; "
                        "give each action its own key"
                    )
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
        raise ConfigError(
            f"config file {path} is not valid UTF-8 (byte 0x{exc.object[exc.start]:02x} at offset "
            f"{exc.start}): save it as UTF-8"
        ) from None
    except NotRegularFile as exc:
        raise ConfigError(f"config file {path} is not a regular file: {exc.strerror}") from None
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc.strerror or exc}") from exc
    known = set(_Settings.model_fields)
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
    flags = {name: value for name, value in overrides.items() if value is not None}
    try:
        settings = _loader(read_toml(path, required=required))(**flags)
    except ValidationError as exc:
        raise _one_line(exc) from None
    return Config(**settings.model_dump(), config_file=path)
