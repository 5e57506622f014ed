"""The memory repository as a folder, for the front ends: refuse a bare repository, adopt a folder of
files as one, link it into every agent's instruction file (``dreamtui link``), bring its frontmatter to
the one schema, the index-ceiling warning, and where a memory of a scope would go.

No ledger: these read and write the memory folder (and the agents' instruction files) only.
"""

from __future__ import annotations

from pathlib import Path

from dreamtui.core.config import Config
from dreamtui.core.errors import ConfigError
from dreamtui.core.memory import gitops
from dreamtui.core.memory import layout as memory
from dreamtui.core.memory.agents import linking
from dreamtui.core.memory.agents import names as agent_names
from dreamtui.core.memory.agents.linking import AgentPlan
from dreamtui.core.memory.link import LinkPlan, apply_link, plan_link
from dreamtui.core.memory.normalize import Change, apply_normalize, plan_normalize

LinkChange = linking.Change

__all__ = [
    "AgentPlan",
    "Change",
    "LinkChange",
    "LinkPlan",
    "agent_names",
    "apply_agent_change",
    "apply_link",
    "link_offer",
    "link_project",
    "plan_agents",
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


def plan_agents(
    config: Config,
    agents: list[str] | None = None,
    project: Path | None = None,
    *,
    undo: bool = False,
    claude_md: Path | None = None,
    chosen: bool | None = None,
) -> list[AgentPlan]:
    """What ``dreamtui link`` (``undo``: ``--undo``) would change for each agent; nothing is written."""
    return linking.plan(config, agents, project, undo=undo, claude_md=claude_md, chosen=chosen)


def apply_agent_change(config: Config, change: linking.Change) -> None:
    """Write one change the person saw and said yes to."""
    linking.apply(config, change)


def link_project(path: Path) -> Path:
    """The repository a ``--project`` folder belongs to (a one-line error when it is no folder)."""
    return linking.project_root(path)


def link_offer(config: Config) -> str | None:
    """The one line telling of ``dreamtui link`` while installed agents do not load the memory (once
    per agent newly found); ``None`` otherwise."""
    return linking.offer(config)
