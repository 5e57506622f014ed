"""Outside changes in the queue (issue 17): their rows and their detail view.

An outside change (what Claude Code's auto memory, auto dream or the person wrote into the memory
repository by itself) is a queue row like a proposal: ``a`` commits exactly that change, ``r`` puts the
file back from HEAD, ``m`` commits it as the person's own. Its detail shows who wrote it, the batch it
came with, the index lines it adds or drops, the diff and the transcript record that wrote it — all
literally (never parsed as markup), every secret redacted; an item whose bytes or name hold a
secret is flagged SECRET and cannot be accepted.
"""

from __future__ import annotations

from rich.console import Group
from rich.text import Text

from dreamtui.core.models import QueueRow
from dreamtui.services import Workspace, outside
from dreamtui.tui.widgets.diff_view import diff_text
from dreamtui.tui.widgets.literal import literal_text

PROJECT = "memory repo"
WRITER_SHORT = {
    "auto-memory": "auto mem",
    "auto-dream": "autodream",
    "person": "person",
    "unknown": "unknown",
    "codex": "codex",  # Codex CLI's own memories (issue 31)
    "gemini-cli": "gemini",  # Gemini CLI's save_memory section
}
WRITER_STYLE = {
    "auto-memory": "bold black on cyan",
    "auto-dream": "bold white on magenta",
    "person": "bold green",
    "codex": "bold white on blue",
    "gemini-cli": "bold black on yellow",
}
DIFF_LINES = 400
AGENTS = {"codex": ("Codex CLI", "Codex"), "gemini-cli": ("Gemini CLI", "Gemini")}
"""An agent's own memory change is that agent's row (the queue's agent column and its ``f`` filter)."""


def is_outside(item_id: str | None) -> bool:
    """``item_id`` names an outside item (``o`` + 9 hex), not a proposal (12 hex)."""
    return item_id is not None and item_id.startswith("o") and len(item_id) == 10


def outside_rows(ws: Workspace) -> list[QueueRow]:
    """Every pending outside item as a queue row (a batch's members say so in their text)."""
    summaries = {b.id: b.summary() for b in outside.batches(ws)}
    rows = []
    for item in reversed(outside.items(ws)):
        claim = f"outside · {item.title()}"
        if item.batch in summaries:
            claim = f"{claim}  · batch: {summaries[item.batch]}"
        rows.append(
            QueueRow(
                item.id,
                PROJECT,
                item.session or "",
                item.kind,
                claim,
                WRITER_SHORT.get(item.writer, item.writer),
                False,
                0,
                bool(item.secrets),
                item.detected_at,
                agent=AGENTS.get(item.writer, ("", ""))[0],
                agent_label=AGENTS.get(item.writer, ("", ""))[1],
            )
        )
    return rows


def detail(ws: Workspace, item_id: str) -> Group:
    """What the detail pane shows for one outside item."""
    item = outside.get(ws, item_id)
    badge = Text(f" {item.writer_label.upper()} ", WRITER_STYLE.get(item.writer, "reverse"))
    badge.append(f"  {item.kind.upper()} ", "bold")
    if item.secrets:
        badge.append("  ")
        badge.append(f" SECRET: {', '.join(item.secret_rules)} (redacted) ", "bold white on dark_red")
    parts: list[Text] = [badge, Text(), literal_text(item.title(), style="bold")]
    if item.batch:
        batch = next((b for b in outside.batches(ws) if b.id == item.batch), None)
        if batch is not None:
            parts.append(
                Text.assemble(
                    ("Batch  ", "bold dim"),
                    (batch.summary(), "bold yellow"),
                    (f"  ({batch.pending} waiting, decided together: a or r takes the whole batch)", "dim"),
                )
            )
    added, dropped = outside.index_lines(ws, item)
    for line in added:
        parts.append(Text.assemble(("index + ", "bold green")) + literal_text(line, one_line=True))
    for line in dropped:
        parts.append(Text.assemble(("index − ", "bold red")) + literal_text(line, one_line=True))
    parts.append(Text())
    shown = item.blob or item.head_blob or item.note
    diff = outside.diff(ws, item).split("\n")
    parts.append(
        diff_text(diff[:-1] if diff[-1:] == [""] else diff, DIFF_LINES) if shown else Text("(empty)")
    )
    record = outside.transcript_excerpt(item, 1200)
    if record:
        parts.append(
            Text.assemble(
                ("Written by  ", "bold dim"),
                (f"{item.tool} ", "bold"),
                literal_text(f"{item.transcript} : line {item.line}", one_line=True),
            )
        )
        parts.append(literal_text(record, style="dim", limit=1200))
    elif item.writer == "person":
        parts.append(
            Text(
                "No agent session wrote this file in the window before it changed: taken as "
                "your own edit (m commits it as yours).",
                style="dim",
            )
        )
    if item.secrets and outside.is_agent(item):
        parts.append(
            Text(
                "It holds a secret: it is redacted in the diff and in what an accept commits; the agent's "
                "own file keeps it (restore puts the reviewed version back).",
                style="bold red",
            )
        )
    elif item.secrets:
        parts.append(
            Text(
                "It holds a secret: accept is refused. Remove it from the file (the next scan shows it "
                "again), or r puts back what is committed.",
                style="bold red",
            )
        )
    parts.append(Text())
    if outside.is_agent(item):
        parts.append(
            Text(
                "a accept (the reviewed copy in the memory repository) · r reject (the agent's file is left "
                "as it is) or restore (put back as reviewed)",
                style="dim",
            )
        )
        return Group(*parts)
    parts.append(
        Text("a accept (commit exactly this change) · r reject (back as committed) · m mine", style="dim")
    )
    return Group(*parts)
