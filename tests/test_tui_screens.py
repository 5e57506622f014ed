"""The other screens and the background dream cycle, with Pilot on real folders."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from test_tui_helpers import add_candidates, make_config, wait_for
from test_tui_queue import plain, screen_text

from dreamtui.core.ledger import Ledger
from dreamtui.core.lock import CycleLock
from dreamtui.tui.app import DreamApp
from dreamtui.tui.widgets.queue_table import QueueTable

SIZE = (150, 45)


async def started(pilot) -> None:
    """Wait until the queue screen is up and has read the ledger."""
    await wait_for(pilot, lambda: pilot.app.queue_screen() is not None)
    await pilot.pause(0.1)


@pytest.fixture
def fresh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Demo transcripts and memory, an empty ledger (nothing dreamed yet)."""
    monkeypatch.setenv("DREAMTUI_NOW", "2026-11-28T18:30:00Z")
    cfg = make_config(tmp_path)
    ledger = Ledger.open(cfg.state)
    yield cfg, ledger
    ledger.close()


async def test_a_dream_cycle_runs_in_the_background_and_fills_the_queue(fresh) -> None:
    cfg, ledger = fresh
    app = DreamApp(cfg, ledger, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        table = app.query_one(QueueTable)
        assert table.row_count == 0
        await pilot.press("2")  # Sessions: everything waits
        await pilot.pause(0.2)
        assert "4 with content not yet dreamed" in plain(app, "#sessions-info")
        await pilot.press("d", "1")  # the person keeps working while it runs
        await wait_for(pilot, lambda: not app.cycle_running, timeout=30)
        progress = "\n".join(app.progress_log)
        for phase in ("Light sleep", "Deep sleep", "Branching", "REM", "Wake"):  # progress per phase
            assert phase in progress
        assert "branch" in progress  # and per branch
        await wait_for(pilot, lambda: table.row_count > 0)
        assert any("Dream cycle #1" in n.message for n in app._notifications)  # the waking message
        await pilot.press("2")
        await pilot.pause(0.2)
        assert "0 with content not yet dreamed" in plain(app, "#sessions-info")
        await pilot.press("3")  # Cycles: the history with its waking message
        await pilot.pause(0.2)
        assert "completed" in screen_text(app)
        assert "Phases: Light sleep → Deep sleep" in plain(app, "#waking")
    assert ledger.query("SELECT COUNT(*) FROM candidates WHERE status = 'pending'")[0][0] == table.row_count


async def test_a_failing_cycle_is_a_notification_not_a_crash(fresh) -> None:
    cfg, ledger = fresh
    app = DreamApp(cfg, ledger, watch=False)
    with CycleLock(cfg.lock_path):  # another cycle holds the lock
        async with app.run_test(size=SIZE) as pilot:
            await started(pilot)
            await pilot.press("d")
            await wait_for(pilot, lambda: not app.cycle_running, timeout=30)
            assert any("dream cycle failed" in n.message for n in app._notifications)
            assert app.is_running


async def test_briefings_show_each_version_and_the_diff(fresh) -> None:
    cfg, ledger = fresh
    briefing = cfg.memory / "briefing.md"
    for n, text in enumerate(["# Briefing\n\n- shipped: refunds\n", "# Briefing\n\n- shipped: refunds\n- next: vite\n"]):
        briefing.write_text(text)
        subprocess.run(["git", "-C", str(cfg.memory), "add", "briefing.md"], check=True)
        subprocess.run(["git", "-C", str(cfg.memory), "-c", "user.name=t", "-c", "user.email=t@t",
                        "commit", "-qm", f"briefing {n}"], check=True)
    app = DreamApp(cfg, ledger, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        await pilot.press("4")
        await pilot.pause(0.3)
        assert "briefing 1" in screen_text(app) and "briefing 0" in screen_text(app)
        assert "next: vite" in screen_text(app)  # the newest version, rendered
        await pilot.press("f")  # diff with the version before
        await pilot.pause(0.2)
        diff = plain(app, "#briefing-diff")
        assert "+- next: vite" in diff and "-- next: vite" not in diff


async def test_memory_screen_lists_the_files_and_the_gauge(fresh) -> None:
    cfg, ledger = fresh
    app = DreamApp(cfg, ledger, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        await pilot.press("6")
        await pilot.pause(0.3)
        text = screen_text(app)
        assert "release-through-make.md" in text
        assert "4/200 lines" in plain(app, "#ceiling")
        await pilot.press("j")
        await pilot.pause(0.1)
        assert "name: Database tests use a real Postgres" in plain(app, "#memfile")


async def test_stats_after_decisions(fresh) -> None:
    cfg, ledger = fresh
    add_candidates(cfg, ledger)
    app = DreamApp(cfg, ledger, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        table = app.query_one(QueueTable)
        await wait_for(pilot, lambda: table.row_count > 0)
        await pilot.press("a")
        await pilot.press("r", "1", "enter")
        await wait_for(pilot, lambda: app.decisions_waiting == 0)
        await wait_for(pilot, lambda: ledger.query("SELECT COUNT(*) FROM decisions")[0][0] == 2)
        await pilot.press("5")
        await pilot.pause(0.3)
        stats = plain(app, "#stats")
        assert "Accept rate 50%" in stats
        assert "wrong" in stats  # the rejection reason
        assert "heuristic" in stats  # per extractor


async def test_promotion_screen_shows_gates_and_refuses_to_approve(fresh) -> None:
    cfg, ledger = fresh
    app = DreamApp(cfg, ledger, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        await pilot.press("7")
        await pilot.pause(0.3)
        text = plain(app, "#promotion")
        assert "AUTO-WRITE OFF" in text and "FAIL" in text
        await pilot.press("A")
        await pilot.pause(0.1)
        await pilot.press("y")
        await pilot.pause(0.2)
        assert any("cannot approve" in n.message for n in app._notifications)
    assert ledger.query("SELECT COUNT(*) FROM promotions")[0][0] == 0
