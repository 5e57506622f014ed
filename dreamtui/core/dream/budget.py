"""The daily token budget (``daily_token_budget``): what today's dreams may spend on a model, counted
from the ledger's recorded usage per local day; a cycle stops sending at it and goes on the next day.

What counts is what the model's answers reported (``extractions``: input + output tokens, cache reads
not counted), per local calendar day of the person's clock (``DREAMTUI_NOW`` moves it). A session is
sent only while today's spend plus the calls in flight (counted at their estimate until they answer)
is below the budget, so a cycle may overshoot it by at most the calls already in flight.
"""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

from dreamtui.core import clock
from dreamtui.core.errors import DreamError
from dreamtui.core.ledger import Ledger, extractions
from dreamtui.core.models import Digest, ExtractionResult

CHARS_PER_TOKEN = 4.0
"""Characters of prompt text per token, for estimates (English prose and JSON: 3.5–4.5)."""


class BudgetSpent(DreamError):
    """Today's token budget is spent: nothing is sent to a model before tomorrow."""


def local_day_bounds(now: datetime | None = None) -> tuple[str, str, datetime]:
    """Today's start and end (local) as the ledger's UTC timestamps, and when tomorrow begins."""
    local = (now or clock.now()).astimezone()
    start = local.replace(hour=0, minute=0, second=0, microsecond=0)
    end = start + timedelta(days=1)
    fmt = "%Y-%m-%dT%H:%M:%SZ"
    return start.astimezone(UTC).strftime(fmt), end.astimezone(UTC).strftime(fmt), end


def spent_today(ledger: Ledger, now: datetime | None = None) -> int:
    """Tokens (input + output) the model answers recorded today (local day)."""
    start, end, _ = local_day_bounds(now)
    return extractions.tokens_between(ledger, start, end)


def digest_tokens(digest: Digest) -> int:
    """A rough count of the tokens one session's digest costs to send (its text over
    :data:`CHARS_PER_TOKEN`, plus the fixed prompt)."""
    from dreamtui.core.extract.prompt import SYSTEM_PROMPT

    chars = sum(len(t.text) for t in digest.turns) + len(SYSTEM_PROMPT)
    return int(chars / CHARS_PER_TOKEN)


def tomorrow_words(now: datetime | None = None) -> str:
    """``tomorrow (2026-03-11)``."""
    _, _, end = local_day_bounds(now)
    return f"tomorrow ({end:%Y-%m-%d})"


def spent_line(spent: int, budget: int, now: datetime | None = None) -> str:
    """The one line a stop at the budget is told in."""
    return (
        f"today's token budget is spent ({spent:,} of {budget:,} tokens, daily_token_budget); "
        f"the sessions not yet sent wait and dreaming goes on {tomorrow_words(now)}"
    )


class Gate:
    """Decides, session by session, whether a cycle may still send (thread-safe; the runner asks it
    under its own lock and tells it each answer's usage)."""

    def __init__(self, budget: int, spent_before: int) -> None:
        self.budget = budget
        self.spent_before = spent_before
        self.used = 0
        self.in_flight: dict[str, int] = {}
        self.held = 0
        self._lock = threading.Lock()

    @property
    def spent(self) -> int:
        """Today's spend so far, this cycle's answers included."""
        return self.spent_before + self.used

    def may_start(self, digest: Digest) -> str | None:
        """None to send ``digest``; else the one line saying why not (the budget is spent)."""
        with self._lock:
            if self.budget <= 0:
                return None
            if self.spent + sum(self.in_flight.values()) >= self.budget:
                self.held += 1
                return spent_line(self.spent, self.budget)
            self.in_flight[digest.session] = digest_tokens(digest)
            return None

    def answered(self, result: ExtractionResult) -> None:
        """A session ended (called from the runner's worker as it ends): what it spent counts now."""
        if result.unsent:
            return
        with self._lock:
            self.in_flight.pop(result.session, None)
            self.used += result.usage.input_tokens + result.usage.output_tokens
