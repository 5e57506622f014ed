"""Screens read their data in thread workers and the live tail reads transcripts in one: a slow ledger,
git or transcripts folder never holds up a key press, and the screen says it is loading meanwhile."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

from fakes.notes import notes
from fakes.tui import PAY, REFUNDS, SIZE, plain, queue_of, show, wait_for, wait_loaded

from dreamtui.core.ledger import Ledger
from dreamtui.services import Workspace
from dreamtui.tui.app import DreamApp
from dreamtui.tui.live import LiveTail
from dreamtui.tui.messages import TranscriptsChanged
from dreamtui.tui.screens.help import HelpScreen
from dreamtui.tui.screens.queue import QueueScreen
from dreamtui.tui.screens.stats import StatsScreen

READS = ("queue_rows", "sessions", "cycles", "briefing_versions", "stats", "memory_files", "promotion")


class WatchedWorkspace(Workspace):
    """The real Workspace, noting on which thread each read ran; ``stats`` waits for ``release``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.on_ui_thread: dict[str, list[bool]] = {name: [] for name in READS}
        self.release = threading.Event()
        self.release.set()

    def _note(self, name: str) -> None:
        self.on_ui_thread[name].append(threading.current_thread() is threading.main_thread())


for _name in READS:

    def _watched(self: WatchedWorkspace, *args: Any, _name: str = _name, **kwargs: Any) -> Any:
        self._note(_name)
        if _name == "stats":
            assert self.release.wait(30), "the test never released the slow read"
        return getattr(Workspace, _name)(self, *args, **kwargs)

    setattr(WatchedWorkspace, _name, _watched)


def watched_app(cfg, ledger: Ledger, **kwargs: Any) -> tuple[DreamApp, WatchedWorkspace]:
    app = DreamApp(cfg, ledger, **kwargs)
    app.workspace = WatchedWorkspace(cfg, ledger)
    return app, app.workspace


async def test_every_screen_reads_its_data_off_the_ui_thread(tui_setup) -> None:
    cfg, ledger, ids = tui_setup
    app, workspace = watched_app(cfg, ledger, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        assert queue_of(app).table.row_count == len(ids)
        for key in "234567":
            await show(pilot, key)
    for name in READS:
        assert workspace.on_ui_thread[name], f"{name} was never read"
        assert not any(workspace.on_ui_thread[name]), f"{name} was read on the UI thread"


async def test_a_slow_read_shows_loading_and_keys_still_work(tui_setup) -> None:
    cfg, ledger, _ids = tui_setup
    app, workspace = watched_app(cfg, ledger, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        workspace.release.clear()  # the statistics take as long as the test wants
        try:
            await pilot.press("5")
            await wait_for(
                pilot, lambda: isinstance(app.screen, StatsScreen) and bool(workspace.on_ui_thread["stats"])
            )
            stats = app.screen
            assert not stats.is_loaded
            assert stats.query_one("#stats").loading  # Textual's loading indicator covers the page
            await pilot.press("question_mark")  # the app answers keys meanwhile
            await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen), timeout=2)
            await pilot.press("escape", "1")
            await wait_for(pilot, lambda: isinstance(app.screen, QueueScreen), timeout=2)
            await pilot.press("j")
            await wait_for(pilot, lambda: queue_of(app).table.cursor_row == 1, timeout=2)
            assert not stats.is_loaded
        finally:
            workspace.release.set()
        await show(pilot, "5")
        assert "Accept rate" in plain(app, "#stats")
        assert not app.screen.query_one("#stats").loading


async def test_the_live_tail_reads_new_lines_in_a_worker(tui_setup) -> None:
    cfg, ledger, _ids = tui_setup
    reads: list[bool] = []

    class WatchedTail(LiveTail):
        def read(self, paths: list[Path]) -> list:
            reads.append(threading.current_thread() is threading.main_thread())
            return super().read(paths)

    app = DreamApp(cfg, ledger, watch=False)
    app.live_tail = WatchedTail(cfg.transcripts, app.project_namer)
    path = cfg.transcripts / PAY / f"{REFUNDS}.jsonl"
    app.live_tail.start_at(path, path.stat().st_size)
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        record = {
            "type": "user",
            "message": {"role": "user", "content": "keep the pool at [bold]10[/]"},
            "uuid": "u-live-9",
            "timestamp": "2026-11-28T15:00:00.000Z",
        }
        with path.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(record) + "\n")
        app.post_message(TranscriptsChanged([path]))  # what the watcher posts when the file grows
        live = queue_of(app).query_one("#live")
        await wait_for(pilot, lambda: any("keep the pool at [bold]10[/]" in str(line) for line in live.lines))
    assert reads == [False]


async def test_a_screen_that_cannot_read_its_data_says_so_and_the_app_goes_on(tui_setup) -> None:
    cfg, ledger, _ids = tui_setup

    class BrokenMemory(Workspace):
        def memory_files(self) -> list:
            raise OSError("the memory folder went away")

    app = DreamApp(cfg, ledger, watch=False)
    app.workspace = BrokenMemory(cfg, ledger)
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        await show(pilot, "6")
        assert any(
            "cannot read the memory screen's data: the memory folder went away" in n.message
            for n in notes(app)
        )
        await show(pilot, "1")
        assert app.is_running
