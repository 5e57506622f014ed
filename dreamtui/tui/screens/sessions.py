"""Sessions: projects, and the sessions of the highlighted project, with what is dreamed and what waits."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.widgets import DataTable, Static

from dreamtui.services import DreamPlan, SessionRow, transcripts
from dreamtui.tui.messages import PathSkipped, ShowProposalsOf
from dreamtui.tui.progress import dream_hint
from dreamtui.tui.screens.base import BaseScreen, cursor_key, restore_cursor
from dreamtui.tui.widgets.evidence import local_time
from dreamtui.tui.widgets.literal import literal, literal_text
from dreamtui.tui.widgets.queue_table import short_project


def kb(n: int) -> Text:
    """Bytes waiting as KB, dim when nothing waits."""
    return Text(f"{n / 1024:,.1f} KB", style="yellow" if n else "dim")


def waiting_cell(row: SessionRow) -> Text:
    """What waits of a session: its bytes not yet dreamed, or "too quiet" when a cycle read all of it
    and found too few of a person's words to dream (it waits for more)."""
    if row.status == "too quiet":
        return Text("too quiet", style="dim italic")
    return kb(int(row.waiting or 0))


@dataclass(slots=True)
class SessionsData:
    """What the Sessions screen's loader reads: every session, what ``d`` would do, skipped paths."""

    rows: list[SessionRow]
    plan: DreamPlan
    skipped: list[str] = field(default_factory=list)
    names: dict[str, str] = field(default_factory=dict)
    """Each project folder's readable name (from its records' ``cwd``), read in the worker."""


NARROW_BELOW = 120
PROJECT_COLUMNS = (
    ("project", "project", 24),
    ("waiting", "waiting", 10),
    ("pending", "pending", 7),
    ("sessions", "sessions", 8),
)
PROJECT_COLUMNS_NARROW = (("project", "project", 14), ("waiting", "waiting", 8), ("pending", "pend", 4))
SESSION_COLUMNS = (
    ("session", "session", 10),
    ("agent", "agent", 8),
    ("waiting", "waiting", 10),
    ("pending", "pending", 7),
    ("lines", "lines", 7),
    ("dreamed", "dreamed", 7),
    ("files", "files", 5),
    ("updated", "updated", 16),
)
SESSION_COLUMNS_NARROW = (
    ("session", "session", 8),
    ("agent", "agent", 6),
    ("waiting", "waiting", 8),
    ("pending", "pend", 4),
    ("lines", "lines", 5),
)


