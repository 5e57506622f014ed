"""Dream cycles for the front ends: run one, watch the transcripts and dream on good night and on a
schedule (the daemon), and the words a cycle is told in (phase titles, the waking message, banners).

What a dream would do now and the cycles so far are read through the :class:`Workspace`
(:meth:`~Workspace.dream_plan`, :meth:`~Workspace.cycles`).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from dreamtui.core.config import Config
from dreamtui.core.dream.banners import banner_lines_for
from dreamtui.core.dream.budget import BudgetSpent
from dreamtui.core.dream.daemon import DreamDaemon, parse_schedule
from dreamtui.core.dream.estimate import (
    Counter,
    Estimate,
    estimate_dream,
    first_model_dream,
    parse_since,
    refine_with_count,
    spends,
    window_start,
)
from dreamtui.core.dream.lock import WatchLock
from dreamtui.core.dream.phases import Progress
from dreamtui.core.dream.plan import DreamPlan, NothingNew
from dreamtui.core.dream.run import STOPPED_BY_CTRL_C, CycleFailed, CycleLimited, run_cycle
from dreamtui.core.dream.sessions import project_map, transcript_folders
from dreamtui.core.dream.waking import PHASE_TITLES, consolidation_summary, new_proposals, waking_message
from dreamtui.core.extract import make_extractor
from dreamtui.core.extract.choose import choose
from dreamtui.core.extract.prompt import ExtractionOut
from dreamtui.core.ledger.cycles import CycleRecord
from dreamtui.services.workspace import Workspace

__all__ = [
    "PHASE_TITLES",
    "BudgetSpent",
    "Estimate",
    "parse_since",
    "preview",
    "CycleLimited",
    "STOPPED_BY_CTRL_C",
    "CycleFailed",
    "CycleRecord",
    "DreamDaemon",
    "DreamPlan",
    "NothingNew",
    "Progress",
    "CycleStopped",
    "banner_lines_for",
    "cycle_stop_point",
    "consolidation_summary",
    "daemon",
    "dream",
    "parse_schedule",
    "stopped_cycle",
    "new_proposals",
    "waking_message",
    "watch_lock",
]


def dream(
    ws: Workspace,
    *,
    project: str | None = None,
    date: str | None = None,
    trigger: str = "manual",
    progress: Progress | None = None,
    since: datetime | None = None,
    everything: bool = False,
) -> CycleRecord:
    """Run one dream cycle of the workspace's folders (``project``, else every project) as of ``date``.

    Raises ``CycleBusy`` when another cycle runs, :class:`NothingNew` when a person's dream after the
    day's full cycle finds nothing new, :class:`CycleFailed` when a phase fails (it may be retried).
    """
    return run_cycle(
        ws.config,
        ws.ledger,
        project=project,
        date=date,
        trigger=trigger,
        progress=progress,
        since=since,
        everything=everything,
    )


def preview(
    ws: Workspace,
    project: str | None = None,
    since: datetime | None = None,
    everything: bool = False,
    count_tokens: bool = False,
) -> Estimate | None:
    """What a dream with a model would read and send now (an estimate, no network); None when the
    configured extractor asks no model (nothing is spent, nothing is asked). ``count_tokens`` (with
    the anthropic extractor) refines it with the API's token count of a few sampled requests."""
    config = ws.config
    if not spends(config):
        return None
    kind = choose(config).kind
    if project is not None:
        project = (
            project_map(config, ws.ledger).resolve(project, transcript_folders(config.transcripts)) or project
        )
    model = config.openai_model if kind == "openai" else config.model
    est = estimate_dream(
        config,
        ws.ledger,
        project=project,
        since=window_start(config, since, everything),
        extractor=kind,
        model=model,
        batch=config.batch and kind == "anthropic",
        priced=kind == "anthropic",
    )
    est.first = first_model_dream(ws.ledger)
    if count_tokens and kind == "anthropic" and est.samples:
        refine_with_count(est, config, _api_counter(config))
    return est


def _api_counter(config: Config) -> Counter:
    """``client.messages.count_tokens`` of the anthropic extractor's client, with its model and schema."""
    client = make_extractor(config).client  # type: ignore[attr-defined]

    def count(params: dict[str, Any]) -> int:
        answer = client.messages.count_tokens(model=config.model, output_format=ExtractionOut, **params)
        return int(answer.input_tokens)

    return count


def watch_lock(ws: Workspace) -> WatchLock:
    """The lock a running watch holds (``with`` it around the daemon): a second watch on the same state
    folder is ``CycleBusy``, and ``dreamtui status`` sees the holder's pid."""
    return WatchLock(ws.config.watch_lock_path)


def daemon(
    ws: Workspace,
    *,
    poll: bool,
    schedule: tuple[int, int] | None,
    debounce: float,
    say: Callable[[str], None],
    on_wake: Callable[[CycleRecord], None],
    progress: Progress | None = None,
) -> DreamDaemon:
    """The watch daemon over the workspace: it dreams a project when its person says good night, every
    project daily at ``schedule`` (UTC), and tells ``say`` and ``on_wake`` what happens."""
    return DreamDaemon(
        ws.config,
        ws.ledger,
        poll=poll,
        schedule=schedule,
        debounce=debounce,
        say=say,
        on_wake=on_wake,
        progress=progress,
    )


class CycleStopped(BaseException):
    """Raised from a dream cycle's progress callback to stop it at a safe point (the app is quitting,
    or Ctrl-C in ``dreamtui dream``).

    A ``BaseException`` on purpose: the cycle's progress wrapper swallows ``Exception`` (a broken
    display never breaks a cycle), while ``run_cycle`` records any ``BaseException`` as a failed
    cycle (retried the same date, finishing what the stopped attempt began) and lets it through.
    """


def cycle_stop_point(phase: str, message: str, fraction: float | None) -> bool:
    """A progress report that comes from a place a dream cycle can stop without losing work: the start
    of Deep sleep, Branching or REM, or between two sessions of Light or Deep sleep. Never inside
    Branching (extractions already paid for are gated first) nor at Wake (the cycle is done)."""
    if phase in ("deep", "branch", "rem") and message == PHASE_TITLES[phase] and fraction == 0.0:
        return True
    return (phase == "light" and message.startswith("reading ")) or (
        phase == "deep" and message.startswith("recalling memories")
    )


def stopped_cycle(ws: Workspace, why: str = STOPPED_BY_CTRL_C) -> CycleRecord | None:
    """The cycle just stopped for ``why`` (the newest cycle, recorded as failed with that reason), or
    None when the stop came before a cycle was recorded."""
    newest = ws.cycles(1)
    if newest and newest[0].status == "failed" and (newest[0].error_message or "").endswith(why):
        return newest[0]
    return None
