"""What a killed or failed cycle left behind, put right before the next one runs: rows still ``running``
are marked failed, the memory repository is reconciled (a stale ``index.lock``, an uncommitted review
file or briefing), rows filed under a worktree's own folder move to its repository's project, and a
failed date's row is reused by its retry, which carries what the failed attempts counted.

Every function here is called with the cycle lock held, so no other cycle can be running.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from dreamtui.core import clock
from dreamtui.core.config import Config
from dreamtui.core.dream.plan import CycleAlreadyDone, is_done
from dreamtui.core.ingest.projects import ProjectMap
from dreamtui.core.ledger import Ledger, cycles
from dreamtui.core.ledger.cycle_stats import CycleStats
from dreamtui.core.ledger.cycles import ALL_PROJECTS, ON_DEMAND
from dreamtui.core.memory.decisions import file_under_repositories
from dreamtui.core.memory.generated import reconcile_generated


@dataclass(frozen=True, slots=True)
class Recovered:
    """What :func:`recover` put right, one notice each."""

    rekeyed: list[str]
    """One line per transcript folder whose rows moved under its repository's project."""
    interrupted: list[int]
    """Cycles whose process was killed while they ran, now marked failed."""
    memory: list[str]
    """What an interrupted run left in the memory repository, put right."""


@dataclass(frozen=True, slots=True)
class Attempt:
    """The row a cycle runs in, and what the failed attempts of the same date left in it."""

    cycle_id: int
    number: int = 1
    """Which attempt of the date this is (1 for the first, and for an on-demand pass)."""
    earlier: CycleStats | None = None
    """What the failed attempts counted (None: there were none)."""
    earlier_deep: bool = False
    """They got past light sleep: what they extracted is marked dreamed, so this run finishes their REM
    and adds their counts to the day's totals."""


def recover(config: Config, ledger: Ledger, projects: ProjectMap) -> Recovered:
    """Put right what earlier runs left (see the module docstring), in this order: old rows re-keyed,
    interrupted cycles failed, the memory repository reconciled."""
    rekeyed = file_under_repositories(config, ledger, projects)
    interrupted = fail_interrupted(ledger)
    return Recovered(rekeyed, interrupted, reconcile_generated(config, ledger))


def fail_interrupted(ledger: Ledger) -> list[int]:
    """Mark every cycle still ``running`` as failed: call with the cycle lock held, so none of them
    can still be running (the process that ran it was killed). Returns their ids."""
    failed = []
    with ledger.write():
        for row in cycles.running(ledger):
            pid = row.stats.pid
            who = f"the process running it (pid {pid})" if pid else "the process running it"
            cycles.fail(
                ledger,
                row.id,
                clock.now_iso(),
                f"interrupted: {who} ended before it finished (started "
                f"{row.started_at}); marked failed when the next cycle started",
            )
            failed.append(int(row.id))
    return failed


def begin_full(ledger: Ledger, chat_id: str, day: str, trigger: str) -> Attempt:
    """Insert the date's full-cycle row, or reuse a failed (or stale running) one for a retry.

    Raises :class:`CycleAlreadyDone` when the date's full cycle is done. Call with the lock held."""
    with ledger.write():
        row = cycles.find_full(ledger, chat_id, day)
        started = clock.now_iso()
        if row is None:
            cycle_id = cycles.begin(
                ledger, chat_id, day, started, trigger, {"attempt": 1, "pid": os.getpid()}
            )
            return Attempt(cycle_id)
        if is_done(row):
            who = "every project" if chat_id == ALL_PROJECTS else chat_id
            raise CycleAlreadyDone(
                f"already dreamed {who} on {day} (cycle #{row.id}); one cycle per project per date"
            )
        # failed, 'running' left by a killed process (we hold the lock, so nobody runs it), or a
        # shallow sleep that only deferred sessions still being written: run it again
        attempt = (row.stats.attempt or 1) + 1
        cycles.restart(ledger, row.id, started, trigger, {"attempt": attempt, "pid": os.getpid()})
        return Attempt(int(row.id), attempt, row.stats, row.depth == "deep")


def begin_on_demand(ledger: Ledger, chat_id: str, day: str) -> Attempt:
    """Insert the row of an on-demand pass (call with the lock held)."""
    cycle_id = cycles.begin(
        ledger, chat_id, day, clock.now_iso(), "manual", {"attempt": 1, "pid": os.getpid()}, kind=ON_DEMAND
    )
    return Attempt(cycle_id)
