"""``dreamtui verify FILE QUOTE [--json]``: is the quote really in that session's transcript?"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from dreamtui.cli.main import cli, pass_config
from dreamtui.cli.output import echo, echo_json
from dreamtui.core.config import Config
from dreamtui.services import transcripts


@cli.command(context_settings={"ignore_unknown_options": True})  # a quote may begin with "-" (a list item)
@click.argument("file", type=click.Path(path_type=Path))
@click.argument("quote")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@pass_config
def verify(config: Config, file: Path, quote: str, as_json: bool) -> None:
    """Verify that QUOTE lies inside one record of the session FILE (and its sub-agents).

    Exits 0 and prints every place when verified, 1 when not. QUOTE ``-`` reads the quote from
    standard input (its final newline dropped); a quote that begins with ``-`` is a quote, not an
    option (``verify FILE "- item"``, or ``verify FILE -- "- item"``).
    """
    if quote == "-":
        quote = sys.stdin.read().removesuffix("\n").removesuffix("\r")
        if not quote.strip():
            raise click.UsageError("no quote on standard input")
    result = transcripts.verify(quote, transcripts.session_files_for(file))
    if as_json:
        data = result.to_json()
        echo_json(json.dumps(data, ensure_ascii=False))
    elif result.verified:
        echo(f"verified: {len(result.matches)} place(s)")
        for m in result.matches:
            copy = " (copy)" if m.copy else ""
            echo(f"  {m.file}:{m.line}  {m.provenance}{copy}  uuid={m.uuid}  {m.timestamp or ''}".rstrip())
    else:
        echo(f"not verified: {result.reason}")
    click.get_current_context().exit(0 if result.verified else 1)
