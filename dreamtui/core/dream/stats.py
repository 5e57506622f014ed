"""Decision statistics: accept rate over human decisions only (undone decisions do not count)."""

from __future__ import annotations

from collections import Counter
from datetime import date
from typing import Any

from dreamtui.core.clock import parse_timestamp
from dreamtui.core.ingest.transcripts import agent_of
from dreamtui.core.ledger import Ledger, candidates, consolidations, decisions
from dreamtui.core.memory.outside import writer_stats


def _rate(accepted: int, rejected: int) -> float | None:
    total = accepted + rejected
    return round(accepted / total, 4) if total else None


def _bucket(counter: Counter[tuple[str, str]], key: str) -> dict[str, Any]:
    accepted, rejected = counter[(key, "accept")], counter[(key, "reject")]
    return {
        "accepted": accepted,
        "rejected": rejected,
        "decisions": accepted + rejected,
        "accept_rate": _rate(accepted, rejected),
    }


UNKNOWN_AGENT = "unknown agent"
"""The agent of a decision whose proposal the ledger no longer holds (its transcript is not known)."""


class AgentOf:
    """The agent of a transcript, looked up once per transcript (``Claude Code``, ``Codex CLI``)."""

    def __init__(self) -> None:
        self._seen: dict[str, str] = {}

    def __call__(self, transcript: str | None) -> str:
        if not transcript:
            return UNKNOWN_AGENT
        agent = self._seen.get(transcript)
        if agent is None:
            agent = self._seen[transcript] = agent_of(transcript)
        return agent


def per_agent(rows: list[decisions.HumanDecision]) -> dict[str, Any]:
    """Per agent whose session a proposal came from: the person's accepts and rejects, the accept
    rate, and the same per extractor/model (``by_extractor``); the agent with the most decisions first."""
    agent_of_row = AgentOf()
    by_agent: Counter[tuple[str, str]] = Counter()
    by_pair: dict[str, Counter[tuple[str, str]]] = {}
    for row in rows:
        agent = agent_of_row(row.transcript)
        pair = f"{row.extractor}/{row.model}" if row.model else str(row.extractor)
        by_agent[(agent, row.action)] += 1
        by_pair.setdefault(agent, Counter())[(pair, row.action)] += 1
    agents = sorted(
        {a for a, _ in by_agent}, key=lambda a: (-(by_agent[(a, "accept")] + by_agent[(a, "reject")]), a)
    )
    return {
        agent: {
            **_bucket(by_agent, agent),
            "by_extractor": {k: _bucket(by_pair[agent], k) for k in sorted({k for k, _ in by_pair[agent]})},
        }
        for agent in agents
    }


def _week(decided_at: str) -> str:
    try:
        year, week, _ = parse_timestamp(decided_at).isocalendar()
    except ValueError:
        return "unknown"
    return f"{year}-W{week:02d}"


def compute_stats(ledger: Ledger) -> dict[str, Any]:
    """Accept rate over human decisions (accepts and rejects a person made, not undone): overall,
    per extractor/model, per agent (and per extractor/model within it), per memory type, per ISO week; rejection reasons by category; and counts of
    candidates by status, skips and auto-written accepts."""
    rows = decisions.person_decisions(ledger)
    by_pair: Counter[tuple[str, str]] = Counter()
    by_type: Counter[tuple[str, str]] = Counter()
    by_week: Counter[tuple[str, str]] = Counter()
    reasons: Counter[str] = Counter()
    days: set[date] = set()
    for row in rows:
        action = row.action
        pair = f"{row.extractor}/{row.model}" if row.model else str(row.extractor)
        by_pair[(pair, action)] += 1
        by_type[(str(row.type), action)] += 1
        by_week[(_week(row.decided_at), action)] += 1
        if action == "reject":
            reasons[row.category or "other"] += 1
        try:
            days.add(parse_timestamp(row.decided_at).date())
        except ValueError:
            pass
    accepted = sum(1 for r in rows if r.action == "accept")
    rejected = len(rows) - accepted
    statuses = candidates.status_counts(ledger)
    standing = decisions.standing_counts(ledger)
    return {
        "accepted": accepted,
        "rejected": rejected,
        "decisions": accepted + rejected,
        "accept_rate": _rate(accepted, rejected),
        "skipped": standing.get(("skip", "person"), 0),
        "auto_accepted": standing.get(("accept", "auto"), 0),
        "undone": decisions.undone_count(ledger),
        "first_decision": rows[0].decided_at if rows else None,
        "last_decision": rows[-1].decided_at if rows else None,
        "decision_days": len(days),
        "by_extractor": {k: _bucket(by_pair, k) for k in sorted({k for k, _ in by_pair})},
        "by_agent": per_agent(rows),
        "by_type": {k: _bucket(by_type, k) for k in sorted({k for k, _ in by_type})},
        "by_week": {k: _bucket(by_week, k) for k in sorted({k for k, _ in by_week})},
        "rejection_reasons": dict(reasons.most_common()),
        "candidates": {s: statuses.get(s, 0) for s in ("pending", "accepted", "rejected", "dropped")},
        "by_writer": _by_writer(ledger, accepted, rejected),
        "by_kind": _by_kind(ledger, accepted, rejected, statuses.get("pending", 0)),
    }


