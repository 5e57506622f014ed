"""The settings a person changes in the app (theme, the queue's order), kept in their config file."""

from __future__ import annotations

from dreamtui.core.settings import save_ui

__all__ = ["save_ui"]
