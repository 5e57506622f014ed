"""The ``memory_intents`` table: a memory write in flight, so a crash can be undone or finished."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import sqlite3

    from dreamtui.core.ledger.db import Ledger


@dataclass(slots=True)
class Intent:
    """What dreamtui is about to write: ``paths`` maps each path to the sha256 of the bytes written
    (None: deleted), ``created_dirs`` the folders it makes, ``payload`` what the decision needs."""

    id: int
    candidate_id: str
    action: str
    paths: dict[str, str | None] = field(default_factory=dict)
    created_dirs: list[str] = field(default_factory=list)
    payload: dict[str, Any] = field(default_factory=dict)
    created_at: str = ""


def _intent(row: sqlite3.Row) -> Intent:
    return Intent(
        int(row["id"]),
        row["candidate_id"],
        row["action"],
        json.loads(row["paths"] or "{}"),
        json.loads(row["created_dirs"] or "[]"),
        json.loads(row["payload"] or "{}"),
        row["created_at"],
    )


def record(
    ledger: Ledger,
    cid: str,
    action: str,
    paths: dict[str, str | None],
    dirs: list[str],
    payload: dict[str, Any],
    now: str,
) -> int:
    """Record a write about to happen; its id."""
    return ledger.insert(
        "INSERT INTO memory_intents (candidate_id, action, paths, created_dirs, payload, created_at) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        (cid, action, json.dumps(paths), json.dumps(dirs), json.dumps(payload), now),
    )


def get(ledger: Ledger, intent_id: int) -> Intent | None:
    """One intent by id."""
    row = ledger.one("SELECT * FROM memory_intents WHERE id = ?", (intent_id,))
    return _intent(row) if row else None


def listed(ledger: Ledger) -> list[Intent]:
    """Every write still in flight, oldest first."""
    return [_intent(r) for r in ledger.query("SELECT * FROM memory_intents ORDER BY id")]


def count(ledger: Ledger) -> int:
    """How many writes are in flight."""
    row = ledger.one("SELECT COUNT(*) FROM memory_intents")
    return int(row[0]) if row else 0


def done(ledger: Ledger, intent_id: int) -> None:
    """Forget an intent: its write was committed, recorded or undone."""
    ledger.run("DELETE FROM memory_intents WHERE id = ?", (intent_id,))
