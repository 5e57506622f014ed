"""The phases of a running dream cycle, Light sleep → Deep sleep → Branching → REM → Wake, as the methods
of :class:`RunningCycle` (``run_cycle`` in :mod:`.run` starts one; the module docstring there says what
each phase does).

- **Light sleep** digests each session's new content (:mod:`.sessions`), defers the ones still being
  written and wakes early when no session holds enough of a person's words.
- **Deep sleep** recalls the memories each session touches (:func:`recall`): covered sessions are
  marked dreamed, the others are sparks.
- **Branching** extracts every spark (in parallel, or through the Message Batches API when the
  extractor declares ``batches``) and gates what it proposes, recording the ranges it read.
- **REM** counts what recurs, writes the review file, proposes the briefing and consolidates.
- **Wake** settles the stats the waking message (:mod:`.waking`) is made from.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from datetime import date as Date
from datetime import datetime
from pathlib import Path
from typing import Any

from dreamtui.core import clock
from dreamtui.core.config import Config
from dreamtui.core.dream.budget import Gate, spent_line, spent_today
from dreamtui.core.dream.consolidation import run_pass
from dreamtui.core.dream.estimate import session_mtime
from dreamtui.core.dream.promotion import active_promotion, auto_write
from dreamtui.core.dream.recovery import Attempt
from dreamtui.core.dream.sessions import FileRange, SessionWork, new_content, session_groups
from dreamtui.core.dream.waking import PHASE_TITLES
from dreamtui.core.errors import DreamError, ExtractorAuthError, UsageLimitError
from dreamtui.core.extract.base import ExtractContext, Extractor, concurrency_for
from dreamtui.core.extract.batch import OPEN_STATES, RANGE_KEYS, reserved_keys, runner_for
from dreamtui.core.extract.limits import describe_reset
from dreamtui.core.extract.runner import extract_iter
from dreamtui.core.files import Skipped
from dreamtui.core.gate.dedup import DUPLICATE, DedupIndex
from dreamtui.core.gate.pipeline import Scopes, closest_in_scope, gate
from dreamtui.core.ingest import ended as ended_sessions
from dreamtui.core.ingest.digest import persist, shared_reads
from dreamtui.core.ingest.goodnight import said_goodnight
from dreamtui.core.ingest.projects import ProjectMap
from dreamtui.core.ingest.tail import Tailer
from dreamtui.core.ingest.transcripts import agent_of
from dreamtui.core.ledger import Ledger, batches, cycles, offsets, record_extraction, record_failed_extraction
from dreamtui.core.ledger.cycle_stats import CycleStats
from dreamtui.core.memory import briefing
from dreamtui.core.memory.review import write_review
from dreamtui.core.models import Digest, DigestStats, ExtractionResult, Usage

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
    "failures",
    "failed_sessions",
    "surfaced",
    "verified",
    "kept",
    "kept_by_agent",
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

Progress = Callable[[str, str, "float | None"], None]
"""``progress(phase, message, fraction)``: how a running cycle reports (the CLI's display, the app's header)."""


class UsageLimitReached(DreamError):
    """The model's usage limit stopped a cycle mid-way: what was answered is stored, the rest waits
    until ``resets_at`` (aware datetime, or None when the answer did not say)."""

    def __init__(self, limit: UsageLimitError, answered: int, waiting: int) -> None:
        self.resets_at = limit.resets_at
        self.answered, self.waiting = answered, waiting
        super().__init__(
            f"the usage limit is reached ({_reason(limit)}); it resets {describe_reset(limit.resets_at)}: "
            f"{answered} session(s) answered and kept, {waiting} wait for the next dream after that"
        )


def _reason(limit: UsageLimitError) -> str:
    text = str(limit)
    inner = text[text.find("(") + 1 : text.rfind(")")] if "(" in text and ")" in text else text
    return inner.strip() or text


def one_line(exc: BaseException) -> str:
    """The first line of an error's message (its type's name when it has none)."""
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


class RunningCycle:
    """The state of one running cycle; each phase is a method (:meth:`run` runs them in order)."""

    def __init__(
        self,
        config: Config,
        ledger: Ledger,
        cycle_id: int,
        project: str | None,
        day: str,
        trigger: str,
        progress: Progress | None,
        extractor: Extractor,
        projects: ProjectMap,
        attempt: Attempt,
        on_demand: bool = False,
    ) -> None:
        self.config = config
        self.ledger = ledger
        self.id = cycle_id
        self.project = project
        self.day = day
        self.trigger = trigger
        self._progress = progress
        self.extractor = extractor
        self.t0 = time.monotonic()
        self.phases: list[dict[str, Any]] = []
        self.current = "light"
        self._phase: dict[str, Any] | None = None
        self.depth: str | None = None
        self.usage = Usage()
        self.dropped: Counter[str] = Counter()
        self.stats = CycleStats(attempt=attempt.number)
        self.work: list[SessionWork] = []
        self.kept_ids: list[str] = []
        self.corroborated: set[str] = set()
        self.attempt = attempt
        self._carried = False
        self.index: DedupIndex | None = None
        self.on_demand = on_demand
        self.projects = projects
        self.ended_done: list[ended_sessions.Ended] = []
        """The ended-session records (the plugin's SessionEnd hook) this cycle dreams: removed when it ends."""
        self._limited: UsageLimitReached | None = None
        self.since: datetime | None = None
        """The recent window's start: sessions last written before it are left for a back-fill."""

    # -- bookkeeping ----------------------------------------------------------------------------

    def progress(self, message: str, fraction: float | None = None) -> None:
        """Tell the caller how the current phase advances (a broken display never breaks a cycle)."""
        if self._progress is not None:
            try:
                self._progress(self.current, message, fraction)
            except Exception:  # a broken display never breaks a cycle
                pass

    def open_phase(self, name: str) -> None:
        """Start phase ``name`` (closing the one before)."""
        self.close_phase()
        self.current = name
        self._phase = {"name": name, "started": clock.now_iso(), "ended": None, "counts": {}}
        self.phases.append(self._phase)
        self.progress(PHASE_TITLES[name], 0.0)

    def close_phase(self, **counts: Any) -> None:
        """End the current phase with its ``counts``; the row's phases and stats are saved."""
        if self._phase is None:
            return
        self._phase["counts"].update(counts)
        self._phase["ended"] = clock.now_iso()
        self._phase = None
        # a killed cycle's work still counts in the retry's totals (the row keeps its pid: who ran it)
        depth = self.depth if self.depth in ("deep", "shallow") else None
        cycles.save_progress(self.ledger, self.id, depth, self.phases, self.stats.to_json())

    # -- the phases -----------------------------------------------------------------------------

    def run(self) -> None:
        """Light sleep, then (unless it woke early) Deep sleep, Branching and REM (not on demand), then Wake."""
        self.stats.extractor = self.extractor.name
        self.stats.model = self.extractor.model
        self.light()
        if self.depth == "shallow" and self.attempt.earlier_deep:
            # an earlier attempt today got past light sleep and then failed: what it extracted is
            # marked dreamed, so finish its REM (review, briefing) now
            self.depth = "deep"
        if self.depth == "shallow" and not self.on_demand and self._open_batches():
            self.depth = "deep"  # a batch submitted by an earlier cycle may have results to collect
        if self.depth == "shallow":
            self.wake()
        else:
            self.depth = "deep"
            cycles.mark_deep(self.ledger, self.id)  # if it is killed now, the retry knows to finish its REM
            self.deep()
            self.branch()
            if not self.on_demand:  # an on-demand pass never dreams a second REM the same date
                self.rem()
            self.wake()
        ended_sessions.forget(self.ended_done)  # dreamed: the next cycle need not hurry for them

    def light(self) -> None:
        """Find the sessions with content not yet dreamed and digest it; defer those still being
        written; wake early (shallow) when none has enough of a person's words."""
        self.open_phase("light")
        skipped: list[Skipped] = []
        groups = session_groups(self.config, self.project, skipped, self.projects)
        for skip in skipped:  # one bad folder or FIFO never fails the cycle: the others are dreamed
            self.progress(skip.notice)
        found = len(skipped)
        self.stats.sessions_seen = len(groups)
        now = clock.now().timestamp()
        quiet = self.config.quiet_minutes * 60.0
        ended = ended_sessions.by_session(self.config)
        unreadable: list[str] = []
        if self.since is not None:  # the older sessions wait, untouched, for an explicit back-fill
            cut = self.since.timestamp()
            older = [k for k, files in groups.items() if session_mtime(files) < cut]
            for k in older:
                del groups[k]
            self.stats.sessions_older = len(older)
            self.stats.window_since = self.since.astimezone().strftime("%Y-%m-%d")
        with shared_reads():  # the sessions of one database read through one connection
            for i, ((project, session), files) in enumerate(groups.items()):
                self.progress(
                    f"reading {project}/{session[:8]} (session {i + 1}/{len(groups)})",
                    i / max(1, len(groups)),
                )
                record = ended.get(session)
                work = new_content(self.ledger, project, session, files, unreadable, skipped)
                if work is None:
                    if record is not None:  # its session holds nothing new: dreamed already
                        self.ended_done.append(record)
                    continue
                work.goodnight = said_goodnight(work.digest.turns)
                # a session Claude Code ended (and not resumed since) is no longer being written
                work.ended = record is not None and record.still_ended(work.mtime)
                if (
                    not (self.trigger == "goodnight" or work.goodnight or work.ended)
                    and now - work.mtime < quiet
                ):
                    work.deferred = True
                if record is not None and not work.deferred:
                    self.ended_done.append(record)
                self.work.append(work)
        for skip in skipped[found:]:  # a file in which nothing is a record: named, never a failure
            self.progress(skip.notice)
        ready = [w for w in self.work if not w.deferred]
        deep_enough = [w for w in ready if w.person_chars >= self.config.min_person_chars]
        settled = [
            w
            for w in ready
            if w.person_chars < self.config.min_person_chars and (w.ended or now - w.mtime >= SETTLED_SECONDS)
        ]
        for work in settled:  # ended, or finished long ago, and still too quiet: no words will be added
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
        """Recall the memories each session's person turns touch: a session memory covers is marked
        dreamed; the others are sparks, with their closest memories as context."""
        self.open_phase("deep")
        self.index = index = DedupIndex.build(self.config.memory, self.ledger)
        scopes = Scopes(self.config.memory, self.ledger)
        for i, work in enumerate(self.work):
            self.progress(
                f"recalling memories for {work.session[:8]} (session {i + 1}/{len(self.work)})",
                i / max(1, len(self.work)),
            )
            work.memories, work.covered = recall(index, work.digest, scopes)
            work.spark = not work.covered
        sparks = [w for w in self.work if w.spark]
        covered = [w for w in self.work if w.covered]
        for work in covered:
            self._mark_dreamed(work, None, 0)
        self.stats.sparks, self.stats.covered = len(sparks), len(covered)
        self.close_phase(sparks=len(sparks), covered=len(covered))

    def branch(self) -> None:
        """One extraction per spark (in parallel, or as one Message Batch), each through the gate."""
        self.open_phase("branch")
        sparks = [w for w in self.work if w.spark]
        stats = CycleStats(branches=len(sparks))  # taken into the cycle's stats when branching is done
        if not self.on_demand and self._batching():  # on demand: the person waits for the answer now
            self._branch_batch(sparks, stats)
        elif sparks:
            self._branch_each(sparks, stats)
        self._take_branch(stats)
        self.stats.dropped = dict(self.dropped)
        self._usage_stats()
        self.close_phase(
            branches=stats.branches, surfaced=stats.surfaced, kept=stats.kept, errors=stats.extraction_errors
        )
        if self._limited is not None:
            raise self._limited

    def _branch_each(self, sparks: list[SessionWork], stats: CycleStats) -> None:
        """Extract the sparks, ``concurrency`` at a time, and gate each answer as it arrives (stored
        before the next one is taken: a killed or stopped run loses no answer it was given). The daily
        token budget holds back the sessions it has no room for; a usage limit stops the cycle after
        storing what was answered (:class:`UsageLimitReached`). Either way, what was not answered waits."""
        gate_budget = Gate(
            self.config.daily_token_budget, spent_today(self.ledger) if self.config.daily_token_budget else 0
        )
        stops: list[ExtractorAuthError] = []
        done = [0]
        started = time.monotonic()

        def within(work: SessionWork, n: int) -> Callable[[str], None]:
            """How one branch's model call advances (tokens received, seconds), on the phase's line."""

            def tell(message: str) -> None:
                self.progress(
                    f"branch {n}/{len(sparks)} ({work.session[:8]}): {message}; {done[0]} done, "
                    f"{time.monotonic() - started:.0f}s",
                    done[0] / len(sparks),
                )

            return tell

        contexts = {
            id(w.digest): ExtractContext(
                project=w.project,
                memories=w.memories,
                max_chars=self.config.max_digest_chars,
                progress=within(w, n + 1),
            )
            for n, w in enumerate(sparks)
        }
        workers = concurrency_for(self.extractor, self.config.concurrency)
        why = "" if workers >= self.config.concurrency else " (what the model server runs at once)"
        self.progress(f"{len(sparks)} branches, {min(len(sparks), workers)} at a time{why}", 0.0)
        answered = held = 0
        for n, (index, result) in enumerate(
            extract_iter(
                [w.digest for w in sparks],
                self.extractor,
                lambda d: contexts[id(d)],
                workers,
                on_result=gate_budget.answered,
                may_start=gate_budget.may_start,
                stops=stops,
            )
        ):
            work = sparks[index]
            done[0] = n + 1
            limited = bool(stops) and isinstance(stops[0], UsageLimitError)
            if result.unsent and (limited or not stops):  # held back by the budget or the limit: it waits
                held += 1
                continue
            self.progress(f"branch {n + 1}/{len(sparks)} done", (n + 1) / len(sparks))
            self.usage = self.usage + result.usage
            if result.error:
                if limited and result.error == str(stops[0]):
                    held += 1  # the call the limit refused: it waits like the ones not sent
                    continue
                stats.count_failure(work.session, result.error)
                self._record_failed_extraction(work, result)
                continue
            answered += 1
            self._gate_session(work, result, stats, advance=True)
        stats.verified = stats.surfaced - self.dropped["invalid"] - self.dropped["unverified"]
        stats.auto_written = auto_write_kept(self.config, self.ledger, self.kept_ids)
        limit = stops[0] if stops and isinstance(stops[0], UsageLimitError) else None
        if limit is not None:
            self.stats.sessions_waiting = held
            self._limited = UsageLimitReached(limit, answered, held)  # raised once the phase is recorded
        if gate_budget.held:
            self.stats.sessions_waiting = held
            self.stats.budget_stop = spent_line(gate_budget.spent, gate_budget.budget)
            self.progress(self.stats.budget_stop, 1.0)
        elif stats.extraction_errors and stats.extraction_errors == len(sparks):
            # the row keeps what was tried: the branches, their causes and the model's work
            self._take_branch(stats)
            self._usage_stats()
            raise DreamError(f"every extraction failed ({stats.failure_summary()})")

    def _take_branch(self, branch: CycleStats) -> None:
        """The branch phase's counts into the cycle's stats (only once branching is done)."""
        for name in BRANCH_COUNTS:
            setattr(self.stats, name, getattr(branch, name))

    def rem(self) -> None:
        """Count the corroborated lessons, write the day's review file, propose the briefing, and
        consolidate each project's memories."""
        self.open_phase("rem")
        # the gate bumps ``corroborated`` as it stores a repeat from another session; REM reports it
        self.stats.corroborated = len(self.corroborated)
        self.progress("writing the review file", 0.3)
        review_path = write_review(self.config, self.ledger, Date.fromisoformat(self.day))
        self.stats.review_path = str(review_path) if review_path else None
        self.progress("building the briefing", 0.6)
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
        if self.stats.budget_stop is None:  # at the budget: no further model call this cycle
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
        structured = self.extractor.structured() if self.extractor.capabilities.model_backed else None
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
                self.stats.consolidation_error = self.stats.consolidation_error or one_line(exc)
                continue
            found.update(report.proposed)
            self.stats.consolidation_known += report.known
            self.usage = self.usage + report.usage
            if report.error and not self.stats.consolidation_error:
                self.stats.consolidation_error = report.error
        self.stats.consolidation = {kind: found[kind] for kind in ("update", "retire", "merge")}

    def wake(self) -> None:
        """Settle the stats the waking message is composed from (model use, what a retry carries, time)."""
        self.open_phase("wake")
        self.stats.dropped = self.stats.dropped or dict(self.dropped)
        self._usage_stats()
        self.carry_earlier()
        self.stats.seconds = round(time.monotonic() - self.t0, 3)
        self.close_phase()

    # -- batch mode (Message Batches API: half the price, results at a later cycle) ----------------

    def _batching(self) -> bool:
        """Branch through the Message Batches API: ``batch`` is on (or a batch waits) and the extractor
        declares it can (``capabilities.batches``)."""
        return self.extractor.capabilities.batches and (self.config.batch or self._open_batches())

    def _open_batches(self) -> bool:
        """A batch an earlier cycle submitted is still open (only an extractor that batches collects it)."""
        if not self.extractor.capabilities.batches:
            return False
        return batches.any_with_status(self.ledger, OPEN_STATES)

    def _branch_batch(self, sparks: list[SessionWork], stats: CycleStats) -> None:
        """Collect what earlier cycles submitted (gate it, record its ranges), then submit today's sparks.

        Submitted ranges are marked dreamed in the transaction that records the batch, so no later
        cycle extracts them again; a session whose batch request failed gets its range back.
        """
        runner = runner_for(self.extractor, self.ledger)
        for batch_id in runner.unfinished():
            self.progress(f"polling batch {batch_id}", 0.1)
            status = runner.poll(batch_id)
            if not status.ended:
                stats.batches_waiting += 1
                continue
            for item in runner.collect(batch_id, mark=False):
                self.usage = self.usage + item.result.usage
                stored = item.extra.get("ranges", [])
                ranges = [FileRange(**{k: r[k] for k in RANGE_KEYS}) for r in stored]
                work = SessionWork(
                    item.project,
                    item.session,
                    [Path(f) for f in item.files],
                    ranges,
                    Digest(item.session, item.project),
                    0.0,
                )
                if item.result.error:
                    stats.count_failure(item.session, item.result.error)
                    self._give_back(work, item.result, {r["path"]: r.get("keys") or [] for r in stored})
                    continue
                # the ranges were marked dreamed at submit: only the extraction is recorded now
                self._gate_session(work, item.result, stats, advance=False)
                stats.batch_sessions_collected += 1
            runner.mark_collected(batch_id)
        stats.verified = stats.surfaced - self.dropped["invalid"] - self.dropped["unverified"]
        stats.auto_written = auto_write_kept(self.config, self.ledger, self.kept_ids)
        if not sparks:
            return
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
                        "keys": reserved_keys(r.read, r.state),
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
        ``advance``) in the same transaction (:func:`~dreamtui.core.gate.pipeline.gate`), then count
        what it kept."""
        report = gate(
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
        if report.kept:
            agents = Counter(stats.kept_by_agent)
            agents.update(agent_of(c.transcript) for c in report.kept)
            stats.kept_by_agent = dict(agents)

    def _give_back(self, work: SessionWork, result: ExtractionResult, keys: dict[str, list[str]]) -> None:
        """A failed batch request: record the error and return its ranges to the undreamed part (a
        whole-file source's records, ``keys``, are forgotten as seen: the next cycle reads them again)."""
        if work.ranges:
            self._record_failed_extraction(work, result)
        with self.ledger.write():
            for r in work.ranges:
                offsets.give_back(self.ledger, r.path, r.start_offset, r.start_line)
                if keys.get(r.path):
                    offsets.remove_blocks(self.ledger, r.path, keys[r.path])

    # -- helpers --------------------------------------------------------------------------------

    def carry_earlier(self) -> None:
        """A retry adds what the failed attempts already extracted, so the day's totals stay true (once)."""
        prior = self.attempt.earlier
        if self._carried or prior is None or not self.attempt.earlier_deep:
            return
        self._carried = True
        for key in CARRIED:
            setattr(self.stats, key, getattr(self.stats, key) + getattr(prior, key))
        dropped = Counter(self.stats.dropped)
        dropped.update(prior.dropped)
        self.stats.dropped = dict(dropped)
        agents = Counter(self.stats.kept_by_agent)
        agents.update(prior.kept_by_agent)
        self.stats.kept_by_agent = dict(agents)

    def _usage_stats(self) -> None:
        """The model use so far, into the stats."""
        self.stats.model_calls, self.stats.input_tokens = self.usage.calls, self.usage.input_tokens
        self.stats.output_tokens, self.stats.cached_tokens = (
            self.usage.output_tokens,
            self.usage.cached_tokens,
        )
        self.stats.cost_usd = self.usage.cost_usd

    def _mark_quiet(self, works: list[SessionWork]) -> None:
        """Record that these sessions' content, as read now, is too quiet to dream (it waits for more of
        a person's words): the Sessions screen says "too quiet" instead of "not yet dreamed"."""
        if not works:
            return
        now = clock.now_iso()
        with self.ledger.write():
            for work in works:
                for rng in work.ranges:
                    ident = rng.read.identity if rng.read is not None else None
                    # a whole-file source (its offsets count records' bytes): its size and time as read
                    stat = (
                        (ident.size, ident.mtime)
                        if ident is not None and ident.head_hash == "records"
                        else None
                    )
                    offsets.set_quiet(self.ledger, rng.path, rng.end_offset, self.id, now, stat)

    def _mark_dreamed(
        self, work: SessionWork, result: ExtractionResult | None, candidates: int, advance: bool = True
    ) -> None:
        """Advance each file's offsets; record the extracted ranges (one transaction)."""
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


# -- deep sleep and branching helpers ---------------------------------------------------------------


def recall(index: DedupIndex, digest: Digest, scopes: Scopes) -> tuple[tuple[str, ...], bool]:
    """The closest memories the session's person turns touch, and whether memory covers them all.
    Only memories that apply to the session's project count (global ones, or this project's)."""
    threshold = DUPLICATE
    hits: dict[str, float] = {}
    substantial = 0
    covered = 0
    for turn in digest.turns:
        if turn.role != "person" or len(turn.text.strip()) < SUBSTANTIAL_TURN_CHARS:
            continue
        substantial += 1
        if substantial > RECALL_TURNS:  # a long session is a spark; its first turns give the context
            return tuple(sorted(hits, key=lambda t: -hits[t])[:CONTEXT_MEMORIES]), False
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


def auto_write_kept(config: Config, ledger: Ledger, kept_ids: list[str]) -> int:
    """Auto-write the kept candidates when a promotion is active; how many were written."""
    if not kept_ids:
        return 0
    if active_promotion(ledger) is None:
        return 0
    kept = [c for c in (ledger.get_candidate(cid) for cid in kept_ids) if c is not None]
    return sum(1 for r in auto_write(config, ledger, kept) if r.written)