class SessionsScreen(BaseScreen[SessionsData]):
    """Projects on the left (totals); the highlighted project's sessions on the right.

    Two short tables instead of one long one: with 2,000 sessions a single DataTable takes a second
    to measure its cells.
    """

    TITLE_TEXT = "sessions"
    SHOWS_TRANSCRIPTS = True
    AUTO_FOCUS = "#projects"
    BINDINGS = [
        Binding(
            "f",
            "agent",
            "Agent",
            tooltip="Show one agent's sessions (again: the next agent, then every agent)",
            id="sessions.agent",
        ),
    ]

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.by_project: dict[str, list[SessionRow]] = {}
        self.names: dict[str, str] = {}
        self.current_project: str | None = None
        self.skipped: list[str] = []
        self.data: SessionsData | None = None
        self.agent = ""  # the agent filter (a label, ``Codex``): only its sessions shown; "" every agent
        self.agent_order = [label for _agent, label in transcripts.agents()]

    def body(self) -> ComposeResult:
        yield Static("", id="sessions-info", classes="info")
        with Horizontal(classes="split"):
            yield DataTable(id="projects", cursor_type="row", zebra_stripes=True)
            yield DataTable(id="sessions", cursor_type="row", zebra_stripes=True)

    def on_mount(self) -> None:  # BaseScreen's on_mount runs too (Textual calls each class's handler)
        self._add_columns()

    narrow: bool | None = None  # the columns in use are the ones for a narrow terminal

    def _add_columns(self) -> None:
        """The tables' columns for the terminal's width: what waits (waiting, pending) right after the
        name; under :data:`NARROW_BELOW` columns with shorter titles, without the sessions count, files
        and updated, and lines dreamed (the waiting/pending columns were cut off at 80 columns; the
        agent column came in for the dreamed one)."""
        narrow = self.app.size.width < NARROW_BELOW
        if narrow == self.narrow:
            return
        self.narrow = narrow
        projects = self.query_one("#projects", DataTable)
        sessions = self.query_one("#sessions", DataTable)
        projects.clear(columns=True)
        sessions.clear(columns=True)
        for key, label, width in PROJECT_COLUMNS_NARROW if narrow else PROJECT_COLUMNS:
            projects.add_column(label, width=width, key=key)
        for key, label, width in SESSION_COLUMNS_NARROW if narrow else SESSION_COLUMNS:
            sessions.add_column(label, width=width, key=key)
        if self.data is not None:
            self.current_project = None
            self.show(self.data)

    def on_resize(self) -> None:
        self._add_columns()

    def load(self) -> SessionsData:
        skipped: list[str] = []
        rows = self.workspace.sessions(skipped)
        names = {project: self.dream_app.project_namer(project) for project in {r.project for r in rows}}
        return SessionsData(rows, self.workspace.dream_plan(), skipped, names)

    def show(self, data: SessionsData) -> None:
        self.data = data
        rows, skipped = data.rows, data.skipped
        self.skipped = skipped
        for notice in skipped:  # the app shows each once
            self.post_message(PathSkipped(notice))
        self.names = data.names
        present = {r.agent_label for r in rows if r.agent_label}
        if self.agent and self.agent not in present:
            self.agent = ""  # its sessions are gone (another folder, a format turned off)
        shown = [r for r in rows if r.agent_label == self.agent] if self.agent else rows
        self.by_project = defaultdict(list)
        for r in shown:
            self.by_project[r.project].append(r)
        table = self.query_one("#projects", DataTable)
        keep = self.current_project
        keep_session = cursor_key(self.query_one("#sessions", DataTable))
        table.clear()
        for project, items in sorted(self.by_project.items()):
            waiting = sum(int(r.waiting or 0) for r in items)
            pending = sum(int(r.pending or 0) for r in items)
            table.add_row(
                Text(
                    short_project(self.names.get(project, project), 14 if self.narrow else 24), style="bold"
                ),
                kb(waiting),
                Text(str(pending), style="bold cyan" if pending else "dim"),
                *([] if self.narrow else [str(len(items))]),
                key=project,
            )
        if keep is not None and keep in self.by_project:
            table.move_cursor(row=table.get_row_index(keep))
            self.show_project(keep)
            restore_cursor(self.query_one("#sessions", DataTable), keep_session)
        waiting_sessions = sum(1 for r in shown if (r.waiting or 0) > 0)
        quiet_sessions = sum(1 for r in shown if r.status == "too quiet")
        agents = self._agent_counts(rows)
        key = self.dream_app.key_for("sessions.agent")
        if self.agent:
            agent_note = f" of {self.agent} ({key}: next agent)"
        elif len(agents) > 1:
            agent_note = f" ({', '.join(f'{label} {n:,}' for label, n in agents)}; {key}: one agent)"
        else:
            agent_note = ""
        quiet_note = (
            f" · {quiet_sessions} too quiet to dream (fewer than {self.dream_app.config.min_person_chars} "
            "characters of a person's words: they wait for more)"
            if quiet_sessions
            else ""
        )
        hint = dream_hint(data.plan, running=self.dream_app.cycle_running)
        self.query_one("#sessions-info", Static).update(
            Text.assemble(
                (f"{len(self.by_project)}", "bold"),
                " projects · ",
                (f"{len(shown):,}", "bold"),
                " sessions",
                (agent_note, "bold" if self.agent else ""),
                " · ",
                (f"{waiting_sessions}", "bold yellow"),
                " with content not yet dreamed",
                (quiet_note, "dim"),
                f"  ({hint} · Enter on a session shows its proposals)",
                (f"\n{len(skipped)} skipped: " if skipped else "", "yellow"),
                literal_text(skipped[0] if skipped else "", "yellow", one_line=True),
            )
        )

    def _agent_counts(self, rows: list[SessionRow]) -> list[tuple[str, int]]:
        """Each agent's sessions among ``rows`` (labels), in the registry's order."""
        counts: dict[str, int] = {}
        for r in rows:
            if r.agent_label:
                counts[r.agent_label] = counts.get(r.agent_label, 0) + 1
        rank = {label: n for n, label in enumerate(self.agent_order)}
        return sorted(counts.items(), key=lambda kv: (rank.get(kv[0], len(rank)), kv[0]))

    def action_agent(self) -> None:
        """Show one agent's sessions: every agent → the first agent → … → every agent again."""
        if self.data is None:
            return
        present = [label for label, _n in self._agent_counts(self.data.rows)]
        if not present:
            self.notify("No session names an agent yet", severity="warning")
            return
        cycle = ["", *present]
        self.agent = cycle[(cycle.index(self.agent) + 1) % len(cycle)] if self.agent in cycle else ""
        self.current_project = None
        self.show(self.data)
        projects = self.query_one("#projects", DataTable)
        if projects.row_count:
            first = projects.coordinate_to_cell_key(projects.cursor_coordinate).row_key.value
            if first:
                self.show_project(first)
        else:
            self.query_one("#sessions", DataTable).clear()

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        project = event.row_key.value
        if event.data_table.id != "projects" or not project:
            return
        if project == self.current_project or project != cursor_key(event.data_table):
            return  # already shown (a reload refilled it), or a stale message from before a refill
        self.show_project(project)

    def show_project(self, project: str) -> None:
        """Fill the sessions table with ``project``'s sessions, most recently read first."""
        self.current_project = project
        table = self.query_one("#sessions", DataTable)
        table.clear()
        items = sorted(self.by_project.get(project, []), key=lambda r: r.updated or "", reverse=True)
        for r in items:
            cells: list[Text | str] = [
                Text(literal(r.session[:8], 8)),
                Text(literal(r.agent_label, 8, one_line=True)),
                waiting_cell(r),
                Text(str(r.pending), style="bold cyan" if r.pending else "dim"),
                f"{int(r.lines or 0):,}",
            ]
            if not self.narrow:
                cells.append(f"{int(r.dreamed or 0):,}")
                updated = local_time(r.updated, "%Y-%m-%d %H:%M") if r.updated else "not read yet"
                cells += [str(r.files), Text(literal(updated, 16))]
            table.add_row(*cells, key=f"{project}\0{r.session}")
        table.border_title = literal(self.names.get(project, project), 60, one_line=True)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        """Enter on a project shows its sessions; Enter on a session, its proposals in the queue."""
        if event.data_table.id == "projects":
            self.query_one("#sessions", DataTable).focus()
            return
        _project, _, session = (event.row_key.value or "").partition("\0")
        if session:
            self.post_message(ShowProposalsOf(session))
