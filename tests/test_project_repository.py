"""A project is its repository: sessions run in the worktrees of one git repository get one name."""

from __future__ import annotations

from pathlib import Path

import pytest
from fakes.gitrepo import git_as_tester as git
from fakes.transcript import write_session

from dreamtui.core.ingest.project_name import ProjectNames, project_name
from dreamtui.core.models import Digest
from dreamtui.core.repository import repository_name, repository_root


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A real repository ``spotter`` with a worktree named after a ticket beside it."""
    main = tmp_path / "src" / "spotter"
    main.mkdir(parents=True)
    git("init", "-q", cwd=main)
    git("commit", "-q", "--allow-empty", "-m", "start", cwd=main)
    (main / "backend").mkdir()
    git("worktree", "add", "-q", str(tmp_path / "src" / "elsewhere" / "spotter-a0y"), cwd=main)
    return main


def test_a_worktree_on_this_machine_is_named_after_its_main_worktree(repo: Path, tmp_path: Path) -> None:
    worktree = tmp_path / "src" / "elsewhere" / "spotter-a0y"  # no layout in its path: git says so
    assert repository_root(str(worktree)) == str(repo.resolve())
    assert repository_name(str(worktree)) == "spotter"
    assert repository_name(str(repo / "backend")) == "spotter"  # a folder inside the repository
    assert Digest(session="s", project="-x", cwd=str(worktree)).project_name == "spotter"


def test_a_folder_outside_any_repository_keeps_its_own_name(tmp_path: Path) -> None:
    plain = tmp_path / "notes" / "spotter-a0y"
    plain.mkdir(parents=True)
    assert repository_name(str(plain)) == "spotter-a0y"


@pytest.mark.parametrize(
    ("cwd", "name"),
    [
        ("/gone/kim/spotter-worktrees/spotter-a0y", "spotter"),
        ("/gone/kim/spotter/.worktrees/fix-login", "spotter"),
        ("/gone/kim/tap-edu-backend/.claude/worktrees/frosty-mestorf", "tap-edu-backend"),
        ("/gone/kim/app/.git/worktrees/w1", "app"),
        ("C:\\gone\\kim\\app\\.worktrees\\w2", "app"),
        # conservative: only those shapes; anything else is the folder itself
        ("/gone/kim/spotter-worktrees", "spotter-worktrees"),
        ("/gone/kim/worktrees/spotter-a0y", "spotter-a0y"),
        ("/gone/kim/spotter-worktrees/spotter-a0y/backend", "backend"),
        ("/gone/kim/src/payments-api", "payments-api"),
    ],
)
def test_a_worktree_that_is_not_on_this_machine_is_recognised_from_its_path(cwd: str, name: str) -> None:
    assert repository_name(cwd) == name


def test_the_queue_names_a_worktree_sessions_project_after_its_repository(tmp_path: Path) -> None:
    transcripts = tmp_path / "projects"
    folder = "-gone-kim-spotter-worktrees-spotter-a0y"
    path = write_session(transcripts, [("person", "hello there")], project=folder)
    path.write_text(path.read_text().replace("/home/kim/shop", "/gone/kim/spotter-worktrees/spotter-a0y"))
    assert project_name(transcripts, folder) == "spotter"
    assert ProjectNames(transcripts)(folder, str(path)) == "spotter"


def test_the_demos_memory_and_its_accepted_lessons_share_one_folder_per_project(tmp_path: Path) -> None:
    from dreamtui.core.ledger import Ledger
    from dreamtui.core.memory import decisions
    from dreamtui.core.memory.layout import project_folder
    from dreamtui.demo import PAY_FOLDER, PAY_PROJECT, prepare_demo

    assert project_folder(PAY_PROJECT) == PAY_FOLDER
    cfg = prepare_demo(tmp_path / "demo")
    ledger = Ledger.open(cfg.state)
    try:
        pending = [c for c in ledger.list_candidates(status="pending") if c.project == PAY_PROJECT]
        assert pending
        decisions.accept(cfg, ledger, pending[0].id, edits={"scope": "project"})
    finally:
        ledger.close()
    folders = sorted(p.name for p in (cfg.memory / "projects").iterdir())
    assert [f for f in folders if "payments-api" in f] == [PAY_FOLDER]
    assert len(list((cfg.memory / "projects" / PAY_FOLDER).glob("*.md"))) == 2
