"""The watch daemon: dream a project when its person says good night or Claude Code ends one of its
sessions (the plugin's SessionEnd hook records it: :mod:`dreamtui.core.ingest.ended`), every project on
a daily schedule, and again a little later when another cycle held the lock.

The front end (``dreamtui watch``) only says what happens (``say`` for notes, ``on_wake`` for each
waking message) and stops it (:meth:`DreamDaemon.stop`, e.g. from a signal handler).
"""

from __future__ import annotations

import queue
import time
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from dreamtui.core import clock
from dreamtui.core.config import Config
from dreamtui.core.dream.budget import BudgetSpent, local_day_bounds
from dreamtui.core.dream.phases import Progress
from dreamtui.core.dream.plan import CycleAlreadyDone, NothingNew
from dreamtui.core.dream.run import SESSION_END, CycleFailed, CycleLimited, run_cycle
from dreamtui.core.errors import ConfigError, CycleBusy, DreamError
from dreamtui.core.ingest import ended as ended_sessions
from dreamtui.core.ingest.projects import ProjectMap
from dreamtui.core.ingest.sources import ProjectFiles, watch_roots
from dreamtui.core.ingest.transcripts import describe
from dreamtui.core.ingest.watch import Watcher
from dreamtui.core.ledger import Ledger
from dreamtui.core.ledger.cycles import CycleRecord

LIMIT_GRACE = 60.0
"""Seconds after a usage limit's reset before the daemon dreams again."""
LIMIT_UNKNOWN_WAIT = 3600.0
"""Seconds the daemon waits after a usage limit that did not say when it resets."""
BUSY_RETRY_SECONDS = 30.0
BUSY_RETRIES = 10


def parse_schedule(text: str) -> tuple[int, int]:
    """``HH:MM`` (24-hour, UTC) -> (hour, minute); a clear error otherwise."""
    try:
        hour_text, minute_text = text.strip().split(":")
        hour, minute = int(hour_text), int(minute_text)
    except ValueError:
        raise ConfigError(f"--schedule must be HH:MM (24-hour, UTC), not {text!r}") from None
    if not (0 <= hour < 24 and 0 <= minute < 60):
        raise ConfigError(f"--schedule must be HH:MM (24-hour, UTC), not {text!r}")
    return hour, minute


def next_run(now: datetime, hour: int, minute: int) -> datetime:
    """The first time at ``hour:minute`` strictly after ``now``."""
    at = now.replace(hour=hour, minute=minute, second=0, microsecond=0)
    return at if at > now else at + timedelta(days=1)


