"""Consolidation proposals in the queue (issue 26): their rows and their detail view.

A proposal to update, retire or merge memories already there is a queue row like a lesson: ``a``
makes one commit of exactly its diff, ``r`` rejects it with a reason (never proposed again for the same
evidence). Its detail shows the kind, why, the evidence (the verified quote and where it was found, or
the check that failed) and the memory as it is and as it would be: the diff of every file it changes
and of ``MEMORY.md`` — all literally (never parsed as markup).
"""

from __future__ import annotations

from rich.console import Group
from rich.text import Text

from dreamtui.core.models import QueueRow
from dreamtui.services import Consolidation, Workspace
from dreamtui.tui.widgets.literal import literal_text

KIND_STYLE = {
    "update": "bold black on yellow",
    "retire": "bold white on dark_red",
    "merge": "bold black on cyan",
}
DIFF_LINES = 400


def is_consolidation(item_id: str | None) -> bool:
    """``item_id`` names a consolidation proposal (``k`` + 11 hex), not a lesson (12 hex)."""
    return item_id is not None and item_id.startswith("k") and len(item_id) == 12


def title(item: Consolidation) -> str:
    """One line: what it does to which files."""
    names = ", ".join(t.rsplit("/", 1)[-1] for t in item.targets[:3]) + (
        " …" if len(item.targets) > 3 else ""
    )
    return f"{item.kind} {names}: {item.reason}" if item.reason else f"{item.kind} {names}"


def consolidation_rows(ws: Workspace) -> list[QueueRow]:
    """Every pending consolidation proposal as a queue row, newest first."""
    rows = []
    for item in reversed(ws.consolidations("pending")):
        source = item.provenance if item.evidence_kind == "quote" else "check"
        rows.append(
            QueueRow(
                item.id,
                item.project,
                item.session or "",
                item.kind,
                title(item),
                source,
                False,
                0,
                False,
                item.created_at,
            )
        )
    return rows


def _diff_text(lines: list[str]) -> Text:
    out = Text()
    for line in lines[:DIFF_LINES]:
        style = (
            "green"
            if line.startswith("+") and not line.startswith("+++")
            else "red"
            if line.startswith("-") and not line.startswith("---")
            else "cyan"
            if line.startswith("@@")
            else "dim"
            if line.startswith(("+++", "---"))
            else ""
        )
        out.append_text(literal_text(line, style=style, limit=400, one_line=True))
        out.append("\n")
    return out


def detail(ws: Workspace, item_id: str) -> Group:
    """What the detail pane shows for one proposal: badge, why, evidence, then the diff."""
    item = ws.consolidation(item_id)
    badge = Text(f" {item.kind.upper()} ", KIND_STYLE.get(item.kind, "reverse"))
    badge.append(f"  {len(item.targets)} memory file(s) · from {item.source}", "bold")
    parts: list[Text] = [badge, Text(), literal_text(title(item), style="bold")]
    if item.evidence_kind == "quote":
        where = f"{item.provenance or '?'} · session {(item.session or '?')[:8]} · line {item.line}"
        parts.append(
            Text.assemble(("Evidence  ", "bold dim"), ("verified quote ", "bold green"), (where, "dim"))
        )
        parts.append(literal_text(f"> {item.evidence}", style="italic", limit=1200))
    else:
        parts.append(Text.assemble(("Evidence  ", "bold dim"), ("check ", "bold")))
        parts.append(literal_text(item.evidence, limit=1200))
    stale = ws.consolidation_stale(item)
    if stale:
        parts.append(Text.assemble(("Stale  ", "bold red")) + literal_text(stale, one_line=True))
    parts += [Text(), Text("As it is (−) and as it would be (+):", style="bold dim")]
    parts.append(_diff_text(ws.consolidation_diff(item)) if not stale else Text("(not shown: changed since)"))
    parts.append(
        Text("a accepts (one commit of exactly this diff) · r rejects (not proposed again)", style="dim")
    )
    return Group(*parts)
