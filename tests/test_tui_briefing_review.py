"""Issue 14 in the app (Pilot on real folders): the waiting briefing on the Briefings screen as a diff
with accept / reject, and `d` doing what the Sessions screen says it will."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from fakes.notes import messages
from fakes.tui import PAY, REFUNDS, make_config, plain, show, wait_for, wait_loaded, wait_modal

from dreamtui.core.dream.run import run_cycle
from dreamtui.core.ledger import Ledger
from dreamtui.core.memory import briefing
from dreamtui.tui.app import DreamApp
from dreamtui.tui.screens.modals import ReasonModal

SIZE = (150, 45)


@pytest.fixture
def dreamed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Demo transcripts and memory after the day's full cycle (its briefing waits for review)."""
    monkeypatch.setenv("DREAMTUI_NOW", "2026-11-28T18:30:00Z")
    cfg = make_config(tmp_path)
    ledger = Ledger.open(cfg.state)
    run_cycle(cfg, ledger)
    yield cfg, ledger
    ledger.close()


async def started(pilot) -> None:
    await wait_loaded(pilot)


def said(app) -> str:
    return "\n".join(messages(app))


def briefing_commits(cfg) -> list[str]:
    out = subprocess.run(
        ["git", "-C", str(cfg.memory), "log", "--format=%H", "--", "briefing.md"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return out.split()


async def test_the_waiting_briefing_is_a_diff_and_a_accepts_it_in_one_commit(dreamed) -> None:
    cfg, ledger = dreamed
    waiting = briefing.waiting_proposal(ledger)
    assert waiting is not None and not (cfg.memory / "briefing.md").exists()
    app = DreamApp(cfg, ledger, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        await pilot.press("4")
        await wait_for(pilot, lambda: "waits for your review" in plain(app, "#briefing-title"))
        diff = plain(app, "#briefing-diff")
        assert "+## The work" in diff and "— source: `" in diff
        await pilot.press("a")
        await wait_for(pilot, lambda: "Accepted briefing #1" in said(app), timeout=20)
        await wait_for(pilot, lambda: "briefing.md at" in plain(app, "#briefing-title"))
    assert (cfg.memory / "briefing.md").read_text() == waiting.text
    assert len(briefing_commits(cfg)) == 1
    assert briefing.get_proposal(ledger, waiting.id).status == "accepted"  # type: ignore[union-attr]


async def test_r_rejects_the_waiting_briefing_with_a_reason(dreamed) -> None:
    cfg, ledger = dreamed
    app = DreamApp(cfg, ledger, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        await pilot.press("4")
        await wait_for(pilot, lambda: "waits for your review" in plain(app, "#briefing-title"))
        await pilot.press("r")
        await wait_modal(pilot, ReasonModal)
        await pilot.press(*"too vague", "enter")
        await wait_for(pilot, lambda: "Rejected briefing #1: too vague" in said(app), timeout=20)
        await wait_for(pilot, lambda: "No briefing yet" in plain(app, "#briefing-title"))
        await pilot.press("a")  # nothing waits any more: a warning, nothing written
        await wait_for(pilot, lambda: "No briefing waits for review" in said(app))
    rows = ledger.query("SELECT status, reason FROM briefings")
    assert [(r["status"], r["reason"]) for r in rows] == [("rejected", "too vague")]
    assert not (cfg.memory / "briefing.md").exists() and briefing_commits(cfg) == []


async def test_d_does_what_the_sessions_screen_says(dreamed) -> None:
    cfg, ledger = dreamed
    app = DreamApp(cfg, ledger, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        await pilot.press("2")
        await wait_for(pilot, lambda: "nothing new since cycle #1" in plain(app, "#sessions-info"))
        assert "d dreams" not in plain(app, "#sessions-info")  # nothing new: d is not offered
        await pilot.press("d")  # pressed anyway: says so, no error, no cycle recorded
        await wait_for(pilot, lambda: "Nothing new in any project since cycle #1" in said(app), timeout=20)
        assert "failed" not in said(app)
        assert len(ledger.query("SELECT * FROM dream_cycles")) == 1
        # the person writes more in a session after the day's cycle
        path = cfg.transcripts / PAY / f"{REFUNDS}.jsonl"
        rec = {
            "type": "user",
            "sessionId": REFUNDS,
            "uuid": "after-the-cycle",
            "isSidechain": False,
            "timestamp": "2026-11-28T18:00:00.000Z",
            "message": {
                "role": "user",
                "content": "Never retry a refund call without the idempotency key, "
                "the provider charges twice when we do that.",
            },
        }
        with path.open("a") as fh:
            fh.write(json.dumps(rec) + "\n")
        old = 1_700_000_000
        os.utime(path, (old, old))
        app.screen.reload()
        await wait_for(
            pilot, lambda: "d dreams what is new since cycle #1, on demand" in plain(app, "#sessions-info")
        )
        await pilot.press("d")
        await wait_for(pilot, lambda: "On-demand dream pass #2" in said(app), timeout=30)
        await show(pilot, "3")  # the toast is one line; the whole waking message is on Cycles
        await wait_for(pilot, lambda: "No REM on demand" in plain(app, "#waking"))
        await show(pilot, "2")
        await wait_for(pilot, lambda: "nothing new since cycle #1" in plain(app, "#sessions-info"))
    kinds = [r["kind"] for r in ledger.query("SELECT kind FROM dream_cycles ORDER BY id")]
    assert kinds == ["full", "on-demand"]


def pane_text(app) -> str:
    """What the Briefings pane shows on the terminal (its widgets that are displayed)."""
    from fakes.tui import screen_text

    return screen_text(app)


async def test_the_pane_shows_the_accepted_briefing_and_no_diff_after_a_decision(dreamed) -> None:
    """Issue 24 point 7: the pane is never blank after an accept nor stale after a reject."""
    from textual.widgets import Markdown, Static

    cfg, ledger = dreamed
    waiting = briefing.waiting_proposal(ledger)
    app = DreamApp(cfg, ledger, watch=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await started(pilot)
        await pilot.press("4")
        await wait_for(pilot, lambda: "waits for your review" in plain(app, "#briefing-title"))
        await pilot.press("a")
        await wait_for(pilot, lambda: "Accepted briefing #1" in said(app), timeout=20)
        md = app.screen.query_one("#briefing", Markdown)
        await wait_for(pilot, lambda: md.display and md.source == waiting.text)
        assert not app.screen.query_one("#briefing-diff", Static).display
        await wait_for(pilot, lambda: "The work" in pane_text(app) and "+## The work" not in pane_text(app))


async def test_the_pane_keeps_no_diff_of_a_rejected_briefing(dreamed) -> None:
    from textual.widgets import Markdown, Static

    cfg, ledger = dreamed
    app = DreamApp(cfg, ledger, watch=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await started(pilot)
        await pilot.press("4")
        await wait_for(pilot, lambda: "waits for your review" in plain(app, "#briefing-title"))
        await pilot.press("r")
        await wait_modal(pilot, ReasonModal)
        await pilot.press(*"too vague", "enter")
        await wait_for(pilot, lambda: "Rejected briefing #1" in said(app), timeout=20)
        await wait_for(pilot, lambda: "No briefing yet" in plain(app, "#briefing-title"))
        await wait_loaded(pilot)
        assert not app.screen.query_one("#briefing-diff", Static).display
        assert not app.screen.query_one("#briefing", Markdown).display
        assert "+# Briefing" not in pane_text(app) and "The work" not in pane_text(app)
