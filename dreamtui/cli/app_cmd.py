"""Open the Textual review app (placeholder until the app exists)."""

from __future__ import annotations

from dreamtui.core.config import Config


def run_app(config: Config, demo: bool = False) -> None:
    """Open the review app on ``config`` (or on the bundled demo data)."""
    raise SystemExit("dreamtui: the review app is not built yet")
