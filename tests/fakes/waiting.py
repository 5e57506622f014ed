"""Waiting for something another thread or process does (file events, a watcher's callback, a screen's
data loaded by its worker)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any


def wait_for(cond: Callable[[], bool], timeout: float = 10.0) -> bool:
    """Poll ``cond`` until it holds or ``timeout`` seconds pass; its last answer."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.02)
    return cond()


async def pause_until(pilot: Any, cond: Callable[[], bool], timeout: float = 10.0, what: str = "") -> None:
    """Let the app run (``pilot.pause``) until ``cond()`` holds; past ``timeout`` seconds an
    AssertionError names what was waited for."""
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not cond():
        if loop.time() > end:
            raise AssertionError(f"timed out after {timeout:g}s waiting for {what or 'the app'}")
        await pilot.pause(0.02)
