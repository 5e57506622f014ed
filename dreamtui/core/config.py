"""Configuration shared by every command: flags > ``DREAMTUI_*`` environment > TOML file > defaults.

:class:`Config` is the one declaration of every setting (its type, default, check and meaning);
:func:`load_config` reads it from the flags, the environment and the file, :func:`choices` gives the
values a setting may take to the CLI, and the ``[keys]`` table is checked by :func:`check_keys`.
"""

from __future__ import annotations

import hashlib
import math
import os
import re
import shlex
import tomllib
import unicodedata
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal, get_args, get_origin, get_type_hints

import platformdirs
from pydantic import AfterValidator, BeforeValidator, Field, StrictStr, ValidationError
from pydantic_settings import (
    BaseSettings,
    InitSettingsSource,
    NoDecode,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)
from typing_extensions import TypedDict  # pydantic reads typing's TypedDict only from Python 3.12

from dreamtui.core.errors import ConfigError
from dreamtui.core.files import NotRegularFile, open_regular

APP_NAME = "dreamtui"

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
    "refresh": ("app", "ctrl+r"),
    "accept": ("queue", "a"),
    "reject": ("queue", "r"),
    "edit": ("queue", "e"),
    "skip": ("queue", "s"),
    "undo": ("queue", "u"),
    "down": ("queue", "j"),
    "up": ("queue", "k"),
    "filter": ("queue", "slash"),
    "sort": ("queue", "o"),
    "agent": ("queue", "f"),
    "clear_filter": ("queue", "escape"),
    "detail_down": ("queue", "ctrl+d"),
    "detail_up": ("queue", "ctrl+u"),
    "mine": ("queue", "m"),
    "unfold": ("queue", "z"),
    "open": ("queue", "enter"),
    "briefings.mark": ("briefings", "m"),
    "briefings.diff": ("briefings", "f"),
    "briefings.view": ("briefings", "v"),
    "briefings.accept": ("briefings", "a"),
    "briefings.reject": ("briefings", "r"),
    "briefings.undo": ("briefings", "u"),
    "memory.revert": ("memory", "x"),
    "sessions.agent": ("sessions", "f"),
    "promotion.approve": ("promotion", "A"),
    "promotion.revoke": ("promotion", "R"),
}
"""Every app action a ``[keys]`` table may remap: binding id -> (where it is active, default key).
``app`` actions are active on every screen, the others on their own screen (the app's bindings carry
the same ids and keys; a test keeps the two in step)."""


def default_transcripts() -> Path:
    """Claude Code's transcript folder (its format's default root): the ``transcripts`` setting's default.
    Every other format's folders are its own (``[formats.<name>]``, :mod:`dreamtui.core.ingest.sources`)."""
    # deferred: config sits below ingest (ingest -> ledger -> config); the one exception the layers allow
    from dreamtui.core.ingest import formats

    return formats.named(formats.FALLBACK).default_roots()[0]


def default_memory() -> Path:
    """The memory repository dreamtui writes to."""
    return Path.home() / ".claude" / "memory"


def default_state() -> Path:
    """The user state directory (ledger, lock)."""
    return Path(platformdirs.user_state_dir(APP_NAME))


def _resolved(path: Path) -> Path:
    try:
        return Path(os.path.expanduser(str(path))).resolve()
    except (OSError, RuntimeError):  # a symlink loop: the path as given
        return Path(os.path.expanduser(str(path))).absolute()


def folders_state(transcripts: Path, memory: Path) -> Path:
    """The state folder used when none is given: the user state directory for the default folders
    (:func:`default_transcripts`, :func:`default_memory`), and for any other pair a folder of its own inside it
    (``folders/<memory name>-<hash of both paths>``), so another ``--memory`` or ``--transcripts`` never
    reads or writes the ledger of the default ones."""
    t, m = _resolved(transcripts), _resolved(memory)
    if t == _resolved(default_transcripts()) and m == _resolved(default_memory()):
        return default_state()
    key = hashlib.sha256(f"{t}\0{m}".encode("utf-8", "surrogateescape")).hexdigest()[:12]
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", m.name).strip(".-")[:40] or "memory"
    return default_state() / "folders" / f"{name}-{key}"


def default_config_file() -> Path:
    """The TOML config file in the user config directory."""
    return Path(platformdirs.user_config_dir(APP_NAME)) / "config.toml"


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


