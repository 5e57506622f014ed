"""The app as a whole: behaviour a person notices, driven with Pilot against a real ledger and a real git
memory repo as they use it in a real terminal (small terminals, keys typed quickly, text shown literally,
decisions kept)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from fakes.notes import notes, said
from fakes.tui import (
    DUP_MEMORY,
    PAY,
    SIZE,
    WEB,
    commits,
    lines,
    make_config,
    open_queue,
    plain,
    queue_of,
    screen_text,
    settle,
    show,
    wait_for,
    wait_loaded,
)
from textual import events
from textual.content import Content
from textual.geometry import Region
from textual.widgets import Markdown

from dreamtui.core.ledger import Ledger
from dreamtui.tui.app import DreamApp
from dreamtui.tui.messages import CycleProgress, GoodnightHeard, TranscriptsChanged
from dreamtui.tui.screens.base import cursor_key, restore_cursor
from dreamtui.tui.screens.modals import ConfirmModal, Rejection, RejectModal
from dreamtui.tui.widgets.queue_table import QueueTable

SMALL = (80, 24)


@pytest.mark.usefixtures("git_home")
def test_the_app_without_a_terminal_is_a_one_line_error(tmp_path: Path) -> None:
    (tmp_path / "t").mkdir()  # a transcripts folder that is there (a missing one is its own error)
    env = {
        **os.environ,
        "DREAMTUI_TRANSCRIPTS": str(tmp_path / "t"),
        "DREAMTUI_MEMORY": str(tmp_path / "m"),
        "DREAMTUI_STATE": str(tmp_path / "s"),
    }
    proc = subprocess.run(
        [sys.executable, "-c", "from dreamtui.cli.main import main; main()"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert proc.returncode == 2
    assert proc.stderr.startswith("dreamtui: the review app needs a terminal")
    assert "\x1b" not in proc.stdout + proc.stderr and not (tmp_path / "s").exists()


def headers(table: QueueTable) -> list[str]:
    return [line for line in lines(table) if line.startswith("▾")]


async def test_skip_while_grouped_keeps_the_group_whole(tui_setup) -> None:
    """Skipping in a grouped view put the row at the very end, under a second header of the same
    project (``payments-api · 1 proposal`` below ``… · 4 proposals``)."""
    cfg, ledger, ids = tui_setup
    async with open_queue(cfg, ledger, len(ids)) as (app, pilot, table):
        await pilot.press("o")  # grouped by project: web (1), then payments (5)
        await pilot.pause()
        await pilot.press("j")  # the first payments proposal
        skipped = table.current_id
        assert ledger.get_candidate(skipped).project == PAY
        await pilot.press("s")
        await pilot.pause()
        assert headers(table) == [f"▾ {WEB.strip('-')} · 1 proposal", f"▾ {PAY.strip('-')} · 5 proposals"]
        assert table.ids[-1] == skipped  # last of its group (the last group)
        assert table.current_id != skipped and ledger.get_candidate(table.current_id).project == PAY
        await pilot.press("o")  # grouped by session: still one header per session
        await pilot.pause()
        titles = headers(table)
        assert len(titles) == len(set(titles)) == 3
        await wait_for(pilot, lambda: app.decisions_waiting == 0)


async def test_undoing_a_skip_puts_the_proposal_back_in_its_place(tui_setup) -> None:
    cfg, ledger, ids = tui_setup
    async with open_queue(cfg, ledger, len(ids)) as (app, pilot, table):
        assert table.ids == ids
        await pilot.press("s")
        await wait_for(pilot, lambda: app.decisions_waiting == 0)
        assert table.ids == [*ids[1:], ids[0]]
        await pilot.press("u")
        await wait_for(pilot, lambda: app.decisions_waiting == 0)
        await wait_for(pilot, lambda: any("undid skip" in n.message for n in notes(app)))
        await wait_for(pilot, lambda: table.ids == ids)
        assert table.ids == ids  # back where it was, not still last
        assert table.current_id == ids[0]


async def test_an_80x24_terminal_still_shows_the_claims(tui_setup) -> None:
    """At 80 columns the queue showed project/type/from/flags and no claim at all, cut SECRET to
    SECRE and had a horizontal scroll bar."""
    cfg, ledger, ids = tui_setup
    app = DreamApp(cfg, ledger, watch=False)
    async with app.run_test(size=SMALL) as pilot:
        table = app.query_one(QueueTable)
        await wait_for(pilot, lambda: table.row_count == len(ids))
        await pilot.pause()
        shown = lines(table)
        assert "Use the testcontainers" in shown[0]
        assert any("Never commit the gen" in line for line in shown)
        assert "DUP" in shown[0]  # the flags stay
        head = plain(app, "#queue-header")
        assert "claim" in head and head.index("claim") == shown[0].index("Use the testcontainers")
        assert not table.show_horizontal_scrollbar
        await pilot.resize_terminal(*SIZE)  # wide again: every column is back

        def wide() -> bool:  # every column back, the claim under its heading
            head = plain(app, "#queue-header")
            claim = lines(table)[0].find("Use the testcontainers")
            return "project" in head and "type" in head and claim == head.find("claim") >= 0

        await wait_for(pilot, wide)
        assert lines(table)[0].index("Use the testcontainers") == plain(app, "#queue-header").index("claim")


async def test_an_80x24_terminal_shows_sessions_and_memory_text_beside_their_lists(tui_setup) -> None:
    cfg, ledger, _ids = tui_setup
    app = DreamApp(cfg, ledger, watch=False)
    async with app.run_test(size=SMALL) as pilot:
        await show(pilot, "2")
        assert app.screen.query_one("#sessions").size.width >= 30  # was 17: one column and a half
        await show(pilot, "6")
        assert app.screen.query_one("#memfile").size.width >= 30  # was 23
        assert "…tabase-tests-use-real-postgres.md" in screen_text(app)  # the file name, not the folder


async def test_revert_right_after_moving_takes_the_highlighted_memory(tui_setup) -> None:
    """``j x`` typed quickly asked to revert the index (the highlight message had not arrived)."""
    cfg, ledger, ids = tui_setup
    async with open_queue(cfg, ledger, len(ids)) as (app, pilot, table):
        await pilot.press("a")
        await wait_for(pilot, lambda: app.decisions_waiting == 0)
        accepted = len(commits(cfg.memory))
        await show(pilot, "6")
        files = list(app.screen.files)
        target = next(
            n
            for n, rel in enumerate(files)
            if rel.startswith("projects/home-kim-src-payments-api/") and rel != DUP_MEMORY  # the accepted one
        )
        memfiles = app.screen.query_one("#memfiles")
        for _ in range(target):  # keys typed faster than the highlight messages are handled
            memfiles.action_cursor_down()
        app.screen.action_revert()
        await pilot.pause()
        assert isinstance(app.screen, ConfirmModal)
        assert files[target] in app.screen.question
        await pilot.press("y")
        await wait_for(pilot, lambda: len(commits(cfg.memory)) == accepted + 1)
        assert commits(cfg.memory)[0].startswith("Revert")
        await wait_for(
            pilot, lambda: ledger.get_candidate(ids[0]).status == "pending"
        )  # the ledger after git


async def test_a_long_confirmation_question_is_shown_whole(tui_setup) -> None:
    cfg, ledger, _ids = tui_setup
    app = DreamApp(cfg, ledger, watch=False)
    question = (
        "Revert the memory projects/home-kim-src-dreamboard-web/"
        + "x" * 60
        + "-the-end.md? (a revert commit)"
    )
    async with app.run_test(size=SIZE) as pilot:
        await app.push_screen(ConfirmModal(question))
        await pilot.pause()
        text = screen_text(app)
        assert "-the-end.md?" in text and "commit)" in text  # wrapped, not cut at the dialog's edge


async def test_a_filter_that_matches_nothing_says_so(tui_setup) -> None:
    cfg, ledger, ids = tui_setup
    async with open_queue(cfg, ledger, len(ids)) as (app, pilot, table):
        await pilot.press("slash", *"zzzz", "enter")
        await pilot.pause()
        text = plain(app, "#summary")
        assert "No proposal matches the filter “zzzz”" in text and "Nothing waits" not in text
        await pilot.press("escape")
        await pilot.pause()
        assert table.row_count == len(ids)


async def test_the_live_panel_names_the_project(tui_setup) -> None:
    """The live panel showed the last dash-separated word of the folder: ``api``, ``web``."""
    cfg, ledger, _ids = tui_setup
    app = DreamApp(cfg, ledger, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        path = cfg.transcripts / PAY / "8b04e6d2-2c5f-4e0b-a1f3-9d7c6b5a4e21.jsonl"
        app.live_tail.start_at(path, path.stat().st_size)
        record = {
            "type": "user",
            "message": {"role": "user", "content": "keep the pool at 10"},
            "uuid": "u-live-2",
            "timestamp": "2026-11-28T15:00:00.000Z",
        }
        with path.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(record) + "\n")
        [line] = app.live_tail.read_new_lines(path)
        assert "payments-api" in line.plain and " api " not in line.plain
        await pilot.pause()


async def test_mark_right_after_moving_marks_the_highlighted_briefing(tui_setup) -> None:
    cfg, ledger, _ids = tui_setup
    briefing = cfg.memory / "briefing.md"
    for n in range(2):
        briefing.write_text(f"# Briefing\n\n- version {n}\n")
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
        await show(pilot, "4")
        screen = app.screen
        newest, older = list(screen.versions)
        screen.query_one("#versions").action_cursor_down()  # j and m typed faster than the highlight message
        screen.action_mark()
        assert screen.marked == older
        await pilot.pause()
        await pilot.press("f")  # the marked version against itself: says so instead of an empty diff
        await pilot.pause()
        assert "diff" not in plain(app, "#briefing-title")
        assert notes(app)[-1].message.startswith("This is the marked version")
        await pilot.press("k", "f")  # diff from the marked (older) to the newest
        await pilot.pause()
        assert f"{older[:8]} → {newest[:8]}" in plain(app, "#briefing-title")


@pytest.mark.parametrize("key", ["r", "e"])
async def test_dialogs_keep_their_buttons_in_an_80x24_terminal(tui_setup, key) -> None:
    """At 80x24 the reject dialog's buttons were cut off below, and the edit dialog (90 wide) ran
    past the right edge with its buttons out of sight."""
    cfg, ledger, ids = tui_setup
    app = DreamApp(cfg, ledger, watch=False)
    async with app.run_test(size=SMALL) as pilot:
        table = app.query_one(QueueTable)
        await wait_for(pilot, lambda: table.row_count == len(ids))
        await pilot.press(key)
        await wait_for(
            pilot,
            lambda: (
                bool(app.screen.query(".dialog"))
                and all(app.screen.query_one(b).region.area for b in ("#ok", "#cancel"))
            ),
        )
        await pilot.pause()  # what it shows is painted
        dialog = app.screen.query_one(".dialog")
        assert dialog.region.right <= SMALL[0] and dialog.region.bottom <= SMALL[1]
        for button_id in ("#ok", "#cancel"):
            button = app.screen.query_one(button_id)
            visible = button.region.intersection(dialog.scrollable_content_region)
            assert visible == button.region, (button_id, button.region, dialog.scrollable_content_region)
        text = screen_text(app)
        assert "Cancel" in text and ("Reject" in text if key == "r" else "Accept" in text)
        if key == "e":
            claim = app.screen.query_one("#claim")
            assert claim.size.height >= 2  # the claim keeps two lines
        await pilot.press("escape")


async def test_skipped_proposals_stay_last_after_reopening(tui_setup) -> None:
    """Skip, quit, open again: the skipped proposal was first again."""
    cfg, ledger, ids = tui_setup
    async with open_queue(cfg, ledger, len(ids)) as (app, pilot, table):
        await pilot.press("s", "s")
        await wait_for(pilot, lambda: app.decisions_waiting == 0)
        assert table.ids == [*ids[2:], ids[0], ids[1]]
    again = DreamApp(cfg, ledger, watch=False)
    async with again.run_test(size=SIZE) as pilot:
        table = again.query_one(QueueTable)
        await wait_for(pilot, lambda: table.row_count == len(ids))
        assert table.ids == [*ids[2:], ids[0], ids[1]]
        assert table.current_id == ids[2]
        await pilot.press("u")  # the second skip is undone: that one goes back to its place
        await wait_for(
            pilot,
            lambda: (
                again.decisions_waiting == 0
                and ledger.query("SELECT COUNT(*) FROM decisions WHERE action = 'undo'")[0][0] == 1
            ),
        )
        await wait_for(pilot, lambda: table.ids == [ids[1], *ids[2:], ids[0]])


async def test_notifications_show_folder_names_literally(tui_setup) -> None:
    """ "Good night heard in -home-[reverse]evil[/reverse]" showed as "Good night heard in -home-evil",
    styled, and ``[@click=app.quit]`` became a link: project folders come from the transcripts."""
    cfg, ledger, _ids = tui_setup
    app = DreamApp(cfg, ledger, watch=False)
    project = "-home-kim-[reverse]evil[/reverse]-[@click=app.quit]x[/]"
    async with app.run_test(size=SIZE) as pilot:
        app.action_dream = lambda *a, **k: None  # the toast only
        app.post_message(GoodnightHeard(project))
        app.post_message(CycleProgress("light", "Light sleep"))  # the good night's cycle runs
        await wait_for(pilot, lambda: said(app, "Good night heard in"))
        app.screen.notify(f"revert failed: {project} [/nope]")  # a screen's notify, too
        await wait_for(pilot, lambda: said(app, "revert failed"))
        shown = []
        for n in notes(app):  # what each toast draws (as Toast.render does)
            try:
                shown.append((Content.from_markup(n.message) if n.markup else Content(n.message)).plain)
            except Exception as exc:  # noqa: BLE001 - markup that does not parse
                shown.append(f"unparsable markup: {exc}")
        assert any(f"Good night heard in {project}: dreaming" in text for text in shown), shown
        assert any(f"revert failed: {project} [/nope]" in text for text in shown), shown
        assert app.is_running


async def test_a_transcript_change_keeps_the_cursor_on_other_screens(tui_setup) -> None:
    """While Claude Code wrote a transcript, every change put the Memory screen's cursor back on
    MEMORY.md and the Sessions screen's back on the first session."""
    cfg, ledger, _ids = tui_setup
    app = DreamApp(cfg, ledger, watch=False)
    path = cfg.transcripts / PAY / "8b04e6d2-2c5f-4e0b-a1f3-9d7c6b5a4e21.jsonl"
    async with app.run_test(size=SIZE) as pilot:
        await show(pilot, "6")
        await pilot.press("j", "j")
        await pilot.pause()
        memfiles = app.screen.query_one("#memfiles")
        chosen = cursor_key(memfiles)
        assert chosen and chosen != "MEMORY.md"
        app.post_message(TranscriptsChanged([str(path)]))
        await settle(pilot)
        assert cursor_key(memfiles) == chosen
        app.screen.reload()  # a reload (after a decision) keeps it too
        await settle(pilot)
        assert cursor_key(memfiles) == chosen
        assert chosen in plain(app, "#memfile")
        await show(pilot, "2")
        projects = app.screen.query_one("#projects")
        restore_cursor(projects, PAY)
        await pilot.pause()
        await pilot.press("enter", "j")  # into the sessions, the second one
        await pilot.pause()
        sessions = app.screen.query_one("#sessions")
        session = cursor_key(sessions)
        assert sessions.cursor_coordinate.row == 1
        app.post_message(TranscriptsChanged([str(path)]))
        await settle(pilot)
        assert cursor_key(sessions) == session and app.screen.focused is sessions


