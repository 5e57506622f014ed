"""A killed or refused dream is put right by the next run, without a person: cycles left `running`
are marked failed, a staged briefing or a leftover review file is committed (or unstaged), a stale
index.lock is cleared, and a failing or hanging commit hook fails REM with a one-line error naming
it, leaving the person's index as it was. Real git, real hooks, a real SIGKILLed dream."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import git
import pytest
from fakes.waiting import wait_for

from dreamtui.core.config import Config
from dreamtui.core.dream.run import CycleFailed, run_cycle
from dreamtui.core.dream.waking import waking_message
from dreamtui.core.ledger import Ledger, cycles
from dreamtui.core.memory import decisions, generated, gitops
from tests.fakes.candidates import refactor_lesson
from tests.fakes.cycle_world import ACME, DAY, NOW, RULES, install

REVIEW = f"reviews/review-{DAY}.md"


@pytest.fixture
def config(config: Config) -> Config:
    """The deterministic ``command`` extractor of the cycle fixtures."""
    return config.changed(extractor="command", command=(sys.executable, str(RULES)))


@pytest.fixture(autouse=True)
def _now(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DREAMTUI_NOW", NOW)
    for key, value in (("NAME", "Kim"), ("EMAIL", "kim@example.com")):
        monkeypatch.setenv(f"GIT_AUTHOR_{key}", value)
        monkeypatch.setenv(f"GIT_COMMITTER_{key}", value)


@pytest.fixture
def repo(config: Config) -> git.Repo:
    """The memory repository with a person's commit, a staged file, an unstaged edit and an untracked file."""
    repo = gitops.open_repo(config.memory)
    root = config.memory
    (root / "notes.md").write_text("my notes\n")
    repo.git.add("notes.md")
    repo.git.commit("-q", "-m", "person's start")
    (root / "staged.md").write_text("staged by the person\n")
    repo.git.add("staged.md")
    (root / "notes.md").write_text("my notes, edited\n")
    (root / "scratch.txt").write_text("untracked\n")
    return repo


def person_state(repo: git.Repo) -> tuple[str, str, str]:
    """What the person sees of their own work: the staged diff, the unstaged diff of their files, and
    the status of everything that is not dreamtui's."""
    status = [
        line
        for line in repo.git.status("--porcelain", "--untracked-files=all").splitlines()
        if "briefing.md" not in line and "reviews/" not in line
    ]
    return repo.git.diff("--cached"), repo.git.diff("--", "notes.md"), "\n".join(status)


def hook(repo: git.Repo, name: str, body: str) -> None:
    path = Path(repo.git_dir) / "hooks" / name
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(0o755)


def clean(repo: git.Repo) -> bool:
    """Nothing of dreamtui's is staged, modified or untracked."""
    return not [
        line
        for line in repo.git.status("--porcelain", "--untracked-files=all").splitlines()
        if "briefing.md" in line or "reviews/" in line
    ]


# -- stale `running` cycles ----------------------------------------------------------------------------


def test_cycles_left_running_by_killed_processes_are_marked_failed_at_the_next_start(
    config: Config, ledger: Ledger
) -> None:
    install(config, "busy")
    with ledger.write() as c:  # what `kill -9` during two earlier cycles left behind
        c.execute(
            "INSERT INTO dream_cycles (chat_id, date, status, started_at, stats) VALUES "
            "('*', '2026-03-08', 'running', '2026-03-08T03:00:00Z', ?)",
            (json.dumps({"attempt": 1, "pid": 4242}),),
        )
        c.execute(
            "INSERT INTO dream_cycles (chat_id, date, status, started_at, stats) VALUES "
            "('-home-kim-other', '2026-03-09', 'running', '2026-03-09T03:00:00Z', '{}')"
        )
    record = run_cycle(config, ledger, project=ACME)
    assert record.status == "completed" and record.stats.interrupted_cycles == [1, 2]
    old = cycles.find_full(ledger, "*", "2026-03-08")
    assert old is not None and old.status == "failed" and old.completed_at
    assert old.error_message == (
        "interrupted: the process running it (pid 4242) ended before it finished (started "
        "2026-03-08T03:00:00Z); marked failed when the next cycle started"
    )
    assert cycles.find_full(ledger, "-home-kim-other", "2026-03-09").status == "failed"  # type: ignore[union-attr]
    assert "Interrupted: cycle #1, #2 had been killed while running; marked failed." in waking_message(record)
    assert not ledger.query("SELECT * FROM dream_cycles WHERE status = 'running'")
    assert record.stats.pid is None  # kept only while it runs


# -- a real SIGKILL in the middle of the briefing's commit ----------------------------------------------

DREAM = """
import sys
from pathlib import Path
from dreamtui.core.config import Config
from dreamtui.core.ledger import Ledger
from dreamtui.core.dream.run import run_cycle
cfg = Config(transcripts=Path(sys.argv[1]), memory=Path(sys.argv[2]), state=Path(sys.argv[3]),
             extractor="command", command=(sys.executable, sys.argv[4]))
run_cycle(cfg, Ledger.open(cfg.state), project=sys.argv[5])
print("finished", flush=True)
"""


