"""Errors a person may see. Each carries a one-line message; the CLI prints it without a traceback."""

from __future__ import annotations

from datetime import datetime
from typing import Any


class DreamError(Exception):
    """Base class: an expected failure with a clear one-line message for the person."""


class ConfigError(DreamError):
    """Bad configuration: a flag, an environment variable or the TOML file."""


class LedgerError(DreamError):
    """The ledger cannot be opened or written."""


class TranscriptError(DreamError):
    """A transcript cannot be read at all (missing, a directory, unreadable)."""


class MemoryRepoError(DreamError):
    """The memory repository refuses a write (detached HEAD, merge in progress, ceiling, unsafe path)."""


class ExtractorError(DreamError):
    """An extractor failed (bad key, rate limit, overload, network, bad output).

    ``usage`` is what the model did before it failed (the calls the server worked on, the tokens of the
    parts already answered), so a failed session's work still counts in the cycle's totals."""

    usage: Any = None


class ExtractorAuthError(ExtractorError):
    """Every further call would fail the same way (credentials refused, not logged in, a usage
    limit reached, a model refused): the runner stops calling for the sessions not yet started."""


class CycleBusy(DreamError):
    """Another dream cycle holds the lock or already ran for this project and date."""


class UsageLimitError(ExtractorAuthError):
    """The model's account reached its usage limit (Claude Code's 5-hour or weekly limit): no further
    call is made until ``resets_at`` (aware datetime; None when the answer did not say when)."""

    def __init__(self, message: str, resets_at: datetime | None = None) -> None:
        super().__init__(message)
        self.resets_at = resets_at
