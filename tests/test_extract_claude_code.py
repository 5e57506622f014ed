"""The claude-code extractor: the real Claude Agent SDK driving a stand-in Claude Code CLI
(``tests/fakes/claude_cli.py``) that speaks the SDK's stream-json protocol and checks its flags."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import anthropic
import pytest
from click.testing import CliRunner
from fakes.claude_code import FakeClaudeCode, lesson, ok
from fakes.waiting import wait_for

from dreamtui.cli.main import cli
from dreamtui.core.config import Config
from dreamtui.core.errors import ExtractorAuthError, ExtractorError, UsageLimitError
from dreamtui.core.extract import make_extractor
from dreamtui.core.extract.base import ExtractContext, Extractor, StructuredModel
from dreamtui.core.extract.claude_code import CLI_ENV, ClaudeCodeExtractor, claude_code_status, cli_model
from dreamtui.core.extract.limits import describe_reset
from dreamtui.core.extract.prompt import SYSTEM_PROMPT, ExtractionOut, split_digest, user_message
from dreamtui.core.ingest.formats.protocol import EXTRACTOR_WORKDIR
from dreamtui.core.ingest.transcripts import discover
from dreamtui.core.models import Digest, Turn

ACME = "-home-kim-acme"
SAID = "Never use pip in this repo, always use uv for every install."


@pytest.fixture
def fake(tmp_path: Path) -> FakeClaudeCode:
    return FakeClaudeCode(tmp_path / "fake-claude")


def digest(*texts: str) -> Digest:
    d = Digest("sess-1", ACME, cwd="/home/kim/acme")
    for i, text in enumerate(texts or (SAID,)):
        d.turns.append(Turn("person", text, "sess-1.jsonl", 3 + i))
    return d


def extractor(config: Config, fake: FakeClaudeCode, **kw: object) -> ClaudeCodeExtractor:
    args = {"model": "claude-sonnet-5-5", "workdir": config.state / EXTRACTOR_WORKDIR, "timeout": 60.0}
    args.update(kw)
    return ClaudeCodeExtractor(cli_path=fake.cli, **args)  # type: ignore[arg-type]


def test_one_call_sends_the_api_paths_prompt_and_schema_with_no_tools_one_turn_and_no_transcript(
    config: Config, fake: FakeClaudeCode
) -> None:
    fake.answer(ok([lesson(SAID, "Use uv, never pip, in this repo.")], cost=0.0213))
    ex = extractor(config, fake)
    d, context = digest(), ExtractContext(project=ACME, memories=("Run the linter before committing.",))

    result = ex.extract(d, context)

    [call] = fake.calls()
    assert call["problems"] == []  # the stand-in refuses a command line dreamtui must never send
    flags = call["flags"]
    assert flags["--system-prompt"] == SYSTEM_PROMPT  # the API path's prompt, from prompt.py
    assert json.loads(flags["--json-schema"]) == anthropic.transform_schema(ExtractionOut)  # its schema
    assert flags["--tools"] == "" and flags["--max-turns"] == "1" and "--no-session-persistence" in flags
    assert flags["--setting-sources"] == "" and "--strict-mcp-config" in flags  # no hooks, MCP, CLAUDE.md
    assert flags["--model"] == "claude-sonnet-5-5"
    assert Path(call["cwd"]) == config.state / EXTRACTOR_WORKDIR  # its own working directory
    assert call["env"]["CLAUDE_CODE_MAX_OUTPUT_TOKENS"] == "4096"
    assert call["env"]["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"] == "1"
    [part] = split_digest(d, context.max_chars)
    assert fake.prompts() == [user_message(d, context, part)]  # the API path's user message, exactly
    init = call["stdin"][0]
    assert init["type"] == "control_request" and init["request"]["subtype"] == "initialize"

    [cand] = result.candidates
    assert (cand.claim, cand.quote, cand.extractor, cand.model) == (
        "Use uv, never pip, in this repo.",
        SAID,
        "claude-code",
        "claude-sonnet-5-5",
    )
    assert cand.scope == ACME and result.error is None
    u = result.usage  # counted as the API path counts it: cache writes are input
    assert (u.calls, u.input_tokens, u.output_tokens, u.cached_tokens, u.cost_usd) == (
        1,
        1500,
        180,
        2000,
        0.0213,
    )


@pytest.mark.parametrize(
    ("given", "flag"), [("opus", "opus"), ("haiku", "haiku"), ("default", None), ("", None)]
)
def test_the_model_is_the_one_model_chooses(
    config: Config, fake: FakeClaudeCode, given: str, flag: str | None
) -> None:
    assert cli_model(given) == flag
    extractor(config, fake, model=given).extract(digest(), ExtractContext(project=ACME))
    [call] = fake.calls()
    assert call["flags"].get("--model") == flag  # no --model: Claude Code's own default


def test_a_long_session_is_one_call_per_part_and_a_half_answered_one_keeps_nothing(
    config: Config, fake: FakeClaudeCode
) -> None:
    turns = [f"{SAID} Part {i}: " + "words of the session " * 60 for i in range(6)]
    d = digest(*turns)
    context = ExtractContext(project=ACME, max_chars=3000)
    parts = split_digest(d, 3000)
    assert len(parts) > 1
    fake.answer(*[ok([lesson(SAID, "Use uv.")]) for _ in parts])
    result = extractor(config, fake).extract(d, context)
    assert fake.prompts() == [user_message(d, context, p) for p in parts]
    assert len(result.candidates) == len(parts) and result.usage.calls == len(parts)
    assert any("split into" in n for n in result.notes)

    fake.answer(ok([lesson(SAID, "Use uv.")]), {"kind": "usage_limit"})
    with pytest.raises(ExtractorAuthError, match="usage limit"):
        extractor(config, fake).extract(d, context)  # raised: nothing of the first part is returned


def test_an_answer_in_text_is_parsed_tolerantly_and_malformed_items_are_counted(
    config: Config, fake: FakeClaudeCode
) -> None:
    body = {"candidates": [lesson(SAID, "Use uv."), {"claim": "no quote"}]}
    fake.answer({"kind": "text", "text": "Here it is:\n```json\n" + json.dumps(body) + "\n```"})
    result = extractor(config, fake).extract(digest(), ExtractContext(project=ACME))
    assert [c.claim for c in result.candidates] == ["Use uv."] and result.malformed == 1


@pytest.mark.parametrize(
    ("kind", "error", "words"),
    [
        (
            "not_logged_in",
            ExtractorAuthError,
            "Claude Code is not logged in (Not logged in · Please run /login)",
        ),
        ("usage_limit", ExtractorAuthError, "usage limit is reached (You've hit your limit"),
        ("bad_model", ExtractorAuthError, "Claude Code refused model 'claude-nope'"),
        ("crash", ExtractorError, "Claude Code exited with code 3"),
    ],
)
def test_each_failure_is_one_clear_line(
    config: Config, fake: FakeClaudeCode, kind: str, error: type[Exception], words: str
) -> None:
    fake.answer({"kind": kind})
    with pytest.raises(error) as info:
        extractor(config, fake, model="claude-nope").extract(digest(), ExtractContext(project=ACME))
    message = str(info.value)
    assert words in message and "\n" not in message
    assert isinstance(info.value, ExtractorAuthError) == (kind != "crash")  # these stop the other sessions
    if kind == "usage_limit":  # it says when the limit resets (the stand-in's "resets 3am (UTC)")
        assert isinstance(info.value, UsageLimitError) and info.value.resets_at is not None
        assert (info.value.resets_at.hour, info.value.resets_at.minute) == (3, 0)
        assert f"it resets {describe_reset(info.value.resets_at)}" in message


def test_a_hung_cli_is_a_timeout_and_its_process_is_ended(config: Config, fake: FakeClaudeCode) -> None:
    fake.answer({"kind": "hang"})
    started = time.monotonic()
    with pytest.raises(ExtractorError, match=r"did not answer within 1s") as info:
        extractor(config, fake, timeout=1.0).extract(digest(), ExtractContext(project=ACME))
    assert not isinstance(info.value, ExtractorAuthError)  # the next session may still be answered
    assert time.monotonic() - started < 30
    [call] = fake.calls()
    assert wait_for(lambda: not alive(call["pid"]))  # the SDK ended the hung process (SIGTERM after 5 s)


def alive(pid: int) -> bool:
    """Whether ``pid`` is still a running process (a reaped or a zombie one is not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
    except OSError:
        try:
            os.kill(pid, 0)
        except OSError:
            return False
        return True
    return state != "Z"


def test_no_cli_is_one_line_that_stops_the_cycle(config: Config, tmp_path: Path) -> None:
    ex = ClaudeCodeExtractor(
        model="sonnet", workdir=config.state / EXTRACTOR_WORKDIR, cli_path=tmp_path / "none"
    )
    with pytest.raises(ExtractorAuthError, match="Claude Code not found at"):
        ex.extract(digest(), ExtractContext(project=ACME))


def test_capabilities_are_declared_by_each_extractor(
    config: Config, fake: FakeClaudeCode, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CLI_ENV, str(fake.cli))
    ex = make_extractor(config.changed(extractor="claude-code", model="opus"))
    assert isinstance(ex, ClaudeCodeExtractor) and isinstance(ex, Extractor)
    model = ex.structured()
    assert isinstance(model, StructuredModel) and (model.name, model.model) == ("claude-code", "opus")
    assert ex.capabilities.batches is False and ex.capabilities.model_backed is True
    assert make_extractor(config.changed(extractor="heuristic")).structured() is None
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-key")
    anth = make_extractor(config.changed(extractor="anthropic"))
    assert anth.capabilities.batches is True and anth.structured().name == "anthropic"  # type: ignore[union-attr]


def test_config_shows_the_claude_code_model_judges_duplicates(
    tmp_path: Path, fake: FakeClaudeCode, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CLI_ENV, str(fake.cli))
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    toml = tmp_path / "c.toml"
    toml.write_text('extractor = "claude-code"\n')
    result = CliRunner().invoke(cli, ["--config", str(toml), "config"])
    assert result.exit_code == 0, result.output
    assert "extractor: claude-code" in result.output
    assert "dedup_judge: auto (on: the claude-code model judges duplicates)" in result.output
    assert fake.calls() == []  # showing the config starts no Claude Code


def test_a_transcript_left_in_the_extractors_working_directory_is_never_discovered(config: Config) -> None:
    # Claude Code's project folder for a cwd: every character but letters and digits a dash
    own = str(config.state / EXTRACTOR_WORKDIR).replace("/", "-").replace(".", "-").replace("_", "-")
    for project in (own, ACME):
        folder = config.transcripts / project
        folder.mkdir(parents=True)
        (folder / "0b7c1d2e-0000-4000-8000-000000000001.jsonl").write_text(
            json.dumps({"type": "user", "sessionId": "x", "message": {"role": "user", "content": "hi"}})
            + "\n"
        )
    assert {tf.project for tf in discover(config.transcripts)} == {ACME}


def test_status_is_none_only_with_a_cli_and_a_likely_login(
    tmp_path: Path, fake: FakeClaudeCode, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.delenv("CLAUDE_CODE_OAUTH_TOKEN", raising=False)
    monkeypatch.setenv(CLI_ENV, str(tmp_path / "missing"))
    assert claude_code_status() == f"Claude Code not found at {tmp_path / 'missing'} (${CLI_ENV})"
    monkeypatch.setenv(CLI_ENV, str(fake.cli))
    reason = claude_code_status()
    # no claude on PATH here: the hint names the CLI dreamtui runs, not a `claude` the person does not have
    assert reason is not None and reason.startswith(f"Claude Code is not logged in: run `{fake.cli}`")
    monkeypatch.setenv("CLAUDE_CODE_OAUTH_TOKEN", "sk-ant-oat01-test")
    assert claude_code_status() is None
    monkeypatch.delenv("CLAUDE_CODE_OAUTH_TOKEN")
    (home / ".claude").mkdir()
    (home / ".claude" / ".credentials.json").write_text("{}")
    assert claude_code_status() is None
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "elsewhere"))
    assert claude_code_status() is not None  # the credentials live where CLAUDE_CONFIG_DIR says
    assert fake.calls() == []  # cheap checks only: no claude process


@pytest.mark.slow
def test_the_real_bundled_cli_without_a_login_is_the_not_logged_in_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The stand-in's error shape checked against the real thing: the CLI the SDK wheel bundles, run
    with an empty HOME (no login, so it answers before any model call; no network needed)."""
    from dreamtui.core.extract.claude_code import find_cli

    for name in (
        CLI_ENV,
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "CLAUDE_CODE_OAUTH_TOKEN",
        "CLAUDE_CONFIG_DIR",
    ):
        monkeypatch.delenv(name, raising=False)
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    cli = find_cli()
    if cli is None or "_bundled" not in str(cli):
        pytest.skip("the claude-agent-sdk wheel for this platform bundles no CLI")
    ex = ClaudeCodeExtractor(model="sonnet", workdir=tmp_path / "state" / EXTRACTOR_WORKDIR, timeout=120.0)
    with pytest.raises(ExtractorAuthError, match=r"^Claude Code is not logged in \(Not logged in"):
        ex.extract(digest(), ExtractContext(project=ACME))
    assert not (home / ".claude" / "projects").exists()  # it left no transcript behind
