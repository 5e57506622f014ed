"""Counting the complete lines of transcript files as they grow, without reading a byte twice."""

from __future__ import annotations

import threading
from pathlib import Path

from dreamtui.core.files import open_regular

CHUNK = 1 << 20


def count_lines(path: Path | str, start: int, end: int) -> int:
    """Complete lines (newlines) in ``path`` between byte ``start`` and ``end`` (0 when unreadable)."""
    if end <= start:
        return 0
    count = 0
    try:
        with open_regular(Path(path)) as fh:
            fh.seek(start)
            left = end - start
            while left > 0:
                chunk = fh.read(min(CHUNK, left))
                if not chunk:
                    break
                count += chunk.count(b"\n")
                left -= len(chunk)
    except OSError:
        return 0
    return count


class LineCounter:
    """Lines of files that only grow: ``lines(path, start, start_lines, size)`` is ``start_lines`` plus
    the newlines between ``start`` and ``size``; what was counted is kept, so a file appended to is read
    from where the last count stopped. Thread-safe (the app's loaders run in threads)."""

    def __init__(self) -> None:
        self._counted: dict[str, tuple[int, int, int, int]] = {}  # path -> (start, start_lines, end, lines)
        self._lock = threading.Lock()

    def lines(self, path: str, start: int, start_lines: int, size: int) -> int:
        """The complete lines of ``path`` up to ``size``, given ``start_lines`` lines before ``start``."""
        if size <= start:
            return start_lines
        with self._lock:
            known = self._counted.get(path)
        if known is not None and known[:2] == (start, start_lines) and known[2] <= size:
            end, lines = known[2], known[3]
        else:
            end, lines = start, start_lines
        lines += count_lines(path, end, size)
        with self._lock:
            self._counted[path] = (start, start_lines, size, lines)
        return lines
