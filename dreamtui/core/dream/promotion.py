"""Auto-write promotion: gates computed from the memory repo and the ledger, approval, revocation,
demotion, and the auto-write itself.

Auto-write is earned, not assumed. It may start only when three gates hold (one schema, a stable
ledger, evidence of human decisions) and the person approves it for one extractor+model pair. It
stops by itself (demotion) when a gate stops holding or the after-the-fact reviews of auto-written
memories fall below the accept rate.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

from dreamtui.core import clock, secrets
from dreamtui.core.config import Config
from dreamtui.core.dream.stats import per_agent
from dreamtui.core.errors import DreamError
from dreamtui.core.ledger import Ledger, candidates, cycles, extractions, offsets, promotions
from dreamtui.core.ledger import decisions as decision_rows
from dreamtui.core.ledger.extractions import ExtractedRange
from dreamtui.core.ledger.promotions import Pair, Promotion
from dreamtui.core.memory import decisions, gitops, normalize
from dreamtui.core.memory import layout as memory
from dreamtui.core.memory.decisions import memory_lock, normalize_category
from dreamtui.core.models import Candidate, Jsonable

MIN_DAYS = 30
"""Days between the first and the latest human decision."""
MIN_DECISIONS = 50
"""Human decisions (accepts + rejects, not undone) for the promoted extractor+model."""
MIN_RATE = 0.80
"""Accept rate over those decisions, and over after-the-fact reviews of auto-written memories."""
MIN_REVIEWS = 5
"""After-the-fact reviews needed before their accept rate can demote (one early reject is noise)."""
CYCLES_CHECKED = 7
"""The last this many dream cycles must all have completed (and this many must exist)."""

GATE_SCHEMA = "one_schema"
GATE_LEDGER = "stable_ledger"
GATE_EVIDENCE = "evidence"
GATE_TITLES = {GATE_SCHEMA: "one schema", GATE_LEDGER: "stable ledger", GATE_EVIDENCE: "evidence"}

PROMOTION_FILE = normalize.PROMOTION_FILE
AUTO_TRAILER = ("Dreamtui-Auto", "yes")
TRUSTED_PROVENANCE = ("person", "assistant")


class PromotionError(DreamError):
    """Promotion cannot be approved, revoked or used as asked (a gate fails, nothing to revoke...)."""


# -- data ------------------------------------------------------------------------------------------


@dataclass(slots=True)
class Gate(Jsonable):
    """One promotion gate: whether it holds, a one-line summary, and the evidence behind it."""

    name: str
    passed: bool
    summary: str
    evidence: dict[str, Any] = field(default_factory=dict)

    @property
    def title(self) -> str:
        """The human name of the gate (``one schema``, ``stable ledger``, ``evidence``)."""
        return GATE_TITLES.get(self.name, self.name)


@dataclass(slots=True)
class PromotionStatus(Jsonable):
    """Whether auto-write is on, and why not when it is off."""

    active: bool
    promotion: Promotion | None = None
    reason: str | None = None

    JSON_KEYS = ("active", "reason", "promotion")  # ``dreamtui promote --json``


@dataclass(slots=True)
class AutoWrite(Jsonable):
    """What auto-write did with one candidate: ``written`` (with its commit) or ``waiting`` (why)."""

    candidate_id: str
    written: bool
    reason: str | None = None
    commit_sha: str | None = None
    memory_path: str | None = None


@dataclass(slots=True)
class AutoWritten(Jsonable):
    """An auto-written memory and its after-the-fact review (``None`` while unreviewed)."""

    candidate_id: str
    claim: str
    memory_path: str | None
    commit_sha: str | None
    decided_at: str
    extractor: str | None
    model: str | None
    review: str | None = None  # "kept" | "rejected" | "undone" (by `dreamtui undo`) | None: not yet
    reviewed_at: str | None = None


# -- human decisions -------------------------------------------------------------------------------


def human_decisions(ledger: Ledger, pair: Pair | None = None) -> list[decision_rows.HumanDecision]:
    """Human accepts and rejects that still stand (not undone), oldest first, optionally for one pair.

    Auto-written accepts never count; a person's after-the-fact review of one does.
    """
    return decision_rows.human_decisions(ledger, None if pair is None else (pair.extractor, pair.model))


def decision_pairs(ledger: Ledger) -> list[tuple[Pair, int]]:
    """Every extractor+model pair with human decisions, the most decided first."""
    return [(Pair(extractor, model), n) for extractor, model, n in decision_rows.decision_pairs(ledger)]


def choose_pair(ledger: Ledger, extractor: str | None = None, model: str | None = None) -> Pair | None:
    """The pair to promote: the given one, else the one with the most human decisions.

    With only ``extractor`` (or only ``model``) given, the other half is the most decided match.
    ``None`` when nothing was given and no human decision exists.
    """
    if extractor and model:
        return Pair(extractor, model)
    for pair, _n in decision_pairs(ledger):
        if (extractor is None or pair.extractor == extractor) and (model is None or pair.model == model):
            return pair
    if extractor:
        return Pair(extractor, model)
    if model:
        raise PromotionError(f"no human decisions for model {model!r}: name the extractor with --extractor")
    return None


def _rate(accepted: int, total: int) -> float | None:
    return round(accepted / total, 4) if total else None


def _pct(part: int, whole: int = 1000) -> str:
    """``part/whole`` as a percentage rounded *down* to 0.1 (so a rate below 80% never shows as 80%)."""
    tenths = part * 1000 // whole
    return f"{tenths // 10}%" if tenths % 10 == 0 else f"{tenths // 10}.{tenths % 10}%"


MIN_RATE_TEXT = _pct(int(MIN_RATE * 1000))


def evidence_gate(ledger: Ledger, pair: Pair | None) -> Gate:
    """*Evidence*: ≥30 days between the first and latest human decision, ≥50 of them, accept rate ≥80%."""
    base = {"min_days": MIN_DAYS, "min_decisions": MIN_DECISIONS, "min_rate": MIN_RATE}
    if pair is None:
        return Gate(
            GATE_EVIDENCE, False, "no human decisions yet", {**base, "failures": ["no human decisions"]}
        )
    rows = human_decisions(ledger, pair)
    accepted = sum(1 for r in rows if r.action == "accept")
    total = len(rows)
    rate = _rate(accepted, total)
    first = rows[0].decided_at if rows else None
    latest = rows[-1].decided_at if rows else None
    span = (clock.parse_timestamp(str(latest)) - clock.parse_timestamp(str(first))) if rows else timedelta(0)
    days = round(span.total_seconds() / 86400, 1)
    failures = []
    if span < timedelta(days=MIN_DAYS):
        failures.append(f"{days:g} days of decisions, need {MIN_DAYS}")
    if total < MIN_DECISIONS:
        failures.append(f"{total} human decisions, need {MIN_DECISIONS}")
    if total == 0 or accepted / total < MIN_RATE:
        shown = "no" if rate is None else _pct(accepted, total)
        failures.append(f"accept rate {shown}, need {MIN_RATE_TEXT}")
    evidence = {
        **base,
        "extractor": pair.extractor,
        "model": pair.model,
        "decisions": total,
        "accepted": accepted,
        "rejected": total - accepted,
        "accept_rate": rate,
        "first": first,
        "latest": latest,
        "days": days,
        "failures": failures,
        # beside the gate, never part of it: the same decisions per agent whose session they came from
        "by_agent": {
            agent: {k: b[k] for k in ("decisions", "accepted", "rejected", "accept_rate")}
            for agent, b in per_agent(rows).items()
        },
    }
    rate_text = "n/a" if rate is None else _pct(accepted, total)
    summary = f"{pair}: {total} human decisions over {days:g} days, accept rate {rate_text}"
    if failures:
        summary += " — " + "; ".join(failures)
    return Gate(GATE_EVIDENCE, not failures, summary, evidence)


# -- stable ledger ---------------------------------------------------------------------------------


def overlapping_extractions(ledger: Ledger) -> list[dict[str, Any]]:
    """Pairs of successful extractions of the same file whose byte ranges overlap (content read twice).

    Failed extractions (``error`` set) produced nothing, so a retry of their range is not a repeat.
    """
    found: list[dict[str, Any]] = []
    prev: ExtractedRange | None = None
    for row in extractions.successful(ledger):
        if prev is not None and prev.path == row.path and row.start_offset < prev.end_offset:
            found.append(
                {
                    "path": row.path,
                    "first": prev.id,
                    "second": row.id,
                    "first_range": [prev.start_offset, prev.end_offset],
                    "second_range": [row.start_offset, row.end_offset],
                }
            )
        if prev is None or prev.path != row.path or row.end_offset > prev.end_offset:
            prev = row
    return found


def last_cycles(ledger: Ledger, n: int = CYCLES_CHECKED) -> list[dict[str, Any]]:
    """The last ``n`` dream cycles that are not running right now, newest first."""
    return [
        {
            "id": r.id,
            "chat_id": r.chat_id,
            "date": r.date,
            "status": r.status,
            "started_at": r.started_at,
            "error_message": r.error_message,
        }
        for r in cycles.finished(ledger, n)
    ]


RECONCILE_FAILURE = "reconcile finds ledger and git out of agreement"


def _reconcile(config: Config, ledger: Ledger) -> tuple[bool, dict[str, Any]]:
    """Run ``decisions.reconcile``: (ledger and git agreed, what it found and repaired).

    They agree when reconcile had nothing to repair and nothing to warn about.
    """
    try:
        report = decisions.reconcile(config, ledger)
    except DreamError as exc:
        return False, {"error": str(exc)}
    return report.ok and not report.notices, report.to_json()


def stable_ledger_gate(config: Config, ledger: Ledger) -> Gate:
    """*A stable ledger*: integrity ok, reconcile agrees with git, no content extracted twice,
    and the last 7 cycles completed (at least 7 must exist)."""
    failures: list[str] = []
    integrity = ledger.integrity_ok()
    if not integrity:
        failures.append("PRAGMA integrity_check is not ok")
    agrees, recon = _reconcile(config, ledger)
    if not agrees:
        failures.append(RECONCILE_FAILURE)
    found = overlapping_extractions(ledger)
    reset_paths = offsets.reset_paths(ledger)
    overlaps = [o for o in found if o["path"] not in reset_paths]
    rereads = [o for o in found if o["path"] in reset_paths]
    if overlaps:
        failures.append(f"{len(overlaps)} overlapping extraction(s): session content extracted twice")
    cycles = last_cycles(ledger)
    bad = [c for c in cycles if c["status"] != "completed"]
    if bad:
        failures.append(
            f"{len(bad)} of the last {len(cycles)} cycles failed "
            f"(latest: {bad[0]['chat_id']} {bad[0]['date']})"
        )
    elif len(cycles) < CYCLES_CHECKED:
        failures.append(f"only {len(cycles)} finished cycle(s), need {CYCLES_CHECKED} completed")
    evidence = {
        "integrity_ok": integrity,
        "reconcile": recon,
        "reconcile_agrees": agrees,
        "overlapping_extractions": overlaps[:20],
        "overlap_count": len(overlaps),
        "rereads_after_reset": rereads[:20],
        "last_cycles": cycles,
        "failures": failures,
    }
    if failures:
        summary = "; ".join(failures)
    else:
        summary = (
            f"integrity ok, ledger and git agree, no repeated extraction, last {len(cycles)} cycles completed"
        )
    return Gate(GATE_LEDGER, not failures, summary, evidence)


# -- one schema ------------------------------------------------------------------------------------


def schema_offenders(config: Config) -> tuple[int, list[dict[str, Any]]]:
    """(topic files checked, offenders as ``{"path", "problems"}``) for the memory repo."""
    files = normalize.topic_files(config)
    offenders = []
    for path in files:
        problems = normalize.problems_of(path)
        if problems:
            offenders.append({"path": path.relative_to(config.memory).as_posix(), "problems": problems})
    return len(files), offenders


def schema_gate(config: Config) -> Gate:
    """*One schema*: every topic file's frontmatter follows the one schema; the offenders are listed."""
    try:
        count, offenders = schema_offenders(config)
    except DreamError as exc:
        return Gate(GATE_SCHEMA, False, str(exc), {"failures": [str(exc)]})
    evidence = {"files": count, "offenders": offenders}
    if offenders:
        names = ", ".join(o["path"] for o in offenders[:5]) + (" …" if len(offenders) > 5 else "")
        summary = (
            f"{len(offenders)} of {count} topic files break the schema: {names} (run `dreamtui normalize`)"
        )
    elif count == 0:
        summary = "no topic files yet"
    else:
        summary = f"all {count} topic files follow the schema"
    return Gate(GATE_SCHEMA, not offenders, summary, evidence)


