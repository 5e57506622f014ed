"""The open app follows the ledger (issue 34, section 5): another process's decisions and dreams show
without a key or a screen switch, ``Ctrl+R`` reads everything again, a second app open on the same
ledger is said, and a cycle whose process ended mid-way is shown as interrupted — the real app, real
subprocesses, a real ledger and memory repository."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys

from fakes.notes import messages
from fakes.tui import open_queue, screen_text, show, wait_for
from textual.widgets import DataTable

from dreamtui.core.ledger import cycles
from dreamtui.tui.widgets.status_header import StatusHeader

MAIN = "from dreamtui.cli.main import main; main()"


def cli(cfg, *args: str) -> subprocess.CompletedProcess[str]:
    """``dreamtui`` in a process of its own, on the test's folders."""
    folders = ["--transcripts", str(cfg.transcripts), "--memory", str(cfg.memory), "--state", str(cfg.state)]
    return subprocess.run(
        [sys.executable, "-c", MAIN, *folders, *args], capture_output=True, text=True, timeout=120
    )


def header(app) -> str:
    return app.screen.query_one(StatusHeader).render_text().plain


async def test_a_decision_made_by_another_process_shows_without_a_key(tui_setup, git_home) -> None:
    """The app showed another process's accept only after a screen switch; now it follows the ledger."""
    cfg, ledger, ids = tui_setup
    async with open_queue(cfg, ledger, len(ids), size=(80, 24)) as (app, pilot, table):
        assert f"{len(ids)} proposals waiting" in header(app)
        done = await asyncio.to_thread(cli, cfg, "accept", ids[1])
        assert done.returncode == 0, done.stderr
        await wait_for(pilot, lambda: table.row_count == len(ids) - 1 and ids[1] not in table.ids)
        await wait_for(pilot, lambda: f"{len(ids) - 1} proposals waiting" in header(app))
        assert ledger.get_candidate(ids[0]).status == "pending"  # type: ignore[union-attr]


async def test_ctrl_r_reads_everything_again(tui_setup, git_home) -> None:
    """With following off (or between two looks) the refresh key reads the ledger again."""
    cfg, ledger, ids = tui_setup
    from dreamtui.tui.app import DreamApp

    app = DreamApp(cfg, ledger, watch=False, follow=None)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.screen.is_loaded)
        done = await asyncio.to_thread(cli, cfg, "reject", ids[2], "--reason", "not a lesson")
        assert done.returncode == 0, done.stderr
        table = app.screen.table
        assert ids[2] in table.ids  # nothing follows: still shown
        await pilot.press("ctrl+r")
        await wait_for(pilot, lambda: ids[2] not in table.ids)
        assert any(m.startswith("Read again") for m in messages(app))


async def test_a_second_app_on_the_same_ledger_is_said(tui_setup) -> None:
    """Two apps side by side on one ledger did not know of each other; now each says so."""
    cfg, ledger, ids = tui_setup
    other = subprocess.Popen(  # another app's presence: held while it runs, as DreamApp holds it
        [
            sys.executable,
            "-c",
            "import sys; from pathlib import Path; from dreamtui.services.presence import AppPresence; "
            f"p = AppPresence(Path({str(cfg.state)!r})); p.start(); print('open', flush=True); sys.stdin.read()",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert other.stdout is not None and other.stdout.readline().strip() == "open"
        async with open_queue(cfg, ledger, len(ids), size=(80, 24)) as (app, pilot, table):
            await wait_for(pilot, lambda: any("Another dreamtui app is open" in m for m in messages(app)))
            assert f"(pid {other.pid})" in " ".join(messages(app))
            await wait_for(pilot, lambda: "another dreamtui app is open on this ledger" in header(app))
            assert other.stdin is not None
            other.stdin.close()  # the other app closes
            other.wait(timeout=60)
            await wait_for(pilot, lambda: "another dreamtui app" not in header(app))
    finally:
        if other.poll() is None:
            other.kill()
            other.wait()


async def test_a_cycle_whose_process_ended_shows_as_interrupted(tui_setup) -> None:
    """A dream killed mid-way stayed "running" on the Cycles screen until the next dream; now it says
    interrupted and what the next dream does."""
    cfg, ledger, ids = tui_setup
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait(timeout=60)  # a process that ran the cycle and has ended
    cid = cycles.begin(
        ledger, "*", "2026-11-28", "2026-11-28T18:00:00Z", "manual", {"attempt": 1, "pid": gone.pid}
    )
    mine = cycles.begin(
        ledger, "*", "2026-11-29", "2026-11-29T18:00:00Z", "manual", {"attempt": 1, "pid": os.getpid()}
    )
    async with open_queue(cfg, ledger, len(ids), size=(120, 40)) as (app, pilot, table):
        await show(pilot, "3")
        grid = app.screen.query_one("#cycles", DataTable)
        status = {key.value: str(grid.get_cell(key, "status")) for key in grid.rows}
        assert status == {str(cid): "interrupted", str(mine): "running"}
        grid.move_cursor(row=grid.get_row_index(str(cid)))
        await wait_for(pilot, lambda: "Interrupted: the process running it" in screen_text(app))
