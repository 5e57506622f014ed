"""Promotion: the three gates auto-write must pass, their evidence, and the approve action."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rich.console import Group
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widgets import Static

from dreamtui.services import Gate, PromotionView, promotion
from dreamtui.tui.screens.base import BaseScreen
from dreamtui.tui.screens.modals import ConfirmModal
from dreamtui.tui.widgets.literal import literal


def _count(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _pct(value: object) -> str:
    return f"{value:.0%}" if isinstance(value, (int, float)) else "none yet"


def plain_lines(gate: Gate) -> list[str]:
    """What a gate measured, in plain words, one line each (instead of ``integrity ok: True``,
    ``accept rate: 0.6667``): a broken thing first, what holds after it."""
    ev = gate.evidence
    bad: list[str] = []
    good: list[str] = []
    if gate.name == "one_schema" or "offenders" in ev:
        offenders = ev.get("offenders") or []
        for o in offenders[:5]:
            bad.append(f"{o.get('path')}: {'; '.join(map(str, o.get('problems') or []))[:200]}")
        if "files" in ev:
            (bad if offenders else good).append(
                f"{_count(int(ev['files']), 'topic file')} checked, "
                + (
                    f"{len(offenders)} break the schema (dreamtui normalize)"
                    if offenders
                    else "all follow it"
                )
            )
    if "integrity_ok" in ev:
        (good if ev["integrity_ok"] else bad).append(
            "the ledger's SQLite integrity check: " + ("ok" if ev["integrity_ok"] else "NOT ok")
        )
        (good if ev.get("reconcile_agrees") else bad).append(
            "ledger and memory repo: " + ("agree" if ev.get("reconcile_agrees") else "out of agreement")
        )
        overlaps = int(ev.get("overlap_count") or 0)
        (bad if overlaps else good).append(
            f"session content extracted twice: {overlaps}"
            if overlaps
            else "no session content extracted twice"
        )
        cycles = ev.get("last_cycles") or []
        done = sum(1 for c in cycles if c.get("status") == "completed")
        (good if gate.passed else bad).append(f"last cycles: {done} of {len(cycles)} completed")
    if "min_decisions" in ev:
        decisions = int(ev.get("decisions") or 0)
        (good if decisions >= ev["min_decisions"] else bad).append(
            f"human decisions: {decisions} of {ev['min_decisions']} needed"
            + (f" ({ev.get('accepted', 0)} accepted, {ev.get('rejected', 0)} rejected)" if decisions else "")
        )
        days = ev.get("days") or 0
        (good if days >= ev["min_days"] else bad).append(f"days of decisions: {days:g} of {ev['min_days']}")
        rate = ev.get("accept_rate")
        ok = isinstance(rate, (int, float)) and rate >= ev["min_rate"]
        (good if ok else bad).append(f"accept rate: {_pct(rate)} (needs {_pct(ev['min_rate'])})")
        if ev.get("by_agent"):  # beside the gate, never part of it
            good.append(agents_line(ev["by_agent"]))
    return [*bad, *good]


def agents_line(by_agent: dict[str, Any]) -> str:
    """The evidence gate's decisions per agent, in one line (the gate counts them all together)."""
    return "per agent (the gate counts them together): " + " · ".join(
        f"{agent} {_pct(b.get('accept_rate'))} of {int(b.get('decisions') or 0)}"
        for agent, b in by_agent.items()
    )


def gate_block(gate: Gate) -> list[Text]:
    """One gate as a checklist item: ✔ or ✘ and its title, what it still needs (the line that matters),
    then what was measured in plain lines."""
    mark, style = ("✔", "bold green") if gate.passed else ("✘", "bold red")
    out = [Text.assemble((f" {mark} ", style), (gate.title, "bold"))]
    missing = gate.evidence.get("failures") or ([] if gate.passed else [gate.summary])
    for item in missing[:5]:
        out.append(Text.assemble(("     needs: ", "bold yellow"), literal(str(item), 300, one_line=True)))
    if gate.passed:
        out.append(Text.assemble(("     ", ""), literal(gate.summary, 300, one_line=True)))
    for line in plain_lines(gate):
        out.append(Text.assemble(("     · ", "dim"), (literal(line, 300, one_line=True), "dim")))
    return out


@dataclass
class PromotionDecided(Message):
    """Approving or revoking auto-write is done: the line to show (``failed``: why it was refused)."""

    summary: str
    failed: bool = False
    approved: bool = False