class DreamDaemon:
    """Watches every agent's transcript folders (``ingest.sources``; the files kept inside the projects one by
    one) and runs dream cycles until :meth:`stop`."""

    def __init__(
        self,
        config: Config,
        ledger: Ledger,
        *,
        poll: bool,
        schedule: tuple[int, int] | None,
        debounce: float,
        say: Callable[[str], None],
        on_wake: Callable[[CycleRecord], None],
        progress: Progress | None = None,
    ) -> None:
        self.config, self.ledger = config, ledger
        self.schedule = schedule
        self.say, self.on_wake, self.progress = say, on_wake, progress
        self.events: queue.Queue[tuple[str, Any]] = queue.Queue()
        self.retries: dict[str | None, tuple[float, int, str]] = {}  # project -> (when, tries, trigger)
        pmap = ProjectMap(config.transcripts)
        self.pmap = pmap
        self.seen_ended: dict[Path, float] = {}
        """Each ended-session record already acted on (its file -> its ``ended_at``)."""
        self.ended_waiting: dict[str, list[ended_sessions.Ended]] = {}
        """project -> the records a session-end cycle for it was asked for."""
        self.watcher = Watcher(
            config.transcripts,
            extra=watch_roots(config),
            singles=ProjectFiles(config),
            project_of=lambda path: pmap.key(describe(path).project, path),
            on_goodnight=lambda p: self.events.put(("goodnight", p)),
            on_error=lambda e: self.events.put(("error", e)),
            on_skip=lambda notice: self.events.put(("skip", notice)),
            poll=poll,
            debounce=debounce,
            rescan_seconds=config.rescan_seconds,
        )

    def stop(self) -> None:
        """Ask the loop to end (safe from a signal handler or another thread)."""
        self.events.put(("stop", None))

    def start(self) -> None:
        """Start watching (raises when the folder cannot be watched)."""
        self.watcher.start()

    def close(self) -> None:
        """Stop watching."""
        self.watcher.stop()

    def run(self) -> None:
        """Handle events until :meth:`stop`: good nights, the schedule, busy retries."""
        due = next_run(clock.now(), *self.schedule) if self.schedule else None
        while True:
            timeout = 1.0
            if due is not None:
                timeout = max(0.05, min(timeout, (due - clock.now()).total_seconds()))
            try:
                kind, value = self.events.get(timeout=timeout)
            except queue.Empty:
                kind, value = "tick", None
            if kind == "stop":
                return
            if kind == "goodnight":  # "dreaming" is said once the cycle runs (never before a refusal)
                self.dream_now(value, "goodnight")
            elif kind in (
                "error",
                "skip",
            ):  # a skip (a FIFO, an unreadable folder) is said once; watching goes on
                self.say(f"dreamtui: watch: {value}")
            for ended in self.ended_projects():  # sessions Claude Code ended (the plugin's hook)
                self.dream_now(ended, SESSION_END)
            for project, (retry_at, tries, trigger) in list(self.retries.items()):
                if time.monotonic() >= retry_at:
                    self.dream_now(project, trigger, tries)
            if due is not None and self.schedule and clock.now() >= due:
                self.dream_now(None, "schedule")
                due = next_run(max(clock.now(), due), *self.schedule)

    def ended_projects(self) -> list[str]:
        """The projects of the sessions Claude Code ended since the last look (new records in the state
        folder; at the first look, every record there), each once. A record whose transcript is not in
        this watch's folders is left for the watch (or dream) that reads them."""
        projects: list[str] = []
        roots = [Path(self.config.transcripts), *self.watcher.extra]
        for record in ended_sessions.read_all(self.config):
            if self.seen_ended.get(record.path) == record.ended_at:
                continue
            self.seen_ended[record.path] = record.ended_at
            path = Path(record.transcript)
            if not record.transcript or not any(path.is_relative_to(r) for r in roots):
                continue
            try:
                project = self.pmap.key(describe(path).project, path)
            except Exception:  # an odd path never stops the watch
                continue
            self.ended_waiting.setdefault(project, []).append(record)
            if project not in projects:
                projects.append(project)
        return projects

    def dream_now(self, project: str | None, trigger: str, tries: int = 0) -> None:
        """One dream cycle; a busy lock is retried later (up to :data:`BUSY_RETRIES` times)."""
        self.retries.pop(project, None)
        what = {
            "goodnight": f"good night said in {project}",
            SESSION_END: f"a session ended in {project}",
        }.get(trigger, trigger)
        started = False

        def progress(phase: str, message: str = "", fraction: float | None = None) -> None:
            nonlocal started
            if not started:  # the cycle runs: only now is "dreaming" true
                started = True
                self.say(f"dreamtui: {what}: dreaming")
            if self.progress is not None:
                self.progress(phase, message, fraction)

        try:
            record = run_cycle(self.config, self.ledger, project=project, trigger=trigger, progress=progress)
        except NothingNew as exc:  # its sessions hold nothing new: dreamed already
            if trigger == SESSION_END:
                ended_sessions.forget(self.ended_waiting.pop(project or "", []))
            self.say(f"dreamtui: {what}: {exc}")
            return
        except BudgetSpent as exc:  # nothing sent: the same cycle goes on when the day turns
            self._resume_at(project, _tomorrow(), trigger)
            self.say(f"dreamtui: {what}: not dreaming, {exc}")
            return
        except CycleLimited as exc:  # answered sessions are stored; the rest goes on after the reset
            when = exc.resets_at or clock.now() + timedelta(seconds=LIMIT_UNKNOWN_WAIT)
            self._resume_at(project, when + timedelta(seconds=LIMIT_GRACE), trigger)
            self.say(f"dreamtui: {what}: {exc}; watching goes on and dreams again then")
            return
        except CycleAlreadyDone as exc:
            self.say(f"dreamtui: {what}: not dreaming, {exc}")
            return
        except CycleBusy as exc:  # another cycle holds the lock: try again a little later
            if tries < BUSY_RETRIES:
                self.retries[project] = (time.monotonic() + BUSY_RETRY_SECONDS, tries + 1, trigger)
                self.say(f"dreamtui: {what}: {exc}; trying again in {BUSY_RETRY_SECONDS:.0f} s")
            else:
                self.say(f"dreamtui: {what}: {exc}; giving up")
            return
        except (CycleFailed, DreamError) as exc:
            self.say(f"dreamtui: {what}: {exc}")
            return
        self.ended_waiting.pop(project or "", None)
        self.on_wake(record)
        if record.stats.budget_stop:  # the sessions the budget held back are dreamed tomorrow
            self._resume_at(project, _tomorrow(), "schedule")

    def _resume_at(self, project: str | None, when: datetime, trigger: str) -> None:
        """Dream ``project`` again at ``when`` (a budget's next day, a usage limit's reset)."""
        delay = max(0.0, (when - clock.now()).total_seconds())
        self.retries[project] = (time.monotonic() + delay, 0, trigger)


def _tomorrow() -> datetime:
    """The start of the next local day (a minute past midnight)."""
    _, _, end = local_day_bounds()
    return end + timedelta(minutes=1)
