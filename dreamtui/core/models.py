"""Shared data types of the pipeline: digest turns, candidates, evidence, usage.

Plain dataclasses (and :class:`Turn`, a frozen msgspec struct), no behaviour beyond (de)serialisation,
so every module can import them.
"""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

import msgspec

Role = Literal["person", "assistant"]
Provenance = Literal["person", "assistant", "tool", "meta"]
MemoryType = Literal["user", "feedback", "project", "reference"]
MEMORY_TYPES: tuple[str, ...] = ("user", "feedback", "project", "reference")
CandidateStatus = Literal["pending", "accepted", "rejected", "dropped"]
REJECT_CATEGORIES: tuple[str, ...] = ("wrong", "duplicate", "not a lesson", "too specific", "secret", "other")


class Turn(msgspec.Struct, frozen=True, gc=False):
    """One kept piece of a transcript, pointing back to its raw bytes.

    ``line`` is 1-based within ``file``; ``kind`` says what shape of person text it was
    (``prompt``, ``command``, ``rejection``, ``queued``, ``interrupt``) or ``text`` for prose.
    A frozen msgspec struct, not a dataclass: the digest makes one per kept turn, and this builds in
    0.04 µs where a frozen dataclass takes 0.57 µs (equality, hashing and immutability are the same).
    """

    role: Role
    text: str
    file: str
    line: int
    uuid: str | None = None
    timestamp: str | None = None
    kind: str = "text"

    def to_json(self) -> dict[str, Any]:
        """The JSON shape of ``dreamtui digest --json``."""
        return {
            "role": self.role,
            "text": self.text,
            "line": self.line,
            "uuid": self.uuid,
            "timestamp": self.timestamp,
            "file": self.file,
            "kind": self.kind,
        }


@dataclass(slots=True)
class DigestStats:
    """What digesting cost and kept."""

    bytes: int = 0
    chars: int = 0
    lines: int = 0
    skipped_lines: int = 0
    malformed: int = 0
    invalid_utf8: int = 0
    oversized: int = 0
    partial_tail: bool = False
    replaced: int = 0
    """Records kept after a repair: invalid bytes decoded as U+FFFD, or a byte-order mark removed."""

    @property
    def signal_pct(self) -> float:
        """Characters kept as a percentage of bytes read."""
        return round(100.0 * self.chars / self.bytes, 2) if self.bytes else 0.0

    def to_json(self) -> dict[str, Any]:
        """The JSON shape of ``dreamtui digest --json``'s ``stats``."""
        return {
            "bytes": self.bytes,
            "chars": self.chars,
            "signal_pct": self.signal_pct,
            "skipped_lines": self.skipped_lines,
            "lines": self.lines,
            "malformed": self.malformed,
            "invalid_utf8": self.invalid_utf8,
            "oversized": self.oversized,
            "partial_tail": self.partial_tail,
            "replaced": self.replaced,
        }


@dataclass(slots=True)
class Digest:
    """The ordered turns of one session that a model should read."""

    session: str
    project: str
    files: list[str] = field(default_factory=list)
    turns: list[Turn] = field(default_factory=list)
    stats: DigestStats = field(default_factory=DigestStats)
    cwd: str = ""
    """The working directory the session ran in (the first ``cwd`` of its kept records), if known."""

    @property
    def project_name(self) -> str:
        """The project as a person names it: the last part of ``cwd``, else the folder name made readable."""
        if self.cwd:
            name = self.cwd.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1]
            if name:
                return name
        return self.project.strip("-") or self.project

    def person_chars(self) -> int:
        """How many characters the person wrote (the depth signal)."""
        return sum(len(t.text) for t in self.turns if t.role == "person")

    def to_json(self) -> dict[str, Any]:
        """``{"turns": [...], "stats": {...}}`` plus session and project."""
        return {
            "session": self.session,
            "project": self.project,
            "project_name": self.project_name,
            "cwd": self.cwd,
            "files": self.files,
            "turns": [t.to_json() for t in self.turns],
            "stats": self.stats.to_json(),
        }


