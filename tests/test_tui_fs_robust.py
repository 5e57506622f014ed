"""The app on a transcripts folder with faults: an unsearchable project folder, a FIFO named ``*.jsonl``."""

from __future__ import annotations

import json
import os

from fakes.notes import notes
from fakes.tui import PAY, SIZE, WEB, plain, queue_of, show, wait_for, wait_loaded
from fsfaults import unreadable

from dreamtui.tui.app import DreamApp
from dreamtui.tui.toasts import toast_text


async def test_sessions_screen_shows_an_unsearchable_project_folder_as_a_notice_not_a_crash(fresh) -> None:
    cfg, ledger = fresh
    bad = cfg.transcripts / PAY
    with unreadable(bad, 0o444):  # readable but not searchable: the crash of the adversarial run
        app = DreamApp(cfg, ledger, watch=False)
        async with app.run_test(size=SIZE) as pilot:
            await wait_loaded(pilot)
            await show(pilot, "2")
            info = plain(app, "#sessions-info")
            assert "1 projects" in info and "2 sessions" in info  # the readable project is listed
            assert (
                f"1 skipped: skipped {bad}: cannot open the files in this folder (permission denied)" in info
            )
            notices = [n.message for n in notes(app) if n.title == "Skipped"]
            full = f"skipped {bad}: cannot open the files in this folder (permission denied)"
            assert notices == [toast_text(full, app.size.width)]  # a short toast: the folder's end, why
            assert notices[0].endswith(
                f"{bad.name}: cannot open the files in this folder (permission denied)"
            )
            await pilot.press("q")
        assert app.return_code in (0, None)


async def test_app_keeps_answering_when_a_fifo_named_jsonl_appears(fresh) -> None:
    cfg, ledger = fresh
    fifo = cfg.transcripts / WEB / "00000000-0000-4000-8000-00000000f1f0.jsonl"
    real = cfg.transcripts / WEB / "e7a5f0c3-9b8d-4e2a-b6c1-7d3f5e9a1c43.jsonl"
    app = DreamApp(cfg, ledger, watch=True, watch_debounce=0.05)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app._watcher is not None and app._watcher.running)  # events are seen
        os.mkfifo(fifo)
        await wait_for(pilot, lambda: any(n.title == "Skipped" for n in notes(app)), 15)
        notice = [n.message for n in notes(app) if n.title == "Skipped"]
        assert notice == [toast_text(f"skipped {fifo}: it is a FIFO, not a regular file", app.size.width)]
        assert notice[0].endswith(": it is a FIFO, not a regular file")
        record = {
            "type": "user",
            "uuid": "u-live",
            "timestamp": "2026-11-28T18:00:00.000Z",
            "sessionId": "e7a5f0c3-9b8d-4e2a-b6c1-7d3f5e9a1c43",
            "message": {"role": "user", "content": "the live view still moves"},
        }
        with real.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(record) + "\n")
        await wait_for(
            pilot,
            lambda: (
                "the live view still moves"
                in "\n".join(str(line) for line in queue_of(app).query_one("#live").lines)
            ),
            15,
        )
        await show(pilot, "2")  # the Sessions screen lists it as skipped, and the app still answers keys
        assert f"skipped {fifo}: it is a FIFO" in plain(app, "#sessions-info")
        await pilot.press("q")
