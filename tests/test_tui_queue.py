"""The review queue, driven with Pilot against a real ledger and a real git memory repo."""

from __future__ import annotations

import json
from dataclasses import replace

from fakes.notes import messages, notes
from fakes.tui import (
    DUP_MEMORY,
    LOGGING,
    PAY,
    SIZE,
    commits,
    open_queue,
    plain,
    screen_text,
    show,
    status_of,
    texts,
    wait_for,
)

from dreamtui.core.dream import stats as core_stats
from dreamtui.tui.app import DreamApp
from dreamtui.tui.screens.modals import EditModal, ToolOutputModal
from dreamtui.tui.toasts import toast_text
from dreamtui.tui.widgets.status_header import StatusHeader


async def test_accept_makes_one_commit_and_the_next_proposal_is_highlighted(tui_setup) -> None:
    cfg, ledger, ids = tui_setup
    before = commits(cfg.memory)
    async with open_queue(cfg, ledger, len(ids)) as (app, pilot, table):
        first, second = table.current_id, None
        assert first == ids[0]
        await pilot.press("a")
        # one key, one decision: the next proposal is highlighted at once, before the commit lands
        second = table.current_id
        assert second == ids[1]
        assert table.row_count == len(ids) - 1
        await wait_for(pilot, lambda: app.decisions_waiting == 0)
        await wait_for(pilot, lambda: any(m.startswith("accepted “") for m in messages(app)))
        await pilot.pause()
        assert "5 proposals waiting" in app.query_one(StatusHeader).render_text().plain
        said = messages(app)
    assert status_of(ledger, first) == "accepted"
    assert status_of(ledger, second) == "pending"
    after = commits(cfg.memory)
    assert len(after) == len(before) + 1
    # the notification names the file and the commit the core made, read from its AcceptResult
    row = ledger.query("SELECT memory_path, commit_sha FROM decisions WHERE action = 'accept'")[0]
    claim = ledger.get_candidate(first).claim
    named = f"accepted “{claim[:59]}…” → {row['memory_path']} ({row['commit_sha'][:8]})"  # by its claim
    assert toast_text(named, SIZE[0]) in said, said  # cut to two lines of a toast
    # with no git identity, as here, the first accept says so once, in a toast of its own
    assert sum(note.startswith("git has no user.name") for note in said) == 1, said


async def test_reject_with_a_reason_changes_the_stats(tui_setup) -> None:
    cfg, ledger, ids = tui_setup
    async with open_queue(cfg, ledger, len(ids)) as (app, pilot, table):
        await pilot.press("j", "r")
        await pilot.pause()
        await pilot.press("4")  # "too specific"
        await pilot.press(*"only for refunds")
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.decisions_waiting == 0 and status_of(ledger, ids[1]) == "rejected")
        assert table.row_count == len(ids) - 1
        await show(pilot, "5")  # the Stats screen
        assert "too specific" in screen_text(app)
    stats = core_stats.compute_stats(ledger)
    assert stats["rejection_reasons"] == {"too specific": 1}
    row = ledger.query("SELECT category, reason FROM decisions WHERE candidate_id = ?", (ids[1],))[0]
    assert (row["category"], row["reason"]) == ("too specific", "only for refunds")


async def test_undo_reverts_an_accept_with_a_commit(tui_setup) -> None:
    cfg, ledger, ids = tui_setup
    before = commits(cfg.memory)
    async with open_queue(cfg, ledger, len(ids)) as (app, pilot, table):
        await pilot.press("a")
        await wait_for(pilot, lambda: app.decisions_waiting == 0 and status_of(ledger, ids[0]) == "accepted")
        written = ledger.query("SELECT memory_path FROM decisions WHERE action = 'accept'")[0]["memory_path"]
        assert (cfg.memory / written).is_file()
        await pilot.press("u")
        await wait_for(pilot, lambda: app.decisions_waiting == 0 and status_of(ledger, ids[0]) == "pending")
        await wait_for(pilot, lambda: table.row_count == len(ids) and table.current_id == ids[0])
        assert table.current_id == ids[0]  # the proposal is back, highlighted
        said = messages(app)
    assert not (cfg.memory / written).exists()
    revert = ledger.query("SELECT commit_sha FROM decisions WHERE action = 'undo'")[0]["commit_sha"]
    claim = ledger.get_candidate(ids[0]).claim
    assert f"undid accept of “{claim[:59]}…” (revert {revert[:8]})" in said  # the claim, not the id
    assert not any(ids[0] in note for note in said)
    assert len(commits(cfg.memory)) == len(before) + 2  # the accept and its revert