def _checked_keys(value: Any) -> dict[str, str]:
    """``[keys]``: a table, checked by :func:`check_keys`."""
    if not isinstance(value, dict):
        raise ValueError('config [keys] must be a table of action = "key"')
    return check_keys({str(k): v for k, v in value.items()})


class FormatSettings(TypedDict, total=False):
    """A ``[formats.<name>]`` table: where one agent's transcripts are read, and whether they are."""

    enabled: bool
    """False: this agent's transcripts are not read (default true)."""
    folders: list[str]
    """The folders to read instead of the format's default ones (Claude Code's: read besides
    ``transcripts``)."""


def _checked_formats(value: Any) -> dict[str, FormatSettings]:
    """``[formats]``: a table of known format names, each a table of ``enabled`` and ``folders``."""
    from dreamtui.core.ingest import formats  # deferred, as in default_transcripts

    if not isinstance(value, dict):
        raise ValueError("config [formats] must be a table of [formats.<name>] tables")
    out: dict[str, FormatSettings] = {}
    for fname, table in value.items():
        if fname not in formats.FORMATS:
            raise ValueError(
                f"config [formats]: unknown format {fname!r}; the formats are {', '.join(formats.FORMATS)}"
            )
        if not isinstance(table, dict) or set(table) - {"enabled", "folders"}:
            raise ValueError(f'config [formats.{fname}] takes enabled = true/false and folders = ["…"]')
        entry: FormatSettings = {}
        if "enabled" in table:
            if not isinstance(table["enabled"], bool):
                raise ValueError(f"config [formats.{fname}] enabled must be true or false")
            entry["enabled"] = table["enabled"]
        if "folders" in table:
            folders = table["folders"]
            if not isinstance(folders, list) or not all(isinstance(f, str) and f.strip() for f in folders):
                raise ValueError(f"config [formats.{fname}] folders must be a list of folder paths")
            entry["folders"] = [os.path.expanduser(f) for f in folders]
        out[str(fname)] = entry
    return out


GUARD_AGENTS = ("codex", "gemini-cli")
"""The agents whose own memory writes the outside-change guard can review (``[guard] agents``)."""


class GuardSettings(TypedDict, total=False):
    """The ``[guard]`` table: which agents' own memory writes are reviewed as outside changes."""

    agents: list[str]
    """The agents guarded (of :data:`GUARD_AGENTS`); ``[]`` guards none. Left out: each agent whose
    folder exists (``$CODEX_HOME``, ``~/.gemini``)."""


def _checked_guard(value: Any) -> GuardSettings:
    """``[guard]``: ``agents = ["codex", "gemini-cli"]`` (a list of known agent names, maybe empty)."""
    if not isinstance(value, dict) or set(value) - {"agents"}:
        raise ValueError('config [guard] takes agents = ["codex", "gemini-cli"] (or [] for none)')
    out: GuardSettings = {}
    if "agents" in value:
        agents = value["agents"]
        if not isinstance(agents, list) or not all(isinstance(a, str) for a in agents):
            raise ValueError('config [guard] agents must be a list such as ["codex", "gemini-cli"]')
        unknown = [a for a in agents if a not in GUARD_AGENTS]
        if unknown:
            raise ValueError(
                f"config [guard] agents: unknown agent {unknown[0]!r}; the agents are {', '.join(GUARD_AGENTS)}"
            )
        out["agents"] = list(dict.fromkeys(agents))
    return out


class Ui(TypedDict, total=False):
    """The ``[ui]`` table: what the app saves when the person changes it (``core.settings`` writes it)."""

    theme: str
    """The app's theme, as the command palette's theme picker names it."""
    sort: Literal["newest", "project", "session"]
    """The queue's order: newest first (the first choice is the default), grouped by project, by session."""


def check_ui(value: object) -> dict[str, str]:
    """A ``[ui]`` table checked: known keys (:class:`Ui`'s), string values, a sort the queue knows."""
    keys, sorts = tuple(get_type_hints(Ui)), choices("ui.sort")
    if not isinstance(value, dict):
        raise ConfigError(f'config [ui] must be a table (theme = "…", sort = "{sorts[0]}")')
    unknown = sorted(set(value) - set(keys))
    if unknown:
        raise ConfigError(
            f"config [ui]: unknown setting(s) {', '.join(map(repr, unknown))}; the settings are {', '.join(keys)}"
        )
    for key, item in value.items():
        if not isinstance(item, str):
            raise ConfigError(f"config [ui] {key} must be a string, not {item!r}")
    if "sort" in value and value["sort"] not in sorts:
        raise ConfigError(f"config [ui] sort must be one of {', '.join(sorts)}, not {value['sort']!r}")
    return {str(k): str(v) for k, v in value.items()}


