"""``dreamtui extract FILE``: digest one session, extract lessons, run the gate, print what survived."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from dreamtui.cli.main import cli, folder_options, pass_config
from dreamtui.cli.output import echo_json, printable
from dreamtui.core.config import Config, choices
from dreamtui.core.models import Candidate, Digest, ExtractionResult
from dreamtui.services import Workspace, extracting
from dreamtui.services.transcripts import digest_session, session_files_for


def safe(text: str, limit: int | None = None) -> str:
    """Text fit for a terminal line: secrets redacted (before any cut), escape/control characters shown
    as ``\\xNN``, newlines as ⏎."""
    out = printable(text.replace("\n", " ⏎ "))
    if limit is not None and len(out) > limit:
        out = out[: limit - 1] + "…"
    return out


def _print_candidate(c: Candidate) -> None:
    line = f" (line {c.verified_line})" if c.verified_line else ""
    click.echo(f"{c.id}  {c.type:<9} {safe(c.scope, 40)}")
    click.echo(f"  claim: {safe(c.claim, 300)}")
    click.echo(f'  quote: "{safe(c.quote, 300)}"{line}, said by {c.provenance or "unknown"}')
    if c.provenance == "tool":
        click.echo("  ! the quote was found only in tool output (untrusted): check it before accepting")
    if c.secrets:
        click.echo(f"  ! secret flagged ({', '.join(c.secrets)}): edit it out before accepting")
    if c.duplicate_of:
        click.echo(f"  ~ resembles {c.duplicate_kind} {c.duplicate_of} (score {c.duplicate_score})")


def _summary(result: ExtractionResult, kept: int, dropped: dict[str, int]) -> str:
    parts = [f"{kept} kept"]
    total = sum(dropped.values())
    if total:
        detail = ", ".join(f"{reason} {n}" for reason, n in sorted(dropped.items()))
        parts.append(f"{total} dropped ({detail})")
    else:
        parts.append("0 dropped")
    u = result.usage
    if u.calls:
        parts.append(
            f"{u.calls} model call(s), {u.input_tokens} in / {u.output_tokens} out / "
            f"{u.cached_tokens} cached tokens" + (f", cost ${u.cost_usd:.4f}" if u.cost_usd else "")
        )
    return "; ".join(parts)


@cli.command()
@click.argument("file", type=click.Path(path_type=Path))
@click.option(
    "--extractor",
    "extractor_name",
    type=click.Choice(choices("extractor")),
    default=None,
    help="Which extractor to use (default: the configured one).",
)
@click.option("--model", default=None, help="Claude model for the anthropic and claude-code extractors.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.option(
    "--show-request",
    is_flag=True,
    help="Print the exact request(s) the extractor would send (system prompt, user message, output "
    "schema) with their size in tokens, and stop: nothing is stored. openai asks the server its context "
    "and tokenizer; anthropic and claude-code (the same request) need no network and no key.",
)
@pass_config
def extract(
    config: Config,
    file: Path,
    extractor_name: str | None,
    model: str | None,
    as_json: bool,
    show_request: bool,
) -> None:
    """Extract lessons from one session FILE (and its sub-agents), pass them through the gate
    (verification, dedup, secret scan), store them in the ledger and print the survivors."""
    if extractor_name:
        config = config.changed(extractor=extractor_name)
    if model:
        config = config.changed(model=model)
    files = session_files_for(file)
    if show_request:
        _show_request(config, digest_session(files), as_json)
        return
    done = extracting.extract_session(config, files)
    digest, result, report, dropped = done.digest, done.result, done.report, done.dropped
    if as_json:
        data: dict[str, Any] = {
            "session": digest.session,
            "project": digest.project,
            "files": [str(f) for f in files],
            "extractor": done.extractor,
            "model": done.model,
            "turns": len(digest.turns),
            "proposed": len(result.candidates) + result.malformed,
            "candidates": [c.to_json() for c in report.kept],
            "dropped": dropped,
            "duplicates": report.duplicates,
            "judge": {
                "judged": report.judged,
                "same": report.judged_same,
                "distinct": report.judged_distinct,
                "error": report.judge_error,
            },
            "usage": result.usage.to_json(),
            "notes": result.notes,
        }
        echo_json(json.dumps(data, ensure_ascii=False))
        return
    who = f"{done.extractor}" + (f" ({done.model})" if done.model else "")
    click.echo(
        f"session {safe(digest.session)} of {safe(digest.project)}: {len(digest.turns)} turns, "
        f"extractor {who}"
    )
    for note in result.notes:
        click.echo(f"note: {safe(note)}")
    for cand in report.kept:
        click.echo("")
        _print_candidate(cand)
    click.echo("")
    click.echo(_summary(result, len(report.kept), dropped))
    if report.judged or report.judge_error:
        click.echo(
            f"dedup judge: {report.judged} judged, {report.judged_same} the same lesson as an existing "
            f"one, {report.judged_distinct} new"
            + (f"; {safe(report.judge_error)}" if report.judge_error else "")
        )


def _show_request(config: Config, digest: Digest, as_json: bool) -> None:
    """Print the request(s) the extractor in use would send for ``digest`` (the anthropic one for an
    extractor that asks no model), each with its size in tokens."""
    with Workspace(config) as ws:
        kind, shown = extracting.shown_requests(ws, digest)
    if as_json:
        # anthropic and claude-code: the Messages bodies as the SDK sends them; openai: with their sizes
        data: Any = shown if kind == "openai" else [entry["body"] for entry in shown]
        echo_json(json.dumps(data, ensure_ascii=False, indent=1))
        return
    for i, entry in enumerate(shown, 1):
        body = entry["body"]
        how = "counted by the server's tokenizer" if entry["tokens_exact"] else "estimated: characters / 3.5"
        size = f"{entry['prompt_tokens']:,} prompt tokens ({how})"
        if kind != "openai":  # the Messages request as a stand-in model reads it; its size on stderr
            click.echo(request_text(body, i, len(shown)), nl=False)
            click.echo(f"dreamtui: request {i} of {len(shown)} ({entry['endpoint']}): {size}", err=True)
            continue
        system, user = (m["content"] for m in body["messages"])
        schema = body.get("response_format")
        click.echo(
            f"# request {i} of {len(shown)}: {entry['endpoint']}, model {body.get('model')}, "
            f"max_tokens {body.get('max_tokens')}, {size}"
        )
        click.echo("## system\n" + system)
        click.echo("## user\n" + user)
        click.echo(
            "## response_format\n"
            + (json.dumps(schema, indent=1) if schema else "(none: plain JSON instructions)")
        )


def request_text(body: dict[str, Any], index: int, total: int) -> str:
    """One request body as ``--show-request`` prints it: a header, the system prompt, the user message
    and the output schema (what a person, or a stand-in model, reads to answer it)."""
    system = "\n".join(block.get("text", "") for block in body.get("system", []))
    user = "\n".join(
        m["content"] if isinstance(m["content"], str) else json.dumps(m["content"])
        for m in body.get("messages", [])
    )
    schema = body.get("output_config", {}).get("format", {})
    return (
        f"# request {index} of {total}: POST /v1/messages, model {body.get('model')}, "
        f"max_tokens {body.get('max_tokens')}\n"
        f"## system\n{system}\n"
        f"## user\n{user}\n"
        f"## output format (output_config.format)\n{json.dumps(schema, indent=1)}\n"
    )


# -- batch mode --------------------------------------------------------------------------------


@cli.group("batch")
@folder_options
def batch_group() -> None:
    """Back-fill many sessions through the Message Batches API (half the price; results can take hours)."""


@batch_group.command("submit")
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--model", default=None, help="Claude model (default: the configured one).")
@pass_config
def batch_submit(config: Config, files: tuple[Path, ...], model: str | None) -> None:
    """Submit the sessions FILES as one batch; its id and request map go in the ledger.

    The part of each session no dream cycle has dreamed yet counts as dreamed from now on (a cycle
    will not extract it again); a request that fails gives it back at `dreamtui batch collect`."""
    if model:
        config = config.changed(model=model)
    groups = [session_files_for(f) for f in files]
    with Workspace(config) as ws:
        batch_id, sessions = extracting.submit_batch(ws, groups)
    reserved = sum(r["end_offset"] - r["start_offset"] for s in sessions for r in s.ranges)
    click.echo(
        f"submitted batch {batch_id}: {len(sessions)} session(s), {reserved:,} bytes not dreamed before "
        "(now reserved); collect with `dreamtui batch collect`"
    )


@batch_group.command("collect")
@click.option(
    "--wait",
    "wait_seconds",
    type=float,
    default=0.0,
    show_default=True,
    help="Seconds to keep polling an unfinished batch before leaving it for a later run.",
)
@click.option("--interval", type=float, default=30.0, show_default=True, help="Seconds between polls.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@pass_config
def batch_collect(config: Config, wait_seconds: float, interval: float, as_json: bool) -> None:
    """Collect every finished batch recorded in the ledger (also after a restart) and gate its candidates.

    What a session's request extracted is recorded as extracted in the transaction that stores its
    candidates (no dream cycle extracts it again); a failed request gives its content back."""

    def left_for_cycle(left: int) -> None:
        if not as_json:
            click.echo(
                f"{left} batch(es) submitted by `dreamtui dream --batch` are left for the next dream cycle",
                err=True,
            )

    with Workspace(config) as ws:
        outcomes = extracting.collect_batches(
            ws, wait_seconds=wait_seconds, interval=interval, on_left=left_for_cycle
        )
    _print_collected([o.to_json() for o in outcomes], as_json)


def _print_collected(out: list[dict[str, Any]], as_json: bool) -> None:
    """One line per collected session (or still-running batch), or the JSON of them all."""
    if as_json:
        echo_json(json.dumps({"batches": out}, ensure_ascii=False))
        return
    if not out:
        click.echo("no unfinished batch in the ledger")
    for row in out:
        if row["status"] != "collected":
            click.echo(f"batch {row['batch']}: {row['status']} {row['counts']}; run again later")
            continue
        line = f"batch {row['batch']} session {safe(row['session'])}: {len(row['kept'])} kept"
        if row["dropped"]:
            line += ", dropped " + ", ".join(f"{k} {v}" for k, v in sorted(row["dropped"].items()))
        if row["error"]:
            line += f"; error: {safe(row['error'])}"
            if row["given_back"]:
                line += "; its content goes back to the next dream cycle"
        click.echo(line)
