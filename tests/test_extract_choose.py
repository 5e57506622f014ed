"""``auto`` picks the best extractor the person has: an API key, then a logged-in Claude Code, then a
configured local model server, else the offline rules; the situation is set up through the
environment (PATH with or without a ``claude`` program, HOME with or without its credentials)."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from dreamtui.cli.main import cli
from dreamtui.core.config import Config, load_config
from dreamtui.core.errors import ConfigError
from dreamtui.core.extract import make_extractor
from dreamtui.core.extract.choose import THIN_QUEUE, choose
from dreamtui.core.extract.openai_ext import OpenAIExtractor

LOCAL = "http://localhost:11434/v1"
HAS_CLAUDE_CODE_EXTRACTOR = importlib.util.find_spec("dreamtui.core.extract.claude_code_ext") is not None
needs_claude_code_extractor = pytest.mark.skipif(
    not HAS_CLAUDE_CODE_EXTRACTOR, reason="this branch has no claude-code extractor yet"
)


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """An empty HOME and a PATH with nothing on it; ``claude(logged_in=…)`` installs a fake CLI."""
    home, bin_dir = tmp_path / "home", tmp_path / "bin"
    home.mkdir()
    bin_dir.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("PATH", str(bin_dir))

    class World:
        def claude(self, *, logged_in: bool) -> None:
            exe = bin_dir / "claude"
            exe.write_text("#!/bin/sh\necho '2.1.0 (Claude Code)'\n")
            exe.chmod(0o755)
            if logged_in:
                (home / ".claude").mkdir(exist_ok=True)
                (home / ".claude" / ".credentials.json").write_text('{"claudeAiOauth": {"accessToken": "x"}}')

    return World()


def test_nothing_at_all_is_the_heuristic_with_its_thin_queue_note(world) -> None:
    choice = choose(Config(extractor="auto"))
    assert (choice.kind, choice.auto) == ("heuristic", True)
    assert "no ANTHROPIC_API_KEY" in choice.reason and choice.note == THIN_QUEUE
    assert "docs/extractors.md" in THIN_QUEUE


def test_an_api_key_beats_everything(world, monkeypatch) -> None:
    world.claude(logged_in=True)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    choice = choose(Config(extractor="auto", openai_base_url=LOCAL))
    assert choice.kind == "anthropic" and "ANTHROPIC_API_KEY" in choice.reason and choice.note is None


@needs_claude_code_extractor
def test_a_logged_in_claude_code_beats_a_local_server(world) -> None:
    world.claude(logged_in=True)
    assert choose(Config(extractor="auto", openai_base_url=LOCAL)).kind == "claude-code"


@needs_claude_code_extractor
def test_an_oauth_token_counts_as_a_login(world, monkeypatch) -> None:
    world.claude(logged_in=False)
    monkeypatch.setenv("CLAUDE_CODE_OAUTH_TOKEN", "sk-ant-oat01-test")
    assert choose(Config(extractor="auto")).kind == "claude-code"


def test_claude_without_a_login_falls_through_to_the_local_server(world) -> None:
    world.claude(logged_in=False)
    choice = choose(Config(extractor="auto", openai_base_url=LOCAL, openai_model="qwen3:4b"))
    assert choice.kind == "openai" and LOCAL in choice.reason and "qwen3:4b" in choice.reason


def test_credentials_without_the_cli_fall_through_to_the_heuristic(world, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("DREAMTUI_CLAUDE_CLI", str(tmp_path / "no-such-claude"))
    (tmp_path / "home" / ".claude").mkdir()
    (tmp_path / "home" / ".claude" / ".credentials.json").write_text("{}")
    assert choose(Config(extractor="auto")).kind == "heuristic"


def test_a_named_extractor_is_never_second_guessed(world, monkeypatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    choice = choose(Config(extractor="heuristic"))
    assert (choice.kind, choice.auto) == ("heuristic", False) and "configuration" in choice.reason
    assert choose(Config(extractor="command")).kind == "command"


def test_a_local_server_from_the_environment_or_the_file_is_picked_and_built(
    world, monkeypatch, tmp_path
) -> None:
    monkeypatch.setenv("DREAMTUI_OPENAI_BASE_URL", "http://localhost:8080/v1/")
    cfg = load_config()
    assert cfg.openai_base_url == "http://localhost:8080/v1"  # the trailing slash dropped
    ex = make_extractor(cfg)  # no network: a configured server counts, a down one fails when asked
    assert isinstance(ex, OpenAIExtractor) and ex.base_url == "http://localhost:8080/v1"
    monkeypatch.delenv("DREAMTUI_OPENAI_BASE_URL")
    toml = tmp_path / "c.toml"
    toml.write_text(f'openai_base_url = "{LOCAL}"\nopenai_model = "llama3.2:3b"\n')
    cfg = load_config(toml)
    assert choose(cfg).kind == "openai" and cfg.openai_model == "llama3.2:3b"


def test_a_base_url_that_is_not_http_is_a_one_line_error(tmp_path) -> None:
    toml = tmp_path / "c.toml"
    toml.write_text('openai_base_url = "localhost:11434"\n')
    with pytest.raises(ConfigError) as info:
        load_config(toml)
    assert str(info.value) == (
        "config 'openai_base_url' must be an http(s) URL such as http://localhost:11434/v1, not 'localhost:11434'"
    )


def test_dreamtui_config_prints_the_choice_and_the_openai_settings_with_the_key_hidden(
    world, tmp_path
) -> None:
    env = {
        "DREAMTUI_OPENAI_BASE_URL": LOCAL,
        "DREAMTUI_OPENAI_MODEL": "qwen3:4b",
        "DREAMTUI_OPENAI_API_KEY": "lm-studio-secret-1234",
        "DREAMTUI_STATE": str(tmp_path / "state"),
        "DREAMTUI_MEMORY": str(tmp_path / "memory"),
    }
    result = CliRunner().invoke(cli, ["config"], env=env)
    assert result.exit_code == 0, result.output
    out = result.output
    assert f"extractor: openai (configured: auto; auto: a local model server is configured ({LOCAL}" in out
    assert f"openai_base_url: {LOCAL}" in out and "openai_model: qwen3:4b" in out
    assert "openai_api_key: (set, 21 characters, hidden)" in out and "secret-1234" not in out
    result = CliRunner().invoke(cli, ["config"], env={**env, "DREAMTUI_OPENAI_BASE_URL": ""})
    assert "extractor: heuristic" in result.output and THIN_QUEUE in result.output
    assert "openai_api_key" in result.output and os.environ.get("OPENAI_API_KEY") is None


# -- the waking message ----------------------------------------------------------------------------


def _quiet_cycle(config: Config, ledger, monkeypatch):
    from dreamtui.core.dream.run import run_cycle
    from dreamtui.core.dream.waking import waking_message
    from tests.fakes.cycle_world import NOW, install

    monkeypatch.setenv("DREAMTUI_NOW", NOW)
    install(config, "quiet")
    return waking_message(run_cycle(config, ledger))


def test_the_waking_message_says_the_heuristic_queue_will_be_thin(
    config, ledger, monkeypatch, tmp_path
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    text = _quiet_cycle(config.changed(extractor="auto"), ledger, monkeypatch)
    assert (
        "extractor heuristic (auto: no ANTHROPIC_API_KEY, no Claude Code login, no local model configured)."
        in text
    )
    assert f"Extractor: {THIN_QUEUE}." in text


def test_the_waking_message_says_why_auto_chose_the_local_model(
    config, ledger, monkeypatch, tmp_path
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    local = config.changed(extractor="auto", openai_base_url=LOCAL, openai_model="qwen3:4b")
    text = _quiet_cycle(local, ledger, monkeypatch)
    assert (
        f"extractor openai / qwen3:4b (auto: a local model server is configured ({LOCAL}, qwen3:4b))." in text
    )
    assert "offline rules" not in text
