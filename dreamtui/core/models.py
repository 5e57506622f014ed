"""Shared data types of the pipeline: digest turns, candidates, evidence, usage.

Plain dataclasses (and :class:`Turn`, a frozen msgspec struct), no behaviour beyond (de)serialisation,
so every module can import them.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, fields, is_dataclass
from pathlib import PurePath
from typing import Any, ClassVar, Literal

import msgspec

from dreamtui.core.repository import repository_name

Role = Literal["person", "assistant"]
Provenance = Literal["person", "assistant", "tool", "meta"]
MEMORY_TYPES: tuple[str, ...] = ("user", "feedback", "project", "reference")
REJECT_CATEGORIES: tuple[str, ...] = ("wrong", "duplicate", "not a lesson", "too specific", "secret", "other")


# -- JSON: the one serialisation of dataclasses (``--json`` output, stored JSON) ---------------------


JsonValue = str | int | float | bool | None | list["JsonValue"] | dict[str, "JsonValue"]


def jsonable(value: object) -> JsonValue:
    """``value`` as plain JSON values: a dataclass by its ``to_json`` (else its fields), lists, tuples
    and sets as lists, a mapping's values in turn, a path as text; anything else as it is."""
    if isinstance(value, msgspec.Struct):
        return jsonable(value.to_json() if hasattr(value, "to_json") else msgspec.structs.asdict(value))
    if is_dataclass(value) and not isinstance(value, type):
        to_json = getattr(value, "to_json", None)
        if to_json is not None:
            data: dict[str, JsonValue] = to_json()
            return data
        return {f.name: jsonable(getattr(value, f.name)) for f in fields(value)}
    if isinstance(value, dict):
        return {k: jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [jsonable(v) for v in value]
    if isinstance(value, PurePath):
        return str(value)
    return value  # type: ignore[return-value]  # str, int, float, bool, None (or what json.dumps is given)


class Jsonable:
    """A dataclass whose ``to_json()`` is its fields in declaration order, each made :func:`jsonable`.

    ``JSON_KEYS`` (fields or properties) replaces that order where a printed shape (``--json``) has
    its own; ``JSON_EXTRA`` names properties appended after the fields."""

    __slots__ = ()
    JSON_KEYS: ClassVar[tuple[str, ...] | None] = None
    JSON_EXTRA: ClassVar[tuple[str, ...]] = ()

    def to_json(self) -> dict[str, Any]:
        """The object as JSON values (see the class docstring)."""
        keys = self.JSON_KEYS or (*(f.name for f in fields(self)), *self.JSON_EXTRA)  # type: ignore[arg-type]
        return {key: jsonable(getattr(self, key)) for key in keys}


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
        """The JSON shape of ``dreamtui digest --json`` (hand-written: a msgspec struct, not a Jsonable
        dataclass, and the printed key order is not the field order)."""
        return dict(
            role=self.role,
            text=self.text,
            line=self.line,
            uuid=self.uuid,
            timestamp=self.timestamp,
            file=self.file,
            kind=self.kind,
        )


@dataclass(slots=True)
class RawRecord:
    """One raw line of a transcript as the evidence window shows it: its number, record type, time
    and texts, each with whose words it is (``person``, ``assistant``, ``tool``, ``meta``, or ``call``
    for a tool call)."""

    line: int
    type: str
    timestamp: str
    texts: list[tuple[str, str]]  # (role, text)
    oversized: bool = False
    broken: bool = False
    kind: str = ""  # a bookkeeping record's own type (hook_progress, hook_success, …)
    bookkeeping: bool = False
    """Not conversation (progress, attachments, snapshots…): folded, its line says its type."""
    folds: bool = False
    """Folded to one line when it is not the quote's (bookkeeping, and hook output)."""


@dataclass(slots=True)
class DigestStats(Jsonable):
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

    JSON_KEYS = (
        "bytes",
        "chars",
        "signal_pct",
        "skipped_lines",
        "lines",
        "malformed",
        "invalid_utf8",
        "oversized",
        "partial_tail",
        "replaced",
    )  # ``dreamtui digest --json``'s ``stats``


@dataclass(slots=True)
class Digest(Jsonable):
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
        """The project as a person names it: its repository's name (the main worktree's folder, so the
        worktrees of one repository are one project; ``core.repository.repository_name``), else the
        last part of ``cwd``, else the folder name made readable."""
        if self.cwd:
            name = repository_name(self.cwd)
            if name:
                return name
        return self.project.strip("-") or self.project

    def person_chars(self) -> int:
        """How many characters the person wrote (the depth signal)."""
        return sum(len(t.text) for t in self.turns if t.role == "person")

    JSON_KEYS = (
        "session",
        "project",
        "project_name",
        "cwd",
        "files",
        "turns",
        "stats",
    )  # ``dreamtui digest --json``


@dataclass(slots=True)
class Usage(Jsonable):
    """Model usage of an extraction or a cycle."""

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    cost_usd: float = 0.0
    """What the model's client reported the calls cost (Claude Code's ``total_cost_usd``, at API
    prices; not billed on a subscription); 0 where it reports none (the API path)."""

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.calls + other.calls,
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cached_tokens + other.cached_tokens,
            round(self.cost_usd + other.cost_usd, 6),
        )


@dataclass(slots=True)
class RawCandidate(Jsonable):
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


@dataclass(slots=True)
class ExtractionResult:
    """What one extractor run over one session returned."""

    session: str
    candidates: list[RawCandidate] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    error: str | None = None
    notes: list[str] = field(default_factory=list)
    malformed: int = 0  # proposals that did not fit the schema: dropped before the gate, counted here
    unsent: bool = False  # never sent (a budget, a usage limit or a refused login stopped it first): nothing spent, the session waits


@dataclass(frozen=True, slots=True)
class Match(Jsonable):
    """One place a quote was found in a raw transcript."""

    file: str
    line: int
    uuid: str | None
    timestamp: str | None
    provenance: Provenance
    copy: bool = False


@dataclass(slots=True)
class Verification(Jsonable):
    """The result of verifying a quote: every place it occurs, the best first."""

    verified: bool
    matches: list[Match] = field(default_factory=list)
    reason: str | None = None

    @property
    def best(self) -> Match | None:
        """The preferred place: an original (non-copy) record, person > assistant > meta > tool."""
        return self.matches[0] if self.matches else None


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


def candidate_id(session: str, quote: str, claim: str, project: str | None = None) -> str:
    """A stable id for a candidate: the same (project, session), quote and claim give the same id.
    Two projects' session files may share a name (``s.jsonl``), so the project is part of the key."""
    where = session if project is None else f"{project}\x00{session}"
    digest = hashlib.sha256(f"{where}\x00{quote.strip()}\x00{claim.strip()}".encode()).hexdigest()
    return "c" + digest[:11]


@dataclass(slots=True)
class Candidate(Jsonable):
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

    JSON_EXTRA = ("verified_line",)


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
    transcript: str = ""
    """The transcript file the proposal was made from (its session's main file)."""
    agent: str = ""
    """The agent that wrote that transcript (``Claude Code``, ``Codex CLI``; the services fill it in)."""
    agent_label: str = ""
    """The same agent in one short word (``Claude``, ``Codex``), as the queue's agent column shows it."""
