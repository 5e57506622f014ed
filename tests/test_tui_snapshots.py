"""SVG snapshots of every screen on the demo data (``pytest --snapshot-update`` to accept changes).

Each screen reads its data in a thread worker: a snapshot is taken once the screen shows it
(``run_before`` waits for that, then the keys are pressed).

Deterministic: a fixed ``DREAMTUI_NOW``, fixed git identity and dates (so commit ids are stable), a fixed
terminal size, no clock widgets, and the one timing in the ledger (a cycle's seconds) pinned. The demo is
prepared in one fixed folder (:data:`DEMO_ROOT`, one test at a time, under a lock): Aider names a
history's session after the folder it lies in, and a proposal's id (the queue's order among proposals of
one cycle) after its session, so the demo's Aider proposal sits in the same place only when its copy
does.
"""

from __future__ import annotations

import fcntl
import shutil
import time
from pathlib import Path

import pytest
from fakes.tui import show, wait_loaded, wait_modal

from dreamtui.core.ledger import Ledger
from dreamtui.demo import prepare_demo
from dreamtui.tui.app import DreamApp
from dreamtui.tui.screens.modals import EditModal, RejectModal

SIZE = (150, 45)
FIXED = "2026-11-28T18:30:00Z"


DEMO_ROOT = Path("/tmp/dreamtui-snapshot-demo")
"""Where every snapshot's demo is prepared (a literal path: the same on every machine and every run)."""


@pytest.fixture
def demo_root():
    """:data:`DEMO_ROOT`, emptied, held by this test alone (other workers and other runs wait)."""
    DEMO_ROOT.parent.mkdir(parents=True, exist_ok=True)
    with open(f"{DEMO_ROOT}.lock", "a+") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            shutil.rmtree(DEMO_ROOT, ignore_errors=True)
            yield DEMO_ROOT
        finally:
            shutil.rmtree(DEMO_ROOT, ignore_errors=True)
            fcntl.flock(lock, fcntl.LOCK_UN)


@pytest.fixture
def demo_app(demo_root: Path, monkeypatch: pytest.MonkeyPatch):
    """The app on a freshly prepared demo, everything pinned."""
    monkeypatch.setenv("DREAMTUI_NOW", FIXED)
    monkeypatch.setenv("TZ", "UTC")  # the evidence shows local times
    time.tzset()
    for who in ("AUTHOR", "COMMITTER"):
        monkeypatch.setenv(f"GIT_{who}_NAME", "Demo Person")
        monkeypatch.setenv(f"GIT_{who}_EMAIL", "demo@example.com")
        monkeypatch.setenv(f"GIT_{who}_DATE", "2026-11-28T18:30:00+00:00")
    cfg = prepare_demo(demo_root)
    ledger = Ledger.open(cfg.state)
    with ledger.write() as c:
        c.execute("UPDATE dream_cycles SET stats = json_set(stats, '$.seconds', 0.42)")
    yield DreamApp(cfg, ledger, watch=False)
    ledger.close()
    monkeypatch.undo()
    time.tzset()


def showing(key: str):
    """``run_before``: press a screen's key and wait until it shows its data."""

    async def run(pilot) -> None:
        await show(pilot, key)

    return run


def dialog(key: str, kind: type):
    """``run_before``: on the loaded queue, press ``key`` and wait for its dialog (of class ``kind``);
    its text fields' cursors stop blinking. A blinking cursor is hidden every other half second, so
    a snapshot taken a moment later on a loaded machine drew the edit dialog without it. Not blinking,
    the focused field draws a steady cursor; a TextArea keeps the lines it drew while the cursor was
    hidden (its line cache does not tell the two apart), so its lines are drawn afresh
    (``notify_style_update``, the public call that drops them)."""

    async def run(pilot) -> None:
        await wait_loaded(pilot)
        await pilot.press(key)
        screen = await wait_modal(pilot, kind)
        for field in screen.query("Input, TextArea"):
            field.cursor_blink = False
            field.notify_style_update()
            field.refresh()
        await pilot.pause()

    return run


def test_queue(snap_compare, demo_app) -> None:
    assert snap_compare(demo_app, run_before=wait_loaded, terminal_size=SIZE)


