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
:func:`~dreamtui.core.dream.plan.plan_dream`); the scheduler and a goodnight never do. Two cycles
never run at once: a :class:`~dreamtui.core.dream.lock.CycleLock` plus the table's uniqueness for
full cycles.

Where each part lives: :mod:`.plan` (what an explicit dream does now), :mod:`.sessions` (what light
sleep reads), :mod:`.phases` (the phases), :mod:`.recovery` (what an interrupted run left, and the
retry's row), :mod:`.waking` (the waking message), :mod:`.banners` (the warnings above every command).
"""

from __future__ import annotations

import os
import time
from datetime import date as Date
from datetime import datetime
from pathlib import Path

from dreamtui.core import clock
from dreamtui.core.config import Config
from dreamtui.core.dream.budget import BudgetSpent, spent_line, spent_today
from dreamtui.core.dream.estimate import window_start
from dreamtui.core.dream.lock import CycleLock
from dreamtui.core.dream.phases import Progress, RunningCycle, UsageLimitReached, one_line
from dreamtui.core.dream.plan import (
    NOTHING,
    CycleAlreadyDone,
    DreamPlan,
    NothingNew,
    covering_cycle,
    parse_day,
    plan_dream,
)
from dreamtui.core.dream.recovery import begin_full, begin_on_demand, recover
from dreamtui.core.dream.sessions import project_map, transcript_folders
from dreamtui.core.dream.waking import PHASE_TITLES
from dreamtui.core.errors import ConfigError, DreamError, MemoryRepoError, TranscriptError
from dreamtui.core.extract import choose, make_extractor
from dreamtui.core.extract.base import Extractor
from dreamtui.core.files import is_dir
from dreamtui.core.ingest.sources import existing_roots
from dreamtui.core.ledger import Ledger, cycles
from dreamtui.core.ledger.cycles import ALL_PROJECTS, FULL, ON_DEMAND, CycleRecord
from dreamtui.core.memory.layout import bare_repository_message, is_bare_repository
from dreamtui.core.repository import encode_path

SESSION_END = "session-end"
"""The trigger of a cycle ``watch`` runs for a session Claude Code ended (the plugin's SessionEnd hook)."""
ASKED = ("manual", SESSION_END)
"""Triggers that dream what a person's explicit dream would: the date's full cycle, else an on-demand
pass over what is new (a session's end is the person's own "I am done here")."""

STOPPED_BY_CTRL_C = "stopped by Ctrl-C"
"""How a cycle stopped by Ctrl-C is recorded, after its phase (``Branching: stopped by Ctrl-C``)."""


class CycleFailed(DreamError):
    """A cycle failed; its record says why and it may be retried the same date."""

    def __init__(self, message: str, record: CycleRecord | None = None) -> None:
        super().__init__(message)
        self.record = record


class CycleLimited(CycleFailed):
    """A usage limit stopped the cycle in Branching: what was answered is stored, the rest waits until
    ``resets_at`` (aware datetime, None when unsaid); the next dream after it finishes the cycle."""

    def __init__(self, message: str, record: CycleRecord | None, resets_at: datetime | None) -> None:
        super().__init__(message, record)
        self.resets_at = resets_at


def run_cycle(
    config: Config,
    ledger: Ledger,
    project: str | None = None,
    date: Date | str | None = None,
    trigger: str = "manual",
    progress: Progress | None = None,
    extractor: Extractor | None = None,
    since: datetime | None = None,
    everything: bool = False,
) -> CycleRecord:
    """Run one dream cycle for ``project`` (every project with new content when None) as of ``date``.

    Raises :class:`~dreamtui.core.errors.CycleBusy` when another cycle holds the lock,
    :class:`~dreamtui.core.dream.plan.CycleAlreadyDone` when this project and date already completed
    (both do no work), :class:`CycleFailed` when a phase fails (the record is kept as ``failed`` and
    may be retried). ``progress(phase, message, fraction)`` is called as the phases advance.
    ``extractor`` overrides ``make_extractor(config)``. ``project`` is a transcript folder's name, a
    project key, or a working folder's absolute path (the project of the sessions started there).

    An extractor that asks a model reads only the sessions written in the recent window
    (``dream_window_days``; from ``since`` when given; every date with ``everything``); the older ones
    are left as they are, for an explicit back-fill. Without a model everything is read.

    A person's explicit dream (``trigger="manual"``, or ``session-end``: watch dreaming a session Claude
    Code ended) after the date's full cycle (``plan_dream``) is an on-demand pass over the new content instead (Light sleep, Deep sleep, Branching, Wake; no
    REM), recorded with ``kind = 'on-demand'``; with nothing new it raises
    :class:`~dreamtui.core.dream.plan.NothingNew`. The scheduler and a goodnight never run one: for
    them a done date stays :class:`~dreamtui.core.dream.plan.CycleAlreadyDone`.
    """
    day = parse_day(date)
    if not is_dir(config.transcripts) and not existing_roots(config):  # no agent's folder at all
        what = "is not a folder" if os.path.lexists(config.transcripts) else "does not exist"
        raise TranscriptError(f"transcripts folder {config.transcripts} {what} (see --transcripts)")
    if is_bare_repository(config.memory):  # refused before anything is read, recorded or written
        raise MemoryRepoError(bare_repository_message(config.memory))
    reason = None
    if extractor is None:  # a missing API key or command is a clear error before anything is recorded
        choice = choose(config)
        extractor, reason = make_extractor(config), choice.reason if choice.auto else None
    with CycleLock(config.lock_path):
        pmap = project_map(config, ledger, remember=True)
        # a transcript folder or a project key names the project; a worktree's folder, its repository's
        if project is not None:
            named = project
            key = None
            if named not in {"", ".", ".."} and Path(named).name == named:
                key = pmap.resolve(named, transcript_folders(config.transcripts))
            elif os.path.isabs(named):  # a working folder: the project of the sessions started there
                key = pmap.resolve(encode_path(named), transcript_folders(config.transcripts))
            if key is None:
                raise ConfigError(f"no project {named!r} under {config.transcripts}")
            project = key
        chat_id = project or ALL_PROJECTS
        recovered = recover(config, ledger, pmap)
        asked = trigger in ASKED
        if not asked:  # the scheduler, a goodnight: the date's full cycle of every project covers P too
            every = covering_cycle(ledger, project, day)
            if every is not None and every.chat_id != chat_id:
                raise CycleAlreadyDone(
                    f"already dreamed {project} on {day} (cycle #{every.id}, every project); "
                    "one cycle per project per date"
                )
        start = window_start(config, since, everything) if extractor.capabilities.model_backed else None
        plan = plan_dream(config, ledger, project, day, window=start) if asked else DreamPlan(FULL, day)
        if plan.kind == NOTHING:
            raise NothingNew(plan.describe(project))
        on_demand = plan.kind == ON_DEMAND
        if config.daily_token_budget and extractor.capabilities.model_backed:
            spent = spent_today(ledger)
            if spent >= config.daily_token_budget:  # nothing recorded: the next day's dream goes on
                raise BudgetSpent(spent_line(spent, config.daily_token_budget))
        attempt = (
            begin_on_demand(ledger, chat_id, day) if on_demand else begin_full(ledger, chat_id, day, trigger)
        )
        cycle_id = attempt.cycle_id
        run = RunningCycle(
            config, ledger, cycle_id, project, day, trigger, progress, extractor, pmap, attempt, on_demand
        )
        run.stats.extractor_reason = reason
        run.since = start
        for line in recovered.rekeyed:
            run.progress(line)
        if on_demand:
            run.stats.after_cycle = plan.covering.id if plan.covering else None
        if recovered.interrupted:
            run.stats.interrupted_cycles = recovered.interrupted
        if recovered.memory:
            run.stats.recovered = recovered.memory
        try:
            run.run()
        except BaseException as exc:
            why = STOPPED_BY_CTRL_C if isinstance(exc, KeyboardInterrupt) else one_line(exc)
            message = f"{PHASE_TITLES.get(run.current, run.current)}: {why}"
            run.close_phase()
            # what earlier failed attempts extracted stays in the row, so the next retry still
            # finishes their REM and counts it, however many attempts fail in between
            run.carry_earlier()
            depth = "deep" if attempt.earlier_deep else run.depth
            run.stats.seconds = round(time.monotonic() - run.t0, 3)
            if isinstance(exc, UsageLimitReached) and exc.resets_at is not None:
                run.stats.limit_resets_at = exc.resets_at.isoformat()
            _finish(ledger, cycle_id, "failed", depth, run, message)
            record = cycles.get(ledger, cycle_id)
            if isinstance(exc, UsageLimitReached):
                what = "on-demand dream pass" if on_demand else "dream cycle"
                raise CycleLimited(
                    f"{what} #{cycle_id} stopped: {exc}; `dreamtui dream` then goes on", record, exc.resets_at
                ) from exc
            if isinstance(exc, Exception):
                raise CycleFailed(f"dream cycle failed in {message}; run it again to retry", record) from exc
            raise
        _finish(ledger, cycle_id, "completed", run.depth, run, None)
    record = cycles.get(ledger, cycle_id)
    assert record is not None
    return record


def _finish(
    ledger: Ledger, cycle_id: int, status: str, depth: str | None, run: RunningCycle, error: str | None
) -> None:
    """Record how the cycle ended: its status, depth, phases, stats and error."""
    cycles.finish(ledger, cycle_id, status, clock.now_iso(), error, depth, run.phases, run.stats.to_json())