def _groups_in(folder: Path) -> set[int]:
    """Process groups, other than this test's, of processes whose working folder is ``folder``."""
    groups = set()
    for entry in Path("/proc").iterdir():
        try:
            if not entry.name.isdigit() or os.readlink(entry / "cwd") != str(folder):
                continue
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2 :].split()
        if fields[0] != "Z" and int(fields[2]) != os.getpgrp():
            groups.add(int(fields[2]))
    return groups


def test_a_dream_killed_mid_commit_is_put_right_by_the_next_run(
    config: Config, ledger: Ledger, repo: git.Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    install(config, "busy")
    person = person_state(repo)
    hang, started = tmp_path / "hang", tmp_path / "hook-started"
    # the person's pre-commit hook hangs on the review file's commit (REM) while `hang` exists
    hook(
        repo,
        "pre-commit",
        f"if [ -e {hang} ] && git diff --cached --name-only | grep -q reviews/; then\n"
        f"  touch {started}; sleep 60\nfi",
    )
    hang.write_text("")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            DREAM,
            str(config.transcripts),
            str(config.memory),
            str(config.state),
            str(RULES),
            ACME,
        ],
        env=dict(os.environ),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    wait_for(lambda: started.exists() or proc.poll() is not None)
    assert started.exists(), proc.stderr.read() if proc.stderr else ""
    for pgid in {proc.pid, *_groups_in(config.memory)}:  # the dream, its git and the hook, all at once
        os.killpg(pgid, signal.SIGKILL)
    out, _ = proc.communicate(timeout=30)
    assert b"finished" not in out
    hang.unlink()
    # what the kill left: a cycle `running`, git's index.lock, the review file written but not committed
    assert cycles.find_full(ledger, ACME, DAY).status == "running"  # type: ignore[union-attr]
    assert gitops.index_lock(repo).exists()
    assert REVIEW in repo.git.status("--porcelain", "--untracked-files=all")
    monkeypatch.setenv(gitops.STALE_LOCK_ENV, "0.5")

    record = run_cycle(config, ledger, project=ACME)  # the next run, the same day: nobody helped

    assert (record.status, record.stats.attempt, record.depth) == ("completed", 2, "deep")
    assert len(ledger.query("SELECT * FROM dream_cycles")) == 1
    recovered = "\n".join(record.stats.recovered)
    assert "cleared a stale" in recovered and "index.lock" in recovered
    assert f"committed {REVIEW} as an interrupted run left it" in recovered
    assert f"Recovered: committed {REVIEW}" in waking_message(record)
    assert not gitops.index_lock(repo).exists()
    assert clean(repo) and person_state(repo) == person
    assert (config.memory / REVIEW).exists() and gitops.show_file(repo, REVIEW) == (
        config.memory / REVIEW
    ).read_bytes()
    assert record.stats.kept == 2  # the killed attempt's candidates count, and were extracted once
    assert not ledger.query("SELECT * FROM generated_writes")
    assert "cleared a stale" in (Path(repo.git_dir) / gitops.RECOVERY_LOG).read_text()


# -- commit hooks that fail or hang ----------------------------------------------------------------------


def test_a_failing_hook_fails_rem_by_name_and_a_retry_that_day_is_not_blocked(
    config: Config, ledger: Ledger, repo: git.Repo, tmp_path: Path
) -> None:
    install(config, "busy")
    person = person_state(repo)
    index = repo.git.execute(["git", "ls-files", "-s"])
    refuse = tmp_path / "refuse"
    hook(repo, "pre-commit", f"if [ -e {refuse} ]; then echo 'reviews need a sign-off' >&2; exit 1; fi")
    refuse.write_text("")
    with pytest.raises(
        CycleFailed,
        match=r"REM: the pre-commit hook failed \(exit 1\): reviews need a sign-off; "
        r"git commit abandoned",
    ):
        run_cycle(config, ledger, project=ACME)
    assert repo.git.execute(["git", "ls-files", "-s"]) == index  # nothing of dreamtui's left staged
    assert f"?? {REVIEW}" in repo.git.status("--porcelain", "--untracked-files=all")
    assert person_state(repo) == person
    # the person decides on a proposal meanwhile, so the day's review file will read differently
    first = ledger.list_candidates(status="pending")[0]
    decisions.reject(ledger, first.id, "not a lesson", "too obvious")
    refuse.unlink()
    record = run_cycle(config, ledger, project=ACME)
    assert (record.status, record.stats.attempt) == ("completed", 2)
    committed = gitops.show_file(repo, REVIEW)
    assert committed is not None and b"1 rejected" in committed
    assert clean(repo) and person_state(repo) == person


