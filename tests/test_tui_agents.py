"""Issue 31 item 5: the app names the agent — an agent column and a filter by agent (``f``) in the
queue and on Sessions, the agent in the proposal's details and in the help. The real app on a ledger
the real CLI dreamed from a Claude Code session and a Codex CLI rollout of one repository."""

from __future__ import annotations

from pathlib import Path

import pytest
from fakes.agents_world import CLAUDE_SESSION, CODEX_LESSON, CODEX_SESSION, NOW, two_agents
from fakes.tui import lines, open_queue, queue_of, screen_text, show, wait_for

from dreamtui.tui.screens.help import HelpScreen


@pytest.fixture
def world(tmp_path: Path, config, ledger, git_home, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("DREAMTUI_NOW", NOW)
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex-home"))
    monkeypatch.setenv("TZ", "UTC")
    two_agents(config, tmp_path)
    return config, ledger


def shown_rows(app) -> list[str]:
    return [line for line in lines(queue_of(app).table) if line.strip()]


def cells(line: str) -> list[str]:
    """A table line's words, without the border a table draws at its left."""
    return line.replace("│", " ").split()


def info(app) -> str:
    return " ".join(lines(app.screen.query_one("#queue-info")))


@pytest.mark.parametrize("size", [(150, 40), (80, 24)])
async def test_the_queue_names_each_proposals_agent_and_f_shows_one_agent_at_a_time(world, size) -> None:
    cfg, ledger = world
    async with open_queue(cfg, ledger, 3, size=size) as (app, pilot, table):
        header = lines(app.screen.query_one("#queue-header"))[0]
        assert "agent" in header.split()
        rows = shown_rows(app)
        assert sorted(r.split()[1] for r in rows) == ["Claude", "Claude", "Codex"], rows
        codex_row = next(r for r in rows if "Codex" in r)
        assert CODEX_LESSON[:30] in codex_row  # the claim keeps its room beside the column
        assert "Claude 2, Codex 1" in info(app) and "f: one agent" in info(app)

        await pilot.press("f")
        await wait_for(pilot, lambda: table.row_count == 2)
        assert all(" Claude " in r for r in shown_rows(app))
        assert "2 of 3 shown" in info(app) and "agent: Claude" in info(app)
        await pilot.press("f")
        await wait_for(pilot, lambda: table.row_count == 1)
        assert " Codex " in shown_rows(app)[0] and "agent: Codex" in info(app)
        detail = "\n".join(lines(app.screen.query_one("#meta")))
        assert CODEX_SESSION[:8] in detail and "Codex CLI" in detail  # the details name the agent whole
        await pilot.press("f")  # every agent again
        await wait_for(pilot, lambda: table.row_count == 3)
        assert "agent:" not in info(app)


async def test_the_text_filter_matches_the_agent_and_esc_clears_the_agent_filter(world) -> None:
    cfg, ledger = world
    async with open_queue(cfg, ledger, 3) as (app, pilot, table):
        await pilot.press("slash", *"codex cli", "enter")
        await wait_for(pilot, lambda: table.row_count == 1)
        assert CODEX_LESSON[:30] in shown_rows(app)[0]
        await pilot.press("escape")
        await wait_for(pilot, lambda: table.row_count == 3)
        await pilot.press("f", "f")  # Codex
        await wait_for(pilot, lambda: table.row_count == 1)
        await pilot.press("escape")
        await wait_for(pilot, lambda: table.row_count == 3)
        assert "agent:" not in info(app)


async def test_the_agent_filter_says_so_when_that_agents_last_proposal_is_decided(world) -> None:
    cfg, ledger = world
    async with open_queue(cfg, ledger, 3) as (app, pilot, table):
        await pilot.press("f", "f")  # Codex: one proposal
        await wait_for(pilot, lambda: table.row_count == 1)
        await pilot.press("r")
        await wait_for(pilot, lambda: type(app.screen).__name__ == "RejectModal")
        await pilot.press("1", "enter")
        await wait_for(pilot, lambda: table.row_count == 0)
        await wait_for(
            pilot, lambda: "No proposal of Codex waits" in "\n".join(lines(app.screen.query_one("#summary")))
        )
        await pilot.press("f")  # Codex has none left: the cycle is every agent → Claude
        await wait_for(pilot, lambda: table.row_count == 2)


async def test_the_help_describes_the_agent_column_and_its_key(world) -> None:
    cfg, ledger = world
    async with open_queue(cfg, ledger, 3) as (app, pilot, table):
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen))
        text = "\n".join(
            line for sel in ("#help-guide", "#help-keys") for line in lines(app.screen.query_one(sel))
        )
        assert "the coding agent whose session it came from" in text
        assert "Claude, Codex" in text and "f shows one agent's proposals" in " ".join(text.split())


@pytest.mark.parametrize("size", [(150, 40), (80, 24)])
async def test_sessions_show_each_sessions_agent_and_f_shows_one_agent(world, size) -> None:
    cfg, ledger = world
    async with open_queue(cfg, ledger, 3, size=size) as (app, pilot, _table):
        await show(pilot, "2")
        sessions = app.screen.query_one("#sessions")
        await wait_for(
            pilot,
            lambda: all(sid[:8] in "\n".join(lines(sessions)) for sid in (CLAUDE_SESSION, CODEX_SESSION)),
        )
        shown = lines(sessions)
        assert cells(shown[0])[:2] == ["session", "agent"]
        by_id = {cells(line)[0]: cells(line)[1] for line in shown[1:] if cells(line)}
        assert by_id == {CLAUDE_SESSION[:8]: "Claude", CODEX_SESSION[:8]: "Codex"}
        assert not sessions.show_horizontal_scrollbar  # every column fits, at 80 columns too
        assert "pend" in shown[0] and "waiting" in shown[0]
        top = " ".join(" ".join(lines(app.screen.query_one("#sessions-info"))).split())
        assert "2 sessions (Claude 1, Codex 1; f: one agent)" in top
        assert "f Agent" in screen_text(app).rstrip().splitlines()[-1]

        await pilot.press("f")
        await wait_for(pilot, lambda: sessions.row_count == 1)
        assert cells(lines(sessions)[1])[:2] == [CLAUDE_SESSION[:8], "Claude"]
        top = " ".join(" ".join(lines(app.screen.query_one("#sessions-info"))).split())
        assert "1 sessions of Claude (f: next agent)" in top
        projects = app.screen.query_one("#projects")
        assert (
            cells(lines(projects)[1])[-1 if app.size.width < 120 else -2] == "2"
        )  # the project's pending: Claude's two proposals
        await pilot.press("f", "f")  # Codex, then every agent
        await wait_for(pilot, lambda: sessions.row_count == 2)
