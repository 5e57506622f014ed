"""What the screens look like: columns that line up, fields that do not run together, group headers,
words in the singular when there is one, and SVG screenshots that keep their spaces."""

from __future__ import annotations

import re

import pytest
from fakes.tui import LOGGING, PAY, REFUNDS, SIZE, WEB, lines, open_queue, show, wait_for

from dreamtui.core.memory import decisions
from dreamtui.core.models import QueueRow
from dreamtui.tui.app import DreamApp
from dreamtui.tui.screens.stats import render_stats
from dreamtui.tui.widgets.queue_table import QueueTable, header, row_text
from dreamtui.tui.widgets.status_header import StatusHeader


def row(
    provenance: str = "person", duplicate: bool = False, corroborated: int = 0, secret: bool = False
) -> QueueRow:
    return QueueRow(
        "c1",
        "-home-kim-src-payments-api",
        "s1",
        "feedback",
        "The claim itself",
        provenance,
        duplicate,
        corroborated,
        secret,
        "2026-11-28T10:00:00Z",
    )


@pytest.mark.parametrize(
    "kind",
    [
        {},
        {"duplicate": True},
        {"secret": True},
        {"corroborated": 2},
        {"provenance": "tool"},
        {"provenance": "tool", "duplicate": True, "secret": True, "corroborated": 4},
        {"provenance": "a-provenance-far-too-long-for-its-column"},
    ],
)
def test_every_row_starts_its_claim_under_the_claim_title_after_a_blank(kind) -> None:
    column = header().plain.index("claim")
    line = row_text(row(**kind)).plain
    assert line.index("The claim itself") == column
    assert line[column - 1] == " "  # badges never run into the claim


def test_the_flags_column_keeps_the_loudest_badges_whole() -> None:
    line = row_text(row("tool", duplicate=True, secret=True, corroborated=4)).plain
    assert "TOOL!" in line and "SECRET DUP" in line  # ×5 does not fit: it is left out, not cut
    assert "×" not in line


def test_one_day_and_one_decision_are_singular() -> None:
    text = (
        render_stats({"decisions": 1, "accepted": 1, "rejected": 0, "decision_days": 1}, [3])
        .renderables[0]
        .plain
    )
    assert "1 decision (1 accepted, 0 rejected) over 1 day ·" in text
    text = render_stats({"decisions": 2, "decision_days": 2}, []).renderables[0].plain
    assert "2 decisions" in text and "over 2 days" in text


async def test_the_detail_lays_out_its_fields_apart(tui_setup) -> None:
    cfg, ledger, ids = tui_setup
    async with open_queue(cfg, ledger, len(ids)) as (app, pilot, table):
        await pilot.pause()
        shown = "\n".join(lines(app.query_one("#meta")))
        cand = ledger.get_candidate(ids[0])
        assert re.search(r"type {2,}feedback {2,}session {2,}" + cand.session[:8], shown)
        assert re.search(r"by {2,}heuristic {2,}id {2,}" + cand.id, shown)
        assert re.search(
            rf"project {{2,}}payments-api {{2,}}{cand.project}", shown
        )  # its name from the records' cwd
        assert re.search(r"scope {2,}this project  → projects/home-kim-src-payments-api/", shown)


async def test_the_header_says_proposal_for_one(tui_setup) -> None:
    cfg, ledger, ids = tui_setup
    for cid in ids[1:]:
        decisions.reject(ledger, cid, "other", "")
    app = DreamApp(cfg, ledger, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.query_one(QueueTable).row_count == 1)
        await pilot.pause()
        assert "1 proposal waiting" in app.query_one(StatusHeader).render_text().plain


async def test_grouped_queue_has_a_header_per_group_and_the_cursor_skips_it(tui_setup) -> None:
    cfg, ledger, ids = tui_setup
    async with open_queue(cfg, ledger, len(ids)) as (app, pilot, table):
        await pilot.press("o")  # grouped by project
        await pilot.pause()
        shown = lines(table)
        assert shown[0] == f"▾ {WEB.strip('-')} · 1 proposal"
        assert shown[2] == f"▾ {PAY.strip('-')} · 5 proposals"
        assert table.row_count == len(ids)  # headers are not proposals
        await pilot.press("home")
        assert table.current_id == ids[5]  # the first proposal, not the header above it
        await pilot.press("k")
        assert table.current_id == ids[5]
        await pilot.press("j")  # over the next group's header
        assert ledger.get_candidate(table.current_id).project == PAY
        await pilot.press("k")
        assert table.current_id == ids[5]
        app.decide = lambda *a, **k: None  # the UI only: the group empties and its header goes
        await pilot.press("a")
        await pilot.pause()
        assert ledger.get_candidate(table.current_id).project == PAY  # the next proposal, not a header
        shown = lines(table)
        assert shown[0] == f"▾ {PAY.strip('-')} · 5 proposals"
        assert not any(WEB.strip("-") in line for line in shown)
        await pilot.press("j", "a")
        await pilot.pause()
        assert lines(table)[0] == f"▾ {PAY.strip('-')} · 4 proposals"
        await pilot.press("o")  # grouped by session
        await pilot.pause()
        headers = [line for line in lines(table) if line.startswith("▾")]
        assert headers == [
            f"▾ session {REFUNDS[:8]} · {PAY.strip('-')} · 1 proposal",
            f"▾ session {LOGGING[:8]} · {PAY.strip('-')} · 3 proposals",
        ]
        await pilot.press("o")  # newest first: no headers
        await pilot.pause()
        assert not any(line.startswith("▾") for line in lines(table))


