"""The dream cycle: Light sleep → Deep sleep → Branching → REM → Wake, recorded in ``dream_cycles``.

- **Light sleep** finds the sessions (main file + sub-agent files) with content not yet dreamed,
  digests only the new part, and defers sessions modified in the last ``config.quiet_minutes``
  unless a goodnight was said. When no session has ``config.min_person_chars`` of a person's words,
  the cycle wakes early: a *shallow* sleep (completed). A quiet session's words wait for the next
  cycle and add up, unless the session was last written more than a day ago (it is *settled*: marked
  dreamed without extraction).
- **Deep sleep** looks up, for each session, the existing memories its person turns touch (the dedup
  index). A session whose every substantial person turn is already a memory is *covered*: marked
  dreamed without extraction. The others are **sparks**; the closest memories are their context.
- **Branching** runs one extraction per spark in parallel (``config.concurrency``), then the gate
  (verify, dedup, secret scan, store). The extracted byte ranges go in ``extractions`` and the
  session's ``dreamed_offset`` advances in the same transaction: content is extracted once.
  With an approved promotion, eligible candidates are auto-written.
- **REM** converges: lessons that recur across sessions are corroborated (the gate bumps the
  original's ``corroborated`` as it stores the repeat; REM counts them), the day's review file is
  written, and ``briefing.md`` is rewritten and committed.
- **Wake** composes the waking message from the cycle's stats.

One full cycle per project (``chat_id``; ``*`` when every project is dreamed at once) per date. A
failed cycle may be retried the same date (its row is reused). After it, a person's explicit dream
runs an *on-demand* pass over just the new content (no REM; ``kind = 'on-demand'``, see
:func:`plan_dream`); the scheduler and a goodnight never do. Two cycles never run at once: a
:class:`~dreamtui.core.dream.lock.CycleLock` plus the table's uniqueness for full cycles.
"""

from __future__ import annotations

import hashlib
import heapq
import os
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date as Date
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dreamtui.core import clock
from dreamtui.core.config import Config
from dreamtui.core.dream.cycle_stats import CycleStats
from dreamtui.core.dream.lock import CycleLock
from dreamtui.core.errors import ConfigError, CycleBusy, DreamError, MemoryRepoError, TranscriptError
from dreamtui.core.files import Skipped, is_dir
from dreamtui.core.ingest.goodnight import said_goodnight
from dreamtui.core.ledger import Ledger, batches, cycles, offsets, record_extraction, record_failed_extraction
from dreamtui.core.models import Digest, DigestStats, ExtractionResult, Jsonable, Turn, Usage
from dreamtui.core.secrets import redact

if TYPE_CHECKING:
    from dreamtui.core.extract.base import Extractor
    from dreamtui.core.gate import pipeline as gate
    from dreamtui.core.gate.dedup import DedupIndex
    from dreamtui.core.ingest.digest import DigestState
    from dreamtui.core.ingest.projects import ProjectMap
    from dreamtui.core.ingest.tail import TailRead

ALL_PROJECTS = "*"
FULL = "full"
ON_DEMAND = "on-demand"
YIELD_FLOOR_MESSAGE = "DREAM IS PROPOSING NOTHING — extractor may be mis-tuned or the corpus is saturated."
YIELD_FLOOR_CYCLES = 3
"""This many completed deep cycles in a row with zero new candidates raise the yield floor."""
SETTLED_SECONDS = 24 * 3600
"""A quiet session not written to for this long is marked dreamed: its few words will not add up."""
SUBSTANTIAL_TURN_CHARS = 40
"""A person turn at least this long counts when deciding whether memories already cover a session."""
RECALL_TURNS = 60
"""At most this many person turns are looked up in the dedup index per session (bounded cost)."""
CONTEXT_MEMORIES = 5
"""At most this many closest memories go to the extractor as context."""
CARRIED = (
    "branches",
    "extraction_errors",
    "surfaced",
    "verified",
    "kept",
    "duplicates",
    "suspected",
    "judged",
    "judged_same",
    "judged_distinct",
    "auto_written",
    "corroborated",
    "model_calls",
    "input_tokens",
    "output_tokens",
    "cached_tokens",
    "cost_usd",
)
"""Counts a retry adds from the failed attempt of the same date."""
BRANCH_COUNTS = (
    "branches",
    "extraction_errors",
    "surfaced",
    "verified",
    "kept",
    "duplicates",
    "suspected",
    "auto_written",
    "judged",
    "judged_same",
    "judged_distinct",
    "judge_error",
    "batches_waiting",
    "batch_sessions_collected",
    "batch_submitted",
    "batch_sessions_submitted",
)
"""What the branch phase counts (taken into the cycle's stats when branching is done)."""
PHASE_TITLES = {
    "light": "Light sleep",
    "deep": "Deep sleep",
    "branch": "Branching",
    "rem": "REM",
    "wake": "Wake",
}

Progress = Callable[[str, str, "float | None"], None]


class CycleAlreadyDone(CycleBusy):
    """A cycle for this project and date has already completed."""


class NothingNew(DreamError):
    """A person asked to dream after the day's full cycle and no transcript has new content: nothing to do."""


class CycleFailed(DreamError):
    """A cycle failed; its record says why and it may be retried the same date."""

    def __init__(self, message: str, record: CycleRecord | None = None) -> None:
        super().__init__(message)
        self.record = record


# -- records -------------------------------------------------------------------------------------


@dataclass(slots=True)
class CycleRecord(Jsonable):
    """One row of ``dream_cycles``: a cycle's identity, outcome, phases and stats."""

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


def _record(row: cycles.CycleRow) -> CycleRecord:
    return CycleRecord(
        id=row.id,
        chat_id=row.chat_id,
        date=row.date,
        status=row.status,
        started_at=row.started_at,
        completed_at=row.completed_at,
        error_message=row.error_message,
        trigger=row.trigger,
        depth=row.depth,
        phases=row.phases,
        stats=CycleStats.from_json(row.stats),
        kind=row.kind,
    )


def get_cycle(ledger: Ledger, cycle_id: int) -> CycleRecord | None:
    """One cycle by id."""
    row = cycles.get(ledger, cycle_id)
    return _record(row) if row else None


def find_cycle(ledger: Ledger, chat_id: str, date: str) -> CycleRecord | None:
    """The full cycle of ``chat_id`` (a project, or ``*``) on ``date`` (YYYY-MM-DD), if any."""
    row = cycles.find_full(ledger, chat_id, date)
    return _record(row) if row else None


def list_cycles(ledger: Ledger, limit: int | None = 20) -> list[CycleRecord]:
    """Cycles, newest first."""
    return [_record(r) for r in cycles.listed(ledger, limit)]