# -- all gates -------------------------------------------------------------------------------------


def compute_gates(config: Config, ledger: Ledger, pair: Pair | None) -> list[Gate]:
    """The three gates for ``pair``, each with its evidence."""
    return [schema_gate(config), stable_ledger_gate(config, ledger), evidence_gate(ledger, pair)]


def failing(gates: Iterable[Gate]) -> list[Gate]:
    """The gates that do not hold."""
    return [g for g in gates if not g.passed]


# -- promotions table ------------------------------------------------------------------------------


def latest_promotion(ledger: Ledger) -> Promotion | None:
    """The most recent promotion row, whatever its status."""
    return promotions.latest(ledger)


def active_promotion(ledger: Ledger) -> Promotion | None:
    """The approved promotion that has not ended, if any (cheap: reads the ledger only)."""
    return promotions.active(ledger)


def _end(ledger: Ledger, promo: Promotion, status: str, reason: str) -> None:
    promotions.end(ledger, promo.id, status, reason, clock.now_iso())


# -- after-the-fact reviews ------------------------------------------------------------------------

_REVIEW_NAMES = {"accept": "kept", "reject": "rejected"}


def auto_written(
    ledger: Ledger, *, since: str | None = None, unreviewed_only: bool = False
) -> list[AutoWritten]:
    """Auto-written memories, newest first, each with its after-the-fact review (if any)."""
    return [
        AutoWritten(
            candidate_id=r.candidate_id,
            claim=r.claim,
            memory_path=r.memory_path,
            commit_sha=r.commit_sha,
            decided_at=r.decided_at,
            extractor=r.extractor,
            model=r.model,
            reviewed_at=r.reviewed_at,
            review=_REVIEW_NAMES.get(r.review or "") or ("undone" if r.undone else None),
        )
        for r in decision_rows.auto_decisions(ledger, since=since, unreviewed_only=unreviewed_only)
    ]


