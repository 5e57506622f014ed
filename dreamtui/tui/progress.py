"""The app's words for a dream cycle's progress, and how it stops a cycle when the app closes.

Plain Python (no Textual), so it is tested without the app. The data itself comes from
:class:`dreamtui.services.Workspace`.
"""

from __future__ import annotations

from dreamtui.services import DreamPlan
from dreamtui.services.dreaming import PHASE_TITLES, CycleStopped, cycle_stop_point

__all__ = ["CYCLE_STOPPED", "CycleStopped", "cycle_stop_point", "describe_progress", "dream_hint"]


def dream_hint(plan: DreamPlan, running: bool = False) -> str:
    """The Sessions screen's words for what ``d`` will do (never an action it then refuses): nothing
    while a cycle runs."""
    if running:
        return "a dream cycle runs now (its progress is in the header): d waits until it ends"
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


CYCLE_STOPPED = "stopped because dreamtui was closed; press d (or run `dreamtui dream`) to finish it"
