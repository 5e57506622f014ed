"""One undo for every decision (issue 24): the most recent decision of any kind is taken back first.

Proposal decisions (accept, reject, skip, edit-and-accept) live in the ledger's ``decisions`` table and
are undone by :func:`dreamtui.core.memory.decisions.undo_last`; decisions on outside changes (accept,
``m`` mine, reject), on briefings (accept, reject) and on consolidations (accept, reject) are journaled in ``decision_journal``, each placed
after the proposal decisions made before it. :func:`undo_last` compares the two and undoes the newer,
so ``u`` after accepting an outside change takes back that accept, never an older proposal rejection.
"""

from __future__ import annotations

from dreamtui.core.config import Config
from dreamtui.core.ledger import Ledger, journal
from dreamtui.core.ledger import decisions as decision_rows
from dreamtui.core.memory import briefing, consolidate, decisions, outside
from dreamtui.core.memory.agents import linking
from dreamtui.core.memory.decisions import DecisionError, UndoResult, memory_lock

WHAT = {
    ("outside", "accept"): "accept of the outside change",
    ("outside", "mine"): "commit as mine of",
    ("outside", "reject"): "reject of the outside change",
    ("outside", "restore"): "restore of the agent's memory",
    ("briefing", "accept"): "accept of briefing",
    ("briefing", "reject"): "reject of briefing",
    ("consolidation", "accept"): "accept of the consolidation",
    ("consolidation", "reject"): "reject of the consolidation",
}


def latest(ledger: Ledger) -> journal.Entry | None:
    """The journaled decision to undo next, when it is newer than every standing proposal decision."""
    entry = journal.last_undoable(ledger)
    if entry is None:
        return None
    row = decision_rows.last_undoable(ledger)
    return entry if row is None or row.id <= entry.after_decision else None


def undo_last(config: Config, ledger: Ledger) -> UndoResult:
    """Undo the most recent decision of any kind not yet undone (``nothing to undo`` when none)."""
    with memory_lock(config):
        entry = latest(ledger)
        if entry is None:
            return decisions.undo_last(config, ledger)
        notices: list[str] = []
        if entry.kind == "outside":
            sha = outside.undo_decision(config, ledger, entry)
        elif entry.kind == "briefing":
            sha = briefing.undo_decision(config, ledger, entry)
        elif entry.kind == "consolidation":
            result = consolidate.undo(config, ledger, entry.refs[0])  # marks the entry undone
            sha = result.commit_sha
            notices = result.notices
        else:  # pragma: no cover - the schema allows no other kind
            raise DecisionError(f"cannot undo a {entry.kind} decision")
        if entry.kind == "outside":
            notices = linking.refresh(config)  # an outside change accepted and now undone: memory moved
        what = WHAT.get((entry.kind, entry.action), f"{entry.action} of")
        refs = ", ".join(f"#{r}" if entry.kind == "briefing" else r for r in entry.refs)
        return UndoResult(refs, f"{what} {refs}".strip(), sha, notices, kind=entry.kind)
