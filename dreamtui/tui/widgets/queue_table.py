"""The queue of pending proposals: a virtual list drawn line by line (Textual's line API).

Only the visible lines are drawn, and each drawn line is cached by (candidate id, highlighted, stripe,
width, focus), so removing a row — the common case, after every decision — shifts the cached lines up
instead of drawing the screen again. 10,000 rows cost a Python list, not 10,000 widgets or cells.

Grouped by project or by session, each run of rows of the same group starts with a header line (the
group and how many proposals it holds); the cursor never rests on a header.
"""

from __future__ import annotations

from collections.abc import Callable
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

from dreamtui.core.models import QueueRow
from dreamtui.tui.widgets.literal import literal

CLAIM_CHARS = 160
FLAGS_WIDTH = 10  # "SECRET DUP" fits; a badge that does not fit is left out, never cut in half
GAP = 1  # blank cells after every column
FIELDS = (("project", 12), ("agent", 6), ("type", 8), ("from", 9), ("flags", FLAGS_WIDTH))
MIN_CLAIM = 40  # narrower than this, columns are left out (type, then agent, then project) to keep the claim
OPTIONAL = ("type", "agent", "project")  # the order they are left out in; provenance and flags always stay
AGENT_MIN, AGENT_MAX = len("agent"), 8  # the agent column is as wide as the longest label shown ("OpenCode")


PROJECT_MIN, PROJECT_MAX = 12, 28


