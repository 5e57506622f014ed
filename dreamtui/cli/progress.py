"""Progress of a dream cycle on the command line: a live display of phases and sessions on a terminal,
plain lines when stderr is piped, nothing with ``--json``."""

from __future__ import annotations

import re
import sys
import time
from typing import Any, TextIO

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Column

from dreamtui.cli.output import echo, printable
from dreamtui.services.dreaming import PHASE_TITLES

PROGRESS_EVERY = 0.5
COUNT = re.compile(r"\((?:session|branch)?\s*(\d+)/(\d+)\)|(\d+)/(\d+) done")


def counts(message: str) -> tuple[int, int] | None:
    """``(done, total)`` from a progress message such as ``reading p/s (session 3/10)`` or ``branch 2/5 done``."""
    match = COUNT.search(message)
    if not match:
        return None
    done, total = (match.group(1), match.group(2)) if match.group(1) else (match.group(3), match.group(4))
    return int(done), int(total)


def phase_line(phase: str, message: str, fraction: float | None) -> str:
    """One plain line: ``Light sleep  40%  session 4/10 · reading payments-api/3f2a9c41``."""
    title = PHASE_TITLES.get(phase, phase)
    pct = f"{fraction:4.0%}" if fraction is not None else "    "
    count = counts(message)
    what = "" if message == title else message
    done = f"{count[0]}/{count[1]}" if count else ""
    return "  ".join(part for part in (f"{title:<11}", pct, done, what) if part).rstrip()


class LinePrinter:
    """Plain lines on stderr: each phase's start and end, and in between at most every ``every`` seconds."""

    def __init__(self, every: float = PROGRESS_EVERY) -> None:
        self.every = every
        self.phase = ""
        self.at = 0.0

    def __call__(self, phase: str, message: str, fraction: float | None) -> None:
        now = time.monotonic()
        if not (phase != self.phase or fraction in (0.0, 1.0) or now - self.at >= self.every):
            return
        self.phase, self.at = phase, now
        echo(phase_line(phase, message, fraction), err=True)

    def close(self) -> None:
        """Nothing to tidy up."""


class LiveDisplay:
    """A live Rich display on the terminal: one bar per phase with its counts, the current step below."""

    def __init__(self, stream: TextIO, width: int | None = None) -> None:
        console = Console(file=stream, width=width)
        # the counts and the time never cut ("12/…", "0:00:…" at 80 columns): they keep their width,
        # the bar is shorter on a narrow terminal and the step takes what is left, cut with an ellipsis
        bar = max(8, min(24, console.width // 5))
        self.progress = Progress(
            TextColumn("[bold]{task.fields[title]:<11}", table_column=Column(no_wrap=True, min_width=11)),
            BarColumn(bar_width=bar),
            MofNCompleteColumn(table_column=Column(no_wrap=True, min_width=7, justify="right")),
            TextColumn(
                "{task.fields[step]}",
                markup=False,
                table_column=Column(ratio=1, no_wrap=True, overflow="ellipsis"),
            ),
            TimeElapsedColumn(table_column=Column(no_wrap=True, min_width=7)),
            console=console,
            transient=False,
            expand=True,
        )
        self.tasks: dict[str, Any] = {}
        self.progress.start()

    def __call__(self, phase: str, message: str, fraction: float | None) -> None:
        title = PHASE_TITLES.get(phase, phase)
        task = self.tasks.get(phase)
        if task is None:
            for other in self.tasks.values():  # the phase before is over
                total = self.progress.tasks[other].total or 1
                self.progress.update(other, completed=total)
            task = self.tasks[phase] = self.progress.add_task(title, total=100, title=title, step="")
        count = counts(message)
        step = printable("" if message == title else message)[:300]
        if count:
            self.progress.update(
                task, total=count[1], completed=count[0] - (1 if fraction != 1.0 else 0), step=step
            )
        elif fraction is not None:
            total = self.progress.tasks[task].total or 100
            self.progress.update(task, completed=round(fraction * total), step=step)
        else:
            self.progress.update(task, step=step)

    def close(self) -> None:
        """Mark the last phase done and stop the display (it stays on the terminal)."""
        for task in self.tasks.values():
            self.progress.update(task, completed=self.progress.tasks[task].total or 100)
        self.progress.stop()


def progress_display(enabled: bool, stream: TextIO | None = None) -> LinePrinter | LiveDisplay | None:
    """The progress callback for ``dreamtui dream``: a live display when ``stream`` (stderr) is a
    terminal, plain lines when it is piped, ``None`` when not ``enabled`` (``--json``)."""
    if not enabled:
        return None
    stream = stream or sys.stderr
    if stream.isatty():
        return LiveDisplay(stream)
    return LinePrinter()
