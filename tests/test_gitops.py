"""Git operations: commit exactly our paths, wait on index.lock, fallback identity, refuse bad states."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import git
import pytest
from fakes.candidates import make
from fakes.cli_world import unprivileged

from dreamtui.core.config import Config
from dreamtui.core.errors import MemoryRepoError
from dreamtui.core.ledger import Ledger
from dreamtui.core.memory import gitops
from dreamtui.core.memory.review import write_review


@pytest.fixture
def home(git_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A HOME with a git identity (and no other git config)."""
    home = git_home
    for name in ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "EMAIL"):
        monkeypatch.delenv(name, raising=False)
    return home


@pytest.fixture
def repo(tmp_path: Path, home: Path) -> git.Repo:
    repo = gitops.open_repo(tmp_path / "mem")
    root = Path(repo.working_tree_dir)
    (root / "mine.md").write_text("v1\n")
    repo.git.add("mine.md")
    repo.git.commit("-q", "-m", "person")
    return repo


def _state(repo: git.Repo) -> tuple[str, str, str]:
    return repo.git.status("--porcelain", "--untracked-files=all"), repo.git.diff("--cached"), repo.git.diff()


def test_open_repo_creates_main_branch_repo(tmp_path: Path, home: Path) -> None:
    repo = gitops.open_repo(tmp_path / "a" / "b")
    assert (tmp_path / "a" / "b" / ".git").is_dir()
    assert repo.active_branch.name == "main"
    assert gitops.head_sha(repo) is None
    assert gitops.list_commits(repo) == []
    with pytest.raises(MemoryRepoError, match="does not exist"):
        gitops.open_repo(tmp_path / "nope", create=False)
    (tmp_path / "file").write_text("x")
    with pytest.raises(MemoryRepoError, match="not a folder"):
        gitops.open_repo(tmp_path / "file")


def test_commit_only_our_paths_leaves_the_persons_work_alone(repo: git.Repo) -> None:
    root = Path(repo.working_tree_dir)
    (root / "staged.md").write_text("staged\n")
    repo.git.add("staged.md")
    (root / "mine.md").write_text("v2 unstaged\n")
    (root / "untracked.txt").write_text("u\n")
    before = _state(repo)
    (root / "topic.md").write_text("topic\n")
    (root / "MEMORY.md").write_text("- [T](topic.md)\n")
    result = gitops.commit_paths(
        repo, ["topic.md", "MEMORY.md"], "dreamtui: remember T", {gitops.TRAILER_CANDIDATE: "c1"}
    )
    assert result.notices == []
    assert sorted(gitops.changed_paths(repo, result.sha)) == ["MEMORY.md", "topic.md"]
    assert _state(repo) == before
    info = gitops.list_commits(repo, limit=1)[0]
    assert info.trailers == {gitops.TRAILER_CANDIDATE: ["c1"]}
    assert info.author == "Person <person@example.com>"


def test_commit_in_a_repo_with_no_commits(tmp_path: Path, home: Path) -> None:
    repo = gitops.open_repo(tmp_path / "fresh")
    root = Path(repo.working_tree_dir)
    (root / "a.md").write_text("a\n")
    (root / "other.md").write_text("not ours\n")
    repo.git.add("other.md")
    sha = gitops.commit_paths(repo, ["a.md"], "first", {gitops.TRAILER_CANDIDATE: "c1"}).sha
    assert gitops.changed_paths(repo, sha) == ["a.md"]
    assert repo.git.status("--porcelain") == "A  other.md"


def test_commit_a_deletion_and_an_empty_commit(repo: git.Repo) -> None:
    root = Path(repo.working_tree_dir)
    (root / "mine.md").unlink()
    sha = gitops.commit_paths(repo, ["mine.md"], "remove", {gitops.TRAILER_UNDO: "c1"}).sha
    assert gitops.show_file(repo, "mine.md") is None
    assert gitops.show_file(repo, "mine.md", f"{sha}^") == b"v1\n"
    (root / "staged.md").write_text("s\n")
    repo.git.add("staged.md")
    empty = gitops.commit_paths(repo, [], "marker", {gitops.TRAILER_UNDO: "c2"}).sha
    assert gitops.changed_paths(repo, empty) == []
    assert repo.git.status("--porcelain") == "A  staged.md"


def _hold(lock: Path) -> subprocess.Popen[bytes]:
    """A live process that keeps ``lock`` open until its stdin is closed (or it is killed)."""
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys; f = open(sys.argv[1]); print(1, flush=True); sys.stdin.read()",  # held until let go
            str(lock),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    assert holder.stdout is not None and holder.stdout.readline()
    return holder


