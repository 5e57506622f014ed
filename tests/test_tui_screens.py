"""The other screens and the background dream cycle, with Pilot on real folders."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

from fakes.notes import notes
from fakes.tui import add_candidates, plain, screen_text, show, shows, wait_for, wait_loaded, wait_modal

from dreamtui.core.dream.lock import CycleLock
from dreamtui.core.ledger import Ledger
from dreamtui.tui.app import DreamApp
from dreamtui.tui.screens.modals import ConfirmModal
from dreamtui.tui.widgets.queue_table import QueueTable

SIZE = (150, 45)


async def started(pilot) -> None:
    """Wait until the queue screen is up and has read the ledger."""
    await wait_loaded(pilot)


async def test_a_dream_cycle_runs_in_the_background_and_fills_the_queue(fresh) -> None:
    cfg, ledger = fresh
    app = DreamApp(cfg, ledger, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        table = app.query_one(QueueTable)
        assert table.row_count == 0
        await show(pilot, "2")  # Sessions: everything waits
        assert "4 with content not yet dreamed" in plain(app, "#sessions-info")
        await pilot.press("d", "1")  # the person keeps working while it runs
        await wait_for(pilot, lambda: not app.cycle_running, timeout=30)
        progress = "\n".join(app.progress_log)
        for phase in ("Light sleep", "Deep sleep", "Branching", "REM", "Wake"):  # progress per phase
            assert phase in progress
        assert "branch" in progress  # and per branch
        await wait_for(pilot, lambda: table.row_count > 0)
        assert any("Dream cycle #1" in n.message for n in notes(app))  # the waking message
        await show(pilot, "2")
        assert "0 with content not yet dreamed" in plain(app, "#sessions-info")
        projects, sessions = (
            " | ".join(str(cell) for i in range(t.row_count) for cell in t.get_row_at(i))
            for t in (app.screen.query_one("#projects"), app.screen.query_one("#sessions"))
        )
        assert (
            "payments-api" in projects.split(" | ") and "kim-src" not in projects
        )  # named by the records' cwd
        assert re.search(r"\d{4}-\d\d-\d\d \d\d:\d\d", sessions)  # when it was read, in local time
        assert not re.search(r"\d\dT\d\d:\d\d", sessions)  # not the raw ISO stamp
        await show(pilot, "3")  # Cycles: the history with its waking message
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
            # another process's cycle is no failure of this one: the app says what it does not do
            assert any(
                n.message.startswith("Not dreaming, another dream cycle is running") for n in notes(app)
            ), [n.message for n in notes(app)]
            assert app.is_running


async def test_briefings_show_each_version_and_the_diff(fresh) -> None:
    cfg, ledger = fresh
    briefing = cfg.memory / "briefing.md"
    for n, text in enumerate(
        ["# Briefing\n\n- shipped: refunds\n", "# Briefing\n\n- shipped: refunds\n- next: vite\n"]
    ):
        briefing.write_text(text)
        subprocess.run(["git", "-C", str(cfg.memory), "add", "briefing.md"], check=True)
        subprocess.run(
            [
                "git",
                "-C",
                str(cfg.memory),
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "commit",
                "-qm",
                f"briefing {n}",
            ],
            check=True,
        )
    app = DreamApp(cfg, ledger, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        await show(pilot, "4")
        # the newest version, rendered (the Markdown pane paints after the table: waited for, not assumed)
        await wait_for(pilot, lambda: "next: vite" in screen_text(app))
        assert "briefing 1" in screen_text(app) and "briefing 0" in screen_text(app)
        await pilot.press("f")  # diff with the version before
        await wait_for(pilot, lambda: shows(app, "#briefing-diff", "next: vite"))
        diff = plain(app, "#briefing-diff")
        assert "+- next: vite" in diff and "-- next: vite" not in diff


async def test_memory_screen_lists_the_files_and_the_gauge(fresh) -> None:
    cfg, ledger = fresh
    app = DreamApp(cfg, ledger, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        await show(pilot, "6")
        text = screen_text(app)
        assert "release-through-make.md" in text
        assert "4/200 lines" in plain(app, "#ceiling")
        await pilot.press("j")
        await wait_for(pilot, lambda: shows(app, "#memfile", "name: Database tests use a real Postgres"))


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
        await show(pilot, "5")
        stats = plain(app, "#stats")
        assert "Accept rate 50%" in stats
        assert "wrong" in stats  # the rejection reason
        assert "heuristic" in stats  # per extractor


async def test_promotion_screen_shows_gates_and_refuses_to_approve(fresh) -> None:
    cfg, ledger = fresh
    app = DreamApp(cfg, ledger, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        await show(pilot, "7")
        text = plain(app, "#promotion")
        assert "AUTO-WRITE OFF" in text and "✘ evidence" in text and "Gates: " in text
        assert "needs: no human decisions" in text  # each gate says what it still lacks
        assert "Approval is offered once every gate passes" in text
        approve = [b for b in app.screen.active_bindings.values() if b.binding.action == "approve"]
        assert approve and not approve[0].enabled  # shown (footer, help), not offered
        await pilot.press("A")
        await pilot.pause()  # what the key does, done
        assert not isinstance(app.screen, ConfirmModal)  # no confirmation that would then be refused
    assert ledger.query("SELECT COUNT(*) FROM promotions")[0][0] == 0


async def test_a_goodnight_in_a_session_starts_that_projects_cycle(fresh) -> None:
    import json

    cfg, ledger = fresh
    path = cfg.transcripts / "-home-kim-src-dreamboard-web" / "e7a5f0c3-9b8d-4e2a-b6c1-7d3f5e9a1c43.jsonl"
    app = DreamApp(cfg, ledger, watch=True, watch_debounce=0.05)
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        await wait_for(pilot, lambda: app._watcher is not None and app._watcher.running)  # events are seen
        record = {
            "type": "user",
            "uuid": "u-gn",
            "timestamp": "2026-11-28T18:00:00.000Z",
            "sessionId": "e7a5f0c3-9b8d-4e2a-b6c1-7d3f5e9a1c43",
            "message": {"role": "user", "content": "good night!"},
        }
        with path.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(record) + "\n")
        await wait_for(pilot, lambda: any("Good night heard" in n.message for n in notes(app)), 15)
        await wait_for(pilot, lambda: not app.cycle_running, timeout=30)
    rows = ledger.query("SELECT chat_id, trigger FROM dream_cycles")
    assert [(r["chat_id"], r["trigger"]) for r in rows] == [("-home-kim-src-dreamboard-web", "goodnight")]


async def test_a_good_night_said_to_aider_in_a_project_claude_code_ran_in_starts_its_cycle(fresh) -> None:
    """Aider keeps its history inside the project: the app watches it in its folder alone, found from
    the Claude Code session's working directory, and its good night starts that project's cycle."""
    from fakes.transcript import write_session

    from dreamtui.core.ingest.formats import aider
    from dreamtui.core.repository import encode_path

    cfg, ledger = fresh
    repo = (cfg.transcripts.parent / "src" / "spotter").resolve()
    repo.mkdir(parents=True)
    write_session(
        cfg.transcripts,
        [("person", "Always run the linter before pushing."), ("assistant", "Understood.")],
        project=encode_path(str(repo)),
        cwd=str(repo),
    )
    history = repo / aider.HISTORY_NAME
    history.write_text(
        "\n# aider chat started at 2026-11-28 17:00:00\n\n#### Fix the flaky test.  \n\nDone.\n\n",
        encoding="utf-8",
    )
    app = DreamApp(cfg, ledger, watch=True, watch_debounce=0.05)
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        await wait_for(pilot, lambda: app._watcher is not None and app._watcher.running)
        assert app._watcher is not None and app._watcher.alone_folders == [repo]
        await wait_for(pilot, lambda: app._watcher is not None and app._watcher.primed.is_set())
        with history.open("a", encoding="utf-8") as fh:
            fh.write("#### Thanks, good night!  \n\nGood night!\n\n")
        await wait_for(pilot, lambda: any("Good night heard" in n.message for n in notes(app)), 15)
        await wait_for(pilot, lambda: not app.cycle_running, timeout=30)
    rows = ledger.query("SELECT chat_id, trigger FROM dream_cycles")
    assert [(r["chat_id"], r["trigger"]) for r in rows] == [(encode_path(str(repo)), "goodnight")]


async def test_a_good_night_after_the_days_cycle_says_only_that_it_does_not_dream(fresh, monkeypatch) -> None:
    """With only the app open, a good night after the day's full cycle said "Good night heard …:
    dreaming" and then "dream cycle failed: already dreamed …"; now one note says what happens."""
    from dreamtui.core.dream.run import run_cycle

    cfg, ledger = fresh
    monkeypatch.setenv("DREAMTUI_NOW", "2026-11-28T18:30:00Z")
    run_cycle(cfg, ledger)  # the day's full cycle of every project
    web = "-home-kim-src-dreamboard-web"
    path = cfg.transcripts / web / "e7a5f0c3-9b8d-4e2a-b6c1-7d3f5e9a1c43.jsonl"
    app = DreamApp(cfg, ledger, watch=True, watch_debounce=0.05)
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        await wait_for(pilot, lambda: app._watcher is not None and app._watcher.running)
        record = {
            "type": "user",
            "uuid": "u-gn",
            "timestamp": "2026-11-28T18:00:00.000Z",
            "sessionId": "e7a5f0c3-9b8d-4e2a-b6c1-7d3f5e9a1c43",
            "message": {"role": "user", "content": "good night!"},
        }
        with path.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(record) + "\n")
        await wait_for(pilot, lambda: any("Good night heard" in n.message for n in notes(app)), 15)
        await wait_for(pilot, lambda: not app.cycle_running, timeout=30)
        said = [n.message for n in notes(app) if "Good night" in n.message or "dream cycle" in n.message]
    assert len(said) == 1 and said[0].startswith(
        f"Good night heard in {web}: not dreaming, already dreamed {web} on 2026-11-28 (cycle #1, every"
    ), said


