"""OpenCode: ``~/.config/opencode/AGENTS.md`` (global) and a repository's ``AGENTS.md``.

OpenCode does not follow file references in AGENTS.md (its ``opencode.json`` ``instructions`` list
can name files, but it is the person's JSON config): the lessons are written into the file, between
dreamtui's markers. While no global AGENTS.md exists, OpenCode reads ``~/.claude/CLAUDE.md`` instead;
making one ends that, which the offer says.
"""

from __future__ import annotations

from pathlib import Path

from dreamtui.core.memory.agents.base import BLOCK, GLOBAL, PROJECT, Target, env_folder, home

name = "opencode"
agent = "OpenCode"
way = "a generated block in ~/.config/opencode/AGENTS.md"


def folder() -> Path:
    """OpenCode's config folder: ``$XDG_CONFIG_HOME/opencode``, else ``~/.config/opencode``."""
    return env_folder("XDG_CONFIG_HOME", home() / ".config") / "opencode"


def installed() -> bool:
    return folder().is_dir()


def targets(memory: Path, project: Path | None) -> list[Target]:
    global_file = folder() / "AGENTS.md"
    note = ""
    if not global_file.exists() and (home() / ".claude" / "CLAUDE.md").is_file():
        note = (
            "OpenCode reads ~/.claude/CLAUDE.md only while it has no AGENTS.md of its own: "
            "making this file ends that"
        )
    found = [Target(name, global_file, BLOCK, GLOBAL, note=note)]
    if project is not None:
        found.append(Target(name, project / "AGENTS.md", BLOCK, PROJECT, project))
    return found