def _begin(ledger: Ledger, chat_id: str, day: str, trigger: str) -> tuple[int, dict[str, Any]]:
    """Insert (or reuse a failed / stale running) row; returns (id, the earlier attempt's stats).

    Call with the lock held.
    """
    with ledger.write():
        row = cycles.find_full(ledger, chat_id, day)
        started = clock.now_iso()
        if row is None:
            cycle_id = cycles.begin(
                ledger, chat_id, day, started, trigger, {"attempt": 1, "pid": os.getpid()}
            )
            return cycle_id, {"attempt": 1}
        if _done(row.status, row.depth, CycleStats.from_json(row.stats)):
            who = "every project" if chat_id == ALL_PROJECTS else chat_id
            raise CycleAlreadyDone(
                f"already dreamed {who} on {day} (cycle #{row.id}); one cycle per project per date"
            )
        # failed, 'running' left by a killed process (we hold the lock, so nobody runs it), or a
        # shallow sleep that only deferred sessions still being written: run it again
        prior = dict(row.stats)
        prior.pop("pid", None)
        prior["depth"] = row.depth
        attempt = int(prior.get("attempt", 1) or 1) + 1
        cycles.restart(ledger, row.id, started, trigger, {"attempt": attempt, "pid": os.getpid()})
        prior["next_attempt"] = attempt
        return int(row.id), prior


def _done(status: str, depth: str | None, stats: CycleStats) -> bool:
    """A full cycle that may not run again this date: completed, unless it was a shallow sleep that
    only deferred sessions still being written (that one runs again)."""
    deferred_only = status == "completed" and depth == "shallow" and stats.sessions_deferred > 0
    return status == "completed" and not deferred_only


def _begin_on_demand(ledger: Ledger, chat_id: str, day: str) -> int:
    """Insert the row of an on-demand pass (call with the lock held)."""
    return cycles.begin(
        ledger, chat_id, day, clock.now_iso(), "manual", {"attempt": 1, "pid": os.getpid()}, kind=ON_DEMAND
    )


@dataclass(frozen=True, slots=True)
class DreamPlan:
    """What a person's explicit dream (``dreamtui dream``, ``d`` in the app) does now.

    ``kind`` is ``full`` (the date's one full cycle, or the retry of a failed one), ``on-demand`` (the
    full cycle covering this scope is done: a short pass over the new content, no REM) or ``nothing``
    (the full cycle is done and no transcript has new content)."""

    kind: str
    day: str
    covering: CycleRecord | None = None
    projects: tuple[str, ...] = ()

    def describe(self, project: str | None = None) -> str:
        """One line saying what ``d`` / ``dreamtui dream`` will do."""
        if self.kind == FULL:
            return f"the full dream cycle of {self.day}"
        assert self.covering is not None
        since = f"cycle #{self.covering.id} (the full cycle of {self.day})"
        if self.kind == ON_DEMAND:
            return f"an on-demand pass over what is new since {since}"
        who = project or "any project"
        return f"nothing new in {who} since {since}: nothing to dream"


def covering_cycle(ledger: Ledger, project: str | None, day: str) -> CycleRecord | None:
    """The done full cycle of ``day`` that covers ``project`` (its own, or the one of every project);
    None when a full cycle is still to run (or to retry) for it."""
    own = find_cycle(ledger, project or ALL_PROJECTS, day)
    if own is not None:
        return own if _done(own.status, own.depth, own.stats) else None
    if project is not None:
        every = find_cycle(ledger, ALL_PROJECTS, day)
        if every is not None and _done(every.status, every.depth, every.stats):
            return every
    return None


def plan_dream(
    config: Config, ledger: Ledger, project: str | None = None, date: Date | str | None = None
) -> DreamPlan:
    """What a person's explicit dream for ``project`` (every project when None) would do now.

    The first cycle of a date is the one full cycle (with REM); after it, an explicit dream runs an
    on-demand pass when the scope has new content, and nothing otherwise. The same rule with and
    without a project; the CLI, the app's ``d`` and the Sessions screen's hint all ask this."""
    day = _parse_date(date)
    if project is not None:  # a transcript folder names its project (a worktree's: its repository's)
        project = (
            project_map(config, ledger).resolve(project, transcript_folders(config.transcripts)) or project
        )
    covering = covering_cycle(ledger, project, day)
    if covering is None:
        return DreamPlan(FULL, day)
    new = [p for p in projects_with_new_content(config, ledger) if project is None or p == project]
    return DreamPlan(ON_DEMAND if new else "nothing", day, covering, tuple(new))


def fail_interrupted(ledger: Ledger) -> list[int]:
    """Mark every cycle still ``running`` as failed: call with the cycle lock held, so none of them
    can still be running (the process that ran it was killed). Returns their ids."""
    failed = []
    with ledger.write():
        for row in cycles.running(ledger):
            pid = row.stats.get("pid")
            who = f"the process running it (pid {pid})" if pid else "the process running it"
            cycles.fail(
                ledger,
                row.id,
                clock.now_iso(),
                f"interrupted: {who} ended before it finished (started "
                f"{row.started_at}); marked failed when the next cycle started",
            )
            failed.append(int(row.id))
    return failed


def _mark_deep(ledger: Ledger, cycle_id: int) -> None:
    """Say in the row, while it runs, that the cycle went past light sleep: if it is killed, the
    retry knows to finish its REM."""
    cycles.mark_deep(ledger, cycle_id)


def _save_progress(
    ledger: Ledger, cycle_id: int, depth: str | None, phases: list[dict[str, Any]], stats: CycleStats
) -> None:
    """Keep the running row's phases and counts current, so a killed cycle's work still counts in
    the retry's totals (with its pid, which says who ran it)."""
    cycles.save_progress(
        ledger, cycle_id, depth if depth in ("deep", "shallow") else None, phases, stats.to_json()
    )


def _finish(
    ledger: Ledger,
    cycle_id: int,
    status: str,
    depth: str | None,
    phases: list[dict[str, Any]],
    stats: CycleStats,
    error: str | None,
) -> None:
    cycles.finish(ledger, cycle_id, status, clock.now_iso(), error, depth, phases, stats.to_json())


# -- yield floor and banners ----------------------------------------------------------------------


def yield_floor_active(ledger: Ledger) -> bool:
    """The last :data:`YIELD_FLOOR_CYCLES` completed deep cycles all surfaced zero new candidates.

    Shallow cycles (woke at light sleep: nothing worth extracting) and failed cycles are not counted
    either way; a deep cycle with no sparks counts as zero (the corpus is saturated).
    """
    rows = cycles.last_deep_full(ledger, YIELD_FLOOR_CYCLES)
    if len(rows) < YIELD_FLOOR_CYCLES:
        return False
    return all(CycleStats.from_json(r.stats).kept == 0 for r in rows)


def banner_lines(config: Config, ledger: Ledger | None, check_promotion: bool = False) -> list[str]:
    """Warnings every command and the app show: the yield floor, the index ceiling, auto-write status."""
    lines: list[str] = []
    if ledger is not None:
        try:
            if yield_floor_active(ledger):
                lines.append(YIELD_FLOOR_MESSAGE)
        except Exception:  # a broken ledger is reported by the command itself
            pass
    lines.extend(_ceiling_lines(config))
    if ledger is not None:
        try:
            from dreamtui.core.dream.promotion import promotion_banner

            line = promotion_banner(config, ledger, check=check_promotion)
        except Exception:  # a broken ledger is reported by the command itself
            line = None
        if line:
            lines.append(line)
    return lines


