"""Candidates put straight into the ledger (no extractor, no gate) for tests of what comes after."""

from __future__ import annotations

from dreamtui.core.ledger import Ledger
from dreamtui.core.models import Candidate, Match


def make(ledger: Ledger, n: int, created: str = "2026-04-01T09:00:00Z", **kw: object) -> Candidate:
    fields: dict[str, object] = dict(
        id=f"r{n:03d}",
        session=f"sess-{n}",
        project="p",
        transcript="t",
        claim=f"Lesson number {n}",
        why=f"why {n}",
        how_to_apply=f"how {n}",
        type="feedback",
        scope="global",
        quote=f"the quote {n}",
        extractor="heuristic",
        model=None,
        provenance="person",
        matches=[Match("t", 40 + n, None, None, "person")],
        created_at=created,
    )
    fields.update(kw)
    cand = Candidate(**fields)  # type: ignore[arg-type]
    ledger.put_candidate(cand)
    return cand


def refactor_lesson(i: int) -> Candidate:
    """A pending lesson of a refactoring session (global or project scope by turns), not yet in the ledger."""
    return Candidate(
        id=f"crash{i:03d}",
        session="sess-1",
        project="-home-me-proj",
        transcript="/t/sess-1.jsonl",
        claim=f"Prefer small commits when refactoring module {i}",
        why="reviews are easier",
        how_to_apply="split refactors from behaviour changes",
        type="feedback",
        scope="project" if i % 2 else "global",
        quote="keep the commits small",
        extractor="heuristic",
        model=None,
        provenance="person",
        matches=[Match("/t/sess-1.jsonl", 7, "u7", None, "person")],
        created_at="2026-01-05T10:00:00Z",
    )


def make_pending(ledger: Ledger, n: int = 1, **kw: object) -> Candidate:
    """Put a pending candidate in the ledger."""
    fields: dict[str, object] = dict(
        id=f"c{n:011d}",
        session="sess-42",
        project="-home-me-shop",
        transcript="/t/sess-42.jsonl",
        claim=f"Run the migrations before the tests {n}",
        why="the schema drifts otherwise",
        how_to_apply="make migrate && pytest",
        type="feedback",
        scope="global",
        quote="please always run migrations first",
        extractor="anthropic",
        model="claude-x",
        provenance="person",
        matches=[Match("/t/sess-42.jsonl", 17, "u17", None, "person")],
        created_at="2026-02-03T08:00:00Z",
    )
    fields.update(kw)
    cand = Candidate(**fields)  # type: ignore[arg-type]
    ledger.put_candidate(cand)
    return cand
