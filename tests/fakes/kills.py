"""Kill a deciding child at a chosen moment and wait for everything it started (the kill loops of
``test_outside_crash.py`` and ``test_kill_agreement.py``). Waits on the child's pidfd, never a timer."""

from __future__ import annotations

import os
import select
import signal
import time
from collections.abc import Callable
from pathlib import Path

from dreamtui.core.config import Config
from fakes.waiting import wait_for


def exits_within(pid: int, seconds: float) -> bool:
    """Whether process ``pid`` ends within ``seconds`` (waits on its pidfd: no polling)."""
    fd = os.pidfd_open(pid)
    try:
        ready, _, _ = select.select([fd], [], [], max(0.0, seconds))
    finally:
        os.close(fd)
    return bool(ready)


def others_in(memory: Path) -> list[int]:
    """Processes (not this one) working in the memory folder: a git the killed child started."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if os.readlink(entry / "cwd") != str(memory):
                continue
            state = (entry / "stat").read_text()
        except OSError:
            continue
        fields = state[state.rfind(")") + 2 :].split()
        if fields[0] != "Z" and int(fields[1]) != os.getpid():  # this test's own git helpers stay
            found.append(int(entry.name))
    return found


def run_child(config: Config, decide: Callable[[], None], kill_after: float | None) -> tuple[bool, float]:
    """Fork a child that runs ``decide``; SIGKILL its process group after ``kill_after`` seconds.
    Returns whether it was killed, and how long it ran."""
    started = time.monotonic()
    pid = os.fork()
    if pid == 0:  # the child
        code = 1
        try:
            os.setpgid(0, 0)
            decide()
            code = 0
        finally:
            os._exit(code)
    try:
        os.setpgid(pid, pid)
    except OSError:
        pass
    killed = False
    if kill_after is not None:
        # the child's exit, or the moment under test (a kill then), whichever comes first
        if exits_within(pid, started + kill_after - time.monotonic()):
            os.waitpid(pid, 0)
            return False, time.monotonic() - started
        try:
            os.killpg(pid, signal.SIGKILL)
            killed = True
        except ProcessLookupError:
            pass
    _, status = os.waitpid(pid, 0)
    elapsed = time.monotonic() - started
    killed = killed and os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
    assert killed or os.WEXITSTATUS(status) == 0, "the deciding child failed"
    # an orphaned git (its own group) finishes its step
    assert wait_for(lambda: not others_in(config.memory)), "a git the child started is still running"
    return killed, elapsed
