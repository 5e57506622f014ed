"""The guard is live on a first run (issue 24 point 3): when the memory folder is not there when dreamtui
starts (the first dream creates it), what is written, edited and deleted in it afterwards becomes review
items without a restart. Real watchdog events, a real git repository, the real app."""

from __future__ import annotations

from pathlib import Path

from fakes.tui import make_config, wait_loaded
from fakes.waiting import pause_until, wait_for

from dreamtui.core.config import Config
from dreamtui.core.ledger import Ledger
from dreamtui.core.memory import gitops, outside
from dreamtui.tui.app import DreamApp


def _pending(ledger: Ledger) -> dict[str, str]:
    return {i.path: i.kind for i in outside.items(ledger, "pending")}


def test_the_watcher_waits_for_a_missing_memory_folder_and_then_watches_it(
    config: Config, ledger: Ledger, git_home: Path, tmp_path: Path
) -> None:
    cfg = config.changed(memory=tmp_path / "not-yet" / "memory")  # neither folder exists
    watcher = outside.OutsideWatcher(cfg, settle=0.05)
    watcher.start()
    try:
        assert watcher.watching == tmp_path
        repo = gitops.open_repo(cfg.memory)  # what the first dream does: the folders and the repository
        (cfg.memory / "seed.md").write_text("committed by dreamtui\n")
        gitops.commit_paths(repo, ["seed.md"], "seed", {})
        assert wait_for(lambda: watcher.watching == cfg.memory)
        (cfg.memory / "note.md").write_text("written after the folder appeared\n")
        assert wait_for(lambda: _pending(ledger) == {"note.md": "added"})
        (cfg.memory / "seed.md").write_text("edited\n")
        assert wait_for(lambda: _pending(ledger).get("seed.md") == "modified")
        outside.accept(
            cfg, ledger, next(i.id for i in outside.items(ledger, "pending") if i.path == "seed.md")
        )
        (cfg.memory / "seed.md").unlink()
        assert wait_for(lambda: _pending(ledger).get("seed.md") == "deleted")
    finally:
        watcher.stop()
    assert watcher.errors == []


async def test_the_open_app_shows_changes_to_the_memory_its_first_dream_created(
    tmp_path: Path, git_home: Path, monkeypatch
) -> None:
    monkeypatch.setenv("DREAMTUI_NOW", "2026-11-28T18:30:00Z")
    cfg = make_config(tmp_path)
    cfg = cfg.changed(memory=tmp_path / "fresh" / "memory")
    ledger = Ledger.open(cfg.state)
    try:
        app = DreamApp(cfg, ledger, watch=True)
        async with app.run_test() as pilot:
            await wait_loaded(pilot)
            assert not cfg.memory.exists()
            await pilot.press("d")  # the first dream makes the memory repository
            await pause_until(pilot, lambda: gitops.repo_exists(cfg.memory) and not app.cycle_running, 60)

            def rows() -> dict[str, str]:
                from dreamtui.tui.widgets.queue_table import QueueTable

                table = app.query_one(QueueTable)
                shown = {r.id for r in table.rows}
                return {i.path: i.kind for i in outside.items(ledger, "pending") if i.id in shown}

            (cfg.memory / "auto-note.md").write_text("Claude Code's auto memory saved this\n")
            await pause_until(pilot, lambda: rows() == {"auto-note.md": "added"}, what="the new file's row")
            [item] = outside.items(ledger, "pending")
            outside.accept(cfg, ledger, item.id)
            (cfg.memory / "auto-note.md").write_text("Claude Code's auto memory saved this, then edited it\n")
            await pause_until(pilot, lambda: rows() == {"auto-note.md": "modified"}, what="the edit's row")
            [item] = outside.items(ledger, "pending")
            outside.accept(cfg, ledger, item.id)
            (cfg.memory / "auto-note.md").unlink()
            await pause_until(pilot, lambda: rows() == {"auto-note.md": "deleted"}, what="the deletion's row")
    finally:
        ledger.close()
