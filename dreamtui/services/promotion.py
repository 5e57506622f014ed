"""Auto-write promotion for the front ends: the gates with their evidence, approval, revocation, and the
after-the-fact review of what was auto-written.

Every function takes the :class:`Workspace` whose ledger records the promotion; the app's Promotion
screen reads :meth:`Workspace.promotion` (the pair most decided on).
"""

from __future__ import annotations

from dreamtui.core.dream import promotion as core_promotion
from dreamtui.core.dream.promotion import (
    GATE_EVIDENCE,
    GATE_SCHEMA,
    AutoWritten,
    Gate,
    PromotionError,
    PromotionStatus,
    failing,
)
from dreamtui.core.ledger.promotions import Pair, Promotion
from dreamtui.services.workspace import PromotionView, Workspace

__all__ = [
    "GATE_EVIDENCE",
    "GATE_SCHEMA",
    "AutoWritten",
    "Gate",
    "Pair",
    "Promotion",
    "PromotionError",
    "PromotionStatus",
    "PromotionView",
    "approve",
    "awaiting_review",
    "failing",
    "review",
    "revoke",
    "status",
    "view",
]


def status(ws: Workspace) -> PromotionStatus:
    """Whether auto-write is on, and why not when it is off."""
    return core_promotion.promotion_status(ws.config, ws.ledger)


def view(ws: Workspace, extractor: str | None = None, model: str | None = None) -> PromotionView:
    """The gates for the pair auto-write is on for (when it is and none is named), else for
    ``extractor``/``model`` (default: the pair with the most human decisions), and auto-write's state."""
    now = status(ws)
    if now.active and now.promotion and not (extractor or model):
        pair: Pair | None = now.promotion.pair
    else:
        pair = core_promotion.choose_pair(ws.ledger, extractor, model)
    return PromotionView(pair, core_promotion.compute_gates(ws.config, ws.ledger, pair), now)


def awaiting_review(ws: Workspace) -> list[AutoWritten]:
    """Auto-written memories no person has reviewed yet, newest first."""
    return core_promotion.auto_written(ws.ledger, unreviewed_only=True)


def approve(ws: Workspace, extractor: str | None = None, model: str | None = None) -> Promotion:
    """Approve auto-write for one pair when every gate holds (recorded and committed as
    ``promotion.md``); :class:`PromotionError` names the failing gates."""
    return core_promotion.approve(ws.config, ws.ledger, extractor, model)


def revoke(ws: Workspace, reason: str = "revoked by the person") -> Promotion:
    """End auto-write, or acknowledge a demotion so its banner stops."""
    return core_promotion.revoke(ws.config, ws.ledger, reason)


def review(ws: Workspace, cid: str, *, keep: bool, reason: str = "") -> PromotionStatus:
    """A person's after-the-fact review of an auto-written memory: keep it, or reject it (its commit is
    reverted); the status says whether auto-write is still on."""
    return core_promotion.review_auto(ws.config, ws.ledger, cid, keep=keep, reason=reason)