def test_queue_duplicate_side_by_side(snap_compare, demo_app) -> None:
    assert snap_compare(demo_app, run_before=wait_loaded, press=["j"] * 4, terminal_size=SIZE)


def test_queue_untrusted_tool_output(snap_compare, demo_app) -> None:
    assert snap_compare(demo_app, run_before=wait_loaded, press=["j"] * 9, terminal_size=SIZE)


def test_queue_grouped_by_project(snap_compare, demo_app) -> None:
    assert snap_compare(demo_app, run_before=wait_loaded, press=["o"], terminal_size=SIZE)


def test_accept_untrusted_dialog(snap_compare, demo_app) -> None:
    assert snap_compare(demo_app, run_before=wait_loaded, press=["j"] * 9 + ["a"], terminal_size=SIZE)


def test_reject_dialog(snap_compare, demo_app) -> None:
    assert snap_compare(demo_app, run_before=dialog("r", RejectModal), terminal_size=SIZE)


def test_edit_dialog(snap_compare, demo_app) -> None:
    assert snap_compare(demo_app, run_before=dialog("e", EditModal), terminal_size=SIZE)


def test_sessions(snap_compare, demo_app) -> None:
    assert snap_compare(demo_app, run_before=showing("2"), terminal_size=SIZE)


def test_cycles(snap_compare, demo_app) -> None:
    assert snap_compare(demo_app, run_before=showing("3"), terminal_size=SIZE)


def test_briefings(snap_compare, demo_app) -> None:
    assert snap_compare(demo_app, run_before=showing("4"), terminal_size=SIZE)


def test_stats(snap_compare, demo_app) -> None:
    assert snap_compare(demo_app, run_before=showing("5"), terminal_size=SIZE)


def test_memory(snap_compare, demo_app) -> None:
    assert snap_compare(demo_app, run_before=showing("6"), terminal_size=SIZE)


def test_promotion(snap_compare, demo_app) -> None:
    assert snap_compare(demo_app, run_before=showing("7"), terminal_size=SIZE)


# the layout at the sizes people use: a laptop's 80x24, a split 120x40, a wide 200x50
SIZES = {"80x24": (80, 24), "120x40": (120, 40), "200x50": (200, 50)}


@pytest.mark.parametrize("size", SIZES)
def test_queue_at(snap_compare, demo_app, size) -> None:
    assert snap_compare(demo_app, run_before=wait_loaded, terminal_size=SIZES[size])


@pytest.mark.parametrize("size", SIZES)
def test_queue_duplicate_at(snap_compare, demo_app, size) -> None:
    assert snap_compare(demo_app, run_before=wait_loaded, press=["j"] * 6, terminal_size=SIZES[size])


@pytest.mark.parametrize("size", ["80x24", "200x50"])
def test_sessions_at(snap_compare, demo_app, size) -> None:
    assert snap_compare(demo_app, run_before=showing("2"), terminal_size=SIZES[size])


@pytest.mark.parametrize("size", ["80x24", "120x40"])
def test_help_at(snap_compare, demo_app, size) -> None:
    assert snap_compare(demo_app, run_before=wait_loaded, press=["question_mark"], terminal_size=SIZES[size])


def test_promotion_at_80x24(snap_compare, demo_app) -> None:
    """The gates in plain lines, what each needs first, the approve key shown dimmed in the footer."""
    assert snap_compare(demo_app, run_before=showing("7"), terminal_size=SIZES["80x24"])


def test_queue_reading_at_80x24(snap_compare, demo_app) -> None:
    """Enter on the second proposal: the pane below has the focus (its top line lit), j scrolled it."""
    assert snap_compare(
        demo_app, run_before=wait_loaded, press=["j", "enter", "j"], terminal_size=SIZES["80x24"]
    )


def test_sessions_of_four_agents_at_80x24(snap_compare, demo_app) -> None:
    """payments-api's sessions: Claude Code's, Codex CLI's, Gemini CLI's and Aider's in one project."""
    assert snap_compare(demo_app, run_before=showing("2"), press=["j"], terminal_size=SIZES["80x24"])
