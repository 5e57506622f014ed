"""Outside changes for the front ends (issue 17): what others wrote into the memory repository (Claude
Code's auto memory, auto dream, the person), found by a scan, and each decision on them.

Every function takes the :class:`Workspace` whose ledger keeps the items.
"""

from __future__ import annotations

from collections.abc import Callable

from dreamtui.core.config import Config
from dreamtui.core.memory import gitops, outside_agents
from dreamtui.core.memory import outside as core_outside
from dreamtui.core.memory.agents import linking
from dreamtui.core.memory.outside import Batch, Item, OutsideWatcher, ScanReport, transcript_excerpt
from dreamtui.services.workspace import Workspace

__all__ = [
    "Batch",
    "Item",
    "OutsideWatcher",
    "ScanReport",
    "accept",
    "accept_caution",
    "accept_mine",
    "batches",
    "decide",
    "diff",
    "get",
    "index_lines",
    "items",
    "reject",
    "reject_effect",
    "restore",
    "restore_agent",
    "scan",
    "scan_if_repository",
    "transcript_excerpt",
    "watcher",
]


def scan(ws: Workspace) -> ScanReport:
    """Compare the memory repository with HEAD and bring the outside items up to date."""
    return core_outside.scan(ws.config, ws.ledger)


def scan_if_repository(ws: Workspace) -> ScanReport | None:
    """:func:`scan`, or ``None`` when the memory repository does not exist (yet)."""
    if not gitops.repo_exists(ws.config.memory):
        return None
    return scan(ws)


def watcher(config: Config, on_scan: Callable[[ScanReport], None]) -> OutsideWatcher:
    """A watcher of the memory folder that scans after each burst of changes (not started; a folder the
    first dream has still to create is waited for)."""
    return OutsideWatcher(config, on_scan=on_scan)


def items(ws: Workspace, status: str | None = "pending") -> list[Item]:
    """The outside items of ``status`` (``None``: all)."""
    return core_outside.items(ws.ledger, status)


def batches(ws: Workspace) -> list[Batch]:
    """The batches of pending items (a mass deletion or rewrite seen at once)."""
    return core_outside.batches(ws.ledger)


def get(ws: Workspace, item_id: str) -> Item:
    """One item by its id (or a unique prefix); a one-line error when there is none."""
    return core_outside.get(ws.ledger, item_id)


def index_lines(ws: Workspace, item: Item) -> tuple[list[str], list[str]]:
    """The ``MEMORY.md`` lines ``item`` adds and drops."""
    return core_outside.index_lines(ws.config, item)


def diff(ws: Workspace, item: Item) -> str:
    """The unified diff of ``item`` against HEAD."""
    return core_outside.diff(ws.config, item)


def accept_caution(ws: Workspace, item: Item) -> list[str]:
    """Why accepting ``item`` deserves a question first (it deletes a file, writes two, is one of a
    batch, drops index lines, leaves a topic file out of the index); empty for a plain change."""
    return core_outside.accept_caution(ws.config, ws.ledger, item)


def reject_effect(ws: Workspace, item: Item) -> list[str]:
    """What rejecting ``item`` would do, one line each."""
    return core_outside.reject_effect(ws.config, ws.ledger, item)


def accept(ws: Workspace, item_id: str, *, mine: bool = False, confirmed: bool = False) -> str:
    """Commit exactly the change of ``item_id`` (``mine``: as the person's own edit); returns the sha.
    One that would commit a dead ``MEMORY.md`` link is refused unless ``confirmed``."""
    sha = core_outside.accept(ws.config, ws.ledger, item_id, mine=mine, dead_links_ok=confirmed)
    linking.refresh(ws.config)  # the agents' generated blocks follow what memory now holds (never raises)
    return sha


def accept_mine(ws: Workspace, item_ids: list[str] | None = None) -> str | None:
    """Commit the person's own edits (these items, or every change no agent session wrote) in one
    commit; its sha, ``None`` when there was nothing."""
    return core_outside.accept_mine(ws.config, ws.ledger, item_ids)


def unit(ws: Workspace, item: Item, action: str) -> list[Item]:
    """The items one decision on ``item`` takes together (a batch, a file and its index change)."""
    return core_outside.unit(ws.config, ws.ledger, item, action)


def reject(ws: Workspace, item_id: str, reason: str) -> list[str]:
    """Put the file of ``item_id`` back as HEAD has it (a deleted file comes back), with every change
    decided together with it (:func:`unit`); the ids rejected."""
    return core_outside.reject(ws.config, ws.ledger, item_id, reason)


def restore(ws: Workspace, batch: str, reason: str) -> list[str]:
    """Reject every pending item of ``batch`` in one step; returns their ids."""
    return core_outside.restore_batch(ws.config, ws.ledger, batch, reason)


def is_agent(item: Item) -> bool:
    """``item`` is a change an agent made to its own memory (Codex, Gemini CLI), not to the repository."""
    return outside_agents.is_snapshot(item.path)


def restore_agent(ws: Workspace, item_id: str, reason: str) -> str:
    """Put the agent's own memory of ``item_id`` back as reviewed (Gemini CLI: only its section)."""
    return core_outside.restore_agent(ws.config, ws.ledger, item_id, reason)


def guarded(config: Config) -> list[tuple[str, str]]:
    """Each agent whose own memory the guard can review, and whether (and why) it is guarded."""
    return outside_agents.describe(config)


def decide(ws: Workspace, action: str, item_id: str, reason: str = "", *, confirmed: bool = False) -> str:
    """One decision of the app on an item (``outside-accept``, ``outside-mine``, ``outside-reject``,
    ``outside-restore`` for an agent's own memory);
    the line the app shows, with what breaks the index invariant after it. ``confirmed``: the person
    said yes to the accept's cautions (a link it would leave dead among them)."""
    item = get(ws, item_id)
    together = unit(ws, item, "reject" if action == "outside-reject" else "accept")
    what = (
        item.path
        if len(together) == 1
        else f"{len(together)} changes ({', '.join(i.path for i in together)})"
    )
    if len(what) > 160:
        what = what[:157] + "…)"
    if action == "outside-accept":
        sha = accept(ws, item.id, confirmed=confirmed)
        line = f"Accepted {what} ({item.writer_label}): commit {sha[:10]}"
    elif action == "outside-mine":
        sha = accept(ws, item.id, mine=True, confirmed=confirmed)
        line = f"Committed your edit of {what}: {sha[:10]}"
    elif action == "outside-restore":
        restore_agent(ws, item.id, reason or "restored in the app")
        line = f"Restored {item.note}: as reviewed again"
    elif is_agent(item):
        reject(ws, item.id, reason or "rejected in the app")
        line = f"Rejected {item.note}'s change: the agent's file is left as it is"
    else:
        reject(ws, item.id, reason or "rejected in the app")
        line = f"Rejected {what}: as committed again"
    return " · ".join([line, *ws.index_problems()])
