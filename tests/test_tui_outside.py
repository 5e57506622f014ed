"""Outside changes in the app's queue (issue 17 item 5): a row per changed file, its diff and writer in
the detail pane, a / r / m decide it — the real app, a real git memory repository."""

from __future__ import annotations

import re
import subprocess

from fakes.tui import open_queue, screen_text, show, wait_for, wait_modal

from dreamtui.core.memory import outside
from dreamtui.tui.app import DreamApp
from dreamtui.tui.screens.modals import OutsideRejectModal
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
        await wait_for(pilot, lambda: "auto memory added this" in _detail_text(app))
        text = _detail_text(app)
        assert "PERSON" in text and "+[bold]auto memory added this[/]" in text  # shown literally
        assert "\x1b" not in text
        await pilot.press("a")
        await wait_for(pilot, lambda: outside.get(ledger, edited.id).status == "accepted")
        assert "Dreamtui-Reviewed: outside" in _git(root, "log", "-1", "--format=%B")
        new = next(i for i in outside.items(ledger) if i.path == "new-note.md")
        table.move_cursor(row=table.get_row_index(new.id))
        await wait_for(pilot, lambda: "a note the agent saved" in _detail_text(app))
        await pilot.press("r")
        await wait_modal(pilot, OutsideRejectModal)  # its own dialog: no lesson categories, a reason
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
        await wait_for(pilot, lambda: "my own note" in _detail_text(app))
        await pilot.press("m")
        await wait_for(pilot, lambda: outside.get(ledger, item.id).status == "accepted")
        assert "Dreamtui-Outside: mine" in _git(root, "log", "-1", "--format=%B")
        assert _git(root, "status", "--porcelain") == ""


async def test_a_symlink_to_a_key_is_a_row_that_says_so_and_a_refuses_it(
    tui_setup, git_home, tmp_path
) -> None:
    """Issue 23: a symlink in the memory folder is shown as ``symlink → target`` (the target's bytes
    never read), and ``a`` on it is refused with a one-line notification; HEAD does not move."""
    cfg, ledger, ids = tui_setup
    root = cfg.memory
    key = tmp_path / "id_ed25519"
    key.write_text(
        "-----BEGIN OPENSSH PRIVATE KEY-----\nc2VjcmV0LWtleS1ieXRlcw==\n-----END OPENSSH PRIVATE KEY-----\n"
    )
    (root / "key-note.md").symlink_to(key)
    head = _git(root, "rev-parse", "HEAD")
    async with open_queue(cfg, ledger, len(ids) + 1) as (app, pilot, table):
        [item] = outside.items(ledger)
        table.move_cursor(row=table.get_row_index(item.id))
        await wait_for(pilot, lambda: "symlink →" in _detail_text(app))
        text = _detail_text(app)
        assert f"symlink → {key}" in text and "c2VjcmV0" not in text and "BEGIN OPENSSH" not in text
        await pilot.press("a")
        await wait_for(pilot, lambda: any("does not commit links" in n.message for n in app._notifications))
        [note] = [n for n in app._notifications if "does not commit links" in n.message]
        assert note.severity == "error"
        assert outside.get(ledger, item.id).status == "pending"
    assert _git(root, "rev-parse", "HEAD") == head


async def test_a_secret_in_an_outside_file_is_flagged_redacted_and_accept_is_refused(
    tui_setup, git_home
) -> None:
    cfg, ledger, ids = tui_setup
    root = cfg.memory
    token, stripe = "ghp_" + "aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hJ6", "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc"
    (root / "ci-notes.md").write_text(f"CI token {token}\nstripe {stripe}\n")
    async with open_queue(cfg, ledger, len(ids) + 1) as (app, pilot, table):
        [item] = outside.items(ledger)
        row = next(r for r in table.rows if r.id == item.id)
        assert row.secret  # the row's SECRET badge
        table.move_cursor(row=table.get_row_index(item.id))
        await wait_for(pilot, lambda: "SECRET: github-token" in _detail_text(app))
        text = _detail_text(app)
        assert "SECRET: github-token" in text and "+CI token [REDACTED:github-token]" in text
        assert "accept is refused" in text
        assert token not in text and stripe not in text
        assert token not in screen_text(app) and "SECRET" in screen_text(app)
        await pilot.press("a")
        await wait_for(pilot, lambda: app.decisions_finished >= 1 and not app.decisions_waiting)
        messages = [str(n.message) for n in app._notifications]
        assert any("ci-notes.md holds a secret (github-token" in m and "remove it" in m for m in messages)
        assert outside.get(ledger, item.id).status == "pending"
    assert token not in _git(root, "log", "-p", "--all")


