"""The ``dream_cycles`` table: one row per dream cycle (one full cycle per project per date, any number
of on-demand passes), its status, phases and statistics (JSON, typed by :mod:`.cycle_stats`)."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from dreamtui.core.ledger.cycle_stats import CycleStats
from dreamtui.core.models import Jsonable

if TYPE_CHECKING:
    from dreamtui.core.ledger.db import Ledger

ALL_PROJECTS = "*"
"""The ``chat_id`` of a cycle that dreamed every project at once."""
FULL = "full"
"""The ``kind`` of the date's one full cycle (with REM)."""
ON_DEMAND = "on-demand"
"""The ``kind`` of a person's extra pass over new content after the date's full cycle (no REM)."""


@dataclass(slots=True)
class CycleRecord(Jsonable):
    """One row of ``dream_cycles``: a cycle's identity, outcome, phases and stats (``--json`` prints it)."""

    id: int
    chat_id: str
    date: str
    status: str
    started_at: str
    completed_at: str | None = None
    error_message: str | None = None
    trigger: str = "manual"
    depth: str | None = None
    phases: list[dict[str, Any]] = field(default_factory=list)
    stats: CycleStats = field(default_factory=CycleStats)
    kind: str = FULL

    @property
    def on_demand(self) -> bool:
        """A person's extra pass over new content after the day's full cycle (no REM)."""
        return self.kind == ON_DEMAND

    @property
    def new_candidates(self) -> int:
        """Candidates this cycle put in front of a person (verified, not duplicate, not dropped)."""
        return self.stats.kept


def _cycle(row: sqlite3.Row) -> CycleRecord:
    return CycleRecord(
        id=row["id"],
        chat_id=row["chat_id"],
        date=row["date"],
        status=row["status"],
        started_at=row["started_at"],
        completed_at=row["completed_at"],
        error_message=row["error_message"],
        trigger=row["trigger"],
        depth=row["depth"],
        phases=json.loads(row["phases"] or "[]"),
        stats=CycleStats.from_json(json.loads(row["stats"] or "{}")),
        kind=row["kind"] or FULL,
    )


def get(ledger: Ledger, cycle_id: int) -> CycleRecord | None:
    """One cycle by id."""
    row = ledger.one("SELECT * FROM dream_cycles WHERE id = ?", (cycle_id,))
    return _cycle(row) if row else None


def find_full(ledger: Ledger, chat_id: str, day: str) -> CycleRecord | None:
    """The full cycle of ``chat_id`` on ``day``."""
    row = ledger.one(
        "SELECT * FROM dream_cycles WHERE chat_id = ? AND date = ? AND kind = 'full'", (chat_id, day)
    )
    return _cycle(row) if row else None


def listed(ledger: Ledger, limit: int | None = 20) -> list[CycleRecord]:
    """Cycles, newest first."""
    sql = "SELECT * FROM dream_cycles ORDER BY started_at DESC, id DESC"
    if limit is not None:
        sql += f" LIMIT {int(limit)}"
    return [_cycle(r) for r in ledger.query(sql)]


def finished(ledger: Ledger, n: int) -> list[CycleRecord]:
    """The last ``n`` cycles that are not running, newest first."""
    rows = ledger.query(
        "SELECT * FROM dream_cycles WHERE status != 'running' ORDER BY started_at DESC, id DESC LIMIT ?", (n,)
    )
    return [_cycle(r) for r in rows]


def running(ledger: Ledger) -> list[CycleRecord]:
    """Every cycle whose row says it is running."""
    return [_cycle(r) for r in ledger.query("SELECT * FROM dream_cycles WHERE status = 'running'")]


def last_deep_full(ledger: Ledger, n: int) -> list[CycleRecord]:
    """The last ``n`` completed full cycles that went past light sleep, newest first."""
    rows = ledger.query(
        "SELECT * FROM dream_cycles WHERE status = 'completed' AND depth IS NOT NULL "
        "AND depth != 'shallow' AND kind = 'full' ORDER BY started_at DESC, id DESC LIMIT ?",
        (n,),
    )
    return [_cycle(r) for r in rows]


def begin(
    ledger: Ledger,
    chat_id: str,
    day: str,
    started: str,
    trigger: str,
    stats: dict[str, Any],
    kind: str = FULL,
) -> int:
    """Insert a running cycle; its id."""
    return ledger.insert(
        "INSERT INTO dream_cycles (chat_id, date, status, started_at, trigger, stats, kind) "
        "VALUES (?, ?, 'running', ?, ?, ?, ?)",
        (chat_id, day, started, trigger, json.dumps(stats), kind),
    )


def restart(ledger: Ledger, cycle_id: int, started: str, trigger: str, stats: dict[str, Any]) -> None:
    """Run a failed (or interrupted) cycle's row again: running, its phases and stats cleared."""
    ledger.run(
        "UPDATE dream_cycles SET status = 'running', started_at = ?, completed_at = NULL, "
        "error_message = NULL, trigger = ?, depth = NULL, phases = '[]', stats = ? WHERE id = ?",
        (started, trigger, json.dumps(stats), cycle_id),
    )


def fail(ledger: Ledger, cycle_id: int, now: str, message: str) -> None:
    """Mark a cycle failed with ``message``."""
    ledger.run(
        "UPDATE dream_cycles SET status = 'failed', completed_at = ?, error_message = ? WHERE id = ?",
        (now, message, cycle_id),
    )


def mark_deep(ledger: Ledger, cycle_id: int) -> None:
    """Say in a running cycle's row that it went past light sleep."""
    ledger.run("UPDATE dream_cycles SET depth = 'deep' WHERE id = ? AND status = 'running'", (cycle_id,))


def save_progress(
    ledger: Ledger, cycle_id: int, depth: str | None, phases: list[dict[str, Any]], stats: dict[str, Any]
) -> None:
    """Keep a running cycle's depth (when given), phases and stats current (``stats`` patched in)."""
    ledger.run(
        "UPDATE dream_cycles SET depth = COALESCE(?, depth), phases = ?, "
        "stats = json_patch(stats, ?) WHERE id = ? AND status = 'running'",
        (depth, json.dumps(phases), json.dumps(stats), cycle_id),
    )


def finish(
    ledger: Ledger,
    cycle_id: int,
    status: str,
    now: str,
    error: str | None,
    depth: str | None,
    phases: list[dict[str, Any]],
    stats: dict[str, Any],
) -> None:
    """Record how a cycle ended."""
    ledger.run(
        "UPDATE dream_cycles SET status = ?, completed_at = ?, error_message = ?, depth = ?, "
        "phases = ?, stats = ? WHERE id = ?",
        (status, now, error, depth, json.dumps(phases), json.dumps(stats), cycle_id),
    )
