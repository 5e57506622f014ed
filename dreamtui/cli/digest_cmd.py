"""``dreamtui digest FILE`` (the turns a model would read) and ``dreamtui config``."""

from __future__ import annotations

import os
import shlex
from pathlib import Path

import click
import orjson

from dreamtui.cli.main import cli, pass_config
from dreamtui.cli.output import echo, echo_json, printable
from dreamtui.core.config import Config
from dreamtui.core.models import Digest
from dreamtui.services import extracting, outside, transcripts
from dreamtui.services.display import redact


def render(digest: Digest) -> str:
    """The digest as readable text: one block per turn (role, time, line, text)."""
    out: list[str] = []
    s = digest.stats
    out.append(
        printable(
            f"# session {digest.session} · project {digest.project} · {len(digest.turns)} turns · "
            f"{s.bytes:,} bytes · {s.chars:,} chars kept · signal {s.signal_pct}% · "
            f"{s.skipped_lines} lines skipped"
            + (
                f" · {s.replaced} repaired (bad bytes shown as \ufffd, or a byte-order mark removed)"
                if s.replaced
                else ""
            )
        )
    )
    multi = len(digest.files) > 1
    for turn in digest.turns:
        when = (turn.timestamp or "")[:19].replace("T", " ")
        where = f"{Path(turn.file).name}:{turn.line}" if multi else f"L{turn.line}"
        label = turn.role if turn.kind in ("text", "prompt") else f"{turn.role} ({turn.kind})"
        out.append("")
        out.append(printable(f"[{label}] {when}  {where}"))
        # redacted whole before it is split: a key block spans lines
        out.extend("  " + printable(line) for line in redact(turn.text).splitlines() or [""])
    return "\n".join(out)


@cli.command("digest")
@click.argument("file", type=click.Path(path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print {turns, stats} as JSON.")
@click.option(
    "--session",
    "whole_session",
    is_flag=True,
    help="Also read the session's sub-agent files (FILE is the main session file).",
)
@click.option("--no-interrupts", is_flag=True, help="Leave out '[Request interrupted by user]' markers.")
@pass_config
def digest_command(
    config: Config, file: Path, as_json: bool, whole_session: bool, no_interrupts: bool
) -> None:
    """Print the digest of one transcript FILE: the person's words and the assistant's prose."""
    digest = transcripts.digest(file, whole_session=whole_session, interrupts=not no_interrupts)
    if as_json:
        echo_json(orjson.dumps(digest.to_json(), option=orjson.OPT_INDENT_2).decode())
    else:
        click.echo(render(digest))


@cli.command("config")
@pass_config
def show_config(config: Config) -> None:
    """Print the resolved configuration (where things live)."""
    for name in ("transcripts", "memory", "state", "config_file"):
        echo(f"{name}: {getattr(config, name)}")
    choice = extracting.extractor_choice(config)
    extractor = choice.kind
    echo(f"extractor: {extractor} (configured: {config.extractor}; {choice.reason})")
    if choice.note:
        echo(f"  {choice.note}")
    for name in (
        "model",
        "command",
        "command_timeout",
        "concurrency",
        "quiet_minutes",
        "min_person_chars",
        "api_timeout",
        "max_retries",
        "max_digest_chars",
        "batch",
        "poll",
        "rescan_seconds",
        "schedule",
        "openai_base_url",
        "openai_model",
        "openai_timeout",
        "openai_stall_timeout",
        "openai_max_tokens",
        "context_tokens",
        "structured_output",
    ):
        value = getattr(config, name)
        if isinstance(value, tuple):
            value = shlex.join(value) if value else None
        echo(f"{name}: {'(none)' if value is None else value}")
    fallback = " (OPENAI_API_KEY is set: that one is sent)" if os.environ.get("OPENAI_API_KEY") else ""
    echo(f"openai_api_key: {masked(config.openai_api_key)}{fallback if not config.openai_api_key else ''}")
    echo(f"dedup_judge: {config.dedup_judge} ({extracting.judging(config)})")
    for action, key in sorted((config.keys or {}).items()):
        echo(f"keys.{action}: {key}")
    for row in transcripts.formats_found(config):  # every agent's transcripts: where read, where found
        where = "(not read: enabled = false)" if row.folder is None else f"{row.folder}"
        if row.state == "projects":
            where = "(looked for in the projects the other agents' sessions ran in)"
        elif row.state == "found":
            where = f"found {row.folder}"
        state = {"read": "", "absent": " (not there yet)", "off": "", "projects": "", "found": ""}[row.state]
        if row.sessions is not None:
            state += f" ({row.sessions} session{'' if row.sessions == 1 else 's'})"
        echo(f"formats.{row.name}: {row.agent}: {where}{state}")
    for agent, what in outside.guarded(config):  # the agents' own memories the outside guard reviews
        echo(f"guard.{agent}: {what}")


def masked(key: str | None) -> str:
    """A key as ``dreamtui config`` shows it: whether it is set, never its characters."""
    return "(none)" if not key else f"(set, {len(key)} characters, hidden)"
