"""Memory sub-commands: ``candidates``, ``accept``, ``reject``, ``skip``, ``undo``, ``stats``, ``review``.

Each is a thin layer over :class:`dreamtui.services.Workspace`. The index-ceiling warning (from 85%) is printed on stderr after every command by the group.
"""

from __future__ import annotations

import json
from typing import Any

import click

from dreamtui.cli.main import CANDIDATE_ID, cli, config_of, pass_config
from dreamtui.cli.output import echo, echo_json
from dreamtui.core.config import Config
from dreamtui.core.errors import DreamError
from dreamtui.core.models import REJECT_CATEGORIES, Candidate
from dreamtui.services import Workspace, format_stats, memory_repo, outside, transcripts
from dreamtui.services.display import one_line

STATUSES = ("pending", "accepted", "rejected", "dropped", "all")


def start_reconcile(ws: Workspace) -> None:
    """Reconcile on start-up; print what it fixed (only when the memory repository exists)."""
    report = ws.reconcile_report()
    if report is None:
        return
    for line in report.notices:
        echo(f"dreamtui: {line}", err=True)
    for cid in report.recorded:
        echo(f"dreamtui: recorded the accept of {cid} found in git", err=True)
    if report.restored:
        echo(f"dreamtui: restored {', '.join(report.restored)} after an interrupted write", err=True)


def _outside_notice(ws: Workspace) -> None:
    """Scan for changes dreamtui did not make; say on stderr how many wait for review."""
    if not memory_repo.exists(ws.config):
        return
    try:
        outside.scan(ws)
    except DreamError as exc:  # listing never fails for it
        echo(f"dreamtui: outside changes not checked: {exc}", err=True)
    waiting = outside.items(ws)
    for batch in outside.batches(ws):
        echo(f"dreamtui: {batch.summary()} (batch {batch.id}; see dreamtui outside)", err=True)
    if waiting:
        echo(
            f"dreamtui: {len(waiting)} change{'s' if len(waiting) != 1 else ''} to the memory repository "
            "made outside dreamtui wait for review: dreamtui outside",
            err=True,
        )


def _ceiling_notice(config: Config) -> None:
    """The group prints the ceiling warning for its own --memory; a sub-command override needs it here."""
    ctx = click.get_current_context()
    if config_of(ctx).memory != config.memory:
        warning = memory_repo.ceiling_warning(config)
        if warning:
            echo(warning, err=True)


def _is_ceiling(line: str) -> bool:
    return line.startswith("warning: MEMORY.md is at")


def candidate_json(cand: Candidate) -> dict[str, Any]:
    """The JSON of one candidate in ``dreamtui candidates --json``."""
    best = cand.matches[0] if cand.matches else None
    return {
        "id": cand.id,
        "claim": cand.claim,
        "why": cand.why,
        "how_to_apply": cand.how_to_apply,
        "quote": cand.quote,
        "session": cand.session,
        "project": cand.project,
        "status": cand.status,
        "provenance": cand.provenance,
        "duplicate_of": cand.duplicate_of,
        "duplicate_kind": cand.duplicate_kind,
        "duplicate_score": cand.duplicate_score,
        "secrets": cand.secrets,
        "type": cand.type,
        "scope": cand.scope,
        "verified_line": cand.verified_line,
        "transcript": best.file if best else cand.transcript,
        "agent": transcripts.agent_of(cand.transcript) if cand.transcript else None,
        "extractor": cand.extractor,
        "model": cand.model,
        "drop_reason": cand.drop_reason,
        "created_at": cand.created_at,
    }


@cli.command()
@click.option(
    "--status",
    type=click.Choice(STATUSES),
    default="pending",
    show_default=True,
    help="Only candidates with this status: pending is what waits for review; all lists every one.",
)
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list.")
@pass_config
def candidates(config: Config, status: str | None, as_json: bool) -> None:
    """List what waits for review (id, status, provenance, claim); --status for decided ones."""
    with Workspace(config) as ws:
        start_reconcile(ws)
        _outside_notice(ws)
        found = ws.candidates(status)
        if as_json:
            echo_json(json.dumps([candidate_json(c) for c in found], ensure_ascii=False, indent=2))
        elif not found:
            echo(
                "nothing waits for review (--status all lists every candidate)"
                if status == "pending"
                else f"no {status} candidates"
            )
        else:
            for c in found:
                flags = "".join(
                    f" [{f}]"
                    for f in (
                        "tool output" if c.provenance == "tool" else "",
                        "secret" if c.secrets else "",
                        f"close to {c.duplicate_of}" if c.duplicate_of else "",
                    )
                    if f
                )
                echo(f"{c.id}  {c.status:<8}  {c.provenance or '?':<9}  {one_line(c.claim, 90)}{flags}")
    _ceiling_notice(config)


