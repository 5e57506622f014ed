"""Waiting for something another thread or process does (file events, a watcher's callback, a screen's
data loaded by its worker)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dreamtui.core.memory.outside_tree import RACY_NS

MIN_TIMEOUT = 60.0
"""No wait gives up sooner. A bound is there to end a test that hangs, not to time anything: on a
shared 2-core machine under a load of 10 a screen's load that takes 0.1 s alone took more than 10 s,
and a wait returns as soon as its condition holds, so a generous bound costs a passing test nothing."""


def bound(timeout: float) -> float:
    """The seconds a wait asked for ``timeout`` seconds may take (at least :data:`MIN_TIMEOUT`)."""
    return max(timeout, MIN_TIMEOUT)


def wait_for(cond: Callable[[], bool], timeout: float = 10.0) -> bool:
    """Poll ``cond`` until it holds or ``timeout`` seconds (at least :data:`MIN_TIMEOUT`) pass; its
    last answer."""
    end = time.monotonic() + bound(timeout)
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.02)
    return cond()


async def pause_until(pilot: Any, cond: Callable[[], bool], timeout: float = 10.0, what: str = "") -> None:
    """Let the app run (``pilot.pause``) until ``cond()`` holds; past ``timeout`` seconds (at least
    :data:`MIN_TIMEOUT`) an AssertionError names what was waited for."""
    loop = asyncio.get_running_loop()
    timeout = bound(timeout)
    end = loop.time() + timeout
    while not cond():
        if loop.time() > end:
            raise AssertionError(f"timed out after {timeout:g}s waiting for {what or 'the app'}")
        await pilot.pause(0.02)


def past_racy_window(root: Path) -> None:
    """Wait until the clock is past every file's last change under ``root`` by the outside scan's
    racy window (``outside_tree.RACY_NS``): a scan that starts then caches every hash it takes."""
    newest = max((p.lstat().st_ctime_ns for p in root.rglob("*")), default=0)
    assert wait_for(lambda: time.time_ns() > newest + RACY_NS), "the clock did not move"


def heard_in_order(folder: Path, delivered: Callable[[], list[Path]], timeout: float = 10.0) -> Path:
    """Write a new Claude Code transcript in ``folder`` (a project folder inside a watched root, there
    before watching began) and wait until the watcher has delivered it (``delivered()``: every path
    delivered so far). File events reach the watcher in the order they happened, so by then every
    event before it has been handled, delivered or set aside: what a fixed pause only hoped for, on a
    machine of any load. Returns the marker's path (leave it out of what the test counts)."""
    n = sum(1 for _ in folder.glob("marker-*.jsonl"))
    marker = folder / f"marker-{n}.jsonl"
    marker.write_text('{"type":"summary","summary":"marker"}\n', encoding="utf-8")
    assert wait_for(lambda: marker in delivered(), timeout), f"{marker.name} was never delivered"
    return marker
