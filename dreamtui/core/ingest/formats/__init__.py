"""Transcript formats: the registry and :func:`current`, the one way to reach the format in use.

A format is one module that implements :class:`~.protocol.TranscriptFormat` (its functions are the
protocol's methods); :mod:`.claude_code` is the only one. A second agent's transcripts (Codex CLI
rollouts, say) would be one more module beside it and one more line in :data:`FORMATS`
(``docs/ARCHITECTURE.md``, "Transcript formats").
"""

from __future__ import annotations

from dreamtui.core.ingest.formats import claude_code
from dreamtui.core.ingest.formats.protocol import TranscriptFormat

FORMATS: dict[str, TranscriptFormat] = {
    claude_code.name: claude_code,
}
"""Every format dreamtui reads, by name."""
DEFAULT = claude_code.name
"""The format :func:`current` gives."""


def current() -> TranscriptFormat:
    """The transcript format in use (Claude Code's)."""
    return FORMATS[DEFAULT]
