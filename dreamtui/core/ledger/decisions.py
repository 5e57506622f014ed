"""The ``decisions`` table: every accept, reject, skip and undo, who made it, and what it committed."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from dreamtui.core.ledger.rows import from_row
from dreamtui.core.models import Candidate

if TYPE_CHECKING:
    from dreamtui.core.ledger.db import Ledger


@dataclass(slots=True)
class Decision:
    """One row of ``decisions``."""

    id: int
    candidate_id: str
    action: str
    decided_by: str = "person"
    category: str | None = None
    reason: str | None = None
    commit_sha: str | None = None
    memory_path: str | None = None
    extractor: str | None = None
    model: str | None = None
    type: str | None = None
    undone: int = 0
    decided_at: str = ""


@dataclass(slots=True)
class HumanDecision:
    """An accept or reject a person made that still stands, with the extractor and model that proposed it
    (the decision's, else the candidate's) and the memory type."""

    id: int
    candidate_id: str | None
    action: str
    decided_at: str
    extractor: str | None
    model: str | None
    category: str | None = None
    type: str | None = None
    transcript: str | None = None
    """The transcript the proposal was made from (its agent's session; ``None`` when the ledger no
    longer holds the candidate)."""


@dataclass(slots=True)
class AutoDecision:
    """An auto-written accept, with the person's after-the-fact review of it (``review``: the action of
    their latest standing accept or reject after it, None while unreviewed)."""

    id: int
    candidate_id: str
    commit_sha: str | None
    memory_path: str | None
    decided_at: str
    undone: int
    extractor: str | None
    model: str | None
    claim: str
    review: str | None = None
    reviewed_at: str | None = None


def record(
    ledger: Ledger,
    cand: Candidate,
    action: str,
    decided_by: str,
    now: str,
    *,
    category: str | None = None,
    reason: str | None = None,
    commit_sha: str | None = None,
    memory_path: str | None = None,
) -> int:
    """Record a decision about ``cand`` (with its extractor, model and type); the new row's id."""
    return ledger.insert(
        "INSERT INTO decisions (candidate_id, action, decided_by, category, reason, commit_sha, memory_path, "
        "extractor, model, type, decided_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            cand.id,
            action,
            decided_by,
            category,
            reason,
            commit_sha,
            memory_path,
            cand.extractor,
            cand.model,
            cand.type,
            now,
        ),
    )


def live_accept(ledger: Ledger, cid: str) -> Decision | None:
    """The latest accept of ``cid`` that was not undone."""
    row = ledger.one(
        "SELECT * FROM decisions WHERE candidate_id = ? AND action = 'accept' AND undone = 0 "
        "ORDER BY id DESC LIMIT 1",
        (cid,),
    )
    return from_row(Decision, row) if row else None


def live_accept_of(ledger: Ledger, ref: str) -> Decision | None:
    """The latest accept not undone whose memory path or candidate id is ``ref``."""
    row = ledger.one(
        "SELECT * FROM decisions WHERE action = 'accept' AND undone = 0 "
        "AND (memory_path = ? OR candidate_id = ?) ORDER BY id DESC LIMIT 1",
        (ref, ref),
    )
    return from_row(Decision, row) if row else None


def last_undoable(ledger: Ledger) -> Decision | None:
    """The latest accept, reject or skip not yet undone."""
    row = ledger.one(
        "SELECT * FROM decisions WHERE action IN ('accept', 'reject', 'skip') AND undone = 0 "
        "ORDER BY id DESC LIMIT 1"
    )
    return from_row(Decision, row) if row else None


def mark_undone(ledger: Ledger, decision_id: int) -> None:
    """Mark one decision undone."""
    ledger.run("UPDATE decisions SET undone = 1 WHERE id = ?", (decision_id,))


def mark_accepts_undone(ledger: Ledger, cid: str) -> None:
    """Mark every accept of ``cid`` undone."""
    ledger.run("UPDATE decisions SET undone = 1 WHERE candidate_id = ? AND action = 'accept'", (cid,))


def set_commit(ledger: Ledger, decision_id: int, sha: str) -> None:
    """Point a decision at the commit that now holds it."""
    ledger.run("UPDATE decisions SET commit_sha = ? WHERE id = ?", (sha, decision_id))


def commits_of(ledger: Ledger, cid: str) -> set[str]:
    """Every commit a decision about ``cid`` names."""
    return {
        r["commit_sha"]
        for r in ledger.query(
            "SELECT commit_sha FROM decisions WHERE candidate_id = ? AND commit_sha IS NOT NULL", (cid,)
        )
    }


def live_memory_paths(ledger: Ledger) -> list[str]:
    """The memory files of every accept not undone (the topic files dreamtui wrote)."""
    return [
        r["memory_path"]
        for r in ledger.query(
            "SELECT DISTINCT memory_path FROM decisions WHERE action = 'accept' AND undone = 0"
            " AND memory_path IS NOT NULL ORDER BY memory_path"
        )
    ]


def live_accept_commits(ledger: Ledger) -> list[str]:
    """The commits of every accept not undone."""
    return [
        r["commit_sha"]
        for r in ledger.query(
            "SELECT commit_sha FROM decisions WHERE action = 'accept' AND undone = 0 AND commit_sha IS NOT NULL"
        )
    ]


def skipped_ids(ledger: Ledger) -> list[str]:
    """Pending candidates with a skip that was not undone, in the order they were skipped."""
    rows = ledger.query(
        "SELECT d.candidate_id, MAX(d.id) AS last FROM decisions d JOIN candidates c ON c.id = d.candidate_id "
        "WHERE d.action = 'skip' AND d.undone = 0 AND c.status = 'pending' GROUP BY d.candidate_id ORDER BY last"
    )
    return [str(r["candidate_id"]) for r in rows]