def project_width(width: int | None) -> int:
    """The project column grows with the table: 12 cells up to an 80-cell table, then a third of
    what is beyond 32 cells, at most 28 (the claim keeps the rest)."""
    if width is None:
        return PROJECT_MIN
    return max(PROJECT_MIN, min(PROJECT_MAX, (width - 32) // 3))


def fields_for(
    width: int | None, longest: int | None = None, agent: int | None = None
) -> tuple[tuple[str, int], ...]:
    """The columns shown in a table ``width`` cells wide: all of them when the claim keeps at least
    :data:`MIN_CLAIM` cells, else without type, then without agent, then without project (``TOOL!``
    and the flags stay); the project column grows with the width (:func:`project_width`) but no wider
    than the ``longest`` project name shown, the agent column is as wide as the longest ``agent`` label
    shown (the claim gets the rest)."""
    project = project_width(width)
    if longest is not None:
        project = min(project, max(len("project"), longest))
    widths = {"project": project}
    if agent is not None:
        widths["agent"] = max(AGENT_MIN, min(AGENT_MAX, agent))
    fields = tuple((name, widths.get(name, w)) for name, w in FIELDS)
    if width is None:
        return fields
    for name in OPTIONAL:
        if width - (1 + sum(w + GAP for _, w in fields)) >= MIN_CLAIM:
            break
        fields = tuple(f for f in fields if f[0] != name)
    return fields


def short_project(project: str, width: int = 12) -> str:
    """A project in at most ``width`` characters: a Claude Code folder name (``-home-kim-src-x``) keeps
    its end (the repository's name is last), a project's name (``payments-api``, from its records'
    ``cwd``) its start, as a person reads it (``dreamboard-w…``, not ``…board-web``)."""
    name = project.strip("-") or project
    if len(name) > width:
        name = "…" + name[-(width - 1) :] if project.startswith("-") else name[: width - 1] + "…"
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


def header(fields: tuple[tuple[str, int], ...] = FIELDS) -> Text:
    """The column titles, at the positions :func:`row_text` uses (with the same ``fields``)."""
    out = Text(" ", style="bold")
    for name, width in fields:
        out.append_text(cell(name, width))
    out.append("claim")
    return out


def row_text(
    row: QueueRow, fields: tuple[tuple[str, int], ...] = FIELDS, namer: Callable[[str], str] | None = None
) -> Text:
    """One row; transcript-derived text is escaped and never parsed as markup. ``namer`` turns a
    project folder into the project's readable name (its ``cwd``'s last part) for the project column."""
    prov = row.provenance or "?"
    out = Text(" ", no_wrap=True, overflow="ellipsis")
    for name, width in fields:
        if name == "project":
            out.append_text(cell(short_project(namer(row.project) if namer else row.project, width), width))
        elif name == "type":
            out.append_text(cell(literal(row.type, width, one_line=True), width))
        elif name == "agent":
            out.append_text(cell(literal(row.agent_label, width, one_line=True), width))
        elif name == "from":
            if prov == "tool":
                out.append_text(cell(Text().append("TOOL!", "bold white on red"), width))
            else:
                out.append_text(cell(literal(prov, width, one_line=True), width))
        else:
            out.append_text(cell(flags(row, width), width))
    out.append(literal(row.claim, CLAIM_CHARS, one_line=True))
    return out


@dataclass(eq=False)
class GroupHeader:
    """The line above a group's rows: its title and how many of its proposals are left."""

    key: str
    title: str
    count: int = 0


def group_title(row: QueueRow, mode: str) -> str:
    """The header title of ``row``'s group."""
    if mode == "project":
        return literal(row.project.strip("-") or row.project, 120, one_line=True)
    return f"session {literal(row.session[:8], 8, one_line=True)} · {short_project(row.project, 40)}"


def header_text(group: GroupHeader) -> Text:
    """A group's header line: ``▾ title · N proposals``, dim."""
    noun = "proposal" if group.count == 1 else "proposals"
    return Text.assemble(
        ("▾ ", "dim"),
        (group.title, "bold dim"),
        (f" · {group.count:,} {noun}", "dim"),
        no_wrap=True,
        overflow="ellipsis",
    )


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
    COMPONENT_CLASSES = {"queue--cursor", "queue--stripe", "queue--group"}
    DEFAULT_CSS = """
    QueueTable { background: $surface; overflow-x: hidden; }
    QueueTable > .queue--cursor { background: $block-cursor-background; color: $block-cursor-foreground;
                                  text-style: bold; }
    QueueTable:blur > .queue--cursor { background: $block-cursor-blurred-background; text-style: none; }
    QueueTable > .queue--stripe { background: $surface-lighten-1; }
    QueueTable > .queue--group { background: $surface; }
    """

    @dataclass
    class Highlighted(Message):
        """The highlighted proposal changed (``None`` when the queue is empty)."""

        candidate_id: str | None

    @dataclass
    class ColumnsChanged(Message):
        """The table's width changed which columns fit (the screen's column titles follow)."""

        fields: tuple[tuple[str, int], ...]

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.items: list[QueueRow | GroupHeader] = []  # what is drawn, one line each
        self.group_mode = ""
        self._groups: dict[str, GroupHeader] = {}  # candidate id -> the header above it (when grouped)
        self._count = 0
        self._index: dict[str, int] | None = None
        self.cursor_row = 0
        self._lines: LRUCache[tuple, Strip] = LRUCache(2000)
        self._announced: str | None = None
        self.fields: tuple[tuple[str, int], ...] = FIELDS
        self.project_namer: Callable[[str], str] | None = None  # project folder -> readable name

    # -- data -------------------------------------------------------------------------------------

    @property
    def row_count(self) -> int:
        """How many proposals are listed (group headers not counted)."""
        return self._count

    @property
    def rows(self) -> list[QueueRow]:
        """The proposals in display order."""
        return [r for r in self.items if isinstance(r, QueueRow)]

    @property
    def ids(self) -> list[str]:
        """Candidate ids in display order."""
        return [r.id for r in self.items if isinstance(r, QueueRow)]

    @property
    def current_row(self) -> QueueRow | None:
        """The highlighted proposal."""
        if not self._count:
            return None
        item = self.items[self.cursor_row]
        return item if isinstance(item, QueueRow) else None

    @property
    def current_id(self) -> str | None:
        """The candidate id of the highlighted row."""
        row = self.current_row
        return row.id if row is not None else None

    def get_row_index(self, cid: str) -> int:
        """The line of ``cid`` (``KeyError`` when it is not in the list)."""
        if self._index is None:
            self._index = {r.id: n for n, r in enumerate(self.items) if isinstance(r, QueueRow)}
        return self._index[cid]

    def fill(self, rows: list[QueueRow], group: str = "") -> None:
        """Replace every row; with ``group`` (``project``/``session``) each run of one group gets a
        header line. The cursor goes to the first proposal."""
        self.group_mode = group
        self.items = []
        self._groups = {}
        self._count = 0
        self._append(rows)
        self._changed()
        namer = self.project_namer
        names = {namer(p) if namer else p.strip("-") or p for p in {r.project for r in rows}}
        self._longest = max((len(n) for n in names), default=None)
        self._agent = max((len(r.agent_label) for r in rows), default=None)
        self._fit_columns()
        self.cursor_row = self._nearest_row(0)
        self.scroll_to(y=0, animate=False)
        self._announce()

    def _append(self, rows: list[QueueRow]) -> None:
        items, groups, mode = self.items, self._groups, self.group_mode
        tail = items[-1] if items else None
        last = groups.get(tail.id) if isinstance(tail, QueueRow) else None  # the group rows join
        for row in rows:
            if mode:
                key = row.project if mode == "project" else row.session
                if last is None or key != last.key:
                    last = GroupHeader(key, group_title(row, mode))
                    items.append(last)
                last.count += 1
                groups[row.id] = last
            items.append(row)
        self._count += len(rows)

    def add_rows_keyed(self, rows: list[QueueRow]) -> None:
        """Append rows at the end (under a new header when grouped and the last group differs)."""
        self._append(rows)
        self._changed()
        self._announce()

    def remove_row(self, cid: str) -> None:
        """Remove one row; the cursor stays at the same place (on the row that followed)."""
        index = self.get_row_index(cid)
        del self.items[index]
        self._count -= 1
        removed = [index]
        head = self._groups.pop(cid, None)
        if head is not None:
            head.count -= 1
            if head.count == 0 and index and self.items[index - 1] is head:  # an empty group loses its header
                del self.items[index - 1]
                removed.insert(0, index - 1)
        self._changed()
        cursor = self.cursor_row
        if cursor in removed:  # on the removed row: the line that followed it moved up to here
            cursor = removed[0]
        else:
            cursor -= sum(1 for n in removed if n < cursor)
        self.cursor_row = self._nearest_row(cursor)
        self._announce()

    def _nearest_row(self, index: int, step: int = 1) -> int:
        """The first proposal line at or after ``index`` (before it when there is none; ``step`` -1
        looks up first)."""
        items = self.items
        if not items:
            return 0
        index = max(0, min(index, len(items) - 1))
        for direction in (step, -step):
            n = index
            while 0 <= n < len(items):
                if not isinstance(items[n], GroupHeader):
                    return n
                n += direction
        return 0

    def _changed(self) -> None:
        self._index = None
        self.virtual_size = Size(self.size.width, len(self.items))
        self.refresh()

    # -- cursor -----------------------------------------------------------------------------------

    def move_cursor(self, row: int, animate: bool = False, step: int = 1) -> None:
        """Highlight line ``row`` (clamped; a header moves on to the nearest proposal in ``step``'s
        direction) and scroll it into view, with its group's header when that is just above."""
        if not self._count:
            return
        self.cursor_row = self._nearest_row(row, step)
        top = self.cursor_row
        if top and isinstance(self.items[top - 1], GroupHeader):
            top -= 1
        self.scroll_to_region(Region(0, top, 1, self.cursor_row - top + 1), animate=animate, immediate=True)
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
        self.move_cursor(self.cursor_row - 1, step=-1)

    def action_page_down(self) -> None:
        self.move_cursor(self.cursor_row + max(1, self.size.height - 1))

    def action_page_up(self) -> None:
        self.move_cursor(self.cursor_row - max(1, self.size.height - 1), step=-1)

    def action_first(self) -> None:
        self.move_cursor(0)

    def action_last(self) -> None:
        self.move_cursor(len(self.items) - 1, step=-1)

    def on_click(self, event: events.Click) -> None:
        self.focus()
        self.move_cursor(int(self.scroll_offset.y) + event.y)

    # -- drawing ----------------------------------------------------------------------------------

    def forget_drawn_lines(self) -> None:
        """Draw every row again (lines are cached by candidate id: a changed claim would show the old one)."""
        self._lines.clear()
        self.refresh()

    def on_resize(self) -> None:
        self.virtual_size = Size(self.size.width, len(self.items))
        self._lines.clear()
        self._fit_columns()

    _longest: int | None = None  # the longest project name of the rows filled
    _agent: int | None = None  # the longest agent label of the rows filled

    def _fit_columns(self) -> None:
        """Choose the columns for the width and the project names shown (the titles follow)."""
        fields = (
            fields_for(self.size.width or None, self._longest, self._agent)
            if self.size.width
            else self.fields
        )
        if fields != self.fields:
            self.fields = fields
            self._lines.clear()
            self.refresh()
            self.post_message(self.ColumnsChanged(fields))

    def render_line(self, y: int) -> Strip:
        index = int(self.scroll_offset.y) + y
        width = self.size.width
        if index >= len(self.items):
            return Strip.blank(width, self.rich_style)
        item = self.items[index]
        if isinstance(item, GroupHeader):
            key: tuple = ("group", item.title, item.count, width)
            strip = self._lines.get(key)
            if strip is None:
                strip = self._draw_text(
                    header_text(item), self.get_component_rich_style("queue--group"), width
                )
                self._lines[key] = strip
            return strip
        cursor = index == self.cursor_row
        key = (item.id, cursor, index % 2, width, self.has_focus)
        strip = self._lines.get(key)
        if strip is None:
            strip = self._draw(item, cursor, index % 2 == 1, width)
            self._lines[key] = strip
        return strip

    def _draw(self, row: QueueRow, cursor: bool, stripe: bool, width: int) -> Strip:
        extra = (
            self.get_component_rich_style("queue--cursor")
            if cursor
            else self.get_component_rich_style("queue--stripe")
            if stripe
            else None
        )
        return self._draw_text(row_text(row, self.fields, self.project_namer), extra, width)

    def _draw_text(self, text: Text, extra: Style | None, width: int) -> Strip:
        text.truncate(width, overflow="ellipsis", pad=True)
        base: Style = self.rich_style
        if extra is not None:
            base = base + extra
        segments = [
            Segment(s.text, base + s.style if s.style else base)
            for s in text.render(self.app.console)
            if s.text != "\n"
        ]
        return Strip(segments, width).crop(0, width)

    def on_focus(self) -> None:
        self.refresh()

    def on_blur(self) -> None:
        self.refresh()