def _by_kind(ledger: Ledger, accepted: int, rejected: int, pending: int) -> dict[str, Any]:
    """Per kind of proposal (issue 26): ``add`` (a new lesson) and the consolidations ``update``,
    ``retire``, ``merge``: a person's accepts and rejects, the accept rate, and how many wait."""
    out: dict[str, Any] = {
        "add": {
            "accepted": accepted,
            "rejected": rejected,
            "decisions": accepted + rejected,
            "accept_rate": _rate(accepted, rejected),
            "pending": pending,
        },
    }
    for kind, n in consolidations.counts(ledger).items():
        out[kind] = {
            "accepted": n["accepted"],
            "rejected": n["rejected"],
            "decisions": n["accepted"] + n["rejected"],
            "accept_rate": _rate(n["accepted"], n["rejected"]),
            "pending": n["pending"],
            "undone": n["undone"],
            "auto_accepted": n["auto_accepted"],
        }
    return out


def _by_writer(ledger: Ledger, accepted: int, rejected: int) -> dict[str, Any]:
    """Per writer of memory (dreamtui extractor, Claude Code auto memory, auto dream, person): the
    person's accepts and rejects, so they see which writer earns trust."""
    out: dict[str, Any] = {}
    if accepted + rejected:
        out["dreamtui extractor"] = {
            "accepted": accepted,
            "rejected": rejected,
            "decisions": accepted + rejected,
            "accept_rate": _rate(accepted, rejected),
        }
    out.update(writer_stats(ledger))
    return out


def format_stats(stats: dict[str, Any]) -> str:
    """The stats as a short plain-text report."""

    def pct(rate: float | None) -> str:
        return "—" if rate is None else f"{100 * rate:.0f}%"

    lines = [
        f"human decisions: {stats['decisions']} ({stats['accepted']} accepted, {stats['rejected']} rejected), "
        f"accept rate {pct(stats['accept_rate'])}",
        "candidates: " + ", ".join(f"{n} {s}" for s, n in stats["candidates"].items()),
        f"skipped: {stats['skipped']}, undone: {stats['undone']}, auto-written: {stats['auto_accepted']}",
    ]
    if stats.get("by_kind"):
        lines.append("by kind:")
        for name, b in stats["by_kind"].items():
            lines.append(
                f"  {name}: {b['accepted']}/{b['decisions']} accepted ({pct(b['accept_rate'])}), {b['pending']} waiting"
            )
    for title, key in (
        ("by writer", "by_writer"),
        ("by extractor/model", "by_extractor"),
        ("by agent", "by_agent"),
        ("by type", "by_type"),
        ("by week", "by_week"),
    ):
        if stats[key]:
            lines.append(f"{title}:")
            for name, b in stats[key].items():
                lines.append(f"  {name}: {b['accepted']}/{b['decisions']} accepted ({pct(b['accept_rate'])})")
                for pair, c in (b.get("by_extractor") or {}).items():  # by agent: per extractor within it
                    lines.append(
                        f"    {pair}: {c['accepted']}/{c['decisions']} accepted ({pct(c['accept_rate'])})"
                    )
    if stats["rejection_reasons"]:
        lines.append(
            "rejection reasons: " + ", ".join(f"{k} {v}" for k, v in stats["rejection_reasons"].items())
        )
    return "\n".join(lines)
