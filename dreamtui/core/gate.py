"""The gate every proposed lesson must pass: valid fields, a verified quote, no duplicate, no secret.

``gate(raws, ...)`` stores every candidate it sees in the ledger, either ``pending`` (kept, for a
person to decide) or ``dropped`` with a ``drop_reason``:

- ``invalid``: type not one of ``MEMORY_TYPES``, or an empty claim;
- ``unverified``: the quote is not inside one string of the session's transcript (invented or
  altered, too short, or hiding invisible characters);
- ``duplicate``: the same lesson is already in memory (score at least ``dedup.DUPLICATE``);
- ``duplicate-pending``: the same lesson is already pending; when it came from another session the
  pending one is corroborated (``corroborated += 1``, once per session);
- ``previously-rejected``: the same lesson was rejected before, from the same session (from another
  session it is new evidence: kept, marked ``duplicate_kind='rejected'``).

A kept candidate that resembles a lesson (score between ``dedup.SUSPECT`` and ``dedup.DUPLICATE``)
carries ``duplicate_of``/``duplicate_kind``/``duplicate_score`` so the person sees both side by side.
Secrets never reach the ledger in clear: every stored text is redacted, and the rules found are
listed in ``Candidate.secrets`` (such a candidate cannot be accepted until edited).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dreamtui.core import clock, dedup, secrets
from dreamtui.core.config import Config
from dreamtui.core.dedup import DedupIndex, Doc
from dreamtui.core.ledger import Ledger
from dreamtui.core.memory import clean_text
from dreamtui.core.models import MEMORY_TYPES, Candidate, DedupHit, RawCandidate, candidate_id
from dreamtui.core.verify import verify_quote

DROP_REASONS: tuple[str, ...] = (
    "invalid", "unverified", "duplicate", "duplicate-pending", "previously-rejected", "already-decided",
)
_SURROGATE = re.compile("[\ud800-\udfff]")
DUPLICATE_REASONS = frozenset({"duplicate", "duplicate-pending", "previously-rejected"})


@dataclass(slots=True)
class GateReport:
    """What the gate did with one batch of raw candidates."""

    kept: list[Candidate] = field(default_factory=list)
    dropped: Counter[str] = field(default_factory=Counter)
    duplicates: int = 0
    """Candidates dropped because they repeat a lesson (in memory, pending, or rejected)."""
    flagged_secrets: int = 0
    suspected_duplicates: int = 0
    corroborated: list[str] = field(default_factory=list)
    """Ids of pending candidates corroborated by this batch."""

    @property
    def invented(self) -> int:
        """Quotes that were not found in the transcript."""
        return self.dropped.get("unverified", 0)

    def to_json(self) -> dict[str, Any]:
        return {
            "kept": [c.to_json() for c in self.kept],
            "dropped": dict(self.dropped),
            "duplicates": self.duplicates,
            "invented": self.invented,
            "flagged_secrets": self.flagged_secrets,
            "suspected_duplicates": self.suspected_duplicates,
            "corroborated": self.corroborated,
        }


def _text(value: Any) -> str:
    """A field as a string that SQLite and UTF-8 accept (lone surrogates become U+FFFD)."""
    if value is None:
        return ""
    text = value if isinstance(value, str) else str(value)
    return _SURROGATE.sub("\ufffd", text)


def _prose(value: Any) -> str:
    """A claim/why/how field: :func:`_text` without ANSI/OSC escapes or control characters."""
    return clean_text(_text(value)).strip()


def _set_duplicate(cand: Candidate, hit: DedupHit) -> None:
    cand.duplicate_of = hit.ref
    cand.duplicate_kind = hit.kind
    cand.duplicate_score = round(hit.score, 4)


def _best(index: DedupIndex, claim: str, kind: str, exclude: Iterable[str]) -> DedupHit | None:
    return index.closest(claim, kinds=(kind,), exclude=exclude)


def _already_corroborated(ledger: Ledger, target: str, session: str) -> bool:
    rows = ledger.query(
        "SELECT 1 FROM candidates WHERE duplicate_of = ? AND session = ? AND drop_reason = 'duplicate-pending' "
        "LIMIT 1", (target, session))
    return bool(rows)


def gate(raws: Sequence[RawCandidate], *, config: Config, ledger: Ledger, project: str,
         files: Sequence[Path | str], cycle_id: int | None = None,
         index: DedupIndex | None = None, corroborate: bool = True) -> GateReport:
    """Check each raw candidate, store it in the ledger (kept ``pending`` or ``dropped``), and report.

    ``files`` are the session's transcript files (main first, then sub-agents) the quotes must be
    found in. ``index`` may be passed to reuse one dedup index across sessions; the gate adds the
    candidates it keeps to it. ``corroborate=False`` leaves ``corroborated`` alone (for a caller
    that counts corroboration itself from ``duplicate_of``). Everything is written in one ledger
    transaction.
    """
    report = GateReport()
    if index is None:
        index = DedupIndex.build(config.memory, ledger)
    now = clock.now_iso()
    transcript = str(files[0]) if files else ""
    rows: list[Candidate] = []
    bumps: dict[str, set[str]] = {}
    seen_ids: set[str] = set()

    for raw in raws:
        claim_raw = _prose(raw.claim)
        quote_raw = _text(raw.quote).strip()
        why_raw, how_raw = _prose(raw.why), _prose(raw.how_to_apply)
        session = _text(raw.session) or "unknown"
        found = list(dict.fromkeys(
            r for t in (claim_raw, why_raw, how_raw, quote_raw) for r in secrets.rules_found(t)))
        claim, why, how, quote = (secrets.redact(t) for t in (claim_raw, why_raw, how_raw, quote_raw))
        cid = candidate_id(session, quote, claim)
        if cid in seen_ids:
            report.dropped["duplicate-pending"] += 1
            report.duplicates += 1
            continue
        seen_ids.add(cid)
        existing = ledger.get_candidate(cid)
        if existing is not None and existing.status in ("accepted", "rejected", "pending"):
            # the very same proposal was seen before: never undo a decision or reset a pending one
            report.dropped["already-decided" if existing.status != "pending" else "duplicate-pending"] += 1
            if existing.status == "pending":
                report.duplicates += 1
            continue
        cand = Candidate(
            id=cid, session=session, project=project, transcript=transcript, claim=claim, why=why,
            how_to_apply=how, type=_text(raw.type).strip(), scope=_text(raw.scope).strip() or "global",
            quote=quote, extractor=_text(raw.extractor) or "unknown",
            model=raw.model if isinstance(raw.model, str) else None,
            secrets=found, cycle_id=cycle_id, created_at=now, updated_at=now,
        )
        rows.append(cand)

        if cand.type not in MEMORY_TYPES or not claim:
            _drop(cand, "invalid", report)
            continue
        result = verify_quote(quote_raw, files)
        if not result.verified:
            _drop(cand, "unverified", report)
            continue
        cand.matches = result.matches
        cand.provenance = result.best.provenance if result.best else None

        memory_hit = _best(index, claim, "memory", ())
        if memory_hit is not None and memory_hit.score >= dedup.DUPLICATE:
            _set_duplicate(cand, memory_hit)
            _drop(cand, "duplicate", report)
            continue
        rejected_hit = _best(index, claim, "rejected", (cid,))
        if rejected_hit is not None and rejected_hit.score >= dedup.DUPLICATE:
            _set_duplicate(cand, rejected_hit)
            if index.session_of(rejected_hit.ref) == session:
                _drop(cand, "previously-rejected", report)
                continue
        pending_hit = _best(index, claim, "pending", (cid,))
        if pending_hit is not None and pending_hit.score >= dedup.DUPLICATE and cand.duplicate_kind != "rejected":
            _set_duplicate(cand, pending_hit)
            other = index.session_of(pending_hit.ref)
            if corroborate and other is not None and other != session and not _already_corroborated(
                    ledger, pending_hit.ref, session):
                bumps.setdefault(pending_hit.ref, set()).add(session)
            _drop(cand, "duplicate-pending", report)
            continue
        if cand.duplicate_of is None:
            suspects = [h for h in (memory_hit, rejected_hit, pending_hit)
                        if h is not None and h.score >= dedup.SUSPECT]
            if suspects:
                _set_duplicate(cand, max(suspects, key=lambda h: h.score))
                report.suspected_duplicates += 1
        cand.status = "pending"
        report.kept.append(cand)
        if found:
            report.flagged_secrets += 1
        index.add(Doc.of("pending", cid, claim, session))

    with ledger.write() as conn:
        for cand in rows:
            ledger.put_candidate(cand)
        for target, sessions in bumps.items():
            conn.execute("UPDATE candidates SET corroborated = corroborated + ?, updated_at = ? "
                         "WHERE id = ? AND status = 'pending'", (len(sessions), now, target))
            report.corroborated.append(target)
    return report


def _drop(cand: Candidate, reason: str, report: GateReport) -> None:
    cand.status = "dropped"
    cand.drop_reason = reason
    report.dropped[reason] += 1
    if reason in DUPLICATE_REASONS:
        report.duplicates += 1
