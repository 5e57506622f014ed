"""Promotion: the three gates auto-write must pass, their evidence, and the approve action."""

from __future__ import annotations

import json
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

from dreamtui.core.dream.promotion import Gate
from dreamtui.services.workspace import PromotionView
from dreamtui.tui.screens.base import BaseScreen
from dreamtui.tui.screens.modals import ConfirmModal
from dreamtui.tui.widgets.literal import literal


def evidence_line(evidence: dict[str, Any]) -> str:
    """A gate's evidence in one short line: numbers and flags as they are, lists by their length."""
    bits = []
    for key, value in evidence.items():
        name = key.replace("_", " ")
        if isinstance(value, list):
            bits.append(
                f"{name}: " + ("; ".join(str(v) for v in value[:3]) if key == "failures" else str(len(value)))
            )
        elif isinstance(value, dict):
            bits.append(
                f"{name}: " + ("ok" if value.get("ok", True) else json.dumps(value, default=str)[:120])
            )
        else:
            bits.append(f"{name}: {value}")
    return " · ".join(bits)


def evidence_lines(evidence: dict[str, Any]) -> list[str]:
    """A gate's evidence as checklist lines (``key: value``), what is missing left out (shown apart)."""
    return [
        part
        for part in evidence_line({k: v for k, v in evidence.items() if k != "failures"}).split(" · ")
        if part
    ]


def gate_block(gate: Gate) -> list[Text]:
    """One gate as a checklist item: ✔ or ✘, its title and summary, its evidence, what is still missing."""
    mark, style = ("✔", "bold green") if gate.passed else ("✘", "bold red")
    out = [
        Text.assemble(
            (f" {mark} ", style), (gate.title, "bold"), "  ", literal(gate.summary, 400, one_line=True)
        )
    ]
    for line in evidence_lines(gate.evidence):
        out.append(Text.assemble(("     · ", "dim"), (literal(line, 300, one_line=True), "dim")))
    missing = gate.evidence.get("failures") or ([] if gate.passed else [gate.summary])
    for item in missing[:5]:
        out.append(Text.assemble(("     missing: ", "bold yellow"), literal(str(item), 300, one_line=True)))
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
    BINDINGS = [
        Binding("A", "approve", "Approve auto-write", id="promotion.approve"),
        Binding("R", "revoke", "Revoke", id="promotion.revoke"),
    ]

    def body(self) -> ComposeResult:
        with VerticalScroll():
            yield Static("", id="promotion", classes="pane")

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
        parts += [
            state,
            Text(),
            Text.assemble(("Candidate pair: ", "dim"), (str(pair or "none yet"), "bold")),
            Text(),
            Text(f"Gates: {sum(g.passed for g in gates)} of {len(gates)} pass", style="bold"),
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
        """``A`` is offered only when approval is possible (every gate passes, auto-write off)."""
        if action == "approve":
            return self.can_approve
        return True

    def action_approve(self) -> None:
        def done(yes: bool | None) -> None:
            if yes:
                self._approve()

        self.app.push_screen(ConfirmModal("Approve auto-write for this extractor/model?"), done)

    @work(thread=True, exit_on_error=False, group="promotion", name="approve auto-write")
    def _approve(self) -> None:
        """Approve off the UI thread (the gates are computed again); the result arrives as a message."""
        from dreamtui.core.dream import promotion

        try:
            promo = promotion.approve(self.workspace.config, self.workspace.ledger)
        except Exception as exc:  # noqa: BLE001 - shown as a notification
            self.post_message(PromotionDecided(str(exc) or type(exc).__name__, failed=True, approved=True))
            return
        self.post_message(PromotionDecided(f"Auto-write approved for {promo.pair}", approved=True))

    def action_revoke(self) -> None:
        self._revoke()

    @work(thread=True, exit_on_error=False, group="promotion", name="revoke auto-write")
    def _revoke(self) -> None:
        from dreamtui.core.dream import promotion

        try:
            promotion.revoke(self.workspace.config, self.workspace.ledger)
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
