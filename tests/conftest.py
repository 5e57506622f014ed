"""Shared fixtures. Tests that read ../shared skip cleanly when it is absent.

Hermetic: before anything of dreamtui is imported, the test process gets a HOME, XDG folders and a git
configuration of its own (an empty folder, no git identity, no system git config), and every test
gets a fresh HOME again (:func:`_isolated_env`). Nothing of the person running the tests — their git
identity, ``~/.gitconfig``, ``~/.config/dreamtui/config.toml``, a theme — can change a result. A test
that needs a git identity asks for one (:func:`git_home`); the rest run as on a newcomer's machine.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path

import pytest

# Set at import, before dreamtui (platformdirs, config defaults) reads anything of the environment.
MACHINE_ONLY = (  # variables of the machine or of the person that change what git, Textual or dreamtui do
    "GIT_AUTHOR_NAME",
    "GIT_AUTHOR_EMAIL",
    "GIT_AUTHOR_DATE",
    "GIT_COMMITTER_NAME",
    "GIT_COMMITTER_EMAIL",
    "GIT_COMMITTER_DATE",
    "EMAIL",
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_CEILING_DIRECTORIES",
    "GIT_CONFIG",
    "GIT_CONFIG_COUNT",
    "GIT_CONFIG_PARAMETERS",
    "GIT_TEMPLATE_DIR",
    "NO_COLOR",
    "FORCE_COLOR",
    "CODEX_HOME",  # another agent's folder of the person running the tests
    "COPILOT_HOME",
    "GEMINI_CLI_HOME",
)


def _sandbox_home(home: Path) -> dict[str, str]:
    """The environment of a HOME of its own: XDG folders inside it, git reading only its config."""
    return {
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "GIT_CONFIG_GLOBAL": str(home / ".gitconfig"),  # absent: no identity, no settings
        "GIT_CONFIG_NOSYSTEM": "1",
    }


_TESTS_OWN = ("DREAMTUI_TEST_SHARED", "DREAMTUI_COPILOT_REAL", "DREAMTUI_COPILOT_HISTORY_REAL")
"""Where real files the repository may not hold are (``../shared``; Copilot CLI's real logs and history
documents, not redistributable): kept for the tests that read them."""
_PROCESS_HOME = Path(tempfile.mkdtemp(prefix="dreamtui-tests-home-"))
atexit.register(shutil.rmtree, _PROCESS_HOME, True)
for _name in list(os.environ):
    if _name in _TESTS_OWN or _name.startswith("TEXTUAL_SNAPSHOT"):
        continue  # the tests' own: where the real transcripts are; pytest-textual-snapshot's report folder
    if _name in MACHINE_ONLY or _name.startswith(
        ("DREAMTUI_", "TEXTUAL_", "GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_")
    ):
        del os.environ[_name]
os.environ.update(_sandbox_home(_PROCESS_HOME))

from dreamtui.core.config import Config  # noqa: E402  (after the environment is set)
from dreamtui.core.ledger import Ledger  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
SHARED = Path(
    os.environ.get("DREAMTUI_TEST_SHARED") or REPO.parent / "shared"
)  # a worktree elsewhere: set it
CORPUS = SHARED / "corpus" / "projects"
FIXTURES = Path(__file__).resolve().parent / "fixtures"


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    """No test ever touches the real ~/.claude, the user's state dir, git config or a real API key:
    each test has an empty HOME of its own (outside ``tmp_path``) and no git identity. The config file
    is an empty one of the test's own (a missing file named by DREAMTUI_CONFIG is an error)."""
    for name in list(os.environ):
        if name.startswith("DREAMTUI_") or name in {
            "ANTHROPIC_API_KEY",
            "ANTHROPIC_BASE_URL",
            "OPENAI_API_KEY",
            "OPENAI_BASE_URL",
            "CLAUDE_CODE_OAUTH_TOKEN",
            *MACHINE_ONLY,
        }:
            monkeypatch.delenv(name, raising=False)
    for name, value in _sandbox_home(tmp_path_factory.mktemp("home")).items():
        monkeypatch.setenv(name, value)
    empty = tmp_path_factory.mktemp("config") / "no-config.toml"  # beside tmp_path, not in it
    empty.touch()
    monkeypatch.setenv("DREAMTUI_CONFIG", str(empty))


@pytest.fixture
def git_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A HOME whose only git config is an identity, so commits work and nothing of the user's is read."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    (home / ".gitconfig").write_text("[user]\n\tname = Person\n\temail = person@example.com\n")
    for name, value in _sandbox_home(home).items():
        monkeypatch.setenv(name, value)
    return home


@pytest.fixture
def no_git_identity(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A newcomer's machine: an empty HOME, no git identity anywhere (no config file, no variable)."""
    home = tmp_path / "empty-home"
    home.mkdir(exist_ok=True)
    for name, value in _sandbox_home(home).items():
        monkeypatch.setenv(name, value)
    return home


@pytest.fixture
def tui_setup(tmp_path: Path):
    """The app's test world: a config in tmp_path, its ledger, and the ids of the sample proposals."""
    from fakes.tui import add_candidates, make_config

    cfg = make_config(tmp_path)
    led = Ledger.open(cfg.state)
    ids = add_candidates(cfg, led)
    yield cfg, led, ids
    led.close()


@pytest.fixture
def corpus() -> Path:
    """The real transcripts in ../shared/corpus/projects (skips when absent)."""
    if not CORPUS.is_dir():
        pytest.skip("../shared/corpus is not present")
    return CORPUS


@pytest.fixture
def config(tmp_path: Path) -> Config:
    """A Config whose transcripts, memory and state live in a temporary folder."""
    (tmp_path / "transcripts").mkdir()
    return Config(
        transcripts=tmp_path / "transcripts",
        memory=tmp_path / "memory",
        state=tmp_path / "state",
        extractor="heuristic",
    )


@pytest.fixture
def ledger(config: Config) -> Ledger:
    """A fresh ledger in the temporary state folder."""
    led = Ledger.open(config.state)
    yield led
    led.close()


@pytest.fixture
def fresh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """The app's world: demo transcripts and memory, an empty ledger (nothing dreamed yet), the clock
    at the demo's date."""
    from fakes.tui import make_config

    monkeypatch.setenv("DREAMTUI_NOW", "2026-11-28T18:30:00Z")
    cfg = make_config(tmp_path)
    ledger = Ledger.open(cfg.state)
    yield cfg, ledger
    ledger.close()


@pytest.fixture(autouse=True)
def _recorded_notifications(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every app's notifications are recorded (``fakes.notes``): toasts time out, records do not."""
    from fakes.notes import record_notifications

    record_notifications(monkeypatch)
