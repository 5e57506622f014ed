"""A newcomer's machine: no git identity anywhere (no ~/.gitconfig, GIT_CONFIG_GLOBAL=/dev/null, no
system config, no GIT_* or EMAIL variable). dreamtui still dreams, accepts and undoes, committing as
``dreamtui <dreamtui@localhost>``, and says so once — not with every commit."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import git
from fakes.cli_world import LESSON_TURNS, write_records

from dreamtui.core.memory import gitops

MAIN = "from dreamtui.cli.main import main; main()"
NOTICE = "git has no user.name/user.email"


def run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    (tmp_path / "none.toml").touch()  # an empty config (a missing one named is an error)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "DREAMTUI_")) and k != "EMAIL"}
    env.update(
        HOME=str(home),
        GIT_CONFIG_GLOBAL="/dev/null",
        GIT_CONFIG_NOSYSTEM="1",
        DREAMTUI_TRANSCRIPTS=str(tmp_path / "transcripts"),
        DREAMTUI_MEMORY=str(tmp_path / "memory"),
        DREAMTUI_STATE=str(tmp_path / "state"),
        DREAMTUI_CONFIG=str(tmp_path / "none.toml"),
        DREAMTUI_EXTRACTOR="heuristic",
        DREAMTUI_NOW="2025-11-30T12:00:00Z",
    )
    for key in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
        env.pop(key, None)
    return subprocess.run(
        [sys.executable, "-c", MAIN, *args], env=env, capture_output=True, text=True, timeout=300
    )


def test_with_no_git_identity_at_all_commits_work_and_the_notice_comes_once(tmp_path: Path) -> None:
    write_records(tmp_path / "transcripts" / "-home-kim-acme", LESSON_TURNS)
    said: list[str] = []
    dreamed = run(tmp_path, "dream")
    assert dreamed.returncode == 0, dreamed.stderr
    said += [dreamed.stdout, dreamed.stderr]
    listed = run(tmp_path, "candidates", "--json")
    ids = [c["id"] for c in json.loads(listed.stdout)]
    assert ids, "the heuristic proposed nothing from the lesson turns"
    for args in (("accept", ids[0]), ("undo",), ("accept", ids[0])):
        out = run(tmp_path, *args)
        assert out.returncode == 0, (args, out.stderr)
        said += [out.stdout, out.stderr]
    assert sum(text.count(NOTICE) for text in said) == 1, said  # once, with the first commit
    repo = git.Repo(tmp_path / "memory")
    authors = {f"{c.author.name} <{c.author.email}>" for c in repo.iter_commits()}
    assert authors == {f"{gitops.FALLBACK_NAME} <{gitops.FALLBACK_EMAIL}>"}
    assert len(list(repo.iter_commits())) >= 3  # the accept, its revert, the accept again
    assert repo.git.config("--list", "--local").count("user.") == 0  # the repository's config is untouched
