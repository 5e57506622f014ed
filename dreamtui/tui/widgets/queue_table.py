"""The queue of pending proposals: a virtual list drawn line by line (Textual's line API).

Only the visible lines are drawn, and each drawn line is cached by (candidate id, highlighted, stripe,
width, focus), so removing a row — the common case, after every decision — shifts the cached lines up
instead of drawing the screen again. 10,000 rows cost a Python list, not 10,000 widgets or cells.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.cache import LRUCache
from textual.geometry import Region, Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from dreamtui.tui.services import QueueRow
from dreamtui.tui.widgets.literal import literal

CLAIM_CHARS = 160
FLAGS_WIDTH = 10  # "SECRET DUP" fits; a badge that does not fit is left out, never cut in half
GAP = 1  # blank cells after every column
FIELDS = (("project", 12), ("type", 8), ("from", 9), ("flags", FLAGS_WIDTH))


def short_project(project: str, width: int = 12) -> str:
    """The end of a Claude Code project folder name, at most ``width`` characters."""
    name = project.strip("-") or project
    if len(name) > width:
        name = "…" + name[-(width - 1):]
    return literal(name, width, one_line=True)


def flags(row: QueueRow, width: int = FLAGS_WIDTH) -> Text:
    """Secret, duplicate and corroborated badges, most important first, in at most ``width`` cells."""
    badges: list[tuple[str, str]] = []
    if row.secret:
        badges.append(("SECRET", "bold white on dark_red"))
    if row.duplicate:
        badges.append(("DUP", "bold black on yellow"))
    if row.corroborated:
        badges.append((f"×{row.corroborated + 1}", "bold green"))
    out = Text()
    for label, style in badges:
        needed = len(label) + (1 if out else 0)
        if out.cell_len + needed > width:
            break
        if out:
            out.append(" ")
        out.append(label, style)
    return out


def cell(text: str | Text, width: int, style: str = "") -> Text:
    """``text`` in a column ``width`` cells wide (cut with an ellipsis) followed by the gap."""
    out = text.copy() if isinstance(text, Text) else Text(text, style=style)
    out.truncate(width, overflow="ellipsis", pad=True)
    out.append(" " * GAP)
    return out


def header() -> Text:
    """The column titles, at the positions :func:`row_text` uses."""
    out = Text(" ", style="bold")
    for name, width in FIELDS:
        out.append_text(cell(name, width))
    out.append("claim")
    return out


def row_text(row: QueueRow) -> Text:
    """One row; transcript-derived text is escaped and never parsed as markup."""
    prov = row.provenance or "?"
    out = Text(" ", no_wrap=True, overflow="ellipsis")
    out.append_text(cell(short_project(row.project, FIELDS[0][1]), FIELDS[0][1]))
    out.append_text(cell(literal(row.type, FIELDS[1][1], one_line=True), FIELDS[1][1]))
    if prov == "tool":
        out.append_text(cell(Text().append("TOOL!", "bold white on red"), FIELDS[2][1]))
    else:
        out.append_text(cell(literal(prov, FIELDS[2][1], one_line=True), FIELDS[2][1]))
    out.append_text(cell(flags(row), FIELDS[3][1]))
    out.append(literal(row.claim, CLAIM_CHARS, one_line=True))
    return out


class QueueTable(ScrollView, can_focus=True):
    """Pending proposals, one line each; the highlighted one is :attr:`current_id`."""

    BINDINGS = [
        Binding("down", "cursor_down", "Down", show=False),
        Binding("up", "cursor_up", "Up", show=False),
        Binding("pagedown", "page_down", "Page down", show=False),
        Binding("pageup", "page_up", "Page up", show=False),
        Binding("home", "first", "First", show=False),
        Binding("end", "last", "Last", show=False),
    ]
    COMPONENT_CLASSES = {"queue--cursor", "queue--stripe"}
    DEFAULT_CSS = """
    QueueTable { background: $surface; }
    QueueTable > .queue--cursor { background: $block-cursor-background; color: $block-cursor-foreground;
                                  text-style: bold; }
    QueueTable:blur > .queue--cursor { background: $block-cursor-blurred-background; text-style: none; }
    QueueTable > .queue--stripe { background: $surface-lighten-1; }
    """

    @dataclass
    class Highlighted(Message):
        """The highlighted proposal changed (``None`` when the queue is empty)."""

        candidate_id: str | None

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.rows: list[QueueRow] = []
        self._index: dict[str, int] | None = None
        self.cursor_row = 0
        self._lines: LRUCache[tuple, Strip] = LRUCache(2000)
        self._announced: str | None = None

    # -- data -------------------------------------------------------------------------------------

    @property
    def row_count(self) -> int:
        return len(self.rows)

    @property
    def ids(self) -> list[str]:
        """Candidate ids in display order."""
        return [r.id for r in self.rows]

    @property
    def current_id(self) -> str | None:
        """The candidate id of the highlighted row."""
        return self.rows[self.cursor_row].id if self.rows else None

    def get_row_index(self, cid: str) -> int:
        """The position of ``cid`` (``KeyError`` when it is not in the list)."""
        if self._index is None:
            self._index = {r.id: n for n, r in enumerate(self.rows)}
        return self._index[cid]

    def fill(self, rows: list[QueueRow]) -> None:
        """Replace every row; the cursor goes to the top."""
        self.rows = list(rows)
        self._changed()
        self.cursor_row = 0
        self.scroll_to(y=0, animate=False)
        self._announce()

    def add_rows_keyed(self, rows: list[QueueRow]) -> None:
        """Append rows at the end."""
        self.rows.extend(rows)
        self._changed()
        self._announce()

    def remove_row(self, cid: str) -> None:
        """Remove one row; the cursor stays at the same position (on the row that followed)."""
        index = self.get_row_index(cid)
        del self.rows[index]
        self._changed()
        if index < self.cursor_row:
            self.cursor_row -= 1
        self.cursor_row = max(0, min(self.cursor_row, len(self.rows) - 1))
        self._announce()

    def _changed(self) -> None:
        self._index = None
        self.virtual_size = Size(self.size.width, len(self.rows))
        self.refresh()

    # -- cursor -----------------------------------------------------------------------------------

    def move_cursor(self, row: int, animate: bool = False) -> None:
        """Highlight row ``row`` (clamped) and scroll it into view."""
        if not self.rows:
            return
        self.cursor_row = max(0, min(row, len(self.rows) - 1))
        self.scroll_to_region(Region(0, self.cursor_row, 1, 1), animate=animate, immediate=True)
        self.refresh()
        self._announce()

    def _announce(self) -> None:
        cid = self.current_id
        if cid != self._announced:
            self._announced = cid
            self.post_message(self.Highlighted(cid))

    def action_cursor_down(self) -> None:
        self.move_cursor(self.cursor_row + 1)

    def action_cursor_up(self) -> None:
        self.move_cursor(self.cursor_row - 1)

    def action_page_down(self) -> None:
        self.move_cursor(self.cursor_row + max(1, self.size.height - 1))

    def action_page_up(self) -> None:
        self.move_cursor(self.cursor_row - max(1, self.size.height - 1))

    def action_first(self) -> None:
        self.move_cursor(0)

    def action_last(self) -> None:
        self.move_cursor(len(self.rows) - 1)

    def on_click(self, event: events.Click) -> None:
        self.focus()
        self.move_cursor(int(self.scroll_offset.y) + event.y)

    # -- drawing ----------------------------------------------------------------------------------

    def on_resize(self) -> None:
        self.virtual_size = Size(self.size.width, len(self.rows))
        self._lines.clear()

    def render_line(self, y: int) -> Strip:
        index = int(self.scroll_offset.y) + y
        width = self.size.width
        if index >= len(self.rows):
            return Strip.blank(width, self.rich_style)
        row = self.rows[index]
        cursor = index == self.cursor_row
        key = (row.id, cursor, index % 2, width, self.has_focus)
        strip = self._lines.get(key)
        if strip is None:
            strip = self._draw(row, cursor, index % 2 == 1, width)
            self._lines[key] = strip
        return strip

    def _draw(self, row: QueueRow, cursor: bool, stripe: bool, width: int) -> Strip:
        text = row_text(row)
        text.truncate(width, overflow="ellipsis", pad=True)
        base: Style = self.rich_style
        if cursor:
            base = base + self.get_component_rich_style("queue--cursor")
        elif stripe:
            base = base + self.get_component_rich_style("queue--stripe")
        segments = [Segment(s.text, base + s.style if s.style else base)
                    for s in text.render(self.app.console) if s.text != "\n"]
        return Strip(segments, width).crop(0, width)

    def on_focus(self) -> None:
        self.refresh()

    def on_blur(self) -> None:
        self.refresh()
