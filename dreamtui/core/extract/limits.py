"""When a usage limit resets, read from the words Claude Code answers with.

Claude Code has said it in several ways over its versions (all seen in its issue tracker):

- ``Claude AI usage limit reached|1762952400`` (the reset as epoch seconds after the bar);
- ``Claude usage limit reached. Your limit will reset at 3pm (America/Santiago).``;
- ``Your limit will reset at Oct 6, 10am.``;
- ``5-hour limit reached ∙ resets 5am``;
- ``You've hit your limit · resets 3am (UTC)``, ``You've hit your session limit · resets 11:20am (Europe/Budapest)``.

:func:`reset_time` turns any of them into the next such moment after ``now`` (an aware datetime), or
None when the words name no time.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from dreamtui.core import clock

_EPOCH = re.compile(r"limit reached\|(\d{9,11})\b", re.IGNORECASE)
_AT = re.compile(
    r"resets?\s+(?:at\s+)?(?:(?P<month>[A-Z][a-z]{2,8})\.?\s+(?P<day>\d{1,2}),?\s+(?:at\s+)?)?"
    r"(?P<hour>\d{1,2})(?::(?P<minute>\d{2}))?\s*(?P<ampm>am|pm)\b(?:\s*\((?P<tz>[^)]+)\))?",
    re.IGNORECASE,
)
_MONTHS = {
    m: i + 1
    for i, m in enumerate(
        ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
    )
}

LIMIT_WORDS = ("usage limit", "hit your limit", "hit your session limit", "limit reached", "hit your weekly")
"""Words of an answer that say a usage limit (not a per-minute rate limit) was reached."""


def is_usage_limit(text: str) -> bool:
    """Whether ``text`` says a usage limit was reached."""
    low = text.lower()
    return any(w in low for w in LIMIT_WORDS)


def _zone(name: str | None) -> tzinfo:
    if not name:
        return datetime.now().astimezone().tzinfo or UTC  # the person's own clock
    if name.strip().upper() in ("UTC", "GMT", "Z"):
        return UTC
    try:
        return ZoneInfo(name.strip())
    except (ZoneInfoNotFoundError, ValueError):
        return datetime.now().astimezone().tzinfo or UTC


def reset_time(text: str, now: datetime | None = None) -> datetime | None:
    """The moment the limit ``text`` names resets (aware), the next one after ``now``; None when unsaid."""
    now = now or clock.now()
    epoch = _EPOCH.search(text)
    if epoch:
        return datetime.fromtimestamp(int(epoch.group(1)), UTC)
    found = _AT.search(text)
    if not found:
        return None
    hour, minute = int(found["hour"]) % 12, int(found["minute"] or 0)
    if found["ampm"].lower() == "pm":
        hour += 12
    if minute > 59:
        return None
    zone = _zone(found["tz"])
    local_now = now.astimezone(zone)
    if found["month"]:
        month = _MONTHS.get(found["month"][:3].lower())
        if month is None:
            return None
        try:
            at = local_now.replace(
                month=month, day=int(found["day"]), hour=hour, minute=minute, second=0, microsecond=0
            )
        except ValueError:
            return None
        if at <= local_now - timedelta(days=1):
            at = at.replace(year=at.year + 1)
        return at
    at = local_now.replace(hour=hour, minute=minute, second=0, microsecond=0)
    if at <= local_now:
        at += timedelta(days=1)
    return at


def describe_reset(at: datetime | None) -> str:
    """``15:00 UTC on 2026-12-07`` (in the person's local zone), or words saying it was not given."""
    if at is None:
        return "at a time Claude Code did not say"
    local = at.astimezone()
    return f"{local:%H:%M} {local.tzname() or ''} on {local:%Y-%m-%d}".replace("  ", " ")
