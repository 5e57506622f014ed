"""``dreamtui link``: offer to add the memory import lines to ``~/.claude/CLAUDE.md``."""

from __future__ import annotations

from pathlib import Path

import click

from dreamtui.cli.main import cli, pass_config
from dreamtui.cli.output import echo
from dreamtui.core.config import Config
from dreamtui.services.memory_repo import apply_link, plan_link


@cli.command("link")
@click.option(
    "--claude-md",
    type=click.Path(path_type=Path),
    default=None,
    help="The CLAUDE.md to edit (default ~/.claude/CLAUDE.md).",
)
@click.option("--yes", is_flag=True, help="Add the lines without asking.")
@pass_config
def link(config: Config, claude_md: Path | None, yes: bool) -> None:
    """Show (and with consent add) the import lines that make Claude Code load the memory."""
    plan = plan_link(config.memory, claude_md)
    if not plan.needed:
        echo(f"{plan.claude_md} already imports the memory index and briefing.")
        return
    echo(f"{plan.claude_md} lacks these lines:")
    for line in plan.missing:
        echo(f"    {line}")
    if not yes and not click.confirm("Add them?", default=False):
        echo("Nothing changed.")
        return
    apply_link(plan)
    echo(f"Added {len(plan.missing)} line(s) to {plan.claude_md}.")