async def test_memory_screen_reverts_one_memory(fresh) -> None:
    from fakes.tui import commits

    cfg, ledger = fresh
    ids = add_candidates(cfg, ledger)
    before = commits(cfg.memory)
    app = DreamApp(cfg, ledger, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        table = app.query_one(QueueTable)
        await pilot.press("a")
        await wait_for(pilot, lambda: app.decisions_waiting == 0)
        rel = ledger.query("SELECT memory_path FROM decisions WHERE action = 'accept'")[0]["memory_path"]
        assert (cfg.memory / rel).is_file()
        await show(pilot, "6")
        memfiles = app.screen.query_one("#memfiles")
        memfiles.move_cursor(row=memfiles.get_row_index(rel))
        await pilot.pause()  # the highlight is handled
        await pilot.press("x")
        await wait_modal(pilot, ConfirmModal)
        await pilot.press("y")
        await wait_for(pilot, lambda: rel not in screen_text(app))
        await wait_for(
            pilot, lambda: any("reverted" in n.message for n in notes(app))
        )  # said after the reload
        await show(pilot, "1")
        assert table.row_count == len(ids) and ids[0] in table.ids  # the proposal is back
    assert not (cfg.memory / rel).exists()
    assert len(commits(cfg.memory)) == len(before) + 2
    assert ledger.get_candidate(ids[0]).status == "pending"


async def test_enter_on_a_session_filters_the_queue_to_it(fresh) -> None:
    from fakes.tui import WEBAPP

    cfg, ledger = fresh
    ids = add_candidates(cfg, ledger)
    app = DreamApp(cfg, ledger, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        await show(pilot, "2")
        projects = app.screen.query_one("#projects")
        projects.move_cursor(row=projects.get_row_index("-home-kim-src-dreamboard-web"))
        await pilot.press("enter")  # into the project's sessions
        sessions = app.screen.query_one("#sessions")
        await wait_for(pilot, lambda: app.screen.focused is sessions and sessions.row_count == 2)
        assert app.screen.focused is sessions and sessions.row_count == 2
        sessions.move_cursor(row=sessions.get_row_index(f"-home-kim-src-dreamboard-web\0{WEBAPP}"))
        await pilot.press("enter")
        await wait_for(
            pilot, lambda: app.current_mode == "queue" and app.query_one(QueueTable).ids == [ids[5]]
        )
        table = app.query_one(QueueTable)
        assert app.current_mode == "queue"
        assert table.ids == [ids[5]]  # the one proposal from that session


async def test_the_yield_floor_banner_shows_in_the_header(fresh) -> None:
    cfg, ledger = fresh
    with ledger.write() as c:
        for day in ("2026-11-25", "2026-11-26", "2026-11-27"):
            c.execute(
                "INSERT INTO dream_cycles (chat_id, date, status, started_at, depth, stats) "
                "VALUES ('*', ?, 'completed', ?, 'deep', '{\"kept\": 0}')",
                (day, f"{day}T20:00:00Z"),
            )
    app = DreamApp(cfg, ledger, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        assert "DREAM IS PROPOSING NOTHING" in screen_text(app)


async def test_a_first_run_with_nothing_there_shows_every_screen(tmp_path: Path) -> None:
    from dreamtui.core.config import Config

    cfg = Config(
        transcripts=tmp_path / "no-transcripts",
        memory=tmp_path / "no-memory",
        state=tmp_path / "state",
        extractor="heuristic",
    )
    ledger = Ledger.open(cfg.state)
    app = DreamApp(cfg, ledger)
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        assert "0 proposals waiting" in screen_text(app)
        for key in "2345671":
            await show(pilot, key)
        assert not [n for n in notes(app) if n.severity == "error"]
        assert app.is_running
    ledger.close()


async def test_promotion_screen_approves_and_revokes_auto_write(
    tmp_path_factory, tmp_path, monkeypatch
) -> None:
    from fakes.promotion import APPROVE_AT, build_history, copy_history, iso

    cfg = copy_history(build_history(tmp_path_factory), tmp_path / "world")
    monkeypatch.setenv("DREAMTUI_NOW", iso(APPROVE_AT))
    ledger = Ledger.open(cfg.state)
    try:
        app = DreamApp(cfg, ledger, watch=False)
        async with app.run_test(size=SIZE) as pilot:
            await started(pilot)
            await show(pilot, "7")
            assert "Gates: 3 of 3 pass" in plain(app, "#promotion")
            await pilot.press("A")
            await wait_for(pilot, lambda: isinstance(app.screen, ConfirmModal))
            await pilot.press("y")
            await wait_for(pilot, lambda: "AUTO-WRITE ON for heuristic" in plain(app, "#promotion"))
            assert any("Auto-write approved for heuristic" in n.message for n in notes(app))
            await wait_for(pilot, lambda: "Auto-write is on for heuristic" in screen_text(app))  # the header
            await pilot.press("R")
            await wait_for(pilot, lambda: "AUTO-WRITE OFF" in plain(app, "#promotion"))
            assert any("Auto-write revoked" in n.message for n in notes(app))
        assert [r["status"] for r in ledger.query("SELECT status FROM promotions")] == ["revoked"]
    finally:
        ledger.close()