def test_a_hanging_hook_does_not_hang_the_dream(
    config: Config, ledger: Ledger, repo: git.Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    install(config, "busy")
    monkeypatch.setenv(gitops.HOOK_TIMEOUT_ENV, "1")
    index = repo.git.execute(["git", "ls-files", "-s"])
    hook(repo, "commit-msg", "sleep 60")
    started = time.monotonic()
    with pytest.raises(
        CycleFailed, match=r"REM: the commit-msg hook did not finish within 1s and was stopped"
    ):
        run_cycle(config, ledger, project=ACME)
    assert time.monotonic() - started < 15
    assert repo.git.execute(["git", "ls-files", "-s"]) == index
    assert not gitops.index_lock(repo).exists()
    assert cycles.find_full(ledger, ACME, DAY).status == "failed"  # type: ignore[union-attr]


def test_a_hanging_hook_does_not_hang_accept(
    config: Config, ledger: Ledger, repo: git.Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(gitops.HOOK_TIMEOUT_ENV, "1")
    cand = refactor_lesson(1)
    ledger.put_candidate(cand)
    before = (
        repo.git.execute(["git", "ls-files", "-s"]),
        repo.git.status("--porcelain", "--untracked-files=all"),
    )
    head = repo.head.commit.hexsha
    hook(repo, "pre-commit", "sleep 60")
    started = time.monotonic()
    with pytest.raises(
        gitops.MemoryRepoError,
        match=r"^the pre-commit hook did not finish within 1s and was stopped; "
        r"git commit abandoned",
    ):
        decisions.accept(config, ledger, cand.id)
    assert time.monotonic() - started < 10
    assert repo.head.commit.hexsha == head
    assert (
        repo.git.execute(["git", "ls-files", "-s"]),
        repo.git.status("--porcelain", "--untracked-files=all"),
    ) == before  # topic file and index line put back, nothing staged
    assert ledger.get_candidate(cand.id).status == "pending"
    assert not ledger.query("SELECT * FROM memory_intents")


# -- a person's edits are never taken for a leftover ------------------------------------------------------


def test_a_person_editing_a_leftover_briefing_is_never_overwritten(
    config: Config, ledger: Ledger, repo: git.Repo
) -> None:
    hook(repo, "pre-commit", "exit 1")
    with pytest.raises(gitops.MemoryRepoError, match="pre-commit hook failed"):
        generated.write_generated(config, ledger, "briefing.md", b"dreamtui's briefing\n", "Briefing", {})
    (config.memory / "briefing.md").write_text("the person's own briefing\n")  # edits dreamtui's leftover
    (Path(repo.git_dir) / "hooks" / "pre-commit").unlink()
    notices = generated.reconcile_generated(config, ledger)
    assert notices == ["briefing.md was changed after an interrupted run wrote it: left as it is"]
    with pytest.raises(
        gitops.MemoryRepoError, match="briefing.md in the memory repository has uncommitted changes"
    ):
        generated.write_generated(config, ledger, "briefing.md", b"next briefing\n", "Briefing", {})
    assert (config.memory / "briefing.md").read_text() == "the person's own briefing\n"


def test_a_version_dreamtui_staged_under_a_persons_edit_is_unstaged(
    config: Config, ledger: Ledger, repo: git.Repo
) -> None:
    data = b"dreamtui's briefing\n"
    generated.remember(ledger, "briefing.md", data, "Briefing", {"Dreamtui-Briefing": "yes"})
    (config.memory / "briefing.md").write_bytes(data)
    repo.git.add("briefing.md")  # killed between `git add` and `git commit`
    (config.memory / "briefing.md").write_text("the person's own briefing\n")
    notices = generated.reconcile_generated(config, ledger)
    assert notices == [
        "unstaged dreamtui's version of briefing.md left by an interrupted run; "
        "your changes to the file are left as they are"
    ]
    assert repo.git.status("--porcelain", "--", "briefing.md") == "?? briefing.md"
    assert (config.memory / "briefing.md").read_text() == "the person's own briefing\n"
    assert repo.git.diff("--cached", "--name-only") == "staged.md"  # the person's staged file is still staged


@pytest.mark.parametrize("left", ["untracked", "staged"])
def test_a_leftover_of_dreamtuis_own_never_blocks_the_next_write(
    config: Config, ledger: Ledger, repo: git.Repo, left: str
) -> None:
    """Without any reconcile: the next write that day replaces dreamtui's own leftover review file
    (a hook said no, or the run was killed between `git add` and `git commit`)."""
    first = b"# Review of 2026-03-10\n\n1 candidate survived the gate: 1 pending.\n"
    if left == "untracked":
        hook(repo, "pre-commit", "exit 1")
        with pytest.raises(gitops.MemoryRepoError, match="pre-commit hook failed"):
            generated.write_generated(config, ledger, REVIEW, first, "dreamtui: review", {})
        (Path(repo.git_dir) / "hooks" / "pre-commit").unlink()
    else:
        generated.remember(ledger, REVIEW, first, "dreamtui: review", {})
        (config.memory / "reviews").mkdir()
        (config.memory / REVIEW).write_bytes(first)
        repo.git.add(REVIEW)
    assert REVIEW in repo.git.status("--porcelain", "--untracked-files=all")
    second = first.replace(b"1 pending", b"1 rejected")
    result = generated.write_generated(config, ledger, REVIEW, second, "dreamtui: review", {})
    assert result is not None and gitops.show_file(repo, REVIEW) == second
    assert clean(repo) and repo.git.diff("--cached", "--name-only") == "staged.md"
