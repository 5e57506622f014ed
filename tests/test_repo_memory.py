"""A project is its repository (issue 21 item 5): the sessions of every worktree of one git repository
are one project — one key in the ledger, one memory folder, one entry on the Sessions screen, one
dedup scope — found from the transcript alone, and kept when the worktree is removed. Rows and
memories filed under a worktree's own folder before this stay found. Real git repositories, real
``git worktree add``/``remove``, the real cycle, gate, ledger and memory repository."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner
from fakes.cli_world import folder_args
from fakes.gitrepo import git_as_tester as git
from fakes.scopes import CLAIM_2, QUOTE_2, SAID, SAID_2, run, topic
from fakes.transcript import write_session

from dreamtui.cli.main import cli
from dreamtui.core.config import Config
from dreamtui.core.dream.adhoc import extract_session
from dreamtui.core.dream.run import run_cycle
from dreamtui.core.dream.sessions import project_map, transcript_folders
from dreamtui.core.ingest.project_name import ProjectNames
from dreamtui.core.ingest.projects import ProjectMap, encode_path, folder_key
from dreamtui.core.ledger import Ledger
from dreamtui.core.memory import briefing, decisions
from dreamtui.core.memory import layout as memory
from dreamtui.core.repository import by_dotgit, by_git
from dreamtui.services.workspace import Workspace

NOW = "2026-03-10T23:00:00Z"
WRITTEN = 1773180000.0  # an hour before NOW: past the quiet period
CI = "Never push to the release branch without a green CI run, it deploys straight to customers."
MIGRATIONS = "From now on always run the migrations against the throwaway container before touching them."


class Repo:
    """A real repository ``spotter``, a worktree named after a ticket somewhere else (only git knows it
    is one) and one in the ``<repo>-worktrees/<w>`` layout; each path's transcript folder name."""

    def __init__(self, tmp_path: Path) -> None:
        self.main = (tmp_path / "src" / "spotter").resolve()
        self.main.mkdir(parents=True)
        git("init", "-q", cwd=self.main)
        git("commit", "-q", "--allow-empty", "-m", "start", cwd=self.main)
        self.ticket = self.main.parent.parent / "tickets" / "a0y"
        self.laid_out = self.main.parent / "spotter-worktrees" / "spotter-b1c"
        for where in (self.ticket, self.laid_out):
            git("worktree", "add", "-q", str(where), cwd=self.main)
        self.key = encode_path(str(self.main))  # what Claude Code names the main worktree's folder

    @staticmethod
    def folder(path: Path) -> str:
        return encode_path(str(path))

    def remove_worktrees(self) -> None:
        for where in (self.ticket, self.laid_out):
            git("worktree", "remove", "--force", str(where), cwd=self.main)
            assert not where.exists()
        by_git.cache_clear()  # this process asked git while they existed


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    return Repo(tmp_path)


