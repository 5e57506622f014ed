"""Codex CLI: ``$CODEX_HOME/AGENTS.md`` (global) and a repository's ``AGENTS.md``; no import syntax.

Codex reads the first non-empty of ``AGENTS.override.md`` and ``AGENTS.md`` in its home folder, then
one file per folder from the repository's root down to the working folder, verbatim (``@path`` is not
expanded), up to ``project_doc_max_bytes`` (32 KiB). So the lessons are written into the file, between
dreamtui's markers.
"""

from __future__ import annotations

from pathlib import Path

from dreamtui.core.memory.agents.base import BLOCK, GLOBAL, PROJECT, Target, env_folder, home

name = "codex"
agent = "Codex CLI"
way = "a generated block in $CODEX_HOME/AGENTS.md (AGENTS.override.md when that one is in use)"


def folder() -> Path:
    """Codex's home folder: ``$CODEX_HOME``, else ``~/.codex``."""
    return env_folder("CODEX_HOME", home() / ".codex")


def installed() -> bool:
    return folder().is_dir()


def _chosen(where: Path) -> Path:
    """The file Codex reads in ``where``: a non-empty ``AGENTS.override.md`` wins over ``AGENTS.md``."""
    override = where / "AGENTS.override.md"
    try:
        if override.is_file() and override.stat().st_size > 0:
            return override
    except OSError:
        pass
    return where / "AGENTS.md"


def targets(memory: Path, project: Path | None) -> list[Target]:
    found = [Target(name, _chosen(folder()), BLOCK, GLOBAL)]
    if project is not None:
        found.append(Target(name, _chosen(project), BLOCK, PROJECT, project))
    return found