@cli.command()
@click.argument("cid", metavar="ID", type=CANDIDATE_ID)
@click.option("--claim", default=None, help="Replace the claim before accepting.")
@click.option("--why", default=None, help="Replace the why before accepting.")
@click.option("--how", default=None, help="Replace the how-to-apply before accepting.")
@click.option(
    "--yes-tool-output",
    "allow_tool",
    is_flag=True,
    help="Accept a candidate whose quote comes from tool output (untrusted).",
)
@pass_config
def accept(
    config: Config, cid: str, claim: str | None, why: str | None, how: str | None, allow_tool: bool
) -> None:
    """Accept a candidate: write its memory file and index line, and commit them."""
    with Workspace(config) as ws:
        cand = ws.candidate(cid)
        if cand is not None and cand.provenance == "tool":
            echo(f"{cid}: provenance tool output (untrusted): {one_line(cand.quote, 120)}", err=True)
            if not allow_tool:
                echo(
                    "dreamtui: to accept it anyway, check the quote yourself and pass --yes-tool-output",
                    err=True,
                )
        edits = {k: v for k, v in (("claim", claim), ("why", why), ("how", how)) if v is not None}
        result = ws.accept(cid, edits or None, allow_tool=allow_tool)
    for line in result.notices:
        if not _is_ceiling(line):
            echo(f"dreamtui: {line}", err=True)
    echo(f"accepted {cid} → {result.path} (commit {(result.commit_sha or '')[:10]})")
    _ceiling_notice(config)


@cli.command()
@click.argument("cid", metavar="ID", type=CANDIDATE_ID)
@click.option("--reason", required=True, help="Why it is rejected (free text).")
@click.option(
    "--category",
    default="other",
    show_default=True,
    help=f"One of: {', '.join(REJECT_CATEGORIES)} (dashes allowed, e.g. not-a-lesson).",
)
@pass_config
def reject(config: Config, cid: str, reason: str, category: str) -> None:
    """Reject a candidate with a category and a reason."""
    with Workspace(config) as ws:
        result = ws.reject(cid, category, reason)
    echo(f"rejected {cid} ({result.category})")
    _ceiling_notice(config)


@cli.command()
@click.argument("cid", metavar="ID", type=CANDIDATE_ID)
@pass_config
def skip(config: Config, cid: str) -> None:
    """Skip a candidate: it stays pending."""
    with Workspace(config) as ws:
        ws.skip(cid)
    echo(f"skipped {cid} (still pending)")
    _ceiling_notice(config)


@cli.command()
@pass_config
def undo(config: Config) -> None:
    """Undo the most recent decision of any kind: a proposal's, an outside change's or a briefing's (an
    accept by a commit that takes it back)."""
    with Workspace(config) as ws:
        result = ws.undo()
    for line in result.notices:
        echo(f"dreamtui: {line}", err=True)
    if result.candidate_id is None:  # an outside change or a briefing: the summary names it
        echo(result.summary)
    elif result.commit_sha:
        echo(
            f"undid accept of {result.candidate_id} (revert commit {result.commit_sha[:10]}); it is pending again"
        )
    else:
        echo(f"undid {result.action} of {result.candidate_id}; it is pending again")
    _ceiling_notice(config)


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print the statistics as JSON.")
@pass_config
def stats(config: Config, as_json: bool) -> None:
    """Accept rate over human decisions, per extractor/model, type and week; rejection reasons."""
    with Workspace(config) as ws:
        start_reconcile(ws)
        data = ws.stats()
        data["ceiling"] = ws.index_size().to_json()
    if as_json:
        echo_json(json.dumps(data, indent=2))
    else:
        echo(format_stats(data))
    _ceiling_notice(config)


@cli.command()
@click.option("--date", "day", default=None, help="The day (YYYY-MM-DD; default today).")
@pass_config
def review(config: Config, day: str | None) -> None:
    """Write (regenerate) reviews/review-<date>.md and commit it."""
    with Workspace(config) as ws:
        path = ws.write_review(day)
    echo(str(path))
    _ceiling_notice(config)