def banner_lines_for(config: Config) -> list[str]:
    """:func:`banner_lines` without creating anything: the ledger is opened only when it exists."""
    ledger = None
    try:
        if config.ledger_path.is_file():
            ledger = Ledger(config.ledger_path)
        return banner_lines(config, ledger, check_promotion=True)
    except Exception:
        return []
    finally:
        if ledger is not None:
            ledger.close()


def _ceiling_lines(config: Config) -> list[str]:
    """The index-ceiling warning of ``core/memory.py`` (from 85% of what Claude Code loads)."""
    try:
        from dreamtui.core.memory import layout as memory

        message = memory.ceiling_warning(memory.ceiling_status(config.memory))
    except Exception:  # a missing or unreadable memory folder has no ceiling to warn about
        return []
    return [message] if message else []


# -- the waking message ---------------------------------------------------------------------------


def waking_message(record: CycleRecord) -> str:
    """What a person reads on waking: phases, branches, model use, candidates, time taken.

    Redacted (an error or a model's failure message may quote transcript text)."""
    s = record.stats
    who = "every project" if record.chat_id == ALL_PROJECTS else record.chat_id
    depth = {"shallow": "shallow sleep", "deep": "deep sleep"}.get(record.depth or "", record.depth or "-")
    if record.on_demand:
        after = f" after cycle #{s.after_cycle}" if s.after_cycle else ""
        out = [
            f"On-demand dream pass #{record.id} for {who} on {record.date}{after}: {record.status}, {depth}."
        ]
    else:
        out = [
            f"Dream cycle #{record.id} for {who} on {record.date} ({record.trigger}): {record.status}, {depth}."
        ]
    if record.error_message:
        out.append(f"Error: {record.error_message}")
    ran = [PHASE_TITLES.get(p["name"], p["name"]) for p in record.phases]
    out.append("Phases: " + (" → ".join(ran) if ran else "none"))
    if s.interrupted_cycles:
        ids = ", ".join(f"#{i}" for i in s.interrupted_cycles)
        out.append(f"Interrupted: cycle {ids} had been killed while running; marked failed.")
    for notice in s.recovered:
        out.append(f"Recovered: {notice}")
    out.append(
        f"Sessions: {s.sessions_new} with new content, {s.sessions_deferred} deferred "
        f"(still being written), {s.sessions_quiet} too quiet "
        f"({s.sessions_settled} of them settled); "
        f"{s.sparks} sparks, {s.covered} already covered by memory."
    )
    if s.batch_submitted or s.batch_sessions_collected or s.batches_waiting:
        out.append(
            f"Batch: {s.batch_sessions_collected} session(s) collected from earlier batches"
            + (f", {s.batches_waiting} batch(es) still processing" if s.batches_waiting else "")
            + (
                f"; submitted {s.batch_submitted} with {s.batch_sessions_submitted} session(s), "
                "collected by a later cycle"
                if s.batch_submitted
                else ""
            )
            + "."
        )
    if s.skipped_count:
        shown = "; ".join(s.skipped_paths[:3])
        more = s.skipped_count - min(3, len(s.skipped_paths))
        out.append(
            f"Skipped {s.skipped_count} path(s) that cannot be read as transcripts (the rest were "
            f"dreamed): {shown}{f'; and {more} more' if more > 0 else ''}."
        )
    if s.records_repaired:
        out.append(
            f"Repaired {s.records_repaired} record(s) with bytes that are not UTF-8 or a byte-order "
            "mark (kept, bad bytes read as U+FFFD)."
        )
    if s.unreadable_files:
        files = s.unreadable_files
        out.append(
            f"Could not read {len(files)} transcript file(s) (permissions?), e.g. {files[0]}; "
            "they are tried again next cycle."
        )
    if record.depth == "shallow" and s.sessions_deferred:
        out.append(
            "Deferred sessions are still being written: dream again once they have been quiet "
            "for a few minutes (allowed the same date), or say good night in the session."
        )
    out.append(
        f"Branches: {s.branches} ({s.extraction_errors} failed), extractor "
        f"{s.extractor}{' / ' + s.model if s.model else ''}"
        + (f" ({s.extractor_reason})" if s.extractor_reason else "")
        + "."
    )
    if s.extractor == "heuristic":
        from dreamtui.core.extract.choose import THIN_QUEUE

        out.append(f"Extractor: {THIN_QUEUE}.")
    out.append(
        f"Model: {s.model_calls} calls; tokens {s.input_tokens} in, "
        f"{s.output_tokens} out, {s.cached_tokens} cached"
        + (f"; cost ${s.cost_usd:.4f} as Claude Code reports it." if s.cost_usd else ".")
    )
    total_dropped = sum(s.dropped.values())
    reasons = ", ".join(f"{k} {v}" for k, v in sorted(s.dropped.items()))
    out.append(
        f"Candidates: {s.surfaced} surfaced, {s.verified} verified, "
        f"{total_dropped} dropped{' (' + reasons + ')' if reasons else ''}, "
        f"{s.duplicates} duplicates, {s.kept} new for review"
        + (
            f" ({s.suspected} of them a suspected duplicate, shown beside what it may repeat)"
            if s.suspected
            else ""
        )
        + (f", {s.auto_written} auto-written" if s.auto_written else "")
        + "."
    )
    if s.judged or s.judge_error:
        out.append(
            f"Dedup judge (model): {s.judged} judged, {s.judged_same} the same lesson "
            f"as one in memory or waiting, {s.judged_distinct} new"
            + (f"; {s.judge_error}" if s.judge_error else "")
            + "."
        )
    if s.corroborated:
        n = s.corroborated
        out.append(f"Corroborated: {n} {'lesson recurs' if n == 1 else 'lessons recur'} across sessions.")
    if s.review_path:
        out.append(f"Review: {s.review_path}")
    out.extend(_consolidation_lines(s))
    out.extend(_briefing_lines(s))
    if record.on_demand:
        out.append("No REM on demand: the review file and the briefing wait for the next full cycle.")
    out.append(f"Took {s.seconds:.1f} s.")
    return redact("\n".join(out))


def consolidation_summary(counts: dict[str, int]) -> str:
    """``1 update, 0 retire, 2 merge`` (every kind, in that order)."""
    return ", ".join(f"{counts.get(kind, 0)} {kind}" for kind in ("update", "retire", "merge"))


def _consolidation_lines(s: CycleStats) -> list[str]:
    """The waking message's word on REM's consolidation pass (issue 26), when it proposed or failed."""
    made = sum(s.consolidation.values())
    if not made and not s.consolidation_error:
        return []
    line = f"Consolidation: {consolidation_summary(s.consolidation)} proposed for review"
    line += " (`dreamtui consolidate` lists them; nothing changes before you accept)" if made else ""
    if s.consolidation_known:
        line += f"; {s.consolidation_known} already proposed before"
    if s.consolidation_error:
        line += f"; the model pass failed: {s.consolidation_error}"
    return [line + "."]


