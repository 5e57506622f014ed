"""``dreamtui promote`` (the auto-write gates, approval, revocation, after-the-fact review) and
``dreamtui normalize`` (bring every topic file's frontmatter to the one schema)."""

from __future__ import annotations

import json
import sys
from typing import Any

import click

from dreamtui.cli.main import CANDIDATE_ID, cli, pass_config
from dreamtui.cli.output import echo, echo_json, printable
from dreamtui.core.config import Config
from dreamtui.services import Workspace, promotion
from dreamtui.services.memory_repo import apply_normalize, plan_normalize


def _echo_json(data: Any) -> None:
    echo_json(json.dumps(data, indent=2, ensure_ascii=False, default=str))


def _rate(rate: float | None) -> str:
    return "—" if rate is None else f"{100 * rate:.0f}%"


def _gate_lines(gates: list[promotion.Gate]) -> list[str]:
    lines = []
    for gate in gates:
        mark = click.style("pass", fg="green") if gate.passed else click.style("FAIL", fg="red", bold=True)
        lines.append(f"  [{mark}] " + printable(f"{gate.title}: {gate.summary}"))
        if gate.name == promotion.GATE_SCHEMA:
            for off in gate.evidence.get("offenders", [])[:20]:
                lines.append(printable(f"         {off['path']}: {'; '.join(off['problems'])}"))
        if gate.name == promotion.GATE_EVIDENCE and gate.evidence.get("by_agent"):
            per_agent = ", ".join(
                f"{agent} {_rate(b.get('accept_rate'))} of {b.get('decisions', 0)}"
                for agent, b in gate.evidence["by_agent"].items()
            )
            lines.append(printable(f"         per agent (the gate counts them together): {per_agent}"))
    return lines


@cli.command("promote")
@click.option("--json", "as_json", is_flag=True, help="Print the gates and the promotion as JSON.")
@click.option("--approve", is_flag=True, help="Approve auto-write (only when every gate passes).")
@click.option("--revoke", is_flag=True, help="End auto-write (or acknowledge a demotion).")
@click.option(
    "--extractor",
    "extractor",
    default=None,
    help="Promote this extractor (default: the one with the most human decisions).",
)
@click.option("--model", "model", default=None, help="Promote this model of the extractor.")
@click.option(
    "--keep",
    "keep_id",
    default=None,
    metavar="ID",
    type=CANDIDATE_ID,
    help="After-the-fact review: keep this auto-written memory.",
)
@click.option(
    "--reject",
    "reject_id",
    default=None,
    metavar="ID",
    type=CANDIDATE_ID,
    help="After-the-fact review: reject this auto-written memory (reverts its commit).",
)
@click.option("--reason", default="", help="Why (with --reject, --keep or --revoke).")
@pass_config
def promote(
    config: Config,
    as_json: bool,
    approve: bool,
    revoke: bool,
    extractor: str | None,
    model: str | None,
    keep_id: str | None,
    reject_id: str | None,
    reason: str,
) -> None:
    """Show the auto-write gates with their evidence; approve or revoke auto-write.

    Auto-write is earned: one schema for every topic file, a stable ledger, and at least 30 days and
    50 human decisions at an accept rate of at least 80% for one extractor and model.
    """
    actions = [a for a in (approve, revoke, keep_id, reject_id) if a]
    if len(actions) > 1:
        raise click.UsageError("choose one of --approve, --revoke, --keep, --reject")
    with Workspace(config) as ws:
        if keep_id or reject_id:
            _review(ws, keep_id or reject_id or "", keep=bool(keep_id), reason=reason, as_json=as_json)
            return
        if revoke:
            ended = promotion.revoke(ws, reason or "revoked by the person")
            if as_json:
                _echo_json({"revoked": ended.to_json(), "promoted": False})
            elif ended.status == "demoted":
                echo(f"Demotion of {ended.pair} acknowledged; auto-write stays off.")
            else:
                echo(f"Auto-write revoked for {ended.pair}. Every candidate waits for a person again.")
            return
        shown = promotion.view(ws, extractor, model)
        pair, gates, status = shown.pair, shown.gates, shown.status
        if approve:
            try:
                approved = promotion.approve(ws, extractor, model)
            except promotion.PromotionError:
                _show(gates, pair, status, as_json)
                raise
            status = promotion.status(ws)
            if as_json:
                _echo_json(_payload(gates, pair, status) | {"approved": approved.to_json()})
            else:
                click.echo("\n".join(_gate_lines(gates)))  # styled; its text is printable
                echo(
                    f"Auto-write approved for {approved.pair}; recorded in promotion.md "
                    f"(commit {(approved.commit_sha or '')[:10]})."
                )
            return
        _show(gates, pair, status, as_json, promotion.awaiting_review(ws))


