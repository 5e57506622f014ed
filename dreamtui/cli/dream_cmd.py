"""``dreamtui dream``, ``dreamtui watch`` and ``dreamtui briefing``: dream cycles from the command line."""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
from datetime import datetime
from typing import Any

import click

from dreamtui.cli.main import cli, pass_config
from dreamtui.cli.output import echo, echo_json
from dreamtui.cli.progress import progress_display
from dreamtui.core.config import Config, choices
from dreamtui.core.errors import ConfigError, CycleBusy, DreamError
from dreamtui.services import BriefingProposal, Workspace, briefings, dreaming, memory_repo, watching
from dreamtui.services.dreaming import CycleFailed, CycleRecord, NothingNew, waking_message

EXIT_FAILED = 1
EXIT_BUSY = 3
EXIT_SESSIONS_FAILED = 4  # the cycle finished, but some sessions' extraction failed (they wait for the next)
EXIT_INTERRUPTED = 130  # the shell's code for a process stopped by Ctrl-C
PROGRESS_EVERY = 0.5


def _progress_printer(enabled: bool, every: float = PROGRESS_EVERY) -> Any:
    """A progress callback printing ``[phase NN%] message`` lines on stderr (or nothing).

    Each phase's start and end are always printed; the events in between at most every ``every``
    seconds, so a cycle over thousands of sessions prints a few lines, not thousands.
    """
    if not enabled:
        return None
    last: dict[str, str | float] = {"phase": "", "at": 0.0}

    def show(phase: str, message: str, fraction: float | None) -> None:
        now = time.monotonic()
        new_phase = phase != last["phase"]
        if not (new_phase or fraction in (0.0, 1.0) or now - float(last["at"]) >= every):
            return
        last.update(phase=phase, at=now)
        pct = f" {fraction * 100:3.0f}%" if fraction is not None else ""
        echo(f"[{phase}{pct}] {message}", err=True)

    return show


@cli.command("dream")
@click.option(
    "--project",
    default=None,
    help="Dream one project (a transcript folder name, or a folder the sessions ran in: an absolute path, "
    "or . for this one; a worktree's dreams its whole repository); default: every project.",
)
@click.option(
    "--extractor",
    type=click.Choice(choices("extractor")),
    default=None,
    help="Which extractor proposes lessons for this cycle.",
)
@click.option(
    "--date",
    "day",
    default=None,
    metavar="YYYY-MM-DD",
    help="Dream as of this date (default: today, or the date of DREAMTUI_NOW).",
)
@click.option(
    "--batch",
    is_flag=True,
    default=False,
    help="Extract through the Message Batches API (anthropic; half the price): today's sessions "
    "are submitted and their lessons collected by a later cycle.",
)
@click.option(
    "--since",
    default=None,
    metavar="YYYY-MM-DD",
    help="Back-fill: with a model, also read the sessions written since this date "
    "(default: the last dream_window_days days).",
)
@click.option(
    "--all", "everything", is_flag=True, help="Back-fill: with a model, read sessions of every date."
)
@click.option(
    "--yes", is_flag=True, help="Dream with a model without asking first (the estimate is still printed)."
)
@click.option(
    "--estimate",
    "estimate_only",
    is_flag=True,
    help="Only say what a dream would read and send (sessions, MB, tokens, cost); send nothing.",
)
@click.option(
    "--count-tokens",
    is_flag=True,
    help="With ANTHROPIC_API_KEY: refine the estimate with the API's token count of a few sampled "
    "requests (count_tokens; nothing is sent to the model).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the cycle record as JSON; no progress.")
