"""Reading the queue as a reviewer (issue 24, part B), in the real app at 80x24, 120x40 and 200x50:
the list above the highlighted proposal, the whole claim and the quote in sight without scrolling,
Enter reads it and j/k then scroll it (not the list), toasts short and never over a dialog, a
decision's warning once, help that says what to do first, Promotion and Sessions at 80 columns."""

from __future__ import annotations

import pytest
from fakes.tui import SPECS, lines, open_queue, screen_text, show, wait_for, wait_modal

from dreamtui.tui.screens.help import HelpScreen
from dreamtui.tui.screens.modals import RejectModal
from dreamtui.tui.toasts import toast_lines, toast_text
from dreamtui.tui.widgets.candidate_view import CandidateView

SIZES = [(80, 24), (120, 40), (200, 50)]


def notes(app) -> list[str]:
    return [n.message for n in app._notifications]


def flat(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
async def test_the_whole_claim_and_quote_are_in_sight_without_scrolling(tui_setup, size) -> None:
    """Side by side, the claim was cut to ~24 cells at 80 and 120 columns and the pane opened on the
    evidence: now the list is above, the proposal below at the terminal's full width, opened at its top."""
    cfg, ledger, ids = tui_setup
    async with open_queue(cfg, ledger, len(ids), size=size) as (app, pilot, table):
        for n, cid in enumerate(ids[:3]):
            if n:
                await pilot.press("j")
            view = app.query_one(CandidateView)
            summary = view.query_one("#summary")
            cand = next(c for c in [ledger.get_candidate(cid)] if c)

            def whole(view=view, cid=cid, quote=f"“{flat(cand.quote)}”") -> bool:  # on the terminal as drawn
                return (
                    view.candidate is not None
                    and view.candidate.id == cid
                    and quote in flat(screen_text(app))
                )

            await wait_for(pilot, whole)
            assert flat(cand.claim) in flat("\n".join(lines(summary)))
            assert view.scroll_offset.y == 0
            assert view.region.width >= size[0] - 2  # the terminal's width, not a half of it
            assert app.screen.query_one("#queue-pane").region.bottom <= view.region.y  # list above
            assert view.content_region.y <= summary.region.y
            assert summary.region.bottom <= view.content_region.bottom, (size, summary.region, view.region)


async def test_at_200_columns_the_list_shows_whole_claims(tui_setup) -> None:
    """At 200x50 the list took 120 columns and still cut the claim: it gives the claim the width."""
    cfg, ledger, ids = tui_setup
    async with open_queue(cfg, ledger, len(ids), size=(200, 50)) as (app, pilot, table):
        shown = "\n".join(lines(table))
        for claim in (spec[2] for spec in SPECS if "\x1b" not in spec[2] and "[" not in spec[2]):
            assert claim in shown, claim


async def test_enter_reads_the_proposal_and_j_k_scroll_it_not_the_list(tui_setup) -> None:
    cfg, ledger, ids = tui_setup
    async with open_queue(cfg, ledger, len(ids), at=ids[1], size=(80, 24)) as (app, pilot, table):
        view = app.query_one(CandidateView)
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.screen.focused is view)
        assert view.scroll_offset.y == 0
        await pilot.press("j", "j")
        await wait_for(pilot, lambda: view.scroll_offset.y == 2)
        assert table.current_id == ids[1]  # the list did not move
        await pilot.press("k")
        await wait_for(pilot, lambda: view.scroll_offset.y == 1)
        await pilot.press("escape")  # back to the list
        await wait_for(pilot, lambda: app.screen.focused is table)
        await pilot.press("j")
        await wait_for(pilot, lambda: table.current_id == ids[2])
        await pilot.press("tab")  # Tab into the pane: j scrolls it too
        await wait_for(pilot, lambda: app.screen.focused is view)
        await pilot.press("j")
        await wait_for(pilot, lambda: view.scroll_offset.y == 1)
        assert table.current_id == ids[2]


