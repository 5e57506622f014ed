"""The briefing as it stands in the memory repository: its text now or at a commit, its history, its
path. No ledger; the version waiting for review and the decisions on it go through the
:class:`Workspace` (:meth:`~Workspace.briefing_proposal`, :meth:`~Workspace.accept_briefing`, ...).
"""

from __future__ import annotations

from pathlib import Path

from dreamtui.core.config import Config
from dreamtui.core.memory import briefing
from dreamtui.core.memory.briefing import BriefingVersion

__all__ = ["BriefingVersion", "history", "path", "text"]


def path(config: Config) -> Path:
    """Where ``briefing.md`` lives."""
    return briefing.briefing_path(config)


def text(config: Config, sha: str | None = None) -> str | None:
    """The briefing as it is now (or in commit ``sha``); ``None`` when there is none."""
    return briefing.briefing_at(config, sha) if sha else briefing.read_briefing(config)


def history(config: Config) -> list[BriefingVersion]:
    """Every version of the briefing, newest first."""
    return briefing.briefing_history(config)
