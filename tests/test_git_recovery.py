"""Recovery without a person: a stale index.lock left by a killed git is cleared (a live one is waited
on and named), and commit hooks run with a timeout, their failure leaving the person's index as it was.
Real git, real hooks (shell scripts that sleep or exit 1), real SIGKILLed git processes."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import git
import pytest
from fakes.waiting import wait_for

from dreamtui.core.errors import MemoryRepoError
from dreamtui.core.memory import gitops


@pytest.fixture
def repo(tmp_path: Path, git_home: Path, monkeypatch: pytest.MonkeyPatch) -> git.Repo:
    """A memory repository with a commit, a person's staged file, an unstaged edit and an untracked file."""
    for name in ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "EMAIL"):
        monkeypatch.delenv(name, raising=False)
    repo = gitops.open_repo(tmp_path / "mem")
    root = Path(repo.working_tree_dir)
    (root / "mine.md").write_text("v1\n")
    (root / "briefing.md").write_text("briefing v1\n")
    repo.git.add("mine.md", "briefing.md")
    repo.git.commit("-q", "-m", "person")
    (root / "staged.md").write_text("staged by the person\n")
    repo.git.add("staged.md")
    (root / "mine.md").write_text("v2, not staged\n")
    (root / "scratch.txt").write_text("untracked\n")
    return repo


def person_index(repo: git.Repo) -> tuple[str, str]:
    """The person's index, exactly: every entry (mode, blob, stage, path) and the staged diff."""
    return repo.git.execute(["git", "ls-files", "-s"]), repo.git.diff("--cached")


