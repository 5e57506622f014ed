"""The ``extractions`` table: each extraction of a range of a session's bytes (content is extracted once)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from dreamtui.core.ledger.rows import from_row
from dreamtui.core.models import Usage
from dreamtui.core.secrets import redact

if TYPE_CHECKING:
    from dreamtui.core.ledger.db import Ledger


@dataclass(slots=True)
class ExtractedRange:
    """The byte range ``start_offset``..``end_offset`` of ``path`` one extraction read."""

    id: int
    path: str
    start_offset: int
    end_offset: int


def record_extraction(
    ledger: Ledger,
    *,
    session: str,
    project: str,
    path: str,
    start_offset: int,
    end_offset: int,
    content_hash: str | None,
    extractor: str,
    model: str | None,
    cycle_id: int | None,
    usage: Usage,
    candidates: int,
    now: str,
) -> None:
    """Record (or re-record) that the bytes ``start_offset``..``end_offset`` of ``path`` were extracted,
    with the call's usage and how many candidates it gave (joins the caller's transaction)."""
    ledger.run(
        """INSERT INTO extractions (session, project, path, start_offset, end_offset, content_hash,
               extractor, model, cycle_id, calls, input_tokens, output_tokens, cached_tokens,
               candidates, error, created_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, ?)
           ON CONFLICT(path, start_offset, end_offset) DO UPDATE SET
               content_hash = excluded.content_hash, extractor = excluded.extractor,
               model = excluded.model, cycle_id = excluded.cycle_id, calls = excluded.calls,
               input_tokens = excluded.input_tokens, output_tokens = excluded.output_tokens,
               cached_tokens = excluded.cached_tokens, candidates = excluded.candidates,
               error = NULL, created_at = excluded.created_at""",
        (
            session,
            project,
            path,
            start_offset,
            end_offset,
            content_hash,
            extractor,
            model,
            cycle_id,
            usage.calls,
            usage.input_tokens,
            usage.output_tokens,
            usage.cached_tokens,
            candidates,
            now,
        ),
    )


def record_failed_extraction(
    ledger: Ledger,
    *,
    session: str,
    project: str,
    path: str,
    start_offset: int,
    end_offset: int,
    content_hash: str | None,
    extractor: str,
    model: str | None,
    cycle_id: int | None,
    usage: Usage,
    error: str | None,
    now: str,
) -> None:
    """Record that extracting ``start_offset``..``end_offset`` of ``path`` failed, with the error (joins
    the caller's transaction); the content stays undreamed, so a later cycle tries again."""
    ledger.run(
        """INSERT INTO extractions (session, project, path, start_offset, end_offset, content_hash,
               extractor, model, cycle_id, calls, input_tokens, output_tokens, cached_tokens,
               candidates, error, created_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?)
           ON CONFLICT(path, start_offset, end_offset) DO UPDATE SET error = excluded.error,
               cycle_id = excluded.cycle_id, created_at = excluded.created_at""",
        (
            session,
            project,
            path,
            start_offset,
            end_offset,
            content_hash,
            extractor,
            model,
            cycle_id,
            usage.calls,
            usage.input_tokens,
            usage.output_tokens,
            usage.cached_tokens,
            redact(error or "failed")[:500],  # redacted before it is cut: a cut secret is not found
            now,
        ),
    )


def successful(ledger: Ledger) -> list[ExtractedRange]:
    """The ranges of every extraction that did not fail, by path and start."""
    rows = ledger.query(
        "SELECT id, path, start_offset, end_offset FROM extractions WHERE error IS NULL "
        "ORDER BY path, start_offset, end_offset, id"
    )
    return [from_row(ExtractedRange, r) for r in rows]


def tokens_between(ledger: Ledger, start: str, end: str) -> int:
    """Input + output tokens the extractions recorded from ``start`` up to ``end`` (ledger timestamps)."""
    row = ledger.one(
        "SELECT COALESCE(SUM(input_tokens + output_tokens), 0) FROM extractions "
        "WHERE created_at >= ? AND created_at < ?",
        (start, end),
    )
    return int(row[0]) if row else 0


def any_by(ledger: Ledger, extractors: tuple[str, ...]) -> bool:
    """Whether any extraction (failed or not) was recorded by one of ``extractors``."""
    marks = ", ".join("?" for _ in extractors)
    return (
        ledger.one(f"SELECT 1 FROM extractions WHERE extractor IN ({marks}) LIMIT 1", extractors) is not None
    )
