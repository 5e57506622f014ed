"""Briefings: the version waiting for review (as a diff, with accept / reject), and every committed
version of ``briefing.md`` from git, rendered; the diff between any two."""

from __future__ import annotations

from dataclasses import dataclass, field

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.message import Message
from textual.widgets import DataTable, Markdown, Static

from dreamtui.services import BRIEFING, BriefingProposal, CommitInfo, unified_diff
from dreamtui.tui.messages import Change
from dreamtui.tui.screens.base import BaseScreen, cursor_key, restore_cursor
from dreamtui.tui.screens.modals import ReasonModal
from dreamtui.tui.widgets.diff_view import diff_text
from dreamtui.tui.widgets.literal import literal

PROPOSAL = "proposal:"


@dataclass(slots=True)
class BriefingsData:
    """What the Briefings screen's loader reads: the committed versions, the one waiting for review
    and its diff against the current ``briefing.md``."""

    versions: list[CommitInfo]
    proposal: BriefingProposal | None = None
    proposal_diff: list[str] = field(default_factory=list)


@dataclass
class BriefingDecided(Message):
    """The briefing decision's worker is done: its one-line summary, or why it failed."""

    summary: str
    failed: bool = False


class BriefingsScreen(BaseScreen[BriefingsData]):
    """Versions of the briefing; Enter/highlight shows one, m marks one, f shows marked → highlighted.

    A version waiting for review (built by a dream cycle, or auto-written after promotion) is the
    first row: highlighted, it shows as a diff against the current ``briefing.md``; ``a`` accepts it
    (one commit), ``r`` rejects it with a reason."""

    TITLE_TEXT = "briefings"
    # short labels: at 80 columns the footer keeps the app's Dream, Quit and Help beside them (the
    # help and the palette show the tooltips)
    BINDINGS = [
        Binding(
            "a", "accept", "Accept", tooltip="Accept the waiting briefing (one commit)", id="briefings.accept"
        ),
        Binding(
            "r",
            "reject",
            "Reject",
            tooltip="Reject the waiting briefing, with a reason",
            id="briefings.reject",
        ),
        Binding("m", "mark", "Mark", tooltip="Mark this version for a diff", id="briefings.mark"),
        Binding(
            "f",
            "diff",
            "Diff",
            tooltip="Diff from the marked (or previous) version to this one",
            id="briefings.diff",
        ),
        Binding("v", "view", "View", tooltip="View the highlighted version, rendered", id="briefings.view"),
        Binding(
            "u",
            "undo",
            "Undo",
            tooltip="Undo the latest decision of any kind (a briefing's accept or reject included)",
            id="briefings.undo",
        ),
    ]

    def __init__(self, name: str | None = None, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.versions: dict[str, CommitInfo] = {}
        self.proposal: BriefingProposal | None = None
        self.proposal_diff: list[str] = []
        self.marked: str | None = None
        self.current: str | None = None
        self.deciding = False
        self._to_top = False

    def body(self) -> ComposeResult:
        with Horizontal(classes="split"):
            yield DataTable(id="versions", cursor_type="row", zebra_stripes=True)
            with VerticalScroll(id="briefing-pane", classes="side"):
                yield Static("", id="briefing-title")
                # the briefing quotes transcripts: a link in it is shown, never opened by a click
                yield Markdown("", id="briefing", open_links=False)
                yield Static("", id="briefing-diff")

    def on_mount(self) -> None:
        table = self.query_one("#versions", DataTable)
        for label, width in (("", 1), ("date", 16), ("commit", 8), ("subject", 30)):
            table.add_column(label, width=width, key=label or "mark")

    def data_changed(self, change: Change) -> None:
        """An undo may bring a version back to review: the table then starts at the top (the waiting
        version first), not on the version the cursor was on."""
        if change.kind == "undo":
            self._to_top = True
        super().data_changed(change)

    def load(self) -> BriefingsData:
        proposal = self.workspace.waiting_briefing()
        diff = self.workspace.briefing_diff(proposal) if proposal is not None else []
        return BriefingsData(self.workspace.briefing_versions(), proposal, diff)

    def show(self, data: BriefingsData) -> None:
        table = self.query_one("#versions", DataTable)
        keep = cursor_key(table)
        table.clear()
        self.versions = {c.sha: c for c in data.versions}
        self.proposal, self.proposal_diff = data.proposal, data.proposal_diff
        if self.proposal is not None:
            p = self.proposal
            what = (
                "auto-written: a keep · r reject"
                if p.status == "accepted"
                else "pending: a accept · r reject"
            )
            table.add_row(
                Text("▶", style="bold yellow"),
                p.created_at[:16].replace("T", " "),
                Text(f"#{p.id}", style="bold yellow"),
                Text(what, style="bold yellow"),
                key=f"{PROPOSAL}{p.id}",
            )
        for sha, c in self.versions.items():
            table.add_row(
                "●" if sha == self.marked else "",
                c.date[:16].replace("T", " "),
                sha[:8],
                Text(literal(c.subject, 80, one_line=True)),
                key=sha,
            )
        if (keep is not None and keep.startswith(PROPOSAL) and self.proposal is None) or self._to_top:
            keep = None  # the decided version left the table, or an undo: start at the top
        self._to_top = False
        restore_cursor(table, keep)
        if not self.versions and self.proposal is None:
            self.current = None
            self.query_one("#briefing-title", Static).update(
                Text(
                    "No briefing yet: each full dream cycle proposes one, built from accepted memories "
                    "and the transcripts.",
                    style="dim",
                )
            )
            self.query_one("#briefing", Markdown).display = False  # nothing of a decided version stays
            self.query_one("#briefing-diff", Static).display = False
        elif table.row_count:
            # the pane always shows the row under the cursor as loaded now (a decided version's diff
            # never stays behind, and an accepted one shows as committed)
            self.current = cursor_key(table)
            self.action_view()

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self.current = event.row_key.value
        self.action_view()

    def on_markdown_link_clicked(self, event: Markdown.LinkClicked) -> None:
        """A link in the briefing came from a transcript: say where it points instead of opening it."""
        event.stop()
        self.notify(f"link (not opened): {literal(event.href, 300, one_line=True)}", timeout=8)

    def _sync_current(self) -> None:
        """Take the version under the cursor now (a quick ``j m`` must not mark the previous one)."""
        sha = cursor_key(self.query_one("#versions", DataTable))
        if sha in self.versions or (sha or "").startswith(PROPOSAL):
            self.current = sha

    def _on_proposal(self) -> bool:
        return (self.current or "").startswith(PROPOSAL) and self.proposal is not None

    def show_proposal(self) -> None:
        """The waiting version as a diff against the current ``briefing.md``."""
        p = self.proposal
        if p is None:
            return
        how = "auto-written, review it after the fact" if p.status == "accepted" else "waits for your review"
        self.query_one("#briefing-title", Static).update(
            Text.assemble(
                (f"briefing #{p.id}", "bold yellow"),
                f" {how} · diff against the current briefing.md · ",
                ("a", "bold"),
                " accept · ",
                ("r", "bold"),
                " reject",
            )
        )
        self.query_one("#briefing", Markdown).display = False
        box = self.query_one("#briefing-diff", Static)
        box.display = True
        box.update(diff_text(self.proposal_diff))

    def action_view(self) -> None:
        self._sync_current()
        if not self.current:
            return
        if self._on_proposal():
            self.show_proposal()
            return
        if self.current not in self.versions:
            return
        c = self.versions[self.current]
        text = self.workspace.file_at(BRIEFING, c.sha)
        self.query_one("#briefing-title", Static).update(
            Text.assemble(("briefing.md", "bold"), f" at {c.sha[:8]} · {c.date[:16].replace('T', ' ')}")
        )
        md = self.query_one("#briefing", Markdown)
        md.display = True
        shown = literal(text, 50_000)
        if md.source != shown:  # the same text again (a reload, a highlight) is not rebuilt
            md.update(shown)
        self.query_one("#briefing-diff", Static).display = False

    def action_mark(self) -> None:
        self._sync_current()
        if not self.current or self.current not in self.versions:
            return
        self.marked = self.current
        table = self.query_one("#versions", DataTable)
        for sha in self.versions:
            table.update_cell(sha, "mark", "●" if sha == self.marked else "")
        self.notify(f"Marked {self.marked[:8]}: highlight another version and press f for the diff")

    def action_diff(self) -> None:
        self._sync_current()
        if self._on_proposal():
            self.show_proposal()
            return
        if not self.current or self.current not in self.versions:
            return
        if self.marked == self.current:
            self.notify("This is the marked version: highlight another one, then press f", severity="warning")
            return
        old_sha = self.marked or self._previous(self.current)
        if old_sha is None:
            self.notify("This is the first version: mark another one with m", severity="warning")
            return
        old = self.workspace.file_at(BRIEFING, old_sha)
        new = self.workspace.file_at(BRIEFING, self.current)
        lines = unified_diff(old, new, f"briefing.md@{old_sha[:8]}", f"briefing.md@{self.current[:8]}")
        self.query_one("#briefing-title", Static).update(
            Text.assemble(("diff ", "bold"), f"{old_sha[:8]} → {self.current[:8]}")
        )
        self.query_one("#briefing", Markdown).display = False
        box = self.query_one("#briefing-diff", Static)
        box.display = True
        box.update(diff_text(lines))

    def _previous(self, sha: str) -> str | None:
        order = list(self.versions)
        i = order.index(sha)
        return order[i + 1] if i + 1 < len(order) else None

    # -- the waiting version: accept / reject ----------------------------------------------------------

    def _waiting(self) -> BriefingProposal | None:
        if self.deciding:
            self.notify("A briefing decision is being written", severity="warning")
            return None
        if self.proposal is None:
            self.notify("No briefing waits for review", severity="warning")
            return None
        return self.proposal

    def action_accept(self) -> None:
        """Accept the waiting version: ``briefing.md`` becomes it, in one commit."""
        p = self._waiting()
        if p is not None:
            self._decide(p.id, True, "")

    def action_reject(self) -> None:
        """Reject the waiting version, with a reason (kept in the ledger)."""
        p = self._waiting()
        if p is None:
            return

        def done(reason: str | None) -> None:
            if reason is not None:
                self._decide(p.id, False, reason)

        self.app.push_screen(ReasonModal(f"Reject briefing #{p.id}", required=True), done)

    def action_undo(self) -> None:
        """``u``: the latest decision of any kind is undone, as on the queue (a briefing's accept puts the
        version before it back; a reject makes it wait again); the note says what was undone."""
        if self.deciding:
            self.notify("A briefing decision is being written: u after it", severity="warning")
            return
        self.dream_app.decide("undo", None)

    def _decide(self, bid: int, accept: bool, reason: str) -> None:
        self.deciding = True
        self._decide_worker(bid, accept, reason)

    @work(thread=True, exit_on_error=False, group="briefing", name="briefing decision")
    def _decide_worker(self, bid: int, accept: bool, reason: str) -> None:
        try:
            summary = self.workspace.decide_briefing(bid, accept, reason).summary
        except Exception as exc:  # noqa: BLE001 - a refused decision is a notification
            self.post_message(
                BriefingDecided(str(exc).splitlines()[0] if str(exc) else type(exc).__name__, True)
            )
            return
        self.post_message(BriefingDecided(summary))

    def on_briefing_decided(self, message: BriefingDecided) -> None:
        message.stop()
        self.deciding = False
        self.notify(
            literal(message.summary, 300, one_line=True),
            severity="error" if message.failed else "information",
        )
        self.current = None
        self.reload()
