"""The header every screen shows: proposals waiting, the index gauge, banners, a running cycle."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from dreamtui.services import Status
from dreamtui.services.extracting import THIN_QUEUE_SHORT
from dreamtui.tui.access import dream_app

GAUGE_CELLS = 16
OFFLINE_MARK = "   offline rules"
"""What the first line says in a narrow terminal when the heuristic runs (the queue stays thin): the
line of its own that says more needs :data:`NOTE_WIDTH` columns."""
NOTE_WIDTH = 100
"""From this width the header says what to know about the extractor (the heuristic's thin queue) on
a line of its own; narrower, the header stays one line."""


def gauge(fraction: float, cells: int = GAUGE_CELLS) -> Text:
    """A text bar: green, yellow from 85%, red at or past the ceiling."""
    fraction = max(0.0, fraction)
    filled = min(cells, round(fraction * cells))
    style = "red" if fraction >= 1.0 else "yellow" if fraction >= 0.85 else "green"
    return Text.assemble(("█" * filled, style), ("░" * (cells - filled), "grey50"))


class StatusHeader(Static):
    """Shows a :class:`Status` and, while a cycle runs, its phase."""

    DEFAULT_CSS = """
    StatusHeader { height: auto; background: $panel; padding: 0 1; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("", id=id)
        self.status = Status()
        self.activity = ""
        self.screen_title = ""
        self.others: list[int] = []  # other dreamtui apps open on this ledger (their pids)

    def on_mount(self) -> None:
        """Show what the app read last, then each new status and activity it publishes."""
        app = dream_app(self)
        app.status_changed.subscribe(self, lambda status: self.show(status=status))
        app.activity_changed.subscribe(self, lambda activity: self.show(activity=activity))
        app.apps_changed.subscribe(self, lambda pids: self.show(others=pids))
        self.others = list(app.other_apps)
        self.show(app.last_status, app.activity)

    def show(
        self, status: Status | None = None, activity: str | None = None, others: list[int] | None = None
    ) -> None:
        """Update what is shown (any part may be left as it is)."""
        if others is not None:
            self.others = others
        if status is not None:
            self.status = status
        if activity is not None:
            self.activity = activity
        self.update(self.render_text())

    def render_text(self, width: int | None = None) -> Text:
        """The header: its first line always one line (narrower terminals get a shorter gauge and drop the
        extractor, the KB figure and the screen name, shown by the tabs below), then the extractor's note
        (the heuristic's thin queue, from :data:`NOTE_WIDTH` columns; narrower, the first line ends with
        ``offline rules``), a running cycle and banners."""
        s = self.status
        width = width or ((self.size.width or self.app.size.width) - 2)
        kb = s.index_bytes / 1000
        ceiling = (
            ("  AT CEILING", "bold red")
            if s.fraction >= 1.0
            else ("  near ceiling", "bold yellow")
            if s.fraction >= 0.85
            else ("", "")
        )
        who: tuple[tuple[str, str], ...] = (("   extractor ", ""), (s.extractor, "bold"))
        narrow_note = bool(s.extractor_note) and width < NOTE_WIDTH
        if narrow_note:  # no line of its own at this width: the first line says it, in place of the name
            who = ((OFFLINE_MARK, "bold yellow"),)
        for title, cells, kb_text, extractor in (
            (True, GAUGE_CELLS, True, True),
            (False, GAUGE_CELLS, True, True),
            (False, GAUGE_CELLS, True, False),
            (False, 8, False, narrow_note),
            (False, 4, False, narrow_note),
            (False, 4, False, False),
        ):
            line = Text.assemble(
                ("dreamtui", "bold"),
                (f" · {self.screen_title}" if title and self.screen_title else "", "bold"),
                "  ",
                *waiting(s.pending, s.outside, short=cells < GAUGE_CELLS),
                "   index ",
                gauge(s.fraction, cells),
                f" {s.index_lines}/{s.max_lines} lines"
                + (f" · {kb:.1f}/{s.max_bytes / 1000:.0f} KB" if kb_text else ""),
                ceiling,
                *(who if extractor and s.extractor else ()),
                no_wrap=True,
                overflow="ellipsis",
            )
            if line.cell_len <= width:
                break
        if s.extractor_note and width >= NOTE_WIDTH:  # an 80-column header stays one line
            note = s.extractor_note if len(s.extractor_note) <= width else THIN_QUEUE_SHORT
            line.append(f"\n{literal_one(note, width + 2)}", "yellow")
        if self.others:
            pids = ", ".join(map(str, self.others))
            apps = "another dreamtui app is" if len(self.others) == 1 else f"{len(self.others)} more apps are"
            line.append(
                f"\n{literal_one(f'{apps} open on this ledger (pid {pids}): decisions made there show here', width + 2)}",
                "yellow",
            )
        if self.activity:
            line.append(f"\n⟳ {literal_one(self.activity, width)}", "italic magenta")
        for banner in s.banners:
            level, text = banner.level, banner.text
            style = {"error": "bold white on red", "warning": "bold black on yellow"}.get(
                level, "bold white on blue"
            )
            line.append("\n")
            line.append(f" {text} ", style)
        return line

    def on_resize(self) -> None:
        self.update(self.render_text())


def waiting(pending: int, outside: int, short: bool = False) -> tuple[tuple[str, str], ...]:
    """What waits, each kind counted apart: ``3 proposals waiting``, or with outside changes
    ``3 proposals · 2 outside changes waiting`` (``short``: ``3 prop · 2 outside``)."""
    if not outside:
        return (f"{pending:,}", "bold cyan"), (
            " proposal waiting" if pending == 1 else " proposals waiting",
            "",
        )
    prop = "prop" if short else "proposal" + ("" if pending == 1 else "s")
    change = "outside" if short else "outside change" + ("" if outside == 1 else "s")
    return (
        (f"{pending:,}", "bold cyan"),
        (f" {prop} · ", ""),
        (f"{outside:,}", "bold magenta"),
        (f" {change}" + ("" if short else " waiting"), ""),
    )


def literal_one(text: str, width: int) -> str:
    """``text`` on one line of at most ``width`` cells (a cycle's progress must not push the screen down)."""
    text = " ".join(text.split())
    return text if len(text) <= width - 2 else text[: max(1, width - 3)] + "…"
