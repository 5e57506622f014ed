"""The app asks before its first dream with a model: what it would read and send, then y or n (Pilot,
the real app, the claude-code extractor against the stand-in Claude Code CLI)."""

from __future__ import annotations

from pathlib import Path

import pytest
from fakes.claude_code import FakeClaudeCode
from fakes.notes import messages
from fakes.tui import wait_for, wait_loaded, wait_modal

from dreamtui.core.extract.claude_code import CLI_ENV
from dreamtui.core.ledger import cycles
from dreamtui.tui.app import DreamApp
from dreamtui.tui.screens.modals import SpendModal

SIZE = (150, 45)


@pytest.fixture
def fake(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeClaudeCode:
    stand_in = FakeClaudeCode(tmp_path / "fake-claude")
    monkeypatch.setenv(CLI_ENV, str(stand_in.cli))
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    return stand_in


async def test_the_first_dream_with_a_model_asks_first_and_no_sends_nothing(
    fresh, fake: FakeClaudeCode
) -> None:
    cfg, ledger = fresh
    # the demo's transcripts were written long ago: read every date (the window is the CLI test's)
    cfg = cfg.changed(extractor="claude-code", dream_window_days=0)
    app = DreamApp(cfg, ledger, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        await pilot.press("d")
        modal = await wait_modal(pilot, SpendModal)
        shown = "\n".join(modal.lines)
        assert "This dream would read 4 session(s)" in shown and "input tokens" in shown
        assert "Claude Code plan's usage limits" in shown
        await pilot.press("n")
        await wait_for(pilot, lambda: not app.cycle_running)
        assert any("Nothing was sent" in m for m in messages(app))
        assert fake.calls() == [] and cycles.listed(ledger) == []

        await pilot.press("d")  # asked again: this time yes
        await wait_modal(pilot, SpendModal)
        await pilot.press("y")
        await wait_for(pilot, lambda: not app.cycle_running, timeout=60)
        assert fake.calls(), "the dream sent its sessions after the yes"
        assert any("Dream cycle #1" in m for m in messages(app))