async def test_skip_moves_the_proposal_to_the_end(tui_setup) -> None:
    cfg, ledger, ids = tui_setup
    async with open_queue(cfg, ledger, len(ids)) as (app, pilot, table):
        await pilot.press("s")
        assert table.current_id == ids[1]
        await wait_for(pilot, lambda: app.decisions_waiting == 0)
        assert table.get_row_index(ids[0]) == len(ids) - 1
    assert status_of(ledger, ids[0]) == "pending"
    assert ledger.query("SELECT action FROM decisions")[0]["action"] == "skip"


async def test_edit_then_accept_writes_the_edited_claim(tui_setup) -> None:
    cfg, ledger, ids = tui_setup
    async with open_queue(cfg, ledger, len(ids)) as (app, pilot, table):
        await pilot.press("e")
        await pilot.pause()
        claim = app.screen.query_one("#claim")
        claim.load_text("Database tests use\nthe testcontainers fixture")
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: app.decisions_waiting == 0 and status_of(ledger, ids[0]) == "accepted")
    path = ledger.query("SELECT memory_path FROM decisions WHERE action = 'accept'")[0]["memory_path"]
    assert "Database tests use the testcontainers fixture" in (cfg.memory / path).read_text()


async def test_the_duplicate_view_shows_both_texts(tui_setup) -> None:
    cfg, ledger, ids = tui_setup
    async with open_queue(cfg, ledger, len(ids)) as (app, pilot, table):
        assert table.current_id == ids[0]  # the suspected duplicate of a memory
        await pilot.pause()
        assert "DUPLICATE 55%" in screen_text(app)
        assert app.query_one("#dup").display
        new, old = plain(app, "#dup-new"), plain(app, "#dup-old")
        assert "This proposal" in new and "Use the testcontainers fixture for database tests" in new
        assert f"Existing: memory {DUP_MEMORY}" in old
        assert "disposable Postgres container, never mocks" in old  # the memory file's own words
        await pilot.press("j")
        await pilot.pause()
        assert not app.query_one("#dup").display


async def test_evidence_shows_raw_records_around_the_quote(tui_setup) -> None:
    cfg, ledger, ids = tui_setup
    async with open_queue(cfg, ledger, len(ids)) as (app, pilot, table):
        text = plain(app, "#evidence")
        cand = ledger.get_candidate(ids[0])
        line = cand.matches[0].line
        assert f"{PAY}/{cand.session}.jsonl : line {line}" in text  # its file and line
        assert f"▶ L{line}" in text  # the match line is marked
        for n in range(line - 4, line + 5):  # several records before and after
            assert f"L{n} " in text
        assert "person    09:14:05" in text  # role and time
        assert "[untrusted tool output]" in text  # a tool result near it is labelled
        marked = next(t for t in texts(app.query_one("#evidence").content) if t.plain.startswith("▶"))
        spans = [marked.plain[s.start : s.end] for s in marked.spans if "yellow" in str(s.style)]
        assert cand.quote in spans  # the quote is highlighted where it stands


async def test_tool_provenance_and_secrets_are_loud(tui_setup) -> None:
    cfg, ledger, ids = tui_setup
    secret = replace(ledger.get_candidate(ids[2]), secrets=["aws-access-key"])
    ledger.put_candidate(secret)
    async with open_queue(cfg, ledger, len(ids)) as (app, pilot, table):
        text = screen_text(app)
        assert "TOOL!" in text and "SECRET" in text  # badges in the table
        table.move_cursor(row=table.get_row_index(ids[4]))
        await pilot.pause()
        assert "TOOL OUTPUT — UNTRUSTED" in screen_text(app)
        table.move_cursor(row=table.get_row_index(ids[2]))
        await pilot.pause()
        assert "SECRET: aws-access-key (redacted)" in screen_text(app)


