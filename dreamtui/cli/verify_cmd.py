"""CLI sub-commands (placeholder until implemented)."""

from __future__ import annotations

from dreamtui.cli.main import cli  # noqa: F401