async def test_cycles_name_the_project(tui_setup) -> None:
    """The Cycles table showed "web" or "api" (the folder's last word) for a project."""
    cfg, ledger, _ids = tui_setup
    with ledger.write() as db:
        db.execute(
            "INSERT INTO dream_cycles (chat_id, date, status, trigger, started_at) "
            "VALUES (?, '2026-11-28', 'completed', 'goodnight', '2026-11-28T10:00:00Z')",
            (PAY,),
        )
    app = DreamApp(cfg, ledger, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await show(pilot, "3")
        assert "payments-api" in screen_text(app) and "…ayments-api" not in screen_text(
            app
        )  # its name, whole


async def test_every_decision_key_says_so_when_nothing_is_highlighted(tmp_path: Path) -> None:
    """On an empty queue ``a`` said "No proposal is highlighted"; ``r``, ``e`` and ``s`` did nothing."""
    cfg = make_config(tmp_path)
    ledger = Ledger.open(cfg.state)
    app = DreamApp(cfg, ledger, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_loaded(pilot)
        for key in ("a", "r", "e", "s"):
            before = len(notes(app))
            await pilot.press(key)
            await pilot.pause()
            assert len(notes(app)) == before + 1, key
            assert notes(app)[-1].message == "No proposal is highlighted"
            assert not isinstance(app.screen, ConfirmModal)
    ledger.close()


async def test_a_narrow_detail_lists_its_fields_one_per_line(tui_setup) -> None:
    """At 80 columns the detail showed "type fee… session c91…" and "by heu… id c19…". The detail is
    the terminal's width now (below the list), so at 80 columns two pairs fit whole; a narrower pane
    (a 56-column terminal) lists them one per line."""
    cfg, ledger, ids = tui_setup
    app = DreamApp(cfg, ledger, watch=False)
    async with app.run_test(size=SMALL) as pilot:
        table = app.query_one(QueueTable)
        await wait_for(pilot, lambda: table.row_count == len(ids))
        meta = app.screen.query_one("#meta")
        await wait_for(pilot, lambda: any(line.split()[:1] == ["by"] for line in lines(meta)))
        shown = lines(meta)
        assert any(line.split() == ["by", "heuristic", "id", ids[0]] for line in shown), shown
        await pilot.resize_terminal(56, 24)
        await wait_for(pilot, lambda: any(line.split() == ["by", "heuristic"] for line in lines(meta)))
        shown = lines(meta)
        assert any(line.split() == ["id", ids[0]] for line in shown), shown
        await pilot.resize_terminal(*SIZE)  # wide: two pairs per line again
        await wait_for(
            pilot, lambda: any(line.split()[:1] == ["by"] and len(line.split()) == 4 for line in lines(meta))
        )
        shown = lines(meta)
        assert any(line.split() == ["by", "heuristic", "id", ids[0]] for line in shown), shown


async def test_quitting_right_after_decisions_writes_them_first(tui_setup) -> None:
    """``a a a q`` typed quickly: the three rows left the table, but the app quit with the accepts
    still queued for the worker, and none of them was written."""
    cfg, ledger, ids = tui_setup
    before = len(commits(cfg.memory))
    async with open_queue(cfg, ledger, len(ids)) as (app, pilot, table):
        await pilot.press("j")
        for _ in range(3):  # three keys faster than the worker commits
            app.screen.action_accept()
        await app.action_quit()
        await wait_for(pilot, lambda: not app.is_running, timeout=20)
    assert [ledger.get_candidate(cid).status for cid in ids[1:4]] == ["accepted"] * 3
    assert len(commits(cfg.memory)) == before + 3


async def test_a_link_in_the_briefing_is_not_opened(tui_setup) -> None:
    """The briefing quotes transcripts; a click on a link in it opened the browser on that URL."""
    cfg, ledger, _ids = tui_setup
    (cfg.memory / "briefing.md").write_text("# Briefing\n\n- see [the docs](https://evil.example/x) first\n")
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
            "briefing",
        ],
        check=True,
    )
    app = DreamApp(cfg, ledger, watch=False)
    opened: list[str] = []
    app.open_url = lambda url, **kw: opened.append(url)  # type: ignore[method-assign]
    async with app.run_test(size=SIZE) as pilot:
        await show(pilot, "4")
        md = app.screen.query_one("#briefing", Markdown)
        md.post_message(Markdown.LinkClicked(md, "https://evil.example/x"))
        await wait_for(pilot, lambda: said(app, "link (not opened)"))
        assert opened == []
        assert notes(app)[-1].message == "link (not opened): https://evil.example/x"


