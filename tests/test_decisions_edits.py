"""A person's work survives: an undone (or failed) edited accept keeps the edit; an amended accept
commit that lost its trailers still counts as accepted. Real git repositories, a real ledger."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import git
import pytest
from click.testing import CliRunner
from fakes.candidates import make_pending as make_candidate

from dreamtui.cli.main import cli
from dreamtui.core.config import Config
from dreamtui.core.errors import MemoryRepoError
from dreamtui.core.ledger import Ledger
from dreamtui.core.memory import decisions, gitops
from dreamtui.core.memory.frontmatter import parse
from dreamtui.core.models import Candidate

NOW = "2026-02-03T09:15:00Z"
EDITS = {
    "claim": "Run make migrate before pytest",
    "why": "the test schema drifts",
    "how": "make migrate && pytest -q",
}


@pytest.fixture(autouse=True)
def _git_home(git_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DREAMTUI_NOW", NOW)


def make(ledger: Ledger, n: int = 1, **kw: object) -> Candidate:
    """A pending candidate of the offline extractor (the decisions tests' factory)."""
    return make_candidate(ledger, n, **{"extractor": "heuristic", "model": None, **kw})


def cli_run(config: Config, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["--memory", str(config.memory), "--state", str(config.state), *args])
    return result.exit_code, result.stdout, result.stderr


def topic_files(config: Config) -> list[str]:
    return sorted(p.name for p in config.memory.glob("*.md") if p.name != "MEMORY.md")


def log(config: Config) -> list[str]:
    return git.Repo(config.memory).git.log("--format=%s").splitlines()


# -- 1. undo of an edited accept ------------------------------------------------------------------


def test_undo_of_an_edited_accept_keeps_the_edit_and_accepting_again_writes_it(
    config: Config, ledger: Ledger
) -> None:
    cand = make(ledger)
    first = decisions.accept(config, ledger, cand.id, edits=EDITS)
    assert "Run make migrate before pytest" in (config.memory / first.path).read_text()
    undone = decisions.undo_last(config, ledger)
    assert undone.action == "accept" and not (config.memory / first.path).exists()
    assert any("keeps your edited text" in n for n in undone.notices)
    back = ledger.get_candidate(cand.id)
    assert back.status == "pending"
    assert (back.claim, back.why, back.how_to_apply) == (EDITS["claim"], EDITS["why"], EDITS["how"])
    assert decisions.is_edited(ledger, cand.id)  # still marked as edited, the extracted text kept apart
    assert decisions.original_text(ledger, cand.id) == {
        "claim": cand.claim,
        "why": cand.why,
        "how_to_apply": cand.how_to_apply,
    }

    again = decisions.accept(config, ledger, cand.id)  # no edits given: the person's text is written
    meta, body = parse((config.memory / again.path).read_text())
    assert again.path == "run-make-migrate-before-pytest.md"
    assert meta["name"] == EDITS["claim"] and meta["candidate"] == cand.id
    assert "**Why:** the test schema drifts" in body and "**How to apply:** make migrate && pytest -q" in body
    assert "Run the migrations before the tests" not in body
    index = (config.memory / "MEMORY.md").read_text()
    assert index == f"- [{EDITS['claim']}]({again.path}) — the test schema drifts\n"


def test_the_cli_undo_brings_back_the_edited_text(config: Config, ledger: Ledger) -> None:
    cand = make(ledger)
    code, _, err = cli_run(config, "accept", cand.id, "--claim", EDITS["claim"], "--why", EDITS["why"])
    assert code == 0, err
    code, out, err = cli_run(config, "undo")
    assert code == 0 and "undid accept" in out
    assert "keeps your edited text" in err
    code, out, _ = cli_run(config, "candidates", "--json")
    item = next(c for c in json.loads(out) if c["id"] == cand.id)
    assert (item["status"], item["claim"], item["why"]) == ("pending", EDITS["claim"], EDITS["why"])
    code, out, err = cli_run(config, "accept", cand.id)
    assert code == 0, err
    assert topic_files(config) == ["run-make-migrate-before-pytest.md"]
    assert EDITS["claim"] in (config.memory / "run-make-migrate-before-pytest.md").read_text()
    assert len(log(config)) == 3  # accept, revert, accept


def test_an_undone_secret_fix_can_be_accepted_again_without_retyping(config: Config, ledger: Ledger) -> None:
    cand = make(ledger, secrets=["aws-access-key"], claim="Use key [REDACTED:aws-access-key] for staging")
    decisions.accept(config, ledger, cand.id, edits={"claim": "Staging keys live in the vault"})
    decisions.undo_last(config, ledger)
    result = decisions.accept(config, ledger, cand.id)  # the edit that removed the secret still counts
    text = (config.memory / result.path).read_text()
    assert "Staging keys live in the vault" in text and "REDACTED" not in text


def test_a_failed_accept_keeps_the_persons_edit(config: Config, ledger: Ledger) -> None:
    decisions.accept(config, ledger, make(ledger, 1).id)
    cand = make(ledger, 2)
    index = config.memory / "MEMORY.md"
    mine = index.read_text() + "- my own line, not committed yet\n"
    index.write_text(mine)
    with pytest.raises(MemoryRepoError, match="uncommitted changes"):
        decisions.accept(config, ledger, cand.id, edits=EDITS)
    assert index.read_text() == mine  # nothing of the person's changed
    assert ledger.get_candidate(cand.id).claim == EDITS["claim"]  # and the edit is not lost
    git.Repo(config.memory).git.checkout("--", "MEMORY.md")
    result = decisions.accept(config, ledger, cand.id)
    assert EDITS["claim"] in (config.memory / result.path).read_text()


def test_an_edit_that_holds_a_secret_is_never_stored(config: Config, ledger: Ledger) -> None:
    cand = make(ledger)
    with pytest.raises(decisions.DecisionError, match="holds a secret"):
        decisions.accept(config, ledger, cand.id, edits={"claim": "Use key AKIAIOSFODNN7EXAMPLF for staging"})
    stored = ledger.get_candidate(cand.id)
    assert stored.claim == cand.claim and not decisions.is_edited(ledger, cand.id)
    assert "AKIA" not in "".join(str(tuple(r)) for r in ledger.query("SELECT * FROM candidates"))


# -- 2. an amended accept commit without its trailers ----------------------------------------------


def amend(config: Config, message: str = "Remember to migrate first") -> str:
    repo = git.Repo(config.memory)
    repo.git.commit("--amend", "-q", "-m", message)  # the trailer paragraph is gone
    assert "Dreamtui-" not in repo.head.commit.message
    return repo.head.commit.hexsha


def test_an_amend_that_drops_the_trailer_does_not_reopen_the_accept(config: Config, ledger: Ledger) -> None:
    cand = make(ledger)
    result = decisions.accept(config, ledger, cand.id)
    new_sha = amend(config)
    assert new_sha != result.commit_sha
    report = decisions.reconcile(config, ledger)
    assert report.reopened == [] and ledger.get_candidate(cand.id).status == "accepted"
    assert any("the accept stands" in n for n in report.notices)
    row = ledger.query("SELECT commit_sha FROM decisions WHERE action = 'accept' AND undone = 0")[0]
    assert row["commit_sha"] == new_sha  # the ledger now points at the commit that holds the memory
    again = decisions.reconcile(config, ledger)
    assert again.ok and not again.notices  # settled: nothing to say the next time
    # accepting again makes no second commit and no second file
    assert decisions.accept(config, ledger, cand.id).commit_sha == new_sha
    assert topic_files(config) == [Path(result.path).name] and len(log(config)) == 1
    # and undo reverts the amended commit
    undone = decisions.undo_last(config, ledger)
    assert undone.commit_sha and not (config.memory / result.path).exists()
    assert (config.memory / "MEMORY.md").read_text() == ""
    assert ledger.get_candidate(cand.id).status == "pending"
    assert decisions.reconcile(config, ledger).ok


def test_an_amend_that_also_edits_the_memory_keeps_the_accept(config: Config, ledger: Ledger) -> None:
    cand = make(ledger)
    result = decisions.accept(config, ledger, cand.id)
    path = config.memory / result.path
    path.write_text(path.read_text().replace("the schema drifts otherwise", "the schema drifts (fixed typo)"))
    git.Repo(config.memory).git.add(result.path)
    amend(config)
    report = decisions.reconcile(config, ledger)  # the frontmatter still names the candidate
    assert report.reopened == [] and ledger.get_candidate(cand.id).status == "accepted"


def test_a_reaccept_after_undo_amended_is_not_taken_for_the_undo(config: Config, ledger: Ledger) -> None:
    cand = make(ledger)
    decisions.accept(config, ledger, cand.id)
    decisions.undo_last(config, ledger)
    decisions.accept(config, ledger, cand.id)
    new_sha = amend(config)
    report = decisions.reconcile(config, ledger)
    assert report.undone == [] and report.reopened == []
    assert ledger.get_candidate(cand.id).status == "accepted"
    assert (
        ledger.query("SELECT commit_sha FROM decisions WHERE action = 'accept' AND undone = 0")[0][0]
        == new_sha
    )


class _Killed(BaseException):
    """Stands in for SIGKILL at a step boundary (the crash test kills real processes)."""


def test_a_crash_after_the_commit_then_an_amend_records_the_accept(
    config: Config, ledger: Ledger, monkeypatch: pytest.MonkeyPatch
) -> None:
    cand = make(ledger)
    monkeypatch.setenv(decisions.CRASH_ENV, "commit")

    real_kill = os.kill

    def die(pid: int, sig: int) -> None:
        if pid == os.getpid() and sig == signal.SIGKILL:
            raise _Killed
        real_kill(pid, sig)

    monkeypatch.setattr(os, "kill", die)
    with pytest.raises(_Killed):
        decisions.accept(config, ledger, cand.id)
    monkeypatch.delenv(decisions.CRASH_ENV)
    assert ledger.get_candidate(cand.id).status == "pending"  # the ledger never heard of the commit
    assert ledger.query("SELECT COUNT(*) FROM memory_intents")[0][0] == 1
    new_sha = amend(config)
    report = decisions.reconcile(config, ledger)
    assert report.recorded == [cand.id] and report.restored == []
    assert ledger.get_candidate(cand.id).status == "accepted"
    assert ledger.query("SELECT commit_sha FROM decisions WHERE action = 'accept'")[0][0] == new_sha
    assert not ledger.query("SELECT * FROM memory_intents")
    assert decisions.accept(config, ledger, cand.id).commit_sha == new_sha  # no second commit
    assert len(log(config)) == 1 and len(topic_files(config)) == 1


def test_a_reset_still_reopens(config: Config, ledger: Ledger) -> None:
    keep = make(ledger, 1)
    decisions.accept(config, ledger, keep.id)
    cand = make(ledger, 2)
    decisions.accept(config, ledger, cand.id)
    repo = git.Repo(config.memory)
    repo.git.reset("-q", "--hard", "HEAD~1")
    amend(config)  # the surviving accept's commit also lost its trailer
    report = decisions.reconcile(config, ledger)
    assert report.reopened == [cand.id]
    assert ledger.get_candidate(keep.id).status == "accepted"
    assert gitops.show_file(repo, topic_files(config)[0]) is not None
