"""What a person's explicit dream does now: the date's one full cycle, an on-demand pass over what is new
since it, or nothing (:func:`plan_dream`); the CLI, the app's ``d`` and the Sessions screen all ask it."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date as Date
from datetime import datetime
from types import EllipsisType

from dreamtui.core import clock
from dreamtui.core.config import Config
from dreamtui.core.dream.estimate import default_window
from dreamtui.core.dream.sessions import project_map, projects_with_new_content, transcript_folders
from dreamtui.core.errors import ConfigError, CycleBusy, DreamError
from dreamtui.core.ledger import Ledger, cycles
from dreamtui.core.ledger.cycles import ALL_PROJECTS, FULL, ON_DEMAND, CycleRecord

NOTHING = "nothing"
"""The plan's ``kind`` when the full cycle is done and no transcript has new content."""


class CycleAlreadyDone(CycleBusy):
    """A cycle for this project and date has already completed."""


class NothingNew(DreamError):
    """A person asked to dream after the day's full cycle and no transcript has new content: nothing to do."""


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


def parse_day(value: Date | str | None) -> str:
    """The date a cycle is for, as ``YYYY-MM-DD`` (today when None); a bad ``--date`` is a ConfigError."""
    if value is None:
        return clock.today().isoformat()
    if isinstance(value, Date):
        return value.isoformat()
    try:
        return Date.fromisoformat(str(value).strip()).isoformat()
    except ValueError as exc:
        raise ConfigError(f"--date must be YYYY-MM-DD, not {value!r}") from exc


def is_done(record: CycleRecord) -> bool:
    """A full cycle that may not run again this date: completed, unless it was a shallow sleep that
    only deferred sessions still being written (that one runs again)."""
    deferred_only = (
        record.status == "completed" and record.depth == "shallow" and record.stats.sessions_deferred > 0
    )
    return record.status == "completed" and not deferred_only


def covering_cycle(ledger: Ledger, project: str | None, day: str) -> CycleRecord | None:
    """The done full cycle of ``day`` that covers ``project`` (its own, or the one of every project);
    None when a full cycle is still to run (or to retry) for it."""
    own = cycles.find_full(ledger, project or ALL_PROJECTS, day)
    if own is not None:
        return own if is_done(own) else None
    if project is not None:
        every = cycles.find_full(ledger, ALL_PROJECTS, day)
        if every is not None and is_done(every):
            return every
    return None


def plan_dream(
    config: Config,
    ledger: Ledger,
    project: str | None = None,
    date: Date | str | None = None,
    window: datetime | None | EllipsisType = ...,
) -> DreamPlan:
    """What a person's explicit dream for ``project`` (every project when None) would do now.

    The first cycle of a date is the one full cycle (with REM); after it, an explicit dream runs an
    on-demand pass when the scope has new content, and nothing otherwise. The same rule with and
    without a project; the CLI, the app's ``d`` and the Sessions screen's hint all ask this. New
    content counts inside ``window`` (its start; None: every date; by default the recent window when
    a model dreams, see :func:`~dreamtui.core.dream.estimate.default_window`)."""
    day = parse_day(date)
    if project is not None:  # a transcript folder names its project (a worktree's: its repository's)
        project = (
            project_map(config, ledger).resolve(project, transcript_folders(config.transcripts)) or project
        )
    covering = covering_cycle(ledger, project, day)
    if covering is None:
        return DreamPlan(FULL, day)
    since = default_window(config) if window is ... else window
    new = [p for p in projects_with_new_content(config, ledger, since) if project is None or p == project]
    return DreamPlan(ON_DEMAND if new else NOTHING, day, covering, tuple(new))
