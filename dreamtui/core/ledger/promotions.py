"""The ``promotions`` table (auto-write approvals and how each ended) and the acknowledged demotion."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from dreamtui.core.models import Jsonable

if TYPE_CHECKING:
    from dreamtui.core.ledger.db import Ledger


@dataclass(slots=True)
class Pair:
    """An extractor and model: promotion is for exactly one."""

    extractor: str
    model: str | None

    def __str__(self) -> str:
        return f"{self.extractor}/{self.model}" if self.model else self.extractor


@dataclass(slots=True)
class Promotion(Jsonable):
    """A row of the ``promotions`` table."""

    id: int
    extractor: str
    model: str | None
    status: str
    evidence: dict[str, Any]
    approved_at: str
    ended_at: str | None
    end_reason: str | None
    commit_sha: str | None

    @property
    def pair(self) -> Pair:
        return Pair(self.extractor, self.model)

    JSON_KEYS = ("id", "extractor", "model", "status", "approved_at", "ended_at", "end_reason", "commit_sha")
    """``dreamtui promote --json``: the evidence is shown per gate, not again here."""


def _promotion(row: sqlite3.Row) -> Promotion:
    return Promotion(
        id=row["id"],
        extractor=row["extractor"],
        model=row["model"],
        status=row["status"],
        evidence=json.loads(row["evidence"] or "{}"),
        approved_at=row["approved_at"],
        ended_at=row["ended_at"],
        end_reason=row["end_reason"],
        commit_sha=row["commit_sha"],
    )


def latest(ledger: Ledger) -> Promotion | None:
    """The most recent promotion, whatever its status."""
    row = ledger.one("SELECT * FROM promotions ORDER BY id DESC LIMIT 1")
    return _promotion(row) if row else None


def active(ledger: Ledger) -> Promotion | None:
    """The approved promotion that has not ended, if any."""
    row = ledger.one(
        "SELECT * FROM promotions WHERE status = 'approved' AND ended_at IS NULL ORDER BY id DESC LIMIT 1"
    )
    return _promotion(row) if row else None


def listed(ledger: Ledger) -> list[Promotion]:
    """Every promotion, newest first."""
    return [_promotion(r) for r in ledger.query("SELECT * FROM promotions ORDER BY id DESC")]


def approve(ledger: Ledger, pair: Pair, evidence: dict[str, Any], now: str) -> int:
    """Record an approval of ``pair`` with its evidence; its id."""
    return ledger.insert(
        "INSERT INTO promotions (extractor, model, status, evidence, approved_at) "
        "VALUES (?, ?, 'approved', ?, ?)",
        (pair.extractor, pair.model, json.dumps(evidence, ensure_ascii=False, default=str), now),
    )


def set_commit(ledger: Ledger, promotion_id: int, sha: str | None) -> None:
    """The commit of the promotion file that records the approval."""
    ledger.run("UPDATE promotions SET commit_sha = ? WHERE id = ?", (sha, promotion_id))


def end(ledger: Ledger, promotion_id: int, status: str, reason: str, now: str) -> None:
    """End a promotion (``revoked`` or ``demoted``) with ``reason``, unless it already ended."""
    ledger.run(
        "UPDATE promotions SET status = ?, ended_at = ?, end_reason = ? WHERE id = ? AND ended_at IS NULL",
        (status, now, reason, promotion_id),
    )


def acknowledged(ledger: Ledger) -> str | None:
    """The id (as text) of the demotion the person acknowledged last."""
    row = ledger.one("SELECT value FROM meta WHERE key = 'promotion_ack'")
    return None if row is None else str(row["value"])


def acknowledge(ledger: Ledger, promotion_id: int) -> None:
    """The person acknowledged the demotion of ``promotion_id``: its banner stops."""
    ledger.run(
        "INSERT INTO meta(key, value) VALUES('promotion_ack', ?) "
        "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        (str(promotion_id),),
    )
