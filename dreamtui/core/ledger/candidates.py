"""The ``candidates`` and ``candidate_edits`` tables: a proposal's row, its status, a person's edits."""

from __future__ import annotations

import json
import sqlite3
from typing import TYPE_CHECKING, Any

from dreamtui.core.models import Candidate, Match, QueueRow

if TYPE_CHECKING:
    from dreamtui.core.ledger.db import Ledger


def get(ledger: Ledger, cid: str) -> Candidate | None:
    """One candidate by id."""
    row = ledger.one("SELECT * FROM candidates WHERE id = ?", (cid,))
    return row_to_candidate(row) if row else None


def listed(ledger: Ledger, status: str | None = None, project: str | None = None) -> list[Candidate]:
    """Candidates, newest first, optionally filtered by status and project."""
    sql = "SELECT * FROM candidates"
    where, params = [], []
    if status:
        where.append("status = ?")
        params.append(status)
    if project:
        where.append("project = ?")
        params.append(project)
    if where:
        sql += " WHERE " + " AND ".join(where)
    sql += " ORDER BY created_at DESC, id"
    return [row_to_candidate(r) for r in ledger.query(sql, tuple(params))]


def put(ledger: Ledger, cand: Candidate) -> None:
    """Insert or replace a candidate row (joins the caller's transaction)."""
    data = candidate_to_row(cand)
    cols = ", ".join(data)
    marks = ", ".join("?" for _ in data)
    updates = ", ".join(f"{k} = excluded.{k}" for k in data if k != "id")
    ledger.run(
        f"INSERT INTO candidates ({cols}) VALUES ({marks}) ON CONFLICT(id) DO UPDATE SET {updates}",
        tuple(data.values()),
    )


def queue_rows(ledger: Ledger) -> list[QueueRow]:
    """Every pending candidate, newest first, as light rows (no JSON decoding of matches)."""
    rows = ledger.query(
        "SELECT id, project, session, type, claim, provenance, duplicate_of, corroborated, secrets, "
        "created_at, transcript FROM candidates WHERE status = 'pending' ORDER BY created_at DESC, id"
    )
    return [
        QueueRow(
            r["id"],
            r["project"],
            r["session"],
            r["type"],
            r["claim"],
            r["provenance"],
            bool(r["duplicate_of"]),
            int(r["corroborated"] or 0),
            bool(r["secrets"]) and r["secrets"] != "[]",
            r["created_at"] or "",
            r["transcript"] or "",
        )
        for r in rows
    ]


def pending_count(ledger: Ledger) -> int:
    """How many candidates wait for a decision."""
    row = ledger.one("SELECT COUNT(*) FROM candidates WHERE status = 'pending'")
    return int(row[0]) if row else 0


def pending_by_session(ledger: Ledger) -> dict[str, int]:
    """Pending candidates per session."""
    return {
        str(r["session"]): int(r["n"])
        for r in ledger.query(
            "SELECT session, COUNT(*) AS n FROM candidates WHERE status = 'pending' GROUP BY session"
        )
    }


def status_counts(ledger: Ledger) -> dict[str, int]:
    """How many candidates have each status."""
    return {
        str(r[0]): int(r[1]) for r in ledger.query("SELECT status, COUNT(*) FROM candidates GROUP BY status")
    }


def of_day(ledger: Ledger, day: str) -> list[Candidate]:
    """Every candidate that survived the gate (not dropped) from the cycle(s) of ``day`` (YYYY-MM-DD)
    or created that day, oldest first."""
    rows = ledger.query(
        "SELECT * FROM candidates WHERE status != 'dropped' AND ("
        " cycle_id IN (SELECT id FROM dream_cycles WHERE date = ?) OR substr(created_at, 1, 10) = ?)"
        " ORDER BY created_at, id",
        (day, day),
    )
    return [row_to_candidate(r) for r in rows]


def unaccepted_texts(ledger: Ledger, sessions: list[str]) -> list[tuple[str, str]]:
    """(quote, claim) of every proposal of ``sessions`` that is not accepted."""
    if not sessions:
        return []
    marks = ", ".join("?" for _ in sessions)
    rows = ledger.query(
        f"SELECT quote, claim FROM candidates WHERE status != 'accepted' AND session IN ({marks})",
        tuple(sessions),
    )
    return [(r["quote"] or "", r["claim"] or "") for r in rows]


def set_status(ledger: Ledger, cid: str, status: str, now: str) -> None:
    """Set a candidate's status (joins the caller's transaction)."""
    ledger.run("UPDATE candidates SET status = ?, updated_at = ? WHERE id = ?", (status, now, cid))


def set_placement(ledger: Ledger, cid: str, kind: str, scope: str, now: str) -> None:
    """Set a candidate's memory type and scope."""
    ledger.run(
        "UPDATE candidates SET type = ?, scope = ?, updated_at = ? WHERE id = ?", (kind, scope, now, cid)
    )


