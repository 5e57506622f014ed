"""What a person reads about a cycle that is still running (issue 32 §6): the Cycles screen's waking
text says how long it has run, not "Took 0.0 s."; the Sessions screen does not offer d while it runs;
a cycle whose sessions failed says how many of how many, grouped by cause, one line each."""

from __future__ import annotations

import pytest

from dreamtui.core.dream.plan import DreamPlan
from dreamtui.core.dream.waking import waking_message
from dreamtui.core.ledger.cycle_stats import CycleStats
from dreamtui.core.ledger.cycles import CycleRecord
from dreamtui.tui.progress import dream_hint


def test_a_running_cycle_says_how_long_it_has_run(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DREAMTUI_NOW", "2026-03-10T09:01:15Z")
    running = CycleRecord(1, "*", "2026-03-10", "running", "2026-03-10T09:00:00Z")
    text = waking_message(running)
    assert "Running for 75 s so far." in text and "Took" not in text
    done = CycleRecord(
        2, "*", "2026-03-10", "completed", "2026-03-10T09:00:00Z", stats=CycleStats(seconds=930.2)
    )
    assert "Took 930.2 s." in waking_message(done)


def test_sessions_do_not_offer_d_while_a_cycle_runs() -> None:
    plan = DreamPlan("full", "2026-03-10")
    assert dream_hint(plan) == "d runs today's full dream cycle"
    hint = dream_hint(plan, running=True)
    assert "d runs" not in hint and "runs now" in hint


def test_failed_sessions_are_told_grouped_by_cause_one_line_each() -> None:
    stats = CycleStats(branches=8)
    url = "http://127.0.0.1:8080/v1"
    for n in range(7):
        error = (
            f"the model's answer is not JSON ('Sure! Here are {n} lessons') (model m at {url}); nothing was kept from it"
            if n < 5
            else f"cannot reach the model server at {url} (after 0 retries: [Errno 111] Connection refused): start it"
        )
        stats.count_failure(f"{n}e55a0a0-1111-4222-8333-444455556666", error)
    record = CycleRecord(3, "*", "2026-03-10", "completed", "2026-03-10T09:00:00Z", stats=stats)
    text = waking_message(record)
    assert (
        f"Failed: 7 of 8 session(s), tried again next dream: the model's answer is not JSON (5); cannot reach the model server at {url} (2)."
        in text
    )
    assert sum(1 for line in text.splitlines() if line.startswith("  ") and "e55a0a0: " in line) == 7
    assert stats.failure_summary().startswith("7 sessions: the model's answer is not JSON (5)")