_Folder = Annotated[Path, AfterValidator(lambda path: Path(os.path.expanduser(str(path))))]
_Count = Annotated[int, BeforeValidator(_not_bool), Field(ge=1)]
_Positive = Annotated[float, BeforeValidator(_not_bool), Field(gt=0, allow_inf_nan=False)]


class Config(BaseSettings):
    """Everything a command needs to know about where things live and how to run: every setting, once.

    Built in code (``Config(memory=...)``, ``config.changed(extractor=...)``) it holds what it is given
    and the defaults, checked; :func:`load_config` reads the flags, ``DREAMTUI_<NAME>`` environment
    variables (an empty one is ignored) and the TOML file's table, in that order, into it. Frozen.
    """

    model_config = SettingsConfigDict(
        env_prefix="DREAMTUI_",
        env_ignore_empty=True,
        extra="forbid",
        validate_default=False,
        frozen=True,
        use_attribute_docstrings=True,
    )
    file_table: ClassVar[dict[str, Any] | None] = None
    """The TOML file's table on :func:`load_config`'s loader class; None on Config itself (built in
    code: no environment, no file)."""

    transcripts: _Folder = Field(default_factory=default_transcripts)
    """Claude Code's transcript folder (its default root); other agents' folders: ``formats``."""
    formats: Annotated[dict[str, FormatSettings], NoDecode, BeforeValidator(_checked_formats)] = {}
    """``[formats.<name>]`` tables: each agent's transcript folders (``folders``, instead of its default
    ones) and whether it is read (``enabled``); every known format is read from its default folders
    unless told otherwise (``docs/formats.md``)."""
    guard: Annotated[GuardSettings, NoDecode, BeforeValidator(_checked_guard)] = {}
    """The ``[guard]`` table: which agents' own memories (Codex's ``$CODEX_HOME/memories``, Gemini CLI's
    ``save_memory`` section of ``~/.gemini/GEMINI.md``) are reviewed as outside changes
    (``docs/memory.md``)."""
    memory: _Folder = Field(default_factory=default_memory)
    """The memory git repository dreamtui writes to."""
    state: _Folder = Field(default_factory=default_state)
    """The state folder (ledger, lock); :func:`load_config` gives other folders one of their own
    (:func:`folders_state`) when none is named."""
    config_file: Path | None = None
    """The TOML file the settings were read from (``None``: built in code); not a setting of the file."""
    extractor: Literal["auto", "heuristic", "anthropic", "claude-code", "openai", "command"] = "auto"
    """Which extractor proposes lessons; ``auto`` picks the best one available (``extract.choose``)."""
    model: StrictStr = "claude-sonnet-5-5"
    """The Claude model of the anthropic and claude-code extractors."""
    command: Annotated[tuple[str, ...], NoDecode, BeforeValidator(_command_words)] = ()
    """The program the ``command`` extractor runs: a shell-like string or a list of words."""
    command_timeout: _Positive = 120.0
    """Seconds the ``command`` extractor's program may take."""
    concurrency: _Count = 4
    """Sessions extracted at once."""
    quiet_minutes: Annotated[float, BeforeValidator(_not_bool), Field(ge=0, allow_inf_nan=False)] = 5.0
    """A session written to more recently than this is deferred (unless its person said good night)."""
    min_person_chars: _Count = 80
    """Light sleep wakes when no session has this many characters of a person's words."""
    api_timeout: _Positive = 120.0
    """Seconds a model's API call may take."""
    max_retries: Annotated[int, BeforeValidator(_not_bool), Field(ge=0)] = 3
    """How often a failed API call is tried again."""
    max_digest_chars: _Count = 120_000
    """The longest digest sent to a model in one request; a longer one is split into parts."""
    daily_token_budget: Annotated[int, BeforeValidator(_not_bool), Field(ge=0)] = 0
    """Tokens (input + output, as the model reports them) dreams may spend per local day; at it a cycle
    stops sending, the rest waits for the next day (0: no budget)."""
    dream_window_days: Annotated[int, BeforeValidator(_not_bool), Field(ge=0)] = 14
    """A dream with a model reads the sessions written in this many days; older ones wait for an
    explicit back-fill (``dreamtui dream --since DATE`` or ``--all``); 0: no window."""
    ask_above_tokens: Annotated[int, BeforeValidator(_not_bool), Field(ge=0)] = 2_000_000
    """``dreamtui dream`` (and the app) ask before a dream with a model whose estimated input passes
    this many tokens (the first dream with a model always asks)."""
    batch: bool = False
    """Dream cycles submit their extractions as one Message Batch (anthropic only)."""
    poll: bool = False
    """``watch`` polls the transcripts folder instead of waiting for file-system events."""
    rescan_seconds: _Positive = 60.0
    """How often the watcher walks the transcripts folder for changes its events missed."""
    schedule: StrictStr | None = None
    """``HH:MM`` (UTC): ``watch`` also dreams every project daily at this time."""
    dedup_judge: Annotated[Literal["auto", "off"], BeforeValidator(_folded)] = "auto"
    """``auto`` asks the model whether a kept lesson repeats one in memory when the extractor in use
    declares a model (anthropic, claude-code; never heuristic/command); ``off`` keeps dedup lexical."""
    openai_base_url: Annotated[StrictStr | None, AfterValidator(_base_url)] = None
    """An OpenAI-compatible server (Ollama, llama.cpp's server, LM Studio, vLLM), e.g.
    ``http://localhost:11434/v1``: the ``openai`` extractor talks to it, and ``auto`` picks it."""
    openai_model: Annotated[StrictStr | None, AfterValidator(_blank_is_none)] = None
    """The model the server should run (``None``: the one model the server lists)."""
    openai_api_key: Annotated[StrictStr | None, AfterValidator(_blank_is_none)] = Field(
        default=None, repr=False
    )
    """The key the server wants, if any (else ``OPENAI_API_KEY``); never printed."""
    openai_timeout: _Positive = 600.0
    """Seconds one request to the local model server may take (CPU inference is slow); a timed-out
    request is cancelled (its connection closed) and never sent again."""
    openai_stall_timeout: _Positive = 300.0
    """Seconds the server may send nothing at all (no token, no progress) before the request is given
    up as stuck; a slow server that keeps sending is given ``openai_timeout``."""
    openai_max_tokens: _Count = 4096
    """The most one answer of the local model may take; less when its context leaves less."""
    context_tokens: _Count | None = None
    """The local model's context in tokens, for a server that does not say it (llama.cpp, Ollama, LM
    Studio and vLLM do); smaller than what the server says, it caps it."""
    structured_output: Annotated[
        Literal["auto", "json_schema", "json_object", "none"], BeforeValidator(_folded)
    ] = "auto"
    """How the local model is held to JSON: ``auto`` tries ``json_schema``, then ``json_object``, then
    plain instructions, as the server refuses each; the others use only that one."""
    keys: Annotated[dict[str, str], NoDecode, BeforeValidator(_checked_keys)] = {}
    """The ``[keys]`` table: app actions remapped to other keys (:data:`KEY_ACTIONS`)."""
    ui: Annotated[Ui, NoDecode, BeforeValidator(check_ui)] = {}
    """Settings the app saves when the person changes them (:class:`Ui`)."""

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """Only what it is given when built in code; :func:`load_config`'s loader adds the environment
        below its arguments (the flags) and the TOML file's table below both."""
        if cls.file_table is None:
            return (init_settings,)
        return init_settings, env_settings, InitSettingsSource(settings_cls, init_kwargs=cls.file_table)

    @property
    def ledger_path(self) -> Path:
        """The SQLite ledger file."""
        return self.state / "ledger.sqlite3"

    @property
    def lock_path(self) -> Path:
        """The dream-cycle lock file."""
        return self.state / "dream.lock"

    @property
    def watch_lock_path(self) -> Path:
        """The lock a running ``dreamtui watch`` holds (its pid and start time inside)."""
        return self.state / "watch.lock"

    def changed(self, **fields: Any) -> Config:
        """This config with ``fields`` in place of its own, checked as :func:`load_config` checks them
        (a bad value is a one-line :class:`ConfigError`)."""
        try:
            return Config(**{**self.model_dump(), **fields})
        except ValidationError as exc:
            raise _one_line(exc) from None


