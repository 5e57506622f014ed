"""The app's words for a dream cycle's progress, and how it stops a cycle when the app closes.

Plain Python (no Textual), so it is tested without the app. The data itself comes from
:class:`dreamtui.services.Workspace`.
"""

from __future__ import annotations

from dreamtui.services import DreamPlan
from dreamtui.services.dreaming import PHASE_TITLES


def dream_hint(plan: DreamPlan) -> str:
    """The Sessions screen's words for what ``d`` will do (never an action it then refuses)."""
    if plan.kind == "full" or plan.covering is None:
        return "d runs today's full dream cycle"
    if plan.kind == "on-demand":
        return f"d dreams what is new since cycle #{plan.covering.id}, on demand (no REM)"
    return f"nothing new since cycle #{plan.covering.id}"


def describe_progress(phase: str, message: str, fraction: float | None) -> str:
    """A one-line progress text for the header, from ``run_cycle``'s progress callback."""
    title = PHASE_TITLES.get(phase, phase)
    pct = f" {fraction:.0%}" if fraction is not None else ""
    return f"{title}{pct} · {message}" if message and message != title else f"{title}{pct}"


class CycleStopped(BaseException):
    """Raised from a dream cycle's progress callback to stop it at a safe point (the app is quitting).

    A ``BaseException`` on purpose: the cycle's progress wrapper swallows ``Exception`` (a broken
    display never breaks a cycle), while ``run_cycle`` records any ``BaseException`` as a failed
    cycle (retried the same date, finishing what the stopped attempt began) and lets it through.
    """


CYCLE_STOPPED = "stopped because dreamtui was closed; press d (or run `dreamtui dream`) to finish it"


def cycle_stop_point(phase: str, message: str, fraction: float | None) -> bool:
    """A progress report that comes from a place a dream cycle can stop without losing work: the start
    of Deep sleep, Branching or REM, or between two sessions of Light or Deep sleep. Never inside
    Branching (extractions already paid for are gated first) nor at Wake (the cycle is done)."""
    if phase in ("deep", "branch", "rem") and message == PHASE_TITLES[phase] and fraction == 0.0:
        return True
    return (phase == "light" and message.startswith("reading ")) or (
        phase == "deep" and message.startswith("recalling memories")
    )