@pytest.fixture(autouse=True)
def _world(git_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Commits need an identity (and nothing of the user's); the clock is an hour after the sessions."""
    monkeypatch.setenv("DREAMTUI_NOW", NOW)


def session_in(config: Config, where: Path, sid: str, text: str) -> Path:
    """A finished session run in ``where``, in the transcript folder Claude Code gives that path."""
    path = write_session(
        config.transcripts,
        [("person", text), ("assistant", "Understood.")],
        project=encode_path(str(where)),
        session=sid,
        cwd=str(where),
    )
    os.utime(path, (WRITTEN, WRITTEN))
    return path


# -- recognised from the transcript alone ------------------------------------------------------------


def test_every_worktree_of_a_repository_belongs_to_the_main_worktrees_project(repo: Repo) -> None:
    assert folder_key(repo.key, str(repo.main)).project == repo.key  # nothing changes for the main one
    (repo.main / "backend").mkdir()
    for where in (repo.ticket, repo.laid_out, repo.main / "backend"):
        row = folder_key(Repo.folder(where), str(where))
        assert (row.project, row.root, row.how) == (repo.key, str(repo.main), "git")
    # reached through a symlinked folder, the key is spelt as the session's own path spells it
    link = repo.main.parent.parent / "linked"
    link.symlink_to(repo.main.parent)
    through = link / "spotter" / "backend"
    assert folder_key(Repo.folder(through), str(through)).project == encode_path(str(link / "spotter"))
    assert folder_key(Repo.folder(link / "spotter"), str(link / "spotter")).project == Repo.folder(
        link / "spotter"
    )
    # a worktree's ``.git`` file (``gitdir: <repo>/.git/worktrees/a0y``) says the same without git
    assert (repo.ticket / ".git").read_text().startswith("gitdir: ")
    assert by_dotgit(str(repo.ticket)) == by_git(str(repo.ticket)) == str(repo.main)
    assert by_dotgit(str(repo.main)) == str(repo.main)


def test_without_git_on_the_machine_the_git_files_say_whose_worktree_it_is(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", "")  # ``git`` cannot be started
    ask = by_git.__wrapped__  # not the answers cached while git could run
    assert ask(str(repo.ticket)) == ask(str(repo.laid_out)) == ask(str(repo.main)) == str(repo.main)
    (repo.main / "backend").mkdir()
    assert ask(str(repo.main / "backend")) == str(repo.main)


def test_with_the_folder_gone_the_worktree_layouts_still_name_the_repository(tmp_path: Path) -> None:
    gone = "/home/kim/src/spotter-worktrees/spotter-a0y"  # not on this machine
    row = folder_key(encode_path(gone), gone)
    assert (row.project, row.root, row.how) == ("-home-kim-src-spotter", "/home/kim/src/spotter", "layout")
    claude = "/home/kim/app/.claude/worktrees/frosty-mestorf"
    assert folder_key(encode_path(claude), claude).project == "-home-kim-app"
    # no record gives a cwd: only the dotted layouts are read from the folder name (``/.`` is ``--``)
    assert folder_key("-home-kim-app--claude-worktrees-frosty-mestorf", "").project == "-home-kim-app"
    assert folder_key("-home-kim-my-worktrees-app", "").project == "-home-kim-my-worktrees-app"
    elsewhere = "/home/kim/tickets/a0y"  # a worktree somewhere else, gone: nothing says whose it was
    assert folder_key(encode_path(elsewhere), elsewhere).project == encode_path(elsewhere)


def test_a_removed_worktree_keeps_the_project_it_was_filed_under(
    repo: Repo, config: Config, ledger: Ledger
) -> None:
    session_in(config, repo.ticket, "s-ticket", CI)
    session_in(config, repo.laid_out, "s-laid-out", MIGRATIONS)
    seen = ProjectMap(config.transcripts, ledger, remember=True)
    assert {seen.key(Repo.folder(w)) for w in (repo.ticket, repo.laid_out)} == {repo.key}
    repo.remove_worktrees()  # ``git worktree remove`` after the ticket is merged
    # asked afresh, the ticket's folder would be its own project: the ledger remembers whose it was
    assert folder_key(Repo.folder(repo.ticket), str(repo.ticket)).project == Repo.folder(repo.ticket)
    later = ProjectMap(config.transcripts, ledger)
    assert {later.key(Repo.folder(w)) for w in (repo.ticket, repo.laid_out)} == {repo.key}
    assert ProjectMap(config.transcripts).key(Repo.folder(repo.laid_out)) == repo.key  # the layout says so


def test_the_corpus_worktree_session_and_its_subagents_are_one_project(corpus: Path) -> None:
    folder = "-experiments-worktrees"
    cwds: set[str] = set()
    for path in sorted((corpus / folder).rglob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            cwd = json.loads(line).get("cwd")
            if isinstance(cwd, str):
                cwds.add(cwd)
    worktrees = {c for c in cwds if "/.claude/worktrees/" in c}
    assert len(worktrees) >= 2  # the session entered one worktree, its sub-agent worked in another
    assert ProjectMap(corpus).key(folder) == folder
    for cwd in worktrees:  # a session started in one of them would be filed under the repository
        assert folder_key(encode_path(cwd), cwd).project == folder


# -- one project everywhere it is keyed ------------------------------------------------------------------


def test_a_worktrees_lessons_go_to_the_repositorys_one_memory_folder(
    repo: Repo, config: Config, ledger: Ledger
) -> None:
    session_in(config, repo.main, "s-main", MIGRATIONS)
    session_in(config, repo.ticket, "s-ticket", CI)
    cfg = config.changed(extractor="heuristic")
    record = run_cycle(cfg, ledger, project=Repo.folder(repo.ticket))  # named by the worktree's folder
    assert record.chat_id == repo.key and record.stats.sessions_new == 2  # both folders, one project
    pending = ledger.list_candidates(status="pending")
    assert {c.session for c in pending} == {"s-main", "s-ticket"}
    assert {c.project for c in pending} == {r.project for r in ledger.queue_rows()} == {repo.key}
    assert {r["project"] for r in ledger.query("SELECT DISTINCT project FROM files")} == {repo.key}
    ticket = next(c for c in pending if c.session == "s-ticket")
    rel = decisions.accept(cfg, ledger, ticket.id).path
    assert rel.startswith(f"projects/{memory.project_folder(repo.key)}/")
    assert sorted(p.name for p in (cfg.memory / "projects").iterdir()) == [memory.project_folder(repo.key)]
    with Workspace(cfg, ledger) as ws:  # the Sessions screen: one project holding both sessions
        rows = ws.sessions()
    assert {(r.project, r.session) for r in rows} == {(repo.key, "s-main"), (repo.key, "s-ticket")}
    assert ProjectNames(cfg.transcripts)(repo.key) == "spotter"
    assert project_map(cfg, ledger).resolve(
        Repo.folder(repo.ticket), transcript_folders(cfg.transcripts)
    ) == (repo.key)


def test_dreamtui_dream_and_extract_file_a_worktrees_session_under_its_repository(
    repo: Repo, config: Config, ledger: Ledger
) -> None:
    session_in(config, repo.main, "s-main", MIGRATIONS)
    ticket = session_in(config, repo.ticket, "s-ticket", CI)
    base = [
        *folder_args(config),
    ]
    runner = CliRunner()
    dreamed = runner.invoke(
        cli, [*base, "--extractor", "heuristic", "dream", "--project", Repo.folder(repo.ticket), "--json"]
    )
    assert dreamed.exit_code == 0, dreamed.output
    record = json.loads(dreamed.stdout)
    assert record["chat_id"] == repo.key and record["stats"]["sessions_new"] == 2
    unknown = runner.invoke(cli, [*base, "dream", "--project", "-nowhere"])
    assert unknown.exit_code == 2 and "no project '-nowhere'" in unknown.output
    extracted = extract_session(config.changed(extractor="heuristic"), [ticket])
    assert extracted.digest.project == repo.key and extracted.digest.project_name == "spotter"


def test_a_repository_whose_sessions_all_ran_in_worktrees_is_still_one_project(
    repo: Repo, config: Config, ledger: Ledger
) -> None:
    session_in(config, repo.ticket, "s-ticket", CI)
    session_in(config, repo.laid_out, "s-laid-out", MIGRATIONS)
    assert not (config.transcripts / repo.key).exists()  # no session ran in the main worktree
    record = run_cycle(config.changed(extractor="heuristic"), ledger)
    assert record.stats.sessions_new == 2
    assert {c.project for c in ledger.list_candidates(status="pending")} == {repo.key}
    assert ProjectNames(config.transcripts)(repo.key) == "spotter"  # named from a worktree's records


# -- rows and memories filed under a worktree's own name before this ---------------------------------


def test_rows_filed_under_a_worktrees_folder_move_to_its_repository_and_its_memories_stay_found(
    repo: Repo, config: Config, ledger: Ledger
) -> None:
    old = Repo.folder(repo.ticket)
    # what the earlier versions did: the worktree's sessions filed under the worktree's own folder
    first = session_in(config, repo.ticket, "s-old-1", SAID)
    kept = run(config, ledger, first, old).kept
    accepted = decisions.accept(config, ledger, kept[0].id).path
    assert accepted.startswith(f"projects/{memory.project_folder(old)}/")
    second = session_in(config, repo.ticket, "s-old-2", SAID_2)
    waiting = run(config, ledger, second, old, claim=CLAIM_2, quote=QUOTE_2).kept[0]
    assert waiting.project == old

    notices = decisions.reconcile(config, ledger).notices  # every command's start does this
    assert notices[0] == (
        f"filed 2 proposal(s) of {old} under its repository's project {repo.key}; the memories in "
        f"projects/{memory.project_folder(old)}/ stay there and count as {repo.key}'s, new ones go to "
        f"projects/{memory.project_folder(repo.key)}/"
    )
    for table in ("candidates", "extractions", "files"):
        assert not ledger.query(f"SELECT 1 FROM {table} WHERE project = ?", (old,)), table
    assert decisions.reconcile(config, ledger).notices == []  # once
    # nothing lost: the old memory is where it was, still in the index, and still this project's
    assert (config.memory / accepted).is_file() and accepted in (config.memory / "MEMORY.md").read_text()
    again = session_in(config, repo.main, "s-main", SAID)
    assert run(config, ledger, again, repo.key).dropped == {"duplicate": 1}
    # the proposal that waited is accepted into the repository's folder
    rel = decisions.accept(config, ledger, waiting.id).path
    assert rel.startswith(f"projects/{memory.project_folder(repo.key)}/")
    # the briefing's "Decided" puts the repository's memories, the old folder's among them, first
    topic(
        config,
        "projects/aaa-another-project/x.md",
        "Another project's lesson, made after",
        'created: "2030-01-01T00:00:00Z"\n',
    )
    items = [item.source for item in briefing.memory_items(config, repo.key, ledger)]
    assert sorted(items[:2]) == sorted([accepted, rel]) and items[2] == "projects/aaa-another-project/x.md"