def _literal_values(hint: Any) -> tuple[str, ...]:
    """The values of the ``Literal`` in a type (also inside ``X | None`` or ``Annotated``)."""
    if get_origin(hint) is Literal:
        return get_args(hint)
    for arg in get_args(hint):
        if values := _literal_values(arg):
            return values
    return ()


def choices(setting: str) -> tuple[str, ...]:
    """The values ``setting`` may take, in order, read from its type in :class:`Config`
    (``choices("extractor")``; a key of a table as ``choices("ui.sort")``): the CLI's choices and the
    errors are read from here, so a new value is added in one place."""
    name, _, key = setting.partition(".")
    hint: Any = Config.model_fields[name].annotation
    values = _literal_values(get_type_hints(hint)[key] if key else hint)
    if not values:
        raise ValueError(f"setting {setting!r} is not a choice")
    return values


def _number_kind(name: str) -> type | None:
    """``int`` or ``float`` for a numeric setting (they have worded errors of their own), else None."""
    field = Config.model_fields.get(name)
    kind = field.annotation if field is not None else None
    return int if kind is int else float if kind is float else None


def _one_line(error: ValidationError) -> ConfigError:
    """The first problem pydantic found, said as the one-line error the person sees."""
    problem = error.errors()[0]
    name = str(problem["loc"][0]) if problem["loc"] else "?"
    kind, value = problem["type"], problem.get("input")
    number = _number_kind(name)
    if number is int:
        if kind == "greater_than_equal":
            return ConfigError(f"config {name!r} must be positive, not {value}")
        return ConfigError(f"config {name!r} must be a whole number, not {value!r}")
    if number is float:
        if kind in {"finite_number", "greater_than", "greater_than_equal"}:
            zero_allowed = any(getattr(m, "ge", None) == 0 for m in Config.model_fields[name].metadata)
            least = "0 or more" if zero_allowed else "above 0"
            return ConfigError(f"config {name!r} must be a finite number {least}, not {value!r}")
        return ConfigError(f"config {name!r} must be a number, not {value!r}")
    if name == "extractor" and kind == "literal_error":
        return ConfigError(f"unknown extractor {value!r}: choose one of {', '.join(choices('extractor'))}")
    if kind == "literal_error":
        return ConfigError(f"config {name!r} must be one of {', '.join(choices(name))}, not {value!r}")
    if kind == "path_type":
        return ConfigError(f"config {name!r} must be a folder path (a string), not {value!r}")
    if kind.startswith("bool_"):
        return ConfigError(f"config {name!r} must be true or false, not {value!r}")
    if kind == "string_type":
        return ConfigError(f"config {name!r} must be a string, not {value!r}")
    if kind == "value_error":  # one of the checks above, already worded for the person
        return ConfigError(str(problem["ctx"]["error"]))
    return ConfigError(f"config {name!r}: {problem['msg']}, not {value!r}")


