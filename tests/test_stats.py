"""Decision statistics: human decisions only, undone ones excluded."""

from __future__ import annotations

import pytest

from dreamtui.core.clock import now_iso
from dreamtui.core.dream.stats import compute_stats, format_stats
from dreamtui.core.ledger import Ledger
from dreamtui.core.ledger import decisions as decision_rows
from dreamtui.core.memory import decisions
from dreamtui.core.models import Candidate


def make(
    ledger: Ledger, n: int, extractor: str = "heuristic", model: str | None = None, type_: str = "feedback"
) -> Candidate:
    cand = Candidate(
        id=f"s{n:03d}",
        session="s",
        project="p",
        transcript="t",
        claim=f"claim {n}",
        why="",
        how_to_apply="",
        type=type_,
        scope="global",
        quote="q",
        extractor=extractor,
        model=model,
        created_at="2026-03-01T00:00:00Z",
    )
    ledger.put_candidate(cand)
    return cand


def _decide(
    ledger: Ledger, cand: Candidate, action: str, by: str = "person", category: str | None = None
) -> None:
    decision_rows.record(
        ledger,
        cand,
        action,
        by,
        now_iso(),
        category=category,
        commit_sha="f" * 40 if action == "accept" else None,
    )


def test_empty_ledger(ledger: Ledger) -> None:
    stats = compute_stats(ledger)
    assert (stats["accepted"], stats["rejected"], stats["accept_rate"]) == (0, 0, None)
    assert "accept rate —" in format_stats(stats)


def test_rates_by_pair_type_week_and_reasons(ledger: Ledger, monkeypatch: pytest.MonkeyPatch) -> None:
    plan = [  # (n, extractor, model, type, action, category, when, by)
        (1, "anthropic", "sonnet", "feedback", "accept", None, "2026-03-02T10:00:00Z", "person"),
        (2, "anthropic", "sonnet", "feedback", "accept", None, "2026-03-03T10:00:00Z", "person"),
        (3, "anthropic", "sonnet", "project", "reject", "wrong", "2026-03-04T10:00:00Z", "person"),
        (4, "heuristic", None, "project", "reject", "not a lesson", "2026-03-10T10:00:00Z", "person"),
        (5, "heuristic", None, "project", "reject", "not a lesson", "2026-03-10T11:00:00Z", "person"),
        (6, "heuristic", None, "user", "accept", None, "2026-03-11T10:00:00Z", "auto"),  # not human
        (7, "heuristic", None, "user", "skip", None, "2026-03-11T10:00:00Z", "person"),  # not a verdict
    ]
    for n, ext, model, kind, action, cat, when, by in plan:
        monkeypatch.setenv("DREAMTUI_NOW", when)
        _decide(ledger, make(ledger, n, ext, model, kind), action, by, cat)
    stats = compute_stats(ledger)
    assert (stats["accepted"], stats["rejected"], stats["decisions"]) == (2, 3, 5)
    assert stats["accept_rate"] == 0.4
    assert stats["by_extractor"]["anthropic/sonnet"]["accept_rate"] == pytest.approx(2 / 3, abs=1e-4)
    assert stats["by_extractor"]["heuristic"] == {
        "accepted": 0,
        "rejected": 2,
        "decisions": 2,
        "accept_rate": 0.0,
    }
    assert stats["by_type"]["feedback"]["accepted"] == 2 and "user" not in stats["by_type"]
    assert list(stats["by_week"]) == ["2026-W10", "2026-W11"]
    assert stats["by_week"]["2026-W10"]["decisions"] == 3
    assert stats["rejection_reasons"] == {"not a lesson": 2, "wrong": 1}
    assert (stats["skipped"], stats["auto_accepted"], stats["decision_days"]) == (1, 1, 4)
    text = format_stats(stats)
    assert "accept rate 40%" in text and "anthropic/sonnet: 2/3 accepted (67%)" in text


def test_undone_decisions_do_not_count(config, ledger: Ledger, git_home) -> None:
    a, b = make(ledger, 1), make(ledger, 2)
    decisions.accept(config, ledger, a.id)
    decisions.reject(ledger, b.id, "wrong", "nope")
    assert compute_stats(ledger)["decisions"] == 2
    decisions.undo_last(config, ledger)  # the reject
    decisions.undo_last(config, ledger)  # the accept (a revert commit)
    stats = compute_stats(ledger)
    assert (stats["accepted"], stats["rejected"], stats["accept_rate"], stats["undone"]) == (0, 0, None, 2)
    assert stats["candidates"]["pending"] == 2