@dataclass(slots=True)
class Usage:
    """Model usage of an extraction or a cycle."""

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.calls + other.calls,
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cached_tokens + other.cached_tokens,
        )

    def to_json(self) -> dict[str, int]:
        return asdict(self)


@dataclass(slots=True)
class RawCandidate:
    """A lesson as an extractor proposes it, before the gate."""

    claim: str
    why: str
    how_to_apply: str
    type: str
    scope: str
    quote: str
    session: str
    extractor: str
    model: str | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(slots=True)
class ExtractionResult:
    """What one extractor run over one session returned."""

    session: str
    candidates: list[RawCandidate] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    error: str | None = None
    notes: list[str] = field(default_factory=list)
    malformed: int = 0  # proposals that did not fit the schema: dropped before the gate, counted here


@dataclass(frozen=True, slots=True)
class Match:
    """One place a quote was found in a raw transcript."""

    file: str
    line: int
    uuid: str | None
    timestamp: str | None
    provenance: Provenance
    copy: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "line": self.line,
            "uuid": self.uuid,
            "timestamp": self.timestamp,
            "provenance": self.provenance,
            "copy": self.copy,
        }


@dataclass(slots=True)
class Verification:
    """The result of verifying a quote: every place it occurs, the best first."""

    verified: bool
    matches: list[Match] = field(default_factory=list)
    reason: str | None = None

    @property
    def best(self) -> Match | None:
        """The preferred place: an original (non-copy) record, person > assistant > meta > tool."""
        return self.matches[0] if self.matches else None

    def to_json(self) -> dict[str, Any]:
        return {
            "verified": self.verified,
            "matches": [m.to_json() for m in self.matches],
            "reason": self.reason,
        }


@dataclass(frozen=True, slots=True)
class DedupHit:
    """The closest existing lesson: in memory (a path), pending or rejected (a candidate id)."""

    kind: Literal["memory", "pending", "rejected"]
    ref: str
    score: float
    text: str


@dataclass(frozen=True, slots=True)
class SecretFinding:
    """A secret found in text: which rule and where. Never carries the secret itself."""

    rule: str
    start: int
    end: int


def candidate_id(session: str, quote: str, claim: str) -> str:
    """A stable id for a candidate: the same session, quote and claim give the same id."""
    digest = hashlib.sha256(f"{session}\x00{quote.strip()}\x00{claim.strip()}".encode()).hexdigest()
    return "c" + digest[:11]


@dataclass(slots=True)
class Candidate:
    """A candidate as the ledger holds it: the raw proposal plus its evidence and gate results."""

    id: str
    session: str
    project: str
    transcript: str
    claim: str
    why: str
    how_to_apply: str
    type: str
    scope: str
    quote: str
    extractor: str
    model: str | None
    status: str = "pending"
    provenance: str | None = None
    matches: list[Match] = field(default_factory=list)
    duplicate_of: str | None = None
    duplicate_kind: str | None = None
    duplicate_score: float | None = None
    secrets: list[str] = field(default_factory=list)
    corroborated: int = 0
    drop_reason: str | None = None
    cycle_id: int | None = None
    created_at: str | None = None
    updated_at: str | None = None
    duplicate_judged: str | None = None
    """What the model dedup judge said: ``same`` (it repeats ``duplicate_of``), ``distinct`` (none of
    the closest lessons says the same), or None (not judged)."""
    duplicate_reason: str | None = None
    """The judge's one-line reason, when it judged."""

    @property
    def verified_line(self) -> int | None:
        """The line of the preferred match, if verified."""
        return self.matches[0].line if self.matches else None

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["matches"] = [m.to_json() for m in self.matches]
        data["verified_line"] = self.verified_line
        return data


@dataclass(slots=True)
class QueueRow:
    """One pending proposal as a review queue lists it (cheap to build for 10,000 rows)."""

    id: str
    project: str
    session: str
    type: str
    claim: str
    provenance: str | None
    duplicate: bool
    corroborated: int
    secret: bool
    created_at: str


@dataclass(slots=True)
class FileRow:
    """One transcript file as the ledger's ``files`` table holds it."""

    path: str
    project: str
    session: str
    size: int | None
    lines: int
    dreamed_offset: int
    dreamed_lines: int
    updated_at: str