async def test_the_agents_own_memories_are_rows_with_their_agent_as_writer_accepted_and_restored(
    tui_setup, git_home
) -> None:
    """Issue 31 item 4: a Codex memory and a Gemini CLI save_memory line are queue rows whose writer is
    the agent; ``a`` commits the Codex one's snapshot, ``r`` then Restore puts Gemini CLI's section back
    as reviewed (the person's lines of GEMINI.md untouched). Written to gemini-cli's memoryTool.ts
    format, commit 0750b01fe4e7b62d55d92918b1c4535a77acc334."""
    from pathlib import Path

    from fakes.gemini_memory import save_memory

    from dreamtui.core.memory import outside_agents as agents
    from dreamtui.tui.screens.modals import AgentRejectModal

    cfg, ledger, ids = tui_setup
    root = cfg.memory
    md = Path.home() / ".gemini" / "GEMINI.md"
    md.parent.mkdir()
    person = "# my own rules\n\nNo emojis in commit messages.\n"
    md.write_text(save_memory(person, "The user's staging host is kiwi."))
    outside.scan(cfg, ledger)
    [first] = outside.items(ledger)
    outside.accept(cfg, ledger, first.id)  # reviewed before
    reviewed = md.read_text()
    md.write_text(save_memory(md.read_text(), "The user likes force pushes."))  # the agent saves a wrong fact
    codex = Path.home() / ".codex" / "memories"
    codex.mkdir(parents=True)
    (codex / "MEMORY.md").write_text("- the release script lives in tools/release.sh\n")
    async with open_queue(cfg, ledger, len(ids) + 2) as (app, pilot, table):
        rows = {r.id: r for r in table.rows if r.project == "memory repo"}
        by_writer = {r.provenance: r for r in rows.values()}
        assert set(by_writer) == {"codex", "gemini"}, [(r.provenance, r.claim) for r in rows.values()]
        assert {r.agent_label for r in rows.values()} == {"Codex", "Gemini"}  # the agent column
        codex_item = outside.get(ledger, by_writer["codex"].id)
        table.move_cursor(row=table.get_row_index(codex_item.id))
        await wait_for(pilot, lambda: "CODEX CLI MEMORIES" in _detail_text(app))
        text = _detail_text(app)
        assert "CODEX CLI MEMORIES" in text and "+- the release script lives in tools/release.sh" in text
        await pilot.press("a")
        await wait_for(pilot, lambda: outside.get(ledger, codex_item.id).status == "accepted")
        assert "Dreamtui-Writer: codex" in _git(root, "log", "-1", "--format=%B")
        gemini_item = outside.get(ledger, by_writer["gemini"].id)
        assert gemini_item.path == agents.GEMINI_SNAPSHOT
        table.move_cursor(row=table.get_row_index(gemini_item.id))
        await wait_for(pilot, lambda: "GEMINI CLI SAVE_MEMORY" in _detail_text(app))
        text = _detail_text(app)
        assert "GEMINI CLI SAVE_MEMORY" in text and "+- The user likes force pushes." in text
        assert "No emojis" not in text
        await pilot.press("r")
        await wait_modal(pilot, AgentRejectModal)
        await pilot.press(*"not true")
        await pilot.click("#restore")
        await wait_for(pilot, lambda: outside.get(ledger, gemini_item.id).status == "rejected")
        assert outside.get(ledger, gemini_item.id).decided_as == "restored"
        assert md.read_text() == reviewed and md.read_text().startswith(person)
        assert outside.get(ledger, gemini_item.id).reason == "not true"
