"""Waiting for something another thread or process does (file events, a watcher's callback)."""

from __future__ import annotations

import time
from collections.abc import Callable


def wait_for(cond: Callable[[], bool], timeout: float = 10.0) -> bool:
    """Poll ``cond`` until it holds or ``timeout`` seconds pass; its last answer."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.02)
    return cond()
