"""``dreamtui outside``: review what others wrote into the memory repository (issue 17).

A thin layer over :mod:`dreamtui.services.outside`: every sub-command scans first, so what Claude
Code's auto memory, auto dream or a person changed since the last look is listed.
"""

from __future__ import annotations

import json

import click

from dreamtui.cli.main import cli, config_of, folder_options, pass_config
from dreamtui.cli.memory_cmd import start_reconcile
from dreamtui.cli.output import echo, echo_json
from dreamtui.core.config import Config
from dreamtui.services import Workspace, outside


def _scanned(config: Config) -> Workspace:
    """The workspace of ``config``, its memory repository scanned for outside changes first."""
    ws = Workspace(config)
    try:
        start_reconcile(ws)  # every start: decisions git holds and the ledger missed, recorded first
        report = outside.scan(ws)
    except BaseException:
        ws.close()
        raise
    for notice in report.notices:  # a recovered decision, a folder that cannot be listed
        echo(f"dreamtui: {notice}", err=True)
    return ws


def _index_notice(ws: Workspace) -> None:
    """After a decision: what breaks the index invariant now (a dead link, an unlinked memory)."""
    for line in ws.index_problems():
        echo(f"dreamtui: {line}", err=True)


def item_line(item: outside.Item) -> str:
    """One line of the list: id, status, writer, what changed, where it was found."""
    where = f"  (session {item.session[:8]}, line {item.line})" if item.session else ""
    batch = f"  [batch {item.batch}]" if item.batch else ""
    return f"{item.id}  {item.status:<8}  {item.title()}{where}{batch}"


@cli.group(invoke_without_command=True)
@click.option("--all", "show_all", is_flag=True, help="Also decided items.")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON object with items and batches.")
@folder_options
@click.pass_context
def outside_cmd(ctx: click.Context, show_all: bool, as_json: bool) -> None:
    """Changes to the memory repository dreamtui did not make: list them (with no sub-command)."""
    if ctx.invoked_subcommand:
        return
    with _scanned(config_of(ctx)) as ws:
        found = outside.items(ws, None if show_all else "pending")
        batches = outside.batches(ws)
    if as_json:
        echo_json(
            json.dumps(
                {
                    "items": [i.to_json() for i in found],
                    "batches": [
                        {
                            "id": b.id,
                            "summary": b.summary(),
                            "writer": b.writer,
                            "removed": b.removed,
                            "rewrote": b.rewrote,
                            "renamed": b.renamed,
                            "pending": b.pending,
                        }
                        for b in batches
                    ],
                },
                ensure_ascii=False,
                indent=2,
            )
        )
        return
    for batch in batches:
        echo(
            f"batch {batch.id}: {batch.summary()} ({batch.pending} waiting; "
            f"dreamtui outside restore {batch.id} --reason … puts them all back)"
        )
    if not found:
        echo("no outside changes")
    for item in found:
        echo(item_line(item))


outside_cmd.name = "outside"


@outside_cmd.command()
@click.argument("item_id", metavar="ID")
@pass_config
def show(config: Config, item_id: str) -> None:
    """Show one item: its diff, index lines added/dropped, and the transcript record that wrote it."""
    with _scanned(config) as ws:
        item = outside.get(ws, item_id)
        echo(item_line(item))
        added, dropped = outside.index_lines(ws, item)
        diff = outside.diff(ws, item)
    for line in added:
        echo(f"index line added:   {line}")
    for line in dropped:
        echo(f"index line dropped: {line}")
    echo(diff.rstrip("\n") or "(no text difference)")
    record = outside.transcript_excerpt(item)
    if outside.is_agent(item):
        echo(f"written by {item.writer_label} in its own file: {item.note}")
    elif record:
        echo(f"written by {item.tool} in {item.transcript}, line {item.line}:")
        echo(record)
    else:
        echo(
            "no transcript record wrote it within the window: taken as the person's own edit"
            if item.writer == "person"
            else "no transcript record found"
        )


@outside_cmd.command()
@click.argument("item_ids", metavar="ID...", nargs=-1, required=True)
@click.option("--mine", is_flag=True, help="It is my own edit: commit it as mine.")
@click.option("--yes", is_flag=True, help="Commit even a MEMORY.md link to a file the commit lacks.")
@pass_config
def accept(config: Config, item_ids: tuple[str, ...], mine: bool, yes: bool) -> None:
    """Accept items: one commit of exactly each change (trailer Dreamtui-Reviewed: outside)."""
    with _scanned(config) as ws:
        done: set[str] = set()
        for item_id in item_ids:
            item = outside.get(ws, item_id)
            if item.id in done:
                continue  # decided with an earlier one (its batch)
            together = outside.unit(ws, item, "accept")
            sha = outside.accept(ws, item.id, mine=mine, confirmed=yes)
            for member in together:
                done.add(member.id)
                echo(f"accepted {member.id}: {member.title()} (commit {sha[:10]})")
        _index_notice(ws)


@outside_cmd.command()
@click.argument("item_ids", metavar="[ID...]", nargs=-1)
@pass_config
def mine(config: Config, item_ids: tuple[str, ...]) -> None:
    """Commit my own edits (these items, or every change no agent session wrote) in one commit."""
    with _scanned(config) as ws:
        ids = [outside.get(ws, i).id for i in item_ids] or None
        sha = outside.accept_mine(ws, ids)
    echo(f"committed your edits (commit {sha[:10]})" if sha else "no edits of yours to commit")


@outside_cmd.command()
@click.argument("item_ids", metavar="ID...", nargs=-1, required=True)
@click.option("--reason", required=True, help="Why it is rejected (kept in the ledger).")
@pass_config
def reject(config: Config, item_ids: tuple[str, ...], reason: str) -> None:
    """Reject items: each file back as HEAD has it (a deleted file comes back)."""
    with _scanned(config) as ws:
        done: set[str] = set()
        for item_id in item_ids:
            item = outside.get(ws, item_id)
            if item.id in done:
                continue  # decided with an earlier one (its batch, or the index change linking it)
            for rejected in outside.reject(ws, item.id, reason):
                done.add(rejected)
                member = outside.get(ws, rejected)
                if outside.is_agent(member):
                    echo(
                        f"rejected {member.id}: {member.note} is left as the agent wrote it (restore puts it back)"
                    )
                else:
                    echo(f"rejected {member.id}: {member.path} is as committed again")
        _index_notice(ws)


@outside_cmd.command()
@click.argument("batch", metavar="BATCH|ID")
@click.option("--reason", required=True, help="Why it is put back (kept in the ledger).")
@pass_config
def restore(config: Config, batch: str, reason: str) -> None:
    """Put back every file of a batch (a mass deletion or rewrite) in one step; or, for an agent's own
    memory (Codex, Gemini CLI), its file (Gemini: only its section) as reviewed."""
    with _scanned(config) as ws:
        agent = next((i for i in outside.items(ws) if i.id.startswith(batch) and outside.is_agent(i)), None)
        if agent is not None:
            outside.restore_agent(ws, agent.id, reason)
            echo(f"restored {agent.id}: {agent.note} is as reviewed again (u undoes it)")
            return
        done = [outside.get(ws, i) for i in outside.restore(ws, batch, reason)]
        _index_notice(ws)
    files = [i for i in done if i.path != "MEMORY.md"]
    index = " and MEMORY.md (its index lines with them)" if len(files) < len(done) else ""
    echo(
        f"restored {len(files)} file{'s' if len(files) != 1 else ''}{index} from HEAD, as one decision (u undoes it)"
    )