def test_a_toast_is_at_most_two_lines() -> None:
    notice = (
        "git has no user.name/user.email: committed as dreamtui <dreamtui@localhost> "
        "(set them with git config --global user.name/user.email; said once for this repository)"
    )
    accepted = (
        "accepted “Deploy with --skip-migrations on Fridays” → "
        "projects/home-kim-src-payments-api/deploy-with-skip-migrations-on-fridays.md (1a2b3c4d)"
    )
    for width in (80, 120, 200):
        inside = min(76, width * 7 // 10) - 3  # a toast's text width (app.tcss: Toast)
        for message in (accepted, f"{accepted} · {notice}", notice):
            text = toast_text(message, width)
            assert toast_lines(text, inside) <= 2, (width, text)
            assert text.startswith(message[:40])
        assert toast_text(notice, width).startswith("git has no user.name/user.email: committed as dreamtui")
    assert toast_text("accepted → x.md", 80) == "accepted → x.md"


async def test_toasts_are_short_and_the_identity_notice_comes_once(tui_setup) -> None:
    """The accept's toast carried git's missing-identity notice (~10 lines at 80 columns) and covered
    the pane: the decision's toast is one line, the notice its own short toast, shown once."""
    cfg, ledger, ids = tui_setup  # the tests run with no git identity (conftest)
    async with open_queue(cfg, ledger, len(ids), at=ids[1], size=(80, 24)) as (app, pilot, table):
        await pilot.press("a")
        await wait_for(pilot, lambda: any(m.startswith("accepted") for m in notes(app)))
        await wait_for(pilot, lambda: app.decisions_waiting == 0)
        await pilot.press("u")
        await wait_for(pilot, lambda: any(m.startswith("undid") for m in notes(app)))
        await wait_for(pilot, lambda: table.current_id == ids[1])
        await pilot.press("a")
        await wait_for(pilot, lambda: sum(m.startswith("accepted") for m in notes(app)) == 2)
        said = notes(app)
        assert sum("git has no user.name" in m for m in said) == 1, said
        assert all(toast_lines(m, 56 - 3) <= 2 for m in said), said  # two lines of a toast at 80 columns
        await pilot.pause()
        for toast in app.screen.query("Toast"):
            assert toast.region.height <= 3, toast.region  # a title line at most, and two of text


async def test_a_toast_never_covers_a_dialog(tui_setup) -> None:
    cfg, ledger, ids = tui_setup
    async with open_queue(cfg, ledger, len(ids), size=(80, 24)) as (app, pilot, table):
        await pilot.press("r")
        dialog = await wait_modal(pilot, RejectModal)
        app.notify("Memory changed outside dreamtui: auto dream rewrote 4 files", severity="warning")
        await pilot.pause()
        assert not list(dialog.query("Toast"))
        assert not any("auto dream rewrote" in m for m in notes(app))
        await pilot.press("escape")
        await wait_for(pilot, lambda: any("auto dream rewrote" in m for m in notes(app)))


def help_text(app) -> str:
    return "\n".join(
        line for selector in ("#help-guide", "#help-keys") for line in lines(app.screen.query_one(selector))
    )


async def test_help_says_what_to_do_first_and_lists_only_the_apps_keys(tui_setup) -> None:
    """``?`` was a raw key dump (Textual's Focus Next, Copy, Scroll Left, ``^p`` twice) and never said
    what DUP, SECRET or TOOL! mean."""
    cfg, ledger, ids = tui_setup
    async with open_queue(cfg, ledger, len(ids), size=(120, 40)) as (app, pilot, table):
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen))
        await pilot.pause()
        shown = help_text(app)
        start = shown[shown.index("Start here") : shown.index("Marks and columns")]
        for key, what in (("j", "next proposal"), ("a", "accept"), ("r", "reject")):
            assert any(line.split()[:1] == [key] and what in line for line in start.splitlines()), key
        for mark in ("TOOL!", "SECRET", "DUP", "×N", "memory repo", "from", "flags"):
            assert mark in shown, mark
        for textual_own in (
            "Focus Next",
            "Focus Previous",
            "Copy",
            "Scroll Left",
            "Scroll Right",
            "Page Left",
        ):
            assert textual_own not in shown, textual_own
        assert shown.count("^p") == 1
        assert "Read the highlighted proposal" in shown  # Enter


async def test_promotion_scrolls_without_tab_in_plain_lines_and_help_shows_approve(tui_setup) -> None:
    cfg, ledger, ids = tui_setup
    async with open_queue(cfg, ledger, len(ids), size=(80, 24)) as (app, pilot, table):
        await show(pilot, "7")
        text = "\n".join(lines(app.screen.query_one("#promotion")))
        for raw in ("integrity ok: True", "reconcile agrees: True", "min rate: 0.8", "overlap count"):
            assert raw not in text, raw
        assert "needs: " in text and "accept rate: none yet (needs 80%)" in text
        gates = [n for n, line in enumerate(text.splitlines()) if line.lstrip().startswith(("✔", "✘"))]
        failed = [n for n in gates if "✘" in text.splitlines()[n]]
        assert failed and all("needs:" in text.splitlines()[n + 1] for n in failed)  # what matters first
        page = app.screen.query_one("#promotion-page")
        assert page.max_scroll_y > 0  # it does not fit at 80x24
        await pilot.press("j")
        await wait_for(pilot, lambda: page.scroll_offset.y == 1)
        await pilot.press("pagedown")
        await wait_for(pilot, lambda: page.scroll_offset.y > 1)
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen))
        await pilot.pause()
        assert "approve auto-write" in help_text(app).lower()
        assert any(line.split()[:1] == ["A"] for line in help_text(app).splitlines())


async def test_sessions_keeps_waiting_and_pending_at_80_columns(tui_setup) -> None:
    cfg, ledger, ids = tui_setup
    async with open_queue(cfg, ledger, len(ids), size=(80, 24)) as (app, pilot, table):
        await show(pilot, "2")
        await wait_for(pilot, lambda: app.screen.query_one("#sessions").row_count > 0)
        await pilot.pause()
        for selector in ("#projects", "#sessions"):
            grid = app.screen.query_one(selector)
            header = lines(grid)[0]
            assert "waiting" in header and "pend" in header, (selector, header)
            assert not grid.show_horizontal_scrollbar, selector
        await pilot.resize_terminal(150, 40)  # wide again: every column is back
        await wait_for(pilot, lambda: "updated" in lines(app.screen.query_one("#sessions"))[0])
        assert "sessions" in lines(app.screen.query_one("#projects"))[0]