async def test_svg_screenshots_keep_their_spaces(tui_setup) -> None:
    cfg, ledger, ids = tui_setup
    app = DreamApp(cfg, ledger, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.query_one(QueueTable).row_count == len(ids))
        svg = app.export_screenshot()
    # Rich writes "6" and " proposals waiting" as two <text> runs, spaces as &#160;; renderers such as
    # rsvg-convert drop a run's leading spaces unless told to preserve them.
    assert re.search(r"<svg [^>]*xml:space=\"preserve\"", svg)
    assert ">&#160;proposals&#160;waiting" in svg


async def test_at_80x24_the_header_is_one_line_and_the_footer_keeps_every_queue_key(tui_setup) -> None:
    from textual.widgets import Footer

    cfg, ledger, ids = tui_setup
    async with open_queue(cfg, ledger, len(ids), size=(80, 24)) as (app, pilot, table):
        await pilot.pause()
        header = app.screen.query_one(StatusHeader)
        assert header.size.height == 1
        assert "6 proposals waiting" in lines(header)[0]
        # every key in the footer, whole within the 80 columns
        footer = " ".join(
            " ".join(lines(k)).strip()
            for k in app.screen.query_one(Footer).children
            if k.region.right <= 80 and k.region.width
        )
        for key, label in (
            ("a", "Accept"),
            ("r", "Reject"),
            ("e", "Edit"),
            ("s", "Skip"),
            ("u", "Undo"),
            ("/", "Filter"),
            ("o", "Sort"),
            ("?", "Help"),
        ):
            assert f"{key} {label}" in footer, (key, footer)
        for screen in "234567":  # every screen's header is one line at 80 columns
            await show(pilot, screen)
            assert app.screen.query_one(StatusHeader).size.height == 1, screen


@pytest.mark.parametrize("size", [(120, 40), (160, 40), (200, 50)])
async def test_the_project_and_claim_columns_grow_with_the_terminal(tui_setup, size) -> None:
    cfg, ledger, ids = tui_setup
    async with open_queue(cfg, ledger, len(ids), size=size) as (app, pilot, table):
        await pilot.pause()
        widths = dict(table.fields)
        claim = table.size.width - 1 - sum(w + 1 for w in widths.values())
        # the project column as wide as the longest name shown ("dreamboard-web"), the claim the rest
        assert widths["project"] == len("dreamboard-web"), widths
        assert claim >= size[0] - 57, (widths, claim)  # 7 of them the agent's (issue 31)
        assert widths["agent"] == len("Claude"), widths  # as wide as the longest label shown
        assert "payments-api " in "\n".join(lines(table))  # the project's name, not a cut folder name


async def test_the_duplicate_view_stacks_when_narrow(tui_setup) -> None:
    cfg, ledger, ids = tui_setup
    async with open_queue(cfg, ledger, len(ids), at=ids[0], size=(80, 24)) as (app, pilot, table):
        await pilot.pause()
        new, old = app.screen.query_one("#dup-new"), app.screen.query_one("#dup-old")
        assert new.region.x == old.region.x and old.region.y > new.region.y
        assert new.size.width > 20
    async with open_queue(cfg, ledger, len(ids), at=ids[0], size=(150, 45)) as (app, pilot, table):
        await pilot.pause()
        new, old = app.screen.query_one("#dup-new"), app.screen.query_one("#dup-old")
        assert old.region.x > new.region.x  # side by side when there is room


async def test_the_header_names_the_extractor_and_the_heuristic_says_the_queue_will_be_thin(
    tui_setup, tmp_path, monkeypatch
) -> None:

    from dreamtui.core.extract.choose import THIN_QUEUE

    cfg, ledger, ids = tui_setup  # the heuristic extractor
    async with open_queue(cfg, ledger, len(ids), size=(150, 40)) as (app, pilot, table):
        await pilot.pause()
        shown = lines(app.screen.query_one(StatusHeader))
        assert "extractor heuristic" in shown[0] and shown[1].strip() == THIN_QUEUE
    monkeypatch.setenv("HOME", str(tmp_path))  # no Claude Code login here: auto picks the local server
    local = cfg.changed(extractor="auto", openai_base_url="http://localhost:11434/v1")
    async with open_queue(local, ledger, len(ids), size=(150, 40)) as (app, pilot, table):
        await pilot.pause()
        shown = lines(app.screen.query_one(StatusHeader))
        assert "extractor openai" in shown[0] and not any("offline rules" in line for line in shown)
