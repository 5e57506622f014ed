"""Crash safety of accept: SIGKILL at every step boundary and at random moments, then check that the
repository holds the whole accept or none of it, the person's work is untouched, the ledger agrees
with git after reconcile, a retry makes no second commit, and the ledger passes integrity_check."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import git
import pytest
from fakes.waiting import wait_for

from dreamtui.core.config import Config
from dreamtui.core.ledger import Ledger
from dreamtui.core.memory import decisions, gitops
from tests.fakes.candidates import refactor_lesson

ACCEPT_SCRIPT = """
import sys
from pathlib import Path
from dreamtui.core.config import Config
from dreamtui.core.ledger import Ledger
from dreamtui.core.memory import decisions
cfg = Config(transcripts=Path(sys.argv[1]), memory=Path(sys.argv[2]), state=Path(sys.argv[3]))
ledger = Ledger.open(cfg.state)
print("ready", flush=True)
decisions.accept(cfg, ledger, sys.argv[4])
print("done", flush=True)
"""


def _person_state(repo: git.Repo) -> tuple[str, str, str]:
    """What the person sees: status, staged diff, unstaged diff."""
    return (
        repo.git.status("--porcelain", "--untracked-files=all"),
        repo.git.diff("--cached"),
        repo.git.diff(),
    )


def _trailer_commits(repo: git.Repo, cid: str) -> list[str]:
    return [
        c.sha for c in gitops.dreamtui_commits(repo) if cid in c.trailers.get(gitops.TRAILER_CANDIDATE, [])
    ]


def _group_alive(pgid: int) -> bool:
    """A process of group ``pgid`` is still running (zombies, already dead, do not count)."""
    proc = Path("/proc")
    if not proc.is_dir():
        try:
            os.killpg(pgid, 0)
            return True
        except ProcessLookupError:
            return False
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2 :].split()
        if len(fields) > 2 and fields[2] == str(pgid) and fields[0] != "Z":
            return True
    return False


def _wait_group_gone(pgid: int, timeout: float = 10.0) -> None:
    """Wait until every process of the killed group (an orphaned git, say) has finished."""
    assert wait_for(lambda: not _group_alive(pgid), timeout), "a child of the killed accept is still running"


@pytest.fixture
def setup(tmp_path: Path, git_home: Path) -> tuple[Config, Ledger, git.Repo, dict[str, str]]:
    home = git_home
    cfg = Config(transcripts=tmp_path / "t", memory=tmp_path / "mem", state=tmp_path / "state")
    repo = gitops.open_repo(cfg.memory)
    root = cfg.memory
    (root / "notes.md").write_text("my notes\n")
    (root / "MEMORY.md").write_text("- [Old](old.md) — an old memory\n")
    (root / "old.md").write_text("old\n")
    repo.git.add("notes.md", "MEMORY.md", "old.md")
    repo.git.commit("-q", "-m", "person's start")
    (root / "staged.md").write_text("staged by the person\n")
    repo.git.add("staged.md")
    (root / "notes.md").write_text("my notes, edited but not staged\n")
    (root / "scratch.txt").write_text("untracked\n")
    ledger = Ledger.open(cfg.state)
    env = {**os.environ, "HOME": str(home), "GIT_CONFIG_NOSYSTEM": "1"}
    yield cfg, ledger, repo, env
    ledger.close()


def _check(
    cfg: Config, ledger: Ledger, repo: git.Repo, cid: str, head_before: str, person: tuple[str, str, str]
) -> bool:
    """Reconcile, then assert the invariants. Returns whether the accept made it into git."""
    report = decisions.reconcile(cfg, ledger)
    assert ledger.integrity_ok()
    commits = _trailer_commits(repo, cid)
    assert len(commits) <= 1
    head = repo.head.commit
    if commits:
        assert head.parents[0].hexsha == head_before
        assert head.hexsha == commits[0]
        paths = gitops.changed_paths(repo, head.hexsha)
        assert "MEMORY.md" in paths and len(paths) == 2
        assert ledger.get_candidate(cid).status == "accepted"
    else:
        assert head.hexsha == head_before
        assert ledger.get_candidate(cid).status == "pending"
    assert _person_state(repo) == person, report
    assert not ledger.query("SELECT * FROM memory_intents")
    assert not list(Path(cfg.memory).rglob(".dreamtui-tmp-*"))
    # a retry never makes a second commit
    result = decisions.accept(cfg, ledger, cid)
    assert _trailer_commits(repo, cid) == [result.commit_sha]
    assert ledger.get_candidate(cid).status == "accepted"
    assert _person_state(repo) == person
    assert ledger.integrity_ok()
    return bool(commits)


def _run(
    cfg: Config, cid: str, env: dict[str, str], crash_at: str | None = None, kill_after: float | None = None
) -> tuple[int, float]:
    """Run one accept in a child process; (its return code, seconds from 'ready' to its exit)."""
    child_env = dict(env)
    if crash_at:
        child_env[decisions.CRASH_ENV] = crash_at
    proc = subprocess.Popen(
        [sys.executable, "-c", ACCEPT_SCRIPT, str(cfg.transcripts), str(cfg.memory), str(cfg.state), cid],
        env=child_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == b"ready"
    ready = time.monotonic()
    if kill_after is not None:
        try:  # under test: a kill at this moment of the accept, unless it ended before
            proc.wait(timeout=kill_after)
        except subprocess.TimeoutExpired:
            try:
                os.kill(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    proc.communicate(timeout=30)
    elapsed = time.monotonic() - ready
    for pgid in {proc.pid, *_git_groups(cfg.memory)}:  # dreamtui's git runs in a group of its own
        _wait_group_gone(pgid)
    return proc.returncode, elapsed


def test_crash_at_every_step_then_reconcile_and_retry(setup) -> None:
    cfg, ledger, repo, env = setup
    person = _person_state(repo)
    outcomes = {}
    for i, step in enumerate(decisions.CRASH_STEPS):
        cand = refactor_lesson(i)
        ledger.put_candidate(cand)
        head_before = repo.head.commit.hexsha
        code, _ = _run(cfg, cand.id, env, crash_at=step)
        assert code == -signal.SIGKILL, f"the crash hook at {step!r} did not fire"
        outcomes[step] = _check(cfg, ledger, repo, cand.id, head_before, person)
    # before the commit nothing reaches git; from the commit on, the whole accept does
    assert outcomes == {
        "intent": False,
        "topic-tmp": False,
        "topic": False,
        "index": False,
        "commit": True,
        "ledger": True,
    }


def test_crash_at_random_moments(setup) -> None:
    cfg, ledger, repo, env = setup
    person = _person_state(repo)
    rng = random.Random(20260105)
    probe = refactor_lesson(99)
    ledger.put_candidate(probe)
    _, span = _run(cfg, probe.id, env)  # how long one accept takes here, from 'ready' to exit
    decisions.reconcile(cfg, ledger)
    person = _person_state(repo)
    killed = committed = 0
    for i in range(16):
        cand = refactor_lesson(100 + i)
        ledger.put_candidate(cand)
        head_before = repo.head.commit.hexsha
        code, _ = _run(cfg, cand.id, env, kill_after=rng.uniform(0.0, 0.8 * span))
        killed += code == -signal.SIGKILL
        committed += _check(cfg, ledger, repo, cand.id, head_before, person)
    print(f"accept span {span:.3f}s: {killed}/16 killed, {committed}/16 had committed before the kill")
    assert killed >= 4  # most runs were really killed mid-way


UNDO_SCRIPT = """
import sys
from pathlib import Path
from dreamtui.core.config import Config
from dreamtui.core.ledger import Ledger
from dreamtui.core.memory import decisions
cfg = Config(transcripts=Path(sys.argv[1]), memory=Path(sys.argv[2]), state=Path(sys.argv[3]))
ledger = Ledger.open(cfg.state)
decisions.undo_last(cfg, ledger)
"""


def test_crash_during_undo(setup) -> None:
    cfg, ledger, repo, env = setup
    person = _person_state(repo)
    for i, step in enumerate(decisions.UNDO_CRASH_STEPS):
        cand = refactor_lesson(200 + i)
        ledger.put_candidate(cand)
        accepted = decisions.accept(cfg, ledger, cand.id)
        head_before = repo.head.commit.hexsha
        proc = subprocess.run(
            [sys.executable, "-c", UNDO_SCRIPT, str(cfg.transcripts), str(cfg.memory), str(cfg.state)],
            env={**env, decisions.CRASH_ENV: step},
            capture_output=True,
            timeout=60,
        )
        assert proc.returncode == -signal.SIGKILL, proc.stderr
        decisions.reconcile(cfg, ledger)
        assert ledger.integrity_ok()
        reverted = repo.head.commit.hexsha != head_before
        assert reverted == (step == "undo-commit")
        status = ledger.get_candidate(cand.id).status
        assert status == ("pending" if reverted else "accepted")
        assert (Path(cfg.memory) / accepted.path).exists() == (not reverted)
        assert _person_state(repo) == person
        if not reverted:  # a retry finishes the undo with exactly one revert commit
            decisions.undo_last(cfg, ledger)
        undos = [
            c for c in gitops.dreamtui_commits(repo) if cand.id in c.trailers.get(gitops.TRAILER_UNDO, [])
        ]
        assert len(undos) == 1
        assert ledger.get_candidate(cand.id).status == "pending"
        assert _person_state(repo) == person


def test_an_accept_killed_with_its_git_leaves_no_lock_in_the_way_of_the_next(
    setup, tmp_path: Path, monkeypatch
) -> None:
    """SIGKILL of the accept and its git mid-commit (a pre-commit hook is running) leaves git's
    index.lock behind; the next accept clears it (no process holds it) instead of failing until a
    person deletes it, and the person's work is untouched."""
    cfg, ledger, repo, env = setup
    person = _person_state(repo)
    hang = tmp_path / "hang"
    started = tmp_path / "hook-started"
    hook = Path(repo.git_dir) / "hooks" / "pre-commit"
    hook.write_text(f"#!/bin/sh\nif [ -e {hang} ]; then touch {started}; sleep 60; fi\n")
    hook.chmod(0o755)
    hang.write_text("")
    cand = refactor_lesson(300)
    ledger.put_candidate(cand)
    head_before = repo.head.commit.hexsha
    proc = subprocess.Popen(
        [sys.executable, "-c", ACCEPT_SCRIPT, str(cfg.transcripts), str(cfg.memory), str(cfg.state), cand.id],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    wait_for(lambda: started.exists() or proc.poll() is not None)
    assert started.exists(), proc.stderr.read() if proc.stderr else ""
    for pgid in {proc.pid, *_git_groups(cfg.memory)}:  # the accept, its git and the hook: all killed at once
        os.killpg(pgid, signal.SIGKILL)
    proc.communicate(timeout=30)
    _wait_group_gone(proc.pid)
    lock = Path(repo.git_dir) / "index.lock"
    assert lock.exists()
    hang.unlink()
    monkeypatch.setenv(gitops.STALE_LOCK_ENV, "0.5")
    result = decisions.accept(cfg, ledger, cand.id)
    assert any("cleared a stale" in n for n in result.notices), result.notices
    assert not lock.exists()
    assert _trailer_commits(repo, cand.id) == [result.commit_sha]
    assert repo.head.commit.parents[0].hexsha == head_before
    assert _person_state(repo) == person
    assert "cleared a stale" in (Path(repo.git_dir) / gitops.RECOVERY_LOG).read_text()


def _git_groups(memory: Path) -> set[int]:
    """Process groups (not this test's) of processes working in ``memory``: dreamtui runs git in a group of its own."""
    groups = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cwd = os.readlink(entry / "cwd")
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2 :].split()
        if cwd == str(memory) and fields[0] != "Z" and int(fields[2]) != os.getpgrp():
            groups.add(int(fields[2]))
    return groups