def _loader(table: dict[str, Any]) -> type[Config]:
    """:class:`Config` reading the environment below its keyword arguments (the flags), and ``table``
    (the TOML file's) below both."""
    return type("Loaded", (Config,), {"file_table": table})


def _keys_of(value: str) -> list[str]:
    return [k.strip() for k in value.split(",") if k.strip()]


_MODIFIERS = ("ctrl", "shift", "alt", "meta", "super", "hyper")
_NAMED_KEYS = frozenset(
    {
        "escape",
        "enter",
        "return",
        "tab",
        "space",
        "backspace",
        "delete",
        "insert",
        "home",
        "end",
        "pageup",
        "pagedown",
        "up",
        "down",
        "left",
        "right",
        *(f"f{n}" for n in range(1, 25)),
    }
)
_CHARACTER_NAMES = {
    "solidus": "slash",
    "reverse_solidus": "backslash",
    "commercial_at": "at",
    "hyphen_minus": "minus",
    "plus_sign": "plus",
    "low_line": "underscore",
}
"""The names Textual gives these characters instead of their Unicode names (``textual.keys``)."""

BUILTIN_KEYS: dict[str, tuple[str, str]] = {
    "tab": ("app", "focus-next"),
    "shift+tab": ("app", "focus-previous"),
    "ctrl+q": ("app", "quit"),
    "ctrl+c": ("app", "copy/quit"),
    "super+c": ("app", "copy"),
    "ctrl+p": ("app", "command-palette"),
    "j": ("screens", "down"),
    "k": ("screens", "up"),
}
"""Keys the app binds that ``[keys]`` cannot take: Textual's own (focus, quit, copy, the command
palette) on every screen, and the base screen's ``j``/``k`` on the screens without their own
(``screens``: all but the queue, whose ``down``/``up`` are remappable actions)."""


