"""The installed ``dreamtui --demo`` in a real terminal (tmux): accept one proposal, find its commit."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest
from fakes.waiting import wait_for

pytestmark = pytest.mark.slow

TMUX = shutil.which("tmux")
DREAMTUI = shutil.which("dreamtui")


def tmux(server: str, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    """A tmux command on the test's own tmux server (``-L``): never one another test or person runs, so
    the pane starts from this test's environment (its HOME, no git identity), not a server's."""
    assert TMUX
    return subprocess.run([TMUX, "-L", server, *args], capture_output=True, text=True, check=check)


def capture(session: str) -> str:
    """The text on the tmux pane."""
    return tmux(session, "capture-pane", "-p", "-t", session, check=False).stdout


def wait_screen(session: str, cond: Callable[[str], bool], timeout: float = 120.0) -> str:
    """Wait until the pane's text satisfies ``cond`` (bounded); that text."""
    seen = [""]

    def shown() -> bool:
        seen[0] = capture(session)
        return cond(seen[0])

    if not wait_for(shown, timeout):
        raise AssertionError(f"timed out; the screen shows:\n{seen[0]}")
    return seen[0]


def queue_loaded(text: str) -> bool:
    """The queue has shown its first load: the header counts the proposals (it says "0 proposals
    waiting" until its status is read) and the table's footer shows as many rows ("8 of 8 shown")."""
    count = re.search(r"\b([1-9]\d*) proposals waiting", text)
    return count is not None and f"{count.group(1)} of {count.group(1)} shown" in text


def git_log(repo: Path) -> list[str]:
    return subprocess.run(
        ["git", "-C", str(repo), "log", "--format=%s%n%b%x00"], capture_output=True, text=True, check=True
    ).stdout.split("\x00")


@pytest.mark.skipif(not TMUX or not DREAMTUI, reason="needs tmux and the installed dreamtui")
def test_demo_in_a_real_terminal_accepts_one_proposal(tmp_path: Path) -> None:
    demo = tmp_path / "demo"
    session = f"dreamtui-test-{uuid.uuid4().hex[:8]}"
    (tmp_path / "none.toml").touch()  # an empty config (a missing one named is an error)
    env = {  # the test's sandbox (conftest): an empty HOME, no git identity — a newcomer's machine
        **{k: os.environ[k] for k in ("HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "GIT_CONFIG_GLOBAL")},
        "DREAMTUI_DEMO_DIR": str(demo),
        "DREAMTUI_CONFIG": str(tmp_path / "none.toml"),
        "GIT_CONFIG_NOSYSTEM": "1",
        "TERM": "xterm-256color",
    }
    command = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
    command = f"env {command} {shlex.quote(DREAMTUI)} --demo; echo DREAMTUI-EXITED; sleep 30"
    subprocess.run(
        [TMUX, "-L", session, "-f", "/dev/null", "new-session", "-d", "-s", session, "-x", "150", "-y", "45"]
        + [command],
        check=True,
        env={**os.environ, "TMUX": ""},
    )
    try:
        text = wait_screen(session, queue_loaded)
        waiting = int(re.search(r"\b([1-9]\d*) proposals waiting", text).group(1))
        assert waiting >= 5
        before = git_log(demo / "memory")
        tmux(session, "send-keys", "-t", session, "a")
        wait_screen(session, lambda t: f"{waiting - 1} proposals waiting" in t)
        wait_screen(
            session, lambda t: "accepted “" in t and "→" in t
        )  # the note names the claim and the file
        tmux(session, "send-keys", "-t", session, "q")
        wait_screen(session, lambda t: "DREAMTUI-EXITED" in t)
    finally:
        tmux(session, "kill-server", check=False)
    after = git_log(demo / "memory")
    assert len(after) == len(before) + 1
    newest = after[0]
    assert newest.startswith("dreamtui: remember")
    assert "Dreamtui-Candidate:" in newest
