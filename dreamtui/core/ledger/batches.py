"""The ``batches`` table: Message Batches submitted and the request map of each (custom id → session)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dreamtui.core.ledger.db import Ledger


def record(
    ledger: Ledger,
    batch_id: str,
    status: str,
    requests: dict[str, dict[str, Any]],
    model: str | None,
    now: str,
) -> None:
    """Record a submitted batch and its request map (joins the caller's transaction)."""
    ledger.run(
        "INSERT INTO batches (id, status, requests, model, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)",
        (batch_id, status, json.dumps(requests, ensure_ascii=False), model, now, now),
    )


def with_status(ledger: Ledger, states: tuple[str, ...]) -> list[str]:
    """Ids of the batches in one of ``states``, oldest first."""
    marks = ", ".join("?" for _ in states)
    rows = ledger.query(f"SELECT id FROM batches WHERE status IN ({marks}) ORDER BY created_at, id", states)
    return [r["id"] for r in rows]


def any_with_status(ledger: Ledger, states: tuple[str, ...]) -> bool:
    """Some batch is in one of ``states``."""
    marks = ", ".join("?" for _ in states)
    return ledger.one(f"SELECT 1 FROM batches WHERE status IN ({marks}) LIMIT 1", states) is not None


def set_status(ledger: Ledger, batch_id: str, status: str, now: str) -> None:
    """Record a batch's processing status."""
    ledger.run("UPDATE batches SET status = ?, updated_at = ? WHERE id = ?", (status, now, batch_id))


def requests(ledger: Ledger, batch_id: str) -> dict[str, dict[str, Any]] | None:
    """A batch's request map, None when the ledger does not know the batch."""
    row = ledger.one("SELECT requests FROM batches WHERE id = ?", (batch_id,))
    if row is None:
        return None
    mapping: dict[str, dict[str, Any]] = json.loads(row["requests"] or "{}")
    return mapping
