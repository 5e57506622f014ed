"""Text safe to show: every secret redacted, control characters and escape codes never obeyed.

Both front ends show text from transcripts, file names, git and error messages; each goes through
here. The CLI escapes controls (``\\x1b``: :func:`printable`, :func:`printable_json`); the app draws
them as control pictures (``␛``: :func:`visible_controls`, after :func:`redact` and its own cut).
"""

from __future__ import annotations

from dreamtui.core.memory.layout import one_line
from dreamtui.core.secrets import redact
from dreamtui.core.text import escape_controls, escape_controls_json, visible_controls

__all__ = ["one_line", "printable", "printable_json", "redact", "visible_controls"]


def printable(text: str) -> str:
    """``text`` with every secret redacted and control characters and bidi overrides escaped
    (``\\x1b``), newlines kept: what the CLI prints."""
    return escape_controls(redact(text))


def printable_json(text: str) -> str:
    """JSON text with every secret redacted and DEL, C1 controls and bidi overrides as ``\\u`` escapes
    (still valid JSON, the same data)."""
    return escape_controls_json(redact(text))
