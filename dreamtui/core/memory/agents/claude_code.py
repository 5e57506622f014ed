"""Claude Code: ``~/.claude/CLAUDE.md`` imports the memory index and the briefing with ``@`` lines.

Claude Code expands ``@path`` imports in its memory files (``@~/…`` from the home folder), so the
memory is named, not copied: an accept reaches it with no rewrite.
"""

from __future__ import annotations

from pathlib import Path

from dreamtui.core.memory.agents.base import GLOBAL, IMPORT, Target, home
from dreamtui.core.memory.link import import_target

name = "claude-code"
agent = "Claude Code"
way = "`@` import lines in ~/.claude/CLAUDE.md (MEMORY.md → topic files, briefing.md)"
HEADER = "# Long-term memory curated by dreamtui"


def folder() -> Path:
    """Claude Code's home folder."""
    return home() / ".claude"


def installed() -> bool:
    """Claude Code keeps ``~/.claude``."""
    return folder().is_dir()


def targets(memory: Path, project: Path | None) -> list[Target]:
    """The user CLAUDE.md; per project nothing: the user file's imports reach every project, and the
    index lists every project's memories."""
    return [Target(name, folder() / "CLAUDE.md", IMPORT, GLOBAL)]


def import_lines(memory: Path) -> list[str]:
    """The ``@`` lines that make Claude Code load the memory index and the briefing."""
    return [_import(memory / "MEMORY.md"), _import(memory / "briefing.md")]


def _import(path: Path) -> str:
    return import_target(path)
