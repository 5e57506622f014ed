"""The index invariant (issue 34): every ``MEMORY.md`` link points at a file that exists, and every
topic file dreamtui wrote is linked.

Claude Code loads ``MEMORY.md`` and what it links; a dead link loads nothing, an unlinked memory is
never loaded. :func:`problems` checks the memory folder as it is (every start runs it, through
:func:`dreamtui.core.memory.startup.reconcile`, and so does every decision's caller); :func:`new_dead`
says which links a commit would newly leave dead, so a decision that would break the invariant can
ask first and name them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

from dreamtui.core.ledger import Ledger
from dreamtui.core.ledger import decisions as decision_rows
from dreamtui.core.memory import layout as memory
from dreamtui.core.memory.consolidate import link_target


def linked(index_text: str) -> list[str]:
    """The repository-relative files ``MEMORY.md``'s index lines link to, in order, each once."""
    return list(dict.fromkeys(t for t in map(link_target, index_text.splitlines()) if t))


def dead(index_text: str, exists: Callable[[str], bool]) -> list[str]:
    """The links of ``index_text`` whose file does not exist (as ``exists`` says)."""
    return [rel for rel in linked(index_text) if not exists(rel)]


def new_dead(
    before: str, after: str, exists_before: Callable[[str], bool], exists_after: Callable[[str], bool]
) -> list[str]:
    """The links dead after a change that were not dead before it (a link already dead is not the
    change's doing)."""
    was = set(dead(before, exists_before))
    return [rel for rel in dead(after, exists_after) if rel not in was]


def _exists(root: Path) -> Callable[[str], bool]:
    def exists(rel: str) -> bool:
        try:
            return memory.safe_path(root, rel).is_file()
        except Exception:  # noqa: BLE001 - a link no safe path reaches points at nothing
            return False

    return exists


def unlinked(root: Path, written: Iterable[str], index_text: str) -> list[str]:
    """Of the topic files dreamtui wrote (``written``), those that exist and no index line links."""
    links = set(linked(index_text))
    exists = _exists(root)
    return [rel for rel in written if rel not in links and exists(rel)]


def problems(root: Path, ledger: Ledger | None = None) -> list[str]:
    """What breaks the invariant in the memory folder now, one line each (``[]``: it holds)."""
    root = Path(root)
    data = memory.read_bytes(root, memory.INDEX)
    if data is None:
        return []
    text = data.decode("utf-8", "replace")
    out = [f"MEMORY.md links {rel}, which does not exist (a dead link)" for rel in dead(text, _exists(root))]
    if ledger is not None:
        out += [
            f"{rel} (a memory dreamtui wrote) is not linked from MEMORY.md: Claude Code will not load it"
            for rel in unlinked(root, decision_rows.live_memory_paths(ledger), text)
        ]
    return out
