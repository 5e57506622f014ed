"""The ``generated_writes`` table: a file the dream cycle generates (review file, briefing) as dreamtui
wrote it and has not yet seen committed, so an interrupted run's leftover is known as dreamtui's own."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dreamtui.core.ledger.db import Ledger


def versions(ledger: Ledger, rel: str) -> dict[str, tuple[str, dict[str, str]]]:
    """Blob id → (subject, trailers) of every uncommitted version of ``rel`` dreamtui wrote."""
    rows = ledger.query("SELECT blob, subject, trailers FROM generated_writes WHERE path = ?", (rel,))
    return {r["blob"]: (r["subject"], json.loads(r["trailers"] or "{}")) for r in rows}


def remember(ledger: Ledger, rel: str, blob: str, subject: str, trailers: dict[str, str], now: str) -> None:
    """Remember that dreamtui wrote the blob ``blob`` to ``rel``, meant for the commit ``subject``."""
    ledger.run(
        "INSERT INTO generated_writes (path, blob, subject, trailers, written_at) VALUES (?, ?, ?, ?, ?) "
        "ON CONFLICT(path, blob) DO UPDATE SET subject = excluded.subject, trailers = excluded.trailers, "
        "written_at = excluded.written_at",
        (rel, blob, subject, json.dumps(trailers), now),
    )


def forget(ledger: Ledger, rel: str) -> None:
    """Forget every version of ``rel`` (it was committed, or left to the person)."""
    ledger.run("DELETE FROM generated_writes WHERE path = ?", (rel,))


def paths(ledger: Ledger) -> list[str]:
    """Every path with an uncommitted version, sorted."""
    return [r["path"] for r in ledger.query("SELECT DISTINCT path FROM generated_writes ORDER BY path")]


def blobs(ledger: Ledger) -> list[tuple[str, str]]:
    """(path, blob) of every uncommitted version."""
    return [(r["path"], r["blob"]) for r in ledger.query("SELECT path, blob FROM generated_writes")]