def test_a_held_index_lock_is_waited_on_then_the_commit_succeeds(repo: git.Repo, monkeypatch) -> None:
    monkeypatch.setenv(gitops.LOCK_TIMEOUT_ENV, "120")  # a bound on a hang, not a measure
    lock = Path(repo.git_dir) / "index.lock"
    lock.write_text("")
    root = Path(repo.working_tree_dir)
    (root / "t.md").write_text("t\n")
    held_seen = threading.Event()
    verdict_of = gitops.lock_verdict

    def watched(r: git.Repo) -> gitops.LockVerdict:  # the real verdict; the test hears it was asked
        verdict = verdict_of(r)
        if verdict.kind == "held":
            held_seen.set()
        return verdict

    monkeypatch.setattr(gitops, "lock_verdict", watched)
    holder = _hold(lock)
    before = len(gitops.list_commits(repo))
    result: list[object] = []
    committer = threading.Thread(
        target=lambda: result.append(
            gitops.commit_paths(repo, ["t.md"], "t", {gitops.TRAILER_CANDIDATE: "c1"})
        )
    )
    try:
        committer.start()
        assert held_seen.wait(60), "the commit never looked at the held lock"
        assert committer.is_alive() and result == []  # it waits while the lock is held
        assert len(gitops.list_commits(repo)) == before
        lock.unlink()
        holder.stdin.close()  # type: ignore[union-attr]
        holder.wait()
        committer.join(60)
    finally:
        holder.kill()
        holder.wait()
    assert not committer.is_alive() and len(result) == 1 and len(gitops.list_commits(repo)) == before + 1
    sha = result[0].sha  # type: ignore[attr-defined]
    assert gitops.changed_paths(repo, sha) == ["t.md"]


def test_a_lock_a_live_process_keeps_open_times_out_clearly_and_is_not_deleted(
    repo: git.Repo, monkeypatch
) -> None:
    monkeypatch.setenv(gitops.LOCK_TIMEOUT_ENV, "0.3")
    monkeypatch.setenv(gitops.STALE_LOCK_ENV, "0")  # however old it is: a live holder is never overruled
    lock = Path(repo.git_dir) / "index.lock"
    lock.write_text("held by someone")
    holder = _hold(lock)
    try:
        (Path(repo.working_tree_dir) / "t.md").write_text("t\n")
        with pytest.raises(
            MemoryRepoError,
            match=rf"index.lock is held by a running process \(pid {holder.pid}: "
            r".*\) \(waited 0.3s\); try again when it finishes",
        ):
            gitops.commit_paths(repo, ["t.md"], "t", {})
        assert lock.read_text() == "held by someone"
    finally:
        holder.kill()
        holder.wait()


@pytest.mark.usefixtures("no_git_identity")
def test_missing_identity_gets_a_fallback_and_one_notice(tmp_path: Path) -> None:
    repo = gitops.open_repo(tmp_path / "mem")
    (Path(repo.working_tree_dir) / "z.md").write_text("z\n")
    unseen = gitops.commit_paths(repo, ["z.md"], "z", {})  # its notices go nowhere (a cycle's review)
    assert "dreamtui <dreamtui@localhost>" in unseen.notices[0]
    (Path(repo.working_tree_dir) / "a.md").write_text("a\n")
    result = gitops.commit_paths(repo, ["a.md"], "a", {}, notices_shown=True)  # not spent on the unseen one
    assert result.notices and "dreamtui <dreamtui@localhost>" in result.notices[0]
    assert gitops.list_commits(repo)[0].author == "dreamtui <dreamtui@localhost>"
    with pytest.raises(git.GitCommandError):  # the fallback was for that commit only
        repo.git.config("--get", "user.name")
    for name in ("b", "c"):  # said once for the repository, not with every commit
        (Path(repo.working_tree_dir) / f"{name}.md").write_text(f"{name}\n")
        again = gitops.commit_paths(repo, [f"{name}.md"], name, {}, notices_shown=True)
        assert again.notices == []
        assert gitops.list_commits(repo)[0].author == "dreamtui <dreamtui@localhost>"
    other = gitops.open_repo(tmp_path / "other")  # another repository is told again
    (Path(other.working_tree_dir) / "a.md").write_text("a\n")
    assert "no user.name" in gitops.commit_paths(other, ["a.md"], "a", {}, notices_shown=True).notices[0]


def test_detached_head_is_refused(repo: git.Repo) -> None:
    repo.git.checkout("-q", "--detach")
    (Path(repo.working_tree_dir) / "t.md").write_text("t\n")
    with pytest.raises(MemoryRepoError, match="detached HEAD.*git switch main"):
        gitops.commit_paths(repo, ["t.md"], "t", {})


def test_merge_in_progress_is_refused(repo: git.Repo) -> None:
    root = Path(repo.working_tree_dir)
    repo.git.checkout("-q", "-b", "side")
    (root / "mine.md").write_text("side\n")
    repo.git.commit("-q", "-am", "side")
    repo.git.checkout("-q", "main")
    (root / "mine.md").write_text("main\n")
    repo.git.commit("-q", "-am", "main")
    with pytest.raises(git.GitCommandError):
        repo.git.merge("side")
    (root / "t.md").write_text("t\n")
    with pytest.raises(MemoryRepoError, match="a merge is in progress.*merge --abort"):
        gitops.commit_paths(repo, ["t.md"], "t", {})


