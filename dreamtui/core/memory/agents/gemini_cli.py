"""Gemini CLI: ``~/.gemini/GEMINI.md`` (``GEMINI_CLI_HOME`` moves ``~``).

GEMINI.md has ``@path`` imports, but Gemini CLI's import processor only follows a path inside the
importing file's project root (the folder holding ``.git`` above it, else the file's own folder:
``memoryImportProcessor.ts`` ``validateImportPath``), so ``~/.gemini/GEMINI.md`` cannot import
``~/.claude/memory``: the lessons are written into the file, between dreamtui's markers.
"""

from __future__ import annotations

from pathlib import Path

from dreamtui.core.memory.agents.base import BLOCK, GLOBAL, Target, env_folder, home

name = "gemini-cli"
agent = "Gemini CLI"
way = "a generated block in ~/.gemini/GEMINI.md (its @imports cannot reach a folder outside ~/.gemini)"


def folder() -> Path:
    """Gemini CLI's folder: ``$GEMINI_CLI_HOME/.gemini``, else ``~/.gemini``."""
    return env_folder("GEMINI_CLI_HOME", home()) / ".gemini"


def installed() -> bool:
    return folder().is_dir()


def targets(memory: Path, project: Path | None) -> list[Target]:
    return [Target(name, folder() / "GEMINI.md", BLOCK, GLOBAL)]
