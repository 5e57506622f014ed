"""One repository worked on by two agents: a Claude Code session with two lessons and a Codex CLI
rollout with one, dreamed once by the real CLI (offline rules) — the queue, Sessions, stats and the
waking message then name each proposal's agent."""

from __future__ import annotations

import json
import os
from pathlib import Path

from click.testing import CliRunner

from dreamtui.cli.main import cli
from dreamtui.core.config import Config
from dreamtui.core.repository import encode_path
from fakes.cli_world import folder_args
from fakes.codex_rollout import write_rollout
from fakes.gitrepo import git_as_tester as git
from fakes.transcript import write_session

NOW = "2026-03-10T23:00:00Z"
WRITTEN = 1773180000.0  # an hour before NOW: past the quiet period
CLAUDE_LESSONS = (
    "From now on always run the migrations against the throwaway container before touching them.",
    "Never commit the generated src/api/client folder, it is rebuilt by the build step every time.",
)
CODEX_LESSON = "Never push to the release branch without a green CI run, it deploys straight to customers."
CLAUDE_SESSION = "5e55a0a0-1111-4222-8333-444455556666"
CODEX_SESSION = "019e1625-0000-7000-8000-00000000c0de"


def two_agents(config: Config, tmp_path: Path, *, as_json: bool = True) -> dict | str:
    """Write both sessions (``CODEX_HOME`` must point at ``tmp_path / "codex-home"``) and dream them;
    returns the dream's ``--json`` (else the waking message it printed)."""
    repo = (tmp_path / "src" / "spotter").resolve()
    repo.mkdir(parents=True)
    git("init", "-q", cwd=repo)
    git("commit", "-q", "--allow-empty", "-m", "start", cwd=repo)
    turns: list[tuple[str, str]] = []
    for lesson in CLAUDE_LESSONS:
        turns += [("person", lesson), ("assistant", "Understood.")]
    path = write_session(
        config.transcripts, turns, project=encode_path(str(repo)), session=CLAUDE_SESSION, cwd=str(repo)
    )
    os.utime(path, (WRITTEN, WRITTEN))
    write_rollout(
        tmp_path / "codex-home" / "sessions",
        str(repo),
        [("person", CODEX_LESSON), ("assistant", "Understood, I will keep to that.")],
        session=CODEX_SESSION,
        mtime=WRITTEN,
    )
    args = [*folder_args(config), "--extractor", "heuristic", "dream", *(["--json"] if as_json else [])]
    dreamed = CliRunner().invoke(cli, args)
    assert dreamed.exit_code == 0, dreamed.output
    return json.loads(dreamed.stdout) if as_json else dreamed.stdout
