"""What every screen shares: the status header on top, the footer below."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Footer

from dreamtui.tui.widgets.status_header import StatusHeader


class BaseScreen(Screen):
    """A screen with the :class:`StatusHeader` and a :class:`Footer`; subclasses write ``body``."""

    TITLE_TEXT = ""

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

    def reload(self) -> None:
        """Read this screen's data again (called when shown and when the data changed)."""
