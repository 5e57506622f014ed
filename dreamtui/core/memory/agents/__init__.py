"""Every agent's way to the memory: one module per agent (its home folder, the files it loads, how the
memory reaches them), registered in :data:`AGENTS`; :mod:`.linking` plans, writes, undoes and refreshes."""

from __future__ import annotations

from types import ModuleType

from dreamtui.core.memory.agents import claude_code, codex, copilot_cli, cursor, gemini_cli, opencode

AGENTS: tuple[ModuleType, ...] = (claude_code, codex, gemini_cli, opencode, copilot_cli, cursor)
"""In the order they are offered. Each module has ``name``, ``agent``, ``way``, ``folder()``,
``installed()`` and ``targets(memory, project)``."""


def named(name: str) -> ModuleType:
    """The agent module registered as ``name`` (``KeyError`` when none)."""
    for module in AGENTS:
        if module.name == name:
            return module
    raise KeyError(name)


def names() -> list[str]:
    return [module.name for module in AGENTS]
