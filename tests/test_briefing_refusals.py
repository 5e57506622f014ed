"""A briefing decision that cannot be made leaves everything as it was: a reject needs a reason (the CLI,
the core and the app's dialog), and an accept whose git hook hangs leaves no ``briefing.md`` behind and
the proposal pending. Real git repositories and real hooks; the real app under Pilot."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from fakes.cli_world import folder_args
from fakes.gitrepo import git
from fakes.tui import make_config, plain, wait_for, wait_loaded

from dreamtui.cli.main import cli
from dreamtui.core.config import Config
from dreamtui.core.dream.run import run_cycle
from dreamtui.core.ledger import Ledger, briefings
from dreamtui.core.memory import briefing, gitops
from dreamtui.tui.app import DreamApp
from dreamtui.tui.screens.modals import ReasonModal

TEXT = "# Briefing\n\n## Working on\n- the refunds queue — source: `s.jsonl:3`\n"


@pytest.fixture(autouse=True)
def _home(git_home: Path) -> None:
    """Commits in the memory repository need an identity (and nothing of the user's)."""


def waiting(config: Config, ledger: Ledger, text: str = TEXT) -> int:
    """A memory repository with one commit, and a briefing version waiting for review."""
    repo = gitops.open_repo(config.memory)
    (config.memory / "MEMORY.md").write_text("- [Tests](tests.md) — run them\n")
    gitops.commit_paths(repo, ["MEMORY.md"], "seed", {})
    return briefings.propose(
        ledger, cycle_id=None, text=text, sources=[], auto=False, commit=None, now="2026-03-10T09:00:00Z"
    )


def invoke(config: Config, *args: str):
    flags = [
        *folder_args(config),
    ]
    return CliRunner().invoke(cli, [*flags, "briefing", *args])


def one_line_exit_2(result) -> str:
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.output, result.output
    return lines[0]


# -- a reject needs a reason -------------------------------------------------------------------------


@pytest.mark.parametrize("reason", [None, "", "   "])
def test_briefing_reject_without_a_reason_is_refused_and_the_version_still_waits(
    config: Config, ledger: Ledger, reason: str | None
) -> None:
    bid = waiting(config, ledger)
    args = ["--reject"] if reason is None else ["--reject", "--reason", reason]
    line = one_line_exit_2(invoke(config, *args))
    assert (
        line == "dreamtui: a briefing reject needs a reason (--reason …): it is what the next one learns from"
    )
    assert briefing.get_proposal(ledger, bid).status == "pending"
    with pytest.raises(briefing.BriefingError, match="needs a reason"):
        briefing.reject_briefing(config, ledger, bid, "")
    assert briefing.get_proposal(ledger, bid).status == "pending"
    result = invoke(config, "--reject", "--reason", "too vague")
    assert result.exit_code == 0, result.output
    assert briefing.get_proposal(ledger, bid).reason == "too vague"


async def test_the_apps_briefing_reject_dialog_needs_a_reason(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("DREAMTUI_NOW", "2026-11-28T18:30:00Z")
    cfg = make_config(tmp_path)
    ledger = Ledger.open(cfg.state)
    run_cycle(cfg, ledger)
    bid = briefing.waiting_proposal(ledger).id
    app = DreamApp(cfg, ledger, watch=False)
    async with app.run_test(size=(150, 45)) as pilot:
        await wait_loaded(pilot)
        await pilot.press("4")
        await wait_for(pilot, lambda: "waits for your review" in plain(app, "#briefing-title"))
        await pilot.press("r")
        await wait_for(pilot, lambda: isinstance(app.screen, ReasonModal))
        await pilot.press("enter")  # no reason: nothing rejected, the dialog says why and stays
        await wait_for(pilot, lambda: "A reason is needed" in plain(app, "#reason-needed"))
        assert isinstance(app.screen, ReasonModal)
        assert briefing.get_proposal(ledger, bid).status == "pending"
        await pilot.press(*"too vague", "enter")
        await wait_for(pilot, lambda: briefing.get_proposal(ledger, bid).status == "rejected", timeout=20)
    assert briefing.get_proposal(ledger, bid).reason == "too vague"
    ledger.close()


# -- a hanging hook on accept ------------------------------------------------------------------------


def hanging_hook(config: Config) -> None:
    hooks = config.memory / ".git" / "hooks"
    hooks.mkdir(parents=True, exist_ok=True)
    (hooks / "pre-commit").write_text("#!/bin/sh\nsleep 60\n")
    (hooks / "pre-commit").chmod(0o755)


@pytest.mark.parametrize("had_one", [False, True])
def test_a_hanging_hook_on_briefing_accept_leaves_the_repository_as_before(
    config: Config, ledger: Ledger, monkeypatch: pytest.MonkeyPatch, had_one: bool
) -> None:
    bid = waiting(config, ledger)
    if had_one:  # an earlier briefing is in HEAD: it must be what the file holds after
        (config.memory / "briefing.md").write_text("# Briefing\n\nthe old one\n")
        gitops.commit_paths(gitops.open_repo(config.memory), ["briefing.md"], "old briefing", {})
    before = (
        git(config.memory, "rev-parse", "HEAD"),
        git(config.memory, "status", "--porcelain", "--untracked-files=all"),
        git(config.memory, "ls-files", "-s"),
        (config.memory / "briefing.md").read_bytes() if had_one else None,
    )
    hanging_hook(config)
    monkeypatch.setenv(gitops.HOOK_TIMEOUT_ENV, "1")
    line = one_line_exit_2(invoke(config, "--accept"))
    assert "the pre-commit hook did not finish within 1s and was stopped" in line
    after = (
        git(config.memory, "rev-parse", "HEAD"),
        git(config.memory, "status", "--porcelain", "--untracked-files=all"),
        git(config.memory, "ls-files", "-s"),
        (config.memory / "briefing.md").read_bytes() if (config.memory / "briefing.md").exists() else None,
    )
    assert after == before  # no untracked briefing.md, nothing staged, HEAD unmoved
    assert briefing.get_proposal(ledger, bid).status == "pending"
    assert ledger.query("SELECT COUNT(*) AS n FROM generated_writes")[0]["n"] == 0
    (config.memory / ".git" / "hooks" / "pre-commit").unlink()
    result = invoke(config, "--accept")  # the hook gone, the same accept goes through
    assert result.exit_code == 0, result.output
    assert (config.memory / "briefing.md").read_text() == TEXT
    assert briefing.get_proposal(ledger, bid).status == "accepted"