def review_counts(ledger: Ledger, promo: Promotion) -> tuple[int, int]:
    """(kept, rejected) after-the-fact reviews of memories auto-written under ``promo``."""
    items = auto_written(ledger, since=promo.approved_at)
    items = [i for i in items if i.extractor == promo.extractor and i.model == promo.model]
    kept = sum(1 for i in items if i.review == "kept")
    rejected = sum(1 for i in items if i.review == "rejected")
    return kept, rejected


def _auto_decision(ledger: Ledger, cid: str) -> decision_rows.AutoDecision:
    row = decision_rows.auto_decision(ledger, cid)
    if row is None:
        raise PromotionError(f"candidate {cid} was not auto-written: nothing to review after the fact")
    return row


def review_auto(
    config: Config, ledger: Ledger, cid: str, keep: bool, reason: str = "", category: str = "wrong"
) -> PromotionStatus:
    """A person's after-the-fact review of an auto-written memory.

    Keeping it records a human accept. Rejecting it reverts its commit (the memory file and its index
    line go, in a commit with the ``Dreamtui-Undo`` trailer), marks the candidate rejected and records
    a human reject, which counts against the accept rate. Either way the promotion is re-checked
    (a rejection can demote it); the returned status says whether auto-write is still on.
    """
    category = normalize_category(category)
    row = _auto_decision(ledger, cid)
    if row.review is not None:
        done = "kept" if row.review == "accept" else "rejected"
        raise PromotionError(f"auto-written memory {cid} was already reviewed ({done})")
    cand = ledger.get_candidate(cid)
    if cand is None or cand.status != "accepted" or row.undone:
        raise PromotionError(f"auto-written memory {cid} is no longer in memory (undone); nothing to review")
    now = clock.now_iso()
    if keep:
        _record_review(
            ledger, cand, "accept", reason or "kept after auto-write", row.commit_sha, row.memory_path, now
        )
    else:
        revert_sha = _revert_accept(config, ledger, cid)
        with ledger.write():
            _record_review(
                ledger,
                cand,
                "reject",
                reason or "rejected after auto-write",
                revert_sha,
                row.memory_path,
                clock.now_iso(),
                category=category,
            )
            candidates.set_status(ledger, cid, "rejected", now)
    return promotion_status(config, ledger)


