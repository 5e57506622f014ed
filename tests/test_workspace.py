"""The service layer both front ends use: a Workspace owns its ledger and returns typed results."""

from __future__ import annotations

from pathlib import Path

import pytest

from dreamtui.core.config import Config
from dreamtui.core.ledger import Ledger
from dreamtui.core.models import Candidate, Match, QueueRow
from dreamtui.services import Banner, DecisionResult, SessionRow, Workspace


@pytest.fixture(autouse=True)
def _git(git_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DREAMTUI_NOW", "2026-02-03T09:15:00Z")


def _pending(ledger: Ledger, n: int, **kw: object) -> Candidate:
    fields: dict[str, object] = dict(
        id=f"w{n:011d}",
        session="sess-7",
        project="-home-me-shop",
        transcript="/t/sess-7.jsonl",
        claim=f"Run the migrations before the tests {n}",
        why="the schema drifts otherwise",
        how_to_apply="make migrate && pytest",
        type="feedback",
        scope="global",
        quote="please always run migrations first",
        extractor="heuristic",
        model=None,
        provenance="person",
        matches=[Match("/t/sess-7.jsonl", 3, "u3", None, "person")],
        created_at=f"2026-02-03T08:0{n}:00Z",
    )
    fields.update(kw)
    cand = Candidate(**fields)  # type: ignore[arg-type]
    ledger.put_candidate(cand)
    return cand


def test_the_workspace_opens_and_closes_its_own_ledger(config: Config) -> None:
    with Workspace(config) as ws:
        _pending(ws.ledger, 1)
        assert ws.ledger.pending_count() == 1
        conn = ws.ledger.conn
    with pytest.raises(Exception, match="closed"):
        conn.execute("SELECT 1")


def test_a_ledger_passed_in_stays_open(config: Config, ledger: Ledger) -> None:
    with Workspace(config, ledger) as ws:
        _pending(ws.ledger, 1)
    assert ledger.pending_count() == 1


def test_queue_rows_status_and_sessions_are_typed(config: Config, ledger: Ledger) -> None:
    ws = Workspace(config, ledger)
    _pending(ledger, 1)
    _pending(ledger, 2, secrets=["aws-key"])
    rows = ws.queue_rows()
    assert all(isinstance(r, QueueRow) for r in rows)
    assert [r.id for r in rows] == ["w00000000002", "w00000000001"]  # newest first
    assert [r.secret for r in rows] == [True, False]
    status = ws.status()
    assert status.pending == 2 and status.max_lines == 200 and status.fraction == 0
    assert all(isinstance(b, Banner) for b in status.banners)
    sessions = ws.sessions()
    assert sessions == [] or all(isinstance(s, SessionRow) for s in sessions)


def test_decisions_return_what_they_did(config: Config, ledger: Ledger) -> None:
    ws = Workspace(config, ledger)
    _pending(ledger, 1)
    _pending(ledger, 2)
    accepted = ws.accept("w00000000001")
    assert isinstance(accepted, DecisionResult) and accepted.action == "accept"
    assert accepted.path and (config.memory / accepted.path).is_file()
    assert accepted.commit_sha and accepted.summary.startswith(f"accepted → {accepted.path}")
    ws.skip("w00000000002")
    assert ws.skipped_ids() == ["w00000000002"]
    undone = ws.undo()
    assert (undone.action, undone.candidate_id) == ("skip", "w00000000002")
    assert ws.reject("w00000000002", "not_a_lesson", "too vague").action == "reject"
    assert [r.id for r in ws.queue_rows()] == []
