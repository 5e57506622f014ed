"""Terminal output of the CLI: text from transcripts, file names and git can never style the terminal,
and no secret is ever printed.

Every human-readable line goes through :func:`echo`, which redacts every secret
(:func:`dreamtui.core.secrets.redact`) and shows control characters (C0 except newline and tab, DEL,
C1) and bidi overrides escaped (``\\x1b``), so a project folder name, a person's prompt or an error
message carrying ANSI/OSC escape codes cannot move the cursor, retitle or recolour the terminal.
JSON output (:func:`echo_json`) is redacted too and stays valid JSON; its C0 escaping is left to
``json.dumps``.
"""

from __future__ import annotations

from typing import Any

import click

from dreamtui.core.secrets import redact
from dreamtui.core.text import escape_controls, escape_controls_json


def printable(text: str) -> str:
    """``text`` with every secret redacted and control characters and bidi overrides escaped
    (``\\x1b``), newlines kept."""
    return escape_controls(redact(text))


def echo(message: Any = "", *, err: bool = False, nl: bool = True) -> None:
    """``click.echo`` of ``message`` made printable."""
    click.echo(printable(str(message)), err=err, nl=nl)


def echo_json(text: str) -> None:
    """Print JSON text with DEL, C1 controls and bidi overrides as ``\\u`` escapes (still valid JSON,
    the same data): ``json.dumps(ensure_ascii=False)`` and ``orjson`` escape only C0 themselves."""
    click.echo(escape_controls_json(redact(text)))
