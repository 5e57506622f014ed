"""The ``consolidations`` table (issue 26): proposals to update, retire or merge memories already in the
repository, their evidence, and how the person decided each. A proposal is keyed by its evidence
(:func:`evidence_key`): once made — whatever became of it — the same proposal with the same evidence is
never stored again, so a rejection is remembered."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from dreamtui.core.models import Jsonable

if TYPE_CHECKING:
    from dreamtui.core.ledger.db import Ledger

KINDS = ("update", "retire", "merge")
STATUSES = ("pending", "accepted", "rejected", "undone")


@dataclass(slots=True)
class Consolidation(Jsonable):
    """One proposal (a row of ``consolidations``)."""

    id: str
    kind: str
    project: str
    targets: list[str]
    evidence_kind: str
    evidence: str
    evidence_key: str
    source: str
    status: str = "pending"
    seen: dict[str, str] = field(default_factory=dict)
    keep_path: str | None = None
    new_text: str | None = None
    reason: str = ""
    session: str | None = None
    transcript: str | None = None
    line: int | None = None
    provenance: str | None = None
    decided_by: str | None = None
    decision_reason: str | None = None
    commit_sha: str | None = None
    undo_sha: str | None = None
    cycle_id: int | None = None
    created_at: str = ""
    decided_at: str | None = None

    JSON_KEYS = (
        "id",
        "kind",
        "project",
        "targets",
        "keep_path",
        "new_text",
        "evidence_kind",
        "evidence",
        "reason",
        "session",
        "line",
        "provenance",
        "source",
        "status",
        "decided_by",
        "decision_reason",
        "commit_sha",
        "undo_sha",
        "created_at",
        "decided_at",
    )


def evidence_key(kind: str, targets: list[str], evidence: str) -> str:
    """The key a proposal is remembered by: its kind, the files it changes and its evidence."""
    raw = json.dumps([kind, sorted(targets), " ".join(evidence.split())], ensure_ascii=False)
    return hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()


def _row(row: sqlite3.Row) -> Consolidation:
    data: dict[str, Any] = dict(zip(row.keys(), tuple(row), strict=True))
    data["targets"] = json.loads(data.get("targets") or "[]")
    data["seen"] = json.loads(data.get("seen") or "{}")
    return Consolidation(**data)


def known(ledger: Ledger, key: str) -> bool:
    """A proposal with this evidence key was made before (pending, decided or undone)."""
    return ledger.one("SELECT 1 FROM consolidations WHERE evidence_key = ?", (key,)) is not None


def add(ledger: Ledger, item: Consolidation) -> bool:
    """Store a new proposal; False (nothing stored) when its evidence key is already known."""
    with ledger.write() as c:
        cur = c.execute(
            "INSERT INTO consolidations (id, kind, project, targets, seen, keep_path, new_text, evidence_kind,"
            " evidence, evidence_key, reason, session, transcript, line, provenance, source, status, cycle_id,"
            " created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?)"
            " ON CONFLICT(evidence_key) DO NOTHING",
            (
                item.id,
                item.kind,
                item.project,
                json.dumps(item.targets, ensure_ascii=False),
                json.dumps(item.seen),
                item.keep_path,
                item.new_text,
                item.evidence_kind,
                item.evidence,
                item.evidence_key,
                item.reason,
                item.session,
                item.transcript,
                item.line,
                item.provenance,
                item.source,
                item.cycle_id,
                item.created_at,
            ),
        )
        return bool(cur.rowcount)


def get(ledger: Ledger, cid: str) -> Consolidation | None:
    """The proposal ``cid`` (an exact id or a unique prefix of one), or None."""
    rows = ledger.query("SELECT * FROM consolidations WHERE id = ? OR id LIKE ? LIMIT 2", (cid, f"{cid}%"))
    exact = [r for r in rows if r["id"] == cid]
    if exact:
        return _row(exact[0])
    return _row(rows[0]) if len(rows) == 1 else None


def listed(ledger: Ledger, status: str | None = "pending", project: str | None = None) -> list[Consolidation]:
    """Proposals of ``status`` (None: all), oldest first, of one project or all."""
    sql = "SELECT * FROM consolidations WHERE 1 = 1"
    params: list[Any] = []
    if status is not None:
        sql += " AND status = ?"
        params.append(status)
    if project is not None:
        sql += " AND project = ?"
        params.append(project)
    return [_row(r) for r in ledger.query(sql + " ORDER BY created_at, id", tuple(params))]


def decide(
    ledger: Ledger,
    cid: str,
    status: str,
    now: str,
    *,
    decided_by: str | None = None,
    reason: str | None = None,
    commit_sha: str | None = None,
) -> None:
    """Record a decision on ``cid``: accepted (with its commit) or rejected (with the reason)."""
    with ledger.write() as c:
        c.execute(
            "UPDATE consolidations SET status = ?, decided_by = ?, decision_reason = ?, commit_sha = ?,"
            " decided_at = ? WHERE id = ?",
            (status, decided_by, reason, commit_sha, now, cid),
        )


def undone(ledger: Ledger, cid: str, undo_sha: str | None, now: str) -> None:
    """Record that an accepted proposal was undone (by the commit ``undo_sha``; None for a reject). Its
    evidence key is set free: the memory is as before the accept, so the same proposal may be made again."""
    with ledger.write() as c:
        c.execute(
            "UPDATE consolidations SET status = 'undone', undo_sha = ?, decided_at = ?,"
            " evidence_key = evidence_key || '~undone~' || id WHERE id = ? AND status != 'undone'",
            (undo_sha, now, cid),
        )


def withdraw(ledger: Ledger, cid: str) -> None:
    """Forget a pending proposal whose memory changed since it was made (it can no longer be accepted as
    made); the next pass proposes again from the new text when the proof still holds."""
    with ledger.write() as c:
        c.execute("DELETE FROM consolidations WHERE id = ? AND status = 'pending'", (cid,))


def counts(ledger: Ledger) -> dict[str, dict[str, int]]:
    """Per kind, how many proposals are in each status (every kind and status present, zeros too);
    ``accepted`` counts a person's accepts, ``auto_accepted`` those made under a promotion."""
    out = {kind: dict.fromkeys((*STATUSES, "auto_accepted"), 0) for kind in KINDS}
    for row in ledger.query(
        "SELECT kind, status, COALESCE(decided_by, 'person') AS who, COUNT(*) AS n FROM consolidations"
        " GROUP BY kind, status, who"
    ):
        if row["kind"] not in out or row["status"] not in STATUSES:
            continue
        key = "auto_accepted" if row["status"] == "accepted" and row["who"] == "auto" else row["status"]
        out[row["kind"]][key] += row["n"]
    return out


def of_cycle(ledger: Ledger, cycle_id: int) -> dict[str, int]:
    """Per kind, how many proposals a cycle made."""
    out = dict.fromkeys(KINDS, 0)
    for row in ledger.query(
        "SELECT kind, COUNT(*) AS n FROM consolidations WHERE cycle_id = ? GROUP BY kind", (cycle_id,)
    ):
        out[row["kind"]] = row["n"]
    return out
