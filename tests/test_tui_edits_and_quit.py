"""The app keeps a person's work: an undone (or failed) edited accept comes back with the edit, and
quitting while a dream cycle runs stops it at a phase boundary, leaving nothing half done.
Pilot against a real ledger, a real git memory repo and a real (slow) extractor program."""

from __future__ import annotations

import fcntl
import io
import subprocess
import sys
import threading
from pathlib import Path
from typing import IO

import pytest
from fakes.notes import notes, said
from fakes.tui import (
    SIZE,
    commits,
    make_config,
    open_queue,
    screen_text,
    status_of,
    wait_for,
    wait_loaded,
    wait_modal,
)

from dreamtui.core.dream.plan import CycleAlreadyDone
from dreamtui.core.dream.run import run_cycle
from dreamtui.core.extract.heuristic import HeuristicExtractor
from dreamtui.core.ledger import Ledger
from dreamtui.tui import progress as services
from dreamtui.tui.app import DreamApp
from dreamtui.tui.screens.modals import EditModal
from dreamtui.tui.widgets.queue_table import QueueTable

EDITED = "Migrate the throwaway DB before editing"
EDITED_WHY = "An applied migration must never be edited."


def drawn_row(table: QueueTable) -> str:
    """The text of the highlighted line as the table draws it."""
    strip = table.render_line(table.cursor_row - int(table.scroll_offset.y))
    return "".join(segment.text for segment in strip)


async def edit_and_accept(app: DreamApp, pilot) -> None:
    await pilot.press("e")
    await wait_modal(pilot, EditModal)
    app.screen.query_one("#claim").load_text(EDITED)
    app.screen.query_one("#why").load_text(EDITED_WHY)
    await pilot.press("ctrl+s")


async def test_undo_of_an_edited_accept_brings_back_the_edit(tui_setup) -> None:
    cfg, ledger, ids = tui_setup
    before = len(commits(cfg.memory))
    async with open_queue(cfg, ledger, len(ids)) as (app, pilot, table):
        await pilot.press("j")
        await pilot.pause()
        assert table.current_id == ids[1] and "Run alembic upgrade head" in drawn_row(table)
        await edit_and_accept(app, pilot)
        await wait_for(pilot, lambda: app.decisions_waiting == 0 and status_of(ledger, ids[1]) == "accepted")
        await pilot.press("u")
        await wait_for(pilot, lambda: app.decisions_waiting == 0 and status_of(ledger, ids[1]) == "pending")
        await wait_for(
            pilot, lambda: table.current_id == ids[1] and "Migrate the throwaway" in drawn_row(table)
        )
        await pilot.pause()
        assert table.current_id == ids[1]  # back, highlighted, with the person's text
        assert "Migrate the throwaway" in drawn_row(table) and "Run alembic" not in drawn_row(table)
        assert EDITED_WHY in screen_text(app)  # the detail shows the edited why too
        assert any("keeps your edited text" in n.message for n in notes(app))
        await pilot.press("a")  # accept again, no editor: the edited text is written
        await wait_for(pilot, lambda: app.decisions_waiting == 0 and status_of(ledger, ids[1]) == "accepted")
    path = ledger.query("SELECT memory_path FROM decisions WHERE action = 'accept' AND undone = 0")[0][0]
    text = (cfg.memory / path).read_text()
    assert EDITED in text and EDITED_WHY in text and "Run alembic" not in text.split("---")[-1]
    assert len(commits(cfg.memory)) == before + 3  # accept, revert, accept


async def test_a_failed_edited_accept_comes_back_with_the_edit(tui_setup) -> None:
    cfg, ledger, ids = tui_setup
    index = cfg.memory / "MEMORY.md"
    mine = index.read_text() + "- [A line of mine](mine.md) — not committed yet\n"
    index.write_text(mine)
    # the uncommitted MEMORY.md is an outside change too (issue 17): one more row, listed first
    async with open_queue(cfg, ledger, len(ids) + 1, at=ids[1]) as (app, pilot, table):
        await edit_and_accept(app, pilot)
        await wait_for(pilot, lambda: app.decisions_waiting == 0 and table.row_count == len(ids) + 1)
        await wait_for(pilot, lambda: said(app, "accept failed") and table.current_id == ids[1])
        await pilot.pause()  # the row is painted
        assert table.current_id == ids[1] and "Migrate the throwaway" in drawn_row(table)
    assert index.read_text() == mine and status_of(ledger, ids[1]) == "pending"


# -- quitting while a dream cycle runs ------------------------------------------------------------


# The stand-in extractor reads its digest, then blocks on a shared lock of ``gate`` until the test lets
# it go: a session's extraction takes exactly as long as the test says, on any machine.
HELD_EXTRACTOR = (
    "import fcntl, sys; sys.stdin.read(); fcntl.flock(open(sys.argv[1]), fcntl.LOCK_SH); print('[]')"
)


