"""What every screen shares: the status header on top, the footer below, and loading its data in a
thread worker (the UI thread never waits for the ledger, git or the transcripts folder)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Generic, TypeVar, cast

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.message import Message
from textual.screen import Screen
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import DataTable, Footer

from dreamtui.tui.access import dream_app
from dreamtui.tui.messages import Change
from dreamtui.tui.widgets.literal import literal
from dreamtui.tui.widgets.screen_tabs import ScreenTabs
from dreamtui.tui.widgets.status_header import StatusHeader

if TYPE_CHECKING:
    from dreamtui.services import Workspace
    from dreamtui.tui.app import DreamApp

DataT = TypeVar("DataT")

LOADING_DELAY = 0.3
"""Seconds a reload of a screen already showing data may take before its loading indicator shows
(the first load shows it at once; a quick reload must not make the screen flicker)."""


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


class BaseScreen(Screen[None], Generic[DataT]):
    """A screen with the :class:`StatusHeader` and a :class:`Footer`; subclasses write ``body``.

    Its data is read by :meth:`load` in a thread worker and shown by :meth:`show` on the UI thread
    when the worker's :class:`Loaded` message arrives; meanwhile ``LOADING_TARGET`` shows Textual's
    loading indicator.
    """

    TITLE_TEXT = ""
    SHOWS_TRANSCRIPTS = False  # reloaded when transcripts change (others would only lose their cursor)
    AUTO_FOCUS = "DataTable"
    LOADING_TARGET = ".split"  # the widget the loading indicator covers while the data loads
    BINDINGS = [Binding("j", "down", "Down", show=False), Binding("k", "up", "Up", show=False)]

    @dataclass
    class Loaded(Message):
        """A screen's data, read in its loader thread (``error``: the one-line reason it could not be)."""

        generation: int
        data: object = None
        error: str | None = None

    def __init__(self, name: str | None = None, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.loads_shown = 0  # how many loads this screen has shown (tests wait on it)
        self._generation = 0  # the newest load started; older results are dropped
        self._loading = False
        self._again = False  # a reload was asked for while a load ran
        self._indicator: Timer | None = None

    @property
    def dream_app(self) -> DreamApp:
        """The running :class:`DreamApp`, typed (instead of ``self.app`` and ``type: ignore``)."""
        return dream_app(self)

    @property
    def workspace(self) -> Workspace:
        """The app's :class:`~dreamtui.services.Workspace`: every read and decision goes through it."""
        return self.dream_app.workspace

    @property
    def is_loaded(self) -> bool:
        """Its data has been shown at least once and no newer load is under way."""
        return self.loads_shown > 0 and not self._loading

    def compose(self) -> ComposeResult:
        header = StatusHeader(id="status")
        header.screen_title = self.TITLE_TEXT
        yield header
        yield ScreenTabs(self.TITLE_TEXT, id="tabs")
        yield from self.body()
        yield Footer(compact=True, show_command_palette=False)  # ? lists it

    def body(self) -> ComposeResult:
        yield from ()

    def on_mount(self) -> None:
        self.dream_app.changed.subscribe(self, self.data_changed)

    def on_screen_resume(self) -> None:
        self.dream_app.release_notes()  # what was said while a dialog was open, now it is closed
        self.dream_app.refresh_status()
        self.reload()

    def data_changed(self, change: Change) -> None:
        """The ledger, the memory repo or the transcripts changed: the screen shown reads its data again."""
        if change.kind == "transcripts" and not self.SHOWS_TRANSCRIPTS:
            return
        if self.is_current:
            self.reload()

    def action_down(self) -> None:
        getattr(self.focused, "action_cursor_down", lambda: None)()

    def action_up(self) -> None:
        getattr(self.focused, "action_cursor_up", lambda: None)()

    # -- loading ------------------------------------------------------------------------------------

    def reload(self) -> None:
        """Read this screen's data again in a thread worker (called when shown and when the data changed);
        a reload asked for while one runs starts when it ends."""
        if self._loading:
            self._again = True
            return
        self._loading = True
        self._generation += 1
        self.prepare_load()
        if self.loads_shown:
            self._indicator = self.set_timer(LOADING_DELAY, lambda: self._show_loading(True))
        else:
            self._show_loading(True)
        self._load_in_thread(self._generation)

    def load(self) -> DataT:
        """Read the data (in a worker thread: the Workspace only, no widget)."""
        raise NotImplementedError

    def show(self, data: DataT) -> None:
        """Show what :meth:`load` read (on the UI thread)."""

    def prepare_load(self) -> None:
        """Note what :meth:`result_is_stale` compares with (on the UI thread, as a load starts)."""

    def result_is_stale(self) -> bool:
        """Whether what the load read was overtaken while it ran (dropped and read again)."""
        return False

    @work(thread=True, exit_on_error=False, group="load", name="screen data")
    def _load_in_thread(self, generation: int) -> None:
        try:
            data = self.load()
        except Exception as exc:  # noqa: BLE001 - a screen that cannot load says why, never crashes
            text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            self.post_message(self.Loaded(generation, error=text))
            return
        self.post_message(self.Loaded(generation, data))

    def on_base_screen_loaded(self, message: BaseScreen.Loaded) -> None:
        message.stop()
        if message.generation != self._generation:
            return
        self._loading = False
        again, self._again = self._again, False
        if self.result_is_stale():
            self.reload()
            return
        if self._indicator is not None:
            self._indicator.stop()
            self._indicator = None
        self._show_loading(False)
        if message.error is not None:
            self.notify(
                f"cannot read the {self.TITLE_TEXT} screen's data: {literal(message.error, 300, one_line=True)}",
                severity="error",
                timeout=10,
            )
        else:
            self.show(cast(DataT, message.data))  # what this screen's load returned
        self.loads_shown += 1
        if again:
            self.reload()

    def _show_loading(self, loading: bool) -> None:
        for target in self.query(self.LOADING_TARGET).results(Widget):
            target.loading = loading
