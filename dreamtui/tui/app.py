"""The review workstation: the app, its screens, the decision worker, the watcher and dream cycles."""

from __future__ import annotations

import asyncio
import queue
import sys
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.text import Text
from textual import work
from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.message import Message
from textual.screen import ModalScreen, Screen
from textual.signal import Signal
from textual.worker import Worker, WorkerState, get_current_worker

from dreamtui.core.config import KEY_ACTIONS, Config
from dreamtui.core.errors import CycleBusy
from dreamtui.services import DecisionResult, Ledger, Status, Workspace, dreaming, outside
from dreamtui.services.outside import OutsideWatcher, ScanReport
from dreamtui.services.presence import AppPresence
from dreamtui.services.settings import save_ui
from dreamtui.services.transcripts import (
    ProjectNames,
    Watcher,
    project_of_transcript,
    watched_alone,
    watched_folders,
)
from dreamtui.tui import progress as cycle_words
from dreamtui.tui.live import LedgerFollower, LiveTail
from dreamtui.tui.messages import (
    AppsOpen,
    Change,
    CycleFinished,
    CycleProgress,
    DecisionDone,
    DecisionFailed,
    GoodnightHeard,
    KeepSetting,
    LedgerChanged,
    LiveLines,
    MemoryReverted,
    OutsideScanned,
    PathSkipped,
    ShowProposalsOf,
    StatusRead,
    TranscriptsChanged,
)
from dreamtui.tui.screen_keys import SCREENS_KEYS
from dreamtui.tui.screens.briefings import BriefingsScreen
from dreamtui.tui.screens.cycles import CyclesScreen
from dreamtui.tui.screens.help import HelpScreen, guide, key_lines
from dreamtui.tui.screens.memory import MemoryScreen
from dreamtui.tui.screens.modals import SpendModal
from dreamtui.tui.screens.promotion import PromotionScreen
from dreamtui.tui.screens.queue import QueueScreen
from dreamtui.tui.screens.sessions import SessionsScreen
from dreamtui.tui.screens.stats import StatsScreen
from dreamtui.tui.toasts import toast_text
from dreamtui.tui.widgets.literal import literal

LIVE_MAX_LINES_PER_EVENT = 50