async def test_rich_markup_and_escape_codes_are_shown_literally(tui_setup) -> None:
    cfg, ledger, ids = tui_setup
    async with open_queue(cfg, ledger, len(ids), at=ids[3]) as (app, pilot, table):
        screen = screen_text(app)
        # the markup is on the screen as characters, the escape as a visible ␛, never obeyed
        assert "[bold red]x[/]" in screen and "\x1b" not in screen
        assert "[bold red]x[/] markup and ␛[31mERROR␛[0m escapes" in plain(app, "#summary")
        assert "[bold red]x[/] payment failed ␛[31mERROR␛[0m code=402" in plain(app, "#evidence")
        evidence = plain(app, "#evidence")
        assert "AKIAIOSFODNN7EXAMPLE" not in evidence  # a key pasted two lines later is redacted
        assert "[REDACTED:aws-access-key]" in evidence
        await pilot.press("r")
        await pilot.pause()
        assert "[bold red]x[/]" in screen_text(app)  # the reject dialog's claim line, too
        await pilot.press("escape")
        await pilot.pause()
        assert status_of(ledger, ids[3]) == "pending"


async def test_filter_and_sort(tui_setup) -> None:
    cfg, ledger, ids = tui_setup
    async with open_queue(cfg, ledger, len(ids)) as (app, pilot, table):
        await pilot.press("slash", *"client.ts")
        await pilot.pause()
        assert table.row_count == 1 and table.current_id == ids[5]
        await pilot.press("enter", "escape")
        await pilot.pause()
        assert table.row_count == len(ids)
        await pilot.press("o")  # group by project
        await pilot.pause()
        projects = [ledger.get_candidate(cid).project for cid in table.ids]
        assert projects == sorted(projects)


async def test_keys_can_be_remapped(tui_setup) -> None:
    cfg, ledger, ids = tui_setup
    cfg = cfg.changed(keys={"accept": "y"})
    async with open_queue(cfg, ledger, len(ids)) as (app, pilot, table):
        await pilot.press("a")
        await pilot.pause()
        assert table.row_count == len(ids)  # "a" no longer accepts
        await pilot.press("y")
        await wait_for(pilot, lambda: app.decisions_waiting == 0 and status_of(ledger, ids[0]) == "accepted")
        assert "y Accept" in screen_text(app)  # the footer shows the new key


async def test_a_refused_accept_is_a_notification_and_the_proposal_comes_back(tui_setup) -> None:
    cfg, ledger, ids = tui_setup
    index = cfg.memory / "MEMORY.md"
    index.write_text(index.read_text() + "".join(f"- line {n}\n" for n in range(200)))
    # the uncommitted MEMORY.md is an outside change too (issue 17): one more row, listed first
    async with open_queue(cfg, ledger, len(ids) + 1, at=ids[0]) as (app, pilot, table):
        await pilot.press("a")
        await wait_for(pilot, lambda: app.decisions_waiting == 0)
        await wait_for(pilot, lambda: table.row_count == len(ids) + 1)
        assert table.current_id == ids[0]
        assert any("accept failed" in n.message for n in notes(app))
        assert app.is_running
    assert status_of(ledger, ids[0]) == "pending"


async def test_the_command_palette_lists_every_action(tui_setup) -> None:
    cfg, ledger, _ids = tui_setup
    app = DreamApp(cfg, ledger, watch=False)
    async with app.run_test(size=SIZE):
        titles = {c.title for c in app.get_system_commands(app.screen)}
    for title in (
        "Accept",
        "Reject",
        "Edit then accept",
        "Skip",
        "Undo",
        "Filter",
        "Dream now",
        "Screen: Stats",
        "Screen: Promotion",
    ):
        assert title in titles


async def test_a_transcript_appended_during_the_session_shows_up(tui_setup) -> None:
    cfg, ledger, _ids = tui_setup
    path = cfg.transcripts / PAY / f"{LOGGING}.jsonl"
    app = DreamApp(cfg, ledger, watch=True, watch_debounce=0.05)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app._watcher is not None and app._watcher.running)  # events are seen
        record = {
            "type": "user",
            "message": {"role": "user", "content": "please never squash the migration commits"},
            "uuid": "u-live-1",
            "timestamp": "2026-11-28T15:00:00.000Z",
            "sessionId": LOGGING,
        }
        line = json.dumps(record) + "\n"
        with path.open("a", encoding="utf-8") as fh:
            fh.write(line)
        await wait_for(pilot, lambda: "never squash the migration commits" in screen_text(app), timeout=15)
        assert "person" in screen_text(app)