class PromotionScreen(BaseScreen[PromotionView]):
    """Gates for the most-decided extractor/model pair; A approves (after a confirmation), R revokes."""

    TITLE_TEXT = "promotion"
    LOADING_TARGET = "#promotion"
    AUTO_FOCUS = "#promotion-page"  # j/k, PgDn/PgUp scroll the page without a Tab first
    BINDINGS = [
        Binding("A", "approve", "Approve auto-write", id="promotion.approve"),
        Binding("R", "revoke", "Revoke", id="promotion.revoke"),
    ]

    def body(self) -> ComposeResult:
        with VerticalScroll(id="promotion-page"):
            yield Static("", id="promotion", classes="pane")

    def action_down(self) -> None:
        self.query_one("#promotion-page", VerticalScroll).scroll_down(animate=False)

    def action_up(self) -> None:
        self.query_one("#promotion-page", VerticalScroll).scroll_up(animate=False)

    def load(self) -> PromotionView:
        return self.workspace.promotion()

    def show(self, data: PromotionView) -> None:
        pair, gates, status = data.pair, data.gates, data.status
        parts: list[Text] = []
        state = Text()
        if status.active and status.promotion:
            state.append(f" AUTO-WRITE ON for {status.promotion.pair} ", "bold white on green")
        else:
            state.append(" AUTO-WRITE OFF ", "bold white on grey30")
        if not status.active and status.reason:
            state.append("  " + literal(status.reason, 300, one_line=True), "dim")
        passing = sum(g.passed for g in gates)
        first_missing = next(
            (str((g.evidence.get("failures") or [g.summary])[0]) for g in gates if not g.passed), ""
        )
        parts += [
            state,
            Text(),
            Text.assemble(("Candidate pair: ", "dim"), (str(pair or "none yet"), "bold")),
            Text(),
            Text.assemble(
                (f"Gates: {passing} of {len(gates)} pass", "bold"),
                (
                    f"  — next: {literal(first_missing, 200, one_line=True)}" if first_missing else "",
                    "yellow",
                ),
            ),
            Text(),
        ]
        for gate in gates:
            parts += [*gate_block(gate), Text()]
        self.can_approve = bool(pair) and bool(gates) and all(g.passed for g in gates) and not status.active
        key = self.dream_app.key_for("promotion.approve")
        parts.append(
            Text(
                f"Every gate passes: {key} approves auto-write for {pair}."
                if self.can_approve
                else "Approval is offered once every gate passes. Untrusted, secret-flagged and duplicate "
                "proposals always wait for a person.",
                style="italic",
            )
        )
        self.query_one("#promotion", Static).update(Group(*parts))
        self.refresh_bindings()

    can_approve = False

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """``A`` approves only when approval is possible (every gate passes, auto-write off); until then
        it is shown dimmed, and the help says it is not available now."""
        if action == "approve":  # None: shown (dimmed in the footer, in the help), does nothing
            return True if self.can_approve else None
        return True

    def action_approve(self) -> None:
        if not self.can_approve:
            return

        def done(yes: bool | None) -> None:
            if yes:
                self._approve()

        self.app.push_screen(ConfirmModal("Approve auto-write for this extractor/model?"), done)

    @work(thread=True, exit_on_error=False, group="promotion", name="approve auto-write")
    def _approve(self) -> None:
        """Approve off the UI thread (the gates are computed again); the result arrives as a message."""
        try:
            promo = promotion.approve(self.workspace)
        except Exception as exc:  # noqa: BLE001 - shown as a notification
            self.post_message(PromotionDecided(str(exc) or type(exc).__name__, failed=True, approved=True))
            return
        self.post_message(PromotionDecided(f"Auto-write approved for {promo.pair}", approved=True))

    def action_revoke(self) -> None:
        self._revoke()

    @work(thread=True, exit_on_error=False, group="promotion", name="revoke auto-write")
    def _revoke(self) -> None:
        try:
            promotion.revoke(self.workspace)
        except Exception as exc:  # noqa: BLE001 - shown as a notification
            self.post_message(PromotionDecided(str(exc) or type(exc).__name__, failed=True))
            return
        self.post_message(PromotionDecided("Auto-write revoked"))

    def on_promotion_decided(self, message: PromotionDecided) -> None:
        """Say what approving or revoking did; the page and the header are read again."""
        message.stop()
        timeout = 10 if message.failed and message.approved else None
        self.notify(
            literal(message.summary, 400, one_line=True),
            severity="error" if message.failed else "information",
            timeout=timeout,
        )
        self.reload()
        self.dream_app.refresh_status()
