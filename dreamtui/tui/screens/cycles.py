"""Cycles: the history of dream cycles with their waking messages; start one now."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import DataTable, Static

from dreamtui.services import CycleRecord
from dreamtui.services.dreaming import waking_message
from dreamtui.tui.screens.base import BaseScreen, cursor_key, restore_cursor
from dreamtui.tui.widgets.literal import literal
from dreamtui.tui.widgets.queue_table import short_project

STATUS_STYLE = {"completed": "green", "failed": "bold red", "running": "magenta", "interrupted": "bold red"}


class CyclesScreen(BaseScreen[list[CycleRecord]]):
    """Dream cycles, newest first; the highlighted one's waking message beside."""

    TITLE_TEXT = "cycles"

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.records: dict[str, CycleRecord] = {}
        self.names: dict[str, str] = {}
        self.interrupted: set[int] = set()

    def body(self) -> ComposeResult:
        with Horizontal(classes="split"):
            yield DataTable(id="cycles", cursor_type="row", zebra_stripes=True)
            yield Static("", id="waking", classes="side")

    def on_mount(self) -> None:
        table = self.query_one("#cycles", DataTable)
        for label, width in (
            ("#", 3),
            ("date", 10),
            ("project", 12),
            ("status", 11),
            ("trigger", 9),
            ("depth", 7),
            ("kept", 4),
        ):
            table.add_column(label, width=width, key=label)
        self.dream_app.cycle_log.subscribe(self, self.show_progress)

    def load(self) -> list[CycleRecord]:
        cycles = self.workspace.cycles()
        namer = self.dream_app.project_namer  # the project's name from its records (reads files: here)
        self.names = {c.chat_id: namer(c.chat_id) for c in cycles if c.chat_id != "*"}
        # a row still "running" whose process has ended was interrupted (killed, stopped at once)
        self.interrupted = {c.id for c in cycles if self.workspace.interrupted(c)}
        return cycles

    def show(self, data: list[CycleRecord]) -> None:
        table = self.query_one("#cycles", DataTable)
        keep = cursor_key(table)
        table.clear()
        self.records = {}
        for rec in data:
            key = str(rec.id)
            self.records[key] = rec
            who = "all" if rec.chat_id == "*" else short_project(self.names.get(rec.chat_id, rec.chat_id), 12)
            table.add_row(
                str(rec.id),
                rec.date,
                Text(literal(who, 12)),
                Text(self.status_of(rec), style=STATUS_STYLE.get(self.status_of(rec), "")),
                "on demand" if rec.on_demand else rec.trigger,
                rec.depth or "-",
                str(rec.new_candidates),
                key=key,
            )
        restore_cursor(table, keep)
        if not self.records:
            self.query_one("#waking", Static).update(
                Text("No dream cycle yet. Press d to dream now.", style="dim")
            )

    def status_of(self, rec: CycleRecord) -> str:
        """The status a person reads: ``interrupted`` for a row still ``running`` whose process ended."""
        return "interrupted" if rec.id in self.interrupted else rec.status

    def show_progress(self, lines: list[str]) -> None:
        """The running cycle's progress, one line per phase or branch event (while this screen is shown)."""
        if not self.is_current:
            return
        self.query_one("#waking", Static).update(
            Text.assemble(("Dreaming now\n", "bold magenta"), literal("\n".join(lines[-40:]), 8000))
        )

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        rec = self.records.get(event.row_key.value or "")
        if rec is not None:
            message = waking_message(rec)
            if rec.id in self.interrupted:
                message = (
                    f"Interrupted: the process running it (pid {rec.stats.pid}) ended before it finished; "
                    "the next dream (d, or `dreamtui dream`) marks it failed and runs it again.\n" + message
                )
            message = message.replace(f"{self.dream_app.config.memory}/", "")
            self.query_one("#waking", Static).update(Text(literal(message, 6000)))
