"""The demo shows every agent it has sessions of, and reads nothing but its own copies.

``prepare_demo`` is given a person's config whose folders, and whose default folders (``~/.claude``,
``$CODEX_HOME``, ``~/.gemini``, ``$COPILOT_HOME``, ``$XDG_DATA_HOME/opencode``, ``~/.cursor``), all hold
real sessions with a correction the offline extractor catches: none of them may reach the demo's
queue, its ledger or its folders; the demo's own Claude Code, Codex CLI, Gemini CLI and Aider sessions
all do, in one project.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from dreamtui.core.config import Config
from dreamtui.core.ingest import formats, sources
from dreamtui.core.ledger import Ledger
from dreamtui.demo import PAY_PROJECT, prepare_demo
from dreamtui.services import Workspace

FIX = Path(__file__).resolve().parent / "fixtures" / "agents"
NOT_DEMO = "Never deploy from the person's real laptop."
"""A correction in every one of the person's own sessions: the heuristic extractor proposes it."""


def _claude(folder: Path, name: str) -> None:
    """A person's Claude Code session in ``folder`` that the heuristic extractor would learn from."""
    import json

    proj = folder / "-home-person-src-secret"
    proj.mkdir(parents=True, exist_ok=True)
    lines = [
        {"type": "user", "uuid": "u1", "parentUuid": None, "sessionId": name, "cwd": "/home/person/src/secret",
         "timestamp": "2026-11-20T10:00:00.000Z", "message": {"role": "user", "content": NOT_DEMO}},
        {"type": "assistant", "uuid": "a1", "parentUuid": "u1", "sessionId": name, "cwd": "/home/person/src/secret",
         "timestamp": "2026-11-20T10:00:05.000Z",
         "message": {"role": "assistant", "content": [{"type": "text", "text": "Understood."}]}},
    ]  # fmt: skip
    (proj / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")


@pytest.fixture
def person(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Config:
    """A person's home with every agent's sessions in its default folder, and a config naming more."""
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    for var in ("CODEX_HOME", "GEMINI_CLI_HOME", "COPILOT_HOME"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(home / ".local" / "share"))
    _claude(home / ".claude" / "projects", "11111111-1111-4111-8111-111111111111")
    _claude(tmp_path / "laptop-claude", "22222222-2222-4222-8222-222222222222")
    shutil.copytree(FIX / "codex", home / ".codex" / "sessions" / "2026" / "05" / "11")
    shutil.copytree(FIX / "gemini" / "tmp", home / ".gemini" / "tmp")
    shutil.copytree(FIX / "copilot" / "session-state", home / ".copilot" / "session-state")
    shutil.copytree(FIX / "codex", tmp_path / "more-codex")
    aider = tmp_path / "src" / "tool"
    aider.mkdir(parents=True)
    shutil.copy(FIX / "aider" / "aider-ai-aider.chat.history.md", aider / ".aider.chat.history.md")
    # the person's own folders, as their config names them
    return Config(
        transcripts=home / ".claude" / "projects",
        formats={
            "claude-code": {"folders": [str(tmp_path / "laptop-claude")]},
            "codex": {"folders": [str(tmp_path / "more-codex")]},
            "aider": {"folders": [str(tmp_path / "src")]},
        },
        memory=tmp_path / "memory",
        state=tmp_path / "state",
    )


def test_the_demo_reads_only_its_own_copies_of_every_agent(person: Config, tmp_path: Path) -> None:
    # the person's sessions are really there: their own config reads every one of them
    theirs = sources.discover_all(person)
    assert {tf.format for tf in theirs} >= {"claude-code", "codex", "gemini-cli", "copilot-cli", "aider"}

    demo = tmp_path / "demo"
    cfg = prepare_demo(demo, person)

    outside = [r.folder for r in sources.roots(cfg) if not r.folder.is_relative_to(demo)]
    assert outside == []  # every folder the demo reads is its own
    found = sources.discover_all(cfg)
    assert found and all(tf.path.is_relative_to(demo) for tf in found)
    off = {name for name, table in cfg.formats.items() if table.get("enabled", True) is False}
    assert off == set(formats.FORMATS) - {"claude-code", "codex", "gemini-cli", "aider"}

    ledger = Ledger.open(cfg.state)
    try:
        read = [r["path"] for r in ledger.query("SELECT path FROM files")]
        assert read and all(Path(p.split("#")[0]).is_relative_to(demo) for p in read)
        claims = [r["claim"] for r in ledger.query("SELECT claim FROM candidates")]
        assert not any("real laptop" in c for c in claims)
    finally:
        ledger.close()
    # and the person's folders were left as they were
    assert (person.transcripts / "-home-person-src-secret").is_dir()
    assert not (tmp_path / "memory").exists() and not (tmp_path / "state").exists()


def test_the_demo_queue_has_four_agents_in_one_project(tmp_path: Path) -> None:
    cfg = prepare_demo(tmp_path / "demo")
    ws = Workspace(cfg)
    try:
        rows = ws.queue_rows()
    finally:
        ws.close()
    agents = {row.agent for row in rows if row.project == PAY_PROJECT}
    assert {"Claude Code", "Codex CLI", "Gemini CLI", "Aider"} <= agents, agents
    by_agent = {row.agent: row.claim for row in rows if row.agent != "Claude Code"}
    assert by_agent["Codex CLI"].startswith("Don't retry inside the webhook handler")
    assert by_agent["Gemini CLI"].startswith("Never use floats for money")
    assert by_agent["Aider"].startswith("Always add a line under Unreleased in CHANGELOG.md")
    assert len(rows) == 11  # the 8 Claude Code proposals of before, and one from each other agent