@pytest.fixture
def slow_world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Demo transcripts, a memory repo, an empty ledger, and an extractor program that proposes nothing
    and does not finish until the test releases it (so the cycle is still in Branching when
    the person quits). Yields the config, the ledger and ``release()``, which lets them finish."""
    monkeypatch.setenv("DREAMTUI_NOW", "2026-11-28T18:30:00Z")
    gate_path = tmp_path / "extractor.gate"
    gate = gate_path.open("w")
    fcntl.flock(gate, fcntl.LOCK_EX)
    cfg = make_config(
        tmp_path, extractor="command", command=(sys.executable, "-c", HELD_EXTRACTOR, str(gate_path))
    )
    ledger = Ledger.open(cfg.state)

    def release() -> None:
        """Let the extractors finish."""
        fcntl.flock(gate, fcntl.LOCK_UN)

    yield cfg, ledger, release
    gate.close()  # lets any extractor still waiting go
    ledger.close()


def git_out(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True).stdout


async def test_quitting_during_a_dream_cycle_stops_it_at_a_phase_boundary(slow_world) -> None:
    cfg, ledger, release = slow_world
    before = commits(cfg.memory)
    app = DreamApp(cfg, ledger, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        await pilot.press("d")
        await wait_for(pilot, lambda: any(p.startswith("Branching") for p in app.progress_log))
        await pilot.press("q")
        await wait_for(
            pilot,
            lambda: (
                said(app, "Finishing the dream cycle") and "finishing the dream cycle" in screen_text(app)
            ),
        )
        assert app.is_running  # not gone with the cycle still running: it says what it waits for
        release()
        await wait_for(pilot, lambda: not app.is_running, timeout=20)  # the branches finish, REM never starts
    assert ledger.integrity_ok()
    row = ledger.query("SELECT * FROM dream_cycles")[0]
    assert row["status"] == "failed" and "stopped because dreamtui was closed" in row["error_message"]
    assert row["error_message"].startswith("REM")  # stopped at the boundary before REM
    assert not (Path(cfg.memory) / ".git" / "index.lock").exists()
    assert git_out(cfg.memory, "status", "--porcelain") == ""  # no half-written review or briefing
    assert commits(cfg.memory) == before
    assert not ledger.query("SELECT * FROM memory_intents")
    # the next cycle on the same date is not blocked: it finishes what the stopped one began
    record = run_cycle(cfg, ledger, extractor=HeuristicExtractor())
    assert record.status == "completed" and record.id == row["id"]
    assert [p["name"] for p in record.phases][-2:] == ["rem", "wake"]
    assert len(commits(cfg.memory)) > len(
        before
    )  # its review is committed now (its briefing waits for review)
    with pytest.raises(CycleAlreadyDone):
        run_cycle(cfg, ledger, extractor=HeuristicExtractor(), trigger="schedule")


async def test_q_twice_during_a_cycle_closes_at_once_and_the_terminal_says_it_waits(
    slow_world, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``q q``: the window closes at once; the process cannot end before the cycle's thread does, so
    the terminal says what it waits for, and the cycle still stops at its next phase boundary."""
    cfg, ledger, release = slow_world
    app = DreamApp(cfg, ledger, watch=False)

    class Terminal(io.TextIOBase):  # stderr as capsys holds it; it hears the line the test waits for
        def __init__(self, inner: IO[str]) -> None:
            self.inner, self.heard = inner, threading.Event()

        def write(self, text: str) -> int:
            if "waiting for it" in text:
                self.heard.set()
            return self.inner.write(text)

    terminal = Terminal(sys.stderr)
    monkeypatch.setattr(sys, "stderr", terminal)

    def release_when_said() -> None:  # the extractors finish once the terminal says it waits for them
        terminal.heard.wait(120)
        release()

    threading.Thread(target=release_when_said, daemon=True).start()

    async def person(pilot) -> None:
        await wait_loaded(pilot)
        await pilot.press("d")
        await wait_for(pilot, lambda: any(p.startswith("Branching") for p in app.progress_log))
        await pilot.press("q", "q")

    await app.run_async(headless=True, size=SIZE, auto_pilot=person)  # as `dreamtui` runs it
    assert app._cycle_idle.is_set()  # it returned only once the cycle had stopped
    err = capsys.readouterr().err
    assert "the dream cycle stops at its next phase boundary; waiting for it" in err
    assert "stopped because dreamtui was closed" in err
    assert ledger.integrity_ok()
    row = ledger.query("SELECT status, error_message FROM dream_cycles")[0]
    assert row["status"] == "failed" and row["error_message"].startswith("REM")
    assert not (Path(cfg.memory) / ".git" / "index.lock").exists()
    assert git_out(cfg.memory, "status", "--porcelain") == ""
    assert run_cycle(cfg, ledger, extractor=HeuristicExtractor()).status == "completed"


def test_a_cycle_still_reading_stops_between_sessions(tmp_path: Path, monkeypatch) -> None:
    """The app's stop points: during Light sleep the cycle stops before the next session is read, is
    recorded as failed (not left running), and a retry the same date completes."""
    monkeypatch.setenv("DREAMTUI_NOW", "2026-11-28T18:30:00Z")
    cfg = make_config(tmp_path)
    ledger = Ledger.open(cfg.state)
    seen: list[tuple[str, str]] = []

    def progress(phase: str, message: str, fraction: float | None) -> None:
        seen.append((phase, message))
        if phase == "light" and services.cycle_stop_point(phase, message, fraction):
            raise services.CycleStopped(services.CYCLE_STOPPED)

    with pytest.raises(services.CycleStopped):
        run_cycle(cfg, ledger, progress=progress)
    assert seen[-1][1].startswith("reading ")
    row = ledger.query("SELECT status, error_message FROM dream_cycles")[0]
    assert row["status"] == "failed" and row["error_message"].startswith("Light sleep")
    assert ledger.query("SELECT COUNT(*) FROM candidates")[0][0] == 0
    assert not services.cycle_stop_point("branch", "gate 3f2a9c41", 0.5)  # never between extraction and gate
    assert not services.cycle_stop_point("wake", "Wake", 0.0)
    record = run_cycle(cfg, ledger)
    assert record.status == "completed" and record.new_candidates > 0
    ledger.close()
