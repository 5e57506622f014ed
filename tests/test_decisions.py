"""Accept, reject, skip, undo and reconcile against a real git repository and a real ledger."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import git
import pytest
from fakes.candidates import make_pending as make

from dreamtui.core.config import Config
from dreamtui.core.errors import MemoryRepoError
from dreamtui.core.ledger import Ledger
from dreamtui.core.memory import decisions, gitops
from dreamtui.core.memory.frontmatter import parse, validate
from dreamtui.core.models import Candidate

NOW = "2026-02-03T09:15:00Z"


@pytest.fixture(autouse=True)
def _git_home(git_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DREAMTUI_NOW", NOW)


def repo_of(config: Config) -> git.Repo:
    return git.Repo(config.memory)


def test_accept_writes_topic_and_index_and_commits_exactly_them(config: Config, ledger: Ledger) -> None:
    cand = make(ledger)
    result = decisions.accept(config, ledger, cand.id)
    root = config.memory
    assert result.path == "run-the-migrations-before-the-tests-1.md"
    meta, body = parse((root / result.path).read_text())
    assert validate(meta) == []
    assert meta["candidate"] == cand.id and meta["quote"] == cand.quote and meta["verified_line"] == 17
    assert meta["created"] == NOW and meta["extractor"] == "anthropic/claude-x"
    assert (
        "**Why:** the schema drifts otherwise" in body and "**How to apply:** make migrate && pytest" in body
    )
    index = (root / "MEMORY.md").read_text()
    assert (
        index == f"- [Run the migrations before the tests 1]({result.path}) — the schema drifts otherwise\n"
    )
    repo = repo_of(config)
    assert sorted(gitops.changed_paths(repo, result.commit_sha)) == sorted([result.path, "MEMORY.md"])
    assert gitops.list_commits(repo)[0].trailers == {"Dreamtui-Candidate": [cand.id]}
    assert repo.active_branch.name == "main"
    assert ledger.get_candidate(cand.id).status == "accepted"
    row = ledger.query("SELECT * FROM decisions")[0]
    assert (row["action"], row["commit_sha"], row["memory_path"], row["decided_at"], row["decided_by"]) == (
        "accept",
        result.commit_sha,
        result.path,
        NOW,
        "person",
    )


def test_project_scope_goes_under_projects(config: Config, ledger: Ledger) -> None:
    cand = make(ledger, scope="project")
    result = decisions.accept(config, ledger, cand.id)
    assert result.path == "projects/home-me-shop/run-the-migrations-before-the-tests-1.md"
    assert (config.memory / result.path).is_file()


def test_same_claim_twice_gets_a_suffixed_file(config: Config, ledger: Ledger) -> None:
    a = make(ledger, 1, claim="Use uv")
    b = make(ledger, 2, claim="Use uv")
    assert decisions.accept(config, ledger, a.id).path == "use-uv.md"
    assert decisions.accept(config, ledger, b.id).path == "use-uv-2.md"
    assert len((config.memory / "MEMORY.md").read_text().splitlines()) == 2


def test_edits_are_applied(config: Config, ledger: Ledger) -> None:
    cand = make(ledger)
    result = decisions.accept(
        config, ledger, cand.id, edits={"claim": "Migrate first", "how": "run make migrate"}
    )
    meta, body = parse((config.memory / result.path).read_text())
    assert result.path == "migrate-first.md" and meta["name"] == "Migrate first"
    assert "**How to apply:** run make migrate" in body
    with pytest.raises(decisions.DecisionError, match="only claim, why, how, type and scope"):
        decisions.accept(config, ledger, make(ledger, 2).id, edits={"quote": "something else"})
    with pytest.raises(decisions.DecisionError, match="claim is empty"):
        decisions.accept(config, ledger, make(ledger, 3).id, edits={"claim": "  \n"})


def test_persons_staged_and_unstaged_work_is_untouched(config: Config, ledger: Ledger) -> None:
    repo = gitops.open_repo(config.memory)
    root = config.memory
    (root / "notes.md").write_text("v1\n")
    repo.git.add("notes.md")
    repo.git.commit("-q", "-m", "mine")
    (root / "staged.md").write_text("staged\n")
    repo.git.add("staged.md")
    (root / "notes.md").write_text("v2 unstaged\n")
    (root / "scratch.txt").write_text("untracked\n")
    before = (repo.git.status("--porcelain"), repo.git.diff("--cached"), repo.git.diff())
    decisions.accept(config, ledger, make(ledger).id)
    assert (repo.git.status("--porcelain"), repo.git.diff("--cached"), repo.git.diff()) == before


def test_uncommitted_changes_to_the_index_refuse_the_accept(config: Config, ledger: Ledger) -> None:
    decisions.accept(config, ledger, make(ledger, 1).id)
    (config.memory / "MEMORY.md").write_text("my own edit\n")
    cand = make(ledger, 2)
    with pytest.raises(MemoryRepoError, match="MEMORY.md has uncommitted changes"):
        decisions.accept(config, ledger, cand.id)
    assert (config.memory / "MEMORY.md").read_text() == "my own edit\n"
    assert ledger.get_candidate(cand.id).status == "pending"


def test_ceiling_refusal_leaves_nothing_behind(config: Config, ledger: Ledger) -> None:
    repo = gitops.open_repo(config.memory)
    (config.memory / "MEMORY.md").write_text("- [x](x.md)\n" * 200)
    repo.git.add("MEMORY.md")
    repo.git.commit("-q", "-m", "full index")
    head = repo.head.commit.hexsha
    cand = make(ledger)
    with pytest.raises(
        MemoryRepoError, match="accept refused: MEMORY.md would have 201 lines.*merge or remove"
    ):
        decisions.accept(config, ledger, cand.id)
    assert repo.head.commit.hexsha == head
    assert repo.git.status("--porcelain") == ""
    assert ledger.get_candidate(cand.id).status == "pending"
    assert not ledger.query("SELECT * FROM memory_intents")


def test_accept_warns_from_85_percent(config: Config, ledger: Ledger) -> None:
    repo = gitops.open_repo(config.memory)
    (config.memory / "MEMORY.md").write_text("- [x](x.md)\n" * 169)
    repo.git.add("MEMORY.md")
    repo.git.commit("-q", "-m", "nearly full")
    result = decisions.accept(config, ledger, make(ledger).id)
    assert any("MEMORY.md is at 85%" in n for n in result.notices)


def test_tool_output_needs_an_explicit_acknowledgement(config: Config, ledger: Ledger) -> None:
    cand = make(ledger, provenance="tool")
    with pytest.raises(decisions.DecisionError, match="tool output.*explicit confirmation"):
        decisions.accept(config, ledger, cand.id)
    assert not (config.memory / "MEMORY.md").exists()
    assert decisions.accept(config, ledger, cand.id, allow_tool=True).commit_sha


def test_secret_flagged_needs_an_edit_that_removes_it(config: Config, ledger: Ledger) -> None:
    cand = make(ledger, secrets=["aws-access-key"], claim="Use key [REDACTED:aws-access-key] for staging")
    with pytest.raises(decisions.DecisionError, match="flagged for a secret"):
        decisions.accept(config, ledger, cand.id)
    with pytest.raises(decisions.DecisionError, match="still shows where a secret was"):
        decisions.accept(config, ledger, cand.id, edits={"why": "edited something else"})
    leaky = {"claim": "Use key AKIAIOSFODNN7EXAMPLF for staging"}
    with pytest.raises(decisions.DecisionError, match="text holds a secret"):
        decisions.accept(config, ledger, cand.id, edits=leaky)
    result = decisions.accept(config, ledger, cand.id, edits={"claim": "Staging keys live in the vault"})
    assert "AKIA" not in (config.memory / result.path).read_text()


def test_auto_never_accepts_untrusted_or_duplicates(config: Config, ledger: Ledger) -> None:
    for n, kw in enumerate([{"provenance": "tool"}, {"duplicate_of": "x.md"}], start=1):
        cand = make(ledger, n, **kw)
        with pytest.raises(decisions.DecisionError, match="only a person"):
            decisions.accept(config, ledger, cand.id, decided_by="auto", allow_tool=True)


def test_accepting_twice_returns_the_same_commit(config: Config, ledger: Ledger) -> None:
    cand = make(ledger)
    first = decisions.accept(config, ledger, cand.id)
    again = decisions.accept(config, ledger, cand.id)
    assert again.commit_sha == first.commit_sha and "already accepted" in again.notices[-1]
    assert len(gitops.list_commits(repo_of(config))) == 1


def test_unknown_and_non_pending_candidates(config: Config, ledger: Ledger) -> None:
    with pytest.raises(decisions.DecisionError, match="no candidate with id 'nope'"):
        decisions.accept(config, ledger, "nope")
    cand = make(ledger)
    decisions.reject(ledger, cand.id, "wrong", "not true")
    with pytest.raises(decisions.DecisionError, match="is rejected, not pending"):
        decisions.accept(config, ledger, cand.id)


def test_reject_and_skip_record_who_and_when(config: Config, ledger: Ledger) -> None:
    a, b, c = make(ledger, 1), make(ledger, 2), make(ledger, 3)
    decisions.reject(ledger, a.id, "not-a-lesson", "just chatter")
    decisions.reject(ledger, b.id, "Too_Specific", "one-off path")  # the short form
    decisions.skip(ledger, c.id)
    rows = ledger.query(
        "SELECT candidate_id, action, category, reason, decided_by, decided_at FROM decisions"
    )
    assert [tuple(r) for r in rows] == [
        (a.id, "reject", "not a lesson", "just chatter", "person", NOW),
        (b.id, "reject", "too specific", "one-off path", "person", NOW),
        (c.id, "skip", None, None, "person", NOW),
    ]
    assert [ledger.get_candidate(x.id).status for x in (a, b, c)] == ["rejected", "rejected", "pending"]
    with pytest.raises(decisions.DecisionError, match="unknown reject category 'meh'"):
        decisions.reject(ledger, c.id, "meh", "x")


def test_undo_an_accept_is_a_revert_commit(config: Config, ledger: Ledger) -> None:
    first = decisions.accept(config, ledger, make(ledger, 1).id)
    cand = make(ledger, 2)
    second = decisions.accept(config, ledger, cand.id)
    result = decisions.undo_last(config, ledger)
    assert (result.candidate_id, result.action) == (cand.id, "accept")
    repo = repo_of(config)
    info = gitops.list_commits(repo)[0]
    assert info.sha == result.commit_sha and info.trailers == {"Dreamtui-Undo": [cand.id]}
    assert info.reverts == second.commit_sha and info.subject.startswith('Revert "dreamtui: remember')
    assert not (config.memory / second.path).exists()
    assert (config.memory / "MEMORY.md").read_text().count("\n") == 1 and first.path in (
        config.memory / "MEMORY.md"
    ).read_text()
    assert ledger.get_candidate(cand.id).status == "pending"
    assert repo.git.status("--porcelain") == ""
    assert decisions.reconcile(config, ledger).ok
    again = decisions.accept(config, ledger, cand.id)  # it can be accepted again
    assert again.commit_sha != second.commit_sha
    assert decisions.reconcile(config, ledger).ok


def test_undo_a_reject_or_skip_returns_to_pending(config: Config, ledger: Ledger) -> None:
    a, b = make(ledger, 1), make(ledger, 2)
    decisions.reject(ledger, a.id, "wrong", "no")
    decisions.skip(ledger, b.id)
    assert decisions.undo_last(config, ledger).action == "skip"
    assert decisions.undo_last(config, ledger).candidate_id == a.id
    assert ledger.get_candidate(a.id).status == "pending"
    with pytest.raises(decisions.DecisionError, match="nothing to undo"):
        decisions.undo_last(config, ledger)


def test_reconcile_records_a_commit_the_ledger_missed(config: Config, ledger: Ledger) -> None:
    cand = make(ledger)
    result = decisions.accept(config, ledger, cand.id)
    with ledger.write() as c:  # as if the process died between the commit and the ledger write
        c.execute("DELETE FROM decisions")
        c.execute("UPDATE candidates SET status = 'pending'")
    report = decisions.reconcile(config, ledger)
    assert report.recorded == [cand.id] and not report.ok
    assert ledger.get_candidate(cand.id).status == "accepted"
    assert ledger.query("SELECT commit_sha FROM decisions")[0][0] == result.commit_sha
    assert decisions.reconcile(config, ledger).ok


def test_reconcile_reopens_an_accept_whose_commit_is_gone(config: Config, ledger: Ledger) -> None:
    keep = make(ledger, 1)
    decisions.accept(config, ledger, keep.id)
    cand = make(ledger, 2)
    decisions.accept(config, ledger, cand.id)
    repo = repo_of(config)
    repo.git.reset("-q", "--hard", "HEAD~1")  # the person threw the commit away
    report = decisions.reconcile(config, ledger)
    assert report.reopened == [cand.id]
    assert ledger.get_candidate(cand.id).status == "pending"
    assert ledger.get_candidate(keep.id).status == "accepted"


def test_reconcile_sees_a_persons_own_git_revert(config: Config, ledger: Ledger) -> None:
    cand = make(ledger)
    result = decisions.accept(config, ledger, cand.id)
    repo_of(config).git.revert("--no-edit", result.commit_sha)
    assert decisions.reconcile(config, ledger).undone == [cand.id]
    assert ledger.get_candidate(cand.id).status == "pending"


def test_reconcile_does_not_reopen_everything_for_a_different_repo(
    config: Config, ledger: Ledger, tmp_path: Path
) -> None:
    cand = make(ledger)
    decisions.accept(config, ledger, cand.id)
    other = Config(transcripts=config.transcripts, memory=tmp_path / "other", state=config.state)
    gitops.open_repo(other.memory)
    report = decisions.reconcile(other, ledger)
    assert "none of the ledger's accept commits" in report.notices[0]
    assert ledger.get_candidate(cand.id).status == "accepted"


def test_failed_commit_rolls_back_the_files(config: Config, ledger: Ledger, monkeypatch) -> None:
    decisions.accept(config, ledger, make(ledger, 1).id)
    repo = repo_of(config)
    head, index = repo.head.commit.hexsha, (config.memory / "MEMORY.md").read_bytes()
    hook = Path(repo.git_dir) / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\necho 'hook says no' >&2\nexit 1\n")
    hook.chmod(0o755)
    cand = make(ledger, 2)
    with pytest.raises(MemoryRepoError, match="hook says no"):
        decisions.accept(config, ledger, cand.id)
    assert repo.head.commit.hexsha == head
    assert (config.memory / "MEMORY.md").read_bytes() == index
    assert repo.git.status("--porcelain", "--untracked-files=all") == ""
    assert ledger.get_candidate(cand.id).status == "pending"
    assert not ledger.query("SELECT * FROM memory_intents")


def test_a_symlinked_projects_folder_is_refused(config: Config, ledger: Ledger, tmp_path: Path) -> None:
    gitops.open_repo(config.memory)
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(outside, config.memory / "projects")
    with pytest.raises(MemoryRepoError, match="symlink|not a plain folder"):
        decisions.accept(config, ledger, make(ledger, scope="project").id)
    assert list(outside.iterdir()) == []


def test_detached_head_refuses_accept(config: Config, ledger: Ledger) -> None:
    decisions.accept(config, ledger, make(ledger, 1).id)
    repo_of(config).git.checkout("-q", "--detach")
    cand = make(ledger, 2)
    with pytest.raises(MemoryRepoError, match="detached HEAD"):
        decisions.accept(config, ledger, cand.id)
    assert ledger.get_candidate(cand.id).status == "pending"


def test_hostile_text_is_cleaned_in_the_file_and_kept_verbatim_as_evidence(
    config: Config, ledger: Ledger
) -> None:
    quote = "run \x1b[31mrm\x1b[0m ---\n!!python/object:os.system\u2028[bold]x[/bold]\x85"
    cand = make(ledger, claim="Check \x1b]8;;http://evil\x07links\x1b]8;;\x07\n---\nname: pwned", quote=quote)
    result = decisions.accept(config, ledger, cand.id)
    text = (config.memory / result.path).read_text(encoding="utf-8")
    meta, body = parse(text)
    assert meta["quote"] == quote and meta["name"] == "Check links --- name: pwned"
    assert "\x1b" not in body and validate(meta) == []
    assert (config.memory / "MEMORY.md").read_text().count("\n") == 1


def test_revert_one_older_memory_by_path(config: Config, ledger: Ledger) -> None:
    first, second = make(ledger, 1), make(ledger, 2)
    old = decisions.accept(config, ledger, first.id)
    new = decisions.accept(config, ledger, second.id)
    result = decisions.revert_memory(config, ledger, old.path)
    assert result.candidate_id == first.id
    assert not (config.memory / old.path).exists() and (config.memory / new.path).exists()
    index = (config.memory / "MEMORY.md").read_text().splitlines()
    assert len(index) == 1 and new.path in index[0]
    assert ledger.get_candidate(first.id).status == "pending"
    assert ledger.get_candidate(second.id).status == "accepted"
    assert decisions.reconcile(config, ledger).ok
    with pytest.raises(decisions.DecisionError, match="no accepted memory"):
        decisions.revert_memory(config, ledger, old.path)


def test_accept_in_a_repo_with_no_commits_keeps_staged_files(config: Config, ledger: Ledger) -> None:
    repo = gitops.open_repo(config.memory)
    (config.memory / "draft.md").write_text("mine\n")
    repo.git.add("draft.md")
    result = decisions.accept(config, ledger, make(ledger).id)
    assert len(gitops.list_commits(repo)) == 1
    assert sorted(gitops.changed_paths(repo, result.commit_sha)) == ["MEMORY.md", result.path]
    assert repo.git.status("--porcelain") == "A  draft.md"


def test_an_index_with_invalid_utf8_keeps_its_bytes(config: Config, ledger: Ledger) -> None:
    repo = gitops.open_repo(config.memory)
    raw = b"- [Caf\xe9](cafe.md) \xff\xfe odd bytes\r\n"
    (config.memory / "MEMORY.md").write_bytes(raw)
    repo.git.add("MEMORY.md")
    repo.git.commit("-q", "-m", "latin-1 index")
    result = decisions.accept(config, ledger, make(ledger).id)
    data = (config.memory / "MEMORY.md").read_bytes()
    assert data.startswith(raw) and data.count(b"\n") == 2 and result.path.encode() in data


def test_concurrent_accepts_are_serialised(config: Config, ledger: Ledger) -> None:
    cands = [make(ledger, n) for n in range(1, 9)]
    gitops.open_repo(config.memory)
    errors: list[BaseException] = []

    def worker(batch: list[Candidate]) -> None:
        own = Ledger.open(config.state)
        try:
            for cand in batch:
                decisions.accept(config, own, cand.id)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)
        finally:
            own.close()

    threads = [threading.Thread(target=worker, args=(cands[i::2],)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    repo = repo_of(config)
    assert len(gitops.list_commits(repo)) == 8
    assert len((config.memory / "MEMORY.md").read_text().splitlines()) == 8
    assert repo.git.status("--porcelain") == ""
    assert all(ledger.get_candidate(c.id).status == "accepted" for c in cands)


def test_an_auto_accept_found_only_in_git_is_recorded_as_auto(config: Config, ledger: Ledger) -> None:
    cand = make(ledger)
    decisions.accept(
        config,
        ledger,
        cand.id,
        decided_by="auto",
        trailers={"Dreamtui-Auto": "yes", "Dreamtui-Candidate": "forged"},
    )
    info = gitops.list_commits(repo_of(config))[0]
    assert info.trailers == {"Dreamtui-Auto": ["yes"], "Dreamtui-Candidate": [cand.id]}
    with ledger.write() as c:
        c.execute("DELETE FROM decisions")
        c.execute("UPDATE candidates SET status = 'pending'")
    assert decisions.reconcile(config, ledger).recorded == [cand.id]
    assert ledger.query("SELECT decided_by FROM decisions")[0][0] == "auto"


def test_listing_does_not_wait_for_a_persons_long_git_session(
    config: Config, ledger: Ledger, monkeypatch
) -> None:
    decisions.accept(config, ledger, make(ledger, 1).id)
    monkeypatch.setenv(gitops.LOCK_TIMEOUT_ENV, "0.2")
    monkeypatch.setenv(gitops.STALE_LOCK_ENV, "0")  # a live holder is waited on, however old its lock
    lock = Path(repo_of(config).git_dir) / "index.lock"
    lock.write_text("git add -p in progress")
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
    try:
        assert decisions.reconcile(config, ledger).ok  # read-only work goes on
        cand = make(ledger, 2)
        with pytest.raises(MemoryRepoError, match="index.lock is held"):
            decisions.accept(config, ledger, cand.id)
        assert lock.read_text() == "git add -p in progress"
    finally:
        holder.kill()
        holder.wait()
    assert ledger.get_candidate(cand.id).status == "pending"
    assert repo_of(config).git.status("--porcelain", "--untracked-files=all") == ""  # files put back
    assert not ledger.query("SELECT * FROM memory_intents")


def test_undo_refuses_to_delete_a_persons_later_edits(config: Config, ledger: Ledger) -> None:
    """A person edited and committed the memory after accepting it: undo says so and deletes nothing."""
    cand = make(ledger, 1)
    accepted = decisions.accept(config, ledger, cand.id)
    topic = config.memory / accepted.path
    topic.write_text(topic.read_text() + "\nAlso true for the staging database.\n")
    repo = repo_of(config)
    repo.git.add(accepted.path)
    repo.git.commit("-m", "my note")
    with pytest.raises(MemoryRepoError, match="edited after it was accepted"):
        decisions.undo_last(config, ledger)
    assert "staging database" in topic.read_text()
    assert ledger.get_candidate(cand.id).status == "accepted"
    assert repo.git.status("--porcelain") == ""