@pass_config
def dream(
    config: Config,
    project: str | None,
    extractor: str | None,
    day: str | None,
    batch: bool,
    since: str | None,
    everything: bool,
    yes: bool,
    estimate_only: bool,
    count_tokens: bool,
    as_json: bool,
) -> None:
    """Run one dream cycle now and print the waking message.

    The first cycle of a date is the full one (with REM: review file, briefing). Asked again after it,
    with or without --project, dream runs an on-demand pass over just the new content (no REM), or
    says there is nothing new. Ctrl-C stops the cycle at its next safe point (again: at once); the
    next dream finishes it. Exit status: 0 done (or nothing new), 1 the cycle failed (run it again to
    retry), 3 another cycle is running (nothing was done), 4 done but some sessions failed (the
    waking message's Failed: line says why; they are tried again next dream), 130 stopped by Ctrl-C.

    With a model (an API key, a Claude Code login, a local server) it reads the sessions of the last
    dream_window_days days (--since, --all: more), and the first time, or when the estimate passes
    ask_above_tokens, it shows what it would read and send and asks first (--yes: go ahead).
    """
    if project == ".":  # the folder the sessions ran in: this one
        project = os.getcwd()
    if extractor:
        config = config.changed(extractor=extractor)
    if batch:
        config = config.changed(batch=True)
    if since and everything:
        raise ConfigError("choose one of --since and --all")
    since_at = dreaming.parse_since(since) if since else None
    ws = Workspace(config)
    try:
        if not _asked(ws, project, since_at, everything, yes, estimate_only, as_json, count_tokens):
            return
    except BaseException:
        ws.close()
        raise
    display = progress_display(not as_json)
    ctrl_c = CtrlC()
    try:
        with ctrl_c:
            record = dreaming.dream(
                ws,
                project=project,
                date=day,
                trigger="manual",
                progress=ctrl_c.progress(display),
                since=since_at,
                everything=everything,
            )
    except NothingNew as exc:  # asked after the day's full cycle, and nothing was written since
        if as_json:
            echo_json(json.dumps({"nothing_new": True, "message": str(exc)}, indent=2, ensure_ascii=False))
        else:
            echo(f"{str(exc)[:1].upper()}{str(exc)[1:]}.")
        return
    except CycleBusy as exc:
        echo(f"dreamtui: {exc}", err=True)
        sys.exit(EXIT_BUSY)
    except dreaming.BudgetSpent as exc:  # nothing sent, nothing recorded: tomorrow's dream goes on
        if as_json:
            echo_json(json.dumps({"budget_spent": True, "message": str(exc)}, indent=2, ensure_ascii=False))
        echo(f"dreamtui: {exc}", err=True)
        return
    except CycleFailed as exc:
        if as_json and exc.record is not None:
            echo_json(json.dumps(exc.record.to_json(), indent=2, ensure_ascii=False))
        echo(f"dreamtui: {exc}", err=True)
        for line in exc.record.stats.failed_sessions if exc.record is not None else []:
            echo(f"  {line}", err=True)  # one line per failed session: which, and why
        sys.exit(EXIT_FAILED)
    except (dreaming.CycleStopped, KeyboardInterrupt):
        if display is not None:
            display.close()
            display = None
        echo(f"dreamtui: {_stopped_words(ws, project)}", err=True)
        sys.exit(EXIT_INTERRUPTED)
    finally:
        if display is not None:
            display.close()
        ws.close()
    if as_json:
        echo_json(json.dumps(record.to_json(), indent=2, ensure_ascii=False))
    else:
        echo(waking_message(record))
        if ctrl_c.asked:
            echo("dreamtui: the dream cycle had no safe point left to stop at: it finished", err=True)
        offer = memory_repo.link_offer(config)  # installed agents that do not load the memory: told once
        if offer:
            echo(f"dreamtui: {offer}", err=True)
    failed = record.stats.extraction_errors
    if failed:
        what = "on-demand dream pass" if record.on_demand else "dream cycle"
        echo(
            f"dreamtui: {what} #{record.id} finished, but {failed} of {record.stats.branches} session(s) "
            "failed (their content waits for the next dream): why is in the waking message's Failed: "
            "line (`failures` in --json)",
            err=True,
        )
        sys.exit(EXIT_SESSIONS_FAILED)


def _asked(
    ws: Workspace,
    project: str | None,
    since: datetime | None,
    everything: bool,
    yes: bool,
    estimate_only: bool,
    as_json: bool,
    count_tokens: bool = False,
) -> bool:
    """Before a dream with a model: say what it would read and send, and ask when it is the first or a
    big one. True to dream; False when the person said no or only asked for the estimate (printed)."""
    estimate = dreaming.preview(ws, project, since, everything, count_tokens=count_tokens)
    if estimate_only:
        if estimate is None:
            echo("This dream asks no model (the extractor is offline): nothing would be spent.")
        elif as_json:
            echo_json(json.dumps(estimate.to_json(), indent=2, ensure_ascii=False))
        else:
            for line in estimate.lines():
                echo(line)
        ws.close()
        return False
    if estimate is None or not estimate.asks(ws.config):
        return True
    for line in estimate.lines():
        echo(line, err=True)
    if yes:
        return True
    if not (sys.stdin.isatty() and sys.stderr.isatty()):
        ws.close()
        raise ConfigError(
            "a dream with a model asks first and this terminal cannot answer: `dreamtui dream --yes` "
            "goes ahead (`--since YYYY-MM-DD` or `--all` to read older sessions, `--estimate` to only look)"
        )
    if click.confirm("Dream now?", default=False, err=True):
        return True
    echo("Nothing was sent.", err=True)
    ws.close()
    return False