def projects_accepted_under(ledger: Ledger, folder: str) -> set[str]:
    """The projects of the candidates whose accepted memory lies under ``folder`` (a path prefix)."""
    like = folder.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    rows = ledger.query(
        "SELECT DISTINCT c.project FROM decisions d JOIN candidates c ON c.id = d.candidate_id "
        "WHERE d.action = 'accept' AND d.memory_path LIKE ? ESCAPE '\\'",
        (f"{like}/%",),
    )
    return {r["project"] or "" for r in rows}


# -- what promotion and the statistics count ------------------------------------------------------

_HUMAN = """
SELECT d.id, d.candidate_id, d.action, d.decided_at,
       COALESCE(d.extractor, c.extractor) AS extractor,
       COALESCE(d.model, c.model) AS model, c.transcript
FROM decisions d JOIN candidates c ON c.id = d.candidate_id
WHERE d.decided_by = 'person' AND d.action IN ('accept', 'reject') AND d.undone = 0
"""


def human_decisions(ledger: Ledger, pair: tuple[str, str | None] | None = None) -> list[HumanDecision]:
    """Human accepts and rejects that still stand (not undone) of candidates the ledger holds, oldest
    first, optionally of one ``(extractor, model)`` pair."""
    sql = f"SELECT * FROM ({_HUMAN})"
    params: tuple[str | None, ...] = ()
    if pair is not None:
        sql += " WHERE extractor = ? AND model IS ?"
        params = pair
    return [from_row(HumanDecision, r) for r in ledger.query(sql + " ORDER BY decided_at, id", params)]


def decision_pairs(ledger: Ledger) -> list[tuple[str, str | None, int]]:
    """Every (extractor, model, how many) with human decisions, the most decided first."""
    rows = ledger.query(
        f"SELECT extractor, model, COUNT(*) AS n, MAX(decided_at) AS latest FROM ({_HUMAN}) "
        "GROUP BY extractor, model ORDER BY n DESC, latest DESC"
    )
    return [(r["extractor"], r["model"], int(r["n"])) for r in rows]


def person_decisions(ledger: Ledger) -> list[HumanDecision]:
    """Every accept and reject a person made, not undone, oldest first, with its category and the
    memory type (also of candidates the ledger no longer holds)."""
    rows = ledger.query("""
        SELECT d.id, d.candidate_id, d.action, d.category, d.decided_at,
               COALESCE(d.extractor, c.extractor) AS extractor,
               COALESCE(d.model, c.model) AS model,
               COALESCE(d.type, c.type) AS type, c.transcript
        FROM decisions d LEFT JOIN candidates c ON c.id = d.candidate_id
        WHERE d.decided_by = 'person' AND d.undone = 0 AND d.action IN ('accept', 'reject')
        ORDER BY d.decided_at, d.id""")
    return [from_row(HumanDecision, r) for r in rows]


def standing_counts(ledger: Ledger) -> dict[tuple[str, str], int]:
    """How many decisions not undone there are per (action, decided_by)."""
    rows = ledger.query(
        "SELECT action, decided_by, COUNT(*) AS n FROM decisions WHERE undone = 0 GROUP BY action, decided_by"
    )
    return {(str(r["action"]), str(r["decided_by"])): int(r["n"]) for r in rows}


def undone_count(ledger: Ledger) -> int:
    """How many decisions were undone."""
    row = ledger.one("SELECT COUNT(*) FROM decisions WHERE undone = 1")
    return int(row[0]) if row else 0


_AUTO = """
SELECT d.id, d.candidate_id, d.commit_sha, d.memory_path, d.decided_at, d.undone,
       COALESCE(d.extractor, c.extractor) AS extractor, COALESCE(d.model, c.model) AS model, c.claim,
       (SELECT r.action FROM decisions r WHERE r.candidate_id = d.candidate_id AND r.id > d.id
          AND r.decided_by = 'person' AND r.action IN ('accept', 'reject') AND r.undone = 0
          ORDER BY r.id DESC LIMIT 1) AS review,
       (SELECT r.decided_at FROM decisions r WHERE r.candidate_id = d.candidate_id AND r.id > d.id
          AND r.decided_by = 'person' AND r.action IN ('accept', 'reject') AND r.undone = 0
          ORDER BY r.id DESC LIMIT 1) AS reviewed_at
FROM decisions d JOIN candidates c ON c.id = d.candidate_id
WHERE d.decided_by = 'auto' AND d.action = 'accept'
"""


def auto_decisions(
    ledger: Ledger, *, since: str | None = None, unreviewed_only: bool = False
) -> list[AutoDecision]:
    """Auto-written accepts, newest first, each with its after-the-fact review (if any)."""
    sql = f"SELECT * FROM ({_AUTO})"
    where, params = [], []
    if since:
        where.append("decided_at >= ?")
        params.append(since)
    if unreviewed_only:
        where.append("review IS NULL AND undone = 0")
    if where:
        sql += " WHERE " + " AND ".join(where)
    return [
        from_row(AutoDecision, r)
        for r in ledger.query(sql + " ORDER BY decided_at DESC, id DESC", tuple(params))
    ]


def auto_decision(ledger: Ledger, cid: str) -> AutoDecision | None:
    """The latest auto-written accept of ``cid``."""
    row = ledger.one(f"SELECT * FROM ({_AUTO}) WHERE candidate_id = ? ORDER BY id DESC LIMIT 1", (cid,))
    return from_row(AutoDecision, row) if row else None
