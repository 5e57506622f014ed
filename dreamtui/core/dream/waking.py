"""The waking message: what a person reads when a cycle ends (the CLI prints it, the app shows it as a
toast), and the phase titles both front ends show while a cycle runs."""

from __future__ import annotations

from datetime import datetime

from dreamtui.core import clock
from dreamtui.core.extract.choose import extractor_note
from dreamtui.core.ledger.cycle_stats import CycleStats
from dreamtui.core.ledger.cycles import ALL_PROJECTS, CycleRecord
from dreamtui.core.secrets import redact

PHASE_TITLES = {
    "light": "Light sleep",
    "deep": "Deep sleep",
    "branch": "Branching",
    "rem": "REM",
    "wake": "Wake",
}


def waking_message(record: CycleRecord) -> str:
    """What a person reads on waking: phases, branches, model use, candidates, time taken.

    Redacted (an error or a model's failure message may quote transcript text)."""
    s = record.stats
    who = "every project" if record.chat_id == ALL_PROJECTS else record.chat_id
    depth = {"shallow": "shallow sleep", "deep": "deep sleep"}.get(record.depth or "", record.depth or "-")
    if record.on_demand:
        after = f" after cycle #{s.after_cycle}" if s.after_cycle else ""
        out = [
            f"On-demand dream pass #{record.id} for {who} on {record.date}{after}: {record.status}, {depth}."
        ]
    else:
        out = [
            f"Dream cycle #{record.id} for {who} on {record.date} ({record.trigger}): {record.status}, {depth}."
        ]
    if record.error_message:
        out.append(f"Error: {record.error_message}")
    ran = [PHASE_TITLES.get(p["name"], p["name"]) for p in record.phases]
    out.append("Phases: " + (" → ".join(ran) if ran else "none"))
    if s.interrupted_cycles:
        ids = ", ".join(f"#{i}" for i in s.interrupted_cycles)
        out.append(f"Interrupted: cycle {ids} had been killed while running; marked failed.")
    for notice in s.recovered:
        out.append(f"Recovered: {notice}")
    out.append(
        f"Sessions: {s.sessions_new} with new content, {s.sessions_deferred} deferred "
        f"(still being written), {s.sessions_quiet} too quiet "
        f"({s.sessions_settled} of them settled); "
        f"{s.sparks} sparks, {s.covered} already covered by memory."
    )
    if s.batch_submitted or s.batch_sessions_collected or s.batches_waiting:
        out.append(
            f"Batch: {s.batch_sessions_collected} session(s) collected from earlier batches"
            + (f", {s.batches_waiting} batch(es) still processing" if s.batches_waiting else "")
            + (
                f"; submitted {s.batch_submitted} with {s.batch_sessions_submitted} session(s), "
                "collected by a later cycle"
                if s.batch_submitted
                else ""
            )
            + "."
        )
    if s.skipped_count:
        shown = "; ".join(s.skipped_paths[:3])
        more = s.skipped_count - min(3, len(s.skipped_paths))
        out.append(
            f"Skipped {s.skipped_count} path(s) that cannot be read as transcripts (the rest were "
            f"dreamed): {shown}{f'; and {more} more' if more > 0 else ''}."
        )
    if s.sessions_older:
        out.append(
            f"Older: {s.sessions_older} session(s) written before {s.window_since} wait for a back-fill "
            "(`dreamtui dream --since YYYY-MM-DD` or `--all`)."
        )
    if s.records_repaired:
        out.append(
            f"Repaired {s.records_repaired} record(s) with bytes that are not UTF-8 or a byte-order "
            "mark (kept, bad bytes read as U+FFFD)."
        )
    if s.unreadable_files:
        files = s.unreadable_files
        out.append(
            f"Could not read {len(files)} transcript file(s) (permissions?), e.g. {files[0]}; "
            "they are tried again next cycle."
        )
    if record.depth == "shallow" and s.sessions_deferred:
        out.append(
            "Deferred sessions are still being written: dream again once they have been quiet "
            "for a few minutes (allowed the same date), or say good night in the session."
        )
    out.append(
        f"Branches: {s.branches} ({s.extraction_errors} failed), extractor "
        f"{s.extractor}{' / ' + s.model if s.model else ''}"
        + (f" ({s.extractor_reason})" if s.extractor_reason else "")
        + "."
    )
    out.extend(failure_lines(s))
    note = extractor_note(s.extractor)
    if note:
        out.append(f"Extractor: {note}.")
    out.append(
        f"Model: {s.model_calls} calls; tokens {s.input_tokens} in, "
        f"{s.output_tokens} out, {s.cached_tokens} cached"
        + (f"; cost ${s.cost_usd:.4f} as Claude Code reports it." if s.cost_usd else ".")
    )
    if s.budget_stop:
        out.append(f"Budget: {s.budget_stop} ({s.sessions_waiting} session(s) wait, none lost).")
    total_dropped = sum(s.dropped.values())
    reasons = ", ".join(f"{k} {v}" for k, v in sorted(s.dropped.items()))
    out.append(
        f"Candidates: {s.surfaced} surfaced, {s.verified} verified, "
        f"{total_dropped} dropped{' (' + reasons + ')' if reasons else ''}, "
        f"{s.duplicates} duplicates, {s.kept} new for review"
        + (
            f" ({s.suspected} of them a suspected duplicate, shown beside what it may repeat)"
            if s.suspected
            else ""
        )
        + (f", {s.auto_written} auto-written" if s.auto_written else "")
        + "."
    )
    if s.kept:
        out.append(f"{new_proposals(s)}.")
    if s.judged or s.judge_error:
        out.append(
            f"Dedup judge (model): {s.judged} judged, {s.judged_same} the same lesson "
            f"as one in memory or waiting, {s.judged_distinct} new"
            + (f"; {s.judge_error}" if s.judge_error else "")
            + "."
        )
    if s.corroborated:
        n = s.corroborated
        out.append(f"Corroborated: {n} {'lesson recurs' if n == 1 else 'lessons recur'} across sessions.")
    if s.review_path:
        out.append(f"Review: {s.review_path}")
    out.extend(_consolidation_lines(s))
    out.extend(_briefing_lines(s))
    if record.on_demand:
        out.append("No REM on demand: the review file and the briefing wait for the next full cycle.")
    out.append(_took(record))
    return redact("\n".join(out))


