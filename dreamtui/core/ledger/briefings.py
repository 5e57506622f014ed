"""The ``briefings`` table: each proposed version of ``briefing.md`` and what became of it."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from dreamtui.core.models import Jsonable

if TYPE_CHECKING:
    from dreamtui.core.ledger.db import Ledger


@dataclass(slots=True)
class BriefingProposal(Jsonable):
    """One row of ``briefings``: a built version of ``briefing.md`` and what became of it."""

    id: int
    text: str
    sources: list[dict[str, str]]
    status: str
    cycle_id: int | None = None
    reason: str | None = None
    decided_by: str | None = None
    commit_sha: str | None = None
    reviewed_at: str | None = None
    created_at: str = ""
    decided_at: str | None = None

    @property
    def awaits_review(self) -> bool:
        """Pending, or written by auto-write and not yet reviewed after the fact."""
        return self.status == "pending" or (
            self.status == "accepted" and self.decided_by == "auto" and self.reviewed_at is None
        )

    JSON_KEYS = (
        "id",
        "status",
        "cycle_id",
        "reason",
        "decided_by",
        "commit_sha",
        "reviewed_at",
        "created_at",
        "decided_at",
        "text",
        "sources",
    )  # as printed: the long text last


def _proposal(row: sqlite3.Row) -> BriefingProposal:
    return BriefingProposal(
        id=int(row["id"]),
        text=row["text"],
        sources=json.loads(row["sources"] or "[]"),
        status=row["status"],
        cycle_id=row["cycle_id"],
        reason=row["reason"],
        decided_by=row["decided_by"],
        commit_sha=row["commit_sha"],
        reviewed_at=row["reviewed_at"],
        created_at=row["created_at"],
        decided_at=row["decided_at"],
    )


def get(ledger: Ledger, bid: int) -> BriefingProposal | None:
    """One proposal by id."""
    row = ledger.one("SELECT * FROM briefings WHERE id = ?", (int(bid),))
    return _proposal(row) if row else None


def listed(ledger: Ledger, limit: int = 50) -> list[BriefingProposal]:
    """Proposals, newest first."""
    return [
        _proposal(r) for r in ledger.query("SELECT * FROM briefings ORDER BY id DESC LIMIT ?", (int(limit),))
    ]


def latest_pending(ledger: Ledger) -> BriefingProposal | None:
    """The newest pending proposal."""
    row = ledger.one("SELECT * FROM briefings WHERE status = 'pending' ORDER BY id DESC LIMIT 1")
    return _proposal(row) if row else None


def latest_unreviewed_auto(ledger: Ledger) -> BriefingProposal | None:
    """The newest auto-written version not yet reviewed after the fact."""
    row = ledger.one(
        "SELECT * FROM briefings WHERE status = 'accepted' AND decided_by = 'auto' "
        "AND reviewed_at IS NULL ORDER BY id DESC LIMIT 1"
    )
    return _proposal(row) if row else None


def pending_with_text(ledger: Ledger, text: str) -> int | None:
    """The id of the newest pending proposal of exactly ``text``."""
    row = ledger.one(
        "SELECT id FROM briefings WHERE status = 'pending' AND text = ? ORDER BY id DESC LIMIT 1", (text,)
    )
    return int(row["id"]) if row else None


def propose(
    ledger: Ledger,
    *,
    cycle_id: int | None,
    text: str,
    sources: list[dict[str, str]],
    auto: bool,
    commit: str | None,
    now: str,
) -> int:
    """Record a new version: ``pending``, or ``accepted`` by auto-write with its commit; its id."""
    return ledger.insert(
        "INSERT INTO briefings (cycle_id, text, sources, status, decided_by, commit_sha, created_at, decided_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (
            cycle_id,
            text,
            json.dumps(sources, ensure_ascii=False),
            "accepted" if auto else "pending",
            "auto" if auto else None,
            commit,
            now,
            now if auto else None,
        ),
    )


def supersede(ledger: Ledger, keep: int | None, now: str) -> None:
    """Every pending version but ``keep`` is superseded (by ``keep``, or by the current briefing)."""
    ledger.run(
        "UPDATE briefings SET status = 'superseded', decided_at = ?, reason = ? "
        "WHERE status = 'pending' AND id IS NOT ?",
        (now, f"superseded by #{keep}" if keep else "the current briefing already says it", keep),
    )


def mark_reviewed(ledger: Ledger, bid: int, now: str) -> None:
    """A person kept an auto-written version."""
    ledger.run("UPDATE briefings SET reviewed_at = ? WHERE id = ?", (now, bid))


def mark_accepted(ledger: Ledger, bid: int, sha: str | None, now: str) -> None:
    """A person accepted a version (committed as ``sha``)."""
    ledger.run(
        "UPDATE briefings SET status = 'accepted', decided_by = 'person', commit_sha = ?, "
        "decided_at = ?, reviewed_at = ? WHERE id = ?",
        (sha, now, now, bid),
    )


def mark_rejected(ledger: Ledger, bid: int, reason: str | None, now: str) -> None:
    """A person rejected a version, with ``reason``."""
    ledger.run(
        "UPDATE briefings SET status = 'rejected', reason = ?, decided_at = ?, reviewed_at = ? WHERE id = ?",
        (reason, now, now, bid),
    )


DECISION_COLUMNS = ("status", "reason", "decided_by", "commit_sha", "reviewed_at", "decided_at")
"""The columns a person's decision on a version changes (kept before it, put back by an undo)."""


def decision_state(prop: BriefingProposal) -> dict[str, Any]:
    """A version's decision columns as they are now."""
    return {col: getattr(prop, col) for col in DECISION_COLUMNS}


def restore_state(ledger: Ledger, bid: int, state: dict[str, Any]) -> None:
    """Put a version's decision columns back as :func:`decision_state` had them (an undo)."""
    values = {col: state.get(col) for col in DECISION_COLUMNS}
    sets = ", ".join(f"{col} = :{col}" for col in DECISION_COLUMNS)
    ledger.run(f"UPDATE briefings SET {sets} WHERE id = :id", {**values, "id": bid})