def _revert_accept(config: Config, ledger: Ledger, cid: str) -> str:
    """Revert the live accept of ``cid`` the way ``dreamtui undo`` does; the revert commit's sha."""
    with decisions.memory_lock(config):
        repo = gitops.open_repo(config.memory, create=False)
        gitops.ensure_writable(repo)
        decisions._reconcile_locked(ledger, repo)
        live = decisions._live_accept(ledger, cid)
        cand = ledger.get_candidate(cid)
        if live is None or cand is None or cand.status != "accepted":
            raise PromotionError(f"auto-written memory {cid} is no longer accepted; nothing to revert")
        return decisions._write_undo(ledger, repo, cand, live)


def _record_review(
    ledger: Ledger,
    cand: Candidate,
    action: str,
    reason: str,
    sha: str | None,
    memory_path: str | None,
    now: str,
    category: str | None = None,
) -> None:
    decision_rows.record(
        ledger,
        cand,
        action,
        "person",
        now,
        category=category,
        reason=reason,
        commit_sha=sha,
        memory_path=memory_path,
    )


# -- status, demotion, banner ----------------------------------------------------------------------


def promotion_status(config: Config, ledger: Ledger) -> PromotionStatus:
    """Whether auto-write is on. An approved promotion is demoted here, by itself, when the
    after-the-fact reviews fall below the accept rate or any gate stops holding."""
    promo = active_promotion(ledger)
    if promo is None:
        last = latest_promotion(ledger)
        if last is None:
            return PromotionStatus(False, None, "auto-write has not been approved")
        day = (last.ended_at or "")[:10]
        if last.status == "demoted":
            return PromotionStatus(False, last, f"auto-write stopped on {day}: {last.end_reason}")
        return PromotionStatus(
            False,
            last,
            f"auto-write was revoked on {day}" + (f": {last.end_reason}" if last.end_reason else ""),
        )
    reason = demotion_reason(config, ledger, promo)
    if reason:
        demote(config, ledger, promo, reason)
        promo = latest_promotion(ledger)
        return PromotionStatus(False, promo, f"auto-write stopped on {clock.today().isoformat()}: {reason}")
    return PromotionStatus(True, promo, None)