def test_history_and_trailers(repo: git.Repo) -> None:
    root = Path(repo.working_tree_dir)
    for i in range(3):
        (root / "briefing.md").write_text(f"v{i}\n")
        gitops.commit_paths(repo, ["briefing.md"], f"briefing {i}", {"Dreamtui-Briefing": str(i)})
    history = gitops.file_history(repo, "briefing.md")
    assert [c.subject for c in history] == ["briefing 2", "briefing 1", "briefing 0"]
    assert history[0].trailers == {"Dreamtui-Briefing": ["2"]}
    assert gitops.is_ancestor(repo, history[2].sha)
    assert gitops.commit_exists(repo, history[0].sha)
    assert not gitops.commit_exists(repo, "0" * 40)
    repo.git.revert("--no-edit", history[0].sha)
    assert gitops.dreamtui_commits(repo)[0].reverts == history[0].sha


def test_runs_inside_another_repos_hook_still_commit_to_the_memory_repo(
    tmp_path: Path, home: Path, monkeypatch
) -> None:
    project = git.Repo.init(tmp_path / "project")
    (tmp_path / "project" / "p.txt").write_text("p\n")
    project.git.add("p.txt")
    project.git.commit("-q", "-m", "project")
    monkeypatch.setenv("GIT_DIR", str(tmp_path / "project" / ".git"))  # what a git hook exports
    monkeypatch.setenv("GIT_INDEX_FILE", str(tmp_path / "project" / ".git" / "index"))
    repo = gitops.open_repo(tmp_path / "mem")
    (tmp_path / "mem" / "a.md").write_text("a\n")
    sha = gitops.commit_paths(repo, ["a.md"], "a", {gitops.TRAILER_CANDIDATE: "c1"}).sha
    assert gitops.changed_paths(repo, sha) == ["a.md"]
    assert gitops.list_commits(repo)[0].trailers == {"Dreamtui-Candidate": ["c1"]}
    monkeypatch.delenv("GIT_DIR")
    monkeypatch.delenv("GIT_INDEX_FILE")
    assert [c.message.strip() for c in project.iter_commits()] == ["project"]
    assert project.git.status("--porcelain") == ""


@pytest.mark.usefixtures("git_home")
def test_git_read_failures_are_memory_repo_errors(config: Config, ledger: Ledger) -> None:
    make(ledger, 1)
    write_review(config, ledger, "2026-04-01")
    repo = git.Repo(config.memory)
    with pytest.raises(MemoryRepoError, match="git diff-tree failed"):
        gitops.changed_paths(repo, "0123456789" * 4)
    assert gitops.status(repo, ["reviews/review-2026-04-01.md"]) == {}


@pytest.mark.usefixtures("git_home")
def test_status_never_writes_the_index(config: Config, ledger: Ledger) -> None:
    """A listing must not need to write (a full disk, a person's lock): ``git status`` would."""
    make(ledger, 1)
    path = write_review(config, ledger, "2026-04-01")
    index = config.memory / ".git" / "index"
    os.utime(path, None)  # the stat data no longer matches: plain ``git status`` would refresh the index
    before = index.stat().st_mtime_ns
    assert gitops.status(git.Repo(config.memory), ["reviews/review-2026-04-01.md"]) == {}
    assert index.stat().st_mtime_ns == before


@pytest.mark.usefixtures("git_home")
def test_unwritable_memory_folder_is_a_one_line_error(config: Config, ledger: Ledger) -> None:
    make(ledger, 1)
    write_review(config, ledger, "2026-04-01")
    make(ledger, 2)
    reviews = config.memory / "reviews"
    reviews.chmod(0o555)
    try:
        env = {
            **os.environ,
            "DREAMTUI_STATE": str(config.state),
            "DREAMTUI_MEMORY": str(config.memory),
            "DREAMTUI_TRANSCRIPTS": str(config.transcripts),
        }
        proc = subprocess.run(
            [
                *unprivileged(),
                sys.executable,
                "-c",
                "from dreamtui.cli.main import main; main()",
                "review",
                "--date",
                "2026-04-01",
            ],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
        )
    finally:
        reviews.chmod(0o755)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    assert proc.stderr.startswith("dreamtui: cannot write ") and "review-2026-04-01.md" in proc.stderr
    assert git.Repo(config.memory).git.status("--porcelain") == ""


@pytest.mark.usefixtures("no_git_identity")
def test_undo_with_no_identity_is_made_as_the_fallback_without_saying_it_again(
    config: Config, ledger: Ledger
) -> None:
    from dreamtui.core.memory import decisions

    make(ledger, 1)
    accepted = decisions.accept(config, ledger, "r001")
    assert any("no user.name" in n for n in accepted.notices)
    undone = decisions.undo_last(config, ledger)
    assert undone.commit_sha
    assert not any("no user.name" in n for n in undone.notices)  # said with the first commit only
    assert git.Repo(config.memory).head.commit.author.email == gitops.FALLBACK_EMAIL
