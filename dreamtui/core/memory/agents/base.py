"""What every agent's way in is made of: the files it loads (:class:`Target`) and where its home is."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

IMPORT = "import"
"""The agent reads ``@path`` import lines: the file names the memory, the memory stays where it is."""
BLOCK = "block"
"""The agent cannot import a file: dreamtui writes the accepted lessons between its markers."""
GLOBAL = "global"
PROJECT = "project"


@dataclass(frozen=True, slots=True)
class Target:
    """One file an agent loads at the start of a session, and how the memory reaches it."""

    agent: str
    """The agent's registry name (``codex``)."""
    path: Path
    how: str
    """:data:`IMPORT` or :data:`BLOCK`."""
    scope: str
    """:data:`GLOBAL` (a file in the person's home) or :data:`PROJECT` (a file in a project's repository)."""
    project: Path | None = None
    """The repository's folder, for a per-project target."""
    prefix: str = ""
    """What dreamtui writes before its section when it makes the file (Cursor's rule frontmatter)."""
    note: str = ""
    """Something the person should know before saying yes (one line), or ''."""


def home() -> Path:
    """The person's home folder (``$HOME``)."""
    return Path(os.path.expanduser("~"))


def env_folder(variable: str, default: Path) -> Path:
    """The folder an agent's own variable names (``CODEX_HOME``), else ``default``; an empty variable
    counts as not set."""
    value = os.environ.get(variable, "")
    return Path(os.path.expanduser(value)) if value else default


def shown(path: Path) -> str:
    """``path`` as a person reads it: ``~/…`` under the home folder."""
    try:
        return "~/" + path.relative_to(home()).as_posix()
    except ValueError:
        return str(path)
