"""Memory: the index and the memory files, the ceiling gauge, revert one memory."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rich.console import Group
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.message import Message
from textual.widgets import DataTable, Static

from dreamtui.services import CeilingStatus, MemoryFile
from dreamtui.tui.messages import MemoryReverted
from dreamtui.tui.screens.base import BaseScreen, cursor_key, restore_cursor
from dreamtui.tui.screens.modals import ConfirmModal
from dreamtui.tui.widgets.literal import literal, literal_text
from dreamtui.tui.widgets.status_header import gauge

INDEX = "MEMORY.md"


FILE_WIDTH = 34


def file_cell(rel: str, width: int = FILE_WIDTH) -> str:
    """A memory file's path for the file column: its end (the file name) when it does not fit."""
    shown = literal(rel, 400, one_line=True)
    return shown if len(shown) <= width else "…" + shown[-(width - 1) :]


@dataclass(frozen=True, slots=True)
class MemoryData:
    """What the Memory screen's loader reads: ``MEMORY.md`` against its ceiling, and the memory files."""

    ceiling: CeilingStatus
    files: list[MemoryFile]


@dataclass
class RevertDone(Message):
    """The revert worker is done: what it did, or why it could not."""

    summary: str
    candidate_id: str | None = None
    error: str | None = None


class MemoryScreen(BaseScreen[MemoryData]):
    """The memory repo's files; the highlighted one shown beside; x reverts it."""

    TITLE_TEXT = "memory"
    BINDINGS = [Binding("x", "revert", "Revert memory", id="memory.revert")]

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.files: dict[str, MemoryFile] = {}
        self.current: str | None = None

    def body(self) -> ComposeResult:
        yield Static("", id="ceiling", classes="info")
        with Horizontal(classes="split"):
            yield DataTable(id="memfiles", cursor_type="row", zebra_stripes=True)
            with VerticalScroll(classes="side"):
                yield Static("", id="memfile", classes="pane")

    def on_mount(self) -> None:
        table = self.query_one("#memfiles", DataTable)
        for label, width in (("file", FILE_WIDTH), ("type", 9), ("bytes", 6)):
            table.add_column(label, width=width, key=label)

    def load(self) -> MemoryData:
        return MemoryData(self.workspace.index_size(), self.workspace.memory_files())

    def show(self, data: MemoryData) -> None:
        ceiling = data.ceiling
        lines, size, max_lines, max_bytes = ceiling.lines, ceiling.bytes, ceiling.max_lines, ceiling.max_bytes
        fraction = max(lines / max_lines, size / max_bytes)
        self.query_one("#ceiling", Static).update(
            Text.assemble(
                ("MEMORY.md ", "bold"),
                gauge(fraction, 30),
                f"  {lines}/{max_lines} lines · {size:,}/{max_bytes:,} bytes ({fraction:.0%} of what Claude Code loads)",
            )
        )
        table = self.query_one("#memfiles", DataTable)
        keep = cursor_key(table)
        table.clear()
        self.files = {f.path: f for f in data.files}
        for rel, f in self.files.items():
            table.add_row(
                Text(file_cell(rel), style="bold" if rel == INDEX else ""),
                Text(literal(f.type, 40, one_line=True) or "—"),
                f"{f.bytes:,}",
                key=rel,
            )
        restore_cursor(table, keep)
        if not self.files:
            self.query_one("#memfile", Static).update(Text("The memory repository is empty.", style="dim"))

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self.current = event.row_key.value
        f = self.files.get(self.current or "")
        if f is not None:
            self.query_one("#memfile", Static).update(
                Group(
                    literal_text(f.path, style="bold", one_line=True),
                    Text(),
                    literal_text(f.text, limit=20_000),
                )
            )

    def highlighted(self) -> str | None:
        """The file under the table's cursor (read at the time of the key, not from the last
        highlight message, which a quick ``j x`` can overtake)."""
        return cursor_key(self.query_one("#memfiles", DataTable))

    def action_revert(self) -> None:
        rel = self.highlighted()
        if not rel or rel == INDEX:
            self.notify("Highlight a memory file to revert (not the index)", severity="warning")
            return
        refused = self.workspace.revert_refusal(rel)
        if refused:  # never ask for what cannot be done
            self.notify(literal(refused, 400, one_line=True), severity="warning", timeout=8)
            return

        def done(yes: bool | None) -> None:
            if yes:
                self._revert(rel)

        self.app.push_screen(
            ConfirmModal(f"Revert the memory {literal(rel, 300, one_line=True)}? (a revert commit)"), done
        )

    @work(thread=True, exit_on_error=False, group="revert", name="revert memory")
    def _revert(self, rel: str) -> None:
        """The revert commit, off the UI thread; the result arrives as :class:`RevertDone`."""
        try:
            result = self.workspace.revert_memory(rel)
        except Exception as exc:  # noqa: BLE001 - shown as a notification
            self.post_message(RevertDone("", error=str(exc) or type(exc).__name__))
            return
        self.post_message(RevertDone(result.summary, result.candidate_id))

    def on_revert_done(self, message: RevertDone) -> None:
        """Say what the revert did; the app hears of it (the queue shows the proposal again)."""
        message.stop()
        if message.error is not None:
            self.notify(f"revert failed: {literal(message.error, 300, one_line=True)}", severity="error")
            return
        self.notify(message.summary)
        self.post_message(MemoryReverted(message.candidate_id))
