"""Issue 24 in the real app: outside changes counted and labelled apart, undone in the order decided,
asking once before a deletion, their own reject dialog, the diff drawn one line per
line, and no Revert offered for a file that came as an outside change."""

from __future__ import annotations

import subprocess

from fakes.notes import said
from fakes.tui import open_queue, plain, screen_text, show, wait_for, wait_modal

from dreamtui.core.memory import decisions, outside
from dreamtui.tui.screens.modals import CautionModal, ConfirmModal, OutsideRejectModal, RejectModal
from dreamtui.tui.widgets.candidate_view import CandidateView
from dreamtui.tui.widgets.queue_table import row_text
from dreamtui.tui.widgets.status_header import StatusHeader


def _git(repo, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True).stdout


def _detail_lines(app) -> list[str]:
    view = app.screen.query_one(CandidateView)
    content = view.query_one("#summary").content
    parts = getattr(content, "renderables", [content])
    return [line for t in parts for line in getattr(t, "plain", str(t)).split("\n")]


async def test_the_header_counts_outside_changes_apart_and_rows_say_what_they_are(
    tui_setup, git_home
) -> None:
    cfg, ledger, ids = tui_setup
    (cfg.memory / "a-note.md").write_text("one\n")
    (cfg.memory / "b-note.md").write_text("two\n")
    async with open_queue(cfg, ledger, len(ids) + 2) as (app, pilot, table):
        header = app.screen.query_one(StatusHeader).render_text(200).plain
        assert f"{len(ids)} proposals · 2 outside changes waiting" in header
        assert all(r.claim.startswith("outside · ") for r in table.rows if r.project == "memory repo")
        drawn = [row_text(r).plain for r in table.rows if r.project == "memory repo"]
        assert any("outside · person added a-note.md" in line for line in drawn)


async def test_u_after_accepting_an_outside_change_undoes_that_accept_not_an_older_rejection(
    tui_setup, git_home
) -> None:
    cfg, ledger, ids = tui_setup
    root = cfg.memory
    decisions.reject(ledger, ids[1], "wrong", "not a lesson")  # an older decision
    before = _git(root, "show", "HEAD:MEMORY.md")
    topic = next(p for p in _git(root, "ls-files").split() if p.endswith(".md") and p != "MEMORY.md")
    # a line for a file there: one linking a missing file asks first (the index invariant)
    (root / "MEMORY.md").write_text(before + f"- [Notes]({topic}) — a line auto memory appended\n")
    async with open_queue(cfg, ledger, len(ids)) as (app, pilot, table):
        [item] = outside.items(ledger)
        table.move_cursor(row=table.get_row_index(item.id))
        await pilot.pause()
        changed = [
            ln for ln in _detail_lines(app) if ln[:1] in ("+", "-") and not ln.startswith(("+++", "---"))
        ]
        assert changed == [f"+- [Notes]({topic}) — a line auto memory appended"]
        await pilot.press("a")
        await wait_for(pilot, lambda: outside.get(ledger, item.id).status == "accepted")
        await pilot.press("u")
        await wait_for(pilot, lambda: outside.get(ledger, item.id).status == "pending")
        await wait_for(pilot, lambda: item.id in {r.id for r in table.rows})  # back in the queue
        assert said(app, "undid the accept of the outside change")
        assert ledger.get_candidate(ids[1]).status == "rejected"  # the older rejection stands
        assert _git(root, "show", "HEAD:MEMORY.md") == before
        assert (root / "MEMORY.md").read_text().endswith("appended\n")  # the change waits again


async def test_a_deletion_asks_once_and_stray_keys_commit_nothing(tui_setup, git_home) -> None:
    cfg, ledger, ids = tui_setup
    root = cfg.memory
    topic = next(p for p in _git(root, "ls-files").split() if p.endswith(".md") and p != "MEMORY.md")
    (root / topic).unlink()
    head = _git(root, "rev-parse", "HEAD")
    async with open_queue(cfg, ledger, len(ids) + 1) as (app, pilot, table):
        [item] = outside.items(ledger)
        table.move_cursor(row=table.get_row_index(item.id))
        await pilot.pause()
        await pilot.press("a")
        modal = await wait_modal(pilot, CautionModal)
        assert any(f"deletion of {topic}" in line for line in modal.why)
        await pilot.press("a", "enter")  # a second a, then Enter on the focused No: nothing committed
        await wait_for(pilot, lambda: not isinstance(app.screen, CautionModal))
        assert outside.get(ledger, item.id).status == "pending" and _git(root, "rev-parse", "HEAD") == head
        await pilot.press("a")
        await wait_modal(pilot, CautionModal)
        await pilot.press("y")
        await wait_for(pilot, lambda: outside.get(ledger, item.id).status == "accepted")
        assert topic not in _git(root, "ls-files").split()


async def test_rejecting_an_outside_change_says_what_is_restored_not_lesson_categories(
    tui_setup, git_home
) -> None:
    cfg, ledger, ids = tui_setup
    root = cfg.memory
    before = _git(root, "show", "HEAD:MEMORY.md")
    (root / "notes.md").write_text("---\nname: notes\ndescription: n\ntype: feedback\n---\n\nA note.\n")
    (root / "MEMORY.md").write_text(before + "- [Notes](notes.md) — a note\n")
    async with open_queue(cfg, ledger, len(ids) + 2) as (app, pilot, table):
        index = next(i for i in outside.items(ledger) if i.path == "MEMORY.md")
        table.move_cursor(row=table.get_row_index(index.id))
        await pilot.pause()
        await pilot.press("r")
        modal = await wait_modal(pilot, OutsideRejectModal)
        assert not isinstance(modal, RejectModal)
        text = screen_text(app)
        assert "MEMORY.md is put back as committed (HEAD)" in text
        assert "Left out of the index: notes.md" in text and "Claude Code will not" in text
        assert "not a lesson" not in text and "too specific" not in text
        await pilot.press(*"the agent's own index line")
        await pilot.press("enter")
        await wait_for(pilot, lambda: outside.get(ledger, index.id).status == "rejected")
        assert (root / "MEMORY.md").read_text() == before
        assert outside.get(ledger, index.id).reason == "the agent's own index line"
        # accepting the topic file now warns that nothing indexes it
        note = next(i for i in outside.items(ledger) if i.path == "notes.md")
        table.move_cursor(row=table.get_row_index(note.id))
        await pilot.pause()
        await pilot.press("a")
        modal = await wait_modal(pilot, CautionModal)
        assert any("Claude Code will not load it" in line for line in modal.why)


async def test_the_memory_screen_does_not_offer_revert_for_an_outside_accepted_file(
    tui_setup, git_home
) -> None:
    cfg, ledger, ids = tui_setup
    root = cfg.memory
    (root / "typed.md").write_text("---\nname: typed\ndescription: t\ntype: user\n---\n\nMine.\n")
    async with open_queue(cfg, ledger, len(ids) + 1) as (app, pilot, table):
        [item] = outside.items(ledger)
        outside.accept(cfg, ledger, item.id)
        await show(pilot, "6")
        files = app.screen.query_one("#memfiles")
        files.move_cursor(row=files.get_row_index("typed.md"))
        await pilot.pause()
        assert "Mine." in plain(app, "#memfile")
        await pilot.press("x")
        await wait_for(pilot, lambda: said(app, "typed.md came as an outside change you accepted"))
        assert not isinstance(app.screen, ConfirmModal)
    assert outside.get(ledger, item.id).status == "accepted"