def _briefing_lines(s: CycleStats) -> list[str]:
    """The waking message's word on the briefing: a version waiting for review, auto-written, or unchanged."""
    if s.briefing_status == "pending":
        return [
            f"Briefing: a new version (#{s.briefing_proposal}) waits for your review: "
            "`dreamtui briefing --pending` shows the diff, `--accept` commits it, `--reject --reason` "
            "keeps it out (or 4 in the app)."
        ]
    if s.briefing_status == "auto-written":
        sha = (s.briefing_commit or "")[:10]
        return [
            f"Briefing: {s.briefing_path} (auto-written #{s.briefing_proposal}, commit {sha}; "
            "review it with `dreamtui briefing --pending`)."
        ]
    if s.briefing_status == "unchanged":
        return ["Briefing: unchanged."]
    return []


@dataclass(slots=True)
class FileRange:
    """The not-yet-dreamed part of one file of a session, and how it was read."""

    path: str
    start_offset: int
    start_line: int
    end_offset: int
    end_line: int
    content_hash: str
    read: TailRead | None = None  # persisted when the range is dreamed
    state: DigestState | None = None


@dataclass(slots=True, eq=False)
class SessionWork:
    """One session with new content as it moves through the phases."""

    project: str
    session: str
    files: list[Path]
    ranges: list[FileRange]
    digest: Digest
    mtime: float
    goodnight: bool = False
    deferred: bool = False
    memories: tuple[str, ...] = ()
    spark: bool = False
    covered: bool = False

    @property
    def person_chars(self) -> int:
        return self.digest.person_chars()


def _parse_date(value: Date | str | None) -> str:
    if value is None:
        return clock.today().isoformat()
    if isinstance(value, Date):
        return value.isoformat()
    try:
        return Date.fromisoformat(str(value).strip()).isoformat()
    except ValueError as exc:
        raise ConfigError(f"--date must be YYYY-MM-DD, not {value!r}") from exc


def run_cycle(
    config: Config,
    ledger: Ledger,
    project: str | None = None,
    date: Date | str | None = None,
    trigger: str = "manual",
    progress: Progress | None = None,
    extractor: Any = None,
) -> CycleRecord:
    """Run one dream cycle for ``project`` (every project with new content when None) as of ``date``.

    Raises :class:`CycleBusy` when another cycle holds the lock, :class:`CycleAlreadyDone` when
    this project and date already completed (both do no work), :class:`CycleFailed` when a phase
    fails (the record is kept as ``failed`` and may be retried). ``progress(phase, message,
    fraction)`` is called as the phases advance. ``extractor`` overrides ``make_extractor(config)``.

    A person's explicit dream (``trigger="manual"``) after the date's full cycle (:func:`plan_dream`)
    is an on-demand pass over the new content instead (Light sleep, Deep sleep, Branching, Wake; no
    REM), recorded with ``kind = 'on-demand'``; with nothing new it raises :class:`NothingNew`. The
    scheduler and a goodnight never run one: for them a done date stays :class:`CycleAlreadyDone`.
    """
    day = _parse_date(date)
    if not is_dir(config.transcripts):
        what = "is not a folder" if os.path.lexists(config.transcripts) else "does not exist"
        raise TranscriptError(f"transcripts folder {config.transcripts} {what} (see --transcripts)")
    from dreamtui.core.memory.layout import bare_repository_message, is_bare_repository

    if is_bare_repository(config.memory):  # refused before anything is read, recorded or written
        raise MemoryRepoError(bare_repository_message(config.memory))
    reason = None
    if extractor is None:  # a missing API key or command is a clear error before anything is recorded
        extractor, reason = _make_extractor(config)
    with CycleLock(config.lock_path):
        pmap = project_map(config, ledger, remember=True)
        # a transcript folder or a project key names the project; a worktree's folder, its repository's
        if project is not None:
            named = project
            key = None
            if named not in {"", ".", ".."} and Path(named).name == named:
                key = pmap.resolve(named, transcript_folders(config.transcripts))
            if key is None:
                raise ConfigError(f"no project {named!r} under {config.transcripts}")
            project = key
        chat_id = project or ALL_PROJECTS
        rekeyed = _rekey_old_rows(config, ledger, pmap)
        interrupted = fail_interrupted(ledger)
        recovered = _recover_memory(config, ledger)
        if (
            trigger != "manual"
        ):  # the scheduler, a goodnight: the date's full cycle of every project covers P too
            every = covering_cycle(ledger, project, day)
            if every is not None and every.chat_id != chat_id:
                raise CycleAlreadyDone(
                    f"already dreamed {project} on {day} (cycle #{every.id}, every project); "
                    "one cycle per project per date"
                )
        plan = plan_dream(config, ledger, project, day) if trigger == "manual" else DreamPlan(FULL, day)
        if plan.kind == "nothing":
            raise NothingNew(plan.describe(project))
        prior: dict[str, Any]
        if plan.kind == ON_DEMAND:
            cycle_id, prior = _begin_on_demand(ledger, chat_id, day), {}
        else:
            cycle_id, prior = _begin(ledger, chat_id, day, trigger)
        run = _Cycle(config, ledger, cycle_id, project, day, trigger, progress, extractor)
        run.projects = pmap
        run.stats.extractor_reason = reason
        for line in rekeyed:
            run.progress(line)
        run.on_demand = plan.kind == ON_DEMAND
        run.prior = prior if prior.get("next_attempt") else {}
        run.stats.attempt = int(prior.get("next_attempt", 1))
        if run.on_demand:
            run.stats.after_cycle = plan.covering.id if plan.covering else None
        if interrupted:
            run.stats.interrupted_cycles = interrupted
        if recovered:
            run.stats.recovered = recovered
        try:
            run.run()
        except BaseException as exc:
            message = f"{PHASE_TITLES.get(run.current, run.current)}: {_one_line(exc)}"
            run.close_phase()
            # what earlier failed attempts extracted stays in the row, so the next retry still
            # finishes their REM and counts it, however many attempts fail in between
            run._carry_prior()
            depth = "deep" if run.prior.get("depth") == "deep" else run.depth
            run.stats.seconds = round(time.monotonic() - run.t0, 3)
            _finish(ledger, cycle_id, "failed", depth, run.phases, run.stats, message)
            record = get_cycle(ledger, cycle_id)
            if isinstance(exc, Exception):
                raise CycleFailed(f"dream cycle failed in {message}; run it again to retry", record) from exc
            raise
        _finish(ledger, cycle_id, "completed", run.depth, run.phases, run.stats, None)
    record = get_cycle(ledger, cycle_id)
    assert record is not None
    return record


def _recover_memory(config: Config, ledger: Ledger) -> list[str]:
    """What an interrupted run left in the memory repository, put right before this cycle starts
    (a stale ``index.lock``, an uncommitted or staged review file or briefing): one notice each."""
    from dreamtui.core.memory.generated import reconcile_generated

    return reconcile_generated(config, ledger)


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