def _character_key(char: str) -> str:
    """Textual's name of the key that types ``char`` (``?`` → ``question_mark``, ``/`` → ``slash``)."""
    if char.isalnum():
        return char
    try:
        name = unicodedata.name(char).lower().replace("-", "_").replace(" ", "_")
    except ValueError:
        return char
    return _CHARACTER_NAMES.get(name, name)


def key_name(text: str) -> str | None:
    """The one name of a key as the app binds it (a character becomes its name, ``?`` →
    ``question_mark``; named keys in lower case; ``ctrl+``/``shift+``/… kept), or ``None`` when
    ``text`` names no key."""
    text = text.strip()
    if len(text) == 1:
        return _character_key(text)
    *mods, base = text.split("+") if not text.endswith("++") else [*text[:-2].split("+"), "+"]
    mods = [m.lower() for m in mods]
    if any(m not in _MODIFIERS for m in mods) or not base:
        return None
    if len(base) == 1:
        name = _character_key(base)
    elif base.lower() in _NAMED_KEYS or base.lower() in _CHARACTER_NAMES.values():
        name = base.lower()
    else:
        try:
            char = unicodedata.lookup(base.replace("_", " "))
        except KeyError:
            return None
        if char.isalnum() or not char.isprintable():
            return None
        name = _character_key(char)
    return "+".join([*mods, name])


def check_keys(keys: dict[str, Any]) -> dict[str, str]:
    """A ``[keys]`` table checked: every action known, every key a key name (``y``, ``?``, ``ctrl+y``,
    ``f5``, ``question_mark``), and no key given to two actions that are active at the same time (an
    ``app`` action and a screen's, or two of one screen's), counting the default keys of the actions
    not remapped, nor to a key the app has built in (:data:`BUILTIN_KEYS`). Keys are compared by the
    names the app binds (``?`` is ``question_mark``, help's key). Returns the table with those names.
    Raises :class:`ConfigError`."""
    unknown = sorted(set(keys) - set(KEY_ACTIONS))
    if unknown:
        raise ConfigError(
            f"config [keys]: unknown action(s) {', '.join(map(repr, unknown))}; "
            f"the actions are {', '.join(KEY_ACTIONS)}"
        )
    named: dict[str, str] = {}
    for action, key in keys.items():
        if not isinstance(key, str) or not _keys_of(key):
            raise ConfigError(f'config [keys]: {action} must be a key name such as "y", not {key!r}')
        names = []
        for one in _keys_of(key):
            name = key_name(one)
            if name is None:
                raise ConfigError(
                    f"config [keys]: {action} = {key!r}: {one!r} is not a key name "
                    '(e.g. "y", "?", "ctrl+y", "f5", "escape")'
                )
            names.append(name)
        named[action] = ",".join(dict.fromkeys(names))
    effective = {action: named.get(action, default) for action, (_where, default) in KEY_ACTIONS.items()}
    for action in named:
        where = KEY_ACTIONS[action][0]
        for key in _keys_of(named[action]):
            builtin = BUILTIN_KEYS.get(key)
            if builtin is None or (builtin[0] == "screens" and where == "queue"):
                continue
            raise ConfigError(
                f"config [keys]: key {key!r} of {action} is the app's built-in {builtin[1]} key; choose another key"
            )
    for screen in sorted({where for where, _key in KEY_ACTIONS.values()} - {"app"}):
        holder: dict[str, str] = {}
        for action, (where, _default) in KEY_ACTIONS.items():
            if where not in ("app", screen):
                continue
            for key in _keys_of(effective[action]):
                other = holder.setdefault(key, action)
                if other != action and (action in named or other in named):
                    raise ConfigError(
                        f"config [keys]: key {keys.get(action, key)!r} is given to two actions, {other} "
                        f"and {action}"
                        + (f" ({key})" if keys.get(action, key) != key else "")
                        + "; give each action its own key"
                    )
    return named


