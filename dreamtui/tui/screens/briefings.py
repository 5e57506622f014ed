"""Briefings: every version of ``briefing.md`` from git, rendered; the diff between any two."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import DataTable, Markdown, Static

from dreamtui.tui import services
from dreamtui.tui.screens.base import BaseScreen, cursor_key, restore_cursor
from dreamtui.tui.widgets.literal import literal

DIFF_STYLE = {"+": "green", "-": "red", "@": "cyan"}


def diff_text(lines: list[str]) -> Text:
    """A diff as a Text: added lines green, removed red, hunks cyan; content shown literally."""
    out = Text()
    for line in lines or ["(no difference)"]:
        out.append(literal(line, 2000) + "\n", DIFF_STYLE.get(line[:1], "") if not line.startswith(("+++", "---")) else "bold")
    return out


class BriefingsScreen(BaseScreen):
    """Versions of the briefing; Enter/highlight shows one, m marks one, f shows marked → highlighted."""

    TITLE_TEXT = "briefings"
    BINDINGS = [Binding("m", "mark", "Mark for diff", id="briefings.mark"),
                Binding("f", "diff", "Diff marked→this", id="briefings.diff"),
                Binding("v", "view", "View", id="briefings.view")]

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.versions: dict[str, Any] = {}
        self.marked: str | None = None
        self.current: str | None = None

    def body(self) -> ComposeResult:
        with Horizontal(classes="split"):
            yield DataTable(id="versions", cursor_type="row", zebra_stripes=True)
            with VerticalScroll(id="briefing-pane", classes="side"):
                yield Static("", id="briefing-title")
                # the briefing quotes transcripts: a link in it is shown, never opened by a click
                yield Markdown("", id="briefing", open_links=False)
                yield Static("", id="briefing-diff")

    def on_mount(self) -> None:
        table = self.query_one("#versions", DataTable)
        for label, width in (("", 1), ("date", 16), ("commit", 8), ("subject", 30)):
            table.add_column(label, width=width, key=label or "mark")

    def reload(self) -> None:
        table = self.query_one("#versions", DataTable)
        keep = cursor_key(table)
        table.clear()
        self.versions = {c.sha: c for c in services.briefing_versions(self.app.config)}  # type: ignore[attr-defined]
        for sha, c in self.versions.items():
            table.add_row("●" if sha == self.marked else "", c.date[:16].replace("T", " "), sha[:8],
                          Text(literal(c.subject, 80, one_line=True)), key=sha)
        restore_cursor(table, keep)
        if not self.versions:
            self.query_one("#briefing-title", Static).update(
                Text("No briefing yet: each dream cycle's REM phase writes briefing.md.", style="dim"))

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self.current = event.row_key.value
        self.action_view()

    def on_markdown_link_clicked(self, event: Markdown.LinkClicked) -> None:
        """A link in the briefing came from a transcript: say where it points instead of opening it."""
        event.stop()
        self.notify(f"link (not opened): {literal(event.href, 300, one_line=True)}", timeout=8)

    def _sync_current(self) -> None:
        """Take the version under the cursor now (a quick ``j m`` must not mark the previous one)."""
        sha = cursor_key(self.query_one("#versions", DataTable))
        if sha in self.versions:
            self.current = sha

    def action_view(self) -> None:
        self._sync_current()
        if not self.current:
            return
        c = self.versions[self.current]
        text = services.file_at(self.app.config, services.BRIEFING, c.sha)  # type: ignore[attr-defined]
        self.query_one("#briefing-title", Static).update(
            Text.assemble(("briefing.md", "bold"), f" at {c.sha[:8]} · {c.date[:16].replace('T', ' ')}"))
        md = self.query_one("#briefing", Markdown)
        md.display = True
        md.update(literal(text, 50_000))
        self.query_one("#briefing-diff", Static).display = False

    def action_mark(self) -> None:
        self._sync_current()
        if not self.current:
            return
        self.marked = self.current
        table = self.query_one("#versions", DataTable)
        for sha in self.versions:
            table.update_cell(sha, "mark", "●" if sha == self.marked else "")
        self.notify(f"Marked {self.marked[:8]}: highlight another version and press f for the diff")

    def action_diff(self) -> None:
        self._sync_current()
        if not self.current:
            return
        if self.marked == self.current:
            self.notify("This is the marked version: highlight another one, then press f", severity="warning")
            return
        old_sha = self.marked or self._previous(self.current)
        if old_sha is None:
            self.notify("This is the first version: mark another one with m", severity="warning")
            return
        cfg = self.app.config  # type: ignore[attr-defined]
        old = services.file_at(cfg, services.BRIEFING, old_sha)
        new = services.file_at(cfg, services.BRIEFING, self.current)
        lines = services.unified_diff(old, new, f"briefing.md@{old_sha[:8]}", f"briefing.md@{self.current[:8]}")
        self.query_one("#briefing-title", Static).update(
            Text.assemble(("diff ", "bold"), f"{old_sha[:8]} → {self.current[:8]}"))
        self.query_one("#briefing", Markdown).display = False
        box = self.query_one("#briefing-diff", Static)
        box.display = True
        box.update(diff_text(lines))

    def _previous(self, sha: str) -> str | None:
        order = list(self.versions)
        i = order.index(sha)
        return order[i + 1] if i + 1 < len(order) else None
