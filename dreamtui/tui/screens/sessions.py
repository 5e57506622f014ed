"""Sessions: every project and session the ledger knows, what is dreamed and what waits."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.widgets import DataTable, Static

from dreamtui.tui import services
from dreamtui.tui.screens.base import BaseScreen
from dreamtui.tui.widgets.literal import literal
from dreamtui.tui.widgets.queue_table import short_project


class SessionsScreen(BaseScreen):
    """Projects and sessions from the ``files`` table, grouped by project."""

    TITLE_TEXT = "sessions"

    def body(self) -> ComposeResult:
        yield Static("", id="sessions-info", classes="info")
        yield DataTable(id="sessions", cursor_type="row", zebra_stripes=True)

    def on_mount(self) -> None:
        table = self.query_one("#sessions", DataTable)
        for label, width in (("project", 18), ("session", 10), ("files", 5), ("lines", 7), ("dreamed", 8),
                             ("waiting", 9), ("pending", 7), ("updated", 20)):
            table.add_column(label, width=width, key=label)

    def reload(self) -> None:
        rows = services.sessions(self.app.config, self.app.ledger)  # type: ignore[attr-defined]
        table = self.query_one("#sessions", DataTable)
        table.clear()
        last_project = None
        for r in rows:
            project = short_project(r["project"], 18) if r["project"] != last_project else ""
            last_project = r["project"]
            waiting = int(r["waiting"] or 0)
            table.add_row(
                Text(project, style="bold"), Text(literal(r["session"][:8], 8)), str(r["files"]),
                f"{int(r['lines'] or 0):,}", f"{int(r['dreamed'] or 0):,}",
                Text(f"{waiting / 1024:.1f} KB", style="yellow" if waiting else "dim"),
                Text(str(r["pending"]), style="bold cyan" if r["pending"] else "dim"),
                Text(literal(r["updated"] or "", 20)), key=f"{r['project']}\0{r['session']}",
            )
        projects = len({r["project"] for r in rows})
        waiting_sessions = sum(1 for r in rows if (r["waiting"] or 0) > 0)
        self.query_one("#sessions-info", Static).update(Text.assemble(
            (f"{projects}", "bold"), " projects · ", (f"{len(rows):,}", "bold"), " sessions · ",
            (f"{waiting_sessions}", "bold yellow"), " with content not yet dreamed  (press d to dream now)"))