class CtrlC:
    """Ctrl-C during ``dreamtui dream``: the first asks the cycle to stop at its next safe point (the
    extractions already running finish and are kept), the second stops the process at once (the
    cycle is then left for the next dream to mark failed and run again). Used as a context manager
    around the cycle (it installs its SIGINT handler in the main thread only)."""

    def __init__(self) -> None:
        self.asked = False
        self._previous: Any = None
        self._thread = threading.get_ident()

    def __enter__(self) -> CtrlC:
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGINT, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)

    def _handle(self, _signum: int, _frame: Any) -> None:
        if self.asked:
            echo(
                "dreamtui: stopped at once; the next `dreamtui dream` marks the cycle failed and runs it again",
                err=True,
            )
            os._exit(EXIT_INTERRUPTED)  # the ledger and git are crash-safe: this is a kill
        self.asked = True
        echo(
            "dreamtui: Ctrl-C: stopping the dream cycle at its next safe point (extractions already "
            "running finish and are kept); Ctrl-C again stops at once",
            err=True,
        )

    def progress(self, display: Any) -> Any:
        """The cycle's progress callback: ``display``'s, and the stop once Ctrl-C was pressed."""

        def report(phase: str, message: str = "", fraction: float | None = None) -> None:
            if (
                self.asked
                and threading.get_ident() == self._thread
                and dreaming.cycle_stop_point(phase, message, fraction)
            ):
                raise dreaming.CycleStopped(dreaming.STOPPED_BY_CTRL_C)
            if display is not None:
                display(phase, message, fraction)

        return report


def _stopped_words(ws: Workspace, project: str | None) -> str:
    """What a person reads after Ctrl-C stopped the cycle: which one, where, and what runs next time."""
    record = dreaming.stopped_cycle(ws)
    try:
        plan = ws.dream_plan()
        nxt = f"the next `dreamtui dream` runs {plan.describe(project)}"
        if record is not None and plan.kind == "full":
            nxt += " again, finishing it (what it already extracted is kept)"
    except Exception:  # noqa: BLE001 - the words after a stop never fail the stop
        nxt = "run `dreamtui dream` again to finish it"
    if record is None:
        return f"stopped (Ctrl-C) before a dream cycle began: nothing was recorded; {nxt}"
    where = (record.error_message or "").split(":", 1)[0] or "its first phase"
    what = "on-demand dream pass" if record.on_demand else "dream cycle"
    return f"{what} #{record.id} stopped (Ctrl-C) in {where} and recorded as failed; {nxt}"


@cli.command("watch")
@click.option(
    "--poll",
    is_flag=True,
    default=None,
    help="Poll the folder instead of inotify (for network or odd file systems).",
)
@click.option(
    "--schedule", default=None, metavar="HH:MM", help="Also dream every project daily at this time (UTC)."
)
@click.option(
    "--debounce",
    type=float,
    default=1.0,
    show_default=True,
    help="Seconds of quiet before a burst of changes is handled.",
)
@click.option(
    "--install",
    "install_service",
    is_flag=True,
    help="Run watch as a service of your login (a systemd user unit, a launchd agent): print it, ask, write it, start it.",
)
@click.option(
    "--uninstall", "uninstall_service", is_flag=True, help="Stop the watch service and remove its file."
)
@click.option(
    "--yes", "-y", "assume_yes", is_flag=True, help="With --install/--uninstall: do not ask (for scripts)."
)
@pass_config
def watch(
    config: Config,
    poll: bool | None,
    schedule: str | None,
    debounce: float,
    install_service: bool,
    uninstall_service: bool,
    assume_yes: bool,
) -> None:
    """Watch the transcripts folder: dream a project when its person says good night, when Claude Code
    ends one of its sessions (the plugin's SessionEnd hook), and on a schedule.

    Runs until Ctrl-C or SIGTERM. Waking messages go to standard output, progress to standard error.
    One watch per state folder (`dreamtui status` says whether it runs). --install makes it a service of
    your login (systemd on Linux, launchd on macOS), shown before anything is written or started.
    """
    if install_service or uninstall_service:
        if install_service and uninstall_service:
            raise ConfigError("--install and --uninstall: one at a time")
        _service(config, install_service, assume_yes)
        return
    poll = config.poll if poll is None else poll
    schedule = schedule or config.schedule
    hm = dreaming.parse_schedule(schedule) if schedule else None

    def wake(record: CycleRecord) -> None:
        echo(waking_message(record))
        echo("", nl=True)

    with Workspace(config) as ws:
        daemon = dreaming.daemon(
            ws,
            poll=poll,
            schedule=hm,
            debounce=debounce,
            say=lambda text: echo(text, err=True),
            on_wake=wake,
            progress=_progress_printer(True),
        )
        previous = signal.signal(signal.SIGTERM, lambda _signum, _frame: daemon.stop())
        started = False
        lock = dreaming.watch_lock(ws)
        try:
            try:
                lock.acquire()
            except CycleBusy as exc:
                echo(f"dreamtui: {exc}", err=True)
                sys.exit(EXIT_BUSY)
            daemon.start()
            started = True
            how = "polling" if poll else "watching"
            when = f"; dreaming daily at {schedule} UTC" if hm else ""
            echo(f"dreamtui: {how} {config.transcripts}{when}; Ctrl-C to stop", err=True)
            estimate = dreaming.preview(ws)
            if estimate is not None and estimate.sessions:  # what its dreams would read now
                budget = (
                    f"; daily_token_budget {config.daily_token_budget:,}"
                    if config.daily_token_budget
                    else "; no daily_token_budget"
                )
                echo(f"dreamtui: {estimate.lines()[0]}{budget}", err=True)
            daemon.run()
        except KeyboardInterrupt:
            pass
        finally:
            daemon.close()
            lock.release()
            signal.signal(signal.SIGTERM, previous)
            if started:  # a folder that cannot be watched was never watched: its error says so
                echo("dreamtui: stopped watching", err=True)