def corroborate(ledger: Ledger, target: str, sessions: int, now: str) -> None:
    """Add ``sessions`` to a pending candidate's ``corroborated`` count."""
    ledger.run(
        "UPDATE candidates SET corroborated = corroborated + ?, updated_at = ? "
        "WHERE id = ? AND status = 'pending'",
        (sessions, now, target),
    )


def repeated_in_session(ledger: Ledger, target: str, session: str, project: str | None = None) -> bool:
    """A repeat of ``target`` from ``session`` (of ``project``, when given: two projects' sessions may
    share a name) is already stored (so that session corroborated it)."""
    if project is None:
        row = ledger.one(
            "SELECT 1 FROM candidates WHERE duplicate_of = ? AND session = ? "
            "AND drop_reason = 'duplicate-pending' LIMIT 1",
            (target, session),
        )
    else:
        row = ledger.one(
            "SELECT 1 FROM candidates WHERE duplicate_of = ? AND session = ? AND project = ? "
            "AND drop_reason = 'duplicate-pending' LIMIT 1",
            (target, session, project),
        )
    return row is not None


# -- candidate_edits: the text as extracted, once a person edited it -------------------------------


def is_edited(ledger: Ledger, cid: str) -> bool:
    """A person edited this candidate's text."""
    return ledger.one("SELECT 1 FROM candidate_edits WHERE candidate_id = ?", (cid,)) is not None


def original_text(ledger: Ledger, cid: str) -> dict[str, str] | None:
    """The claim, why and how_to_apply as extracted, for a candidate a person edited (else ``None``)."""
    row = ledger.one("SELECT original FROM candidate_edits WHERE candidate_id = ?", (cid,))
    if row is None:
        return None
    original: dict[str, str] = json.loads(row["original"])
    return original


def keep_edit(ledger: Ledger, cand: Candidate, claim: str, why: str, how: str, now: str) -> None:
    """Store a person's edited text in the candidate and keep the text as extracted in
    ``candidate_edits`` (the first edit's original stays), in one transaction."""
    with ledger.write():
        ledger.run(
            "INSERT INTO candidate_edits (candidate_id, original, edited_at) VALUES (?, ?, ?) "
            "ON CONFLICT(candidate_id) DO UPDATE SET edited_at = excluded.edited_at",
            (
                cand.id,
                json.dumps({"claim": cand.claim, "why": cand.why, "how_to_apply": cand.how_to_apply}),
                now,
            ),
        )
        ledger.run(
            "UPDATE candidates SET claim = ?, why = ?, how_to_apply = ?, updated_at = ? WHERE id = ?",
            (claim, why, how, now, cand.id),
        )


# -- row <-> Candidate -------------------------------------------------------------------------------


def candidate_to_row(cand: Candidate) -> dict[str, Any]:
    """A Candidate as a ``candidates`` row."""
    return {
        "id": cand.id,
        "session": cand.session,
        "project": cand.project,
        "transcript": cand.transcript,
        "claim": cand.claim,
        "why": cand.why,
        "how_to_apply": cand.how_to_apply,
        "type": cand.type,
        "scope": cand.scope,
        "quote": cand.quote,
        "extractor": cand.extractor,
        "model": cand.model,
        "status": cand.status,
        "provenance": cand.provenance,
        "matches": json.dumps([m.to_json() for m in cand.matches], ensure_ascii=False),
        "duplicate_of": cand.duplicate_of,
        "duplicate_kind": cand.duplicate_kind,
        "duplicate_score": cand.duplicate_score,
        "secrets": json.dumps(cand.secrets),
        "corroborated": cand.corroborated,
        "drop_reason": cand.drop_reason,
        "cycle_id": cand.cycle_id,
        "created_at": cand.created_at or "",
        "updated_at": cand.updated_at or cand.created_at or "",
        "duplicate_judged": cand.duplicate_judged,
        "duplicate_reason": cand.duplicate_reason,
    }


def _optional(row: sqlite3.Row, column: str) -> Any:
    """A column added later (:data:`ADDED_COLUMNS`), None when a query did not select it."""
    return row[column] if column in row.keys() else None  # noqa: SIM118 (``in row`` tests values)


def row_to_candidate(row: sqlite3.Row) -> Candidate:
    """A ``candidates`` row as a Candidate."""
    matches = [Match(**m) for m in json.loads(row["matches"] or "[]")]
    return Candidate(
        id=row["id"],
        session=row["session"],
        project=row["project"],
        transcript=row["transcript"],
        claim=row["claim"],
        why=row["why"],
        how_to_apply=row["how_to_apply"],
        type=row["type"],
        scope=row["scope"],
        quote=row["quote"],
        extractor=row["extractor"],
        model=row["model"],
        status=row["status"],
        provenance=row["provenance"],
        matches=matches,
        duplicate_of=row["duplicate_of"],
        duplicate_kind=row["duplicate_kind"],
        duplicate_score=row["duplicate_score"],
        secrets=json.loads(row["secrets"] or "[]"),
        corroborated=row["corroborated"],
        drop_reason=row["drop_reason"],
        cycle_id=row["cycle_id"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
        duplicate_judged=_optional(row, "duplicate_judged"),
        duplicate_reason=_optional(row, "duplicate_reason"),
    )