async def test_the_editor_never_sends_a_claims_escape_codes_to_the_terminal(tui_setup) -> None:
    """The edit dialog put the claim in a TextArea as it was: ``\\x1b[31m`` went to the terminal
    and was obeyed (the text turned red; other sequences move the cursor or set the title)."""
    cfg, ledger, ids = tui_setup
    cand = ledger.get_candidate(ids[3])
    assert "\x1b[31m" in cand.claim
    app = DreamApp(cfg, ledger, watch=False)
    decided: list[tuple] = []
    async with app.run_test(size=SIZE) as pilot:
        table = app.query_one(QueueTable)
        await wait_for(pilot, lambda: table.row_count == len(ids))
        queue_of(app).select(ids[3])
        await pilot.pause()
        app.decide = lambda *a, **k: decided.append((a, k))  # the dialog's result only
        await pilot.press("e")
        await wait_for(
            pilot, lambda: bool(app.screen.query("#claim")) and app.screen.query_one("#claim").size.height > 0
        )
        await pilot.pause()  # what it shows is painted
        claim = app.screen.query_one("#claim")
        drawn = "".join(seg.text for strip in claim.render_lines(Region(0, 0, *claim.size)) for seg in strip)
        assert "\x1b" not in drawn and "␛[31mERROR␛[0m" in drawn
        await pilot.press("ctrl+s")  # left as it was: the original text is kept
        await pilot.pause()
    [(args, kwargs)] = decided
    assert args == ("accept", ids[3])
    assert kwargs["edits"]["claim"] == " ".join(cand.claim.split())


