"""Cursor: a project rule, ``.cursor/rules/dreamtui.mdc`` with ``alwaysApply: true``, per repository.

Cursor's own user rules live in its settings, not in a file dreamtui could edit, so Cursor is linked
per project only (``dreamtui link --project PATH``). The rule file is dreamtui's: its frontmatter and
the lessons between dreamtui's markers.
"""

from __future__ import annotations

from pathlib import Path

from dreamtui.core.memory.agents.base import BLOCK, PROJECT, Target, home

name = "cursor"
agent = "Cursor"
way = "a project rule .cursor/rules/dreamtui.mdc (alwaysApply), per project only"
FRONTMATTER = "---\ndescription: Lessons you accepted in dreamtui's memory\nalwaysApply: true\n---\n\n"


def folder() -> Path:
    return home() / ".cursor"


def installed() -> bool:
    return folder().is_dir()


def targets(memory: Path, project: Path | None) -> list[Target]:
    if project is None:
        return []
    rule = project / ".cursor" / "rules" / "dreamtui.mdc"
    return [Target(name, rule, BLOCK, PROJECT, project, prefix=FRONTMATTER)]
