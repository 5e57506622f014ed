"""The dream-cycle lock: one cycle at a time on this machine.

An ``fcntl.flock`` on ``config.lock_path``. The operating system releases it when the holding process
exits or is killed, so a crash never leaves a stale lock behind. The lock file holds the holder's pid
and start time for the "busy" message; its content is informative only.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path
from types import TracebackType

from dreamtui.core import clock
from dreamtui.core.errors import CycleBusy, LedgerError


class CycleLock:
    """A non-blocking exclusive lock on a file; use as a context manager.

    ``acquire`` raises :class:`CycleBusy` at once when another process (or another ``CycleLock`` in
    this process) holds it.
    """

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        """This object holds the lock."""
        return self._fd is not None

    def acquire(self) -> None:
        """Take the lock or raise :class:`CycleBusy` naming the holder."""
        if self._fd is not None:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise LedgerError(f"cannot open the dream lock {self.path}: {exc.strerror}") from exc
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            holder = _read_holder(fd)
            os.close(fd)
            raise CycleBusy(f"another dream cycle is running{holder}; try again when it has finished") from None
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()} {clock.now_iso()}\n".encode())
        self._fd = fd

    def release(self) -> None:
        """Release the lock (a no-op when not held)."""
        fd, self._fd = self._fd, None
        if fd is None:
            return
        try:
            fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)

    def __enter__(self) -> CycleLock:
        self.acquire()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.release()


def _read_holder(fd: int) -> str:
    """`` (pid 123 since 2026-…)`` from the lock file, or empty when unreadable."""
    try:
        text = os.pread(fd, 200, 0).decode("utf-8", "replace").split()
    except OSError:
        return ""
    if len(text) >= 2 and text[0].isdigit():
        return f" (pid {text[0]}, since {text[1]})"
    return ""