def _service(config: Config, install: bool, assume_yes: bool) -> None:
    """``watch --install`` / ``--uninstall``: show the file and the commands, ask, then do it."""
    unit = watching.service_unit(config)
    if install:
        echo(f"dreamtui: watch as a {unit.kind} service: this writes {unit.path}:\n")
        echo(unit.text.rstrip("\n"))
        echo("\nand then runs:")
        for argv in unit.start:
            echo(f"  {' '.join(argv)}")
        question = "Install and start it?"
    else:
        if not unit.path.is_file():
            echo(f"dreamtui: no watch service is installed ({unit.path} does not exist)")
            return
        echo(f"dreamtui: this stops the watch service and removes {unit.path}; it runs:")
        for argv in (*unit.stop, *unit.reload):
            echo(f"  {' '.join(argv)}")
        question = "Stop and remove it?"
    if not assume_yes and not click.confirm(question, default=False):
        echo("dreamtui: nothing was written or run")
        return
    for line in watching.install(unit) if install else watching.uninstall(unit):
        echo(f"dreamtui: {line}")
    if install:
        echo("dreamtui: watch runs as a service now; `dreamtui status` says what it does")


@cli.command("status")
@click.option("--json", "as_json", is_flag=True, help="Print it as JSON.")
@pass_config
def status_cmd(config: Config, as_json: bool) -> None:
    """Whether `dreamtui watch` runs, when dreamtui last dreamed, and what waits for you."""
    with Workspace(config) as ws:
        st = watching.watch_status(ws)
    if as_json:
        echo_json(json.dumps(st.to_json(), indent=2, ensure_ascii=False))
        return
    if st.running:
        who = f" (pid {st.pid}, since {st.since})" if st.pid else ""
        echo(f"watch: running{who}")
    else:
        echo("watch: not running (`dreamtui watch`, or `dreamtui watch --install` to run it at login)")
    echo(f"service: {st.service}" if st.service else "service: not installed")
    last = st.last_cycle
    if last is None:
        echo("last dream: never")
    else:
        when = last.completed_at or last.started_at
        echo(f"last dream: cycle #{last.id} of {last.date} ({last.trigger}), {last.status} at {when}")
    waits = [f"{st.proposals} proposal{'s' if st.proposals != 1 else ''}"]
    if st.briefing:
        waits.append("a new briefing.md")
    echo(
        f"waiting for review: {', '.join(waits)}"
        + (" (review: `dreamtui`)" if st.proposals or st.briefing else "")
    )
    ended = f"{st.ended_sessions} ended session{'s' if st.ended_sessions != 1 else ''}"
    projects = len(st.new_projects)
    echo(f"not dreamed yet: {ended}; new content in {projects} project{'s' if projects != 1 else ''}")


