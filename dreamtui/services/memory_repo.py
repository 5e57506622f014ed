"""The memory repository as a folder, for the front ends: refuse a bare repository, adopt a folder of
files as one, link it into Claude Code's ``CLAUDE.md``, bring its frontmatter to the one schema, the
index-ceiling warning, and where a memory of a scope would go.

No ledger: these read and write the memory folder (and ``CLAUDE.md``) only.
"""

from __future__ import annotations

from pathlib import Path

from dreamtui.core.config import Config
from dreamtui.core.errors import ConfigError
from dreamtui.core.memory import gitops
from dreamtui.core.memory import layout as memory
from dreamtui.core.memory.link import LinkPlan, apply_link, plan_link
from dreamtui.core.memory.normalize import Change, apply_normalize, plan_normalize

__all__ = [
    "Change",
    "LinkPlan",
    "apply_link",
    "apply_normalize",
    "ceiling_warning",
    "exists",
    "foreign_folder_problem",
    "make_repository",
    "plan_link",
    "plan_normalize",
    "refuse_bare",
    "topic_folder",
]


def refuse_bare(config: Config) -> None:
    """Raise a one-line :class:`ConfigError` when the memory repository is a bare git repository."""
    if memory.is_bare_repository(config.memory):
        raise ConfigError(memory.bare_repository_message(config.memory))


def foreign_folder_problem(config: Config) -> str | None:
    """Why the memory folder cannot be taken without asking (it holds files and is no git repository:
    dreamtui would make it one and commit into it); ``None`` when it can."""
    return memory.foreign_folder_message(config.memory)


def make_repository(config: Config) -> Path:
    """Make the memory folder a git repository (nothing else is written); returns the folder."""
    gitops.open_repo(config.memory)
    return config.memory


def ceiling_warning(config: Config) -> str | None:
    """The warning every command prints once ``MEMORY.md`` passes 85% of what Claude Code loads."""
    return memory.ceiling_warning(memory.ceiling_status(config.memory))


def topic_folder(scope: str, project: str) -> str:
    """The folder of the memory repository a memory of ``scope`` (of ``project``) is written to
    (``""``: its top, for a global memory)."""
    return memory.topic_rel_path(scope, project, "x").rpartition("/")[0]


def exists(config: Config) -> bool:
    """Whether the memory repository is a git repository already (the first dream creates it)."""
    return gitops.repo_exists(config.memory)