class _Cycle:
    """The state of one running cycle; each phase is a method."""

    def __init__(
        self,
        config: Config,
        ledger: Ledger,
        cycle_id: int,
        project: str | None,
        day: str,
        trigger: str,
        progress: Progress | None,
        extractor: Any,
    ) -> None:
        self.config = config
        self.ledger = ledger
        self.id = cycle_id
        self.project = project
        self.day = day
        self.trigger = trigger
        self._progress = progress
        self._extractor = extractor
        self.t0 = time.monotonic()
        self.phases: list[dict[str, Any]] = []
        self.current = "light"
        self._phase: dict[str, Any] | None = None
        self.depth: str | None = None
        self.usage = Usage()
        self.dropped: Counter[str] = Counter()
        self.stats = CycleStats()
        self.work: list[SessionWork] = []
        self.kept_ids: list[str] = []
        self.corroborated: set[str] = set()
        self.prior: dict[str, Any] = {}
        self._carried = False
        self.index: DedupIndex | None = None
        self.on_demand = False
        self.projects: ProjectMap = project_map(config, ledger, remember=True)

    # -- bookkeeping ----------------------------------------------------------------------------

    def progress(self, message: str, fraction: float | None = None) -> None:
        if self._progress is not None:
            try:
                self._progress(self.current, message, fraction)
            except Exception:  # a broken display never breaks a cycle
                pass

    def open_phase(self, name: str) -> None:
        self.close_phase()
        self.current = name
        self._phase = {"name": name, "started": clock.now_iso(), "ended": None, "counts": {}}
        self.phases.append(self._phase)
        self.progress(PHASE_TITLES[name], 0.0)

    def close_phase(self, **counts: Any) -> None:
        if self._phase is None:
            return
        self._phase["counts"].update(counts)
        self._phase["ended"] = clock.now_iso()
        self._phase = None
        _save_progress(self.ledger, self.id, self.depth, self.phases, self.stats)

    # -- the phases -----------------------------------------------------------------------------

    def run(self) -> None:
        self.extractor = self._extractor
        self.stats.extractor = getattr(self.extractor, "name", "?")
        self.stats.model = getattr(self.extractor, "model", None)
        self.light()
        if self.depth == "shallow" and self.prior.get("depth") == "deep":
            # an earlier attempt today got past light sleep and then failed: what it extracted is
            # marked dreamed, so finish its REM (review, briefing) now
            self.depth = "deep"
        if self.depth == "shallow" and not self.on_demand and self._open_batches():
            self.depth = "deep"  # a batch submitted by an earlier cycle may have results to collect
        if self.depth == "shallow":
            self.wake()
            return
        self.depth = "deep"
        _mark_deep(self.ledger, self.id)
        self.deep()
        self.branch()
        if not self.on_demand:  # an on-demand pass never dreams a second REM the same date
            self.rem()
        self.wake()

    def light(self) -> None:
        self.open_phase("light")
        skipped: list[Skipped] = []
        groups = _session_groups(self.config.transcripts, self.project, skipped, self.projects)
        for skip in skipped:  # one bad folder or FIFO never fails the cycle: the others are dreamed
            self.progress(skip.notice)
        self.stats.sessions_seen = len(groups)
        now = clock.now().timestamp()
        quiet = self.config.quiet_minutes * 60.0
        unreadable: list[str] = []
        for i, ((project, session), files) in enumerate(groups.items()):
            self.progress(
                f"reading {project}/{session[:8]} (session {i + 1}/{len(groups)})", i / max(1, len(groups))
            )
            work = _new_content(self.ledger, project, session, files, unreadable)
            if work is None:
                continue
            work.goodnight = said_goodnight(work.digest.turns)
            if not (self.trigger == "goodnight" or work.goodnight) and now - work.mtime < quiet:
                work.deferred = True
            self.work.append(work)
        ready = [w for w in self.work if not w.deferred]
        deep_enough = [w for w in ready if w.person_chars >= self.config.min_person_chars]
        settled = [
            w
            for w in ready
            if w.person_chars < self.config.min_person_chars and now - w.mtime >= SETTLED_SECONDS
        ]
        for work in settled:  # finished long ago and still too quiet: no words will be added to it
            self._mark_dreamed(work, None, 0)
        self._mark_quiet(
            [w for w in ready if w.person_chars < self.config.min_person_chars and w not in settled]
        )
        st = self.stats
        st.sessions_new = len(self.work)
        st.sessions_deferred = sum(w.deferred for w in self.work)
        st.sessions_digested = len(ready)
        st.sessions_quiet = len(ready) - len(deep_enough)
        st.sessions_settled = len(settled)
        st.person_chars = sum(w.person_chars for w in ready)
        st.goodnight = any(w.goodnight for w in self.work)
        st.unreadable_files = unreadable[:20]
        st.skipped_paths = [skip.notice for skip in skipped[:20]]
        st.skipped_count = len(skipped)
        st.records_repaired = sum(w.digest.stats.replaced for w in self.work)
        self.work = deep_enough
        signal = "deeper" if deep_enough else "wake"
        if not deep_enough:
            self.depth = "shallow"
        self.close_phase(
            sessions_seen=len(groups),
            sessions_new=st.sessions_new,
            deferred=st.sessions_deferred,
            quiet=st.sessions_quiet,
            person_chars=st.person_chars,
            signal=signal,
        )

    def deep(self) -> None:
        self.open_phase("deep")
        self.index = index = _dedup_index(self.config, self.ledger)
        from dreamtui.core.gate import (
            pipeline as gate,  # the gate (and the dedup it carries) loads only for a deep sleep
        )

        scopes = gate.Scopes(self.config.memory, self.ledger)
        for i, work in enumerate(self.work):
            self.progress(
                f"recalling memories for {work.session[:8]} (session {i + 1}/{len(self.work)})",
                i / max(1, len(self.work)),
            )
            work.memories, work.covered = _recall(index, work.digest, scopes)
            work.spark = not work.covered
        sparks = [w for w in self.work if w.spark]
        covered = [w for w in self.work if w.covered]
        for work in covered:
            self._mark_dreamed(work, None, 0)
        self.stats.sparks, self.stats.covered = len(sparks), len(covered)
        self.close_phase(sparks=len(sparks), covered=len(covered))

    def branch(self) -> None:
        self.open_phase("branch")
        sparks = [w for w in self.work if w.spark]
        stats = CycleStats(branches=len(sparks))  # taken into the cycle's stats when branching is done
        if not self.on_demand and self._batching():  # on demand: the person waits for the answer now
            self._branch_batch(sparks, stats)
        elif sparks:
            results = self._extract(sparks)
            for n, (work, result) in enumerate(zip(sparks, results, strict=True)):
                self.progress(f"gate {work.session[:8]} (session {n + 1}/{len(sparks)})", n / len(sparks))
                self.usage = self.usage + result.usage
                if result.error:
                    stats.extraction_errors += 1
                    self._record_failed_extraction(work, result)
                    continue
                self._gate_session(work, result, stats, advance=True)
            if stats.extraction_errors == len(sparks):
                raise DreamError(f"every extraction failed ({results[0].error})")
            stats.verified = stats.surfaced - self.dropped["invalid"] - self.dropped["unverified"]
            stats.auto_written = _auto_write(self.config, self.ledger, self.kept_ids)
        self._take_branch(stats)
        self.stats.dropped = dict(self.dropped)
        self._usage_stats()
        self.close_phase(
            branches=stats.branches, surfaced=stats.surfaced, kept=stats.kept, errors=stats.extraction_errors
        )

    def _take_branch(self, branch: CycleStats) -> None:
        """The branch phase's counts into the cycle's stats (only once branching is done)."""
        for name in BRANCH_COUNTS:
            setattr(self.stats, name, getattr(branch, name))

    def rem(self) -> None:
        self.open_phase("rem")
        # the gate bumps ``corroborated`` as it stores a repeat from another session; REM reports it
        self.stats.corroborated = len(self.corroborated)
        self.progress("writing the review file", 0.3)
        review_path = _write_review(self.config, self.ledger, self.day)
        self.stats.review_path = str(review_path) if review_path else None
        self.progress("building the briefing", 0.6)
        from dreamtui.core.dream.promotion import active_promotion
        from dreamtui.core.memory import briefing

        sessions = [
            briefing.SessionSource(
                w.digest, tuple((r.path, r.start_offset, r.start_line, r.end_offset) for r in w.ranges)
            )
            for w in self.work
        ]
        result = briefing.propose_briefing(
            self.config,
            self.ledger,
            sessions,
            day=self.day,
            project=self.project,
            cycle_id=self.id,
            auto=active_promotion(self.ledger) is not None,
        )
        self.stats.briefing_path, self.stats.briefing_commit = str(result.path), result.commit
        self.stats.briefing_status, self.stats.briefing_proposal = result.status, result.proposal
        self.stats.briefing_lines = result.lines
        self.progress("consolidating memories", 0.8)
        self._consolidate()
        self.close_phase(
            corroborated=self.stats.corroborated,
            review=bool(review_path),
            briefing_commit=result.commit,
            consolidation=sum(self.stats.consolidation.values()),
        )

    def _consolidate(self) -> None:
        """REM's consolidation pass (issue 26), per project with new sessions: proposals to update,
        retire or merge its memories, stored for review. A failure is a line in the stats, never the cycle's."""
        from dreamtui.core.dream.consolidation import run_pass

        structured = (
            self.extractor.structured() if callable(getattr(self.extractor, "structured", None)) else None
        )
        by_project: dict[str, list[Digest]] = {}
        for w in self.work:
            by_project.setdefault(w.project, []).append(w.digest)
        found: Counter[str] = Counter()
        for project, digests in sorted(by_project.items()):
            try:
                report = run_pass(
                    self.config.memory, self.ledger, project, digests, structured, cycle_id=self.id
                )
            except (DreamError, OSError) as exc:  # the review file and the briefing stand
                self.stats.consolidation_error = self.stats.consolidation_error or _one_line(exc)
                continue
            found.update(report.proposed)
            self.stats.consolidation_known += report.known
            self.usage = self.usage + report.usage
            if report.error and not self.stats.consolidation_error:
                self.stats.consolidation_error = report.error
        self.stats.consolidation = {kind: found[kind] for kind in ("update", "retire", "merge")}

    def wake(self) -> None:
        self.open_phase("wake")
        self.stats.dropped = self.stats.dropped or dict(self.dropped)
        self._usage_stats()
        self._carry_prior()
        self.stats.seconds = round(time.monotonic() - self.t0, 3)
        self.close_phase()

    # -- batch mode (Message Batches API: half the price, results at a later cycle) ----------------

    def _batching(self) -> bool:
        """Branch through the Message Batches API: ``batch`` is on (or a batch waits) and the extractor
        declares it can batch (``can_batch``: only the anthropic one)."""
        return bool(getattr(self.extractor, "can_batch", False)) and (
            self.config.batch or self._open_batches()
        )

    def _open_batches(self) -> bool:
        if not getattr(self.extractor, "can_batch", False):
            return False
        from dreamtui.core.extract.batch import OPEN_STATES

        return batches.any_with_status(self.ledger, OPEN_STATES)

    def _branch_batch(self, sparks: list[SessionWork], stats: CycleStats) -> None:
        """Collect what earlier cycles submitted (gate it, record its ranges), then submit today's sparks.

        Submitted ranges are marked dreamed in the transaction that records the batch, so no later
        cycle extracts them again; a session whose batch request failed gets its range back.
        """
        from dreamtui.core.extract.batch import BatchRunner

        runner = BatchRunner(self.extractor, self.ledger)
        for batch_id in runner.unfinished():
            self.progress(f"polling batch {batch_id}", 0.1)
            status = runner.poll(batch_id)
            if not status.ended:
                stats.batches_waiting += 1
                continue
            for item in runner.collect(batch_id, mark=False):
                self.usage = self.usage + item.result.usage
                ranges = [FileRange(**r) for r in item.extra.get("ranges", [])]
                work = SessionWork(
                    item.project,
                    item.session,
                    [Path(f) for f in item.files],
                    ranges,
                    Digest(item.session, item.project),
                    0.0,
                )
                if item.result.error:
                    stats.extraction_errors += 1
                    self._give_back(work, item.result)
                    continue
                # the ranges were marked dreamed at submit: only the extraction is recorded now
                self._gate_session(work, item.result, stats, advance=False)
                stats.batch_sessions_collected += 1
            runner.mark_collected(batch_id)
        stats.verified = stats.surfaced - self.dropped["invalid"] - self.dropped["unverified"]
        stats.auto_written = _auto_write(self.config, self.ledger, self.kept_ids)
        if not sparks:
            return
        from dreamtui.core.extract.base import ExtractContext

        by_digest = {id(w.digest): w for w in sparks}

        def extra_for(digest: Digest) -> dict[str, Any]:
            work = by_digest[id(digest)]
            return {
                "ranges": [
                    {
                        "path": r.path,
                        "start_offset": r.start_offset,
                        "start_line": r.start_line,
                        "end_offset": r.end_offset,
                        "end_line": r.end_line,
                        "content_hash": r.content_hash,
                    }
                    for r in work.ranges
                ]
            }

        def reserve() -> None:
            for work in sparks:
                self._mark_dreamed(work, None, 0)

        self.progress(f"submitting {len(sparks)} sessions as one batch", 0.5)
        batch_id = runner.submit(
            [w.digest for w in sparks],
            lambda d: ExtractContext(
                project=by_digest[id(d)].project,
                memories=by_digest[id(d)].memories,
                max_chars=self.config.max_digest_chars,
            ),
            extra_for=extra_for,
            on_recorded=reserve,
        )
        stats.batch_submitted = batch_id
        stats.batch_sessions_submitted = len(sparks)

    def _gate_session(
        self, work: SessionWork, result: ExtractionResult, stats: CycleStats, advance: bool
    ) -> None:
        """Gate one session's proposals and record its extraction (ranges, and the offsets when
        ``advance``) in the same transaction (:func:`gate.gate`), then count what it kept."""
        from dreamtui.core.gate import pipeline as gate

        report = gate.gate(
            result.candidates,
            config=self.config,
            ledger=self.ledger,
            project=work.project,
            files=work.files,
            cycle_id=self.id,
            index=self.index,
            record=lambda: self._mark_dreamed(work, result, len(result.candidates), advance=advance),
        )
        stats.count_gate(
            surfaced=len(result.candidates),
            kept=len(report.kept),
            duplicates=report.duplicates,
            suspected=sum(1 for c in report.kept if c.duplicate_of),
            judged=report.judged,
            judged_same=report.judged_same,
            judged_distinct=report.judged_distinct,
            judge_error=str(report.judge_error) if report.judge_error else None,
        )
        self.dropped.update(report.dropped)
        self.kept_ids.extend(c.id for c in report.kept)
        self.corroborated.update(report.corroborated)

    def _give_back(self, work: SessionWork, result: ExtractionResult) -> None:
        """A failed batch request: record the error and return its ranges to the undreamed part."""
        if work.ranges:
            self._record_failed_extraction(work, result)
        with self.ledger.write():
            for r in work.ranges:
                offsets.give_back(self.ledger, r.path, r.start_offset, r.start_line)

    # -- helpers --------------------------------------------------------------------------------

    def _carry_prior(self) -> None:
        """A retry adds what the failed attempt already extracted, so the day's totals stay true."""
        if self._carried or self.prior.get("depth") != "deep":
            return
        self._carried = True
        prior = CycleStats.from_json(self.prior)
        for key in CARRIED:
            setattr(self.stats, key, getattr(self.stats, key) + getattr(prior, key))
        dropped = Counter(self.stats.dropped)
        dropped.update(prior.dropped)
        self.stats.dropped = dict(dropped)

    def _usage_stats(self) -> None:
        self.stats.model_calls, self.stats.input_tokens = self.usage.calls, self.usage.input_tokens
        self.stats.output_tokens, self.stats.cached_tokens = (
            self.usage.output_tokens,
            self.usage.cached_tokens,
        )
        self.stats.cost_usd = self.usage.cost_usd

    def _extract(self, sparks: list[SessionWork]) -> list[ExtractionResult]:
        from dreamtui.core.extract import runner
        from dreamtui.core.extract.base import ExtractContext

        contexts = {
            id(w.digest): ExtractContext(
                project=w.project, memories=w.memories, max_chars=self.config.max_digest_chars
            )
            for w in sparks
        }
        done = [0]

        def on_done(*_args: Any) -> None:
            done[0] += 1
            self.progress(f"branch {done[0]}/{len(sparks)} done", done[0] / len(sparks))

        self.progress(f"{len(sparks)} branches, {min(len(sparks), self.config.concurrency)} at a time", 0.0)
        return runner.extract_many(
            [w.digest for w in sparks],
            self.extractor,
            lambda d: contexts[id(d)],
            self.config.concurrency,
            on_result=on_done,
        )

    def _mark_quiet(self, works: list[SessionWork]) -> None:
        """Record that these sessions' content, as read now, is too quiet to dream (it waits for more of
        a person's words): the Sessions screen says "too quiet" instead of "not yet dreamed"."""
        if not works:
            return
        now = clock.now_iso()
        with self.ledger.write():
            for work in works:
                for rng in work.ranges:
                    offsets.set_quiet(self.ledger, rng.path, rng.end_offset, self.id, now)

    def _mark_dreamed(
        self, work: SessionWork, result: ExtractionResult | None, candidates: int, advance: bool = True
    ) -> None:
        """Advance each file's offsets; record the extracted ranges (one transaction)."""
        from dreamtui.core.ingest.digest import persist
        from dreamtui.core.ingest.tail import Tailer

        tailer = Tailer(self.ledger)
        now = clock.now_iso()
        with self.ledger.write():
            for i, rng in enumerate(work.ranges):
                if rng.read is not None and rng.state is not None:  # read and state are set together
                    persist(self.ledger, tailer, rng.read, rng.state, DigestStats())
                if advance:
                    offsets.set_dreamed(self.ledger, rng.path, rng.end_offset, rng.end_line)
                if result is None or rng.end_offset <= rng.start_offset:
                    continue
                first = i == 0
                record_extraction(
                    self.ledger,
                    session=work.session,
                    project=work.project,
                    path=rng.path,
                    start_offset=rng.start_offset,
                    end_offset=rng.end_offset,
                    content_hash=rng.content_hash,
                    extractor=self.stats.extractor or "?",
                    model=self.stats.model,
                    cycle_id=self.id,
                    usage=result.usage if first else Usage(),
                    candidates=candidates if first else 0,
                    now=now,
                )

    def _record_failed_extraction(self, work: SessionWork, result: ExtractionResult) -> None:
        """A failed extraction is recorded (with its error) but nothing is marked dreamed."""
        now = clock.now_iso()
        rng = work.ranges[0]
        record_failed_extraction(
            self.ledger,
            session=work.session,
            project=work.project,
            path=rng.path,
            start_offset=rng.start_offset,
            end_offset=rng.end_offset,
            content_hash=rng.content_hash,
            extractor=self.stats.extractor or "?",
            model=self.stats.model,
            cycle_id=self.id,
            usage=result.usage,
            error=result.error,
            now=now,
        )