def _payload(
    gates: list[promotion.Gate],
    pair: promotion.Pair | None,
    status: promotion.PromotionStatus,
    waiting: list[promotion.AutoWritten] | None = None,
) -> dict[str, Any]:
    return {
        "gates": [g.to_json() for g in gates],
        "promoted": status.active,
        "pair": {"extractor": pair.extractor, "model": pair.model} if pair else None,
        "status": status.to_json(),
        "awaiting_review": [a.to_json() for a in waiting or []],
    }


def _show(
    gates: list[promotion.Gate],
    pair: promotion.Pair | None,
    status: promotion.PromotionStatus,
    as_json: bool,
    waiting: list[promotion.AutoWritten] | None = None,
) -> None:
    if as_json:
        _echo_json(_payload(gates, pair, status, waiting))
        return
    echo(f"Auto-write gates for {pair or 'no extractor yet (no human decisions)'}:")
    click.echo("\n".join(_gate_lines(gates)))  # styled; its text is printable
    if status.active and status.promotion:
        echo(f"Auto-write is ON for {status.promotion.pair} since {status.promotion.approved_at[:10]}.")
    else:
        echo(f"Auto-write is off: {status.reason}.")
        if not promotion.failing(gates):
            echo("Every gate passes: `dreamtui promote --approve` turns auto-write on.")
    if waiting:
        echo(
            f"{len(waiting)} auto-written memor{'y' if len(waiting) == 1 else 'ies'} await review "
            "(`dreamtui promote --keep ID` or `--reject ID --reason ...`):"
        )
        for item in waiting[:20]:
            echo(f"  {item.candidate_id}  {item.decided_at[:10]}  {item.memory_path}")


def _review(ws: Workspace, cid: str, *, keep: bool, reason: str, as_json: bool) -> None:
    status = promotion.review(ws, cid, keep=keep, reason=reason)
    if as_json:
        _echo_json({"candidate_id": cid, "kept": keep, "status": status.to_json()})
        return
    echo(f"{cid}: kept." if keep else f"{cid}: rejected; its commit was reverted.")
    if not status.active:
        echo(f"Auto-write is off: {status.reason}.")


@cli.command("normalize")
@click.option("--yes", is_flag=True, help="Rewrite the offenders without asking.")
@click.option("--json", "as_json", is_flag=True, help="Print the plan (and the commit) as JSON.")
@pass_config
def normalize_cmd(config: Config, yes: bool, as_json: bool) -> None:
    """Show which topic files break the one frontmatter schema and how they would be fixed;
    rewrite them as one commit when confirmed (``--yes`` or answering the prompt)."""
    plan = plan_normalize(config)
    fixable = [c for c in plan if c.fixable]
    manual = [c for c in plan if not c.fixable]
    if not as_json:
        if not plan:
            echo("Every topic file follows the one schema. Nothing to change.")
            return
        for change in fixable:
            click.echo(
                click.style(printable(change.path), bold=True) + ": " + printable("; ".join(change.problems))
            )
            for fix in change.fixes:
                echo(f"  - {fix}")
            echo(change.diff().rstrip("\n"))
        for change in manual:
            click.echo(
                click.style(printable(change.path), bold=True)
                + " needs a person: "
                + printable("; ".join(change.remaining))
            )
    confirmed = yes
    if fixable and not yes and not as_json and sys.stdin.isatty():
        confirmed = click.confirm(f"Rewrite {len(fixable)} file(s) as one commit?", default=False)
    sha = apply_normalize(config, plan) if confirmed and fixable else None
    if as_json:
        _echo_json({"changes": [c.to_json() for c in plan], "applied": sha is not None, "commit": sha})
        return
    if sha:
        echo(f"Rewrote {len(fixable)} file(s) in commit {sha[:10]}.")
    elif fixable:
        echo(
            f"Nothing written. Run `dreamtui normalize --yes` to rewrite {len(fixable)} file(s) as one commit."
        )