def hook(folder: Path, name: str, body: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(0o755)
    return path


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return state[state.rfind(")") + 2 :].split()[0] != "Z"


def persons_slow_commit(
    repo: git.Repo, tmp_path: Path, seconds: float
) -> tuple[subprocess.Popen[bytes], Path]:
    """A person's own `git commit` whose pre-commit hook (theirs only, by core.hooksPath) sleeps, so
    git holds index.lock meanwhile. Returns the process (its own group) and the hook's pid file."""
    hooks = tmp_path / "persons-hooks"
    pidfile = tmp_path / "hook.pid"
    hook(hooks, "pre-commit", f"echo $$ > {pidfile}\nsleep {seconds}")
    proc = subprocess.Popen(
        ["git", "-c", f"core.hooksPath={hooks}", "commit", "-q", "-m", "person's commit", "--", "staged.md"],
        cwd=repo.working_tree_dir,
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    assert wait_for(pidfile.exists), f"{pidfile} never appeared"
    assert gitops.index_lock(repo).exists()
    return proc, pidfile


def kill_group(proc: subprocess.Popen[bytes]) -> None:
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()

    def children_left() -> bool:
        return any(
            alive(int(p)) and Path(f"/proc/{p}/stat").read_text().split(") ")[1].split()[2] == str(proc.pid)
            for p in os.listdir("/proc")
            if p.isdigit() and Path(f"/proc/{p}/stat").exists()
        )

    assert wait_for(lambda: not children_left()), "a process of the killed group is still running"


# -- index.lock --------------------------------------------------------------------------------------


def test_a_lock_left_by_a_killed_git_is_cleared_logged_and_the_commit_goes_through(
    repo: git.Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(gitops.STALE_LOCK_ENV, "0.5")
    proc, _ = persons_slow_commit(repo, tmp_path, 30)
    kill_group(proc)  # SIGKILL mid-commit: git never removes its index.lock
    lock = gitops.index_lock(repo)
    assert lock.exists()
    before = person_index(repo)
    (Path(repo.working_tree_dir) / "briefing.md").write_text("briefing v2\n")
    started = time.monotonic()
    result = gitops.commit_paths(repo, ["briefing.md"], "briefing", {"Dreamtui-Briefing": "yes"})
    took = time.monotonic() - started
    assert took < 5
    assert gitops.changed_paths(repo, result.sha) == ["briefing.md"]
    assert any("cleared a stale" in n and "index.lock" in n for n in result.notices), result.notices
    log = (Path(repo.git_dir) / gitops.RECOVERY_LOG).read_text()
    assert "cleared a stale" in log and "no process held it" in log
    assert not lock.exists() and not list(Path(repo.git_dir).glob("next-index-*.lock"))
    assert repo.git.diff("--cached") == before[1]  # the person's staged file is still staged, nothing else


def test_a_persons_running_git_is_waited_on_then_the_commit_goes_through(
    repo: git.Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(gitops.LOCK_TIMEOUT_ENV, "10")
    monkeypatch.setenv(gitops.STALE_LOCK_ENV, "0")  # age alone never clears a lock a live git holds
    proc, _ = persons_slow_commit(repo, tmp_path, 1)
    (Path(repo.working_tree_dir) / "briefing.md").write_text("briefing v2\n")
    result = gitops.commit_paths(repo, ["briefing.md"], "briefing", {})
    assert proc.wait(10) == 0
    subjects = [c.subject for c in gitops.list_commits(repo, limit=2)]
    assert subjects == ["briefing", "person's commit"]  # the person's commit finished first, untouched
    assert not any("cleared" in n for n in result.notices)
    assert not (Path(repo.git_dir) / gitops.RECOVERY_LOG).exists()


def test_a_persons_live_lock_is_never_cleared_and_the_error_names_the_git_process(
    repo: git.Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(gitops.LOCK_TIMEOUT_ENV, "0.5")
    monkeypatch.setenv(gitops.STALE_LOCK_ENV, "0.1")
    proc, _ = persons_slow_commit(repo, tmp_path, 30)
    try:
        lock = gitops.index_lock(repo)
        old = time.time() - 3600
        os.utime(lock, (old, old))  # an hour old: age alone does not make it stale
        (Path(repo.working_tree_dir) / "briefing.md").write_text("briefing v2\n")
        with pytest.raises(
            MemoryRepoError,
            match=rf"is held by a running process \(pid {proc.pid}: git -c "
            r"core.hooksPath=.*\) \(waited 0.5s\); try again",
        ):
            gitops.commit_paths(repo, ["briefing.md"], "briefing", {})
        assert lock.exists() and alive(proc.pid)
        assert gitops.lock_verdict(repo).kind == "held"
    finally:
        kill_group(proc)


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another user needs root")
def test_another_users_lock_is_never_cleared(repo: git.Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(gitops.LOCK_TIMEOUT_ENV, "0.3")
    monkeypatch.setenv(gitops.STALE_LOCK_ENV, "0")
    lock = gitops.index_lock(repo)
    lock.write_text("")
    os.chown(lock, 65534, 65534)
    old = time.time() - 3600
    os.utime(lock, (old, old))
    (Path(repo.working_tree_dir) / "briefing.md").write_text("briefing v2\n")
    with pytest.raises(MemoryRepoError, match=r"belongs to another user \(uid 65534\)"):
        gitops.commit_paths(repo, ["briefing.md"], "briefing", {})
    assert lock.exists()


def test_an_unheld_lock_is_cleared_only_once_it_has_stayed_unchanged_long_enough(
    repo: git.Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(gitops.LOCK_TIMEOUT_ENV, "0.1")  # shorter than the stale age: waits for the age anyway
    monkeypatch.setenv(gitops.STALE_LOCK_ENV, "1")
    lock = gitops.index_lock(repo)
    lock.write_text("")
    assert gitops.lock_verdict(repo).kind == "young"
    assert gitops.clear_stale_lock(repo) is None and lock.exists()
    (Path(repo.working_tree_dir) / "briefing.md").write_text("briefing v2\n")
    started = time.monotonic()
    result = gitops.commit_paths(repo, ["briefing.md"], "briefing", {})
    assert 0.9 <= time.monotonic() - started < 4
    assert any("cleared a stale" in n for n in result.notices)


# -- hooks -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["pre-commit", "commit-msg"])
def test_a_failing_hook_is_named_and_leaves_the_persons_index_as_it_was(repo: git.Repo, name: str) -> None:
    root = Path(repo.working_tree_dir)
    hook(Path(repo.git_dir) / "hooks", name, "echo 'no commits on fridays' >&2\nexit 1")
    before = person_index(repo)
    (root / "briefing.md").write_text("briefing v2\n")  # tracked, changed
    (root / "reviews").mkdir()
    (root / "reviews" / "review-2026-03-10.md").write_text("review\n")  # new, untracked
    head = repo.head.commit.hexsha
    with pytest.raises(
        MemoryRepoError,
        match=rf"^the {name} hook failed \(exit 1\): no commits on fridays; "
        r"git commit abandoned$",
    ):
        gitops.commit_paths(repo, ["briefing.md", "reviews/review-2026-03-10.md"], "dreamtui", {})
    assert repo.head.commit.hexsha == head
    assert person_index(repo) == before  # dreamtui's files unstaged again, the person's staged file kept
    assert "?? reviews/review-2026-03-10.md" in repo.git.status("--porcelain", "--untracked-files=all")
    assert not gitops.index_lock(repo).exists()


@pytest.mark.parametrize("name", ["pre-commit", "commit-msg"])
def test_a_hanging_hook_is_stopped_within_the_timeout_and_named(
    repo: git.Repo, tmp_path: Path, name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(gitops.HOOK_TIMEOUT_ENV, "1")
    root = Path(repo.working_tree_dir)
    pidfile = tmp_path / "hook.pid"
    hook(Path(repo.git_dir) / "hooks", name, f"sleep 60 &\necho $! > {pidfile}\nwait")
    before = person_index(repo)
    (root / "briefing.md").write_text("briefing v2\n")
    (root / "new.md").write_text("new\n")
    head = repo.head.commit.hexsha
    started = time.monotonic()
    with pytest.raises(
        MemoryRepoError,
        match=rf"^the {name} hook did not finish within 1s and was stopped; "
        r"git commit abandoned",
    ):
        gitops.commit_paths(repo, ["briefing.md", "new.md"], "dreamtui", {})
    assert time.monotonic() - started < 5
    assert repo.head.commit.hexsha == head
    assert person_index(repo) == before
    assert not gitops.index_lock(repo).exists()  # git was killed holding it: cleared, and logged
    assert (
        "left by the git process dreamtui stopped" in (Path(repo.git_dir) / gitops.RECOVERY_LOG).read_text()
    )
    assert not alive(int(pidfile.read_text()))  # the hook's own children are stopped too
    (Path(repo.git_dir) / "hooks" / name).unlink()
    sha = gitops.commit_paths(repo, ["briefing.md", "new.md"], "dreamtui", {}).sha  # nothing left in the way
    assert sorted(gitops.changed_paths(repo, sha)) == ["briefing.md", "new.md"]


def test_a_hanging_post_commit_hook_is_stopped_and_the_commit_stands(
    repo: git.Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(gitops.HOOK_TIMEOUT_ENV, "1")
    hook(Path(repo.git_dir) / "hooks", "post-commit", "sleep 60")
    before = person_index(repo)
    (Path(repo.working_tree_dir) / "briefing.md").write_text("briefing v2\n")
    result = gitops.commit_paths(repo, ["briefing.md"], "briefing", {"Dreamtui-Briefing": "yes"})
    assert result.sha == repo.head.commit.hexsha
    assert gitops.changed_paths(repo, result.sha) == ["briefing.md"]
    assert any(
        "the post-commit hook did not finish within 1s" in n and "the commit itself was made" in n
        for n in result.notices
    )
    assert person_index(repo) != before  # briefing.md's entry now matches the new commit …
    assert repo.git.diff("--cached") == before[1]  # … and the person's staged change is untouched


def test_a_failing_post_commit_hook_does_not_undo_the_commit(repo: git.Repo) -> None:
    hook(Path(repo.git_dir) / "hooks", "post-commit", "exit 3")
    (Path(repo.working_tree_dir) / "briefing.md").write_text("briefing v2\n")
    result = gitops.commit_paths(repo, ["briefing.md"], "briefing", {})
    assert result.sha == repo.head.commit.hexsha
