"""A dream cycle's statistics, typed: what each phase counted, stored as JSON in ``dream_cycles.stats``."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any


@dataclass(slots=True)
class CycleStats:
    """Every count a dream cycle records; ``None`` fields are left out of the stored JSON."""

    attempt: int = 1
    pid: int | None = None
    after_cycle: int | None = None
    interrupted_cycles: list[int] = field(default_factory=list)
    recovered: list[str] = field(default_factory=list)
    extractor: str = "-"
    model: str | None = None
    extractor_reason: str | None = None
    """Why this extractor runs (``auto: ANTHROPIC_API_KEY is set``), when the cycle chose it from the config."""
    # light sleep
    sessions_seen: int = 0
    sessions_new: int = 0
    sessions_deferred: int = 0
    sessions_digested: int = 0
    sessions_quiet: int = 0
    sessions_settled: int = 0
    person_chars: int = 0
    goodnight: bool = False
    unreadable_files: list[str] = field(default_factory=list)
    skipped_paths: list[str] = field(default_factory=list)
    skipped_count: int = 0
    records_repaired: int = 0
    sessions_older: int = 0
    """Sessions with new content written before the recent window: left for a back-fill."""
    window_since: str | None = None
    """The recent window's first day (a dream with a model), ``YYYY-MM-DD``."""
    # deep sleep
    sparks: int = 0
    covered: int = 0
    # branching and the gate
    branches: int = 0
    extraction_errors: int = 0
    failures: dict[str, int] = field(default_factory=dict)
    """The failed sessions per cause (their error up to its first parenthesis): what to fix first."""
    failed_sessions: list[str] = field(default_factory=list)
    """``session: error`` of each failed session (the first 20), one line each."""
    surfaced: int = 0
    verified: int = 0
    kept: int = 0
    kept_by_agent: dict[str, int] = field(default_factory=dict)
    """The proposals kept for review per agent whose session they came from (``Codex CLI``: 3)."""
    duplicates: int = 0
    suspected: int = 0
    auto_written: int = 0
    judged: int = 0
    judged_same: int = 0
    judged_distinct: int = 0
    judge_error: str | None = None
    dropped: dict[str, int] = field(default_factory=dict)
    batches_waiting: int = 0
    batch_sessions_collected: int = 0
    batch_submitted: str | None = None
    batch_sessions_submitted: int = 0
    sessions_waiting: int = 0
    """Sparks not sent this cycle (the daily token budget, a usage limit): they wait, nothing lost."""
    budget_stop: str | None = None
    """The line a stop at the daily token budget was told in (``daily_token_budget``)."""
    limit_resets_at: str | None = None
    """When the usage limit that stopped the cycle resets (ISO 8601), when it said."""
    # REM
    corroborated: int = 0
    review_path: str | None = None
    briefing_path: str | None = None
    briefing_commit: str | None = None
    briefing_status: str | None = None
    briefing_proposal: int | None = None
    briefing_lines: int = 0
    consolidation: dict[str, int] = field(default_factory=dict)
    """Consolidation proposals REM made, per kind (``update``, ``retire``, ``merge``; issue 26)."""
    consolidation_known: int = 0
    consolidation_error: str | None = None
    # model use and time
    model_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    cost_usd: float = 0.0
    seconds: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)
    """Keys this version does not know (written by another version): kept as they were."""

    @classmethod
    def from_json(cls, data: dict[str, Any] | None) -> CycleStats:
        """The stats stored in a ``dream_cycles`` row (missing keys take their defaults)."""
        data = dict(data or {})
        known = {f.name for f in fields(cls)} - {"extra"}
        values = {k: v for k, v in data.items() if k in known and v is not None}
        return cls(**values, extra={k: v for k, v in data.items() if k not in known})

    def to_json(self) -> dict[str, Any]:
        """The stats as stored (``None`` left out, so a partial update never erases a stored key)."""
        # hand-written: ``None`` is left out and the keys of another version (``extra``) are kept
        out = {k: v for k, v in asdict(self).items() if v is not None and k != "extra"}
        return {**self.extra, **out}

    def count_failure(self, session: str, error: str) -> None:
        """One session's extraction failed with ``error``: counted, grouped by cause, and kept as a line."""
        self.extraction_errors += 1
        cause = failure_cause(error)
        self.failures[cause] = self.failures.get(cause, 0) + 1
        if len(self.failed_sessions) < 20:
            self.failed_sessions.append(f"{session[:8]}: {' '.join(error.split())[:300]}")

    def failure_summary(self) -> str:
        """``3 sessions: cannot reach the model server at … (2); the model's answer is not JSON (1)``."""
        causes = "; ".join(
            f"{cause} ({n})" for cause, n in sorted(self.failures.items(), key=lambda kv: -kv[1])
        )
        n = self.extraction_errors
        return f"{n} session{'s' if n != 1 else ''}: {causes}" if causes else f"{n} session(s)"

    def count_gate(
        self,
        *,
        surfaced: int,
        kept: int,
        duplicates: int,
        suspected: int,
        judged: int,
        judged_same: int,
        judged_distinct: int,
        judge_error: str | None,
    ) -> None:
        """Add one session's gate run."""
        self.surfaced += surfaced
        self.kept += kept
        self.duplicates += duplicates
        self.suspected += suspected
        self.judged += judged
        self.judged_same += judged_same
        self.judged_distinct += judged_distinct
        if judge_error and not self.judge_error:
            self.judge_error = judge_error


def failure_cause(error: str) -> str:
    """What an extraction error is about, without the details that differ from session to session:
    its text before the first parenthesis, without a ``part N of M:`` prefix."""
    text = " ".join(str(error).split())
    if text.startswith("part ") and ": " in text:
        text = text.split(": ", 1)[1]
    cause = text.split(" (", 1)[0].rstrip(" :;,.")
    return cause[:160] or "unknown error"
