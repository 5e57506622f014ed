"""Issue 31: Claude Code's and Codex CLI's sessions of one repository meet in one project — one
``dreamtui dream``, one queue, one memory folder, one dedup scope — each proposal marked with its agent
and each quote verified against its own file. Real git repositories, the real CLI, cycle, gate, ledger
and memory repository; the Codex rollout is written where ``CODEX_HOME`` says, nested by date."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner
from fakes.cli_world import folder_args
from fakes.codex_rollout import FORGED, write_rollout
from fakes.gitrepo import git_as_tester as git
from fakes.transcript import write_session

from dreamtui.cli.main import cli
from dreamtui.core.config import Config
from dreamtui.core.ledger import Ledger
from dreamtui.core.memory import decisions
from dreamtui.core.memory import layout as memory
from dreamtui.core.repository import encode_path
from dreamtui.services.workspace import Workspace

NOW = "2026-03-10T23:00:00Z"
WRITTEN = 1773180000.0  # an hour before NOW: past the quiet period
CI = "Never push to the release branch without a green CI run, it deploys straight to customers."
MIGRATIONS = "From now on always run the migrations against the throwaway container before touching them."
CODEX_SESSION = "019e1625-0000-7000-8000-00000000c0de"
CLAUDE_SESSION = "5e55a0a0-1111-4222-8333-444455556666"


@pytest.fixture(autouse=True)
def _world(git_home: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.setenv("DREAMTUI_NOW", NOW)
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex-home"))
    return tmp_path / "codex-home" / "sessions"


def _repository(tmp_path: Path) -> Path:
    main = (tmp_path / "src" / "spotter").resolve()
    main.mkdir(parents=True)
    git("init", "-q", cwd=main)
    git("commit", "-q", "--allow-empty", "-m", "start", cwd=main)
    return main


def _claude(config: Config, cwd: Path, text: str) -> Path:
    path = write_session(
        config.transcripts,
        [("person", text), ("assistant", "Understood.")],
        project=encode_path(str(cwd)),
        session=CLAUDE_SESSION,
        cwd=str(cwd),
    )
    os.utime(path, (WRITTEN, WRITTEN))
    return path


def _codex(cwd: Path, text: str, tmp_path: Path) -> Path:
    return write_rollout(
        tmp_path / "codex-home" / "sessions",
        str(cwd),
        [("person", text), ("assistant", "Understood, I will keep to that.")],
        session=CODEX_SESSION,
        mtime=WRITTEN,
    )


def test_one_dream_gives_one_queue_for_a_repository_worked_on_by_claude_code_and_codex(
    tmp_path: Path, config: Config, ledger: Ledger
) -> None:
    repo = _repository(tmp_path)
    (repo / "backend").mkdir()
    claude = _claude(config, repo, MIGRATIONS)
    codex = _codex(repo / "backend", CI, tmp_path)  # Codex started in a subfolder of the repository
    dreamed = CliRunner().invoke(cli, [*folder_args(config), "--extractor", "heuristic", "dream", "--json"])
    assert dreamed.exit_code == 0, dreamed.output
    assert json.loads(dreamed.stdout)["stats"]["sessions_new"] == 2

    key = encode_path(str(repo))  # the folder Claude Code gives the repository
    pending = ledger.list_candidates(status="pending")
    assert {c.session for c in pending} == {CLAUDE_SESSION, CODEX_SESSION}
    assert {c.project for c in pending} == {key}  # one project: one queue, one dedup scope
    for c in pending:  # each quote verified against its own agent's file, as the person's words
        own = str(claude if c.session == CLAUDE_SESSION else codex)
        assert c.transcript == own and c.matches and {m.file for m in c.matches} == {own}
        assert c.matches[0].provenance == "person"
        assert FORGED[:30] not in c.quote and "French" not in c.quote  # tool output, AGENTS.md: never
    with Workspace(config, ledger) as ws:
        agents = {r.session: r.agent for r in ws.queue_rows()}
        sessions = {(s.project, s.session) for s in ws.sessions()}
    assert agents == {CLAUDE_SESSION: "Claude Code", CODEX_SESSION: "Codex CLI"}
    listed = CliRunner().invoke(cli, [*folder_args(config), "candidates", "--status", "pending", "--json"])
    assert {(c["session"], c["agent"]) for c in json.loads(listed.stdout)} == set(agents.items())
    assert sessions == {(key, CLAUDE_SESSION), (key, CODEX_SESSION)}

    codex_lesson = next(c for c in pending if c.session == CODEX_SESSION)
    rel = decisions.accept(config, ledger, codex_lesson.id).path  # the one memory folder of the repository
    assert rel.startswith(f"projects/{memory.project_folder(key)}/")

    again = CliRunner().invoke(cli, [*folder_args(config), "--extractor", "heuristic", "dream", "--json"])
    assert again.exit_code == 0, again.output
    assert len(ledger.list_candidates(status="pending")) == 1  # nothing dreamed twice


def test_a_repository_only_codex_has_seen_is_keyed_by_its_root(
    tmp_path: Path, config: Config, ledger: Ledger
) -> None:
    repo = _repository(tmp_path)
    (repo / "web" / "src").mkdir(parents=True)
    _codex(repo / "web" / "src", CI, tmp_path)
    dreamed = CliRunner().invoke(cli, [*folder_args(config), "--extractor", "heuristic", "dream", "--json"])
    assert dreamed.exit_code == 0, dreamed.output
    assert {c.project for c in ledger.list_candidates(status="pending")} == {encode_path(str(repo))}
