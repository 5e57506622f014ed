"""What a person sees at 80×24 (issue 34, section 5): the header says the queue runs on offline rules,
the Briefings footer keeps Dream, Quit and Help, notifications keep the useful end of a path, project
names keep their start, the help describes only the columns shown, and `u` works on Briefings — the
real app on the demo data and a real memory repository, at 80×24, 120×40 and 200×50."""

from __future__ import annotations

from pathlib import Path

import pytest
from fakes.notes import messages
from fakes.tui import make_config, open_queue, plain, screen_text, show, wait_for, wait_loaded

from dreamtui.core.dream.run import run_cycle
from dreamtui.core.ledger import Ledger
from dreamtui.core.memory import briefing
from dreamtui.tui.app import DreamApp
from dreamtui.tui.screens.help import HelpScreen
from dreamtui.tui.toasts import toast_text
from dreamtui.tui.widgets.queue_table import short_project
from dreamtui.tui.widgets.status_header import StatusHeader

SIZES = [(80, 24), (120, 40), (200, 50)]


@pytest.fixture
def dreamed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Demo transcripts and memory after the day's full cycle with the offline heuristic."""
    monkeypatch.setenv("DREAMTUI_NOW", "2026-11-28T18:30:00Z")
    cfg = make_config(tmp_path)
    ledger = Ledger.open(cfg.state)
    run_cycle(cfg, ledger)
    yield cfg, ledger
    ledger.close()


def header_text(app: DreamApp) -> str:
    return app.screen.query_one(StatusHeader).render_text().plain


@pytest.mark.parametrize("size", SIZES)
async def test_the_header_says_the_queue_runs_on_offline_rules_at_every_size(tui_setup, size) -> None:
    """Below 100 columns the header dropped the heuristic's line: nothing said the queue will be thin."""
    cfg, ledger, ids = tui_setup  # the heuristic extractor
    async with open_queue(cfg, ledger, len(ids), size=size) as (app, pilot, table):
        first = header_text(app).splitlines()[0]
        assert "offline rules" in header_text(app)
        assert len(first) <= size[0] - 2  # the first line is still one line
        if size[0] < 100:
            assert first.endswith("offline rules") and "proposals waiting" in first


@pytest.mark.parametrize("size", SIZES)
async def test_the_briefings_footer_keeps_dream_quit_and_help(dreamed, size) -> None:
    cfg, ledger = dreamed
    app = DreamApp(cfg, ledger, watch=False)
    async with app.run_test(size=size) as pilot:
        await wait_loaded(pilot)
        await show(pilot, "4")
        footer = screen_text(app).rstrip().splitlines()[-1]
        for word in ("Accept", "Reject", "Undo", "Dream", "Quit", "Help"):
            assert word in footer, footer


async def test_u_on_briefings_undoes_the_briefing_just_accepted(dreamed) -> None:
    """`u` on the Briefings screen did nothing, silently; it undoes the latest decision, as on the
    queue: the accepted briefing waits for review again and briefing.md is as before."""
    cfg, ledger = dreamed
    waiting = briefing.waiting_proposal(ledger)
    assert waiting is not None
    app = DreamApp(cfg, ledger, watch=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_loaded(pilot)
        await show(pilot, "4")
        await pilot.press("a")
        await wait_for(pilot, lambda: any("Accepted briefing" in m for m in messages(app)), 20)
        assert (cfg.memory / "briefing.md").exists()
        await pilot.press("u")
        await wait_for(pilot, lambda: app.decisions_waiting == 0)
        await wait_for(pilot, lambda: any(m.startswith("undid the accept") for m in messages(app)), 20)
        await wait_for(pilot, lambda: "waits for your review" in plain(app, "#briefing-title"))
    assert briefing.waiting_proposal(ledger) is not None
    assert not (cfg.memory / "briefing.md").exists()


def test_a_notification_keeps_the_file_and_commit_and_cuts_the_claim() -> None:
    """At 80 columns the accept's note lost its path (`→ …/…or-…`): the claim gives way first."""
    note = (
        "accepted “Don't use unittest.mock for the database here, use the testcontainers fixture in…” → "
        "projects/home-kim-src-payments-api/dont-use-unittest-mock-for-the-database-here-use.md (1a2b3c4d)"
    )
    for width in (80, 120, 200):
        shown = toast_text(note, width)
        assert shown.startswith("accepted “Don't use unittest.mock")
        assert shown.endswith("-database-here-use.md (1a2b3c4d)"), (width, shown)


def test_project_names_keep_their_start_and_folders_their_end() -> None:
    assert short_project("dreamboard-web", 12) == "dreamboard-…"
    assert short_project("-home-kim-src-dreamboard-web", 12).endswith("board-web")
    assert short_project("payments-api", 12) == "payments-api"


async def test_the_cycles_screen_names_a_project_by_its_start_at_80_columns(dreamed) -> None:
    cfg, ledger = dreamed
    run_cycle(cfg, ledger, project="-home-kim-src-dreamboard-web", date="2026-11-29")
    app = DreamApp(cfg, ledger, watch=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_loaded(pilot)
        await show(pilot, "3")
        text = screen_text(app)
    assert "dreamboard-…" in text and "…board-web" not in text and "…dboard-web" not in text


@pytest.mark.parametrize("size", SIZES)
async def test_the_help_describes_only_the_columns_the_queue_shows(tui_setup, size) -> None:
    """At 80 columns the help described a `type` column the queue had left out."""
    cfg, ledger, ids = tui_setup
    async with open_queue(cfg, ledger, len(ids), size=size) as (app, pilot, table):
        shown = {name for name, _ in table.fields}
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen))
        help_screen = app.screen
        assert isinstance(help_screen, HelpScreen)
        notes = help_screen.guide.notes  # what the help's "Marks and columns" draws
    described = {term for term, _ in notes if term}
    hidden = next((m for _, m in notes if m.startswith("not shown at this width: ")), "")
    for column in ("type", "agent"):  # at 80 columns the agent column gives way too (issue 31)
        assert (column in shown) == (column in described), notes
        assert (column in shown) == (column not in hidden.split(" (")[0]), notes
