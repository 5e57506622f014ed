"""One clock for the whole tool: ``DREAMTUI_NOW`` (ISO 8601) overrides the real time everywhere."""

from __future__ import annotations

import os
from datetime import UTC, date, datetime

from dreamtui.core.errors import DreamError

ENV_NOW = "DREAMTUI_NOW"


class ClockError(DreamError, ValueError):
    """``DREAMTUI_NOW`` is set but is not an ISO 8601 timestamp."""


def parse_timestamp(text: str) -> datetime:
    """Parse an ISO 8601 timestamp (``Z`` allowed); naive values are taken as UTC."""
    value = text.strip()
    if value.endswith("Z") or value.endswith("z"):
        value = value[:-1] + "+00:00"
    dt = datetime.fromisoformat(value)
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return dt


def now() -> datetime:
    """The current time as an aware UTC datetime, or ``DREAMTUI_NOW`` when it is set."""
    override = os.environ.get(ENV_NOW)
    if override:
        try:
            return parse_timestamp(override).astimezone(UTC)
        except ValueError as exc:
            raise ClockError(f"{ENV_NOW}={override!r} is not an ISO 8601 timestamp") from exc
    return datetime.now(UTC)


def now_iso() -> str:
    """``now()`` as an ISO 8601 string with seconds precision and a ``Z`` suffix."""
    return now().strftime("%Y-%m-%dT%H:%M:%SZ")


def today() -> date:
    """Today's date (UTC) by ``now()``."""
    return now().date()