def demotion_reason(config: Config, ledger: Ledger, promo: Promotion) -> str | None:
    """Why ``promo`` must end now, or ``None`` while it still holds."""
    kept, rejected = review_counts(ledger, promo)
    total = kept + rejected
    if total >= MIN_REVIEWS and kept / total < MIN_RATE:
        return (
            f"after-the-fact reviews keep {kept} of {total} auto-written memories "
            f"({_pct(kept, total)}), below {MIN_RATE_TEXT}"
        )
    broken = failing(compute_gates(config, ledger, promo.pair))
    if broken and all(
        g.name == GATE_LEDGER and g.evidence["failures"] == [RECONCILE_FAILURE] for g in broken
    ):
        broken = failing(compute_gates(config, ledger, promo.pair))  # reconcile repaired it: judge again
    if broken:
        return "gate " + "; gate ".join(f"{g.title} stopped holding: {g.summary}" for g in broken)
    return None


def demote(config: Config, ledger: Ledger, promo: Promotion, reason: str) -> None:
    """End ``promo`` as ``demoted`` with ``reason``, and record it in the memory repo's promotion file."""
    _end(ledger, promo, "demoted", reason)
    try:
        _commit_promotion_file(config, ledger, f"dreamtui: auto-write demoted for {promo.pair}", "demoted")
    except DreamError:
        pass  # the ledger holds the demotion; the file catches up on the next approval or revocation


