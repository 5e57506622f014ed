"""Terminal output of the CLI: text from transcripts, file names and git can never style the terminal,
and no secret is ever printed.

Every human-readable line goes through :func:`echo`, which redacts every secret and shows control
characters (C0 except newline and tab, DEL, C1) and bidi overrides escaped (``\\x1b``), so a project
folder name, a person's prompt or an error message carrying ANSI/OSC escape codes cannot move the
cursor, retitle or recolour the terminal. JSON output (:func:`echo_json`) is redacted too and stays
valid JSON; its C0 escaping is left to ``json.dumps``. Both come from :mod:`dreamtui.services.display`.
"""

from __future__ import annotations

from typing import Any

import click

from dreamtui.services.display import printable, printable_json

__all__ = ["echo", "echo_json", "printable"]


def echo(message: Any = "", *, err: bool = False, nl: bool = True) -> None:
    """``click.echo`` of ``message`` made printable."""
    click.echo(printable(str(message)), err=err, nl=nl)


def echo_json(text: str) -> None:
    """Print JSON text with DEL, C1 controls and bidi overrides as ``\\u`` escapes (still valid JSON,
    the same data): ``json.dumps(ensure_ascii=False)`` and ``orjson`` escape only C0 themselves."""
    click.echo(printable_json(text))