async def test_a_memory_files_type_is_shown_literally(tui_setup) -> None:
    """The Memory table gave the frontmatter's type to the DataTable as a string, which it reads as
    markup: ``type: "[/x]"`` crashed the app, ``[reverse]`` styled the row."""
    cfg, ledger, _ids = tui_setup
    (cfg.memory / "odd.md").write_text(
        '---\nname: odd\ndescription: odd\ntype: "[reverse]t[/reverse] [/x]"\n---\n\nodd\n'
    )
    app = DreamApp(cfg, ledger, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await show(pilot, "6")
        assert app.is_running
        assert any("odd.md" in line and "[reverse" in line for line in screen_text(app).splitlines())


async def test_the_revert_question_shows_a_file_name_literally(tui_setup) -> None:
    """A Label writes escape codes to the terminal as they are; a memory file's name can hold them."""
    cfg, ledger, _ids = tui_setup
    name = "odd\x1b[31mred.md"
    (cfg.memory / name).write_text("---\nname: odd\ndescription: odd\ntype: feedback\n---\n\nodd\n")
    app = DreamApp(cfg, ledger, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await show(pilot, "6")
        restore_cursor(app.screen.query_one("#memfiles"), name)
        await pilot.pause()
        await pilot.press("x")
        await pilot.pause()
        # no proposal wrote it: nothing to revert, so no question (issue 24), and the name is literal
        assert not isinstance(app.screen, ConfirmModal)
        [note] = [str(n.message) for n in notes(app) if "nothing to revert" in str(n.message)]
        assert "\x1b" not in note and "odd␛[31mred.md" in note


async def test_r_digit_enter_typed_quickly_rejects_with_that_category(tui_setup) -> None:
    """``r 2 Enter`` typed quickly (tmux): the 2 and the Enter were sent before the dialog was shown;
    the 2 was lost, the Enter chose the highlighted category ("wrong") and did not reject, and the
    keys typed next went into the reason."""
    cfg, ledger, ids = tui_setup
    async with open_queue(cfg, ledger, len(ids)) as (app, pilot, table):
        for key, character in (("r", "r"), ("2", "2"), ("enter", "\r")):  # no pause between the keys
            app.post_message(events.Key(key, character))
        await wait_for(
            pilot, lambda: app.decisions_waiting == 0 and ledger.get_candidate(ids[0]).status == "rejected"
        )
        assert not isinstance(app.screen, RejectModal)
    row = ledger.query("SELECT category FROM decisions WHERE candidate_id = ?", (ids[0],))[0]
    assert row["category"] == "duplicate"
    row = ledger.query("SELECT category FROM decisions WHERE candidate_id = ?", (ids[0],))[0]
    assert row["category"] == "duplicate"


async def test_a_number_and_enter_before_the_dialog_is_composed_reject_with_that_number(tui_setup) -> None:
    """In a real terminal ``r 2 Enter`` can be handled before the dialog is composed: the number was
    then applied on mount but the RadioSet learns of it only later, and "wrong" was rejected."""
    cfg, ledger, _ids = tui_setup
    app = DreamApp(cfg, ledger, watch=False)
    results: list = []
    async with app.run_test(size=SIZE) as pilot:
        modal = RejectModal("a claim")
        modal.action_number(1)  # "2", before compose
        modal.action_enter()
        await app.push_screen(modal, results.append)
        await wait_for(pilot, lambda: bool(results))
    assert results == [Rejection("duplicate", "")]


async def test_down_enter_enter_typed_quickly_rejects(tui_setup) -> None:
    """``r ↓ Enter Enter`` typed quickly: the second Enter reached the category list before the focus
    had moved to the free text, chose again and did not reject."""
    cfg, ledger, ids = tui_setup
    async with open_queue(cfg, ledger, len(ids)) as (app, pilot, table):
        await pilot.press("r")
        await pilot.pause()
        categories = app.screen.query_one("#category")
        await pilot.press("down")
        categories.action_choose(enter=True)
        categories.action_choose(enter=True)  # both Enters handled where the focus was when typed
        await wait_for(
            pilot, lambda: app.decisions_waiting == 0 and ledger.get_candidate(ids[0]).status == "rejected"
        )
    row = ledger.query("SELECT category FROM decisions WHERE candidate_id = ?", (ids[0],))[0]
    assert row["category"] == "duplicate"