def new_proposals(s: CycleStats) -> str:
    """``12 new proposals: Claude Code 8, Codex CLI 3, Aider 1`` — the proposals a cycle kept for review,
    per agent whose session they came from, the most first."""
    noun = "proposal" if s.kept == 1 else "proposals"
    agents = sorted(s.kept_by_agent.items(), key=lambda kv: (-kv[1], kv[0]))
    per_agent = ", ".join(f"{agent} {n}" for agent, n in agents if n)
    return f"{s.kept} new {noun}" + (f": {per_agent}" if per_agent else "")


def failure_lines(s: CycleStats, shown: int = 10) -> list[str]:
    """The failed sessions, said plainly: how many of how many, grouped by cause, then one line each
    (their content was not marked dreamed: the next dream tries them again)."""
    if not s.extraction_errors:
        return []
    causes = "; ".join(f"{cause} ({n})" for cause, n in sorted(s.failures.items(), key=lambda kv: -kv[1]))
    out = [
        f"Failed: {s.extraction_errors} of {s.branches} session(s), tried again next dream"
        + (f": {causes}" if causes else "")
        + "."
    ]
    out.extend(f"  {line}" for line in s.failed_sessions[:shown])
    if len(s.failed_sessions) > shown:
        out.append(f"  … and {s.extraction_errors - shown} more (`dreamtui dream --json` lists 20)")
    return out


def _took(record: CycleRecord) -> str:
    """How long it took, or, while it runs, how long it has run so far (its stats say 0 until it ends)."""
    if record.status != "running":
        return f"Took {record.stats.seconds:.1f} s."
    try:
        began = datetime.fromisoformat(record.started_at.replace("Z", "+00:00"))
        ran = max(0.0, (clock.now() - began).total_seconds())
    except (ValueError, TypeError):
        return "Running now."
    return f"Running for {ran:.0f} s so far."


def consolidation_summary(counts: dict[str, int]) -> str:
    """``1 update, 0 retire, 2 merge`` (every kind, in that order)."""
    return ", ".join(f"{counts.get(kind, 0)} {kind}" for kind in ("update", "retire", "merge"))


def _consolidation_lines(s: CycleStats) -> list[str]:
    """The waking message's word on REM's consolidation pass (issue 26), when it proposed or failed."""
    made = sum(s.consolidation.values())
    if not made and not s.consolidation_error:
        return []
    line = f"Consolidation: {consolidation_summary(s.consolidation)} proposed for review"
    line += " (`dreamtui consolidate` lists them; nothing changes before you accept)" if made else ""
    if s.consolidation_known:
        line += f"; {s.consolidation_known} already proposed before"
    if s.consolidation_error:
        line += f"; the model pass failed: {s.consolidation_error}"
    return [line + "."]


def _briefing_lines(s: CycleStats) -> list[str]:
    """The waking message's word on the briefing: a version waiting for review, auto-written, or unchanged."""
    if s.briefing_status == "pending":
        return [
            f"Briefing: a new version (#{s.briefing_proposal}) waits for your review: "
            "`dreamtui briefing --pending` shows the diff, `--accept` commits it, `--reject --reason` "
            "keeps it out (or 4 in the app)."
        ]
    if s.briefing_status == "auto-written":
        sha = (s.briefing_commit or "")[:10]
        return [
            f"Briefing: {s.briefing_path} (auto-written #{s.briefing_proposal}, commit {sha}; "
            "review it with `dreamtui briefing --pending`)."
        ]
    if s.briefing_status == "unchanged":
        return ["Briefing: unchanged."]
    return []
