"""The evidence: the pane opens on claim, why, how and the quote, the raw records below them with
bookkeeping records and long tool output folded to one line each (``z`` unfolds and shows the quoted record), the quote highlighted, times in the person's local time, the
project by its real name."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from fakes.tui import PAY, add_candidates, lines, open_queue, wait_for

from dreamtui.services.evidence import raw_record
from dreamtui.tui.widgets.candidate_view import CandidateView
from dreamtui.tui.widgets.evidence import local_time, render_records

SESSION = "5d1c0f3a-1111-4222-8333-944455556666"
QUOTE = "never run the refund migrations by hand, the deploy job runs them and records the version"
BASE = {"sessionId": SESSION, "cwd": "/home/kim/src/payments-api", "isSidechain": False}


def rec(kind: str, **fields) -> bytes:
    return (
        json.dumps({**BASE, "type": kind, "timestamp": "2026-11-28T10:00:00.000Z", **fields}) + "\n"
    ).encode()


def noisy_transcript() -> list[bytes]:
    """A person's line after a screen of test output, a hook's output and progress records."""
    test_output = "\n".join(f"tests/test_refunds.py::test_case_{n} PASSED" for n in range(60))
    return [
        rec("user", message={"role": "user", "content": "run the refund tests please"}),
        rec(
            "assistant",
            message={
                "role": "assistant",
                "content": [
                    {
                        "type": "tool_use",
                        "id": "t1",
                        "name": "Bash",
                        "input": {"command": "pytest tests/test_refunds.py"},
                    }
                ],
            },
        ),
        rec("progress", data={"type": "hook_progress", "hookName": "PreToolUse"}),
        rec("progress", data={"type": "bash_progress", "output": "running"}),
        rec(
            "user",
            message={
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "t1", "content": test_output}],
            },
        ),
        rec("attachment", attachment={"type": "hook_success", "content": "formatter ran\n" * 30}),
        rec("user", message={"role": "user", "content": f"good. {QUOTE}."}),
        rec("assistant", message={"role": "assistant", "content": [{"type": "text", "text": "Understood."}]}),
    ]


@pytest.fixture
def noisy(tui_setup):
    cfg, ledger, ids = tui_setup
    path = cfg.transcripts / PAY / f"{SESSION}.jsonl"
    path.write_bytes(b"".join(noisy_transcript()))
    spec = (
        PAY,
        SESSION,
        "Never run the refund migrations by hand",
        "The deploy job records the version.",
        QUOTE,
        "2026-11-28T11:00:00Z",
        {},
    )
    [cid] = add_candidates(cfg, ledger, [spec])
    return cfg, ledger, [*ids, cid], cid


def test_bookkeeping_and_long_tool_output_fold_to_one_line_each() -> None:
    records = [raw_record(n, raw) for n, raw in enumerate(noisy_transcript(), start=1)]
    folded = render_records(records, 7, QUOTE)
    assert len(folded) == 8  # one line of text per record
    assert all("\n" not in t.plain for t in folded)
    tool = next(t.plain for t in folded if "[untrusted]" in t.plain)
    assert "test_case_0 PASSED" in tool and "⋯60 lines (z)" in tool
    assert any("(progress · hook_progress)" in t.plain for t in folded)
    assert any("(attachment · hook_success)" in t.plain for t in folded)
    full = render_records(records, 7, QUOTE, fold=False)
    assert "test_case_59 PASSED" in "\n".join(t.plain for t in full)


def test_the_quote_is_highlighted_on_its_marked_line() -> None:
    records = [raw_record(n, raw) for n, raw in enumerate(noisy_transcript(), start=1)]
    line = next(t for t in render_records(records, 7, QUOTE) if t.plain.startswith("▶"))
    start = line.plain.index(QUOTE)
    assert any(
        span.start <= start and span.end >= start + len(QUOTE) and "yellow" in str(span.style)
        for span in line.spans
    )


def test_times_are_in_the_local_time_zone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "Asia/Kolkata")
    time.tzset()
    try:
        assert local_time("2026-11-28T10:00:00.000Z") == "15:30:00"
        assert local_time("not a time") == "not a time"
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()


async def test_at_80x24_the_pane_opens_on_the_claim_and_quote_and_z_brings_the_unfolded_record(noisy) -> None:
    """The pane opened scrolled to the evidence, so claim, why and how needed Ctrl+U: it opens at its
    top now, claim, why, how and the quote in sight; ``z`` unfolds and brings the quoted record in."""
    cfg, ledger, ids, cid = noisy
    async with open_queue(cfg, ledger, len(ids), at=cid, size=(80, 24)) as (app, pilot, table):
        view = app.query_one(CandidateView)
        summary = view.query_one("#summary")
        await wait_for(pilot, lambda: "Never run the refund" in "\n".join(lines(summary)))
        assert view.scroll_offset.y == 0
        assert view.content_region.y <= summary.region.y
        assert summary.region.bottom <= view.content_region.bottom  # the whole summary is in sight
        shown = " ".join(" ".join(lines(summary)).split())
        assert "Never run the refund migrations by hand" in shown and f"“{QUOTE}”" in shown
        assert "Why" in shown and "How" in shown
        shown = "\n".join(lines(view.query_one("#evidence")))
        assert "[untrusted] ⋯" in shown and "test_case_30" not in shown  # folded, however narrow the pane

        def quote_in_sight() -> bool:
            span = view.quote_span()
            return span is not None and 0 <= span[0] - view.scroll_offset.y <= view.size.height - span[1]

        await pilot.press("z")
        await wait_for(pilot, lambda: "_case_59 PASSED" in "\n".join(lines(view.query_one("#evidence"))))
        await wait_for(pilot, quote_in_sight)
        assert "payments-api" in "\n".join(lines(view.query_one("#meta")))


def test_the_project_name_comes_from_the_records_cwd(tmp_path: Path) -> None:
    from dreamtui.core.ingest.project_name import project_name

    folder = tmp_path / "-home-kim-src-my-app"
    folder.mkdir()
    (folder / "s.jsonl").write_bytes(
        rec("user", cwd="/home/kim/src/my-app", message={"role": "user", "content": "x"})
    )
    assert project_name(tmp_path, "-home-kim-src-my-app") == "my-app"
    assert project_name(tmp_path, "-srv-other") == "srv-other"  # no transcript: the folder, readable


def test_the_live_panel_shows_local_times(tui_setup, monkeypatch: pytest.MonkeyPatch) -> None:
    from dreamtui.tui.app import DreamApp

    cfg, ledger, _ids = tui_setup
    path = cfg.transcripts / PAY / f"{SESSION}.jsonl"
    path.write_bytes(rec("user", message={"role": "user", "content": "hello there"}))
    monkeypatch.setenv("TZ", "Asia/Kolkata")
    time.tzset()
    try:
        [line] = DreamApp(cfg, ledger, watch=False).live_tail.read_new_lines(path)
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()
    assert line.plain.startswith("15:30:00 payments-api person")
