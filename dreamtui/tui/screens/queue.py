"""The queue: pending proposals beside the highlighted one's evidence; one key, one decision."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Input, RichLog, Static

from dreamtui.core.config import choices
from dreamtui.core.models import QueueRow
from dreamtui.services import outside, transcripts
from dreamtui.tui.messages import Change, KeepSetting
from dreamtui.tui.screens.base import BaseScreen
from dreamtui.tui.screens.modals import (
    AgentDecision,
    AgentRejectModal,
    CautionModal,
    EditModal,
    OutsideRejectModal,
    Rejection,
    RejectModal,
    ToolOutputModal,
)
from dreamtui.tui.widgets.candidate_view import CandidateView
from dreamtui.tui.widgets.consolidation_view import consolidation_rows, is_consolidation
from dreamtui.tui.widgets.consolidation_view import detail as consolidation_detail
from dreamtui.tui.widgets.literal import literal
from dreamtui.tui.widgets.outside_view import detail as outside_detail
from dreamtui.tui.widgets.outside_view import is_outside, outside_rows
from dreamtui.tui.widgets.queue_table import QueueTable, header

SORTS = choices("ui.sort")


def sort_rows(rows: list[QueueRow], mode: str, skipped: list[str]) -> list[QueueRow]:
    """Order rows by ``mode`` (newest first, or grouped by project / session); skipped ones last —
    last of the queue, or, when grouped, last of their group (a group is never split in two)."""
    order = {cid: n for n, cid in enumerate(skipped)}
    if mode == "project":
        return sorted(rows, key=lambda r: (r.project, order.get(r.id, -1), r.session, r.created_at))
    if mode == "session":
        return sorted(rows, key=lambda r: (r.session, order.get(r.id, -1), r.created_at))
    if skipped:
        rows = sorted(rows, key=lambda r: order.get(r.id, -1))
    return rows


def matches_filter(row: QueueRow, needle: str) -> bool:
    """Case-insensitive substring match on claim, project, session, type, provenance and agent."""
    hay = (
        f"{row.claim}\n{row.project}\n{row.session}\n{row.type}\n{row.provenance or ''}\n"
        f"{row.agent}\n{row.agent_label}"
    ).lower()
    return needle.lower() in hay


def agents_in(rows: list[QueueRow], order: list[str]) -> list[tuple[str, int]]:
    """The agents of ``rows`` (their labels) with how many proposals each has, in the registry's
    ``order`` (labels), an agent the registry does not know last."""
    counts: dict[str, int] = {}
    for row in rows:
        if row.agent_label:
            counts[row.agent_label] = counts.get(row.agent_label, 0) + 1
    rank = {label: n for n, label in enumerate(order)}
    return sorted(counts.items(), key=lambda kv: (rank.get(kv[0], len(rank)), kv[0]))


def next_agent(current: str, present: list[str]) -> str:
    """The agent filter after ``current``: every agent (``""``) → the first agent present → … → every
    agent again."""
    cycle = ["", *present]
    return (
        cycle[(cycle.index(current) + 1) % len(cycle)]
        if current in cycle
        else (present[0] if present else "")
    )


@dataclass(frozen=True, slots=True)
class QueueData:
    """What the queue's loader reads: pending proposals (outside changes first) and the skipped ones."""

    rows: list[QueueRow]
    skipped: list[str]


