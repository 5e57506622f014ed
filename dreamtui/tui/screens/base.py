"""What every screen shares: the status header on top, the footer below."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import DataTable, Footer

from dreamtui.tui.widgets.screen_tabs import ScreenTabs
from dreamtui.tui.widgets.status_header import StatusHeader

if TYPE_CHECKING:
    from dreamtui.services import Workspace
    from dreamtui.tui.app import DreamApp


def cursor_key(table: DataTable) -> str | None:
    """The row key under ``table``'s cursor (``None`` when it is empty)."""
    if not table.row_count:
        return None
    try:
        return table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
    except Exception:  # noqa: BLE001 - no row under the cursor
        return None


def restore_cursor(table: DataTable, key: str | None) -> None:
    """Put ``table``'s cursor back on the row ``key`` after a refill (when it is still there)."""
    if key is None:
        return
    try:
        table.move_cursor(row=table.get_row_index(key), animate=False)
    except Exception:  # noqa: BLE001 - the row is gone: the cursor stays where the refill put it
        pass


class BaseScreen(Screen):
    """A screen with the :class:`StatusHeader` and a :class:`Footer`; subclasses write ``body``."""

    TITLE_TEXT = ""
    SHOWS_TRANSCRIPTS = False  # reloaded when transcripts change (others would only lose their cursor)
    AUTO_FOCUS = "DataTable"
    BINDINGS = [Binding("j", "down", "Down", show=False), Binding("k", "up", "Up", show=False)]

    @property
    def dream_app(self) -> DreamApp:
        """The running :class:`DreamApp`, typed (instead of ``self.app`` and ``type: ignore``)."""
        return cast("DreamApp", self.app)

    @property
    def workspace(self) -> Workspace:
        """The app's :class:`~dreamtui.services.Workspace`: every read and decision goes through it."""
        return self.dream_app.workspace

    def compose(self) -> ComposeResult:
        header = StatusHeader(id="status")
        header.screen_title = self.TITLE_TEXT
        yield header
        yield ScreenTabs(self.TITLE_TEXT, id="tabs")
        yield from self.body()
        yield Footer(compact=True, show_command_palette=False)  # ? lists it

    def body(self) -> ComposeResult:
        yield from ()

    def on_screen_resume(self) -> None:
        self.dream_app.refresh_status()
        self.reload()

    def action_down(self) -> None:
        getattr(self.focused, "action_cursor_down", lambda: None)()

    def action_up(self) -> None:
        getattr(self.focused, "action_cursor_up", lambda: None)()

    def reload(self) -> None:
        """Read this screen's data again (called when shown and when the data changed)."""