def one_line_error(exc: BaseException) -> str:
    """A person-readable one-line message for an exception."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return literal(text, 300, one_line=True)


@dataclass(slots=True)
class DecisionJob:
    """One decision waiting for the decision worker."""

    action: str
    candidate_id: str | None
    kwargs: dict[str, Any] = field(default_factory=dict)


class DreamApp(App[object]):
    """dreamtui's review workstation.

    Screens and the app talk by messages and signals: a screen posts a message for what concerns the
    whole app (show the queue filtered, a memory reverted); the app publishes on ``changed`` what
    the screens' data comes from (a decision, a cycle, new transcript lines), and each screen decides
    what that means for it; ``live_lines`` carries the live tail, ``cycle_log`` a running cycle's
    progress, ``queue_filter`` a filter for the queue, ``status_changed`` and ``activity_changed``
    what the headers show.
    """

    CSS_PATH = "app.tcss"
    TITLE = "dreamtui"
    NOTIFICATION_TIMEOUT = 4  # seconds: a toast must not sit over the evidence (decisions' notes: 3)
    MODES = {
        "queue": QueueScreen,
        "sessions": SessionsScreen,
        "cycles": CyclesScreen,
        "briefings": BriefingsScreen,
        "stats": StatsScreen,
        "memory": MemoryScreen,
        "promotion": PromotionScreen,
    }
    DEFAULT_MODE = "queue"
    # below 120 columns the screens get the class -narrow (app.tcss: fixed-width tables give way)
    # from 160 columns -xwide: the queue takes more of the width (its project and claim columns grow)
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (120, "-wide"), (160, "-xwide")]
    # below 36 rows the screens get -short (app.tcss: dialogs lose their spacing and keep their buttons)
    VERTICAL_BREAKPOINTS = [(0, "-short"), (36, "-tall")]
    BINDINGS = [
        # the screens are shown as numbered tabs under the header, so the footer keeps room for the screen's keys
        *(
            Binding(key, f"switch_mode('{mode}')", f"{label} screen", id=f"screen.{mode}", show=False)
            for key, mode, label in SCREENS_KEYS
        ),
        Binding("d", "dream", "Dream", tooltip="Dream now: a cycle in the background", id="dream"),
        Binding("q", "quit", "Quit", id="quit"),
        Binding(
            "ctrl+r",
            "refresh",
            "Refresh",
            show=False,
            tooltip="Read everything again (another app's or the command line's decisions show by themselves)",
            id="refresh",
        ),
        Binding("question_mark,f1", "help", "Help", id="help"),
    ]

    def __init__(
        self,
        config: Config,
        ledger: Ledger | None = None,
        *,
        watch: bool = True,
        watch_debounce: float = 1.0,
        reconcile: bool = True,
        theme_file: Path | None = None,
        follow: float | None = 1.0,
    ) -> None:
        super().__init__()
        self.config = config
        # the demo's config names no file (it never writes the person's settings), but the theme chosen
        # in it is the person's own taste: kept in their config file (``theme_file``) all the same
        self.theme_file = theme_file
        self.workspace = Workspace(config, ledger)  # opens the config's ledger when none is given
        self.watch_enabled = watch
        self.watch_debounce = watch_debounce
        self.reconcile_on_start = reconcile
        self.follow_seconds = follow  # how often the ledger is looked at for others' changes (None: never)
        self._follower: LedgerFollower | None = None
        self.other_apps: list[int] = []  # pids of the other dreamtui apps open on this ledger
        self._jobs: queue.Queue[DecisionJob] = queue.Queue()
        self._watcher: Watcher | None = None
        self._skip_notices: set[str] = set()
        self._held_notes: list[tuple[str, str, Any, float | None]] = []  # toasts held under a dialog
        self._notices_seen: set[str] = set()  # a decision's warnings already shown (each once)
        self.cycle_running = False
        self.in_flight: set[str] = set()  # proposals whose accept/reject is queued or being written
        self.decisions_finished = 0  # decisions done or failed (a queue read while one ended is read again)
        self.progress_log: list[str] = []
        self._stop_cycle = threading.Event()  # set: the running cycle stops at its next safe point
        self._cycle_idle = threading.Event()  # clear while a cycle's thread runs
        self._cycle_idle.set()
        self.project_namer = ProjectNames(config.transcripts)  # folder -> the name its records' cwd gives
        self.live_tail = LiveTail(config.transcripts, self.project_namer)
        self.changed: Signal[Change] = Signal(self, "changed")
        self.live_lines: Signal[list[Text]] = Signal(self, "live_lines")
        self.cycle_log: Signal[list[str]] = Signal(self, "cycle_log")
        self.queue_filter: Signal[str] = Signal(self, "queue_filter")
        self.status_changed: Signal[Status] = Signal(self, "status_changed")
        self.activity_changed: Signal[str] = Signal(self, "activity_changed")
        self.apps_changed: Signal[list[int]] = Signal(self, "apps_changed")
        if config.keys:  # before the first screen is composed, so its footer shows the keys in effect
            self.set_keymap(dict(config.keys))

    # -- life cycle -------------------------------------------------------------------------------

    def on_mount(self) -> None:
        theme = self.config.ui.get("theme")
        if theme and theme in self.available_themes:
            self.theme = theme
        self.theme_changed_signal.subscribe(self, lambda theme: self.save_setting("theme", theme.name))
        self.refresh_status()
        self._decision_loop()
        if self.reconcile_on_start:
            self._reconcile()
        if self.watch_enabled:
            self.start_watcher()
        if self.follow_seconds is not None:
            self._follower = LedgerFollower(
                self.workspace,
                AppPresence(self.config.state),
                changed=lambda: self._post(LedgerChanged()),
                apps=lambda pids: self._post(AppsOpen(list(pids))),
                interval=self.follow_seconds,
            )
            self._follower.start()

    _quitting = False

    def on_keep_setting(self, message: KeepSetting) -> None:
        self.save_setting(message.key, message.value)

    def save_setting(self, key: str, value: str) -> None:
        """Keep a setting the person changed (theme, the queue's order) in their config file's ``[ui]``
        table, the rest of the file untouched; a file that cannot take it gets a warning, nothing else."""
        path = self.config.config_file or (self.theme_file if key == "theme" else None)
        if path is None or self.config.ui.get(key) == value:
            return
        try:
            save_ui(path, {key: value})
        except Exception as exc:  # noqa: BLE001 - a setting not saved is a warning, never a crash
            self.notify(f"setting not saved: {one_line_error(exc)}", severity="warning")
            return
        self.config = self.config.changed(ui={**self.config.ui, key: value})

    async def action_quit(self) -> None:
        """Quit once every decision already taken is written: a row leaves the table when its key is
        pressed, so a quick ``a a q`` must not lose the accepts still queued for the worker. A running
        dream cycle is asked to stop at its next safe point (a phase boundary, or between two sessions
        while reading), and the app quits when it has. ``q`` again quits at once (a cycle still stops
        at its next safe point before the process ends; the terminal says so)."""
        if self._quitting:
            self.exit()
            return
        waiting = self._jobs.unfinished_tasks if self._decisions_running() else 0
        dreaming = not self._cycle_idle.is_set()
        if not waiting and not dreaming:
            self.exit()
            return
        self._quitting = True
        writing = f"Writing {waiting} {'decision' if waiting == 1 else 'decisions'}"
        if dreaming:
            self._stop_cycle.set()
            self.set_activity("finishing the dream cycle… (quitting)")
            text = (
                f"{writing} and finishing the dream cycle (it stops at its next phase) before quitting…"
                if waiting
                else "Finishing the dream cycle… it stops at its next phase, then dreamtui quits"
            )
        else:
            text = f"{writing} before quitting…"
        self.notify(f"{text} (q again quits now)", timeout=60)
        self.set_interval(0.05, self._exit_when_written)

    def _decisions_running(self) -> bool:
        return any(w.name == "decisions" and not w.is_finished for w in self.workers)

    def _exit_when_written(self) -> None:
        written = not self._jobs.unfinished_tasks or not self._decisions_running()
        if written and self._cycle_idle.is_set():
            self.exit()

    async def run_async(self, **kwargs: Any) -> object | None:
        """Run the app; when it was closed while a dream cycle's thread still runs (``q q``), say so on
        the terminal and wait for the cycle to reach its next safe point (the process could not end
        before it anyway), instead of a silent pause after the screen is gone."""
        result = await super().run_async(**kwargs)
        if not self._cycle_idle.is_set():
            self._stop_cycle.set()
            print(
                "dreamtui: the dream cycle stops at its next phase boundary; waiting for it…", file=sys.stderr
            )
            while not self._cycle_idle.is_set():
                await asyncio.sleep(0.1)
            print(f"dreamtui: the dream cycle {cycle_words.CYCLE_STOPPED}", file=sys.stderr)
        return result

    _outside_watcher: OutsideWatcher | None = None

    def on_unmount(self) -> None:
        if self._follower is not None:
            self._follower.stop()
        if self._outside_watcher is not None:
            self._outside_watcher.stop()
        if self._watcher is not None:
            try:
                self._watcher.stop(timeout=2.0)
            except Exception:  # noqa: BLE001 - shutting down
                pass

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: Any = "information",
        timeout: float | None = None,
        markup: bool = False,
    ) -> None:
        """A toast, always shown literally: its text often carries a project folder, a path or an error
        from a transcript, and Textual would read ``[…]`` in it as markup (styles, ``@click`` actions).
        ``Widget.notify`` passes ``markup=True`` by default, so ``markup`` is ignored here.

        Short: at most :data:`TOAST_LINES` lines of text (:func:`toast_text`). Never over a dialog: one
        raised while a dialog (or the help) is open is held until it closes (:meth:`release_notes`);
        a dialog's own word (``The claim cannot be empty``) goes through :meth:`notify_over_dialog`."""
        text = toast_text(message, self.size.width)
        if isinstance(self.screen, ModalScreen):
            self._held_notes.append((text, title, severity, timeout))
            return
        super().notify(text, title=title, severity=severity, timeout=timeout, markup=False)

    def notify_over_dialog(self, message: str, *, severity: Any = "information") -> None:
        """A toast from the open dialog itself (about what is typed in it): shown at once."""
        super().notify(toast_text(message, self.size.width), severity=severity, markup=False)

    def release_notes(self) -> None:
        """Show the toasts held while a dialog was open (a screen of the app is on top again)."""
        held, self._held_notes = self._held_notes, []
        for text, title, severity, timeout in held:
            self.notify(text, title=title, severity=severity, timeout=timeout)

    def notice_once(self, notice: str) -> bool:
        """Whether ``notice`` (a warning a decision came with: git's missing identity, a hook) is new
        in this session; a repeated one is shown once."""
        if notice in self._notices_seen:
            return False
        self._notices_seen.add(notice)
        return True

    def key_for(self, binding_id: str) -> str:
        """The key in effect for the binding ``binding_id`` as the footer shows it (the config's
        ``[keys]`` remapping it, else its default; the first of several)."""
        keys = self.config.keys.get(binding_id) or KEY_ACTIONS[binding_id][1]
        first = keys.split(",")[0].strip()
        return self.get_key_display(Binding(first, ""))

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        for _key, mode, label in SCREENS_KEYS:
            yield SystemCommand(
                f"Screen: {label}",
                f"key {self.key_for(f'screen.{mode}')} · Show the {label} screen",
                lambda m=mode: self.switch_mode(m),
            )
        yield SystemCommand(
            "Dream now",
            f"key {self.key_for('dream')} · Run a dream cycle in the background",
            self.action_dream,
        )
        yield SystemCommand(
            "Help: keys of this screen",
            f"key {self.key_for('help')} · Every key of the current screen and the global ones",
            self.action_help,
        )
        queue_actions = (
            ("Accept", "accept", "Accept the highlighted proposal (one commit)"),
            ("Reject", "reject", "Reject the highlighted proposal with a reason"),
            ("Edit then accept", "edit", "Edit claim/why/how, type and scope, then accept"),
            ("Skip", "skip", "Skip the highlighted proposal for now"),
            ("Undo", "undo", "Undo the last decision (an accept is reverted by a commit)"),
            ("Filter", "filter", "Filter the queue"),
            ("Sort", "sort", "Change the queue order"),
            ("Agent", "agent", "Show one agent's proposals (again: the next agent, then every agent)"),
        )
        for title, action, help_text in queue_actions:
            yield SystemCommand(
                title,
                f"key {self.key_for(action)} · {help_text} (queue)",
                lambda a=action: self._queue_action(a),
            )

    def action_help(self) -> None:
        """Show every key of the current screen and the global ones (``?`` or F1; Esc or ``?`` closes)."""
        if isinstance(self.screen, HelpScreen):
            self.screen.dismiss(None)
            return
        name = getattr(self.screen, "TITLE_TEXT", "")
        # the queue's columns as shown now: at 80 columns the help must not describe a column left out
        columns = (
            [field for field, _width in self.screen.table.fields] + ["claim"]
            if isinstance(self.screen, QueueScreen)
            else None
        )
        self.push_screen(
            HelpScreen(name.capitalize(), key_lines(self.screen), guide(name, self.key_for, columns))
        )

    def _queue_action(self, action: str) -> None:
        """A queue action from the command palette: on the queue (shown first when it is not)."""
        if isinstance(self.screen, QueueScreen):
            self.call_later(self._run_queue_action, action)
        else:
            self.switch_mode("queue")
            self.call_after_refresh(self._run_queue_action, action)

    async def _run_queue_action(self, action: str) -> None:
        if isinstance(self.screen, QueueScreen):
            await self.screen.run_action(action)

    def on_show_proposals_of(self, message: ShowProposalsOf) -> None:
        """Switch to the queue with its filter set to ``message.text`` (e.g. a session id)."""
        self.switch_mode("queue")
        self.call_after_refresh(self.queue_filter.publish, message.text)

    def export_screenshot(self, *, title: str | None = None, simplify: bool = False) -> str:
        """The screen as SVG (also used by ``save_screenshot`` and the snapshot tests), with
        ``xml:space="preserve"``: Rich writes one ``<text>`` per styled run and spaces as ``&#160;``,
        and without it some renderers (librsvg's ``rsvg-convert``, image viewers built on it) drop a
        run's leading spaces, so ``11 proposals`` would show as ``11proposals``."""
        svg = super().export_screenshot(title=title, simplify=simplify)
        return svg.replace("<svg ", '<svg xml:space="preserve" ', 1)

    # -- status -----------------------------------------------------------------------------------

    last_status: Status | None = None  # what the headers show until a newer status is read
    _status_asked = 0  # the newest status read asked for
    _status_shown = 0  # the newest status read shown

    def refresh_status(self) -> None:
        """Read the header's data again in a worker; the headers show the last status read meanwhile
        and the new one when it is published on ``status_changed``."""
        self._status_asked += 1
        self._read_status(self._status_asked)

    @work(thread=True, exit_on_error=False, group="status", name="status")
    def _read_status(self, asked: int) -> None:
        try:
            status = self.workspace.status()
        except Exception as exc:  # noqa: BLE001 - a header must never crash the app
            self.post_message(StatusRead(asked, error=one_line_error(exc)))
            return
        self.post_message(StatusRead(asked, status))

    @property
    def status_is_current(self) -> bool:
        """The headers show the newest status read asked for (none is under way)."""
        return self._status_shown >= self._status_asked

    def on_status_read(self, message: StatusRead) -> None:
        """Show a status read, unless a newer one was shown already."""
        if message.asked < self._status_shown:
            return
        self._status_shown = message.asked
        if message.status is None:
            self.notify(f"cannot read status: {message.error}", severity="error")
            return
        self.last_status = message.status
        self.status_changed.publish(message.status)

    activity = ""  # what runs in the background (a dream cycle's phase), shown under the header

    def set_activity(self, text: str) -> None:
        """Say in every header what runs in the background (``""``: nothing)."""
        self.activity = text
        self.activity_changed.publish(text)

    # -- decisions --------------------------------------------------------------------------------

    def decide(self, action: str, candidate_id: str | None, **kwargs: Any) -> None:
        """Queue a decision for the decision worker (decisions run in order, off the UI thread).

        A method the queue screen calls, not a message: it must be queued before the next key is
        handled (``a a q`` quits only once both accepts are written)."""
        if candidate_id and (
            action in ("accept", "reject") or action.startswith(("outside-", "consolidate-"))
        ):
            self.in_flight.add(candidate_id)
        self._jobs.put(DecisionJob(action, candidate_id, kwargs))

    @property
    def decisions_waiting(self) -> int:
        """Decisions queued or running."""
        return self._jobs.unfinished_tasks

    @work(thread=True, exit_on_error=False, group="decisions", name="decisions")
    def _decision_loop(self) -> None:
        worker = get_current_worker()
        while not worker.is_cancelled:
            try:
                job = self._jobs.get(timeout=0.1)
            except queue.Empty:
                continue
            try:
                result = self._decide_now(job)
                self.post_message(DecisionDone(job.action, result.candidate_id, result.summary))
            except Exception as exc:  # noqa: BLE001 - every failure becomes a notification
                self.post_message(DecisionFailed(job.action, job.candidate_id, one_line_error(exc)))
            finally:
                self._jobs.task_done()

    def _decide_now(self, job: DecisionJob) -> DecisionResult:
        """Run one decision (in the decision worker's thread)."""
        cid = job.candidate_id
        if job.action == "undo":
            return self.workspace.undo()
        if job.action.startswith("outside-"):
            reason = job.kwargs.get("reason") or ""
            confirmed = bool(job.kwargs.get("confirmed"))
            return DecisionResult(
                outside.decide(self.workspace, job.action, cid or "", reason, confirmed=confirmed), cid
            )
        if job.action == "consolidate-accept":
            return self.workspace.accept_consolidation(
                cid or "", allow_tool=job.kwargs.get("allow_tool", False)
            )
        if job.action == "consolidate-reject":
            return self.workspace.reject_consolidation(
                cid or "", job.kwargs.get("reason") or "rejected in the app"
            )
        if cid is None:
            raise ValueError(f"{job.action}: no proposal is named")
        if job.action == "accept":
            return self.workspace.accept(
                cid, job.kwargs.get("edits"), allow_tool=job.kwargs.get("allow_tool", False)
            )
        if job.action == "reject":
            return self.workspace.reject(cid, job.kwargs["category"], job.kwargs.get("reason", ""))
        return self.workspace.skip(cid)

    def claim_named(self, cid: str | None, detail: str) -> str:
        """A decision's note with the proposal named by its claim (cut, in quotes) instead of its id:
        ``accepted “Use the testcontainers fixture…” → projects/…/x.md (1a2b3c4d)``."""
        cand = self.workspace.candidate(cid) if cid else None
        if cand is None:
            return detail
        text = literal(cand.claim, 1000, one_line=True)
        claim = f"“{text if len(text) <= 60 else text[:59] + '…'}”"
        if cid and cid in detail:
            return detail.replace(cid, claim)
        for verb in ("accepted", "rejected"):
            if detail.startswith(verb):
                return f"{verb} {claim}{detail[len(verb) :]}"
        return f"{claim}: {detail}"

    def on_decision_done(self, message: DecisionDone) -> None:
        self.in_flight.discard(message.candidate_id or "")
        self.decisions_finished += 1
        # "accepted → x.md (1a2b3c4d) · git has no user.name…": the decision, then the warnings it came
        # with, each its own short toast and each once in a session
        first, *notices = message.detail.split(" · ")
        if message.action in ("accept", "reject", "undo", "reconcile"):
            self.notify(self.claim_named(message.candidate_id, first), timeout=3)
        elif message.action.startswith(("outside-", "consolidate-")):
            self.notify(first, timeout=3)
        if message.action != "skip":
            for notice in notices:
                if self.notice_once(notice):
                    self.notify(notice, severity="warning", timeout=4)
        self.refresh_status()
        self.changed.publish(Change(message.action, message.candidate_id))

    def on_decision_failed(self, message: DecisionFailed) -> None:
        self.in_flight.discard(message.candidate_id or "")
        self.decisions_finished += 1
        self.notify(
            self.claim_named(message.candidate_id, f"{message.action} failed: {message.error}"),
            severity="error",
            timeout=8,
        )
        self.refresh_status()
        self.changed.publish(Change("failed", message.candidate_id))

    # -- errors from any worker ------------------------------------------------------------------

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """The one place worker errors become notifications."""
        if event.state == WorkerState.ERROR and event.worker.error is not None:
            self.notify(
                f"{event.worker.name or 'background task'} failed: {one_line_error(event.worker.error)}",
                severity="error",
                timeout=10,
            )
            if event.worker.group == "cycle":
                self.cycle_running = False
                self.set_activity("")

    @work(thread=True, exit_on_error=False, name="reconcile")
    def _reconcile(self) -> None:
        note = self.workspace.reconcile()
        if note:
            self.post_message(DecisionDone("reconcile", None, note))
        if self.watch_enabled:
            self.start_outside_watcher()  # it scans first
        else:
            self._outside_scanned(outside.scan_if_repository(self.workspace))

    def start_outside_watcher(self) -> None:
        """Watch the memory repository for changes dreamtui did not make (issue 17); each scan that finds
        something reloads the queue."""
        # a memory folder the first dream has still to create is waited for by the watcher itself
        watcher = outside.watcher(self.config, self._outside_scanned)
        try:
            watcher.start()
        except Exception as exc:  # noqa: BLE001 - watching is a help, never a reason to fail
            self.post_message(DecisionFailed("watch", None, one_line_error(exc)))
            return
        self._outside_watcher = watcher  # set once it watches (a change made from now on is seen)

    def _outside_scanned(self, report: ScanReport | None) -> None:
        """From any thread: a scan found outside changes; the app says so (:meth:`on_outside_scanned`)."""
        if report is not None and (report.new or report.updated or report.gone):
            self.post_message(OutsideScanned(report))

    def on_outside_scanned(self, message: OutsideScanned) -> None:
        """Name each batch of outside changes in a notification; the queue shows them."""
        report = message.report
        for batch in outside.batches(self.workspace):
            if batch.id in report.batches:
                self.notify(
                    batch.summary(), title="Memory changed outside dreamtui", severity="warning", timeout=10
                )
        if report.new and not report.batches:
            self.notify(
                f"{len(report.new)} change(s) to the memory repository wait for review",
                title="Memory changed outside dreamtui",
                timeout=5,
            )
        self.refresh_status()
        self.changed.publish(Change("outside"))

    # -- dream cycles -----------------------------------------------------------------------------

    def action_dream(self, project: str | None = None, trigger: str = "manual") -> None:
        """Run a dream cycle in a background thread; progress shows in the header."""
        if self.cycle_running:
            self.notify("A dream cycle is already running", severity="warning")
            return
        if self._quitting:
            self.notify("Quitting: no new dream cycle", severity="warning")
            return
        self.cycle_running = True
        self._stop_cycle.clear()
        self._cycle_idle.clear()
        self.progress_log = []
        self.set_activity("dreaming: starting")
        self._run_cycle(project, trigger)

    @work(thread=True, exit_on_error=False, group="cycle", name="dream cycle")
    def _run_cycle(self, project: str | None, trigger: str) -> None:
        try:
            self._dream(project, trigger)
        finally:
            self._cycle_idle.set()

    def _dream(self, project: str | None, trigger: str) -> None:
        worker = get_current_worker()
        thread = threading.get_ident()

        def progress(phase: str, message: str = "", fraction: float | None = None) -> None:
            # quitting (or the worker cancelled as the app closes): stop here if it is a safe point;
            # only on the cycle's own thread (branches report from a pool)
            if (
                (self._stop_cycle.is_set() or worker.is_cancelled)
                and threading.get_ident() == thread
                and cycle_words.cycle_stop_point(phase, message, fraction)
            ):
                raise cycle_words.CycleStopped(cycle_words.CYCLE_STOPPED)
            self.post_message(CycleProgress(phase, cycle_words.describe_progress(phase, message, fraction)))

        if trigger == "manual" and not self._spend_agreed(project, worker):
            return
        try:
            record = dreaming.dream(self.workspace, project=project, trigger=trigger, progress=progress)
        except dreaming.BudgetSpent as exc:  # nothing sent: tomorrow's dream goes on
            self.post_message(CycleFinished(error=one_line_error(exc), refused=True))
            return
        except dreaming.NothingNew as exc:  # asked after the day's full cycle, nothing written since
            self.post_message(CycleFinished(f"{str(exc)[:1].upper()}{str(exc)[1:]}."))
            return
        except cycle_words.CycleStopped:
            self.post_message(CycleFinished(error=cycle_words.CYCLE_STOPPED))
            return
        except CycleBusy as exc:  # another process's cycle runs, or the day is dreamed: not a failure
            self.post_message(CycleFinished(error=one_line_error(exc), refused=True))
            return
        except Exception as exc:  # noqa: BLE001 - reported as a notification, never a crash
            self.post_message(CycleFinished(error=one_line_error(exc)))
            return
        short = (
            f"{dreaming.waking_message(record).splitlines()[0]} {dreaming.new_proposals(record.stats)} "
            f"({self.key_for('screen.cycles')}: Cycles has the whole message)"
        )
        self.post_message(CycleFinished(dreaming.waking_message(record), short=short))

    def _spend_agreed(self, project: str | None, worker: Worker[Any]) -> bool:
        """From the cycle's thread, before a person's dream: when it asks a model and is the first one
        (or a big one), show what it would read and send (:class:`SpendModal`) and wait for the answer.
        False (and the cycle ends, nothing sent) when the person said no or the app is quitting."""
        try:
            estimate = dreaming.preview(self.workspace, project)
        except Exception as exc:  # noqa: BLE001 - an estimate that fails is told, never a crash
            self.post_message(CycleFinished(error=one_line_error(exc)))
            return False
        if estimate is None or not estimate.asks(self.workspace.config):
            return True
        decided = threading.Event()
        answer = [False]

        def done(yes: bool | None) -> None:
            answer[0] = bool(yes)
            decided.set()

        def ask() -> None:
            self.push_screen(SpendModal(estimate.lines()), done)

        self.call_from_thread(ask)
        while not decided.wait(0.1):
            if self._stop_cycle.is_set() or worker.is_cancelled:
                self.post_message(CycleFinished(error=cycle_words.CYCLE_STOPPED))
                return False
        if not answer[0]:
            self.post_message(CycleFinished("Nothing was sent: no dream ran."))
        return answer[0]

    def on_cycle_progress(self, message: CycleProgress) -> None:
        if self._goodnight is not None:  # the good night's cycle runs: only now is "dreaming" true
            self.notify(f"Good night heard in {self._goodnight}: dreaming", title="Goodnight")
            self._goodnight = None
        self.progress_log = [*self.progress_log[-199:], message.detail or message.phase]
        doing = "finishing the dream cycle… (quitting)" if self._quitting else "dreaming"
        self.set_activity(f"{doing}: {message.detail or message.phase}")
        self.cycle_log.publish(self.progress_log)

    def on_cycle_finished(self, message: CycleFinished) -> None:
        self.cycle_running = False
        self.set_activity("")
        goodnight, self._goodnight = self._goodnight, None
        if message.refused:
            said = f"Good night heard in {goodnight}: not dreaming" if goodnight else "Not dreaming"
            self.notify(f"{said}, {message.error}", severity="warning", timeout=10)
        elif message.error == cycle_words.CYCLE_STOPPED:
            self.notify(f"dream cycle {message.error}", severity="warning", timeout=10)
        elif message.error:
            self.notify(f"dream cycle failed: {message.error}", severity="error", timeout=10)
        else:  # the whole waking message is on the Cycles screen; a toast of 20 lines covered the pane
            self.notify(message.short or message.summary or "dream cycle finished", title="Waking", timeout=5)
        self.refresh_status()
        self.changed.publish(Change("cycle"))
        after, self._goodnight_after = self._goodnight_after, None
        if after is not None and not self._quitting:
            self._goodnight = after
            self.action_dream(after, "goodnight")

    # -- others' changes ---------------------------------------------------------------------------

    def on_ledger_changed(self, _message: LedgerChanged) -> None:
        """Another process decided or dreamed: every header and the screen shown read it again."""
        self.refresh_status()
        self.changed.publish(Change("ledger"))

    def action_refresh(self) -> None:
        """Read everything again now (the follower does it by itself about once a second)."""
        self.refresh_status()
        self.changed.publish(Change("ledger"))
        self.notify("Read again from the ledger and the memory repository", timeout=2)

    def on_apps_open(self, message: AppsOpen) -> None:
        """Another dreamtui app opened (or closed) on this ledger: say so, in a note and in the header."""
        new = [pid for pid in message.pids if pid not in self.other_apps]
        self.other_apps = message.pids
        self.apps_changed.publish(message.pids)
        if new:
            self.notify(
                f"Another dreamtui app is open on this ledger (pid {', '.join(map(str, new))}): its decisions "
                "show here as they are made",
                title="Two apps",
                severity="warning",
                timeout=8,
            )

    # -- live transcripts -------------------------------------------------------------------------

    def _post(self, message: Message) -> None:
        """``post_message`` for a callback that returns nothing (from any thread)."""
        self.post_message(message)

    def start_watcher(self) -> None:
        """Watch the transcripts folder in the watcher's thread; changes arrive as messages."""
        root = self.config.transcripts
        if not root.is_dir():
            return
        self._watcher = Watcher(
            root,
            extra=watched_folders(self.config),
            singles=watched_alone(self.config),
            project_of=project_of_transcript(self.config),
            on_change=lambda paths: self._post(TranscriptsChanged(list(paths))),
            on_goodnight=lambda project: self._post(GoodnightHeard(project)),
            on_skip=lambda notice: self._post(PathSkipped(notice)),
            on_error=lambda exc: self._post(DecisionFailed("watch", None, one_line_error(exc))),
            poll=self.config.poll,
            debounce=self.watch_debounce,
            rescan_seconds=self.config.rescan_seconds,
        )
        try:
            self._watcher.start()
        except Exception as exc:  # noqa: BLE001
            self._watcher = None
            self.notify(f"cannot watch {root}: {one_line_error(exc)}", severity="warning")
            return
        for path, (size, _mtime) in self._watcher.initial.items():  # regular files only
            self.live_tail.start_at(path, size)

    def on_memory_reverted(self, message: MemoryReverted) -> None:
        """A memory screen reverted a memory: the queue shows its proposal again when next shown."""
        self.refresh_status()
        self.changed.publish(Change("reverted", message.candidate_id))

    def on_path_skipped(self, message: PathSkipped) -> None:
        self.notice_skipped([message.notice])

    def notice_skipped(self, notices: list[str]) -> None:
        """Show each new one-line notice about a skipped path once (a FIFO, an unreadable folder)."""
        for notice in notices:
            if notice not in self._skip_notices:
                self._skip_notices.add(notice)
                self.notify(literal(notice, one_line=True), title="Skipped", severity="warning", markup=False)

    _goodnight: str | None = None  # the project whose good night started the cycle (said once it runs)
    _goodnight_after: str | None = None  # a good night heard while a cycle ran: dreamed when it ends

    def on_goodnight_heard(self, message: GoodnightHeard) -> None:
        """A person said good night: dream that project. Only what happens is said — "dreaming" once the
        cycle runs, or why it does not (the day is dreamed already, another process's cycle runs)."""
        project = message.project
        if self.cycle_running:
            self._goodnight_after = project
            self.notify(
                f"Good night heard in {project}: this app's dream cycle is running; {project} is dreamed "
                "when it ends",
                title="Goodnight",
            )
            return
        self._goodnight = project
        self.action_dream(project, "goodnight")

    def on_transcripts_changed(self, message: TranscriptsChanged) -> None:
        self._tail_new_lines([Path(path) for path in message.paths])
        self.changed.publish(Change("transcripts"))

    @work(thread=True, exit_on_error=False, group="tail", name="live tail")
    def _tail_new_lines(self, paths: list[Path]) -> None:
        """Read what was appended to ``paths`` off the UI thread; the lines arrive as :class:`LiveLines`."""
        lines = self.live_tail.read(paths)
        if lines:
            self.post_message(LiveLines(lines[-LIVE_MAX_LINES_PER_EVENT:]))

    def on_live_lines(self, message: LiveLines) -> None:
        self.live_lines.publish(message.lines)
