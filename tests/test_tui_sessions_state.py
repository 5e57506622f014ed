"""The Sessions screen's data stays true (issue 24 point 7): "lines" counts what was appended since the
last read, and a session a cycle found too quiet to dream says so instead of "not yet dreamed"."""

from __future__ import annotations

import json
import os

from fakes.cli_world import record
from fakes.tui import plain, show, wait_for, wait_loaded

from dreamtui.core import clock
from dreamtui.core.dream.plan import plan_dream
from dreamtui.core.dream.run import run_cycle
from dreamtui.tui.app import DreamApp

SIZE = (150, 45)
QUIET = "99999999-2222-4333-8444-555555555555"


def cells(app, key: str) -> list[str]:
    table = app.screen.query_one("#sessions")
    return [str(c) for c in table.get_row(key)]


def column(app, name: str) -> int:
    table = app.screen.query_one("#sessions")
    return [str(c.label) for c in table.columns.values()].index(name)


async def open_project(pilot, app, project: str) -> None:
    projects = app.screen.query_one("#projects")
    projects.move_cursor(row=projects.get_row_index(project))
    await wait_for(pilot, lambda: app.screen.current_project == project)


async def test_lines_count_what_was_appended_since_the_last_read(fresh) -> None:
    cfg, ledger = fresh
    run_cycle(cfg, ledger)
    path = next(cfg.transcripts.rglob("3f2a9c41-*.jsonl"))
    project, session = path.parent.name, path.stem
    read = ledger.query("SELECT lines FROM files WHERE path = ?", (str(path),))[0][0]
    app = DreamApp(cfg, ledger, watch=True)  # the transcripts watcher: real watchdog events
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        await show(pilot, "2")
        await open_project(pilot, app, project)
        key = f"{project}\0{session}"
        lines = column(app, "lines")
        assert cells(app, key)[lines] == f"{read:,}"
        with path.open("a", encoding="utf-8") as fh:
            for i in range(3):
                fh.write(json.dumps(record(90 + i, "user", f"one more line {i}", session)) + "\n")
        await wait_for(pilot, lambda: cells(app, key)[lines] == f"{read + 3:,}")
        assert (
            ledger.query("SELECT lines FROM files WHERE path = ?", (str(path),))[0][0] == read
        )  # not dreamed


async def test_a_session_found_too_quiet_says_so(fresh) -> None:
    cfg, ledger = fresh
    folder = next(cfg.transcripts.iterdir())
    path = folder / f"{QUIET}.jsonl"
    turns = [("user", "ok thanks"), ("assistant", "You're welcome.")]  # fewer than min_person_chars
    path.write_text("".join(json.dumps(record(i, r, t, QUIET)) + "\n" for i, (r, t) in enumerate(turns)))
    recent = clock.now().timestamp() - 3600  # an hour ago: quiet, not yet settled (a day)
    os.utime(path, (recent, recent))
    run_cycle(cfg, ledger)
    assert plan_dream(cfg, ledger).kind == "nothing"  # d would only find it too quiet again
    app = DreamApp(cfg, ledger, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        await show(pilot, "2")
        info = plain(app, "#sessions-info")
        assert "0 with content not yet dreamed" in info and "1 too quiet to dream" in info, info
        await open_project(pilot, app, folder.name)
        assert cells(app, f"{folder.name}\0{QUIET}")[column(app, "waiting")] == "too quiet"
    # a person's words written since count as new again
    with path.open("a", encoding="utf-8") as fh:
        fh.write(
            json.dumps(record(5, "user", "Always " + "pin the node version in .nvmrc " * 4, QUIET)) + "\n"
        )
    assert plan_dream(cfg, ledger).kind != "nothing"


def test_waiting_and_quiet_bytes_add_up_to_what_is_not_dreamed(fresh) -> None:
    from dreamtui.services import Workspace

    cfg, ledger = fresh
    ws = Workspace(cfg, ledger)
    before = {(r.project, r.session): r for r in ws.sessions()}
    assert all(r.status == "not read yet" for r in before.values())
    run_cycle(cfg, ledger)
    after = ws.sessions()
    assert all(r.status == "dreamed" and r.waiting == 0 and r.quiet == 0 for r in after), after
