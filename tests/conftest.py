"""Shared fixtures. Tests that read ../shared skip cleanly when it is absent."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from dreamtui.core.config import Config
from dreamtui.core.ledger import Ledger

REPO = Path(__file__).resolve().parent.parent
SHARED = Path(
    os.environ.get("DREAMTUI_TEST_SHARED") or REPO.parent / "shared"
)  # a worktree elsewhere: set it
CORPUS = SHARED / "corpus" / "projects"
FIXTURES = Path(__file__).resolve().parent / "fixtures"


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    """No test ever touches the real ~/.claude, the user's state dir, or a real API key. The config
    file is an empty one of the test's own (a missing file named by DREAMTUI_CONFIG is an error)."""
    for name in list(os.environ):
        if name.startswith("DREAMTUI_") or name in {
            "ANTHROPIC_API_KEY",
            "ANTHROPIC_BASE_URL",
            "OPENAI_API_KEY",
            "OPENAI_BASE_URL",
            "CLAUDE_CODE_OAUTH_TOKEN",
        }:
            monkeypatch.delenv(name, raising=False)
    empty = tmp_path_factory.mktemp("config") / "no-config.toml"  # beside tmp_path, not in it
    empty.touch()
    monkeypatch.setenv("DREAMTUI_CONFIG", str(empty))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")


@pytest.fixture
def git_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A HOME whose only git config is an identity, so commits work and nothing of the user's is read."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    (home / ".gitconfig").write_text("[user]\n\tname = Person\n\temail = person@example.com\n")
    monkeypatch.setenv("HOME", str(home))
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