# -- light sleep helpers ---------------------------------------------------------------------------


def _session_groups(
    root: Path, project: str | None, skipped: list[Skipped] | None = None, projects: ProjectMap | None = None
) -> dict[tuple[str, str], list[Path]]:
    """Transcript files grouped by (project key, session), main file first: the sessions of every
    worktree (and subfolder) of one repository are one project's (``projects``, a
    :class:`~dreamtui.core.ingest.projects.ProjectMap`). Folders and files that cannot be read (or are
    no regular files) are left out and named in ``skipped``."""
    from dreamtui.core.ingest.projects import ProjectMap
    from dreamtui.core.ingest.transcripts import discover

    projects = projects or ProjectMap(root)
    groups: dict[tuple[str, str], list[Path]] = {}
    found: list[Skipped] = []
    files = discover(root, found)
    keyed = [(projects.key(tf.project, tf.path), tf) for tf in files]
    if skipped is not None:  # for one project, only what is wrong in its own folders concerns it
        mine = None
        if project is not None:
            mine = {
                str(Path(root) / f) for f in {tf.project for key, tf in keyed if key == project} | {project}
            }
        skipped.extend(
            s
            for s in found
            if mine is None or any(s.path == m or s.path.startswith(m + os.sep) for m in mine)
        )
    for key, tf in keyed:
        if project is not None and key != project:
            continue
        groups.setdefault((key, tf.session), []).append(tf.path)
    return groups