def promotion_banner(config: Config, ledger: Ledger, check: bool = True) -> str | None:
    """One line for every command and the app: why auto-write stopped, or that it is on.

    ``None`` when there is nothing to say (never approved, revoked on purpose, or a demotion the
    person has acknowledged with ``dreamtui promote --revoke``). With ``check=False`` only the
    ledger is read (no gate is computed, nothing is demoted): cheap enough for every command.
    """
    if latest_promotion(ledger) is None:
        return None
    if check:
        status = promotion_status(config, ledger)
    else:
        active = active_promotion(ledger)
        status = PromotionStatus(active is not None, active or latest_promotion(ledger))
    promo = status.promotion
    if status.active and promo is not None:
        waiting = len(auto_written(ledger, since=promo.approved_at, unreviewed_only=True))
        return f"Auto-write is on for {promo.pair} since {promo.approved_at[:10]}" + (
            f"; {waiting} auto-written memor{'y' if waiting == 1 else 'ies'} await review" if waiting else ""
        )
    if promo is not None and promo.status == "demoted" and not _acknowledged(ledger, promo):
        return f"Auto-write for {promo.pair} stopped: {promo.end_reason}. Run `dreamtui promote` to see the gates."
    return None


def _acknowledged(ledger: Ledger, promo: Promotion) -> bool:
    return promotions.acknowledged(ledger) == str(promo.id)


# -- approve / revoke ------------------------------------------------------------------------------


def approve(
    config: Config, ledger: Ledger, extractor: str | None = None, model: str | None = None
) -> Promotion:
    """Approve auto-write for one extractor+model pair when every gate holds.

    Records the approval with its evidence in the ``promotions`` table and as a committed
    ``promotion.md`` in the memory repo. Raises :class:`PromotionError` naming the failing gates.
    """
    with memory_lock(config):
        current = active_promotion(ledger)
        if current is not None:
            raise PromotionError(
                f"auto-write is already approved for {current.pair} since "
                f"{current.approved_at[:10]}: revoke it first"
            )
        pair = choose_pair(ledger, extractor, model)
        gates = compute_gates(config, ledger, pair)
        broken = failing(gates)
        if broken or pair is None:
            names = ", ".join(f"{g.title} ({g.summary})" for g in broken)
            raise PromotionError(
                f"cannot approve auto-write for {pair or 'any extractor'}: failing gates: {names}"
            )
        evidence = {"gates": [g.to_json() for g in gates]}
        with ledger.write():
            promotion_id = promotions.approve(ledger, pair, evidence, clock.now_iso())
            sha = _commit_promotion_file(
                config, ledger, f"dreamtui: approve auto-write for {pair}", "approved"
            )
            promotions.set_commit(ledger, promotion_id, sha)
    promo = latest_promotion(ledger)
    assert promo is not None
    return promo


def revoke(config: Config, ledger: Ledger, reason: str = "revoked by the person") -> Promotion:
    """End the active promotion (``revoked``), or acknowledge a demotion so its banner stops."""
    promo = active_promotion(ledger)
    if promo is None:
        last = latest_promotion(ledger)
        if last is not None and last.status == "demoted" and not _acknowledged(ledger, last):
            promotions.acknowledge(ledger, last.id)
            return last
        raise PromotionError("auto-write is not approved: nothing to revoke")
    _check_promotion_file(config)  # refused before anything is recorded, not after
    _end(ledger, promo, "revoked", reason)
    _commit_promotion_file(config, ledger, f"dreamtui: revoke auto-write for {promo.pair}", "revoked")
    ended = latest_promotion(ledger)
    assert ended is not None
    return ended


# -- auto-write ------------------------------------------------------------------------------------


def why_waits(cand: Candidate, pair: Pair) -> str | None:
    """Why ``cand`` must wait for a person under a promotion of ``pair``; ``None`` when it may be auto-written."""
    if cand.status != "pending":
        return f"candidate is {cand.status}, not pending"
    if cand.extractor != pair.extractor or cand.model != pair.model:
        return f"proposed by {Pair(cand.extractor, cand.model)}, not the promoted {pair}"
    if not cand.matches:
        return "quote is not verified in the transcript"
    provenance = cand.provenance or cand.matches[0].provenance
    if provenance not in TRUSTED_PROVENANCE:
        return f"quote is not from a person's or the assistant's words (provenance: {provenance})"
    if cand.duplicate_of:
        return f"may duplicate {cand.duplicate_of}"
    if cand.duplicate_judged == "cleared":
        return "lexical dedup suspected a duplicate and only the model judged it new"
    texts = (cand.claim, cand.why, cand.how_to_apply, cand.quote)
    if cand.secrets or any(secrets.has_secret(t) or secrets.was_redacted(t) for t in texts):
        return "flagged for a secret"
    return None