def read_toml(path: Path, *, required: bool = False, named_by: str = "--config") -> dict[str, Any]:
    """Read the config file; a missing file is an empty config (an error when ``required``: a path the
    person named, with ``named_by``), a broken one a clear one-line error."""
    try:
        # never a FIFO or a device: a config file is a regular file (a link into dotfiles is followed)
        with open_regular(path, follow=True) as fh:
            data = tomllib.load(fh)
    except FileNotFoundError:
        if required:
            raise ConfigError(f"config file {path} does not exist (see {named_by})") from None
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
    known = set(Config.model_fields) - {"config_file"}  # where the settings came from, not one of them
    unknown = sorted(set(data) - known)
    if unknown:
        raise ConfigError(f"config file {path}: unknown setting(s) {', '.join(unknown)}")
    return data


SECONDS_ENV = (
    "DREAMTUI_OUTSIDE_WINDOW",
    "DREAMTUI_GIT_HOOK_TIMEOUT",
    "DREAMTUI_GIT_LOCK_TIMEOUT",
    "DREAMTUI_GIT_STALE_LOCK",
)
"""Environment variables read as a number of seconds where they are used (memory/outside, memory/gitops);
:func:`load_config` checks them all before a command runs."""


BYTES_ENV = ("DREAMTUI_OUTSIDE_MAX_BYTES",)
"""Environment variables read as a number of bytes where they are used (memory/outside_tree)."""


def env_bytes(name: str, default: int) -> int:
    """The number of bytes the environment variable ``name`` says (unset or empty: ``default``); a
    value that is not a whole number 1 or more is a one-line :class:`ConfigError`."""
    raw = os.environ.get(name, "")
    if not raw.strip():
        return default
    try:
        value = int(raw.strip())
    except ValueError:
        value = 0
    if value < 1:
        raise ConfigError(f"{name} must be a whole number of bytes, 1 or more, not {raw!r}")
    return value


def env_seconds(name: str, default: float) -> float:
    """The number of seconds the environment variable ``name`` says (unset or empty: ``default``); a
    value that is not a finite number 0 or more is a one-line :class:`ConfigError`."""
    raw = os.environ.get(name, "")
    if not raw.strip():
        return default
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value < 0:
        raise ConfigError(f"{name} must be a number of seconds, 0 or more, not {raw!r}")
    return value


def check_environment() -> None:
    """Every ``DREAMTUI_*`` variable read outside the settings (:data:`SECONDS_ENV`, :data:`BYTES_ENV`, ``DREAMTUI_NOW``,
    which ``core.clock`` reads) is valid, or a one-line :class:`ConfigError` names it."""
    for name in SECONDS_ENV:
        env_seconds(name, 0.0)
    for name in BYTES_ENV:
        env_bytes(name, 1)
    now = os.environ.get("DREAMTUI_NOW", "")
    if now:
        try:
            datetime.fromisoformat(now.strip())
        except ValueError:
            raise ConfigError(f"DREAMTUI_NOW={now!r} is not an ISO 8601 timestamp") from None


def load_config(config_file: Path | str | None = None, *, required: bool = False, **overrides: Any) -> Config:
    """Build the Config: defaults, then the TOML file, then the environment, then ``overrides``.

    ``overrides`` with value ``None`` are ignored, so CLI flags that were not given fall through.
    With ``required`` (``--config`` was given) the file must exist, and so must one ``DREAMTUI_CONFIG``
    names; only the default file may be absent (an empty config).
    """
    check_environment()
    named_by = "--config"
    if config_file is None:
        env_file = os.environ.get("DREAMTUI_CONFIG")
        path = Path(os.path.expanduser(env_file)) if env_file else default_config_file()
        if env_file:
            required, named_by = True, "DREAMTUI_CONFIG"
    else:
        path = Path(os.path.expanduser(str(config_file)))
    flags = {name: value for name, value in overrides.items() if value is not None}
    try:
        loaded = _loader(read_toml(path, required=required, named_by=named_by))(**flags, config_file=path)
    except ValidationError as exc:
        raise _one_line(exc) from None
    values = loaded.model_dump()
    if "state" not in loaded.model_fields_set:  # no flag, variable or file named one
        values["state"] = folders_state(values["transcripts"], values["memory"])
    return Config(**values)
