"""What every screen shares: the status header on top, the footer below."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer

from dreamtui.tui.widgets.status_header import StatusHeader


class BaseScreen(Screen):
    """A screen with the :class:`StatusHeader` and a :class:`Footer`; subclasses write ``body``."""

    TITLE_TEXT = ""
    AUTO_FOCUS = "DataTable"
    BINDINGS = [Binding("j", "down", "Down", show=False), Binding("k", "up", "Up", show=False)]

    def compose(self) -> ComposeResult:
        header = StatusHeader(id="status")
        header.screen_title = self.TITLE_TEXT
        yield header
        yield from self.body()
        yield Footer()

    def body(self) -> ComposeResult:
        yield from ()

    def on_screen_resume(self) -> None:
        self.app.refresh_status()  # type: ignore[attr-defined]
        self.reload()

    def action_down(self) -> None:
        getattr(self.focused, "action_cursor_down", lambda: None)()

    def action_up(self) -> None:
        getattr(self.focused, "action_cursor_up", lambda: None)()

    def reload(self) -> None:
        """Read this screen's data again (called when shown and when the data changed)."""
