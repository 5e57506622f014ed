"""Outside changes in the app's queue (issue 17 item 5): a row per changed file, its diff and writer in
the detail pane, a / r / m decide it — the real app, a real git memory repository."""

from __future__ import annotations

import re
import subprocess

from fakes.tui import open_queue, screen_text, show, wait_for

from dreamtui.core.memory import outside
from dreamtui.tui.app import DreamApp
from dreamtui.tui.widgets.candidate_view import CandidateView


def _git(repo, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True).stdout


def _detail_text(app: DreamApp) -> str:
    view = app.screen.query_one(CandidateView)
    content = view.query_one("#summary").content
    return "\n".join(getattr(t, "plain", str(t)) for t in getattr(content, "renderables", [content]))


async def test_outside_changes_are_queue_rows_with_their_diff(tui_setup, git_home) -> None:
    cfg, ledger, ids = tui_setup
    root = cfg.memory
    tracked = _git(root, "ls-files").split()
    topic = next(p for p in tracked if p.endswith(".md") and p != "MEMORY.md")
    (root / topic).write_text((root / topic).read_text() + "\n[bold]auto memory added this[/]\x1b[31m\n")
    (root / "new-note.md").write_text("a note the agent saved\n")
    async with open_queue(cfg, ledger, len(ids) + 2) as (app, pilot, table):
        outside_ids = [r.id for r in table.rows if r.project == "memory repo"]
        assert len(outside_ids) == 2 and {r.id for r in table.rows[:2]} == set(outside_ids)  # listed first
        edited = next(i for i in outside.items(ledger) if i.path == topic)
        table.move_cursor(row=table.get_row_index(edited.id))
        await pilot.pause()
        text = _detail_text(app)
        assert "PERSON" in text and "+[bold]auto memory added this[/]" in text  # shown literally
        assert "\x1b" not in text
        await pilot.press("a")
        await wait_for(pilot, lambda: outside.get(ledger, edited.id).status == "accepted")
        assert "Dreamtui-Reviewed: outside" in _git(root, "log", "-1", "--format=%B")
        new = next(i for i in outside.items(ledger) if i.path == "new-note.md")
        table.move_cursor(row=table.get_row_index(new.id))
        await pilot.pause()
        await pilot.press("r")
        await pilot.pause()
        await pilot.press("1")  # a category first, as for a proposal
        await pilot.press(*"not worth keeping")
        await pilot.press("enter")
        await wait_for(pilot, lambda: outside.get(ledger, new.id).status == "rejected")
        assert not (root / "new-note.md").exists()
        assert table.row_count == len(ids), [(r.id, r.claim) for r in table.rows]
        await show(pilot, "5")  # the Stats screen counts them per writer
        shown = screen_text(app)
        assert "Per writer" in shown and re.search(r"person\s.*50%", shown)
    assert outside.get(ledger, new.id).reason == "not worth keeping"


async def test_a_watched_change_appears_in_the_open_queue_and_m_commits_it_as_mine(
    tui_setup, git_home
) -> None:
    cfg, ledger, ids = tui_setup
    root = cfg.memory
    app = DreamApp(cfg, ledger, watch=True)
    async with app.run_test() as pilot:
        from dreamtui.tui.widgets.queue_table import QueueTable

        table = app.query_one(QueueTable)
        await wait_for(
            pilot, lambda: table.row_count == len(ids) and app._outside_watcher is not None
        )  # watching: a change made from now on is seen
        (root / "typed-by-hand.md").write_text("my own note\n")
        await wait_for(pilot, lambda: table.row_count == len(ids) + 1)
        [item] = outside.items(ledger)
        table.move_cursor(row=table.get_row_index(item.id))
        await pilot.pause()
        await pilot.press("m")
        await wait_for(pilot, lambda: outside.get(ledger, item.id).status == "accepted")
        assert "Dreamtui-Outside: mine" in _git(root, "log", "-1", "--format=%B")
        assert _git(root, "status", "--porcelain") == ""
