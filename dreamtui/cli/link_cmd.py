"""``dreamtui link``: offer every installed agent its way to the memory, as a diff the person confirms;
``--undo`` takes back exactly what it added."""

from __future__ import annotations

import json
from pathlib import Path

import click

from dreamtui.cli.main import cli, pass_config
from dreamtui.cli.output import echo, echo_json
from dreamtui.core.config import Config
from dreamtui.core.errors import DreamError
from dreamtui.services import memory_repo
from dreamtui.services.memory_repo import AgentPlan, LinkChange


@cli.command("link")
@click.option(
    "--agent",
    "agents",
    multiple=True,
    type=click.Choice(memory_repo.agent_names()),
    help="Only this agent (repeatable); default: every agent, each installed one offered.",
)
@click.option(
    "--project",
    type=click.Path(path_type=Path),
    default=None,
    help="Also offer this project's own files (AGENTS.md, .github/copilot-instructions.md, "
    ".cursor/rules/dreamtui.mdc); never committed.",
)
@click.option("--undo", is_flag=True, help="Remove exactly what dreamtui link added.")
@click.option("--yes", is_flag=True, help="Write without asking (for scripts).")
@click.option("--json", "as_json", is_flag=True, help="Print the plan as JSON (written only with --yes).")
@click.option(
    "--claude-md",
    type=click.Path(path_type=Path),
    default=None,
    help="The CLAUDE.md to edit instead of ~/.claude/CLAUDE.md (alone: Claude Code only).",
)
@pass_config
def link(
    config: Config,
    agents: tuple[str, ...],
    project: Path | None,
    undo: bool,
    yes: bool,
    as_json: bool,
    claude_md: Path | None,
) -> None:
    """Show, agent by agent, what makes it load the lessons you accept, and write it when you say yes.

    Claude Code imports the memory with @ lines; Codex CLI, Gemini CLI, OpenCode and Copilot CLI get
    a block of the accepted lessons between dreamtui's markers, rewritten on every accept and undo;
    Cursor gets a project rule (with --project). Each agent is asked separately.
    """
    root = memory_repo.link_project(project) if project is not None else None
    chosen = list(agents) or (["claude-code"] if claude_md is not None else [])
    names = chosen or memory_repo.agent_names()
    errors = 0
    report = []
    for name in names:  # planned one at a time: two agents may share a file (a project's AGENTS.md)
        item = memory_repo.plan_agents(
            config, [name], root, undo=undo, claude_md=claude_md, chosen=bool(chosen)
        )[0]
        written = False
        if as_json:
            if yes and item.needed:
                written = _write(config, item)
            report.append({**item.to_json(), "written": written})
        else:
            _show(item, undo)
            if item.needed:
                verb = "Unlink" if undo else "Link"
                if yes or click.confirm(f"{verb} {item.agent}?", default=False):
                    written = _write(config, item)
                    echo(f"{item.agent}: {'unlinked' if undo else 'linked'}.")
                else:
                    echo(f"Nothing changed for {item.agent}.")
        errors += sum(1 for c in item.changes if c.state == "error")
    if as_json:
        echo_json(json.dumps(report, indent=2, ensure_ascii=False))
    if errors:
        raise DreamError(f"{errors} file{'s' if errors != 1 else ''} could not be read or written (above)")


def _show(item: AgentPlan, undo: bool) -> None:
    if not item.installed and not item.changes:
        echo(f"{item.agent}: not installed (no {item.folder})")
        return
    if not item.changes:
        echo(f"{item.agent}: {item.note}")
        return
    echo(f"{item.agent}: {item.way}")
    for change in item.changes:
        where = f"  {change.target.path}"
        if change.state == "error":
            echo(f"{where}: {change.message}")
        elif not change.needed:
            prefix = "already " if change.state == "linked" else ""
            echo(f"{where}: {prefix}{change.message}")
        else:
            scope = (
                " (in the project's own repository: never committed)"
                if change.target.scope == "project"
                else ""
            )
            echo(f"{where}: {change.message}{scope}")
            if change.target.note:
                echo(f"    note: {change.target.note}")
            for line in change.diff():
                echo(f"    {line}")


def _write(config: Config, item: AgentPlan) -> bool:
    for change in item.needed:
        _apply(config, change)
    return True


def _apply(config: Config, change: LinkChange) -> None:
    memory_repo.apply_agent_change(config, change)