def _new_content(
    ledger: Ledger, project: str, session: str, files: list[Path], unreadable: list[str] | None = None
) -> SessionWork | None:
    """Digest what the session's files hold beyond their ``dreamed_offset`` (None: nothing new).

    Files that cannot be read are skipped (the next cycle tries again) and named in ``unreadable``.
    """
    from dreamtui.core.ingest.digest import DigestState, digest_increment, digest_lines
    from dreamtui.core.ingest.tail import LineScanner, file_key, open_transcript
    from dreamtui.core.ingest.transcripts import kind_of

    ranges: list[FileRange] = []
    streams: list[list[Turn]] = []
    stats = DigestStats()
    mtime = 0.0
    cwd = ""
    for path in files:
        key = file_key(path)
        try:
            digest, read, state = digest_increment(ledger, path, project, session, commit=False)
        except TranscriptError:
            if unreadable is not None and path.exists():
                unreadable.append(str(path))
            continue  # vanished or unreadable since discovery: the next cycle sees it again
        mtime = max(mtime, read.identity.mtime)
        cwd = cwd or digest.cwd
        dreamed = offsets.dreamed_point(ledger, key)
        start, start_line = read.start_offset, read.start_line
        turns = list(digest.turns)
        hasher = hashlib.blake2b(digest_size=16)
        if dreamed and not read.reset and dreamed[0] < read.start_offset:
            # someone else read past what was dreamed: digest the gap too
            start, start_line = dreamed
            with open_transcript(path) as fh:
                gap = list(LineScanner(fh, start, start_line, end=read.start_offset))
            for _n, _o, raw in gap:
                hasher.update(raw + b"\n")
            turns = digest_lines(gap, file=str(path), kind=kind_of(path), state=DigestState()) + turns
        for _n, _o, raw in read.lines:
            hasher.update(raw + b"\n")
        if read.end_offset <= start:
            continue
        ranges.append(
            FileRange(key, start, start_line, read.end_offset, read.end_line, hasher.hexdigest(), read, state)
        )
        streams.append(turns)
        for name in (
            "bytes",
            "chars",
            "lines",
            "skipped_lines",
            "malformed",
            "invalid_utf8",
            "oversized",
            "replaced",
        ):
            setattr(stats, name, getattr(stats, name) + getattr(digest.stats, name))
    if not ranges:
        return None
    keyed = [[(t.timestamp or "", i, pos, t) for pos, t in enumerate(s)] for i, s in enumerate(streams)]
    merged = [item[3] for item in heapq.merge(*keyed)] if len(streams) > 1 else streams[0]
    digest = Digest(
        session=session, project=project, files=[str(p) for p in files], turns=merged, stats=stats, cwd=cwd
    )
    return SessionWork(project, session, list(files), ranges, digest, mtime)