class QueueScreen(BaseScreen[QueueData]):
    """Review pending proposals."""

    TITLE_TEXT = "queue"
    AUTO_FOCUS = "#queue"
    LOADING_TARGET = "#queue"
    BINDINGS = [
        Binding("a", "accept", "Accept", id="accept"),
        Binding("r", "reject", "Reject", id="reject"),
        Binding("e", "edit", "Edit", tooltip="Edit claim, why, how, type or scope, then accept", id="edit"),
        Binding("s", "skip", "Skip", id="skip"),
        Binding("u", "undo", "Undo", id="undo"),
        Binding("m", "mine", "Mine (outside change)", show=False, id="mine"),
        Binding(
            "enter",
            "open",
            "Read",
            show=False,
            tooltip="Read the highlighted proposal (j/k scroll it, Esc back)",
            id="open",
        ),
        Binding("j", "down", "Down", show=False, id="down"),
        Binding("k", "up", "Up", show=False, id="up"),
        Binding("slash", "filter", "Filter", id="filter"),
        Binding("o", "sort", "Sort", id="sort"),
        Binding(
            "f",
            "agent",
            "Agent",
            show=False,
            tooltip="Show one agent's proposals (again: the next agent, then every agent)",
            id="agent",
        ),
        Binding(
            "escape",
            "clear_filter",
            "Clear filter (from the detail pane: back to the list)",
            show=False,
            id="clear_filter",
        ),
        Binding("ctrl+d", "detail_down", "Scroll evidence down", show=False, id="detail_down"),
        Binding("ctrl+u", "detail_up", "Scroll evidence up", show=False, id="detail_up"),
        Binding("z", "unfold", "Fold/unfold evidence", show=False, id="unfold"),
    ]

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        saved = self.dream_app.config.ui.get("sort", SORTS[0])
        self.sort_mode = saved if saved in SORTS else SORTS[0]
        self.skipped: list[str] = []
        self.filter_text = ""
        self.agent = ""  # the agent filter (a label, ``Codex``): only its proposals shown; "" every agent
        self.agent_order = [label for _agent, label in transcripts.agents()]
        self.rows: list[QueueRow] = []
        self.shown: list[QueueRow] = []
        self._loaded = False
        self._select_after_load: str | None = None  # a proposal back in the queue (undone, failed)
        self._decisions_seen = 0  # the app's decisions finished when the running load started

    def body(self) -> ComposeResult:
        with Vertical(id="queue-main", classes="split"):
            with Vertical(id="queue-pane"):
                yield Input(placeholder="filter: text in claim, project, session, type…", id="filter")
                yield Static(header(), id="queue-header")
                yield QueueTable(id="queue")
                yield Static("", id="queue-info")
            yield CandidateView(self.dream_app.config, id="detail")
        yield RichLog(id="live", max_lines=200, markup=False, wrap=False)

    def on_mount(self) -> None:
        app = self.dream_app
        app.live_lines.subscribe(self, self.live_lines)
        app.queue_filter.subscribe(self, self.set_filter)
        self.table.project_namer = app.project_namer
        self.table.focus()
        live = self.query_one("#live", RichLog)
        live.border_title = "live transcripts"
        # hidden by no height rather than display: a RichLog learns its width from its first resize and
        # keeps lines written before that back; shown later, that resize could come too late
        live.add_class("empty")

    @property
    def table(self) -> QueueTable:
        return self.query_one(QueueTable)

    # -- data -----------------------------------------------------------------------------------

    def data_changed(self, change: Change) -> None:
        """A decision undone, failed or reconciled, a dream cycle or an outside change: read the queue
        again (the proposal concerned highlighted); accepts, rejects and skips are already shown in place."""
        if change.kind in ("undo", "reconcile", "failed"):
            if change.kind == "undo" and change.candidate_id:
                # an undone skip (or a decision on a skipped one) puts it back in its place
                self.skipped = [c for c in self.skipped if c != change.candidate_id]
            self._select_after_load = change.candidate_id
            self.reload()
        elif change.kind in ("cycle", "outside", "ledger"):  # ledger: another process's decisions
            self.reload()

    def prepare_load(self) -> None:
        self._decisions_seen = self.dream_app.decisions_finished

    def result_is_stale(self) -> bool:
        """A decision ended while the queue was read: what was read may still show the proposal."""
        return self.dream_app.decisions_finished != self._decisions_seen

    def load(self) -> QueueData:
        rows = [
            *outside_rows(self.workspace),
            *consolidation_rows(self.workspace),
            *self.workspace.queue_rows(),
        ]
        return QueueData(rows, self.workspace.skipped_ids() if not self._loaded else [])

    def show(self, data: QueueData) -> None:
        """Show the pending proposals read, keeping the highlight on the same one when it is still there."""
        keep = self._select_after_load or self.table.current_id
        self._select_after_load = None
        busy = self.dream_app.in_flight
        self.rows = [r for r in data.rows if r.id not in busy]
        # a proposal's text may have changed (an undone or failed edited accept is back with the person's
        # text): the table caches drawn lines by candidate id, so they are drawn again (only the visible ones)
        self.table.forget_drawn_lines()
        if not self._loaded:  # skips made before the app was opened stay last
            self._loaded = True
            self.skipped = [*data.skipped, *self.skipped]
        self.skipped = [cid for cid in self.skipped if any(r.id == cid for r in self.rows)]
        self.apply()
        if keep:
            self.select(keep)

    def apply(self) -> None:
        """Fill the table from ``self.rows`` with the current sort and filter."""
        rows = self.rows
        if self.agent:
            rows = [r for r in rows if r.agent_label == self.agent]
        if self.filter_text:
            rows = [r for r in rows if matches_filter(r, self.filter_text)]
        self.shown = sort_rows(rows, self.sort_mode, self.skipped)
        self.table.fill(self.shown, group="" if self.sort_mode == "newest" else self.sort_mode)
        self.update_info()
        self.fit_list()
        if not self.shown:
            self.show_candidate(None)

    LIST_SHARE = 0.4  # of the screen's height the list takes at most (the proposal below gets the rest)

    def fit_list(self) -> None:
        """The list as tall as its lines (with its title and info lines), at most :data:`LIST_SHARE` of
        the screen: a queue of three leaves the rest to the proposal and its evidence."""
        most = max(5, int(self.size.height * self.LIST_SHARE)) if self.size.height else 12
        self.query_one("#queue-pane").styles.height = max(5, min(len(self.table.items) + 2, most))

    def on_resize(self) -> None:
        self.fit_list()

    def update_info(self) -> None:
        text = Text.assemble((f"{len(self.shown):,}", "bold"), f" of {len(self.rows):,} shown")
        text.append(" · sort: ")
        text.append(self.sort_mode, "bold")
        if self.filter_text:
            text.append(" · filter: ")
            text.append(self.filter_text, "bold")
        present = agents_in(self.rows, self.agent_order)
        key = self.dream_app.key_for("agent")
        if self.agent:
            text.append(" · agent: ")
            text.append(self.agent, "bold")
            text.append(f" ({key}: next)", "dim")
        elif len(present) > 1:
            text.append(" · ")
            text.append(", ".join(f"{label} {n:,}" for label, n in present))
            text.append(f" ({key}: one agent)", "dim")
        self.query_one("#queue-info", Static).update(text)

    def select(self, cid: str) -> None:
        """Highlight the proposal ``cid`` (loading the table up to it when needed)."""
        try:
            index = self.table.get_row_index(cid)
        except KeyError:
            return
        self.table.move_cursor(row=index, animate=False)

    def on_queue_table_columns_changed(self, event: QueueTable.ColumnsChanged) -> None:
        self.query_one("#queue-header", Static).update(header(event.fields))

    def on_queue_table_highlighted(self, event: QueueTable.Highlighted) -> None:
        self.show_candidate(event.candidate_id)

    def show_candidate(self, cid: str | None) -> None:
        view = self.query_one(CandidateView)
        if cid is None:
            if self.rows and self.filter_text:  # they are there, the filter hides them
                view.show(
                    None,
                    empty=f"No proposal matches the filter “{literal(self.filter_text, 80, one_line=True)}” "
                    f"({len(self.rows):,} waiting). Esc clears it.",
                )
            elif self.rows and self.agent:
                view.show(
                    None,
                    empty=f"No proposal of {self.agent} waits ({len(self.rows):,} of other agents). "
                    f"{self.dream_app.key_for('agent')} shows the next agent.",
                )
            else:
                view.show(None)
            return
        if is_outside(cid):
            view.show_outside(outside_detail(self.workspace, cid))
            return
        if is_consolidation(cid):
            view.show_outside(consolidation_detail(self.workspace, cid))
            return
        cand = self.workspace.candidate(cid)
        dup = self.workspace.duplicate_text(cand) if cand else None
        row = self.table.current_row
        view.show(cand, dup, agent=row.agent if row is not None and row.id == cid else "")

    # -- decisions ------------------------------------------------------------------------------

    def take_current(self) -> str | None:
        """Remove the highlighted row at once (the next one is highlighted); returns its candidate id."""
        cid = self.table.current_id
        if cid is None:
            self.notify("No proposal is highlighted", severity="warning")
            return None
        self.table.remove_row(cid)
        self.rows = [r for r in self.rows if r.id != cid]
        self.shown = [r for r in self.shown if r.id != cid]
        self.update_info()
        self.fit_list()
        return cid

    def _accept_consolidation(self, row: QueueRow) -> None:
        """Accept a consolidation; one whose evidence is tool output only after an explicit yes."""
        if row.provenance != "tool":
            self.take_current()
            self.dream_app.decide("consolidate-accept", row.id)
            return
        item = self.workspace.consolidation(row.id)
        where = f"session {(item.session or '?')[:8]} : line {item.line}" if item.line else ""

        def done(confirmed: bool | None) -> None:
            if confirmed and self.table.current_id == row.id:
                self.take_current()
                self.dream_app.decide("consolidate-accept", row.id, allow_tool=True)
            elif not confirmed:
                self.notify("Not accepted: the untrusted proposal stays in the queue", timeout=3)

        self.app.push_screen(ToolOutputModal(said=(item.reason or item.kind, item.evidence, where)), done)

    def action_accept(self) -> None:
        row = self.table.current_row
        if row is None:
            self.notify("No proposal is highlighted", severity="warning")
            return
        if is_outside(row.id):
            self._accept_outside(row)
            return
        if is_consolidation(row.id):
            self._accept_consolidation(row)
            return
        if row.provenance != "tool":
            self.take_current()
            self.dream_app.decide("accept", row.id)
            return
        cand = self.workspace.candidate(row.id)
        if cand is None:
            return

        def done(confirmed: bool | None) -> None:
            if confirmed and self.table.current_id == row.id:
                self.take_current()
                self.dream_app.decide("accept", row.id, allow_tool=True)
            elif not confirmed:
                self.notify("Not accepted: the untrusted proposal stays in the queue", timeout=3)

        self.app.push_screen(ToolOutputModal(cand), done)

    def _confirmed(self, row: QueueRow, question: str, why: list[str], action: str, **kwargs: Any) -> None:
        """Ask once (:class:`CautionModal`); on yes, the decision ``action`` on ``row``."""

        def done(yes: bool | None) -> None:
            if yes and self.table.current_id == row.id:
                self.take_current()
                self.dream_app.decide(action, row.id, **kwargs)
            elif not yes:
                self.notify("Nothing decided: it stays in the queue", timeout=3)

        self.app.push_screen(CautionModal(question, row.claim, why), done)

    def _accept_outside(self, row: QueueRow) -> None:
        """``a`` on an outside change: one key commits a plain change of one file; one that deletes a
        file, writes two, is one of a batch, drops index lines or leaves a topic file out of the index
        asks once."""
        why = outside.accept_caution(self.workspace, outside.get(self.workspace, row.id))
        if not why:
            self.take_current()
            self.dream_app.decide("outside-accept", row.id)
            return
        self._confirmed(
            row,
            "Accept this outside change? (one commit; u undoes it)",
            why,
            "outside-accept",
            confirmed=True,
        )

    def action_skip(self) -> None:
        cid = self.table.current_id
        if cid is None:
            self.notify("No proposal is highlighted", severity="warning")
            return
        row = next((r for r in self.rows if r.id == cid), None)
        self.take_current()
        if row is not None:
            self.skipped.append(cid)
            self.rows.append(row)
            if self.sort_mode == "newest":
                self.shown.append(row)
                self.table.add_rows_keyed([row])
                self.update_info()
            else:  # grouped: it goes last in its own group, the next proposal stays highlighted
                following = self.table.current_id
                self.apply()
                self.select(following or cid)
        if not is_outside(cid) and not is_consolidation(cid):  # they wait, skipped, where they are
            self.dream_app.decide("skip", cid)

    def action_mine(self) -> None:
        """The highlighted outside change is the person's own edit: commit it as theirs."""
        cid = self.table.current_id
        if not is_outside(cid):
            self.notify(
                "m marks a change to the memory repository as yours; this is a proposal", severity="warning"
            )
            return
        self.take_current()
        self.dream_app.decide("outside-mine", cid)

    def action_reject(self) -> None:
        cid = self.table.current_id
        if cid is None:
            self.notify("No proposal is highlighted", severity="warning")
            return
        if is_consolidation(cid):
            row = next((r for r in self.rows if r.id == cid), None)

            def rejected_consolidation(result: Rejection | None) -> None:
                if result is not None and self.table.current_id == cid:
                    self.take_current()
                    self.dream_app.decide("consolidate-reject", cid, reason=result.reason or result.category)

            self.app.push_screen(RejectModal(row.claim if row else cid), rejected_consolidation)
            return
        if is_outside(cid):
            item = outside.get(self.workspace, cid)
            if outside.is_agent(item):

                def chosen(result: AgentDecision | None) -> None:
                    if result is not None and self.table.current_id == cid:
                        self.take_current()
                        action = "outside-restore" if result.restore else "outside-reject"
                        self.dream_app.decide(action, cid, reason=result.reason)

                self.app.push_screen(
                    AgentRejectModal(item.title(), outside.reject_effect(self.workspace, item)), chosen
                )
                return

            def rejected(reason: str | None) -> None:
                if reason is not None and self.table.current_id == cid:
                    self.take_current()
                    self.dream_app.decide("outside-reject", cid, reason=reason or "rejected in the app")

            effect = outside.reject_effect(self.workspace, item)
            self.app.push_screen(OutsideRejectModal(item.title(), effect), rejected)
            return
        cand = self.workspace.candidate(cid)

        def done(result: Rejection | None) -> None:
            if result is not None and self.table.current_id == cid:
                self.take_current()
                self.dream_app.decide("reject", cid, category=result.category, reason=result.reason)

        self.app.push_screen(RejectModal(cand.claim if cand else cid), done)

    def action_edit(self) -> None:
        cid = self.table.current_id
        if is_outside(cid):
            self.notify(
                "An outside change is accepted or rejected as it is (edit the file, it comes back)",
                severity="warning",
            )
            return
        if is_consolidation(cid):
            self.notify(
                "A consolidation is accepted or rejected as proposed (edit the memory after accepting it)",
                severity="warning",
            )
            return
        cand = self.workspace.candidate(cid) if cid else None
        if cand is None:
            self.notify("No proposal is highlighted", severity="warning")
            return
        untrusted = cand.provenance == "tool"

        def done(edits: dict[str, str] | None) -> None:
            if edits is not None and self.table.current_id == cid:
                self.take_current()
                self.dream_app.decide("accept", cid, edits=edits, allow_tool=untrusted)

        def confirmed(yes: bool | None) -> None:
            if yes and self.table.current_id == cid:
                self.app.push_screen(EditModal(cand), done)
            elif not yes:
                self.notify("Not accepted: the untrusted proposal stays in the queue", timeout=3)

        if untrusted:  # tool output: an explicit yes first, then the editor
            self.app.push_screen(ToolOutputModal(cand, then_edit=True), confirmed)
        else:
            self.app.push_screen(EditModal(cand), done)

    def action_undo(self) -> None:
        self.dream_app.decide("undo", None)

    # -- moving, sorting, filtering ---------------------------------------------------------------

    @property
    def reading(self) -> bool:
        """The detail pane has the focus (Enter or Tab): ``j``/``k`` scroll it, not the list."""
        return isinstance(self.focused, CandidateView)

    def action_open(self) -> None:
        """Enter: read the highlighted proposal — the focus goes to the detail pane (at its top)."""
        if self.table.current_id is None:
            self.notify("No proposal is highlighted", severity="warning")
            return
        self.query_one(CandidateView).focus()

    def action_down(self) -> None:
        if self.reading:
            self.query_one(CandidateView).scroll_down(animate=False)
        else:
            self.table.action_cursor_down()

    def action_up(self) -> None:
        if self.reading:
            self.query_one(CandidateView).scroll_up(animate=False)
        else:
            self.table.action_cursor_up()

    def action_detail_down(self) -> None:
        self.query_one(CandidateView).scroll_page_down(animate=False)

    def action_detail_up(self) -> None:
        self.query_one(CandidateView).scroll_page_up(animate=False)

    def action_unfold(self) -> None:
        """Show progress and hook records and long tool output in full (again: one line each)."""
        self.query_one(CandidateView).toggle_fold()

    def action_sort(self) -> None:
        self.sort_mode = SORTS[(SORTS.index(self.sort_mode) + 1) % len(SORTS)]
        self.post_message(KeepSetting("sort", self.sort_mode))
        keep = self.table.current_id
        self.apply()
        if keep:
            self.select(keep)

    def action_agent(self) -> None:
        """Show one agent's proposals: every agent → the first agent with proposals → the next … →
        every agent again (the line under the list says which, and how many each has)."""
        present = [label for label, _n in agents_in(self.rows, self.agent_order)]
        if not present:
            self.notify("No proposal names an agent", severity="warning")
            return
        self.agent = next_agent(self.agent, present)
        keep = self.table.current_id
        self.apply()
        if keep:
            self.select(keep)

    def action_filter(self) -> None:
        box = self.query_one("#filter", Input)
        box.add_class("visible")
        box.focus()

    def set_filter(self, text: str) -> None:
        """Show only the proposals matching ``text`` (the filter box shows it; Esc clears it)."""
        box = self.query_one("#filter", Input)
        box.add_class("visible")
        box.value = text  # posts Input.Changed, which applies the filter
        self.table.focus()

    def action_clear_filter(self) -> None:
        """Esc: from the detail pane back to the list; on the list, the filter is cleared."""
        if self.reading:
            self.table.focus()
            return
        box = self.query_one("#filter", Input)
        box.value = ""
        box.remove_class("visible")
        self.filter_text = ""
        self.agent = ""
        self.apply()
        self.table.focus()

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id == "filter":
            self.filter_text = event.value.strip()
            self.apply()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id == "filter":
            if not event.value.strip():
                event.input.remove_class("visible")
            self.table.focus()

    # -- live -------------------------------------------------------------------------------------

    def live_lines(self, lines: list[Text]) -> None:
        """Append new transcript lines to the live panel."""
        live = self.query_one("#live", RichLog)
        live.remove_class("empty")
        for line in lines:
            live.write(line)