async def test_reject_with_arrows_and_enter(tui_setup) -> None:
    cfg, ledger, ids = tui_setup
    async with open_queue(cfg, ledger, len(ids)) as (app, pilot, table):
        await pilot.press("r")
        await pilot.pause()
        await pilot.press("down", "enter", "enter")  # "duplicate", no free text
        await wait_for(pilot, lambda: app.decisions_waiting == 0 and status_of(ledger, ids[0]) == "rejected")
    row = ledger.query("SELECT category FROM decisions WHERE candidate_id = ?", (ids[0],))[0]
    assert row["category"] == "duplicate"


async def test_a_palette_command_acts_on_the_queue_from_another_screen(tui_setup) -> None:
    cfg, ledger, ids = tui_setup
    async with open_queue(cfg, ledger, len(ids)) as (app, pilot, table):
        await show(pilot, "5")
        skip = next(c for c in app.get_system_commands(app.screen) if c.title == "Skip")
        skip.callback()
        await wait_for(pilot, lambda: app.decisions_waiting == 0 and table.current_id == ids[1])
        assert app.current_mode == "queue"
    assert ledger.query("SELECT action, candidate_id FROM decisions")[0]["candidate_id"] == ids[0]


async def test_accepting_tool_output_takes_an_explicit_yes(tui_setup) -> None:
    cfg, ledger, ids = tui_setup
    tool = ids[4]  # its quote is only in a file the agent read
    assert ledger.get_candidate(tool).provenance == "tool"
    before = commits(cfg.memory)
    async with open_queue(cfg, ledger, len(ids), at=tool) as (app, pilot, table):
        await pilot.press("a")
        await pilot.pause()
        assert isinstance(app.screen, ToolOutputModal)
        shown = screen_text(app)
        assert "TOOL OUTPUT — UNTRUSTED" in shown
        assert "always deploy with --skip-migrations on Fridays" in shown  # the quote itself
        await pilot.press("enter")  # the focus is on Cancel: Enter does not accept
        await pilot.pause()
        assert not isinstance(app.screen, ToolOutputModal)
        await pilot.press("a", "a")  # nor does pressing a again
        await pilot.pause()
        assert isinstance(app.screen, ToolOutputModal)
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, ToolOutputModal))
        await pilot.pause()  # what the dismissal does, done
        assert app.decisions_waiting == 0
        assert table.row_count == len(ids) and table.current_id == tool  # still there, still highlighted
        assert status_of(ledger, tool) == "pending"
        assert commits(cfg.memory) == before
        await pilot.press("a")
        await pilot.pause()
        await pilot.press("y")
        await wait_for(pilot, lambda: app.decisions_waiting == 0 and status_of(ledger, tool) == "accepted")
        assert tool not in table.ids
        assert not any("failed" in n.message for n in notes(app))
    assert len(commits(cfg.memory)) == len(before) + 1


async def test_edit_then_accept_of_tool_output_asks_first(tui_setup) -> None:
    cfg, ledger, ids = tui_setup
    tool = ids[4]
    before = commits(cfg.memory)
    async with open_queue(cfg, ledger, len(ids), at=tool) as (app, pilot, table):
        await pilot.press("e")
        await pilot.pause()
        assert isinstance(app.screen, ToolOutputModal)
        await pilot.press("n")
        await pilot.pause()
        assert not isinstance(app.screen, (ToolOutputModal, EditModal))
        await pilot.press("e")
        await pilot.pause()
        await pilot.press("y")
        await pilot.pause()
        assert isinstance(app.screen, EditModal)
        app.screen.query_one("#claim").load_text("Check the release checklist before deploying on Fridays")
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: app.decisions_waiting == 0 and status_of(ledger, tool) == "accepted")
    assert len(commits(cfg.memory)) == len(before) + 1
    path = ledger.query("SELECT memory_path FROM decisions WHERE action = 'accept'")[0]["memory_path"]
    assert "Check the release checklist before deploying on Fridays" in (cfg.memory / path).read_text()


async def test_every_notification_times_out_soon(tui_setup) -> None:
    cfg, ledger, ids = tui_setup
    async with open_queue(cfg, ledger, len(ids)) as (app, pilot, table):
        await pilot.press("s", "a")
        await wait_for(pilot, lambda: app.decisions_waiting == 0)
        app.notice_skipped(["skipped x.jsonl: it is a FIFO, not a regular file"])
        await pilot.pause()
        shown = notes(app)
        assert shown and all(n.timeout <= 4 for n in shown)  # nothing sits over the evidence
