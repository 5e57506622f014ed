"""GitHub Copilot CLI: ``$COPILOT_HOME/copilot-instructions.md`` (user level) and a repository's
``.github/copilot-instructions.md``; plain Markdown with no import syntax, so the lessons are written
into the file, between dreamtui's markers."""

from __future__ import annotations

from pathlib import Path

from dreamtui.core.memory.agents.base import BLOCK, GLOBAL, PROJECT, Target, env_folder, home

name = "copilot-cli"
agent = "GitHub Copilot CLI"
way = "a generated block in ~/.copilot/copilot-instructions.md"


def folder() -> Path:
    """Copilot CLI's folder: ``$COPILOT_HOME``, else ``~/.copilot``."""
    return env_folder("COPILOT_HOME", home() / ".copilot")


def installed() -> bool:
    return folder().is_dir()


def targets(memory: Path, project: Path | None) -> list[Target]:
    found = [Target(name, folder() / "copilot-instructions.md", BLOCK, GLOBAL)]
    if project is not None:
        found.append(Target(name, project / ".github" / "copilot-instructions.md", BLOCK, PROJECT, project))
    return found
