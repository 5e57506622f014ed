"""``dreamtui consolidate``: review proposals to update, retire and merge memories already there (issue 26).

A thin layer over :class:`~dreamtui.services.workspace.Workspace`: list, show (the evidence and the
diff), accept (one commit of exactly that diff), reject (remembered), undo, and ``run`` (the pass now).
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from dreamtui.cli.main import cli, config_of, folder_options, pass_config
from dreamtui.cli.memory_cmd import start_reconcile
from dreamtui.cli.output import echo, echo_json
from dreamtui.core.config import Config
from dreamtui.core.errors import DreamError
from dreamtui.services import Consolidation, Workspace
from dreamtui.services.display import one_line
from dreamtui.services.extracting import consolidation_schema, sendable
from dreamtui.services.transcripts import digest_session, session_files_for


def item_line(item: Consolidation) -> str:
    """One line of the list: id, status, kind, the files it changes, where its evidence comes from."""
    targets = ", ".join(item.targets[:3]) + (f" (+{len(item.targets) - 3})" if len(item.targets) > 3 else "")
    return f"{item.id}  {item.status:<8}  {item.kind:<6}  {targets}  [{item.source}]"


def evidence_lines(item: Consolidation) -> list[str]:
    """The evidence as a person reads it: the verified quote (with where it was found) or the failed check."""
    if item.evidence_kind == "quote":
        where = f" — {item.provenance or '?'}, session {(item.session or '?')[:8]}, line {item.line}"
        return [f"evidence (verified quote{where}):", f"  > {item.evidence}"]
    return ["evidence (check):", f"  {item.evidence}"]


@cli.group(invoke_without_command=True)
@click.option("--all", "show_all", is_flag=True, help="Also decided proposals.")
@click.option("--json", "as_json", is_flag=True, help="Print the proposals as a JSON list.")
@folder_options
@click.pass_context
def consolidate_cmd(ctx: click.Context, show_all: bool, as_json: bool) -> None:
    """Proposals to update, retire or merge existing memories: list them (with no sub-command)."""
    started = Workspace.if_exists(config_of(ctx))
    if started is not None:  # every start: what git holds and the ledger missed, recorded first
        with started as ws:
            start_reconcile(ws)
    if ctx.invoked_subcommand:
        return
    with Workspace(config_of(ctx)) as ws:
        found = ws.consolidations(None if show_all else "pending")
    if as_json:
        echo_json(json.dumps([i.to_json() for i in found], ensure_ascii=False, indent=2))
        return
    if not found:
        echo("no consolidation proposals")
    for item in found:
        echo(item_line(item))


consolidate_cmd.name = "consolidate"


@consolidate_cmd.command()
@click.argument("cid", metavar="ID")
@pass_config
def show(config: Config, cid: str) -> None:
    """Show one proposal: its reason, its evidence, and the memory as it is and as it would be (a diff)."""
    with Workspace(config) as ws:
        item = ws.consolidation(cid)
        echo(item_line(item))
        if item.reason:
            echo(f"why: {item.reason}")
        for line in evidence_lines(item):
            echo(line)
        problem = ws.consolidation_stale(item)
        if problem:
            echo(f"stale: {problem}")
        diff = ws.consolidation_diff(item) if item.status == "pending" else []
    for line in diff:
        echo(line)


@consolidate_cmd.command()
@click.argument("ids", metavar="ID...", nargs=-1, required=True)
@click.option(
    "--yes-tool-output",
    "allow_tool",
    is_flag=True,
    help="Accept a proposal whose evidence comes from tool output (untrusted).",
)
@pass_config
def accept(config: Config, ids: tuple[str, ...], allow_tool: bool) -> None:
    """Accept proposals: one commit of exactly each diff (a retirement deletes only now)."""
    with Workspace(config) as ws:
        for cid in ids:
            item = ws.consolidation(cid)
            if item.provenance == "tool" and not allow_tool:
                echo(
                    f"{cid}: evidence from tool output (untrusted): {one_line(item.evidence, 120)}", err=True
                )
                echo(
                    "dreamtui: to accept it anyway, check the evidence yourself and pass --yes-tool-output",
                    err=True,
                )
            echo(ws.accept_consolidation(cid, allow_tool=allow_tool).summary)


@consolidate_cmd.command()
@click.argument("ids", metavar="ID...", nargs=-1, required=True)
@click.option("--reason", required=True, help="Why (kept; the same evidence is not proposed again).")
@pass_config
def reject(config: Config, ids: tuple[str, ...], reason: str) -> None:
    """Reject proposals; each is remembered by its evidence and not proposed again."""
    with Workspace(config) as ws:
        for cid in ids:
            echo(ws.reject_consolidation(cid, reason).summary)


@consolidate_cmd.command()
@click.argument("cid", metavar="ID")
@pass_config
def undo(config: Config, cid: str) -> None:
    """Undo an accepted proposal (one commit putting back what it changed) or a rejection."""
    with Workspace(config) as ws:
        echo(ws.undo_consolidation(cid).summary)


@consolidate_cmd.command()
@click.argument("files", nargs=-1, type=click.Path(path_type=Path))
@click.option(
    "--project", default=None, help="The project (transcript folder name); default: FILES' project."
)
@click.option("--repo", type=click.Path(path_type=Path), default=None, help="The project's git repository.")
@click.option("--model", "use_model", is_flag=True, help="Also ask the extractor's model about FILES.")
@click.option(
    "--show-request",
    is_flag=True,
    help="Print the exact consolidation request for FILES' project (system prompt, user message, output "
    "schema) and stop: no network, nothing stored.",
)
@click.option("--json", "as_json", is_flag=True, help="Print what was proposed as JSON.")
@pass_config
def run(
    config: Config,
    files: tuple[Path, ...],
    project: str | None,
    repo: Path | None,
    use_model: bool,
    show_request: bool,
    as_json: bool,
) -> None:
    """Run the consolidation pass now, for one project: the offline finders (duplicates; paths and
    commands gone from its repository) and, with --model, the model over the session FILES."""
    digests = [digest_session(session_files_for(f)) for f in files]
    if use_model and not digests and not show_request:
        raise DreamError("--model needs the session FILE(s) the model reads")
    with Workspace(config) as ws:
        if project is None and digests:
            project = ws.project_key(digests[0].project, files[0])
        if not project:
            raise click.UsageError("name the project (--project) or give a session FILE")
        if show_request:
            _show_request(config, ws.consolidation_request(project, digests), project, as_json)
            return
        report = ws.consolidate_now(project, repo=repo, digests=digests, model=use_model)
        made = [ws.consolidation(i) for i in report.ids]
    if as_json:
        data = {
            "project": project,
            "proposed": {k: report.proposed.get(k, 0) for k in ("update", "retire", "merge")},
            "known": report.known,
            "dropped": dict(report.dropped),
            "error": report.error,
            "proposals": [i.to_json() for i in made],
        }
        echo_json(json.dumps(data, ensure_ascii=False, indent=2))
        return
    counts = ", ".join(f"{report.proposed.get(k, 0)} {k}" for k in ("update", "retire", "merge"))
    echo(
        f"{project}: {counts} proposed"
        + (f"; {report.known} already proposed before" if report.known else "")
    )
    if report.error:
        echo(f"the model pass failed: {report.error}", err=True)
    for item in made:
        echo(item_line(item))


def _show_request(config: Config, request: tuple[str, str], project: str, as_json: bool) -> None:
    system, user = request
    schema = consolidation_schema()
    if as_json:
        echo_json(
            json.dumps(
                {"system": system, "user": sendable(user), "schema": schema}, ensure_ascii=False, indent=1
            )
        )
        return
    click.echo(f"# the consolidation request for {project}: model {config.model}")
    click.echo("## system\n" + system)
    click.echo("## user\n" + user)
    click.echo("## output schema\n" + json.dumps(schema, indent=1))