def auto_write(
    config: Config, ledger: Ledger, candidates: Iterable[Candidate] | None = None
) -> list[AutoWrite]:
    """Commit every eligible candidate as its own commit with the trailer ``Dreamtui-Auto: yes``.

    Only while a promotion is active (checked first; a failing gate demotes it instead). Eligible: pending,
    from the promoted extractor+model, verified from a person's or the assistant's words, not a
    duplicate, no secret. Everything else is returned as waiting, with the reason, for a person.
    ``candidates`` defaults to every pending candidate.
    """
    todo = list(ledger.list_candidates(status="pending") if candidates is None else candidates)
    status = promotion_status(config, ledger)
    if not status.active or status.promotion is None:
        return [AutoWrite(c.id, False, status.reason) for c in todo]
    pair = status.promotion.pair
    results: list[AutoWrite] = []
    for given in todo:
        cand = ledger.get_candidate(given.id) or given
        reason = why_waits(cand, pair)
        if reason:
            results.append(AutoWrite(cand.id, False, reason))
            continue
        try:
            res = decisions.accept(config, ledger, cand.id, decided_by="auto", trailers=dict([AUTO_TRAILER]))
        except DreamError as exc:
            results.append(AutoWrite(cand.id, False, f"left for a person: {exc}"))
            continue
        results.append(AutoWrite(cand.id, True, None, res.commit_sha, res.path or None))
    return results


# -- the promotion file in the memory repo ---------------------------------------------------------


def render_promotion_file(ledger: Ledger) -> str:
    """``promotion.md``: every approval with its evidence, and how each one ended, newest first."""
    rows = promotions.listed(ledger)
    lines = [
        "# Auto-write promotion",
        "",
        "Written by `dreamtui promote`. Auto-write commits carry the trailer `Dreamtui-Auto: yes`.",
        "",
    ]
    for p in rows:
        state = "active" if p.status == "approved" and p.ended_at is None else p.status
        lines += [f"## {p.pair}: {state}", "", f"- approved: {p.approved_at}"]
        if p.ended_at:
            lines.append(f"- {p.status}: {p.ended_at}" + (f" ({p.end_reason})" if p.end_reason else ""))
        for gate in p.evidence.get("gates", []):
            mark = "pass" if gate.get("passed") else "FAIL"
            lines.append(
                f"- gate {GATE_TITLES.get(gate.get('name'), gate.get('name'))}: {mark}: {gate.get('summary')}"
            )
        lines.append("")
    return "\n".join(lines)


def _check_promotion_file(config: Config) -> None:
    """Refuse early when ``promotion.md`` holds a person's uncommitted changes."""
    if gitops.repo_exists(config.memory):
        gitops.refuse_uncommitted(gitops.open_repo(config.memory, create=False), normalize.PROMOTION_FILE)


def _commit_promotion_file(config: Config, ledger: Ledger, message: str, event: str) -> str | None:
    """Write ``promotion.md`` from the ledger and commit only that path; the commit sha."""
    root = Path(config.memory)
    with memory_lock(config):
        repo = gitops.open_repo(root, create=event == "approved")
        gitops.ensure_writable(repo)
        data = memory.storable(render_promotion_file(ledger).encode("utf-8"))
        gitops.refuse_uncommitted(repo, normalize.PROMOTION_FILE, data)
        before = memory.read_bytes(root, normalize.PROMOTION_FILE)
        memory.atomic_write(root, normalize.PROMOTION_FILE, data)
        try:
            return gitops.commit_paths(
                repo, [normalize.PROMOTION_FILE], message, {"Dreamtui-Promotion": event}
            ).sha
        except BaseException:
            if before is None:
                memory.safe_path(root, normalize.PROMOTION_FILE).unlink(missing_ok=True)
            else:
                memory.atomic_write(root, normalize.PROMOTION_FILE, before, verbatim=True)
            raise
