"""Promotion: the three gates auto-write must pass, their evidence, and the approve action."""

from __future__ import annotations

import json

from rich.console import Group
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import Static

from dreamtui.tui.screens.base import BaseScreen
from dreamtui.tui.screens.modals import ConfirmModal
from dreamtui.tui.widgets.literal import literal


def evidence_line(evidence: dict) -> str:
    """A gate's evidence in one short line: numbers and flags as they are, lists by their length."""
    bits = []
    for key, value in evidence.items():
        name = key.replace("_", " ")
        if isinstance(value, list):
            bits.append(f"{name}: " + ("; ".join(str(v) for v in value[:3]) if key == "failures" else str(len(value))))
        elif isinstance(value, dict):
            bits.append(f"{name}: " + ("ok" if value.get("ok", True) else json.dumps(value, default=str)[:120]))
        else:
            bits.append(f"{name}: {value}")
    return " · ".join(bits)


class PromotionScreen(BaseScreen):
    """Gates for the most-decided extractor/model pair; A approves (after a confirmation), R revokes."""

    TITLE_TEXT = "promotion"
    BINDINGS = [Binding("A", "approve", "Approve auto-write", id="promotion.approve"),
                Binding("R", "revoke", "Revoke", id="promotion.revoke")]

    def body(self) -> ComposeResult:
        with VerticalScroll():
            yield Static("", id="promotion", classes="pane")

    def reload(self) -> None:
        from dreamtui.core.dream import promotion

        app = self.dream_app
        pair = promotion.choose_pair(app.ledger)
        gates = promotion.compute_gates(app.config, app.ledger, pair)
        status = promotion.promotion_status(app.config, app.ledger)
        parts: list[Text] = []
        state = Text()
        if status.active and status.promotion:
            state.append(f" AUTO-WRITE ON for {status.promotion.pair} ", "bold white on green")
        else:
            state.append(" AUTO-WRITE OFF ", "bold white on grey30")
        if not status.active and status.reason:
            state.append("  " + literal(status.reason, 300, one_line=True), "dim")
        parts += [state, Text(), Text.assemble(("Candidate pair: ", "dim"), (str(pair or "none yet"), "bold")),
                  Text()]
        for gate in gates:
            line = Text()
            line.append(" PASS " if gate.passed else " FAIL ",
                        "bold black on green" if gate.passed else "bold white on red")
            line.append(f" {gate.title}", "bold")
            line.append("  " + literal(gate.summary, 400, one_line=True))
            parts.append(line)
            parts.append(Text("       " + literal(evidence_line(gate.evidence), 600, one_line=True), style="dim"))
        parts += [Text(), Text("Auto-write is earned: every gate must pass, then a person approves it (A). "
                               "Untrusted, secret-flagged and duplicate proposals always wait for a person.",
                               style="italic")]
        self.query_one("#promotion", Static).update(Group(*parts))

    def action_approve(self) -> None:
        def done(yes: bool | None) -> None:
            if yes:
                self._approve()

        self.app.push_screen(ConfirmModal("Approve auto-write for this extractor/model?"), done)

    def _approve(self) -> None:
        from dreamtui.core.dream import promotion

        app = self.dream_app
        try:
            promo = promotion.approve(app.config, app.ledger)
        except Exception as exc:  # noqa: BLE001 - shown as a notification
            app.notify(literal(str(exc), 400, one_line=True), severity="error", timeout=10)
            return
        app.notify(f"Auto-write approved for {promo.pair}")
        self.reload()
        app.refresh_status()

    def action_revoke(self) -> None:
        from dreamtui.core.dream import promotion

        app = self.dream_app
        try:
            promotion.revoke(app.config, app.ledger)
            app.notify("Auto-write revoked")
        except Exception as exc:  # noqa: BLE001
            app.notify(literal(str(exc), 400, one_line=True), severity="error")
        self.reload()
        app.refresh_status()