# -- deep sleep helpers ----------------------------------------------------------------------------


def _dedup_index(config: Config, ledger: Ledger) -> DedupIndex:
    from dreamtui.core.gate.dedup import DedupIndex

    return DedupIndex.build(config.memory, ledger)


def _recall(index: DedupIndex, digest: Digest, scopes: gate.Scopes) -> tuple[tuple[str, ...], bool]:
    """The closest memories the session's person turns touch, and whether memory covers them all.
    Only memories that apply to the session's project count (global ones, or this project's)."""
    from dreamtui.core.gate import dedup

    threshold = dedup.DUPLICATE
    hits: dict[str, float] = {}
    substantial = 0
    covered = 0
    for turn in digest.turns:
        if turn.role != "person" or len(turn.text.strip()) < SUBSTANTIAL_TURN_CHARS:
            continue
        substantial += 1
        if substantial > RECALL_TURNS:  # a long session is a spark; its first turns give the context
            return tuple(sorted(hits, key=lambda t: -hits[t])[:CONTEXT_MEMORIES]), False
        from dreamtui.core.gate.pipeline import closest_in_scope

        hit = closest_in_scope(
            index, turn.text, project=digest.project, memory_dir=scopes.root, scopes=scopes
        )
        if hit is None:
            continue
        hits[hit.text] = max(hits.get(hit.text, 0.0), hit.score)
        if hit.score >= threshold:
            covered += 1
    best = sorted(hits, key=lambda t: -hits[t])[:CONTEXT_MEMORIES]
    return tuple(best), substantial > 0 and covered == substantial


# -- branching helpers -----------------------------------------------------------------------------


def _make_extractor(config: Config) -> tuple[Extractor, str | None]:
    """The extractor the config asks for, and why it runs when ``auto`` chose it."""
    from dreamtui.core.extract import choose, make_extractor

    choice = choose(config)
    return make_extractor(config), choice.reason if choice.auto else None


def _auto_write(config: Config, ledger: Ledger, kept_ids: list[str]) -> int:
    """Auto-write the kept candidates when a promotion is active; how many were written."""
    if not kept_ids:
        return 0
    from dreamtui.core.dream import promotion

    if promotion.active_promotion(ledger) is None:
        return 0
    kept = [c for c in (ledger.get_candidate(cid) for cid in kept_ids) if c is not None]
    return sum(1 for r in promotion.auto_write(config, ledger, kept) if r.written)


# -- REM helpers ------------------------------------------------------------------------------------


def _write_review(config: Config, ledger: Ledger, day: str) -> Path:
    from dreamtui.core.memory import review

    return review.write_review(config, ledger, Date.fromisoformat(day))


def projects_with_new_content(config: Config, ledger: Ledger) -> list[str]:
    """Projects whose sessions hold bytes not yet dreamed, nor found too quiet by a cycle as they are
    (cheap: compares sizes, reads nothing)."""
    from dreamtui.core.ingest.tail import file_key
    from dreamtui.core.ingest.transcripts import discover

    dreamed = offsets.dreamed_offsets(ledger)
    projects = project_map(config, ledger)
    quiet = offsets.quiet_offsets(ledger)  # found too quiet: only words written since count as new
    found: list[str] = []
    for tf in discover(config.transcripts):
        try:
            size = tf.path.stat().st_size
        except OSError:
            continue
        fkey = file_key(tf.path)
        if size > max(dreamed.get(fkey, 0), quiet.get(fkey, 0)):
            key = projects.key(tf.project, tf.path)
            if key not in found:
                found.append(key)
    return found


def project_map(config: Config, ledger: Ledger, *, remember: bool = False) -> ProjectMap:
    """Transcript folder → project key, as the ledger remembers it (``remember``: store new decisions)."""
    from dreamtui.core.ingest.projects import ProjectMap

    return ProjectMap(config.transcripts, ledger, remember=remember)


def transcript_folders(root: Path) -> list[str]:
    """The project folders under the transcripts folder (names only; unreadable entries left out)."""
    from dreamtui.core.files import scan_folder

    return sorted(e.name for e in scan_folder(Path(root)) if e.is_dir)


def _rekey_old_rows(config: Config, ledger: Ledger, projects: ProjectMap) -> list[str]:
    """File the rows a worktree's (or subfolder's) folder got under its own name before projects were
    repositories under the repository's project; one line per folder moved."""
    from dreamtui.core.memory.decisions import file_under_repositories

    return file_under_repositories(config, ledger, projects)