@cli.command("briefing")
@click.option("--history", is_flag=True, help="List every version of the briefing (newest first).")
@click.option("--at", "sha", default=None, metavar="SHA", help="Print the briefing as it was in this commit.")
@click.option(
    "--pending",
    is_flag=True,
    help="Show the version waiting for review as a diff against the current briefing.md.",
)
@click.option(
    "--accept", is_flag=True, help="Accept the waiting version: briefing.md becomes it, one commit."
)
@click.option("--reject", is_flag=True, help="Reject the waiting version (kept in the ledger with --reason).")
@click.option("--reason", default="", help="With --reject: why (needed).")
@click.option("--id", "bid", type=int, default=None, metavar="N", help="Act on briefing proposal #N.")
@click.option("--json", "as_json", is_flag=True, help="With --history or --pending: print JSON.")
@pass_config
def briefing_cmd(
    config: Config,
    history: bool,
    sha: str | None,
    pending: bool,
    accept: bool,
    reject: bool,
    reason: str,
    bid: int | None,
    as_json: bool,
) -> None:
    """Print the briefing (what is worked on, decided, open; each line with its source), or its history.

    Each full dream cycle proposes a new version built from accepted memories and the transcripts;
    until auto-write is promoted it waits for you: --pending shows it, --accept commits it,
    --reject [--reason] keeps it out.
    """
    if sum([history, sha is not None, pending, accept, reject]) > 1:
        raise ConfigError("choose one of --history, --at, --pending, --accept, --reject")
    if reason and not reject:
        raise ConfigError("--reason goes with --reject")
    if pending or accept or reject:
        _briefing_decision(config, pending, accept, bid, reason, as_json)
        return
    if history:
        versions = briefings.history(config)
        if as_json:
            echo_json(json.dumps([v.to_json() for v in versions], indent=2))
            return
        if not versions:
            echo("no briefing yet: run `dreamtui dream`", err=True)
            return
        for v in versions:
            echo(f"{v.sha[:10]}  {v.date}  {v.subject}")
        return
    text = briefings.text(config, sha)
    waiting = _waiting(config)
    if text is None:
        where = f"in commit {sha}" if sha else f"in {briefings.path(config)}"
        hint = (
            f"; version #{waiting.id} waits for review: `dreamtui briefing --pending`"
            if waiting
            else ": run `dreamtui dream` first"
        )
        raise DreamError(f"no briefing {where}{hint}")
    echo(text, nl=not text.endswith("\n"))
    if waiting is not None and not sha:
        echo(f"dreamtui: briefing #{waiting.id} waits for review: `dreamtui briefing --pending`", err=True)
    kinds = _consolidations_waiting(config) if not sha else {}
    if any(kinds.values()):
        echo(
            f"dreamtui: consolidation proposals wait for review ({dreaming.consolidation_summary(kinds)}): "
            "`dreamtui consolidate`",
            err=True,
        )


def _consolidations_waiting(config: Config) -> dict[str, int]:
    """Pending consolidation proposals per kind (issue 26), without creating a ledger."""
    ws = Workspace.if_exists(config)
    if ws is None:
        return {}
    with ws:
        return ws.consolidations_waiting()


def _waiting(config: Config) -> BriefingProposal | None:
    """The briefing version waiting for review, without creating a ledger."""
    ws = Workspace.if_exists(config)
    if ws is None:
        return None
    with ws:
        return ws.waiting_briefing()


def _briefing_decision(
    config: Config, show: bool, accept: bool, bid: int | None, reason: str, as_json: bool
) -> None:
    """``--pending`` / ``--accept`` / ``--reject`` of ``dreamtui briefing``."""
    with Workspace(config) as ws:
        if show:
            prop = ws.briefing_proposal(bid)
            if prop is None:
                raise DreamError(f"no briefing #{bid}" if bid is not None else "no briefing waits for review")
            lines = ws.briefing_diff(prop)
            if as_json:
                echo_json(json.dumps({**prop.to_json(), "diff": lines}, indent=2, ensure_ascii=False))
                return
            what = "auto-written, to review after the fact" if prop.status == "accepted" else prop.status
            echo(f"Briefing #{prop.id} ({what}), proposed {prop.created_at[:16].replace('T', ' ')}:")
            for line in lines or ["(no difference from the current briefing.md)"]:
                echo(line)
            if prop.awaits_review:
                echo(
                    "Accept: `dreamtui briefing --accept` · reject: `dreamtui briefing --reject --reason ...`",
                    err=True,
                )
            return
        if accept:
            prop = ws.accept_briefing(bid)
            done = f"commit {prop.commit_sha[:10]}" if prop.commit_sha else "no change to the file"
            echo(f"Accepted briefing #{prop.id}: {briefings.path(config)} ({done}).")
        else:
            prop, reverted = ws.reject_briefing(bid, reason)
            why = f": {prop.reason}" if prop.reason else ""
            back = f"; the version before it is back (commit {reverted[:10]})" if reverted else ""
            echo(f"Rejected briefing #{prop.id}{why}{back}.")
