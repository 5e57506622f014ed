"""The ``decision_journal`` table (issue 24): decisions on outside changes and briefings, placed among
the proposal decisions of ``decisions`` so an undo takes back the most recent decision of any kind."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dreamtui.core.ledger.db import Ledger


@dataclass(slots=True)
class Entry:
    """One journal row: ``kind`` (``outside``/``briefing``/``consolidation``), ``action``, the items it decided (``refs``),
    what an undo needs (``payload``), and the last proposal decision before it (``after_decision``)."""

    id: int
    kind: str
    action: str
    refs: list[str]
    payload: dict[str, Any] = field(default_factory=dict)
    after_decision: int = 0
    decided_at: str = ""


def record(ledger: Ledger, kind: str, action: str, refs: list[str], payload: dict[str, Any], now: str) -> int:
    """Journal one decision, placed after every proposal decision made so far."""
    cur = ledger.run(
        "INSERT INTO decision_journal (kind, action, refs, payload, after_decision, decided_at) "
        "VALUES (?, ?, ?, ?, (SELECT COALESCE(MAX(id), 0) FROM decisions), ?)",
        (kind, action, json.dumps(refs), json.dumps(payload), now),
    )
    return int(cur.lastrowid or 0)


def last_undoable(ledger: Ledger) -> Entry | None:
    """The latest journal entry not yet undone."""
    row = ledger.one("SELECT * FROM decision_journal WHERE undone = 0 ORDER BY id DESC LIMIT 1")
    if row is None:
        return None
    return Entry(
        row["id"],
        row["kind"],
        row["action"],
        list(json.loads(row["refs"])),
        dict(json.loads(row["payload"])),
        row["after_decision"],
        row["decided_at"],
    )


def mark_undone_for(ledger: Ledger, kind: str, ref: str) -> None:
    """Mark undone every journal entry of ``kind`` that decided ``ref`` (undone by other means)."""
    ledger.run(
        "UPDATE decision_journal SET undone = 1 WHERE undone = 0 AND kind = ? "
        "AND EXISTS (SELECT 1 FROM json_each(decision_journal.refs) WHERE value = ?)",
        (kind, ref),
    )


def mark_undone(ledger: Ledger, entry_id: int) -> None:
    """Mark one journal entry undone."""
    ledger.run("UPDATE decision_journal SET undone = 1 WHERE id = ?", (entry_id,))
