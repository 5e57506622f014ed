"""Messages that worker and watcher threads post to the app (``post_message`` is thread-safe), the
messages screens send the app, and what the app's signals carry to the screens."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.text import Text
from textual.message import Message

from dreamtui.services import Status


@dataclass
class TranscriptsChanged(Message):
    """Transcript files changed on disk (from the watcher thread); a burst is coalesced into one."""

    paths: list[Path] = field(default_factory=list)


@dataclass
class CycleProgress(Message):
    """A dream cycle reports a phase or branch."""

    phase: str
    detail: str = ""


@dataclass
class CycleFinished(Message):
    """A dream cycle ended; ``summary`` is its waking message, ``error`` set when it failed."""

    summary: str = ""
    error: str | None = None
    short: str = ""
    """One line for the toast: the cycle's outcome and how many proposals are new."""
    refused: bool = False
    """No cycle ran: another process's runs, or the date is dreamed already (``error`` says which)."""


@dataclass
class DecisionDone(Message):
    """A decision (accept/reject/skip/undo) was written to the ledger and the memory repo."""

    action: str
    candidate_id: str | None
    detail: str = ""


@dataclass
class DecisionFailed(Message):
    """A decision could not be made; the proposal goes back to the queue."""

    action: str
    candidate_id: str | None
    error: str


@dataclass
class GoodnightHeard(Message):
    """A person said good night in a project's session (from the watcher thread)."""

    project: str


@dataclass
class PathSkipped(Message):
    """A transcript path is left out (a FIFO or device named ``*.jsonl``, an unreadable folder): one line."""

    notice: str


@dataclass
class MemoryReverted(Message):
    """A memory was reverted on the Memory screen: its proposal is pending again (the queue reloads)."""

    candidate_id: str | None


@dataclass
class LiveLines(Message):
    """Lines appended to transcripts, read by the live tail's worker, for the queue's live panel."""

    lines: list[Text] = field(default_factory=list)


@dataclass
class OutsideScanned(Message):
    """A scan of the memory repository found changes dreamtui did not make (an ``outside.ScanReport``)."""

    report: Any


@dataclass
class ShowProposalsOf(Message):
    """A screen asks for the queue, filtered to ``text`` (a session id): the app switches to it."""

    text: str


@dataclass
class KeepSetting(Message):
    """A screen's setting the person changed (the queue's order): the app keeps it in the config file."""

    key: str
    value: str


@dataclass
class StatusRead(Message):
    """The header's data, read in the status worker (``asked``: which read; ``error`` when it failed)."""

    asked: int
    status: Status | None = None
    error: str = ""


@dataclass(frozen=True, slots=True)
class Change:
    """What the app's ``changed`` signal tells every screen: something their data comes from changed.

    ``kind`` is a decision's action (``accept``, ``reject``, ``skip``, ``undo``, ``outside-…``), or
    ``reconcile``, ``failed`` (a decision that could not be made), ``cycle``, ``transcripts``,
    ``outside`` (changes to the memory repo from outside), ``reverted`` (a memory reverted) or
    ``ledger`` (another process changed the ledger, or the person asked to read it again);
    ``candidate_id`` is the proposal it concerns, if one.
    """

    kind: str
    candidate_id: str | None = None


@dataclass
class LedgerChanged(Message):
    """Another process changed what the ledger shows (from the follower thread)."""


@dataclass
class AppsOpen(Message):
    """The other dreamtui apps open on this ledger changed (from the follower thread)."""

    pids: list[int] = field(default_factory=list)
